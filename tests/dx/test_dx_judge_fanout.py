"""A long list costs the llm judge nothing (review 49c, fan-out item).

Before the fix the llm judge made one request per listed diagnosis with no cap: 300 requests
(30,000 input tokens) for a 2,586-character "dx0 or dx1 or ... dx299". A list of more than 5
diagnoses now scores 1 in both judges without grading any member.
"""

from __future__ import annotations

import sys
from pathlib import Path

from clinbench.dx.judge import LLMJudge, OfflineJudge
from clinbench.dx.models import RoleModel, RoleSpec

sys.path.insert(0, str(Path(__file__).parent))
from model_server import ModelServer, tool  # noqa: E402

REF = "Acute appendicitis"


def judged(candidate, replies):
    with ModelServer([tool("grade", score=5, reason="same")] * replies) as server:
        verdict = LLMJudge(RoleModel(RoleSpec("judge", "j", base_url=server.base_url, api_key="k"))).score(REF, candidate)
        return verdict, len(server.requests)


def test_a_list_of_300_diagnoses_makes_no_judge_request():
    verdict, requests = judged(" or ".join(f"dx{i}" for i in range(300)), 300)
    assert (verdict.score, requests) == (1, 0) and "300 diagnoses, more than 5" in verdict.reason


def test_five_diagnoses_are_still_graded_one_by_one():
    names = ["Acute appendicitis", "Acute cholecystitis", "Acute pancreatitis", "Renal colic", "Pneumonia"]
    verdict, requests = judged(" or ".join(names), 5)
    assert (verdict.score, requests) == (5, 5)  # the scripted model said 5 to each


def test_the_offline_judge_caps_the_same_list():
    names = ["Acute appendicitis", "Acute cholecystitis", "Acute pancreatitis", "Renal colic", "Pneumonia", "Gout"]
    verdict = OfflineJudge().score(REF, ", ".join(names))
    assert verdict.score == 1 and "6 diagnoses, more than 5" in verdict.reason
