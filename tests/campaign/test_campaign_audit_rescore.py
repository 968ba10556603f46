"""Audit flags leaks, copies and outside writes; rescore reproduces or updates scores from evidence."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import duckdb
import pytest
from typer.testing import CliRunner

from clinbench.agents import sandbox as sb
from clinbench.agents.factory import AgentOptions
from tests.agents.scripted_server import ScriptedServer
from clinbench.campaign.audit import agent_authored_text, audit_campaign, outside_writes
from clinbench.campaign.campaign import run_campaign
from clinbench.campaign.evidence import verify_manifest
from clinbench.campaign.execute import CampaignConfig
from clinbench.campaign.matrix import RunSpec
from clinbench.campaign.rescore import rescore_campaign
from clinbench.records.store import Store
from clinbench.cli import app
from clinbench.errors import SandboxError

from agents.standins import install_standins
from campaign_fixtures import build_tiny_db
from test_campaign_runs import SOFA_SQL

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)

GOOD = SOFA_SQL.replace("v.*", "v.* EXCLUDE (sid)")


WRITE_SOFA = "printf 'subject_id,hadm_id,stay_id,sofa,respiration,coagulation,liver,cardiovascular,cns,renal\\n' > output.csv"


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    with pytest.MonkeyPatch.context() as monkeypatch:
        return _make_campaign(tmp_path_factory.mktemp("audit"), monkeypatch)


def _make_campaign(tmp_path, monkeypatch):
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    tiny_db = build_tiny_db(tmp_path / "tiny.duckdb")
    out = tmp_path / "camp"
    monkeypatch.setenv("PATH", f"{install_standins(tmp_path / 'bin')}:{__import__('os').environ['PATH']}")
    script = [
        {"tool": "write_output", "arguments": {"sql": GOOD}}, {"text": "a"},          # trial 0
        {"tool": "write_output", "arguments": {"sql": GOOD}}, {"text": "b"},          # trial 1: same bytes
        {"tool": "run_sql", "arguments": {"sql": "SELECT * FROM mimiciv_derived.target_sofa_24h"}},  # trial 2: peeks
        {"tool": "write_output", "arguments": {"sql": GOOD + " WHERE i.stay_id = 100"}}, {"text": "c"},
    ]
    with ScriptedServer(script) as srv:
        config = CampaignConfig(db=str(tiny_db), out=str(out), options=AgentOptions(base_url=srv.base_url))
        run_campaign([RunSpec("mimic-sofa-24h", "no-skill", "native", "llm", "m", t) for t in range(3)], config)
    with ScriptedServer([{"shell": f"echo x > /etc/clinbench-escape; {WRITE_SOFA}"}, {"text": "done"}], skip_toolless=True) as srv:
        options = AgentOptions(base_url=srv.base_url, unsafe_no_isolation=True)
        run_campaign([RunSpec("mimic-sofa-24h", "no-skill", "native", "codex", "gpt-5.5", 0)],
                     CampaignConfig(db=str(tiny_db), out=str(out), options=options))
    monkeypatch.setattr(sb, "docker_available", lambda: False)
    monkeypatch.setattr(sb, "bwrap_available", lambda: False)
    cmd = AgentOptions(agent_command="/bin/sh -c 'echo a,b > output.csv'", unsafe_no_isolation=True)
    run_campaign([RunSpec("mimic-sofa-24h", "no-skill", "native", "command", "-", 0),
                  RunSpec("mimic-sofa-24h", "no-skill", "native", "empty", "-", 0)],
                 CampaignConfig(db=str(tiny_db), out=str(out), options=cmd))
    # unisolated, a program can read the campaign's folder: this one copies the llm agent's first output
    copier = AgentOptions(agent_command=f"cp {out}/runs/mimic-sofa-24h.no-skill.native.llm.m.t0/output.csv output.csv",
                          unsafe_no_isolation=True)
    run_campaign([RunSpec("mimic-sofa-24h", "no-skill", "native", "command", "-", 1)],
                 CampaignConfig(db=str(tiny_db), out=str(out), options=copier))
    return out


def test_audit_flags_each_kind_of_problem_and_spares_clean_runs(campaign):
    verdicts = {v.run_id.split(".")[3] + v.run_id.split(".")[-1]: v for v in audit_campaign(campaign)}
    # two in-process llm runs that wrote the same right answer: neither could read the other's folder
    assert verdicts["llmt0"].publishable and verdicts["llmt1"].publishable
    assert verdicts["llmt2"].reasons == ["transcript mentions target_sofa_24h"] and verdicts["llmt2"].charged
    assert verdicts["codext0"].reasons == ["writes outside the workspace: /etc/clinbench-escape"]
    assert verdicts["codext0"].charged
    assert verdicts["commandt0"].reasons == ["not isolated (--unsafe-no-isolation)"] and not verdicts["commandt0"].charged
    # the unisolated program that copied llm t0's output: flagged for it, left out (which of two unisolated runs
    # copied cannot be told, and two honest ones write the same right answer); llm t0 is not flagged
    assert verdicts["commandt1"].reasons == ["not isolated (--unsafe-no-isolation)",
                                             "output.csv byte-identical to mimic-sofa-24h.no-skill.native.llm.m.t0, "
                                             "mimic-sofa-24h.no-skill.native.llm.m.t1"]
    assert not verdicts["commandt1"].charged
    assert verdicts["emptyt0"].publishable
    stored = {r["run_id"]: r for r in Store.open(campaign).runs()}
    assert sum(r["publishable"] for r in stored.values()) == 3
    assert {r["run_id"].split(".")[3] + r["run_id"].split(".")[-1] for r in stored.values() if r["flag_charged"]} == {
        "llmt2", "codext0"}
    codex = stored[verdicts["codext0"].run_id]
    if codex["isolated"]:  # the endpoint was reached through the per-run egress proxy
        assert (campaign / codex["evidence_dir"] / "egress.jsonl").read_text().count('"allowed": true') == 2
    assert sorted(r["agent"] for r in Store.open(campaign).runs(publishable_only=True)) == ["empty", "llm", "llm"]


@pytest.mark.slow
def test_audit_cli_prints_the_flagged_runs(campaign):
    res = subprocess.run([sys.executable, "-m", "clinbench", "audit", str(campaign)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "4 of 7 runs flagged" in res.stdout


@pytest.mark.slow
def test_tampered_evidence_is_flagged(campaign, tmp_path):
    campaign = shutil.copytree(campaign, tmp_path / "copy")
    run = Store.open(campaign).runs(benchmark="derive")[0]
    (campaign / run["evidence_dir"] / "output.csv").write_text("stay_id\n999\n")
    verdict = next(v for v in audit_campaign(campaign) if v.run_id == run["run_id"])
    assert any("evidence changed since the run: output.csv" in r for r in verdict.reasons)


@pytest.mark.slow
def test_rescore_reproduces_then_follows_a_changed_reference(campaign, tmp_path):
    original_db = campaign.parent / "tiny.duckdb"
    campaign = shutil.copytree(campaign, tmp_path / "copy")
    before = {r["run_id"]: r["reward"] for r in Store.open(campaign).runs()}
    assert sorted(before.values()) == [0.0, 0.0, 0.0, 0.5, 1.0, 1.0, 1.0]
    sealed = {rid: (campaign / "runs" / rid / "manifest.json").read_bytes() for rid in before}
    assert not any(r.changed for r in rescore_campaign(campaign))
    assert {rid: (campaign / "runs" / rid / "manifest.json").read_bytes() for rid in before} == sealed  # left as sealed
    changed_db = shutil.copyfile(original_db, tmp_path / "changed.duckdb")
    con = duckdb.connect(str(changed_db))
    con.execute("UPDATE mimiciv_derived.target_sofa_24h SET renal = 4 WHERE stay_id = 200")
    con.close()
    refused = subprocess.run([sys.executable, "-m", "clinbench", "rescore", str(campaign), "--db", str(changed_db)],
                             capture_output=True, text=True)
    assert refused.returncode == 2 and "is bound to other data" in refused.stderr  # other data needs --new-data
    # a database without the reference is said to lack it (before: 'pass --new-data', which then asked for a build)
    bare = shutil.copyfile(original_db, tmp_path / "bare.duckdb")
    with duckdb.connect(str(bare)) as con:
        con.execute("DROP TABLE mimiciv_derived.target_sofa_24h")
    for extra in ([], ["--new-data"]):
        lacking = subprocess.run([sys.executable, "-m", "clinbench", "rescore", str(campaign), "--db", str(bare), *extra],
                                 capture_output=True, text=True)
        assert lacking.returncode == 2 and lacking.stderr.strip() == (
            f"error: reference table mimiciv_derived.target_sofa_24h is not in {bare}; run `clinbench concepts build "
            f"{bare} --only mimic-sofa-24h`"), lacking.stderr
    res = subprocess.run([sys.executable, "-m", "clinbench", "rescore", str(campaign), "--db", str(changed_db), "--new-data"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "3 changed" in res.stdout
    assert all(r["rescored_against"].startswith(str(changed_db)) for r in Store.open(campaign).runs())
    after = {r["run_id"]: r["reward"] for r in Store.open(campaign).runs()}
    full = [rid for rid, v in before.items() if v == 1.0]
    # 7 scored columns; renal of stay 200 now mismatches: (7*2 - 1) / 14
    assert all(after[rid] == pytest.approx(13 / 14) for rid in full)
    for rid in full:
        folder = campaign / "runs" / rid
        assert json.loads((folder / "score.json").read_text())["reward"] == pytest.approx(13 / 14)
        assert verify_manifest(folder) == []
        old, new = (json.loads(m)["files"] for m in (sealed[rid], (folder / "manifest.json").read_bytes()))
        assert {k: v for k, v in old.items() if k != "score.json"} == {k: v for k, v in new.items() if k != "score.json"}


def test_transcript_text_and_write_detection(tmp_path):
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(json.dumps(e) for e in [
        {"type": "item.completed", "item": {"type": "command_execution", "command": "/bin/bash -lc \"cat > /root/x\"", "aggregated_output": "SECRET RESULT"}},
        {"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "ls /data"}}]}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "content": "skill text naming first_day_sofa"}]}},
        {"type": "assistant", "text": "thinking", "tool_calls": [{"name": "run_sql", "arguments": {"sql": "select 1"}}]},
        {"type": "tool_result", "content": "tool output"},
    ]))
    text = agent_authored_text(transcript)
    assert "cat > /root/x" in text and "ls /data" in text and "select 1" in text and "thinking" in text
    assert "SECRET RESULT" not in text and "first_day_sofa" not in text and "tool output" not in text
    assert outside_writes("cat x > /etc/passwd; echo ok > /workspace/output.csv; cp a /root/b") == ["/etc/passwd", "/root/b"]
    assert outside_writes("echo > /dev/null; tee /tmp/x") == []
    assert outside_writes("COPY t TO '/workspace/o.csv'; COPY (SELECT 1)\n TO '/etc/x'; SELECT 1 TO '/etc/q'") == ["/etc/x"]


def test_the_audit_reads_a_hostile_transcript_in_one_pass():
    """An agent's one long line: its skill-file and COPY ... TO patterns rescanned the rest of the text from every
    position, so `serve`'s run page and `clinbench audit` spun for minutes (5 MB of 'A'; 140 kB of 'COPY x ' took
    27 s). Each now finishes in a fraction of a second; the subprocess's timeout bounds a hang, it times nothing
    (a regex holds the interpreter: a thread could not be given up on)."""
    code = (
        "from clinbench.campaign.audit import outside_writes\n"
        "from clinbench.campaign.skill_use import skills_opened\n"
        "texts = ['A' * 1_000_000, 'COPY x ' * 150_000, '-A' * 500_000, \"TO '/a' \" * 100_000]\n"
        "print(all(not outside_writes(t) and skills_opened(t, {'sofa'}) == () for t in texts))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "True", done.stderr


def test_run_refuses_external_agent_without_sandbox(monkeypatch, tiny_db, tmp_path):
    monkeypatch.setattr(sb, "docker_available", lambda: False)
    monkeypatch.setattr(sb, "bwrap_available", lambda: False)
    result = CliRunner().invoke(app, ["run", "--db", str(tiny_db), "--out", str(tmp_path / "c"), "--tasks", "mimic-sofa-24h",
                                      "--agent", "command", "--agent-command", "/bin/true"])
    assert isinstance(result.exception, SandboxError) and "--unsafe-no-isolation" in str(result.exception)
    assert not (tmp_path / "c" / "results.duckdb").exists()


def test_a_seal_chain_read_again_after_it_grew_still_catches_an_earlier_line_rewritten(tmp_path):
    from clinbench.campaign import evidence

    def run(name: str) -> Path:
        folder = tmp_path / "runs" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / evidence.MANIFEST).write_text(json.dumps({"run": name}))
        return folder

    for name in ("a", "b"):
        evidence.seal_manifest(run(name), tmp_path, name)
    assert set(evidence.read_seals(tmp_path)[0]) == {"a", "b"}
    evidence.seal_manifest(run("c"), tmp_path, "c", sync=False)  # grown: read on from where it was left
    sealed, broken = evidence.read_seals(tmp_path)
    assert set(sealed) == {"a", "b", "c"} and broken is None
    chain = tmp_path / evidence.SEALS
    lines = chain.read_bytes().splitlines(keepends=True)
    forged = lines[0].replace(b'"a"', b'"x"')  # same length: only the bytes of line 1 change
    chain.write_bytes(forged + b"".join(lines[1:]))
    evidence.seal_manifest(run("d"), tmp_path, "d")
    sealed, broken = evidence.read_seals(tmp_path)
    assert broken == f"manifest not sealed: {evidence.SEALS} is broken at line 2" and set(sealed) == {"x"}
