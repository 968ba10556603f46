"""Task references and variants built on demand by the commands that need them (`concepts build` builds
only the concept layer): the one place that turns task ids into the tables to build and says what it built."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path


def say_built(out, results, db: Path, seconds: float, *, layer: bool = False) -> None:
    """One line naming the references and variants a command built on demand, and how many concepts they
    needed built, or with ``layer`` the concept layer was built too (nothing when nothing was built)."""
    built = [r for r in results if r.status == "built"]
    if not built:
        return
    named = [r.name for r in built if r.name.split(".", 1)[1].startswith(("target_", "variant_"))]
    others = len(built) - len(named)
    shown = ", ".join(n.split(".", 1)[1] for n in named[:5]) + (f" and {len(named) - 5} more" if len(named) > 5 else "")
    which = (": the concept layer a standard task's agent sees, and what the references read" if layer else
             " they read" if len(named) > 1 else " it reads")
    out.print(f"built on demand in {db} ({seconds:.1f} s): {shown or 'no reference or variant'}"
              + (f"; {others} concept(s){which}" if others else ""), highlight=False, soft_wrap=True)


def build_for_tasks(db: Path, task_ids: Iterable[str], *, profile: str | None = None, variants: Iterable[str] = (),
                    out=None, for_agents: bool = False) -> str:
    """Build the references of ``task_ids`` that ``db`` lacks, and for each task the named ``variants`` it has
    (their dependency closure only; what is built is left as it is). ``out`` (a console) is told what was built.
    ``for_agents`` (agents will work on ``db``): a standard MIMIC-IV task's agent sees the whole concept layer, as
    an M4Bench agent did, so the layer's absent tables are built too, not only what the references read.

    Returns the reference profile the command goes on with: ``profile``, else the one ``db``'s concept layer
    was built with (``out`` is told when that is not the default), else the default."""
    from clinbench.concepts.build import build_absent, layer_profile
    from clinbench.concepts.profiles import DEFAULT_PROFILE, label
    from clinbench.derive.catalogue import get_task
    from clinbench.derive.reference import variant_table

    chosen = layer_profile(db, profile)
    if profile is None and chosen != DEFAULT_PROFILE and out is not None:
        out.print(f"reference profile {label(chosen)}: the one the concept layer in {db} was built with "
                  f"(pass --profile to choose)", highlight=False, soft_wrap=True)
    specs = [get_task(t) for t in task_ids]
    tables = [s.target_table for s in specs] + [variant_table(s, v) for s in specs for v in variants if v]
    layer: list[str] = []
    if for_agents and any(s.database == "mimic-iv" and s.mode == "standard" for s in specs):
        from clinbench.concepts.catalog import layer_tables
        from clinbench.concepts.manifest import profile_of

        # only under the references' own profile: a command about to refuse them (another profile) builds nothing
        if profile_of(db, [s.target_table for s in specs]) in (None, label(chosen)):
            layer = layer_tables(chosen)
    started = time.perf_counter()
    with _building(out, db) as progress:
        results = build_absent(db, tables, profile=chosen, also=layer, progress=progress)
    if out is not None:
        say_built(out, results, db, time.perf_counter() - started,
                  layer=any(r.status == "built" and r.name in layer for r in results))
    return chosen


@contextmanager
def _building(out, db: Path) -> Iterator:
    """The progress of a build on demand (a full MIMIC-IV layer takes minutes): a line when it starts, then
    on a terminal a bar naming the table being built, gone when the build ends; None without ``out``."""
    if out is None:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from clinbench.cli._console import plain_column

    bar = Progress(plain_column("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=out, transient=True)
    task = bar.add_task("", total=None)
    said: list[bool] = []

    def report(name, index, total, result) -> None:
        if not said:
            said.append(True)
            # total is the build's whole closure, tables already there included (they are checked, and skipped
            # when unchanged): 'building 62 table(s) DB lacks' was said of a database that lacked 15
            out.print(f"building on demand what {db} lacks: {total} table(s) to check, unchanged ones skipped",
                      highlight=False, soft_wrap=True)
            if out.is_terminal:  # in a log the bar would only add a blank line
                bar.start()
        bar.update(task, total=total, description=name)
        if result is not None:
            bar.advance(task)

    try:
        yield report
    finally:
        if bar.live.is_started:
            bar.stop()


def prepare_matrix(db: Path, task_ids: list[str], conditions: list[str], schemas: list[str], *,
                   profile: str | None = None, variants: Iterable[str] = (), out=None) -> str:
    """What `run`, `workspace` and `export-tasks` check and build before they start: a condition or schema
    typo is named before anything is built, then the references are built on demand (and the concept layer a
    standard task's agent sees), then the matrix is checked against ``db``. Returns the reference profile (``build_for_tasks``)."""
    from clinbench.campaign.matrix import check_matrix, check_names

    check_names(conditions, schemas)
    chosen = build_for_tasks(db, task_ids, profile=profile, variants=variants, out=out, for_agents=True)
    check_matrix(task_ids, conditions, schemas, db)
    return chosen
