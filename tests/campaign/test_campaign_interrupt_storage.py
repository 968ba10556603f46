"""Ctrl-C stops a campaign in seconds and a rerun resumes; a full disk is one line; a store rebuilds from evidence."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from clinbench.records.store import Store

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)

TASKS = "mimic-sofa-24h,mimic-meld-24h"


def _slow_agent(folder: Path) -> Path:
    """An agent script that sleeps while ``slow`` exists beside it (its folder is mounted for it with
    --agent-mount), then writes a right MELD answer."""
    folder.mkdir()
    script = folder / "slow-agent"
    script.write_text(f"#!/bin/sh\nwhile [ -f {folder / 'slow'} ]; do sleep 0.2; done\n"
                      "printf 'subject_id,hadm_id,stay_id,meld\\n1,10,100,12\\n2,20,200,25\\n' > output.csv\n")
    script.chmod(0o755)
    (folder / "slow").touch()
    return script


def _run_cmd(db, out, script):
    from clinbench.agents.sandbox import bwrap_available

    cmd = [sys.executable, "-m", "clinbench", "run", "--db", str(db), "--out", str(out), "--tasks", TASKS,
           "--agent", "reference,command", "--jobs", "2", "--agent-command", str(script),
           "--agent-mount", str(script.parent)]
    return cmd if bwrap_available() else cmd + ["--unsafe-no-isolation"]


def _alive_agents(script: Path) -> list[int]:
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if str(script).encode() in (proc / "cmdline").read_bytes():
                    pids.append(int(proc.name))
            except OSError:
                continue
    return pids


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_at_jobs_2_stops_in_seconds_and_a_rerun_resumes(how, tiny_db, tmp_path):
    out, script = tmp_path / "c", _slow_agent(tmp_path / "agent")
    env = {**os.environ, "CLINBENCH_CACHE": str(tmp_path / "cache")}
    proc = subprocess.Popen(_run_cmd(tiny_db, out, script), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    # both reference runs recorded, and both slow command runs in flight
    while time.monotonic() < deadline and not (
            (out / "runs").is_dir() and len(list((out / "runs").iterdir())) == 2 and len(_alive_agents(script)) >= 2):
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    time.sleep(0.5)
    started = time.monotonic()
    if how == "ctrl-c":
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole foreground group
    else:
        os.kill(proc.pid, signal.SIGTERM)  # `kill PID`: the campaign process only
    stdout, stderr = proc.communicate(timeout=30)
    seconds = time.monotonic() - started
    assert proc.returncode == 130, stderr
    print(f"{how}: exited {proc.returncode} in {seconds:.2f} s")
    assert seconds < 3, seconds
    assert "interrupted: 2 runs recorded; rerun the same command to resume" in stderr
    assert "Traceback" not in stderr + stdout
    assert _alive_agents(script) == []  # the in-flight agents were stopped, not orphaned
    assert sorted(r["agent"] for r in Store.open(out).runs()) == ["reference", "reference"]

    (script.parent / "slow").unlink()
    rerun = subprocess.run(_run_cmd(tiny_db, out, script), env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert "2 run(s) done" in rerun.stdout and "2 already recorded" in " ".join(rerun.stdout.split())
    rewards = {(r["task"], r["agent"]): r["reward"] for r in Store.open(out).runs()}
    assert rewards == {("mimic-meld-24h", "command"): 1.0, ("mimic-meld-24h", "reference"): 1.0,
                       ("mimic-sofa-24h", "command"): 0.0, ("mimic-sofa-24h", "reference"): 1.0}


def test_a_full_disk_under_out_is_one_line(tiny_db, tmpfs, tmp_path):
    tiny_tmpfs = tmpfs("small", "size=1m")
    env = {**os.environ, "CLINBENCH_CACHE": str(tmp_path / "cache")}
    res = subprocess.run([sys.executable, "-m", "clinbench", "run", "--db", str(tiny_db), "--out", str(tiny_tmpfs / "c"),
                          "--tasks", TASKS, "--agent", "reference", "--trials", "3"],
                         env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(f"error: disk full: no space left on the device holding {tiny_tmpfs / 'c'}")
    assert errors[0].endswith("; free space (or choose another location) and retry")


def test_a_read_only_out_is_one_line(tiny_db, tmp_path):
    if os.geteuid() == 0:
        ro = tmp_path / "ro"
        ro.mkdir()
        res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,ro", "tmpfs", str(ro)], capture_output=True)
        if res.returncode != 0:
            pytest.skip("cannot mount a read-only tmpfs here")
    else:
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o555)
    try:
        res = subprocess.run([sys.executable, "-m", "clinbench", "run", "--db", str(tiny_db), "--out", str(ro / "c"),
                              "--tasks", "mimic-meld-24h", "--agent", "reference"], capture_output=True, text=True,
                             timeout=300)
    finally:
        subprocess.run(["umount", "-l", str(ro)], capture_output=True)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.strip() == (f"error: cannot write {ro / 'c'}: the location is read-only or not writable by you; "
                                  "choose a writable location")


def test_store_rebuilt_from_evidence_equals_the_original_and_a_corrupt_store_points_to_it(tiny_db, tmp_path):
    out = tmp_path / "c"
    run = subprocess.run([sys.executable, "-m", "clinbench", "run", "--db", str(tiny_db), "--out", str(out),
                          "--tasks", TASKS, "--conditions", "no-skill,with-skill", "--agent", "reference,empty",
                          "--jobs", "2"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr

    def dump(path):
        with duckdb.connect(str(path), read_only=True) as con:
            return {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall()
                    for t in ("runs", "column_scores", "usage")} | {
                "binding": con.execute("SELECT name, fingerprint, db FROM data_binding ORDER BY ALL").fetchall()}

    original = dump(out / "results.duckdb")
    assert len(original["runs"]) == 8 and original["column_scores"] and original["binding"]

    size = (out / "results.duckdb").stat().st_size
    with open(out / "results.duckdb", "r+b") as fh:  # damage every data block (the headers stay intact)
        fh.seek(12288)
        fh.write(b"\xff" * (size - 12288))
    for args in (["rescore", str(out)], ["run", "--db", str(tiny_db), "--out", str(out), "--tasks", "mimic-meld-24h",
                                        "--agent", "reference"]):
        res = subprocess.run([sys.executable, "-m", "clinbench", *args], capture_output=True, text=True, timeout=300)
        assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
        assert f"clinbench store rebuild {out}" in " ".join(res.stderr.split())

    res = subprocess.run([sys.executable, "-m", "clinbench", "store", "rebuild", str(out)], capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "8 run(s) from their evidence" in res.stdout and (out / "results.duckdb.bak").is_file()
    assert dump(out / "results.duckdb") == original

    # a tampered evidence folder is left out and named
    victim = sorted((out / "runs").iterdir())[0]
    (victim / "score.json").write_text("{}")
    res = subprocess.run([sys.executable, "-m", "clinbench", "store", "rebuild", str(out)], capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0 and "7 run(s)" in res.stdout
    assert f"left out: {victim.name}: evidence changed since the run: score.json" in " ".join(res.stdout.split())
