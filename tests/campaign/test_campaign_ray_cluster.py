"""Ray across machines, simulated on one: a head and two worker nodes started as separate
`ray start` processes (each its own raylet and resources), the campaign folder shared. A worker
node killed while it runs a run: that run is retried on the other node or recorded as a harness
error, and the campaign goes on.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray is not installed: pip install 'clinbench[ray]' to run the Ray cluster test")

from clinbench.agents.factory import AgentOptions  # noqa: E402
from clinbench.campaign.campaign import run_campaign  # noqa: E402
from clinbench.campaign.execute import CampaignConfig  # noqa: E402
from clinbench.campaign.matrix import expand  # noqa: E402
from clinbench.records.store import Store  # noqa: E402

pytestmark = pytest.mark.slow  # real processes and signals (or Ray, or the whole demo): minutes, not seconds

RAY = str(Path(sys.executable).parent / "ray")
# health checks every 0.5 s, dead after 3 misses: a killed node is noticed in ~2 s, not ~15 s
ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled", "RAY_health_check_period_ms": "500",
       "RAY_health_check_timeout_ms": "500", "RAY_health_check_failure_threshold": "3"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def cluster(monkeypatch):
    if shutil.which(RAY) is None:
        pytest.skip(f"the ray command is not installed beside {sys.executable}")
    for k, v in ENV.items():
        monkeypatch.setenv(k, v)
    temp = tempfile.mkdtemp(prefix="rc-", dir="/tmp")  # short: raylet socket paths are limited
    port = _free_port()
    env = {**os.environ, **ENV}
    head = [RAY, "start", "--head", f"--port={port}", "--num-cpus=0", "--include-dashboard=false",
            "--disable-usage-stats", f"--temp-dir={temp}"]
    try:
        subprocess.run(head, env=env, check=True, capture_output=True, timeout=180)
        for name in ("a", "b"):
            subprocess.run([RAY, "start", f"--address=127.0.0.1:{port}", "--num-cpus=1",
                            f'--resources={{"node_{name}": 1}}'], env=env, check=True, capture_output=True, timeout=180)
    except subprocess.CalledProcessError as exc:
        _stop_cluster(temp)
        pytest.fail(f"ray start failed: {exc.stderr.decode()[-1500:]}")
    yield f"127.0.0.1:{port}"
    _stop_cluster(temp)
    shutil.rmtree(temp, ignore_errors=True)


def _stop_cluster(temp: str) -> None:
    """Kill this cluster's processes only: those naming its temp dir, and their children.

    Not ``ray stop --force``: that kills every Ray process on the machine, including the local
    Ray instance another test file runs at the same time (its worker then dies mid-test)."""
    own = {pid for pid, cmd in _processes().items() if temp.encode() in cmd}
    while True:
        more = {pid for pid in _processes() if pid not in own and _parent(pid) in own}
        if not more:
            break
        own |= more
    for pid in own:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and own & set(_processes()):
        time.sleep(0.1)


def _processes() -> dict[int, bytes]:
    found = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                if "Z" != (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]:
                    found[int(proc.name)] = (proc / "cmdline").read_bytes()
    return found


def _parent(pid: int) -> int | None:
    try:
        return _ppid(pid)
    except (OSError, ValueError, IndexError):
        return None


SLEEP = "2.37"  # a duration no other process on the machine sleeps for


def _ppid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _raylet_running(marker: list[str]) -> int | None:
    """The raylet above a process whose command line is ``marker`` (the run's agent, in its sandbox)."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if (proc / "cmdline").read_bytes().split(b"\0")[:-1] != [m.encode() for m in marker]:
                continue
            pid = int(proc.name)
            while pid > 1:
                pid = _ppid(pid)
                if b"raylet" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]:
                    return pid
        except (OSError, ValueError, IndexError):
            continue
    return None


def test_a_killed_worker_node_leaves_its_run_retried_or_a_harness_error(cluster, tiny_db, tmp_path):
    import ray

    command = (f"/bin/sh -c 'sleep {SLEEP}; "
               "printf \"subject_id,hadm_id,stay_id,meld\\n1,10,100,12\\n2,20,200,30\\n\" > output.csv'")
    specs = expand(["mimic-meld-24h"], ["no-skill"], ["native"], ["command"], [], 4)
    config = CampaignConfig(db=str(tiny_db), out=str(tmp_path / "camp"),
                            options=AgentOptions(agent_command=command, unsafe_no_isolation=True))
    killed: list[int] = []

    def kill_the_node_of_the_first_run():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not killed:
            raylet = _raylet_running(["sleep", SLEEP])
            if raylet is not None:
                os.kill(raylet, signal.SIGKILL)
                killed.append(raylet)
            time.sleep(0.05)

    killer = threading.Thread(target=kill_the_node_of_the_first_run, daemon=True)
    killer.start()
    t0 = time.monotonic()
    summary = run_campaign(specs, config, jobs=2, executor="ray", ray_address=cluster)
    elapsed = time.monotonic() - t0
    killer.join(timeout=5)
    runs = Store.open(tmp_path / "camp").runs()
    assert killed, [(r["status"], r["error"]) for r in runs]
    assert not ray.is_initialized()
    assert sorted(r["trial"] for r in runs) == [0, 1, 2, 3]  # every run recorded, once
    ok = [r for r in runs if r["status"] == "ok"]
    lost = [r for r in runs if r["status"] != "ok"]
    assert all(r["reward"] == 0.5 for r in ok) and len(ok) >= 3  # the other node kept working
    for r in lost:  # lost twice: a harness error saying so, not a 0 that counts
        assert r["status"] == "harness-error" and r["reward"] is None and "Ray worker lost" in r["error"]
    assert summary.finished == 4 and elapsed < 120
    print(f"\nkilled raylet {killed[0]}: {len(ok)} ok, {len(lost)} harness error(s), campaign {elapsed:.1f} s")


def test_a_run_whose_worker_dies_twice_is_a_harness_error_and_the_campaign_goes_on(tiny_db, tmp_path, monkeypatch):
    """On a local Ray instance: a runner that kills its own worker (as an OOM kill or a lost node
    would) is retried once, then recorded as a harness error; the other run is unaffected."""
    for k, v in ENV.items():
        monkeypatch.setenv(k, v)
    from clinbench.campaign.execute import execute_run

    def crash_the_first_trial(spec, config):
        if spec.trial == 0:
            os._exit(1)
        return execute_run(spec, config)

    specs = expand(["mimic-meld-24h"], ["no-skill"], ["native"], ["reference"], [], 2)
    config = CampaignConfig(db=str(tiny_db), out=str(tmp_path / "camp"), options=AgentOptions())
    summary = run_campaign(specs, config, jobs=2, executor="ray", runner=crash_the_first_trial)
    runs = {r["trial"]: r for r in Store.open(tmp_path / "camp").runs()}
    assert summary.finished == 2 and summary.by_status == {"harness-error": 1, "ok": 1}
    assert runs[1]["reward"] == 1.0
    assert runs[0]["status"] == "harness-error" and runs[0]["reward"] is None
    assert runs[0]["error"].startswith("Ray worker lost twice (WorkerCrashedError)")
