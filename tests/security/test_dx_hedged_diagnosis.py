"""Attack (issue 28, item 7): hedge the final diagnosis to be judged correct without committing.

Before the fix the offline judge scored "A or B or C" as 5 whenever one member was the
answer, so a top-3 differential passed as correct (22 of 32 demo cases for the offline
baseline's top three; one fixed hedge of three names scored 3/32 against 1/32 for its best
single name). A final diagnosis is one diagnosis: a list scores as its worst member, in the
offline judge and in the LLM judge (each member graded on its own).
"""

from __future__ import annotations

import pytest

from clinbench.dx.cases import demo_cases
from clinbench.dx.judge import LLMJudge, OfflineJudge, members
from clinbench.dx.models import RoleModel, RoleSpec
from tests.agents.scripted_server import ScriptedServer


@pytest.fixture(scope="module")
def judge():
    return OfflineJudge()


@pytest.fixture(scope="module")
def cases():
    return demo_cases()


def test_a_differential_containing_the_answer_is_not_correct(judge, cases):
    names = [c.final_diagnosis for c in cases]
    passed = []
    for i, case in enumerate(cases):
        others = [names[(i + 7) % len(names)], names[(i + 13) % len(names)]]
        for hedge in (f"{case.final_diagnosis} or {others[0]} or {others[1]}",
                      f"{others[0]} vs {case.final_diagnosis}",
                      f"1. {others[1]} 2. {case.final_diagnosis}",
                      f"{case.final_diagnosis}; {others[0]}"):
            if judge.score(case.final_diagnosis, hedge).correct:
                passed.append(hedge)
    assert not passed, passed[:3]


def test_one_fixed_hedge_does_no_better_than_its_best_single_member(judge, cases):
    hedge = "Acute appendicitis or Acute pulmonary embolism or Community-acquired pneumonia"
    single = max(sum(judge.score(c.final_diagnosis, m).correct for c in cases) for m in members(hedge))
    hedged = sum(judge.score(c.final_diagnosis, hedge).correct for c in cases)
    assert hedged <= single and hedged == 0


def test_the_llm_judge_grades_each_member_and_keeps_the_worst():
    script = [{"tool": "grade", "arguments": {"score": 5, "reason": "same"}},
              {"tool": "grade", "arguments": {"score": 2, "reason": "different organ"}}]
    with ScriptedServer(script) as server:
        chat = RoleModel(RoleSpec("judge", "judge-model", base_url=server.base_url, api_key="test"))
        verdict = LLMJudge(chat).score("Acute appendicitis", "Acute appendicitis or right ureteric colic")
        asked = [r["messages"][-1]["content"] for r in server.requests]
    assert verdict.score == 2 and not verdict.correct
    assert len(asked) == 2 and "Candidate diagnosis: right ureteric colic" in asked[1]


def test_a_single_diagnosis_is_still_judged_whole(judge):
    assert members("Community-acquired pneumonia of the right lower lobe, with sepsis") == [
        "Community-acquired pneumonia of the right lower lobe, with sepsis"]
    assert judge.score("Acute appendicitis", "Acute appendicitis").score == 5
