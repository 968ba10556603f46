"""The Ray executor (one Ray task per run, local 2-CPU instance) gives the same store as the local executor."""

from __future__ import annotations

import pytest

from clinbench.agents.factory import AgentOptions
from clinbench.campaign.campaign import run_campaign
from clinbench.campaign.execute import CampaignConfig
from clinbench.campaign.matrix import expand
from clinbench.records.store import Store

pytestmark = pytest.mark.slow  # real processes and signals (or Ray, or the whole demo): minutes, not seconds

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'clinbench[ray]' to run the Ray executor test")

VOLATILE = {"elapsed_seconds", "finished_at", "model_seconds", "harness_seconds"}  # timings
MELD = "/bin/sh -c 'printf \"subject_id,hadm_id,stay_id,meld\\n1,10,100,12\\n2,20,200,30\\n\" > output.csv'"


def _snapshot(out):
    store = Store.open(out)
    runs = [{k: v for k, v in r.items() if k not in VOLATILE} for r in store.runs()]
    return runs, store.column_scores()


def test_ray_and_local_executors_record_the_same_runs(tiny_db, tmp_path):
    """Ray first, then the local pool in the same process (a notebook's order): a worker forked from a
    process that had run Ray died in _raylet.so (CI: BrokenProcessPool); the pool now starts clean workers."""
    specs = expand(["mimic-sofa-24h", "mimic-meld-24h"], ["no-skill", "with-skill"], ["native"],
                   ["reference", "empty", "command"], [], 1)
    options = AgentOptions(agent_command=MELD, unsafe_no_isolation=True)
    local, remote = tmp_path / "local", tmp_path / "ray"
    summary = run_campaign(specs, CampaignConfig(db=str(tiny_db), out=str(remote), options=options), jobs=2, executor="ray")
    assert summary.finished == 12 and not ray.is_initialized()
    from clinbench.campaign.campaign import _pool_context

    assert _pool_context().get_start_method() == "spawn"
    assert run_campaign(specs, CampaignConfig(db=str(tiny_db), out=str(local), options=options), jobs=2).finished == 12
    local_runs, local_cols = _snapshot(local)
    ray_runs, ray_cols = _snapshot(remote)
    assert len(ray_runs) == 12
    assert [r["run_id"] for r in ray_runs] == [r["run_id"] for r in local_runs]
    assert [{**r, "evidence_dir": None} for r in ray_runs] == [{**r, "evidence_dir": None} for r in local_runs]
    assert ray_cols == local_cols
    meld = {r["agent"]: r["reward"] for r in ray_runs if r["task"] == "mimic-meld-24h"}
    assert meld == {"reference": 1.0, "empty": 0.0, "command": 0.5}
