"""Campaigns over the real workspace builder and scorer on a tiny hand-made database."""

from __future__ import annotations

import json

import duckdb
import pytest

from clinbench.agents.factory import AgentOptions, make_agent
from tests.agents.scripted_server import ScriptedServer
from clinbench.campaign.campaign import CampaignError, campaign_lock, run_campaign
from clinbench.campaign.evidence import verify_manifest
from clinbench.campaign.execute import CampaignConfig
from clinbench.campaign.matrix import RunSpec, expand
from clinbench.records.store import STORE_FILE, Store
from clinbench.errors import AgentError

from campaign_fixtures import SOFA_COLUMNS
from tests.starved_scorer import starve_scorer

SOFA_SQL = (
    "SELECT i.subject_id, i.hadm_id, i.stay_id, v.* FROM mimiciv_icu.icustays i JOIN (VALUES "
    "(100, 5, 1, 0, 2, 1, 1, 0), (200, 3, 0, 1, 0, 1, 1, 0)) v(sid, sofa, respiration, coagulation, liver, "
    "cardiovascular, cns, renal) ON v.sid = i.stay_id"
)


@pytest.mark.slow
def test_llm_agent_campaign_scores_one_with_full_evidence(tiny_db, tmp_path):
    script = [
        {"tool": "list_tables", "arguments": {}},
        {"tool": "read_skill", "arguments": {"name": "sofa-score"}},
        {"tool": "write_output", "arguments": {"sql": SOFA_SQL.replace("v.*", "v.* EXCLUDE (sid)")}},
        {"text": "Done."},
    ]
    out = tmp_path / "camp"
    with ScriptedServer(script) as srv:
        config = CampaignConfig(db=str(tiny_db), out=str(out), options=AgentOptions(base_url=srv.base_url))
        summary = run_campaign([RunSpec("mimic-sofa-24h", "with-skill", "native", "llm", "scripted", 0)], config)
    assert summary.by_status == {"ok": 1}
    run = Store.open(out).runs()[0]
    assert run["reward"] == 1.0 and run["strict"] is True and run["key_f1"] == 1.0
    assert run["input_tokens"] == 80 and run["requests"] == 4 and run["family"] == "sofa"
    folder = out / run["evidence_dir"]
    assert sorted(p.name for p in folder.iterdir()) == ["manifest.json", "output.csv", "prompt.md", "score.json", "skills", "transcript.jsonl"]
    assert (folder / "skills" / "sofa-score" / "SKILL.md").is_file()
    assert verify_manifest(folder) == []
    assert json.loads((folder / "score.json").read_text())["reward"] == 1.0
    assert (folder / "output.csv").read_text().splitlines()[0] == SOFA_COLUMNS
    # the tool-visible workspace had no target table
    assert "target_" not in json.dumps(srv.requests[1]["messages"])
    assert not (out / ".work").exists() or not any((out / ".work").iterdir())


@pytest.mark.slow
def test_empty_agent_scores_zero_and_rerun_skips_recorded_runs(tiny_db, tmp_path):
    out = tmp_path / "camp"
    specs = expand(["mimic-sofa-24h", "mimic-meld-24h"], ["no-skill"], ["native"], ["empty"], [], 2)
    config = CampaignConfig(db=str(tiny_db), out=str(out))
    first = run_campaign(specs, config, jobs=2)
    assert (first.finished, first.skipped) == (4, 0)
    rows = Store.open(out).runs()
    assert [r["reward"] for r in rows] == [0.0] * 4 and all(r["status"] == "ok" for r in rows)
    again = run_campaign(specs, config, jobs=2)
    assert (again.finished, again.skipped) == (0, 4)
    assert Store.open(out).count() == 4


@pytest.mark.slow
def test_bad_task_becomes_a_harness_error_run_not_a_crash(tiny_db, tmp_path):
    out = tmp_path / "camp"
    summary = run_campaign([RunSpec("mimic-sofa-24h", "no-such-condition", "native", "empty", "-", 0)],
                           CampaignConfig(db=str(tiny_db), out=str(out)))
    run = Store.open(out).runs()[0]
    # the workspace could not be prepared: the harness failed, not the agent, so there is no reward
    assert summary.by_status == {"harness-error": 1} and run["reward"] is None
    assert "unknown condition 'no-such-condition'" in run["error"]
    score = json.loads((out / run["evidence_dir"] / "score.json").read_text())
    assert "condition" in score["run_error"]
    config = CampaignConfig(db=str(tiny_db), out=str(out))
    spec = RunSpec("mimic-sofa-24h", "no-such-condition", "native", "empty", "-", 0)
    assert run_campaign([spec], config).skipped == 1
    retried = run_campaign([spec], config, retry_failed=True)
    assert (retried.finished, retried.skipped) == (1, 0) and Store.open(out).count() == 1


def test_two_campaigns_cannot_share_a_folder(tmp_path):
    with campaign_lock(tmp_path):
        with pytest.raises(CampaignError, match="another campaign is running"):
            with campaign_lock(tmp_path):
                pass


@pytest.mark.slow
def test_reference_variant_and_replay_builtins(tiny_db, tmp_path):
    import duckdb

    con = duckdb.connect(str(tiny_db))
    con.execute("CREATE TABLE mimiciv_derived.variant_sofa_24h__missing_as_null AS SELECT * FROM mimiciv_derived.target_sofa_24h")
    con.execute("UPDATE mimiciv_derived.variant_sofa_24h__missing_as_null SET liver = 0, sofa = 3 WHERE stay_id = 100")
    con.close()
    first = tmp_path / "first"
    options = AgentOptions(variant="missing_as_null")
    specs = [RunSpec("mimic-sofa-24h", "no-skill", "native", a, "-", 0) for a in ("reference", "variant")]
    run_campaign(specs, CampaignConfig(db=str(tiny_db), out=str(first), options=options))
    rewards = {r["agent"]: r["reward"] for r in Store.open(first).runs()}
    # the variant differs in 2 of 14 scored cells (sofa and liver of stay 100)
    assert rewards["reference"] == 1.0 and rewards["variant"] == pytest.approx(12 / 14)
    assert {r["agent"]: r["isolated"] for r in Store.open(first).runs()} == {"reference": False, "variant": False}

    # the first campaign ran two agents: which one's outputs a replay copies is the user's choice, never the
    # store's row order (before: either, the test accepting both rewards)
    with pytest.raises(AgentError, match=r"holds runs of 2 agents \(reference, variant\): name the one to replay with --replay-agent"):
        make_agent("replay", AgentOptions(replay_from=str(first)))
    with pytest.raises(AgentError, match=r"--replay-agent codex: .* holds no runs of it; its agents: reference, variant"):
        make_agent("replay", AgentOptions(replay_from=str(first), replay_agent="codex"))

    second = tmp_path / "second"
    replay = AgentOptions(replay_from=str(first), replay_agent="variant")
    run_campaign([RunSpec("mimic-sofa-24h", "no-skill", "native", "replay", "-", 0)],
                 CampaignConfig(db=str(tiny_db), out=str(second), options=replay))
    replayed = Store.open(second).runs()[0]
    assert replayed["reward"] == pytest.approx(12 / 14) and replayed["status"] == "ok"
    source = json.loads((second / replayed["evidence_dir"] / "transcript.jsonl").read_text().splitlines()[-1])["replayed"]
    assert (second / replayed["evidence_dir"] / "output.csv").read_bytes() == (first / "runs" / source / "output.csv").read_bytes()

    # a source run that was a harness error has no answer to replay and was no failure of the agent's: it
    # replays as a harness error (before: an agent failure, reward 0, in every statistic)
    with duckdb.connect(str(first / STORE_FILE)) as con:
        con.execute("UPDATE runs SET status = 'harness-error', error = 'endpoint down' WHERE agent = 'reference'")
    third = tmp_path / "third"
    run_campaign([RunSpec("mimic-sofa-24h", "no-skill", "native", "replay", "-", 0)],
                 CampaignConfig(db=str(tiny_db), out=str(third),
                                options=AgentOptions(replay_from=str(first), replay_agent="reference")))
    (run,) = Store.open(third).runs()
    assert run["status"] == "harness-error" and "was a harness error: endpoint down" in run["error"]

    # (review 50) a run the audit charged replayed as a clean full score (0.750 -> 1.000 over the campaign); a trial
    # the source lacks was an agent failure. The source's standing is kept: charged -> reward 0, absent -> left out
    Store.open(first).set_verdict("mimic-sofa-24h.no-skill.native.variant.-.t0", False, "peeked at the reference",
                                  charged=True)
    fourth = tmp_path / "fourth"
    run_campaign([RunSpec("mimic-sofa-24h", "no-skill", "native", "replay", "-", t) for t in (0, 1)],
                 CampaignConfig(db=str(tiny_db), out=str(fourth), options=replay))
    runs = {r["trial"]: r for r in Store.open(fourth).runs()}
    assert (runs[0]["status"], runs[0]["reward"]) == ("agent-failed", 0.0)
    assert "charged by the audit: peeked at the reference" in runs[0]["error"]
    assert runs[1]["status"] == "harness-error" and runs[1]["error"].startswith("no run of mimic-sofa-24h/no-skill/native/trial 1 by variant")


@pytest.mark.slow
def test_demo_campaign_runs_reference_against_variant(tiny_db, tmp_path):
    from clinbench.campaign.demo import run_demo_campaign, task_variant

    """The variant leaves stay 200's SOFA total empty (an unmeasured organ): 1 of 2 rows of one of
    the 7 scored columns misses, so the variant agent scores (6 + 0.5)/7 against the default."""
    assert task_variant("mimic-sofa-24h") == "missing_as_null" and task_variant("mimic-meld-24h") is None
    with duckdb.connect(str(tiny_db)) as con:
        con.execute("CREATE TABLE mimiciv_derived.variant_sofa_24h__missing_as_null AS "
                    "SELECT * REPLACE (CASE WHEN stay_id = 200 THEN NULL ELSE sofa END AS sofa) "
                    "FROM mimiciv_derived.target_sofa_24h")
    summary = run_demo_campaign(tiny_db, tmp_path / "demo", tasks=["mimic-sofa-24h"])
    assert summary.by_status == {"ok": 2}
    rewards = {r["agent"]: r["reward"] for r in Store.open(tmp_path / "demo").runs()}
    assert rewards == {"reference": 1.0, "variant": pytest.approx(6.5 / 7)}


@pytest.mark.slow
def test_run_cli_all_means_the_tasks_of_the_databases_dataset(tiny_db, tmp_path):
    from typer.testing import CliRunner

    from clinbench.campaign.matrix import datasets_in
    from clinbench.cli import app
    from clinbench.campaign.matrix import resolve_tasks
    from clinbench.derive.catalogue import load_catalogue
    from clinbench.errors import TaskError

    assert datasets_in(tiny_db) == {"mimic-iv"}
    tasks = resolve_tasks(["all"], tiny_db)
    assert tasks and all(load_catalogue()[t].database == "mimic-iv" for t in tasks)
    with pytest.raises(TaskError, match="holds no data for eicu-gcs"):
        resolve_tasks(["eicu-gcs"], tiny_db)
    res = CliRunner().invoke(app, ["run", "--db", str(tiny_db), "--out", str(tmp_path / "c"), "--tasks", "mimic-meld-24h",
                                   "--conditions", "no-skill,with-skill", "--agent", "reference", "--jobs", "2"])
    assert res.exit_code == 0, res.output
    assert "2 run(s) done (2 ok); 0 already recorded" in res.output


def test_matrix_ids_are_stable_and_builtins_ignore_models():
    from clinbench.campaign.matrix import split_list

    specs = expand(["a"], ["no-skill"], ["native"], ["llm", "reference"], split_list("gpt-x,org/model:7b"), 2)
    ids = [s.run_id for s in specs]
    assert len(ids) == 6 and len(set(ids)) == 6  # 2 models x 2 trials for llm, 2 trials for reference
    assert "a.no-skill.native.llm.gpt-x.t0" in ids
    slugged = next(i for i in ids if "org_model_7b" in i and i.split(".")[-2] == "t1")
    assert slugged == RunSpec("a", "no-skill", "native", "llm", "org/model:7b", 1).run_id  # deterministic
    assert split_list(["no-skill,with-skill", "with-skill"]) == ["no-skill", "with-skill"]


@pytest.mark.slow
def test_run_cli_refuses_an_llm_agent_without_a_model(tiny_db, tmp_path):
    res = __import__("subprocess").run(
        [__import__("sys").executable, "-m", "clinbench", "run", "--db", str(tiny_db), "--out", str(tmp_path / "c"),
         "--tasks", "mimic-meld-24h", "--agent", "llm"], capture_output=True, text=True)
    assert res.returncode == 2 and "error: the llm agent needs a model: pass --model NAME" in res.stderr
    assert not (tmp_path / "c").exists()


def _cli(*args):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "clinbench", *args], capture_output=True, text=True)


def test_run_cli_builds_the_missing_reference_and_refuses_empty_sources_before_recording_anything(tmp_path):
    # Runs recorded as errors are skipped on rerun: failing late would outlive the fix.
    import duckdb

    from clinbench.ehr.schema import create_empty

    db = tmp_path / "raw.duckdb"
    with duckdb.connect(str(db)) as con:
        create_empty(con, "mimic-iv")
    res = _cli("run", "--db", str(db), "--out", str(tmp_path / "c"), "--tasks", "mimic-sofa-24h", "--agent", "reference")
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    # said as the build starts (a full MIMIC-IV layer takes minutes: a log shows what is going on), then what it built
    assert lines[0] == f"building on demand what {db} lacks: 64 table(s) to check, unchanged ones skipped"
    assert lines[1].startswith(f"built on demand in {db} (") and lines[1].endswith(
        "): target_sofa_24h; 63 concept(s): the concept layer a standard task's agent sees, and what the references read")
    assert " ".join(lines[2:]).startswith(f"error: {db} cannot score mimic-sofa-24h: source tables mimiciv_hosp.labevents, ")
    assert not (tmp_path / "c").exists()


@pytest.mark.slow
def test_run_cli_refuses_condition_and_schema_typos_before_recording_anything(tiny_db, tmp_path):
    base = ("run", "--db", str(tiny_db), "--out", str(tmp_path / "c"), "--tasks", "mimic-meld-24h", "--agent", "reference")
    res = _cli(*base, "--conditions", "no-skill,with-skil")
    assert res.returncode == 2
    assert "error: unknown condition 'with-skil'; use one of no-skill, with-skill," in res.stderr
    res = _cli(*base, "--schema", "nativ")
    assert res.returncode == 2
    assert "error: unknown schema variant 'nativ'; use one of native, obfuscated, restructured" in res.stderr
    assert "Traceback" not in res.stderr and not (tmp_path / "c").exists()


@pytest.mark.slow
def test_run_cli_refuses_a_timeout_that_would_time_out_every_run(tiny_db, tmp_path):
    res = _cli("run", "--db", str(tiny_db), "--out", str(tmp_path / "c"), "--tasks", "mimic-meld-24h",
               "--agent", "reference", "--timeout", "-1")
    assert res.returncode == 2 and "Invalid value for '--timeout'" in res.stderr
    assert not (tmp_path / "c").exists()


@pytest.mark.slow
def test_run_cli_says_where_errors_are_and_how_to_redo_them(tiny_db, tmp_path):
    import json

    res = _cli("run", "--db", str(tiny_db), "--out", str(tmp_path / "c"), "--tasks", "mimic-meld-24h", "--agent", "command",
               "--agent-command", "false", "--unsafe-no-isolation")
    assert res.returncode == 0, res.stderr
    out = " ".join(res.stdout.split())
    assert "1 run(s) done (1 agent-failed)" in out
    assert "1 agent failure(s): no or unusable output, reward 0: 1 × false exited with status 1" in out
    assert "agent failures count as reward 0 and are kept" in out and "--retry-failed" not in out
    (score,) = (tmp_path / "c" / "runs").glob("*/score.json")
    assert json.loads(score.read_text())["run_error"]
    # --retry-failed redoes harness errors only: re-rolling the agent's own failure (and keeping its successes)
    # would lift its mean (a coin-flip agent redone until it wins); before, it redid this run
    args = ("run", "--db", str(tiny_db), "--out", str(tmp_path / "c"), "--tasks", "mimic-meld-24h", "--agent", "command",
            "--unsafe-no-isolation")
    again = _cli(*args, "--agent-command", "false", "--retry-failed")
    assert again.returncode == 0 and "0 run(s) done (nothing to do); 1 already recorded" in " ".join(again.stdout.split())
    # asked by name (the user fixed a setup fault): redone, and the new record replaces the old
    fixed = _cli(*args, "--agent-command", "false", "--retry-agent-failed")
    assert fixed.returncode == 0 and "1 run(s) done (1 agent-failed); 0 already recorded" in " ".join(fixed.stdout.split())


def test_a_run_whose_scoring_runs_out_of_memory_is_a_harness_error_not_a_score(tiny_db, tmp_path, monkeypatch):
    """DuckDB out of memory while scoring (here a real one: the scorer's DuckDB given 1 MB and no spill
    directory) is this machine's failure: the run is a harness error, not scored and retried by --retry-failed,
    never a reward of 0 for an answer that was not read."""
    fed = starve_scorer(monkeypatch)
    out = tmp_path / "camp"
    spec = RunSpec("mimic-sofa-24h", "no-skill", "native", "reference", "-", 0)
    summary = run_campaign([spec], CampaignConfig(db=str(tiny_db), out=str(out)))
    run = Store.open(out).runs()[0]
    assert summary.by_status == {"harness-error": 1} and run["reward"] is None
    assert run["error"].startswith("not scored: DuckDB ran out of memory (")
    assert run["error"].endswith("close other programs, or use a machine with more memory")
    assert json.loads((out / run["evidence_dir"] / "score.json").read_text())["reward"] is None

    fed()  # memory again: the retry scores it
    retried = run_campaign([spec], CampaignConfig(db=str(tiny_db), out=str(out)), retry_failed=True)
    assert retried.finished == 1 and Store.open(out).runs()[0]["reward"] == 1.0


def test_running_out_of_memory_while_rebuilding_or_recovering_a_store_scores_nothing_0(tiny_db, tmp_path, monkeypatch):
    """``store rebuild`` and a campaign's start (which records runs published but never recorded) rescore
    sealed outputs: out of memory there stops with the machine's error and writes nothing. Before, both caught
    it as an unreadable output: a correct run (reward 1) became agent-failed with reward 0, in the statistics."""
    from clinbench.campaign.rebuild import rebuild_store
    from clinbench.errors import ResourceError

    out = tmp_path / "camp"
    spec = RunSpec("mimic-sofa-24h", "no-skill", "native", "reference", "-", 0)
    run_campaign([spec], CampaignConfig(db=str(tiny_db), out=str(out)))
    store_bytes = (out / "results.duckdb").read_bytes()

    fed = starve_scorer(monkeypatch)
    with pytest.raises(ResourceError, match="^not scored: DuckDB ran out of memory"):
        rebuild_store(out)
    assert (out / "results.duckdb").read_bytes() == store_bytes and not (out / "results.duckdb.bak").exists()
    assert Store.open(out).runs()[0]["reward"] == 1.0

    with duckdb.connect(str(out / "results.duckdb")) as con:  # published, never recorded (killed in between)
        con.execute("DELETE FROM runs")
    with pytest.raises(ResourceError, match="^not scored: DuckDB ran out of memory"):
        run_campaign([spec], CampaignConfig(db=str(tiny_db), out=str(out)))
    assert Store.open(out).runs() == []
    fed()  # memory again: the start records it from its evidence, as it was, and redoes nothing
    assert run_campaign([spec], CampaignConfig(db=str(tiny_db), out=str(out))).finished == 0
    (run,) = Store.open(out).runs()
    assert run["status"] == "ok" and run["reward"] == 1.0
