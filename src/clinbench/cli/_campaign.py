"""What `run` and `dx run` print when a campaign ends or is interrupted (one wording for both)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from clinbench.cli._console import make_console
from clinbench.records import STORE_FILE, RunStatus


def finished(summary, out: Path) -> None:
    """The counts by status, where the store is, and each failure's cause."""
    status = ", ".join(f"{n} {s}" for s, n in sorted(summary.by_status.items())) or "nothing to do"
    make_console().print(f"{summary.finished} run(s) done ({status}); {summary.skipped} already recorded; "
                    f"store {Path(out) / STORE_FILE}", highlight=False, soft_wrap=True)
    print_causes(summary, make_console())


def interrupted(exc) -> None:
    """Ctrl-C or SIGTERM: what was kept, how to resume; exit 130."""
    print_causes(exc.summary, make_console())
    make_console(stderr=True).print(str(exc), highlight=False, soft_wrap=True)
    raise typer.Exit(130) from None


def print_causes(summary, console: Console) -> None:
    """Each cause of a run that is not ok, grouped, harness errors first; and how to redo them."""
    labels = {RunStatus.HARNESS_ERROR: "harness error(s): not scored, left out of every statistic",
              RunStatus.AGENT_FAILED: "agent failure(s): no or unusable output, reward 0"}
    for status, label in labels.items():
        groups = sorted(((cause, ids) for (s, cause), ids in summary.causes.items() if s == status),
                        key=lambda item: -len(item[1]))
        if not groups:
            continue
        console.print(f"{sum(len(ids) for _, ids in groups)} {label}:", highlight=False, soft_wrap=True)
        for cause, ids in groups:
            console.print(f"  {len(ids)} × {cause} (e.g. {ids[0]})", highlight=False, soft_wrap=True)
    statuses = {s for s, _ in summary.causes}
    if statuses:  # a plain rerun skips recorded runs, failed ones included
        console.print("evidence of each run is in runs/<run_id>/", highlight=False, soft_wrap=True)
    if RunStatus.HARNESS_ERROR in statuses:
        console.print("after fixing a harness error's cause, rerun the same command with --retry-failed to redo "
                      "those runs", highlight=False, soft_wrap=True)
    if RunStatus.AGENT_FAILED in statuses:
        console.print("agent failures count as reward 0 and are kept: if a setup fault of yours caused them (a wrong "
                      "key, a broken model server), fix it and run again with a new --out (--retry-agent-failed "
                      "redoes only the failed runs, which favours the agent)", highlight=False, soft_wrap=True)
