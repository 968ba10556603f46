"""What a campaign's progress line says while it runs."""

from __future__ import annotations

import io

from rich.console import Console

from clinbench.campaign.progress import RichReporter
from clinbench.records import RunRecord


def test_a_diagnosis_campaign_shows_its_running_accuracy_per_agent():
    """`dx run` printed 'runs: 2/2, 0 s, : 0.500': a diagnosis run has no condition to name the mean by."""
    log = io.StringIO()
    reporter = RichReporter(Console(file=log, force_terminal=False, width=200))
    reporter.start(3, 0)
    for i, (agent, model, reward) in enumerate((("ed-workup", "", 1.0), ("ed-workup", "", 0.0), ("baseline", "m1", 1.0))):
        reporter.finished(RunRecord(run_id=f"r{i}", benchmark="dx", task=str(i), condition="", schema="",
                                    agent=agent, model=model, trial=1, status="ok", reward=reward))
    reporter.stop()
    assert log.getvalue().splitlines()[-1].endswith("baseline:m1: 1.000  ed-workup: 0.500")
