"""An agent's JSON turn whose values are not text (review 49c, item 3).

Before the fix ``{"tests": 5}``, ``{"questions": true}`` and ``{"action": "test", "content": 5}``
raised TypeError in parse_turn: the run became a harness error, left out of every statistic
(the agent dropped the case). Now such a turn is no action: the agent's format error.
"""

from __future__ import annotations

import json

import pytest

from clinbench.dx.encounter import parse_turn
from clinbench.dx.run import DxConfig, run_dx

BAD = ['{"tests": 5}', '{"questions": true}', '{"action": "test", "content": 5}', '{"tests": {"CT head": 1}}',
       '{"questions": ["Any fever?", null]}']


@pytest.mark.parametrize("text", BAD)
def test_a_value_that_is_not_text_is_no_action(text):
    assert parse_turn(text).empty


def test_text_values_still_parse():
    assert parse_turn('{"tests": ["CBC", " ", "CT head"]}').tests == ["CBC", "CT head"]
    assert parse_turn('{"action": "question", "content": "Any fever?"}').questions == ["Any fever?"]


def test_such_turns_are_the_agents_format_errors_and_the_case_is_judged(tmp_path, cases):
    script = tmp_path / "crash.txt"
    script.write_text("\n".join([*BAD, "<diagnosis>Acute appendicitis</diagnosis>"]) + "\n")
    (rec,) = run_dx([c for c in cases if c.case_id == 1], DxConfig(agent=f"scripted:{script}"), tmp_path / "out")
    assert (str(rec.status), rec.judge_score, rec.reward, rec.cost) == ("ok", 5, 1.0, 0.0)
    events = [json.loads(line) for line in (tmp_path / "out" / "runs" / rec.run_id / "transcript.jsonl").open()]
    assert [e["event"] for e in events].count("format_error") == len(BAD)
