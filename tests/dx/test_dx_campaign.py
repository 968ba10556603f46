"""A diagnosis campaign runs on the one campaign engine: kill -9 and Ctrl-C resume with every
encounter recorded once, Ctrl-C says what `run` says, an endpoint that is down is refused before
anything is recorded (or, mid-run, is a harness error with its reason), the Ray executor runs it,
and its store rebuilds from the evidence."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from clinbench.agents.llm_clients import RetryPolicy
from clinbench.campaign.campaign import CampaignInterrupted
from clinbench.campaign.rebuild import rebuild_store
from clinbench.dx.cases import demo_cases
from clinbench.dx.models import RoleSpec
from clinbench.dx.run import DxConfig, run_dx
from clinbench.records import STORE_FILE
from clinbench.records.store import Store
from tests.conftest import warm_dx_cache

VOLATILE = {"elapsed_seconds", "finished_at"}


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens there once the socket is closed


def _dx(*args: str) -> list[str]:
    return [sys.executable, "-m", "clinbench", "dx", "run", *args]


def _wait_for_runs(proc: subprocess.Popen, runs, n: int) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if runs.is_dir() and len(list(runs.iterdir())) >= n:
            return
        time.sleep(0.05)
    pytest.fail(f"dx run ended or stalled before {n} runs: {proc.stderr.read().decode()[-1500:]}")


@pytest.mark.slow
def test_kill_9_then_ctrl_c_then_rerun_records_every_encounter_once(tmp_path):
    """Real signals to a real `dx run` process (the only way to show it): SIGKILL after 2 runs,
    SIGINT after 4 (exit 130, the same message as `run`), then a plain rerun finishes the rest."""
    out = tmp_path / "c"
    cmd = _dx("--agent", "oracle", "--max-cases", "6", "--trials", "2", "--out", str(out))  # 12 encounters
    env = {**os.environ, "CLINBENCH_CACHE": str(warm_dx_cache(tmp_path / "cache"))}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _wait_for_runs(proc, out / "runs", 2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    killed = Store.open(out).run_ids()
    assert 1 <= len(killed) < 12

    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _wait_for_runs(proc, out / "runs", len(killed) + 2)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr.decode()[-1500:]
    assert "runs recorded; rerun the same command to resume" in stderr.decode() and "Traceback" not in stderr.decode()
    interrupted = Store.open(out).runs()
    assert {r["run_id"] for r in interrupted} >= killed and len(interrupted) < 12

    rerun = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-1500:]
    assert f"{len(interrupted)} already recorded" in " ".join(rerun.stdout.split())
    runs = Store.open(out).runs()
    assert len(runs) == 12 and len({r["run_id"] for r in runs}) == 12
    before = {r["run_id"]: r["finished_at"] for r in interrupted}
    assert all(r["finished_at"] == before[r["run_id"]] for r in runs if r["run_id"] in before)  # skipped, not redone
    assert sorted(p.name for p in (out / "runs").iterdir()) == sorted(r["run_id"] for r in runs)
    assert (out / "versions.json").is_file() and not any((out / ".partial").glob("*"))


@pytest.mark.slow
def test_an_endpoint_not_listening_is_refused_before_anything_is_recorded(tmp_path):
    res = subprocess.run(_dx("--agent", "baseline", "--agent-model", "m", "--agent-base-url", _closed_port_url(),
                             "--agent-api-key", "k", "--max-cases", "1", "--out", str(tmp_path / "c")),
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "endpoint check failed for the agent" in res.stderr
    assert "nothing was run" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "c" / STORE_FILE).exists()


@pytest.mark.slow
def test_an_endpoint_lost_mid_run_is_a_harness_error_with_its_reason(tmp_path, monkeypatch):
    monkeypatch.setattr(RetryPolicy, "sleep", lambda self, seconds: None)  # the retries' waits are not the fact
    cfg = DxConfig(agent="baseline", roles={"agent": RoleSpec("agent", "m", base_url=_closed_port_url(), api_key="k")})
    (rec,) = run_dx(demo_cases()[:1], cfg, tmp_path / "c")
    assert rec.status == "harness-error" and rec.reward is None
    assert rec.error.startswith("harness error: agent model endpoint unreachable:") and "connection failed" in rec.error


@pytest.mark.slow
def test_ray_executor_runs_a_dx_campaign_and_the_store_rebuilds_from_evidence(tmp_path):
    pytest.importorskip("ray", reason="Ray is not installed: pip install 'clinbench[ray]'")
    cases = demo_cases()[:3]
    local, remote = tmp_path / "local", tmp_path / "ray"
    run_dx(cases, DxConfig(agent="oracle"), local)
    new = run_dx(cases, DxConfig(agent="oracle"), remote, executor="ray", jobs=2)
    assert len(new) == 3 and all(r.status == "ok" and r.reward == 1.0 for r in new)

    def rows(out):
        return [{k: v for k, v in r.items() if k not in VOLATILE} for r in Store.open(out).runs()]

    assert rows(remote) == rows(local)
    report = rebuild_store(remote)
    assert report.runs == 3 and not report.skipped and rows(remote) == rows(local)


def test_interrupt_keeps_the_recorded_encounters(tmp_path, monkeypatch):
    """Ctrl-C between encounters (in-process): CampaignInterrupted carries what was recorded."""
    import clinbench.dx.run as dxrun

    real = dxrun._execute
    calls = []

    def second_is_interrupted(spec, config):
        calls.append(spec.run_id)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(spec, config)

    monkeypatch.setattr(dxrun, "_execute", second_is_interrupted)
    with pytest.raises(CampaignInterrupted, match="1 runs recorded; rerun the same command to resume") as exc:
        run_dx(demo_cases()[:3], DxConfig(agent="oracle"), tmp_path / "c")
    assert [r.run_id for r in exc.value.summary.records] == calls[:1] == sorted(Store.open(tmp_path / "c").run_ids())
