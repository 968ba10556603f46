"""A store or manifest written before the neutral dx columns reads as the current layout: a dx run's
gatekeeper and judge leave ``condition``/``schema``, its error leaves the audit's ``flag_reason``."""

from __future__ import annotations

import duckdb

from clinbench.records import STORE_FILE, RunRecord, RunStatus, normalise_status
from clinbench.records.store import Store

_OLD_RUNS = ("run_id VARCHAR PRIMARY KEY, benchmark VARCHAR, task VARCHAR, family VARCHAR, condition VARCHAR, "
             "schema VARCHAR, agent VARCHAR, model VARCHAR, trial INTEGER, status VARCHAR, reward DOUBLE, "
             "publishable BOOLEAN, flag_reason VARCHAR")


def test_an_old_store_is_migrated_when_opened(tmp_path):
    with duckdb.connect(str(tmp_path / STORE_FILE)) as con:
        con.execute(f"CREATE TABLE runs ({_OLD_RUNS})")
        con.execute("INSERT INTO runs VALUES ('dx-1', 'dx', '7', 'dx', 'llm:g', 'offline+self-judge', 'dxo', 'm', 1, "
                    "'harness-error', NULL, true, 'harness error: judge model timed out'), "
                    "('d-1', 'derive', 'mimic-sofa-24h', 'score', 'no-skill', 'native', 'codex', 'm', 1, 'timeout', "
                    "0.0, false, 'identical output to run d-2')")
    runs = {r["run_id"]: r for r in Store.open(tmp_path).runs()}
    dx, derive = runs["dx-1"], runs["d-1"]
    assert (dx["gatekeeper"], dx["judge"], dx["condition"], dx["schema"]) == ("llm:g", "offline+self-judge", "", "")
    assert dx["error"] == "harness error: judge model timed out" and dx["flag_reason"] is None
    assert (derive["condition"], derive["schema"], derive["gatekeeper"]) == ("no-skill", "native", None)
    assert derive["flag_reason"] == "identical output to run d-2" and derive["status"] == "agent-failed"


def test_an_old_dx_manifest_rebuilds_into_the_neutral_columns():
    old = {"run_id": "dx-1", "benchmark": "dx", "task": "7", "condition": "offline+grounded", "schema": "offline",
           "status": "agent-failed", "flag_reason": "agent model refused", "column_scores": [], "usage": None}
    rec = RunRecord.from_json(old)
    assert (rec.gatekeeper, rec.judge, rec.condition, rec.schema) == ("offline+grounded", "offline", "", "")
    assert rec.error == "agent model refused" and rec.flag_reason is None
    assert RunRecord.from_json(rec.to_json()) == rec


def test_one_status_vocabulary():
    assert [str(s) for s in RunStatus] == ["ok", "agent-failed", "harness-error"]
    assert normalise_status("timeout") is RunStatus.AGENT_FAILED and normalise_status("ok") == "ok"


def test_the_status_words_are_spelt_only_in_records():
    """One status vocabulary: outside clinbench.records every module names a status through RunStatus."""
    import re
    from pathlib import Path

    import clinbench

    root = Path(clinbench.__file__).parent
    literal = re.compile(r"""["'](agent-failed|harness-error)["']""")
    spelt = sorted(str(p.relative_to(root)) for p in root.rglob("*.py")
                   if p.parent.name != "records" and literal.search(p.read_text(encoding="utf-8")))
    assert spelt == []
