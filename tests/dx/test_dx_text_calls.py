"""Every dx role (the MAI-DxO panel, the LLM gatekeeper, the LLM judge) against a server that did
not parse tool calls: the reply shapes real local models wrote (issue #30) become the intended
call, a reply without a usable answer gets one corrective message, and each role's usage
counts its real HTTP requests and seconds. The server is the agents' scripted server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clinbench.dx.models import RoleSpec
from clinbench.dx.run import DxConfig, run_dx

from tests.agents.scripted_server import ScriptedServer
from tests.agents.text_call_shapes import SHAPES, bare, fenced, hermes

QUESTION = "Where did the pain start?"


def _panel(action: str, **consensus) -> dict:
    return {"hypothesis": {"differential": [{"diagnosis": "Acute appendicitis", "probability": 0.8}]},
            "test_chooser": {"tests": []}, "challenger": {"concern": "ureteric colic"},
            "stewardship": {"advice": "none"}, "checklist": {"issues": "none"},
            "consensus": {"action": action, **consensus}}


def _run(tmp_path, case, agent_script, gatekeeper_script, judge_script):
    with ScriptedServer(agent_script) as a, ScriptedServer(gatekeeper_script) as g, ScriptedServer(judge_script) as j:
        roles = {role: RoleSpec(role, f"{role}-model", base_url=srv.base_url, api_key="k")
                 for role, srv in (("agent", a), ("gatekeeper", g), ("judge", j))}
        cfg = DxConfig(agent="dxo", gatekeeper="llm", judge="llm", roles=roles)
        (rec,) = run_dx([case], cfg, tmp_path)
    folder = Path(tmp_path) / rec.evidence_dir
    events = [json.loads(line) for line in (folder / "transcript.jsonl").read_text().splitlines()]
    return rec, events, json.loads((folder / "roles.json").read_text()), (a, g, j)


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.slow
def test_each_reply_shape_seen_from_a_local_model_is_the_intended_call_of_every_dx_role(tmp_path, case_by_id, shape):
    write = SHAPES[shape]
    agent = [{"text": write("panel", _panel("ask", questions=[QUESTION]))},
             {"text": write("panel", _panel("diagnose", diagnosis="Acute appendicitis"))}]
    gatekeeper = [{"text": write("reply", {"reply": "It started around the navel.", "source": "REAL"})}]
    judge = [{"text": write("grade", {"score": 5, "reason": "same diagnosis"})}]
    rec, events, roles, _ = _run(tmp_path, case_by_id[1], agent, gatekeeper, judge)
    assert rec.status == "ok" and rec.judge_score == 5, rec.error
    question = next(e for e in events if e["event"] == "question")
    assert (question["content"], question["reply"]) == (QUESTION, "It started around the navel.")
    assert next(e for e in events if e["event"] == "diagnosis")["content"] == "Acute appendicitis"
    assert {r: (roles[r]["requests"], roles[r]["parsed_from_text"], roles[r]["errors"], roles[r]["repairs"])
            for r in roles} == {"agent": (2, 2, 0, 0), "gatekeeper": (1, 1, 0, 0), "judge": (1, 1, 0, 0)}


@pytest.mark.slow
def test_an_empty_judge_reply_gets_one_corrective_turn_and_both_attempts_are_counted(tmp_path, case_by_id):
    agent = [{"tool": "panel", "arguments": _panel("diagnose", diagnosis="Acute appendicitis")}]
    judge = [{"text": ""}, {"text": bare("grade", {"score": 5, "reason": "same"})}]
    rec, _, roles, (_, _, j) = _run(tmp_path, case_by_id[1], agent, [], judge)
    assert rec.status == "ok" and rec.judge_score == 5
    assert roles["judge"]["requests"] == 2 and roles["judge"]["repairs"] == 1 and roles["judge"]["errors"] == 0
    assert roles["judge"]["rejected"][0]["problem"] == "is neither a grade call nor a JSON object"
    assert j.requests[1]["messages"][-1]["content"].startswith("Your last reply is neither a grade call nor a JSON object. "
                                                                "Reply with one call of the function `grade`")


@pytest.mark.slow
def test_a_panel_that_fails_twice_is_the_agents_failure_with_its_reply_kept_and_counted(tmp_path, case_by_id):
    rambling = "I think the patient has " + "a very interesting presentation, " * 60 + "so let us discuss."
    agent = [{"text": rambling}, {"text": fenced("panel", {"thoughts": "no consensus here"})}]
    rec, events, roles, (a, _, _) = _run(tmp_path, case_by_id[1], agent, [], [])
    assert rec.status == "agent-failed" and rec.reward == 0.0
    assert rec.error.startswith("agent model: reply has no consensus section with an action")
    rejected = [e for e in events if e["event"] == "rejected_reply"]
    assert [r["attempt"] for r in rejected] == [1, 2] and rejected[0]["reply"] == rambling  # whole, not 80 characters
    assert roles["agent"]["errors"] == 1 and roles["agent"]["repairs"] == 1
    # the run's usage counts the real HTTP requests and the time spent waiting for them
    assert rec.usage.requests == 2 and rec.usage.http_requests == len(a.requests) == 2
    assert 0 < rec.usage.model_seconds < rec.elapsed_seconds
    assert rec.usage.harness_seconds == pytest.approx(rec.elapsed_seconds - rec.usage.model_seconds, abs=0.01)
    assert roles["agent"]["http_requests"] == 2 and roles["agent"]["model_seconds"] > 0


def test_the_baseline_agents_actions_written_as_text_are_its_tool_calls(tmp_path, case_by_id):
    script = [{"text": fenced("ask", {"questions": [QUESTION]})},
              {"text": hermes("diagnose", {"diagnosis": "Acute appendicitis"})}]
    with ScriptedServer(script) as a:
        cfg = DxConfig(agent="baseline", roles={"agent": RoleSpec("agent", "m", base_url=a.base_url, api_key="k")})
        (rec,) = run_dx([case_by_id[1]], cfg, tmp_path)
    events = [json.loads(line) for line in (Path(tmp_path) / rec.evidence_dir / "transcript.jsonl").read_text().splitlines()]
    assert [e["content"] for e in events if e["event"] == "question"] == [QUESTION]
    assert rec.status == "ok" and rec.judge_score == 5
