"""One call from a source (campaign folder or per-run CSV) to a comparison: what the CLI and
the report both use, so their numbers are the same."""

from __future__ import annotations

from pathlib import Path

from clinbench.stats.compare import Comparison, compare, parse_compare
from clinbench.stats.errors import StatsError
from clinbench.stats.runs import Runs, load_runs


def select_runs(runs: Runs, *, schema: str | None = None, agent: str | None = None, model: str | None = None) -> Runs:
    """Keep the runs of one schema variant / agent / model (each filter only when given)."""
    for column, value in (("schema", schema), ("agent", agent), ("model", model)):
        if value is None:
            continue
        values = getattr(runs, column)
        mask = values == value
        if not mask.any():
            present = ", ".join(sorted(set(values.tolist()))) or "none"
            raise StatsError(f"no runs with {column} {value!r}; {column}s present: {present}")
        runs = runs.subset(mask)
    return runs


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
    agent: str | None = None,
    model: str | None = None,
    benchmark: str = "derive",
) -> Comparison:
    """Load runs from ``source`` and compare the conditions "A:B" (delta = B − A)."""
    a, b = parse_compare(conditions)
    runs = select_runs(load_runs(source, include_flagged=include_flagged, benchmark=benchmark),
                       schema=schema, agent=agent, model=model)
    if len(runs) == 0:
        other = "dx" if benchmark == "derive" else "derive"
        raise StatsError(
            f"{source} holds no {benchmark} runs to analyse ({runs.n_flagged_excluded} flagged runs excluded); "
            f"for the other benchmark pass --benchmark {other}"
        )
    return compare(runs, a, b, by=by, seed=seed, draws=draws, permutation_draws=permutation_draws)
