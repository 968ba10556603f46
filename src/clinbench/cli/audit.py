"""`clinbench audit DIR` and `clinbench rescore DIR`."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from clinbench.cli._console import make_console
from clinbench.cli._interrupt import says_on_interrupt


def audit_command(out: Path = typer.Argument(..., help="Campaign folder (the --out of clinbench run).")) -> None:
    """Flag runs that must not be published (leaks, copies, writes outside the workspace); store the verdicts."""
    from clinbench.campaign.audit import audit_campaign

    verdicts = audit_campaign(out)
    flagged = [v for v in verdicts if not v.publishable]
    console = make_console()
    if flagged:
        table = Table("run", "reason", title=f"{len(flagged)} of {len(verdicts)} runs flagged (publishable = false)")
        for v in flagged:
            table.add_row(v.run_id, "; ".join(v.reasons))
        console.print(table)
    else:
        console.print(f"{len(verdicts)} runs audited: none flagged")
    from clinbench.campaign.skill_use import summarise

    counts = summarise([(v.condition, v.skill_use) for v in verdicts if v.skill_use is not None])
    for condition, c in sorted(counts.items()):
        given = f"{c['read_given']}/{c['given']} opened a skill they were given" if c["given"] else "no skills given"
        console.print(f"skill use, {condition}: {c['runs']} runs; {given}; "
                      f"{c['opened_not_given']} opened a skill not given", highlight=False, soft_wrap=True)


def rescore_command(
    out: Path = typer.Argument(..., help="Campaign folder (the --out of clinbench run)."),
    db: Path | None = typer.Option(None, "--db", help="Database with the references (default: the one each run used)."),
    new_data: bool = typer.Option(False, "--new-data", help="Re-score against a database whose data differ from the "
                                  "campaign's (the runs are marked as re-scored against it)."),
) -> None:
    """Re-score every run from its evidence and update the store."""
    from clinbench.campaign.rescore import rescore_campaign

    results = rescore_campaign(out, db, new_data=new_data)
    changed = [r for r in results if r.changed]
    refused = [r for r in results if r.refused]
    console = make_console()
    for r in changed:
        console.print(f"{r.run_id}: {r.old_reward} -> {r.new_reward}")
    for r in refused:
        console.print(f"{r.run_id}: NOT re-scored, kept unpublishable: {r.refused}", highlight=False, soft_wrap=True)
    console.print(f"{len(results) - len(refused)} runs re-scored; {len(changed)} changed"
                  + (f"; {len(refused)} refused (evidence fails verification; not resealed)" if refused else ""),
                  highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("audit")(audit_command)
    app.command("rescore")(says_on_interrupt(
        "the runs re-scored before it are recorded and resealed, the others keep their earlier scores; "
        "rerun the same command to re-score every run")(rescore_command))
