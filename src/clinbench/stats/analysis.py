"""One call from a source (campaign folder or per-run CSV) to a comparison: what the CLI and
the report both use, so their numbers are the same."""

from __future__ import annotations

from pathlib import Path

from clinbench.stats.compare import Comparison, compare, parse_compare
from clinbench.stats.errors import StatsError
from clinbench.stats.runs import Runs, load_runs


def select_schema(runs: Runs, schema: str | None) -> Runs:
    if schema is None:
        return runs
    mask = runs.schema == schema
    if not mask.any():
        present = ", ".join(sorted(set(runs.schema.tolist()))) or "none"
        raise StatsError(f"no runs with schema {schema!r}; schemas present: {present}")
    return runs.subset(mask)


def analyse(
    source: str | Path,
    conditions: str = "no-skill:with-skill",
    *,
    by: str | None = None,
    seed: int = 0,
    draws: int = 20000,
    permutation_draws: int = 200000,
    include_flagged: bool = False,
    schema: str | None = None,
    benchmark: str = "derive",
) -> Comparison:
    """Load runs from ``source`` and compare the conditions "A:B" (delta = B − A)."""
    a, b = parse_compare(conditions)
    runs = select_schema(load_runs(source, include_flagged=include_flagged, benchmark=benchmark), schema)
    if len(runs) == 0:
        raise StatsError(f"{source} holds no {benchmark} runs to analyse (after excluding {runs.n_flagged_excluded} flagged runs)")
    return compare(runs, a, b, by=by, seed=seed, draws=draws, permutation_draws=permutation_draws)
