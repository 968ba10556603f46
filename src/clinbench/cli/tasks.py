"""`clinbench tasks list | show ID | cards | lint | reference ID | verify`: the derivation task catalogue."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from clinbench.cli._console import make_console, styled
from clinbench.concepts.profiles import PROFILE_HELP

console = make_console()


def register(app: typer.Typer) -> None:
    tasks = typer.Typer(no_args_is_help=True, help="The derivation benchmark's task catalogue.")
    app.add_typer(tasks, name="tasks")

    @tasks.command("list")
    def list_(
        as_json: bool = typer.Option(False, "--json", help="print the tasks as JSON"),
        db: Path = typer.Option(None, "--db", help="Also say which tasks this database can score (built reference "
                                                   "with rows, source tables not empty)."),
    ) -> None:
        """List the 28 tasks with family, database, mode and thresholds."""
        from clinbench.derive.catalogue import load_catalogue
        from clinbench.report.terminal import Col, print_table

        catalogue = load_catalogue().values()
        on_db = _on_database(db, [t.id for t in catalogue]) if db is not None else {}
        if as_json:
            print(json.dumps([{
                "task": t.id, "family": t.family, "database": t.database, "mode": t.mode, "keys": list(t.keys),
                "scored_columns": list(t.scored_columns), "coverage_threshold": t.coverage_threshold,
                "match_threshold": t.accuracy_threshold, "operational_spec": bool(t.operational_spec),
                **({"on_db": on_db[t.id]} if db is not None else {}),
            } for t in catalogue], indent=2))
            return
        cols = [Col("task"), Col("family"), Col("database"), Col("mode"), Col("keys", drop=1, wrap=True),
                Col("scored", drop=2, numeric=True), Col("coverage ≥", drop=5, numeric=True),
                Col("match ≥", drop=4, numeric=True), Col("op. spec", drop=3)]
        rows = [[t.id, t.family, t.database, t.mode, ", ".join(t.keys), str(len(t.scored_columns)),
                 f"{t.coverage_threshold:g}", f"{t.accuracy_threshold:g}", "yes" if t.operational_spec else ""]
                for t in catalogue]
        if db is not None:  # shown before the optional columns: it is what --db was asked for
            cols[1] = Col("family", drop=6)  # the task id names it; room for the answer to --db
            cols.insert(4, Col("scorable"))
            for row, t in zip(rows, catalogue):
                row.insert(4, on_db[t.id] if on_db[t.id] in ("yes", "no data") else "NO")
        print_table(console, cols, rows)
        from clinbench.derive.scorable import describe

        not_scorable = {t: why for t, why in on_db.items() if why not in ("yes", "no data")}
        if not_scorable:  # tasks sharing a reason on one line (a database without concepts: one line)
            console.print(f"not scorable on {db}: {describe(not_scorable)}", highlight=False, soft_wrap=True)

    @tasks.command("cards")
    def cards(out: Path = typer.Option(Path("docs/tasks"), "--out", help="folder for one Markdown card per family")) -> None:
        """Write a card per task family (target, source, reference validity, variants, tasks) from the SQL headers."""
        from clinbench.derive.cards import write_cards

        paths = write_cards(out)
        console.print(f"{len(paths) - 1} family card(s) and an index in {out}", highlight=False)

    @tasks.command("show")
    def show(task_id: str = typer.Argument(..., help="Task id, e.g. mimic-sofa-24h (see `clinbench tasks list`).")) -> None:
        """Show one task's declaration and instruction."""
        from clinbench.derive.catalogue import get_task

        t = get_task(task_id)
        console.print(styled("[bold]{}[/]  family {}, {}, {} mode; reference {}", t.id, t.family, t.database, t.mode,
                             t.target_table))
        console.print(f"keys: {', '.join(t.keys)}")
        console.print(f"scored: {', '.join(t.scored_columns)}")
        console.print(f"required: {', '.join(t.required_columns)}")
        tol = ", ".join(f"{k} {v:g}" for k, v in t.tolerances.items()) or "exact"
        console.print(f"tolerances: {tol}; timestamps ±{t.timestamp_tolerance_seconds:g} s")
        console.print(f"strict: coverage ≥ {t.coverage_threshold:g}, every column ≥ {t.accuracy_threshold:g}")
        owner = t.operational_spec_owner
        op = "none" if owner is None else "yes" if owner == t.id else f"yes (shared with {owner})"
        console.print(f"skills: {', '.join(t.skills)}; decoy: {t.decoy_skill}; operational spec: {op}")
        if t.drop:
            console.print(f"also removed in standard mode: {', '.join(t.drop)}")
        console.rule("instruction")
        console.print((t.task_dir / "instruction.md").read_text(encoding="utf-8"), highlight=False)

    @tasks.command("lint")
    def lint_(
        db: Path = typer.Option(None, "--db", help="Also check that no reference key value appears in agent-visible files."),
    ) -> None:
        """Check instructions, skills and operational specs (exit 1 on any issue)."""
        from clinbench.derive.lint import lint

        issues = lint(db_path=db)
        for issue in issues:
            console.print(str(issue), highlight=False)
        if issues:
            console.print(f"{len(issues)} issue(s)", style="red")
            raise typer.Exit(1)
        console.print("tasks lint: clean", style="green")

    @tasks.command("reference")
    def reference(
        task_id: str = typer.Argument(..., help="Task id, e.g. mimic-sofa-24h (see `clinbench tasks list`)."),
        db: Path = typer.Option(..., "--db", help="Database with the built reference targets."),
        out: Path = typer.Option(..., "--out", help="CSV file to write."),
        variant: str = typer.Option(None, "--variant", help="Export a reference-validity variant instead."),
        profile: str = typer.Option(None, "--profile", help=PROFILE_HELP),
    ) -> None:
        """Export a task's reference output as CSV (for auditing a target); builds it first if DB lacks it."""
        from clinbench.cli._references import build_for_tasks
        from clinbench.derive.reference import check_variant, export_reference
        from clinbench.derive.catalogue import get_task

        if variant is not None:
            check_variant(get_task(task_id), variant)  # a typo is named before anything is built
        profile = build_for_tasks(db, [task_id], profile=profile, variants=[variant] if variant else [], out=console)
        rows = export_reference(task_id, db, out, variant=variant, profile=profile)
        console.print(f"wrote {rows} rows to {out}")

    @tasks.command("verify")
    def verify(
        db: Path = typer.Option(..., "--db", help="Database with the built reference targets."),
        task: list[str] = typer.Option([], "--task", help="Only these task ids (comma-separated or repeated)."),
        profile: str = typer.Option(None, "--profile", help=PROFILE_HELP),
    ) -> None:
        """Check each task reference against its manifest (SQL, source tables, content), building those DB lacks first;
        exit 1 if any is stale or cannot be built."""
        from clinbench.campaign.matrix import resolve_tasks, split_list
        from clinbench.cli._references import build_for_tasks
        from clinbench.concepts.manifest import verify as verify_references
        from clinbench.derive.catalogue import get_task

        ids = split_list(task) or resolve_tasks(["all"], db)  # every task whose dataset the database holds
        profile = build_for_tasks(db, ids, profile=profile, out=console)
        problems = verify_references(db, sorted({get_task(t).target_table for t in ids}), profile)
        for problem in problems:
            console.print(str(problem), highlight=False, soft_wrap=True)
        if problems:
            console.print(f"{len(problems)} reference(s) stale or missing", style="red")
            raise typer.Exit(1)
        console.print("references verified: SQL, source tables and content match their manifests", style="green")


def _on_database(db: Path, task_ids: list[str]) -> dict[str, str]:
    """Task id -> 'yes', 'no data' (another dataset), or why ``db`` cannot score it (not built, empty
    reference or sources)."""
    from clinbench.campaign.matrix import datasets_in
    from clinbench.derive.catalogue import get_task
    from clinbench.derive.scorable import unscorable_tasks

    from clinbench.duck import connect_when_free

    present = datasets_in(db)
    with connect_when_free(db, read_only=True) as con:
        built = {f"{s}.{t}" for s, t in con.execute("SELECT schema_name, table_name FROM duckdb_tables()").fetchall()}
    unscorable = unscorable_tasks(db, [t for t in task_ids if get_task(t).database in present])
    out = {}
    for t in task_ids:
        spec = get_task(t)
        out[t] = ("no data" if spec.database not in present else
                  f"reference not built yet (`run` builds it; or `clinbench concepts build {db} --all`)" if spec.target_table not in built else
                  unscorable.get(t, "yes"))
    return out
