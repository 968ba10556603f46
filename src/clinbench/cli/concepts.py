"""`clinbench concepts …`: build the derived layer, list, show and inline concepts."""

from __future__ import annotations

import importlib
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from clinbench.cli._console import make_console, plain_column, styled
from clinbench.cli._interrupt import is_interrupt, stopped
from clinbench.concepts.profiles import PROFILE_HELP

console = make_console()
concepts_app = typer.Typer(no_args_is_help=True, help="Derived concepts (mimiciv_derived, eicu_derived) and task targets.")


@concepts_app.command("build")
def build(
    db: Annotated[Path, typer.Argument(help="DuckDB database with mimiciv_hosp/mimiciv_icu (and/or eicu_crd)")],
    only: Annotated[Optional[list[str]], typer.Option("--only", help="Build these concepts or tasks' references (a task id such as mimic-sofa-24h, or a concept or reference name such as sofa-24h) and what they need (repeat or comma-separate)")] = None,
    schema: Annotated[str, typer.Option("--derived-schema", help="Name of the MIMIC-IV derived schema")] = "mimiciv_derived",
    summary: Annotated[bool, typer.Option("--summary", help="Print cohort shares (SOFA>=2, KDIGO>=1, Sepsis-3)")] = False,
    force: Annotated[bool, typer.Option("--force", help="Rebuild even when SQL and inputs are unchanged")] = False,
    everything: Annotated[bool, typer.Option("--all", help="Also build every task reference and variant (by default each is built when a command first needs it: run, workspace, export-tasks, tasks reference, tasks verify, concepts variants)")] = False,
    profile: Annotated[Optional[str], typer.Option("--profile", help=PROFILE_HELP)] = None,
    replace_derived: Annotated[bool, typer.Option("--replace-derived", help="Replace derived tables clinbench did not build (mimic-code's, M4's `m4 init-derived`, your own): without it such a database is left as it is and the build refused")] = False,
) -> None:
    """Build a reference profile's concept layer (and the references already in DB) in dependency order; unchanged tables are skipped."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from clinbench.concepts.build import build_concepts, layer_profile
    from clinbench.concepts.profiles import label

    profile = layer_profile(db, profile)  # asked, else the layer's own, else the default
    names = [n.strip() for value in only or [] for n in value.split(",") if n.strip()] or None
    if names:
        from clinbench.derive.catalogue import load_catalogue

        tasks = load_catalogue()  # a task id names its reference table
        names = [tasks[n].target_table if n in tasks else n for n in names]
    # the bar appears with the first concept: a database that is missing or cannot be opened gets its
    # one-line error alone, not under an empty bar
    bar = Progress(plain_column("{task.description}", style="bold"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=console, transient=False)
    task = bar.add_task("concepts", total=None)
    kept: list[str] = []  # built or unchanged so far: what an interrupted build leaves in the database

    def report(name, index, total, result):
        if not bar.live.is_started:
            bar.start()
        bar.update(task, total=total, description=name)
        if result is None:
            return
        bar.advance(task)
        if result.status in ("built", "unchanged"):
            kept.append(name)
        if result.status == "built":
            why = f"  ({result.note})" if result.note else ""
            bar.console.print(styled("  [green]built[/]     {}  {:,} rows  {:.2f} s{}", name, result.rows,
                                     result.seconds, why))
        elif result.status == "unchanged":
            bar.console.print(styled("  [dim]unchanged[/] {}  {:,} rows (SQL and inputs unchanged; skipped)", name,
                                     result.rows))
        else:
            bar.console.print(styled("  [yellow]skipped[/]   {}  ({})", name, result.note))

    started = time.perf_counter()
    try:
        results = build_concepts(db, only=names, schema=schema, targets=everything, progress=report,
                                 force=force, profile=profile, replace_derived=replace_derived)
    except BaseException as exc:
        if bar.live.is_started:  # stopping a bar never started prints an empty line
            bar.stop()
        if not is_interrupt(exc):
            raise
        stopped(console, f"{len(kept)} concept(s) built or unchanged are kept in {db} (each table is written "
                         f"whole); rerun `clinbench concepts build {db}` to build the rest (what is unchanged "
                         "is skipped)")
    elapsed = time.perf_counter() - started  # concepts build concurrently: not the sum of their seconds
    if bar.live.is_started:
        bar.update(task, description="done")
        bar.stop()

    built = [r for r in results if r.status == "built"]
    console.print(
        f"{len(built)} built, {sum(r.status == 'unchanged' for r in results)} unchanged, "
        f"{sum(r.status == 'skipped' for r in results)} skipped in {elapsed:.1f} s (reference profile {label(profile)})"
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
        from clinbench.cli._references import say_built
        from clinbench.concepts.build import build_absent

        started = time.perf_counter()
        results = build_absent(db, module.summary_tables(), profile=profile)
        say_built(console, results, db, time.perf_counter() - started)
        for key, share in module.cohort_shares(db).items():
            console.print(f"  {key}: {share:.1%}")


@concepts_app.command("list")
def list_concepts(
    as_json: Annotated[bool, typer.Option("--json", help="Print the concepts as JSON")] = False,
) -> None:
    """Every concept: name, domain, grain and what it depends on; a helper (never in an agent's database) is marked."""
    from clinbench.concepts.catalog import load_concepts
    from clinbench.concepts.graph import dependency_map
    from clinbench.report.terminal import Col, print_table

    concepts = load_concepts()
    deps = dependency_map(concepts)
    entries = []
    for qualified, c in sorted(concepts.items(), key=lambda kv: (kv[1].kind != "concept", kv[1].domain, kv[1].name)):
        entries.append({"name": c.name, "table": qualified, "schema": c.schema, "kind": c.kind, "domain": c.domain,
                        "helper": c.helper, "grain": c.grain_text or "",
                        "depends_on": [d.split(".", 1)[1] for d in deps[qualified].derived]})
    if as_json:
        import json

        typer.echo(json.dumps(entries, indent=2))
        return
    # a helper (clinbench's own intermediate) is never in an agent's database: the list says which
    rows = [[(e["name"] if e["schema"] == "mimiciv_derived" else f"{e['name']} ({e['schema']})")
             + (" (helper)" if e["helper"] else ""), e["domain"],
             e["grain"] or "-", ", ".join(e["depends_on"]) or "-"] for e in entries]
    print_table(console, [Col("name"), Col("domain", drop=2), Col("grain", wrap=True, drop=1),
                          Col("depends on", wrap=True)], rows)


@concepts_app.command("show")
def show(name: Annotated[str, typer.Argument(help="Concept name or qualified table")]) -> None:
    """A concept's header fields and its SQL."""
    from rich.syntax import Syntax

    from clinbench.concepts.catalog import HEADER_FIELDS, find_concept

    concept = find_concept(name)
    console.print(styled("[bold]{}[/]  ({})", concept.qualified, concept.path))
    for key in HEADER_FIELDS:
        if key in concept.header:
            console.print(styled("[bold]{}:[/] {}", key.capitalize(), concept.header[key]), highlight=False)
    console.print(Syntax(concept.sql, "sql", word_wrap=True))


@concepts_app.command("sql")
def sql(
    name: Annotated[str, typer.Argument(help="Concept name or qualified table")],
    inline: Annotated[bool, typer.Option("--inline", help="One statement with dependencies inlined as CTEs")] = False,
) -> None:
    """Print a concept's SQL as a build runs it (the helpers it reads as CTEs), or --inline as one
    self-contained statement."""
    from clinbench.concepts.catalog import MIMIC_DERIVED, find_concept, load_concepts
    from clinbench.concepts.graph import dependency_map
    from clinbench.concepts.helpers import statement
    from clinbench.concepts.inline import inline_sql

    if inline:
        text = inline_sql(name)
    else:
        concepts = load_concepts()
        qualified = find_concept(name, concepts).qualified
        text = statement(qualified, concepts, dependency_map(concepts), MIMIC_DERIVED).body + "\n"
    typer.echo(text, nl=not text.endswith("\n"))


@concepts_app.command("profiles")
def profiles() -> None:
    """The reference profiles: what each reproduces, what it is for, and the concept files it holds."""
    from clinbench.concepts.catalog import CONCEPTS_DIR
    from clinbench.concepts.profiles import DEFAULT_PROFILE, PROFILES, label

    for profile in PROFILES.values():
        own = sorted((CONCEPTS_DIR / "profiles" / profile.folder_name).rglob("*.sql")) if profile.base else []
        default = " (default)" if profile.name == DEFAULT_PROFILE else ""
        base = f"; the {profile.base} profile with {len(own)} file(s) of its own" if profile.base else "; the base concept tree"
        omit = f", without {', '.join(n.split('.', 1)[1] for n in profile.omit)}" if profile.omit else ""
        console.print(styled("[bold]{}[/]{}{}{}", label(profile.name), default, base, omit), highlight=False)
        console.print(f"  reproduces: {profile.source}", highlight=False, soft_wrap=True)
        console.print(f"  for: {profile.purpose}", highlight=False, soft_wrap=True)
        if own:
            console.print("  files: " + ", ".join(p.stem for p in own), highlight=False, soft_wrap=True)


@concepts_app.command("diff-profiles")
def diff_profiles(
    db: Annotated[Path, typer.Argument(help="DuckDB database with the raw tables (it is not written: a copy is)")],
    a: Annotated[str, typer.Argument(help="First profile, e.g. mimic-code")],
    b: Annotated[str, typer.Argument(help="Second profile, e.g. m4bench")],
    show_all: Annotated[bool, typer.Option("--all", help="Also list the tables that do not differ")] = False,
) -> None:
    """Per derived table and task reference: the rows each profile has that the other lacks, and the keys moved."""
    from clinbench.concepts.profile_diff import diff_profiles as compute
    from clinbench.report.terminal import Col, print_table

    with console.status(f"building {a} and {b} into a copy of {db}…"):
        diffs = compute(db, a, b)

    def rows(n):
        return "-" if n is None else f"{n:,}"

    shown = [d for d in diffs if show_all or d.differs]
    print_table(console, [Col("table"), Col(f"rows {a}", numeric=True), Col(f"rows {b}", numeric=True),
                          Col(f"only {a}", numeric=True), Col(f"only {b}", numeric=True), Col("keys moved", numeric=True),
                          Col("key", drop=1)],
                [[d.table, rows(d.rows_a), rows(d.rows_b), f"{d.only_a:,}", f"{d.only_b:,}", f"{d.keys_moved:,}",
                  ", ".join(d.keys) or "-"] for d in shown])
    for kind, noun in (("concept", "derived tables"), ("target", "task references")):
        group = [d for d in diffs if d.kind == kind]
        console.print(f"{sum(not d.differs for d in group)} of {len(group)} {noun} identical", highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(concepts_app, name="concepts")
