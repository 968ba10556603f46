"""Model roles against scripted loopback servers: own endpoints, self-judge, malformed replies,
rejudge, the model-call cache, and the MAI-DxO panel (roles, budget, ensemble)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from clinbench.records.store import Store
from clinbench.dx.models import RoleSpec
from clinbench.dx.orchestrator import DxoSettings
from clinbench.dx.rejudge import rejudge
from clinbench.dx.run import DxConfig, run_dx
from clinbench.errors import ClinbenchError

sys.path.insert(0, str(Path(__file__).parent))
from model_server import NO_CHOICES, NOT_JSON, NULL_MESSAGE, ModelServer, text, tool  # noqa: E402


def spec(role, server, model=None):
    return RoleSpec(role, model or f"{role}-model", base_url=server.base_url, api_key="k")


def events(out, rec):
    path = Path(out) / rec.evidence_dir / "transcript.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()]


def score(out, rec):
    return json.loads((Path(out) / rec.evidence_dir / "score.json").read_text())


@pytest.mark.slow
def test_each_role_talks_to_its_own_endpoint_and_usage_is_kept_per_role(tmp_path, case_by_id):
    agent = [tool("order", tests=["lipase"]), tool("diagnose", diagnosis="Acute appendicitis")]
    gk = [tool("reply", reply="Lipase: 28 U/L.", source="REAL")]
    judge = [tool("grade", score=5, reason="same")]
    with ModelServer(agent) as a, ModelServer(gk) as g, ModelServer(judge) as j:
        cfg = DxConfig(agent="baseline", gatekeeper="llm", judge="llm",
                       roles={"agent": spec("agent", a), "gatekeeper": spec("gatekeeper", g), "judge": spec("judge", j)})
        (rec,) = run_dx([case_by_id[1]], cfg, tmp_path)
    assert [r["model"] for r in a.requests] == ["agent-model", "agent-model"]
    assert [r["model"] for r in g.requests] == ["gatekeeper-model"]
    assert [r["model"] for r in j.requests] == ["judge-model"]
    assert "Hospital course" in g.requests[0]["messages"][0]["content"]  # only the gatekeeper sees the record
    assert "Hospital course" not in json.dumps(a.requests)
    assert rec.judge_score == 5 and rec.cost == 25.0 and rec.judge == "llm:judge-model"
    roles = score(tmp_path, rec)["roles"]
    assert {r: roles[r]["requests"] for r in roles} == {"agent": 2, "gatekeeper": 1, "judge": 1}
    assert rec.usage.requests == 4 and rec.usage.input_tokens == 400


@pytest.mark.slow
def test_model_prices_give_each_role_its_cost(tmp_path, case_by_id):
    with ModelServer([tool("diagnose", diagnosis="Appendicitis")]) as a:
        s = RoleSpec("agent", "m", base_url=a.base_url, api_key="k", price_in=2.0, price_out=10.0)
        (rec,) = run_dx([case_by_id[1]], DxConfig(agent="baseline", roles={"agent": s}), tmp_path)
    # 100 input tokens at $2/M + 20 output tokens at $10/M = $0.0004
    assert score(tmp_path, rec)["roles"]["agent"]["model_cost_usd"] == pytest.approx(0.0004)


@pytest.mark.slow
def test_a_judge_that_is_the_agents_model_is_refused_unless_allowed(tmp_path, case_by_id):
    with ModelServer([tool("diagnose", diagnosis="Appendicitis"), tool("grade", score=5, reason="x")]) as s:
        roles = {"agent": spec("agent", s, "same-model"), "judge": spec("judge", s, "Same-Model")}
        with pytest.raises(ClinbenchError, match="agent's own model"):
            run_dx([case_by_id[1]], DxConfig(agent="baseline", judge="llm", roles=roles), tmp_path / "a")
        assert not (tmp_path / "a").exists()
        (rec,) = run_dx([case_by_id[1]], DxConfig(agent="baseline", judge="llm", roles=roles,
                                                        allow_self_judge=True), tmp_path / "b")
    assert rec.judge == "llm:Same-Model+self-judge" and score(tmp_path / "b", rec)["self_judge"] is True


@pytest.mark.slow
@pytest.mark.parametrize("bad", [NOT_JSON, NO_CHOICES, NULL_MESSAGE], ids=["not-json", "no-choices", "null-message"])
def test_a_malformed_agent_reply_is_a_recorded_error_and_the_campaign_goes_on(tmp_path, cases, bad):
    script = [tool("ask", questions=["Where did the pain start?"]), bad, tool("diagnose", diagnosis="Acute appendicitis")]
    with ModelServer(script) as s:
        cfg = DxConfig(agent="baseline", roles={"agent": RoleSpec("agent", "m", base_url=s.base_url, api_key="k")})
        first, second = run_dx(cases[:2], cfg, tmp_path)
    assert first.status == "agent-failed" and "agent model" in first.error and first.reward == 0.0
    assert first.cost == 300.0  # the visit before the failure is kept in the ledger
    ev = events(tmp_path, first)
    assert [e["event"] for e in ev][-1] == "error" and any(e["event"] == "question" for e in ev)
    assert second.status == "ok" and second.judge_score is not None  # the next case ran


def test_a_gatekeeper_failure_is_never_charged(tmp_path, case_by_id):
    agent = [tool("order", tests=["lipase"]), tool("order", tests=["CT abdomen and pelvis with contrast"])]
    with ModelServer(agent) as a, ModelServer([tool("reply", reply="Lipase: 28 U/L.", source="REAL"), NULL_MESSAGE]) as g:
        cfg = DxConfig(agent="baseline", gatekeeper="llm",
                       roles={"agent": spec("agent", a), "gatekeeper": spec("gatekeeper", g)})
        (rec,) = run_dx([case_by_id[1]], cfg, tmp_path)
    assert rec.status == "harness-error" and rec.error.startswith("harness error: gatekeeper model")
    assert rec.cost == 25.0  # the lipase only; the CT the gatekeeper failed on costs nothing
    ledger = json.loads((tmp_path / rec.evidence_dir / "ledger.json").read_text())
    assert [t["order"] for t in ledger["tests"]] == ["lipase"]


def test_unreadable_gatekeeper_reply_is_neither_a_charged_refusal_nor_a_dropped_case(tmp_path, case_by_id):
    # the agent's order is in the gatekeeper's prompt: an unreadable reply made the run a harness error (a case
    # the agent could drop); the turn now gets the offline gatekeeper's answer, charged as the offline one is
    from clinbench.dx.costs import PriceTable
    from clinbench.dx.gatekeeper import OfflineGatekeeper

    with ModelServer([tool("order", tests=["lipase"])]) as a, ModelServer([text("I cannot help with that")]) as g:
        cfg = DxConfig(agent="baseline", gatekeeper="llm",
                       roles={"agent": spec("agent", a), "gatekeeper": spec("gatekeeper", g)})
        (rec,) = run_dx([case_by_id[1]], cfg, tmp_path)
    assert rec.status != "harness-error", rec.error
    events = [json.loads(line) for line in (tmp_path / rec.evidence_dir / "transcript.jsonl").read_text().splitlines()]
    (order,) = [e for e in events if e.get("event") == "test"]
    offline = OfflineGatekeeper(case_by_id[1]).answer("test", "lipase")
    assert "I cannot help" not in json.dumps(order) and order["source"] == offline.source
    assert order["cost"] == PriceTable.bundled().charge("lipase", offline.served).price == 25.0  # CPT 83690


def cli(*args):
    env = {**os.environ, "COLUMNS": "300"}
    return subprocess.run([sys.executable, "-m", "clinbench", "dx", *args], capture_output=True, text=True,
                          timeout=300, env=env)


def no_nan(text: str) -> bool:
    return not re.search(r"\bnan\b", text, re.I)


@pytest.mark.slow
def test_judge_failure_keeps_the_encounter_and_rejudge_scores_it(tmp_path, case_by_id):
    script = tmp_path / "s.txt"
    script.write_text("<test>CBC</test>\n<diagnosis>Appendicitis</diagnosis>\n")
    with ModelServer([text("ok"), NOT_JSON, tool("grade", score=4, reason="qualifier missing")]) as j:  # preflight first
        out = cli("run", "--agent", f"scripted:{script}", "--judge", "llm", "--judge-model", "j1",
                  "--judge-base-url", j.base_url, "--judge-api-key", "k", "--max-cases", "2", "--out", str(tmp_path / "c"))
    assert out.returncode == 0, out.stderr
    assert no_nan(out.stdout) and "accuracy 100.0% of 1 scored" in out.stdout
    rows = Store.open(tmp_path / "c").runs()
    failed = [r for r in rows if r["status"] == "harness-error"]
    assert failed and failed[0]["error"].startswith("harness error: judge model")
    folder = tmp_path / "c" / failed[0]["evidence_dir"]
    assert (folder / "transcript.jsonl").is_file() and json.loads((folder / "score.json").read_text())["diagnosis"] == "Appendicitis"
    new = rejudge(tmp_path / "c", "offline")  # both stored encounters, the unjudged one included
    # offline judge: "Appendicitis" for acute appendicitis (case 1) is 5, for the STEMI (case 2) 1
    assert {r.task: r.judge_score for r in new} == {"1": 5, "2": 1} and all(r.status == "ok" for r in new)


@pytest.mark.slow
def test_an_all_error_campaign_prints_no_nan(tmp_path):
    script = tmp_path / "s.txt"
    script.write_text("<diagnosis>Appendicitis</diagnosis>\n")
    with ModelServer([text("ok")] + [NOT_JSON] * 3) as j:  # past the preflight, the judge fails on every case
        out = cli("run", "--agent", f"scripted:{script}", "--judge", "llm", "--judge-model", "j",
                  "--judge-base-url", j.base_url, "--judge-api-key", "k", "--max-cases", "3", "--out", str(tmp_path / "c"))
        stats = cli("stats", str(tmp_path / "c"))
    assert out.returncode == 0 and stats.returncode == 0, out.stderr + stats.stderr
    assert no_nan(out.stdout + stats.stdout) and "no run was scored (3 harness-error" in out.stdout
    assert "n/a" in stats.stdout


@pytest.mark.slow
def test_rejudge_reproduces_stored_scores_with_the_same_judge_and_changes_with_another(tmp_path, cases):
    script = tmp_path / "s.txt"
    script.write_text("<diagnosis>Appendicitis</diagnosis>\n")
    grades = [tool("grade", score=4, reason="qualifier missing"), tool("grade", score=2, reason="wrong")]
    with ModelServer(grades) as j:
        cfg = DxConfig(agent=f"scripted:{script}", judge="llm", roles={"judge": spec("judge", j, "j1")},
                       cache_dir=tmp_path / "cache")
        stored = run_dx(cases[:2], cfg, tmp_path / "c")
        same = rejudge(tmp_path / "c", "llm", spec("judge", j, "j1"), cache_dir=tmp_path / "cache")
        requests_after_same = len(j.requests)
    assert [r.judge_score for r in stored] == [4, 2]
    assert sorted(r.judge_score for r in same) == [2, 4] and requests_after_same == 2  # from the cache, no request
    with ModelServer([tool("grade", score=1, reason="no"), tool("grade", score=1, reason="no")]) as k:
        other = rejudge(tmp_path / "c", "llm", spec("judge", k, "j2"))
    assert [r.judge_score for r in other] == [1, 1] and {r.judge for r in other} == {"llm:j2 (rejudged)"}
    rows = Store.open(tmp_path / "c").runs()
    assert len(rows) == 6  # 2 stored + 2 re-judged by j1 + 2 by j2; originals untouched
    assert rejudge(tmp_path / "c", "llm", spec("judge", k, "j2")) == []  # done ones are skipped


@pytest.mark.slow
def test_cache_makes_a_rerun_free_and_identical(tmp_path, case_by_id):
    steps = [tool("ask", questions=["Any fever?"]), tool("diagnose", diagnosis="Acute appendicitis")]
    with ModelServer(list(steps)) as a:
        cfg = DxConfig(agent="baseline", roles={"agent": spec("agent", a)}, cache_dir=tmp_path / "cache")
        (first,) = run_dx([case_by_id[1]], cfg, tmp_path / "c1")
        (second,) = run_dx([case_by_id[1]], cfg, tmp_path / "c2")
    assert len(a.requests) == 2  # the second campaign made no request
    assert events(tmp_path / "c1", first) == events(tmp_path / "c2", second)
    assert score(tmp_path / "c2", second)["roles"]["agent"]["cache_hits"] == 2


# --- MAI-DxO -------------------------------------------------------------------------

def panel(action, *, questions=(), tests=(), diagnosis="", differential=(("Acute appendicitis", 0.6),
                                                                          ("Mesenteric adenitis", 0.2))):
    return tool("panel",
                hypothesis={"differential": [{"diagnosis": d, "probability": p} for d, p in differential],
                            "update": "RLQ pain raises appendicitis"},
                test_chooser={"tests": list(tests), "rationale": "separates the leading two"},
                challenger={"concern": "could be ureteric colic", "falsifying_test": "urinalysis"},
                stewardship={"advice": "ultrasound before CT", "vetoed": ["MRI abdomen"]},
                checklist={"issues": "none"},
                consensus={"action": action, "questions": list(questions), "tests": list(tests), "diagnosis": diagnosis})


def test_dxo_records_every_role_and_the_differential_each_turn(tmp_path, case_by_id):
    script = [panel("ask", questions=["Where did the pain start?"]),
              panel("test", tests=["CBC", "CT abdomen and pelvis with contrast"]),
              panel("diagnose", diagnosis="Acute appendicitis", differential=(("Acute appendicitis", 0.95),))]
    with ModelServer(script) as a:
        (rec,) = run_dx([case_by_id[1]], DxConfig(agent="dxo", roles={"agent": spec("agent", a)}), tmp_path)
    assert rec.agent == "dxo-no-budget" and rec.judge_score == 5 and rec.cost == 300.0 + 30.0 + 800.0
    panels = [e for e in events(tmp_path, rec) if e["event"] == "panel"]
    assert [p["turn"] for p in panels] == [1, 2, 3]
    for p in panels:
        assert set(p["roles"]) == {"hypothesis", "test_chooser", "challenger", "stewardship", "checklist"}
        assert p["roles"]["challenger"]["falsifying_test"] == "urinalysis"
    assert panels[0]["differential"][0] == {"diagnosis": "Acute appendicitis", "probability": 0.6}
    assert panels[2]["differential"] == [{"diagnosis": "Acute appendicitis", "probability": 0.95}]
    assert [p["consensus"]["action"] for p in panels] == ["ask", "test", "diagnose"]
    # the running cost is shown to the panel: $300 after the visit, $1,130 after the tests
    third = a.requests[2]["messages"][-1]["content"]
    assert "Running cost so far: $1,130" in third and "12 mm" in third


def test_budgeted_dxo_stops_ordering_at_the_budget(tmp_path, case_by_id):
    # budget $400: the visit ($300) and a CBC ($30) fit; the CT ($800) does not and is cancelled;
    # the next test turn has nothing affordable, so the panel diagnoses its leading hypothesis.
    script = [panel("ask", questions=["Any fever?"]),
              panel("test", tests=["CBC", "CT abdomen and pelvis with contrast"]),
              panel("test", tests=["CT abdomen and pelvis with contrast"])]
    with ModelServer(script) as a:
        cfg = DxConfig(agent="dxo", roles={"agent": spec("agent", a)}, dxo=DxoSettings("budgeted", 400.0))
        (rec,) = run_dx([case_by_id[1]], cfg, tmp_path)
    assert rec.agent == "dxo-budgeted-400" and rec.cost == 330.0 and rec.cost <= 400.0
    ev = events(tmp_path, rec)
    assert [e["content"] for e in ev if e["event"] == "test"] == ["CBC"]
    panels = [e for e in ev if e["event"] == "panel"]
    assert panels[1]["cancelled"] == ["CT abdomen and pelvis with contrast"]
    assert "reached" in panels[2]["override"]
    assert [e["content"] for e in ev if e["event"] == "diagnosis"] == ["Acute appendicitis"]
    assert "Budget $400; remaining $100" in a.requests[1]["messages"][-1]["content"]


@pytest.mark.slow
def test_question_only_and_instant_modes(tmp_path, case_by_id):
    with ModelServer([panel("test", tests=["CBC"]), panel("diagnose", diagnosis="Appendicitis")]) as a:
        cfg = DxConfig(agent="dxo", roles={"agent": spec("agent", a)}, dxo=DxoSettings("question-only"))
        (rec,) = run_dx([case_by_id[1]], cfg, tmp_path / "q")
    assert rec.cost == 0.0 and "not available in question-only" in a.requests[1]["messages"][-1]["content"]
    with ModelServer([panel("ask", questions=["Any fever?"])]) as a:
        cfg = DxConfig(agent="dxo", roles={"agent": spec("agent", a)}, dxo=DxoSettings("instant"))
        (rec,) = run_dx([case_by_id[1]], cfg, tmp_path / "i")
    assert rec.agent == "dxo-instant" and rec.cost == 0.0 and rec.judge_score == 5 and len(a.requests) == 1


@pytest.mark.slow
def test_ensemble_aggregates_n_panels_and_counts_each_distinct_test_once(tmp_path, case_by_id):
    one = [panel("test", tests=["CBC", "lipase"]), panel("diagnose", diagnosis="Acute appendicitis")]
    two = [panel("test", tests=["CBC"]), panel("diagnose", diagnosis="Mesenteric adenitis")]
    three = [panel("ask", questions=["Any fever?"]), panel("diagnose", diagnosis="Acute appendicitis")]
    aggregate = tool("aggregate", diagnosis="Acute appendicitis", rationale="two of three panels")
    with ModelServer(one + two + three + [aggregate]) as a:
        cfg = DxConfig(agent="dxo", roles={"agent": spec("agent", a)}, dxo=DxoSettings("ensemble", panels=3))
        (rec,) = run_dx([case_by_id[1]], cfg, tmp_path)
    assert rec.agent == "dxo-ensemble-3" and rec.judge_score == 5
    ev = events(tmp_path, rec)
    assert {e.get("panel") for e in ev if e["event"] == "panel"} == {1, 2, 3}
    agg = next(e for e in ev if e["event"] == "aggregate")
    assert agg["panels"] == ["Acute appendicitis", "Mesenteric adenitis", "Acute appendicitis"]
    assert "Panel 2: final diagnosis Mesenteric adenitis" in a.requests[-1]["messages"][-1]["content"]
    # CBC $30 once + lipase $25 + one visit $300 (panel 3); summed per panel it would be $385
    assert rec.cost == 355.0
    final = [e for e in ev if e["event"] == "diagnosis" and "panel" not in e]
    assert final[0]["content"] == "Acute appendicitis" and final[0]["panels_summed_cost"] == 385.0


@pytest.mark.slow
def test_jobs_run_encounters_in_parallel_and_a_rerun_resumes(tmp_path, cases):
    with ModelServer([tool("diagnose", diagnosis="Acute appendicitis")] * 4) as a:
        cfg = DxConfig(agent="baseline", roles={"agent": spec("agent", a)})
        first = run_dx(cases[:4], cfg, tmp_path, jobs=2)
        again = run_dx(cases[:4], cfg, tmp_path, jobs=2)
    assert sorted(r.task for r in first) == ["1", "2", "3", "4"] and again == []
    assert len(a.requests) == 4 and len(Store.open(tmp_path).runs()) == 4


@pytest.mark.slow
def test_parameters_are_sent_only_when_set(tmp_path):
    steps = [text("ok"), tool("diagnose", diagnosis="Appendicitis")] * 2  # each run's preflight, then its case
    with ModelServer(list(steps)) as a:
        out = cli("run", "--agent", "baseline", "--agent-model", "m", "--agent-base-url", a.base_url,
                  "--agent-api-key", "k", "--param", "agent.temperature=0.2", "--param", "agent.max_tokens=256",
                  "--max-cases", "1", "--out", str(tmp_path / "c"))
        bare = cli("run", "--agent", "baseline", "--agent-model", "m2", "--agent-base-url", a.base_url,
                   "--agent-api-key", "k", "--max-cases", "1", "--out", str(tmp_path / "d"))
    assert out.returncode == 0 and bare.returncode == 0, out.stderr + bare.stderr
    assert a.requests[1]["temperature"] == 0.2 and a.requests[1]["max_tokens"] == 256
    assert "temperature" not in a.requests[3] and "max_tokens" not in a.requests[3]
    bad = cli("run", "--agent", "oracle", "--param", "agent.temp=1", "--out", str(tmp_path / "e"))
    assert bad.returncode == 2 and "use ROLE.KEY=VALUE" in bad.stderr and not (tmp_path / "e").exists()


def test_a_role_can_use_the_anthropic_provider(tmp_path, case_by_id):
    from tests.agents.scripted_server import ScriptedServer

    script = tmp_path / "s.txt"
    script.write_text("<diagnosis>Appendicitis</diagnosis>\n")
    with ScriptedServer([{"tool": "grade", "arguments": {"score": 4, "reason": "acute missing"}}]) as srv:
        judge = RoleSpec("judge", "claude-judge", provider="anthropic", base_url=srv.url, api_key="k")
        (rec,) = run_dx([case_by_id[1]], DxConfig(agent=f"scripted:{script}", judge="llm",
                                                        roles={"judge": judge}), tmp_path / "c")
        path = srv.log[-1]["path"]
    assert path.endswith("/v1/messages") and rec.judge_score == 4 and rec.judge == "llm:anthropic:claude-judge"
