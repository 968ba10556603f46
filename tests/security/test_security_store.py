"""The store and evidence under an unlucky or dishonest operator (issue 28, items 11-14): an edited
manifest, a deleted store, a reader holding the store, a transcript the audit chokes on."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clinbench.agents.factory import AgentOptions
from clinbench.campaign.audit import audit_campaign
from clinbench.campaign.campaign import run_campaign
from clinbench.campaign.execute import CampaignConfig
from clinbench.campaign.matrix import RunSpec
from clinbench.records.store import Store

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
