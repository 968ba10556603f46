"""`clinbench concepts …`: build the derived layer, list, show and inline concepts."""

from __future__ import annotations

import importlib
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from clinbench.cli._console import make_console
from clinbench.cli._interrupt import is_interrupt, stopped

console = make_console()
concepts_app = typer.Typer(no_args_is_help=True, help="Derived concepts (mimiciv_derived, eicu_derived) and task targets.")


@concepts_app.command("build")
def build(
    db: Annotated[Path, typer.Argument(help="DuckDB database with mimiciv_hosp/mimiciv_icu (and/or eicu_crd)")],
    only: Annotated[Optional[list[str]], typer.Option("--only", help="Build these concepts and what they need (repeat or comma-separate)")] = None,
    schema: Annotated[str, typer.Option("--derived-schema", help="Name of the MIMIC-IV derived schema")] = "mimiciv_derived",
    summary: Annotated[bool, typer.Option("--summary", help="Print cohort shares (SOFA>=2, KDIGO>=1, Sepsis-3)")] = False,
    force: Annotated[bool, typer.Option("--force", help="Rebuild even when SQL and inputs are unchanged")] = False,
    no_targets: Annotated[bool, typer.Option("--no-targets", help="Skip the task reference targets")] = False,
) -> None:
    """Build concepts in dependency order; unchanged concepts are skipped."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from clinbench.concepts.build import build_concepts

    names = [n.strip() for value in only or [] for n in value.split(",") if n.strip()] or None
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as bar:
        task = bar.add_task("concepts", total=None)
        kept: list[str] = []  # built or unchanged so far: what an interrupted build leaves in the database

        def report(name, index, total, result):
            bar.update(task, total=total, description=name)
            if result is None:
                return
            bar.advance(task)
            if result.status in ("built", "unchanged"):
                kept.append(name)
            if result.status == "built":
                bar.console.print(f"  [green]built[/]     {name}  {result.rows:,} rows  {result.seconds:.2f} s")
            elif result.status == "unchanged":
                bar.console.print(f"  [dim]unchanged[/] {name}  {result.rows:,} rows (SQL and inputs unchanged; skipped)")
            else:
                bar.console.print(f"  [yellow]skipped[/]   {name}  ({result.note})")

        started = time.perf_counter()
        try:
            results = build_concepts(db, only=names, schema=schema, targets=not no_targets, progress=report,
                                     force=force)
        except BaseException as exc:
            if not is_interrupt(exc):
                raise
            bar.stop()
            stopped(console, f"{len(kept)} concept(s) built or unchanged are kept in {db} (each table is written "
                             f"whole); rerun `clinbench concepts build {db}` to build the rest (what is unchanged "
                             "is skipped)")
        elapsed = time.perf_counter() - started  # concepts build concurrently: not the sum of their seconds
        bar.update(task, description="done")

    built = [r for r in results if r.status == "built"]
    console.print(
        f"{len(built)} built, {sum(r.status == 'unchanged' for r in results)} unchanged, "
        f"{sum(r.status == 'skipped' for r in results)} skipped in {elapsed:.1f} s"
    )
    if names and results and all(r.status == "skipped" for r in results):
        from clinbench.errors import ConceptError

        cause = next((r.note for r in results if not r.note.startswith("needs")), results[0].note)
        raise ConceptError(f"none of {', '.join(names)} can be built in {db} ({cause}): "
                           "use a database that holds the source tables they need")
    if summary:
        try:
            module = importlib.import_module("clinbench.concepts.summary")
        except ModuleNotFoundError:
            console.print("no cohort summary available (clinbench.concepts.summary is not installed)")
            return
        for key, share in module.cohort_shares(db).items():
            console.print(f"  {key}: {share:.1%}")


@concepts_app.command("list")
def list_concepts(
    as_json: Annotated[bool, typer.Option("--json", help="Print the concepts as JSON")] = False,
) -> None:
    """Every concept: name, domain, grain and what it depends on."""
    from clinbench.concepts.catalog import load_concepts
    from clinbench.concepts.graph import dependency_map
    from clinbench.report.terminal import Col, print_table

    concepts = load_concepts()
    deps = dependency_map(concepts)
    entries = []
    for qualified, c in sorted(concepts.items(), key=lambda kv: (kv[1].kind != "concept", kv[1].domain, kv[1].name)):
        entries.append({"name": c.name, "table": qualified, "schema": c.schema, "kind": c.kind, "domain": c.domain,
                        "grain": c.grain_text or "",
                        "depends_on": [d.split(".", 1)[1] for d in deps[qualified].derived]})
    if as_json:
        import json

        typer.echo(json.dumps(entries, indent=2))
        return
    rows = [[e["name"] if e["schema"] == "mimiciv_derived" else f"{e['name']} ({e['schema']})", e["domain"],
             e["grain"] or "-", ", ".join(e["depends_on"]) or "-"] for e in entries]
    print_table(console, [Col("name"), Col("domain", drop=2), Col("grain", wrap=True, drop=1),
                          Col("depends on", wrap=True)], rows)


@concepts_app.command("show")
def show(name: Annotated[str, typer.Argument(help="Concept name or qualified table")]) -> None:
    """A concept's header fields and its SQL."""
    from rich.syntax import Syntax

    from clinbench.concepts.catalog import HEADER_FIELDS, find_concept

    concept = find_concept(name)
    console.print(f"[bold]{concept.qualified}[/]  ({concept.path})")
    for key in HEADER_FIELDS:
        if key in concept.header:
            console.print(f"[bold]{key.capitalize()}:[/] {concept.header[key]}", highlight=False)
    console.print(Syntax(concept.sql, "sql", word_wrap=True))


@concepts_app.command("sql")
def sql(
    name: Annotated[str, typer.Argument(help="Concept name or qualified table")],
    inline: Annotated[bool, typer.Option("--inline", help="One statement with dependencies inlined as CTEs")] = False,
) -> None:
    """Print a concept's SQL (plain, or --inline as one self-contained statement)."""
    from clinbench.concepts.catalog import find_concept
    from clinbench.concepts.inline import inline_sql

    text = inline_sql(name) if inline else find_concept(name).sql
    typer.echo(text, nl=not text.endswith("\n"))


def register(app: typer.Typer) -> None:
    app.add_typer(concepts_app, name="concepts")
