"""`clinbench workspace ID --condition C --schema-variant S --db DB --out DIR`: prepare one run's workspace."""

from __future__ import annotations

from pathlib import Path

import typer

from clinbench.cli._console import make_console

console = make_console()


def register(app: typer.Typer) -> None:
    @app.command("workspace")
    def workspace(
        task_id: str = typer.Argument(..., help="Task id, e.g. mimic-sofa-24h (see `clinbench tasks list`)."),
        condition: str = typer.Option("no-skill", "--condition", help="no-skill | with-skill | with-skill-all | with-skill-decoy | with-skill-rawsql | operational-spec"),
        schema: str = typer.Option("native", "--schema-variant", help="native | obfuscated | restructured"),
        db: Path = typer.Option(..., "--db", help="Source database (the task's reference is built into it if absent)."),
        out: Path = typer.Option(..., "--out", help="New folder for the workspace."),
    ) -> None:
        """Prepare a workspace: masked database.duckdb, prompt.md and skills/."""
        from clinbench.cli._references import prepare_matrix
        from clinbench.derive.workspace import prepare_workspace

        if db.is_file():  # a missing file gets prepare_workspace's own message
            prepare_matrix(db, [task_id], [condition], [schema], out=console)  # the reference it will be scored against

        with console.status(f"preparing {task_id} ({condition}, {schema})"):
            ws = prepare_workspace(task_id, condition, schema, db, out)
        console.print(f"workspace ready: {ws}")
        for p in sorted(ws.rglob("*")):
            if p.is_file():
                console.print(f"  {p.relative_to(ws)}  ({p.stat().st_size:,} bytes)", highlight=False)
