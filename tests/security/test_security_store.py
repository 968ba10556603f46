"""The store and evidence under an unlucky or dishonest operator (issue 28, items 11-14): an edited
manifest, a deleted store, a reader holding the store, a transcript the audit chokes on."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from clinbench.agents.factory import AgentOptions
from clinbench.campaign.audit import audit_campaign
from clinbench.campaign.campaign import CampaignError, Reporter, run_campaign
from clinbench.campaign.execute import CampaignConfig
from clinbench.campaign.matrix import RunSpec
from clinbench.records import store as records_store
from clinbench.records.store import Store, StoreError

from campaign.campaign_fixtures import build_tiny_db
from hostile_campaign import LIMITS, TASK, needs_bwrap

# a bwrap run whose output.csv is a second name of another workspace file: refused, reward 0
HARDLINK = "/bin/sh -c 'echo subject_id > answer.csv && ln answer.csv output.csv'"
SPECS = [RunSpec(TASK, "no-skill", "native", "reference", "-", 0), RunSpec(TASK, "no-skill", "native", "empty", "-", 0),
         RunSpec(TASK, "no-skill", "native", "command", "hardlink", 0)]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A sealed, audited campaign of three runs: the reference (1.0), the empty baseline (0.0) and a
    sandboxed run whose output was refused (0.0, flagged)."""
    tmp = tmp_path_factory.mktemp("store")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CLINBENCH_CACHE", str(tmp / "cache"))
        db = build_tiny_db(tmp / "source.duckdb")
        options = AgentOptions(agent_command=HARDLINK, sandbox="bwrap", sandbox_limits=LIMITS)
        out = tmp / "camp"
        run_campaign(SPECS, CampaignConfig(db=str(db), out=str(out), options=options, timeout_seconds=60))
        audit_campaign(out)
    return out, db


@pytest.fixture
def campaign(small, tmp_path):
    """A fresh copy of the small campaign to tamper with."""
    out, db = small
    return shutil.copytree(out, tmp_path / "camp"), db


def run_folder(out: Path, agent: str) -> Path:
    return next(p for p in (out / "runs").iterdir() if f".{agent}." in p.name)


def edit_manifest(folder: Path, **record) -> None:
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["record"].update(record)
    if "output_refused" in record:
        manifest["output_refused"] = record.pop("output_refused")
        manifest["record"].pop("output_refused")
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))


def forge_seals(out: Path) -> None:
    """Rewrite the whole seal chain over the manifests as they now are (no secret stops this)."""
    lines, previous = [], None
    for folder in sorted((out / "runs").iterdir()):
        digest = hashlib.sha256((folder / "manifest.json").read_bytes()).hexdigest()
        line = json.dumps({"run_id": folder.name, "manifest_sha256": digest,
                           "prev": hashlib.sha256(previous).hexdigest() if previous else None}, sort_keys=True).encode()
        lines.append(line)
        previous = line
    (out / "seals.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clinbench", *args], capture_output=True, text=True)


def publishable_rewards(out: Path) -> dict[str, float]:
    return {r["agent"]: r["reward"] for r in Store.open(out).runs() if r["publishable"]}


@needs_bwrap
@pytest.mark.slow
def test_an_edited_manifest_does_not_rebuild_into_a_publishable_score(campaign):
    # before: raising the empty run's reward to 1 (or clearing the refused run's output_refused) in
    # manifest.json alone, then `store rebuild` and `audit`, gave a publishable 1.0
    out, _ = campaign
    assert publishable_rewards(out) == {"reference": 1.0, "empty": 0.0}
    edit_manifest(run_folder(out, "empty"), reward=1.0, strict=True, key_f1=1.0)
    edit_manifest(run_folder(out, "command"), reward=1.0, status="ok", error=None, output_refused=None)
    (out / "results.duckdb").unlink()
    res = cli("store", "rebuild", str(out))
    assert res.returncode == 0, res.stderr
    for agent in ("empty", "command"):
        assert f"{run_folder(out, agent).name}: evidence changed since the run: manifest.json (changed since it was sealed)" in res.stdout
    assert cli("audit", str(out)).returncode in (0, 1)
    assert publishable_rewards(out) == {"reference": 1.0}


@needs_bwrap
def test_the_audit_flags_an_edited_manifest_in_an_intact_store(campaign):
    out, _ = campaign
    edit_manifest(run_folder(out, "command"), output_refused=None)
    verdicts = {v.run_id: v.reasons for v in audit_campaign(out)}
    assert "evidence changed since the run: manifest.json (changed since it was sealed)" in verdicts[run_folder(out, "command").name]


@needs_bwrap
@pytest.mark.slow
def test_rebuild_recomputes_each_score_from_the_sealed_output_even_when_the_seals_are_forged(campaign):
    out, _ = campaign
    edit_manifest(run_folder(out, "empty"), reward=1.0, strict=True, key_f1=1.0)
    edit_manifest(run_folder(out, "command"), reward=1.0, status="ok", error=None, output_refused=None)
    forge_seals(out)
    (out / "results.duckdb").unlink()
    res = cli("store", "rebuild", str(out))
    assert res.returncode == 0 and "rebuilt" in res.stdout and "left out" not in res.stdout, res.stdout + res.stderr
    rewards = {r["agent"]: (r["reward"], r["status"]) for r in Store.open(out).runs()}
    # the scores come from output.csv (header only; none at all for the refused run), not the manifest
    assert rewards == {"reference": (1.0, "ok"), "empty": (0.0, "ok"), "command": (0.0, "agent-failed")}


# item 14: a reader holding results.duckdb while a campaign records
HOLD = "import duckdb, sys, time\ncon = duckdb.connect(sys.argv[1], read_only=True)\nprint('held', flush=True)\ntime.sleep(float(sys.argv[2]))\n"


def hold_store(path: Path, seconds: float) -> subprocess.Popen:
    """Another process with the store open (a duckdb shell, a notebook): returns once it holds it."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


class Holding(Reporter):
    """Once the first run is recorded, another process holds the store for 3 s."""

    def __init__(self, path: Path):
        self.path, self.holder, self.messages = path, None, []

    def finished(self, record) -> None:
        if self.holder is None:
            self.holder = hold_store(self.path, 3)

    def waiting(self, message: str) -> None:
        self.messages.append(message)


@pytest.mark.slow
def test_a_reader_holding_the_store_past_the_wait_limit_loses_no_run(tmp_path, monkeypatch):
    # before (with the limit at 1 s here, 30 s by default): the campaign stopped with rc 2 and
    # "corrupt ... store rebuild", killing the runs in flight; the finished run was never recorded
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(records_store, "LOCK_WAIT_SECONDS", 1.0)
    db = build_tiny_db(tmp_path / "source.duckdb")
    out = tmp_path / "camp"
    specs = [RunSpec(TASK, "no-skill", "native", agent, "-", 0) for agent in ("reference", "empty")]
    specs.append(RunSpec("mimic-meld-24h", "no-skill", "native", "reference", "-", 0))
    reporter = Holding(out / "results.duckdb")
    summary = run_campaign(specs, CampaignConfig(db=str(db), out=str(out)), reporter=reporter)
    reporter.holder.wait()
    assert summary.finished == 3 and Store.open(out).count() == 3
    assert any("locked by another process" in m and f"PID {reporter.holder.pid}" in m for m in reporter.messages), reporter.messages


@needs_bwrap
@pytest.mark.slow
def test_a_command_that_cannot_wait_longer_says_the_store_is_locked_not_corrupt(small, monkeypatch):
    out, _ = small
    monkeypatch.setattr(records_store, "LOCK_WAIT_SECONDS", 0.5)
    holder = subprocess.Popen([sys.executable, "-c", HOLD.replace("read_only=True", "read_only=False"),
                               str(out / "results.duckdb"), "3"], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    with pytest.raises(StoreError) as caught:
        Store.open(out).runs()
    holder.wait()
    message = str(caught.value)
    assert "locked by another process" in message and f"PID {holder.pid}" in message
    assert "rebuild" not in message and "corrupt" not in message


# item 13: evidence without a store
@needs_bwrap
def test_a_deleted_store_is_not_silently_replaced_by_redoing_every_run(campaign):
    # before: `run` redid all the runs and replaced their intact sealed evidence
    out, db = campaign
    sealed = {p.name: (p / "manifest.json").read_bytes() for p in (out / "runs").iterdir()}
    (out / "results.duckdb").unlink()
    with pytest.raises(CampaignError, match=r"holds the evidence of 3 runs but no results store .*"
                                            r"`clinbench store rebuild .*`.*nothing was run"):
        run_campaign(SPECS, CampaignConfig(db=str(db), out=str(out),
                                           options=AgentOptions(agent_command=HARDLINK, sandbox="bwrap")))
    assert {p.name: (p / "manifest.json").read_bytes() for p in (out / "runs").iterdir()} == sealed
    assert not (out / "results.duckdb").exists()


# item 11: one run the audit cannot read does not stop it auditing the others
PRINTER = """#!/bin/sh
echo '{"type": "assistant", "message": "not an object"}'
echo '{"type": "assistant", "message": {"content": [1, "two", null]}}'
echo '{"type": "item.completed", "item": ["x"]}'
python3 -c "print('[' * 20000 + ']' * 20000)"
"""


@needs_bwrap
@pytest.mark.slow
def test_the_audit_flags_every_run_it_cannot_audit_and_still_audits_the_others(campaign, tmp_path, monkeypatch):
    # before: one transcript line of an unexpected shape (or one unreadable manifest) raised out of
    # `audit`, so a tampered run in the same campaign stayed unflagged
    out, db = campaign
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    printer = tmp_path / "tools" / "printer.sh"
    printer.parent.mkdir()
    printer.write_text(PRINTER)
    printer.chmod(0o755)
    run_campaign([RunSpec(TASK, "no-skill", "native", "command", "printer", 0)],
                 CampaignConfig(db=str(db), out=str(out), options=AgentOptions(agent_command=str(printer), sandbox="bwrap",
                                                                            sandbox_limits=LIMITS)))
    tampered = run_folder(out, "empty")
    (tampered / "output.csv").write_text((run_folder(out, "reference") / "output.csv").read_text())
    unreadable = run_folder(out, "command.hardlink")
    (unreadable / "manifest.json").write_text("{")
    verdicts = {v.run_id: v.reasons for v in audit_campaign(out)}
    assert "evidence changed since the run: output.csv" in verdicts[tampered.name]
    assert any(r.startswith("audit failed: ") for r in verdicts[unreadable.name]), verdicts[unreadable.name]
    assert verdicts[run_folder(out, "printer").name] == [] and verdicts[run_folder(out, "reference").name] == []
    stored = {r["run_id"]: r["publishable"] for r in Store.open(out).runs()}
    assert stored[tampered.name] is False and stored[unreadable.name] is False


@needs_bwrap
@pytest.mark.slow
def test_a_run_published_but_never_recorded_is_kept_not_redone(campaign):
    # before: a campaign stopped between publishing a run and recording it (Ctrl-C while another
    # process held the store, or a kill) redid that run on the next `run`, over its sealed evidence
    out, db = campaign
    folder = run_folder(out, "empty")
    sealed = (folder / "manifest.json").read_bytes()
    with duckdb.connect(str(out / "results.duckdb")) as con:
        for table in ("runs", "column_scores", "usage"):
            con.execute(f"DELETE FROM {table} WHERE run_id = ?", [folder.name])
    options = AgentOptions(agent_command=HARDLINK, sandbox="bwrap", sandbox_limits=LIMITS)
    summary = run_campaign(SPECS, CampaignConfig(db=str(db), out=str(out), options=options, timeout_seconds=60))
    assert (summary.finished, summary.skipped) == (0, 3)
    assert (folder / "manifest.json").read_bytes() == sealed
    assert Store.open(out).get(folder.name)["reward"] == 0.0
