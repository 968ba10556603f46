"""`clinbench data ...`: load PhysioNet files, fetch the open demos, describe a database."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from clinbench.cli._console import make_console, plain_column, styled

# Other areas add commands to this group (cli/synth.py adds `data synth`).
data_app = typer.Typer(no_args_is_help=True,
                       help="EHR databases: load PhysioNet files, fetch the demos, inspect; the workspace cache.")
console = make_console(soft_wrap=True)
err = make_console(stderr=True, soft_wrap=True)


class Dataset(str, Enum):
    mimic_iv = "mimic-iv"
    eicu = "eicu"


class DemoName(str, Enum):
    mimic_iv_demo = "mimic-iv-demo"
    eicu_demo = "eicu-demo"


def register(app: typer.Typer) -> None:
    app.add_typer(data_app, name="data")


@data_app.command()
def load(
    dataset: Dataset = typer.Argument(..., help="mimic-iv or eicu"),
    src_dir: Path = typer.Argument(..., help="PhysioNet folder (MIMIC-IV: holds hosp/ and icu/)"),
    out: Path = typer.Option(..., "--out", help="DuckDB file to write (appears only when complete)"),
    force: bool = typer.Option(False, "--force", help="replace --out if it exists"),
    partial: bool = typer.Option(False, "--partial", help="load even when tables some task families need are absent "
                                 "or empty"),
    verify: bool = typer.Option(False, "--verify", help="check files against SHA256SUMS.txt first"),
) -> None:
    """Load PhysioNet CSV/Parquet files into a DuckDB database with the official schema."""
    from rich.progress import BarColumn, Progress, TaskID, TimeElapsedColumn

    from clinbench.derive import raw_layer
    from clinbench.ehr.load import LoadEvent, check_out, load_dataset

    check_out(out, force=force, inputs=src_dir)
    with Progress(plain_column("{task.description}"), BarColumn(), plain_column("{task.fields[rows]}"),
                  TimeElapsedColumn(), console=err) as bar:
        tasks: dict[str, TaskID] = {}

        def on_event(event: LoadEvent) -> None:
            if event.kind == "warning":
                bar.console.print(styled("[yellow]warning:[/] {}", event.message), highlight=False)
            elif event.kind == "start":
                tasks[event.table] = bar.add_task(f"[{event.index}/{event.total}] {event.table}", total=1, rows="")
            elif event.kind == "done":
                bar.update(tasks[event.table], completed=1, rows=f"{event.rows:,} rows")

        report = load_dataset(dataset.value, src_dir, out, partial=partial, verify=verify, progress=on_event,
                              after_raw=raw_layer.keep)

    rate = report.total_rows / report.seconds if report.seconds else 0.0
    console.print(f"loaded {len(report.rows)} tables, {report.total_rows:,} rows in {report.seconds:.1f} s "
                  f"({rate:,.0f} rows/s) -> {report.path}", highlight=False)
    if report.missing:
        console.print(f"absent (not created): {', '.join(report.missing)}", highlight=False)


@data_app.command()
def fetch(
    demo: DemoName = typer.Argument(..., help="which open-access demo to download"),
    dest: Path = typer.Option(..., "--out", help="folder to download into (a subfolder per demo is made)"),
) -> None:
    """Download an open-access PhysioNet demo with resume, verified against SHA256SUMS.txt."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TaskID, TransferSpeedColumn

    from clinbench.ehr.fetch import FetchEvent, demo_url, fetch_demo, DEMOS

    console.print(f"fetching {demo.value} from {demo_url(DEMOS[demo.value])}", highlight=False)
    with Progress(plain_column("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                  console=err) as bar:
        tasks: dict[str, TaskID] = {}

        def on_event(event: FetchEvent) -> None:
            if event.kind == "warning":
                bar.console.print(styled("[yellow]warning:[/] {}", event.message), highlight=False)
            elif event.kind == "start":
                label = event.file + (f" (resuming at {event.resumed_from:,} bytes)" if event.resumed_from else "")
                tasks[event.file] = bar.add_task(label, total=event.bytes or None, completed=event.resumed_from)
            elif event.kind == "advance" and event.file in tasks:
                bar.advance(tasks[event.file], event.bytes)

        report = fetch_demo(demo.value, dest, progress=on_event)

    console.print(f"{len(report.downloaded)} downloaded, {len(report.already_present)} already present, "
                  f"all verified -> {report.path}", highlight=False)
    if report.unavailable:
        console.print(styled("[yellow]not on the server (skipped):[/] {}", ", ".join(report.unavailable)),
                      highlight=False)
    console.print(f"licence: {report.demo.licence}", highlight=False)
    console.print("when you use these data, cite:", highlight=False)
    for citation in report.demo.citations:
        console.print(f"  - {citation}", highlight=False)
    partial = " --partial" if report.unavailable else ""
    console.print(f"next: clinbench data load {report.demo.dataset} {report.path} --out {report.demo.name}.duckdb"
                  f"{partial}", highlight=False)


@data_app.command()
def info(db: Path = typer.Argument(..., help="a clinbench DuckDB database")) -> None:
    """Show schemas, tables, row counts and the task families the database supports."""
    from rich.table import Table as RichTable

    from clinbench.ehr.info import database_info

    result = database_info(db)
    table = RichTable(title=str(result.path))
    table.add_column("schema")
    table.add_column("table")
    table.add_column("rows", justify="right")
    for name, rows in result.tables.items():
        schema, _, short = name.partition(".")
        table.add_row(schema, short, f"{rows:,}")
    console.print(table)
    if not result.datasets:
        console.print("no MIMIC-IV or eICU raw schema found: no task family can run on it", highlight=False)
    for dataset in result.datasets:
        supported = result.supported[dataset]
        console.print(f"{dataset}: supports {len(supported)} task families: {', '.join(supported) or 'none'}",
                      highlight=False)
        for family, lacking in result.unsupported[dataset].items():
            console.print(f"  {family}: lacks {', '.join(lacking)}", highlight=False)
    for caveat in result.caveats:
        console.print(styled("[yellow]caveat:[/] {}", caveat), highlight=False)


@data_app.command()
def cache(
    prune: bool = typer.Option(False, "--prune", help="remove the masked databases whose source file changed or is "
                               "gone (none can be used again)"),
    everything: bool = typer.Option(False, "--all", help="remove every masked database (each is built again on "
                                    "first use)"),
) -> None:
    """Show what the workspace cache holds, by source file; remove what no source can use again."""
    import shutil

    from clinbench.agents.limits import human
    from clinbench.derive import cache_prune
    from clinbench.derive.cache_files import cache_dir

    root = cache_dir()
    found = cache_prune.entries(root)
    state = cache_prune.states(found)
    free = shutil.disk_usage(root).free if root.is_dir() else None
    console.print(f"workspace cache: {root} ({len(found)} masked databases, {human(sum(e.size for e in found))}"
                  f"{f'; {human(free)} free on its disk' if free is not None else ''})", highlight=False)
    groups: dict[tuple[str, str], list] = {}
    for e in found:
        where = (e.source if state[e.path] != cache_prune.ELSEWHERE else f"{e.host}:{e.source}") if e.source else ""
        groups.setdefault((state[e.path], where), []).append(e)
    for (kind, where), members in sorted(groups.items()):
        where = where or "built before sources were recorded"
        console.print(f"  {kind:<17} {_count(len(members), 'file'):>10} {human(sum(e.size for e in members)):>10}  "
                      f"{where}", highlight=False)
    if prune or everything:
        removed, busy = cache_prune.prune(found, state, everything=everything)
        console.print(f"removed {_count(len(removed), 'masked database')} ({human(sum(e.size for e in removed))}; "
                      "space a run's workspace still links is freed when that workspace goes)", highlight=False)
        if busy:
            console.print(f"left {len(busy)} in use by another process (built or checked now): run again later",
                          highlight=False)
        return
    stale = cache_prune.removable(found, state)
    if stale:
        console.print(f"next: clinbench data cache --prune (removes {len(stale)}, {human(sum(e.size for e in stale))})",
                      highlight=False)
    elif any(state[e.path] == cache_prune.UNRECORDED for e in found):
        console.print("`clinbench data cache --all` removes every masked database, the unrecorded ones included",
                      highlight=False)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
