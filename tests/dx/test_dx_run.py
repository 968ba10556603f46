"""Campaign runs: store rows, evidence, offline baselines, resume, stats, CLI, LLM gatekeeper."""

import json
import re
import subprocess
import sys

import pytest

from tests.agents.scripted_server import ScriptedServer
from clinbench.campaign.evidence import verify_manifest
from clinbench.records.store import Store
from clinbench.report.svg import accuracy_cost_plot
from clinbench.stats import accuracy as dxstats
from clinbench.dx.gatekeeper import LLMGatekeeper
from clinbench.dx.models import RoleModel, RoleSpec
from clinbench.dx.run import DxConfig, run_dx


@pytest.fixture(scope="module")
def campaign(tmp_path_factory, cases):
    out = tmp_path_factory.mktemp("dx-campaign")
    run_dx(cases, DxConfig(agent="oracle"), out)
    run_dx(cases, DxConfig(agent="ed-instant"), out)
    return out


@pytest.mark.slow
def test_oracle_scores_100_percent_on_demo_cases(campaign, cases):
    runs = [r for r in Store.open(campaign).runs(benchmark="dx") if r["agent"] == "oracle"]
    assert len(runs) == len(cases)
    assert all(r["status"] == "ok" and r["reward"] == 1.0 and r["judge_score"] == 5 for r in runs)


@pytest.mark.slow
def test_ed_instant_runs_offline_on_every_demo_case(campaign, cases):
    runs = [r for r in Store.open(campaign).runs(benchmark="dx") if r["agent"] == "ed-instant"]
    assert sorted(int(r["task"]) for r in runs) == sorted(c.case_id for c in cases)
    for r in runs:
        assert r["status"] == "ok" and 1 <= r["judge_score"] <= 5 and r["cost"] == 0.0
        score = json.loads((campaign / r["evidence_dir"] / "score.json").read_text())
        assert score["diagnosis"] and score["turns"] == 1


@pytest.mark.slow
def test_evidence_is_complete_and_hashed(campaign):
    run = Store.open(campaign).runs(benchmark="dx")[0]
    folder = campaign / run["evidence_dir"]
    for name in ("prompt.md", "transcript.jsonl", "ledger.json", "score.json", "manifest.json"):
        assert (folder / name).is_file(), name
    assert verify_manifest(folder) == []
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["data"] == "SYNTHETIC" and manifest["benchmark"] == "dx"


@pytest.mark.slow
def test_rerun_skips_finished_runs(campaign, cases):
    assert run_dx(cases, DxConfig(agent="oracle"), campaign) == []


@pytest.mark.slow
def test_stats_accuracy_ci_plot_and_paired_test(campaign, tmp_path):
    runs = dxstats.dx_runs(campaign)
    by = {s.agent: s for s in dxstats.summarise(runs)}
    assert by["oracle"].accuracy == 1.0 and by["oracle"].ci == (1.0, 1.0)
    ie = by["ed-instant"]
    assert ie.ci[0] <= ie.accuracy <= ie.ci[1]
    test = dxstats.compare(runs, "ed-instant", "oracle")
    assert test.pairs == by["oracle"].runs
    assert test.p_value < 0.001  # oracle is right on every case, the vignette-only baseline on about half
    svg = accuracy_cost_plot(list(by.values()))
    assert svg.startswith("<svg") and "oracle: 100% [100%, 100%], $0 (Pareto front)" in svg


@pytest.mark.slow
def test_compare_base_new_has_delta_new_minus_base_in_dx_stats_as_in_stats(campaign):
    """`--compare BASE:NEW` means the same in `dx stats` and `stats`: delta = NEW − BASE, NEW tested better."""
    from clinbench.stats.analysis import analyse

    runs = dxstats.dx_runs(campaign)
    up = dxstats.compare(runs, "ed-instant", "oracle")
    down = dxstats.compare(runs, "oracle", "ed-instant")
    assert up.delta == pytest.approx(up.accuracy_b - up.accuracy_a) and up.delta > 0.2
    assert up.p_value < 0.001 and down.p_value > 0.5 and down.delta == pytest.approx(-up.delta)
    assert analyse(campaign, "agent:ed-instant:oracle", benchmark="dx").delta == pytest.approx(up.delta)
    out = cli("stats", str(campaign), "--compare", "ed-instant:oracle")
    assert out.returncode == 0, out.stderr
    assert f"delta {up.delta * 100:+.1f} points" in " ".join(out.stdout.split())


@pytest.mark.slow
def test_scripted_agent_cost_lands_in_the_store(tmp_path, cases):
    script = tmp_path / "appendix.txt"
    script.write_text("<question>Where did the pain start?</question>\n<test>CBC</test>\n"
                      "<diagnosis>Appendicitis</diagnosis>\n")
    case1 = [c for c in cases if c.case_id == 1]
    (rec,) = run_dx(case1, DxConfig(agent=f"scripted:{script}"), tmp_path / "out")
    assert rec.agent == "scripted-appendix" and rec.cost == 330.0 and rec.judge_score >= 4 and rec.reward == 1.0


def cli(*args):
    return subprocess.run([sys.executable, "-m", "clinbench", "dx", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_cli_stats_and_judge(campaign, tmp_path):
    out = cli("stats", str(campaign), "--compare", "ed-instant:oracle", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert {a["agent"] for a in data["agents"]} == {"oracle", "ed-instant"}
    assert data["comparison"]["p_value"] < 0.001
    one = cli("judge", "--reference", "Acute pyelonephritis", "--candidate", "Kidney infection", "--json")
    assert json.loads(one.stdout)["score"] == 5
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("reference,candidate\nAcute appendicitis,Appendicitis\nAcute appendicitis,Migraine\n")
    many = json.loads(cli("judge", "--pairs", str(pairs), "--json").stdout)
    assert [r["correct"] for r in many] == [True, False]


@pytest.mark.slow
def test_cli_errors_are_one_line(tmp_path):
    bad = cli("run", "--agent", "nope", "--out", str(tmp_path / "x"))
    assert bad.returncode == 2 and bad.stderr.strip().startswith("error: unknown dx agent 'nope'")
    assert not (tmp_path / "x").exists()
    missing = cli("run", "--agent", "oracle", "--cases", str(tmp_path / "none.json"), "--out", str(tmp_path / "y"))
    assert missing.returncode == 2 and "no dataset file" in missing.stderr


@pytest.mark.slow
def test_gatekeeper_or_judge_typo_is_one_line_and_creates_no_store(tmp_path):
    gk = cli("run", "--agent", "oracle", "--gatekeeper", "ofline", "--out", str(tmp_path / "g"))
    assert gk.returncode == 2 and gk.stderr.strip() == "error: unknown gatekeeper 'ofline': use offline or llm"
    judge = cli("run", "--agent", "oracle", "--judge", "LLM", "--out", str(tmp_path / "j"))
    assert judge.returncode == 2 and judge.stderr.strip() == "error: unknown judge 'LLM': use offline or llm"
    assert not (tmp_path / "g").exists() and not (tmp_path / "j").exists()


def test_llm_gatekeeper_reply_passes_the_leak_guard(case_by_id):
    case = case_by_id[1]
    script = [{"tool": "reply", "arguments": {"reply": "Tender right lower quadrant; this is acute appendicitis.",
                                              "source": "REAL"}},
              {"tool": "reply", "arguments": {"reply": "Lipase 31 U/L.", "source": "SYNTHETIC"}}]
    with ScriptedServer(script) as server:
        gk = LLMGatekeeper(case, RoleModel(RoleSpec("gatekeeper", "gk", base_url=server.base_url, api_key="t")))
        first = gk.answer("question", "What did the exam show?")
        second = gk.answer("test", "lipase")
        system = server.requests[0]["messages"][0]["content"]
    assert "appendicitis" not in first.text.lower() and first.blocked
    assert first.text.startswith("Tender right lower quadrant")
    # the record holds the lipase: its own words win over the model's invented value
    assert second.text == "Lipase: 28 U/L." and second.source == "REAL" and second.prompt == "gatekeeper-3"
    assert "RECORD TEXT: Lipase: 28 U/L." in server.requests[1]["messages"][-1]["content"]
    assert "Hospital course" in system and "never reveal" in system


@pytest.mark.slow
def test_baseline_agent_talks_to_the_endpoint_and_is_forced_to_diagnose(tmp_path, cases):
    # With an empty script the server answers every turn with the text "Done.": the
    # agent never acts, so after max_turns it is forced, gives nothing, and the judge scores 1.
    case1 = [c for c in cases if c.case_id == 1]
    with ScriptedServer([]) as server:
        cfg = DxConfig(agent="baseline", max_turns=2,
                       roles={"agent": RoleSpec("agent", "dx-model", base_url=server.base_url, api_key="k")})
        (rec,) = run_dx(case1, cfg, tmp_path)
        first = server.requests[0]
    assert rec.status == "ok" and rec.judge_score == 1 and rec.reward == 0.0 and rec.cost == 0.0
    assert len(server.requests) == 3  # two turns and the forced one
    assert first["model"] == "dx-model" and "temperature" not in first
    assert first["messages"][0]["role"] == "system" and "<diagnosis>" in first["messages"][0]["content"]
    assert case1[0].case_summary in first["messages"][1]["content"]
    usage = Store.open(tmp_path).runs()[0]
    assert usage["requests"] == 3 and usage["input_tokens"] > 0


@pytest.mark.slow
def test_demo_dx_prints_the_offline_baselines_accuracy_and_dx_stats_writes_the_plot(campaign):
    from clinbench.dx.demo import run_demo_dx

    lines = run_demo_dx(campaign, agents=("oracle", "ed-instant"))  # already ran: the summary only
    text = "\n".join(lines)
    m = re.search(r"offline baseline ed-instant: (\d+)/32 correct", text)
    assert m and int(m.group(1)) >= 13  # >= 40% of the 32 demo cases (14/32 when written)
    assert "oracle: accuracy 100.0%" in text
    out = cli("stats", str(campaign))
    assert out.returncode == 0, out.stderr
    plot = (campaign / "dx_accuracy_cost.svg").read_text()
    assert f"plot: {campaign / 'dx_accuracy_cost.svg'}" in out.stdout.replace("\n", "")
    assert 'class="figure accuracy-cost"' in plot and "oracle: 100% [100%, 100%], $0 (Pareto front)" in plot


@pytest.mark.slow
def test_cli_judge_check_on_a_pairs_file(tmp_path):
    pairs = tmp_path / "cal.csv"
    pairs.write_text("reference,candidate,expected\n"
                     "Acute appendicitis,Appendicitis,4\n"
                     "Acute appendicitis,Acute suppurative appendicitis,5\n"
                     "Acute appendicitis,Migraine,1\n"
                     "Left lower lobe pneumonia,Right lower lobe pneumonia,3\n")
    out = cli("judge-check", "--pairs", str(pairs), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["pairs"] == 4 and data["kappa_correct"] == 1.0
    assert data["confusion"]["expected_correct_judged_correct"] == 2


@pytest.mark.slow
def test_real_dataset_layout_runs_end_to_end(tmp_path, cases):
    # dataset.json records carry no icd10/synonyms: the leak guard looks the code up itself
    path = tmp_path / "dataset.json"
    path.write_text(json.dumps([c.record() for c in cases[:3]]))
    out = cli("run", "--cases", str(path), "--split", "test", "--agent", "ed-workup", "--out", str(tmp_path / "c"))
    assert out.returncode == 0, out.stderr
    runs = Store.open(tmp_path / "c").runs()
    assert len(runs) == 3 and all(r["status"] == "ok" and r["cost"] > 0 for r in runs)
    manifest = json.loads((tmp_path / "c" / runs[0]["evidence_dir"] / "manifest.json").read_text())
    assert manifest["data"] == "REAL"
    for r in runs:
        case = next(c for c in cases if str(c.case_id) == r["task"])
        transcript = (tmp_path / "c" / r["evidence_dir"] / "transcript.jsonl").read_text().lower()
        replies = " ".join(json.loads(line).get("reply", "") for line in transcript.splitlines())
        assert case.final_diagnosis.lower() not in replies


@pytest.mark.slow
def test_cli_run_with_llm_judge_and_gatekeeper_over_loopback(tmp_path, cases):
    script = tmp_path / "s.txt"
    script.write_text("<test>lipase</test>\n<diagnosis>Appendicitis</diagnosis>\n")
    steps = [{"text": "ok"}, {"text": "ok"},  # the preflight of each role
             {"tool": "reply", "arguments": {"reply": "Lipase 30 U/L.", "source": "SYNTHETIC"}},
             {"tool": "grade", "arguments": {"score": 4, "reason": "acute qualifier missing"}}]
    with ScriptedServer(steps) as server:
        out = cli("run", "--agent", f"scripted:{script}", "--gatekeeper", "llm", "--judge", "llm",
                  "--gatekeeper-model", "g", "--gatekeeper-base-url", server.base_url, "--gatekeeper-api-key", "k",
                  "--judge-model", "j", "--judge-base-url", server.base_url, "--judge-api-key", "k",
                  "--max-cases", "1", "--out", str(tmp_path / "c"))
        assert out.returncode == 0, out.stderr
        assert [r["model"] for r in server.requests] == ["g", "j", "g", "j"]
    (run,) = Store.open(tmp_path / "c").runs()
    assert run["judge_score"] == 4 and run["reward"] == 1.0 and run["cost"] == 25.0  # lipase 83690
    assert run["gatekeeper"] == "llm:g" and run["judge"] == "llm:j" and run["condition"] == run["schema"] == "" and run["requests"] == 2
    events = [json.loads(x) for x in (tmp_path / "c" / run["evidence_dir"] / "transcript.jsonl").read_text().splitlines()]
    # case 1's record holds the lipase: the record's words win over the model's, with the prompt version
    assert [(e["source"], e["reply"], e["prompt"]) for e in events if e["event"] == "test"] == [
        ("REAL", "Lipase: 28 U/L.", "gatekeeper-3")]
    assert json.loads((tmp_path / "c" / run["evidence_dir"] / "score.json").read_text())["judge_prompt"] == "judge-2"


def test_dx_run_prints_each_agents_accuracy_never_one_pooled_over_agents(tmp_path):
    """oracle and an agent that always answers gout, on 2 demo cases: `dx run` printed "accuracy 50.0% of 4
    scored", a figure of neither agent (found by a review); now each agent's, as `dx stats` gives it."""
    script = tmp_path / "gout.txt"
    script.write_text("<diagnosis>Gout</diagnosis>\n")
    out = cli("run", "--cases", "demo", "--max-cases", "2", "--agent", f"oracle,scripted:{script}",
              "--out", str(tmp_path / "c"))
    assert out.returncode == 0, out.stderr
    line = " ".join(out.stdout.split())
    assert "oracle: accuracy 100.0% of 2 scored, mean cost $0; scripted-gout: accuracy 0.0% of 2 scored" in line
    assert "accuracy 50.0%" not in line
