"""Rich progress for a campaign: done/total, ETA, the running mean reward per condition (harness
errors left out, as in every statistic) and the counts of agent failures and harness errors."""

from __future__ import annotations

from collections import defaultdict

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from clinbench.campaign.campaign import Reporter
from clinbench.records import RunRecord


class RichReporter(Reporter):
    def __init__(self, console: Console | None = None):
        self.console = console or Console(stderr=True)
        self.progress = Progress(
            TextColumn("[bold]runs"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            TextColumn("ETA"), TimeRemainingColumn(), TextColumn("{task.fields[means]}"),
            console=self.console, transient=False,
        )
        self._rewards: dict[str, list[float]] = defaultdict(list)
        self._counts: dict[str, int] = defaultdict(int)
        self._task = None

    def start(self, total: int, skipped: int) -> None:
        if skipped:
            self.console.print(f"{skipped} run(s) already recorded: skipped")
        if total == 0:
            return
        self.progress.start()
        self._task = self.progress.add_task("runs", total=total, means="")

    def finished(self, record: RunRecord) -> None:
        if record.status == "harness-error":
            self._counts["harness-error"] += 1
        else:
            self._rewards[record.condition].append(record.reward or 0.0)
            if record.status != "ok":
                self._counts["agent-failed"] += 1
        means = "  ".join(f"{c}: {sum(v) / len(v):.3f}" for c, v in sorted(self._rewards.items()))
        for status, n in sorted(self._counts.items()):
            means += f"  [red]{n} {status}"
        self.progress.update(self._task, advance=1, means=means)

    def stop(self) -> None:
        if self._task is not None:
            self.progress.stop()
