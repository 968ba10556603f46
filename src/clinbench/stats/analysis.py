"""One call from a source (campaign folder or per-run CSV) to a comparison or a summary: what
the CLI and the report both use, so their numbers are the same."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from clinbench.records import STORE_FILE, mixed
from clinbench.stats.compare import Comparison, compare
from clinbench.stats.errors import StatsError
from clinbench.stats.groups import GroupPair, group_mask, parse_compare
from clinbench.stats.resamples import BOOTSTRAP_DRAWS, SIGN_FLIP_DRAWS
from clinbench.stats.runs import Runs, load_runs
from clinbench.stats.summary import Summary, summarise

BASELINE = "no-skill"
DEFAULT_PAIR = ("no-skill", "with-skill")


@dataclass(frozen=True)
class Analysis:
    """What to analyse in a source and how: the options of ``clinbench stats`` (and of each report
    section), in one object passed whole from the command line to the statistics."""

    compare: str | None = None  # A:B or DIM:A:B (delta = B − A); None: see resolve_pair
    summary: bool = False  # summarise even when a pair is obvious
    by: str | None = None  # also compare per value of this column
    seed: int = 0
    draws: int = BOOTSTRAP_DRAWS
    permutation_draws: int = SIGN_FLIP_DRAWS
    include_flagged: bool = False
    schema: str | None = None
    agent: str | None = None
    model: str | None = None
    benchmark: str = "derive"
    allow_mixed: bool = False  # compare even runs that mix agent versions or served models
    families: Mapping[str, str] | None = None  # task -> family (the catalogue's); None: no family figures


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
        harness, excluded = runs.harness_errors, runs.excluded
        runs = runs.subset(mask)
        if harness is not None:
            runs.harness_errors = harness.subset(getattr(harness, column) == value)
        if excluded is not None:  # "N flagged runs excluded" counts the runs analysed, not the whole store
            runs.excluded = excluded.subset(getattr(excluded, column) == value)
            runs.n_flagged_excluded = len(runs.excluded)
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

    compared = group_mask(runs, pair.dimension, pair.a) | group_mask(runs, pair.dimension, pair.b)
    ids = set(runs.run_id[compared].tolist())
    problems = mixed(r for r in Store.open(source).runs() if r["run_id"] in ids)
    if problems:
        raise StatsError(f"the runs compared mix what ran: {'; '.join(problems)}; compare runs of one version "
                         "(--agent / --model filters, or another campaign folder) or pass --allow-mixed")


def prepare(source: str | Path, options: Analysis) -> tuple[Runs, GroupPair | None]:
    """The runs ``options`` select from ``source`` and the pair to compare (None: summarise), the
    comparison refused when it mixes what ran (unless ``allow_mixed``)."""
    runs = load_selected(source, include_flagged=options.include_flagged, schema=options.schema, agent=options.agent,
                         model=options.model, benchmark=options.benchmark)
    pair = None if options.summary and options.compare is None else resolve_pair(runs, options.compare)
    if pair is not None and not options.allow_mixed:
        check_uniform(source, runs, pair)
    return runs, pair


def compute(runs: Runs, pair: GroupPair | None, options: Analysis, *, by: str | None = None) -> Comparison | Summary:
    """The comparison of ``pair`` (per value of ``by`` too), or with no pair the summary, of ``runs``."""
    if pair is None:
        return summarise(runs, seed=options.seed, draws=options.draws, families=options.families)
    return compare(runs, pair.a, pair.b, dimension=pair.dimension, by=by, seed=options.seed, draws=options.draws,
                   permutation_draws=options.permutation_draws, families=options.families)


def analyse(source: str | Path, conditions: str | None = None, **options) -> Comparison | Summary:
    """Load runs from ``source``; compare the groups ``conditions`` names (``A:B`` or
    ``DIM:A:B``; delta = B − A; see ``resolve_pair`` for the default), or, with ``summary``
    or when no pair is obvious, summarise them. ``options``: the fields of ``Analysis``."""
    return run_analysis(source, Analysis(compare=conditions, **options))


def run_analysis(source: str | Path, options: Analysis) -> Comparison | Summary:
    """``analyse`` with its options as one object (what the CLI and the web app pass)."""
    runs, pair = prepare(source, options)
    return compute(runs, pair, options, by=options.by)
