"""One call from a source (campaign folder or per-run CSV) to a comparison: what the CLI and
the report both use, so their numbers are the same."""

from __future__ import annotations

from pathlib import Path

from clinbench.stats.compare import Comparison, compare, parse_compare
from clinbench.stats.errors import StatsError
from clinbench.stats.runs import Runs, load_runs

BASELINE = "no-skill"
DEFAULT_PAIR = ("no-skill", "with-skill")


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


def load_selected(
    source: str | Path,
    *,
    include_flagged: bool = False,
    schema: str | None = None,
    agent: str | None = None,
    model: str | None = None,
    benchmark: str = "derive",
) -> Runs:
    """The runs of ``source`` to analyse: publishable (unless asked), of the benchmark, filtered."""
    runs = select_runs(load_runs(source, include_flagged=include_flagged, benchmark=benchmark),
                       schema=schema, agent=agent, model=model)
    if len(runs) == 0:
        other = "dx" if benchmark == "derive" else "derive"
        raise StatsError(
            f"{source} holds no {benchmark} runs to analyse ({runs.n_flagged_excluded} flagged runs excluded); "
            f"for the other benchmark pass --benchmark {other}"
        )
    return runs


def resolve_conditions(runs: Runs, conditions: str | None) -> tuple[str, str]:
    """``"A:B"`` as given, or, when None, the pair the runs make obvious: no-skill:with-skill
    when both exist, else the only two conditions (no-skill first when it is one of them)."""
    if conditions is not None:
        return parse_compare(conditions)
    present = sorted(set(runs.condition.tolist()))
    if all(c in present for c in DEFAULT_PAIR):
        return DEFAULT_PAIR
    if len(present) == 2:
        a, b = sorted(present, key=lambda c: (c != BASELINE, c))
        return a, b
    raise StatsError(f"runs hold conditions {', '.join(present)}; pass --compare A:B to choose two")


def analyse(
    source: str | Path,
    conditions: str | None = None,
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
    """Load runs from ``source`` and compare the conditions "A:B" (delta = B − A; see
    ``resolve_conditions`` for the default)."""
    runs = load_selected(source, include_flagged=include_flagged, schema=schema, agent=agent, model=model,
                         benchmark=benchmark)
    a, b = resolve_conditions(runs, conditions)
    return compare(runs, a, b, by=by, seed=seed, draws=draws, permutation_draws=permutation_draws)
