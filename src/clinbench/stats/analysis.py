"""One call from a source (campaign folder or per-run CSV) to a comparison or a summary: what
the CLI and the report both use, so their numbers are the same."""

from __future__ import annotations

from pathlib import Path

from clinbench.records import STORE_FILE, mixed
from clinbench.stats.compare import Comparison, compare
from clinbench.stats.errors import StatsError
from clinbench.stats.groups import GroupPair, parse_compare
from clinbench.stats.runs import Runs, load_runs
from clinbench.stats.summary import Summary, summarise

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
        harness = runs.harness_errors
        runs = runs.subset(mask)
        if harness is not None:
            runs.harness_errors = harness.subset(getattr(harness, column) == value)
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
        if runs.harness_errors is not None and len(runs.harness_errors):
            raise StatsError(f"every {benchmark} run in {source} is a harness error ({len(runs.harness_errors)} runs); "
                             "see their causes with `clinbench report` and rerun with --retry-failed")
        raise StatsError(
            f"{source} holds no {benchmark} runs to analyse ({runs.n_flagged_excluded} flagged runs excluded); "
            f"for the other benchmark pass --benchmark {other}"
        )
    return runs


def resolve_pair(runs: Runs, spec: str | None) -> GroupPair | None:
    """The groups to compare: ``spec`` as given (``A:B`` or ``DIM:A:B``), or, when None, the
    condition pair the runs make obvious (no-skill:with-skill when both exist, else the only
    two conditions, no-skill first); None when there is no obvious pair (summarise instead)."""
    if spec is not None:
        return parse_compare(spec, runs)
    present = sorted(set(runs.condition.tolist()))
    if all(c in present for c in DEFAULT_PAIR):
        return GroupPair("condition", *DEFAULT_PAIR)
    if len(present) == 2:
        a, b = sorted(present, key=lambda c: (c != BASELINE, c))
        return GroupPair("condition", a, b)
    return None


def check_uniform(source: str | Path, runs: Runs, pair: GroupPair) -> None:
    """Refuse a comparison whose runs mix agent program versions or served models (a campaign
    folder records both per run; a per-run CSV does not, and is not checked)."""
    store_path = Path(source) / STORE_FILE
    if not store_path.is_file():
        return
    from clinbench.records.store import Store

    values = getattr(runs, pair.dimension)
    ids = set(runs.run_id[(values == pair.a) | (values == pair.b)].tolist())
    problems = mixed(r for r in Store.open(source).runs() if r["run_id"] in ids)
    if problems:
        raise StatsError(f"the runs compared mix what ran: {'; '.join(problems)}; compare runs of one version "
                         "(--agent / --model filters, or another campaign folder) or pass --allow-mixed")


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
    summary: bool = False,
    allow_mixed: bool = False,
) -> Comparison | Summary:
    """Load runs from ``source``; compare the groups ``conditions`` names (``A:B`` or
    ``DIM:A:B``; delta = B − A; see ``resolve_pair`` for the default), or, with ``summary``
    or when no pair is obvious, summarise them."""
    runs = load_selected(source, include_flagged=include_flagged, schema=schema, agent=agent, model=model,
                         benchmark=benchmark)
    pair = None if summary and conditions is None else resolve_pair(runs, conditions)
    if pair is None:
        return summarise(runs, seed=seed, draws=draws)
    if not allow_mixed:
        check_uniform(source, runs, pair)
    return compare(runs, pair.a, pair.b, dimension=pair.dimension, by=by, seed=seed, draws=draws,
                   permutation_draws=permutation_draws)
