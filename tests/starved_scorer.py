"""A real out-of-memory error while scoring: the scorer's DuckDB given 1 MB and no spill directory."""

from __future__ import annotations

import threading


def starve_scorer(monkeypatch):
    """Every Scorer made from now on (in this test) runs out of memory on its first real query; returns what
    gives them memory again (``monkeypatch.undo`` would also undo the test's other settings)."""
    from clinbench.derive import score

    real_init = score.Scorer.__init__

    def starved(self, **kwargs):
        real_init(self, **kwargs)
        self.con.execute("SET memory_limit = '1MB'")
        self.con.execute("SET temp_directory = ''")

    monkeypatch.setattr(score.Scorer, "__init__", starved)
    monkeypatch.setattr(score, "_scorers", threading.local())  # not a scorer an earlier test left on this thread

    def fed() -> None:
        monkeypatch.setattr(score.Scorer, "__init__", real_init)
        monkeypatch.setattr(score, "_scorers", threading.local())

    return fed
