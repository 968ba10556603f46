"""`clinbench export-tasks --format harbor`: derivation tasks as runnable Harbor task folders."""

from __future__ import annotations

from pathlib import Path

import typer

from clinbench.concepts.profiles import PROFILE_HELP


def register(app: typer.Typer) -> None:
    @app.command("export-tasks")
    def export_tasks(
        out: Path = typer.Argument(..., help="Folder to write one task folder per task into."),
        db: Path = typer.Option(..., "--db", help="Database; the task references it lacks are built into it first."),
        fmt: str = typer.Option("harbor", "--format", help="Task format: harbor (Harbor / Terminal-Bench folders)."),
        tasks: list[str] = typer.Option(["all"], "--task", help="Task ids (comma-separated or repeated) or 'all'."),
        condition: str = typer.Option("no-skill", "--condition", help="Condition whose prompt and skills the folders carry."),
        schema: str = typer.Option("native", "--schema-variant", help="Schema variant: native, obfuscated, restructured."),
        timeout: float = typer.Option(30.0, "--timeout", min=0.01, help="Agent timeout in minutes (task.toml)."),
        profile: str = typer.Option(None, "--profile", help=PROFILE_HELP),
    ) -> None:
        """Write Harbor task folders (instruction, task.toml, environment/, tests/ running clinbench's scorer)."""
        from clinbench.campaign.matrix import split_list
        from clinbench.cli._console import make_console
        from clinbench.campaign.matrix import resolve_tasks, scorable_tasks
        from clinbench.cli._references import prepare_matrix
        from clinbench.concepts.manifest import profile_of
        from clinbench.concepts.profiles import get_profile, label
        from clinbench.derive.catalogue import get_task
        from clinbench.derive.harbor import export_harbor
        from clinbench.derive.scorable import describe
        from clinbench.errors import DataError

        if fmt != "harbor":
            raise DataError(f"unknown --format {fmt!r}; the one supported format is harbor")
        if not db.is_file():
            raise DataError(f"database {db} not found; pass --db the database the references were built in")
        task_ids = resolve_tasks(split_list(tasks), db)
        console = make_console(stderr=True)
        profile = prepare_matrix(db, task_ids, [condition], [schema], profile=profile, out=console)  # the folders carry them
        built = profile_of(db, [get_task(t).target_table for t in task_ids])
        if built is not None and built != label(profile):  # the folders carry the references of the profile asked for
            raise DataError(f"the references in {db} were built with reference profile {built}, not {label(profile)}; "
                            f"run `clinbench concepts build {db} --profile {get_profile(profile).name}`, "
                            f"or pass --profile {built.split('@')[0]}")
        task_ids, unscorable = scorable_tasks(task_ids, db)  # a folder whose tests score every answer 0
        if unscorable:
            console.print(f"skipped {len(unscorable)} task(s) this database cannot score: {describe(unscorable)}",
                          highlight=False, soft_wrap=True)
        written = export_harbor(task_ids, db, out, condition=condition, schema=schema, timeout_sec=timeout * 60,
                                progress=lambda t: console.print(f"  wrote {t}", highlight=False))
        print(f"{len(written)} Harbor task folder(s) in {out}; run one with `harbor run -p {written[0]}`")
