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


def test_a_campaign_of_several_agents_shows_each_agents_running_mean():
    """One mean per condition pooled the agents: 'no-skill: 0.500' for one agent at 1.0 and another at 0.0."""
    log = io.StringIO()
    reporter = RichReporter(Console(file=log, force_terminal=False, width=200))
    runs = (("reference", "-", "no-skill", 1.0), ("empty", "-", "no-skill", 0.0), ("reference", "-", "with-skill", 1.0))
    reporter.start(len(runs), 0)
    for i, (agent, model, condition, reward) in enumerate(runs):
        reporter.finished(RunRecord(run_id=f"r{i}", benchmark="derive", task="t", condition=condition, schema="native",
                                    agent=agent, model=model, trial=0, status="ok", reward=reward))
    reporter.stop()
    assert log.getvalue().splitlines()[-1].endswith(
        "empty no-skill: 0.000  reference no-skill: 1.000  reference with-skill: 1.000")
    one = io.StringIO()  # one agent: the conditions alone, as before
    reporter = RichReporter(Console(file=one, force_terminal=False, width=200))
    reporter.start(2, 0)
    for i, condition in enumerate(("no-skill", "with-skill")):
        reporter.finished(RunRecord(run_id=f"s{i}", benchmark="derive", task="t", condition=condition, schema="native",
                                    agent="reference", model="-", trial=0, status="ok", reward=0.5))
    reporter.stop()
    assert one.getvalue().splitlines()[-1].endswith("no-skill: 0.500  with-skill: 0.500")
