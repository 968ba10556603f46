"""Rich progress for a campaign: done/total, ETA, the running mean reward per condition (and agent, when
several run; per agent for a diagnosis campaign; harness errors left out, as in every statistic) and the
counts of agent failures and harness errors.

On output that is not a terminal (a log file, CI, a pipe) a live bar draws nothing until it ends,
so a long campaign looked stalled: there, progress is plain lines, at most one every
``PLAIN_EVERY_SECONDS`` (``PlainLines``), and one at the end.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from clinbench.campaign.campaign import Reporter
from clinbench.records import RunRecord, RunStatus


PLAIN_EVERY_SECONDS = 5.0


class PlainLines:
    """'LABEL: done/total, N s[, note]' lines for output that is not a terminal, at most one every
    ``every`` seconds (the last one always)."""

    def __init__(self, console: Console, label: str, *, every: float = PLAIN_EVERY_SECONDS,
                 clock: Callable[[], float] = time.monotonic):
        self.console, self.label, self.every, self.clock = console, label, every, clock
        self.started = clock()
        self.last: float | None = None

    def update(self, done: int, total: int | None, note: str = "", *, final: bool = False) -> None:
        now = self.clock()
        if not final and self.last is not None and now - self.last < self.every:
            return
        self.last = now
        of = f"/{total}" if total else ""
        self.console.print(f"{self.label}: {done}{of}, {now - self.started:.0f} s" + (f", {note}" if note else ""),
                           highlight=False, markup=False, soft_wrap=True)


def _agent(record: RunRecord) -> str:
    """A run's agent as `stats` and `dx stats` name it: agent, or agent:model."""
    return ":".join(x for x in (record.agent, record.model) if x and x != "-")


def _means(rewards: dict[tuple[str, str], list[float]]) -> str:
    """The running means, one per agent and condition: the condition alone while one agent runs, the agent
    alone for diagnosis runs (which have no condition). One mean per condition pooled the agents of a
    campaign of several ('no-skill: 0.500' for one agent at 1.0 and another at 0.0)."""
    several = len({agent for agent, _ in rewards}) > 1

    def label(agent: str, condition: str) -> str:
        return " ".join(x for x in (agent if several or not condition else "", condition) if x)

    return "  ".join(f"{label(a, c)}: {sum(v) / len(v):.3f}"
                     for (a, c), v in sorted(rewards.items(), key=lambda kv: label(*kv[0])))


class RichReporter(Reporter):
    def __init__(self, console: Console | None = None):
        self.console = console or Console(stderr=True)
        self.plain = None if self.console.is_terminal else PlainLines(self.console, "runs")
        self._done, self._total = 0, 0
        self.progress = Progress(
            TextColumn("[bold]runs"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            TextColumn("ETA"), TimeRemainingColumn(), TextColumn("{task.fields[means]}"),
            console=self.console, transient=False,
        )
        self._rewards: dict[tuple[str, str], list[float]] = defaultdict(list)
        self._counts: dict[str, int] = defaultdict(int)
        self._task = None

    def start(self, total: int, skipped: int) -> None:
        if skipped:
            self.console.print(f"{skipped} run(s) already recorded: skipped")
        if total == 0:
            return
        self._total = total
        if self.plain is not None:
            self.plain.update(0, total, "started")
            return
        self.progress.start()
        self._task = self.progress.add_task("runs", total=total, means="")

    def finished(self, record: RunRecord) -> None:
        if record.status == RunStatus.HARNESS_ERROR:
            self._counts[RunStatus.HARNESS_ERROR] += 1
        else:
            self._rewards[(_agent(record), record.condition)].append(record.reward or 0.0)
            if record.status != "ok":
                self._counts[RunStatus.AGENT_FAILED] += 1
        means = _means(self._rewards)
        self._done += 1
        if self.plain is not None:
            counts = ", ".join(f"{n} {status}" for status, n in sorted(self._counts.items()))
            self.plain.update(self._done, self._total, "  ".join(x for x in (means, counts) if x),
                              final=self._done == self._total)
            return
        for status, n in sorted(self._counts.items()):
            means += f"  [red]{n} {status}"
        self.progress.update(self._task, advance=1, means=means)

    def waiting(self, message: str) -> None:
        self.console.print(message, highlight=False, soft_wrap=True, markup=False)

    def stop(self) -> None:
        if self._task is not None:
            self.progress.stop()
