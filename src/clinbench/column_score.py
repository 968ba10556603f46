"""One scored column of a derivation run: what the scorer computes, the store keeps and ``explain`` shows.

It lives below ``clinbench.records`` (which re-exports it) so that a scoring process imports it without
the run records' dataclasses (``clinbench.plain`` says why).
"""

from __future__ import annotations

from typing import Any

from clinbench.plain import Plain


class ColumnScore(Plain):
    """The store keeps its name, match rate and nMAE; the scorer's result and ``explain`` also carry the
    counts, kind (numeric | timestamp | string), tolerance and examples."""

    def __init__(self, name: str, match_rate: float | None, nmae: float | None = None, matched: int | None = None,
                 denominator: int | None = None, kind: str = "", tolerance: float | None = None,
                 examples: list[dict[str, Any]] | None = None) -> None:
        self._set(name=name, match_rate=match_rate, nmae=nmae, matched=matched, denominator=denominator, kind=kind,
                  tolerance=tolerance, examples=[] if examples is None else examples)

    def stored(self) -> dict[str, Any]:
        """What the store and a run's manifest keep."""
        return {"column_name": self.name, "match_rate": self.match_rate, "nmae": self.nmae}
