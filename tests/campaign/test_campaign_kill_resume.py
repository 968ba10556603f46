"""A campaign killed with SIGKILL midway and rerun records every run exactly once, with the same scores."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from clinbench.agents.sandbox import bwrap_available
from clinbench.campaign.evidence import verify_manifest
from clinbench.records.store import Store
import pytest

pytestmark = pytest.mark.slow  # real processes and signals (or Ray, or the whole demo): minutes, not seconds

# Writes a half-right SOFA answer (one of two stays) or a fully right MELD answer, after a pause.
ANSWER = (
    "/bin/sh -c 'sleep 0.1; if grep -q SOFA prompt.md; then "
    "printf \"subject_id,hadm_id,stay_id,sofa,respiration,coagulation,liver,cardiovascular,cns,renal\\n1,10,100,5,1,0,2,1,1,0\\n\"; "
    "else printf \"subject_id,hadm_id,stay_id,meld\\n1,10,100,12\\n2,20,200,25\\n\"; fi > output.csv'"
)


def _cmd(db, out):
    cmd = [sys.executable, "-m", "clinbench", "run", "--db", str(db), "--out", str(out),
           "--tasks", "mimic-sofa-24h,mimic-meld-24h", "--conditions", "no-skill,with-skill",
           "--agent", "command,empty", "--trials", "3", "--jobs", "2", "--agent-command", ANSWER]
    if not bwrap_available():
        cmd.append("--unsafe-no-isolation")
    return cmd


def _scores(out):
    return {r["run_id"]: (r["status"], r["reward"], r["strict"]) for r in Store.open(out).runs()}


def test_sigkill_midway_then_rerun_records_each_run_once(tiny_db, tmp_path):
    env = {**os.environ, "CLINBENCH_CACHE": str(tmp_path / "cache")}
    killed = tmp_path / "killed"
    proc = subprocess.Popen(_cmd(tiny_db, killed), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        runs = killed / "runs"
        if runs.is_dir() and len(list(runs.iterdir())) >= 8:
            break
        time.sleep(0.05)
    assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = {r["run_id"]: r["finished_at"] for r in Store.open(killed).runs()}
    published = {p.name for p in (killed / "runs").iterdir()}
    # evidence is published just before the run is recorded: at most the run in hand is unrecorded
    assert 7 <= len(before) < 24 and len(published - set(before)) <= 1

    rerun = subprocess.run(_cmd(tiny_db, killed), env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    # a run published but not yet recorded when killed is recorded from its sealed evidence, not redone
    assert f"{len(published)} already recorded" in rerun.stdout.replace("\n", " ")
    after = Store.open(killed).runs()
    assert len(after) == 24 and len({r["run_id"] for r in after}) == 24
    # runs recorded before the kill were skipped, not redone
    assert all(r["finished_at"] == before[r["run_id"]] for r in after if r["run_id"] in before)
    assert sorted(p.name for p in (killed / "runs").iterdir()) == sorted(r["run_id"] for r in after)
    assert all(verify_manifest(killed / r["evidence_dir"]) == [] for r in after)
    assert not (killed / ".partial").exists() or not any((killed / ".partial").iterdir())

    clean = tmp_path / "clean"
    full = subprocess.run(_cmd(tiny_db, clean), env=env, capture_output=True, text=True, timeout=300)
    assert full.returncode == 0, full.stderr[-2000:]
    assert _scores(killed) == _scores(clean)
    rewards = {(rid.split(".")[0], rid.split(".")[3]): s[1] for rid, s in _scores(clean).items()}
    assert rewards[("mimic-sofa-24h", "command")] == 0.5 and rewards[("mimic-meld-24h", "command")] == 1.0
    assert rewards[("mimic-meld-24h", "empty")] == 0.0
