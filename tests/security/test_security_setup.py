"""Operator set-up (issue 28, items 8-10): where the source database and caches live, what an
unsandboxed use of the shared workspace database can change, and what runs on the host."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest

from clinbench.agents import sandbox as sb
from clinbench.agents.factory import AgentOptions
from clinbench.campaign.campaign import run_campaign
from clinbench.campaign.execute import CampaignConfig
from clinbench.campaign.matrix import RunSpec
from clinbench.records.store import Store
from clinbench.errors import SandboxError

from campaign.campaign_fixtures import build_tiny_db
from hostile_agent import write_hostile_agent
from hostile_campaign import LIMITS, TASK, needs_bwrap


@pytest.fixture
def system_folder():
    """A folder under /opt, a system folder every bubblewrap sandbox shows read-only."""
    try:
        root = Path(tempfile.mkdtemp(prefix="clinbench-sec-", dir="/opt"))
    except OSError:
        pytest.skip("/opt is not writable here (the attack needs a source database under /opt)")
    yield root
    shutil.rmtree(root, ignore_errors=True)


@needs_bwrap
def test_a_source_database_and_caches_under_a_system_folder_stay_hidden(system_folder, tmp_path, monkeypatch):
    # before: /opt is mounted whole, so an agent read the reference table from the source
    # database under it and scored 1.0, publishable
    cache = system_folder / "cache"
    monkeypatch.setenv("CLINBENCH_CACHE", str(cache))
    db = build_tiny_db(system_folder / "source.duckdb")
    out = system_folder / "camp"
    hidden = {"source_db": str(db), "cache": str(cache), "references": str(cache / "workspaces" / "references"),
              "campaign": str(out)}
    program = write_hostile_agent(tmp_path / "tools", {"source_db": str(db), "target": "target_sofa_24h",
                                                        "hidden": hidden})
    options = AgentOptions(agent_command=f"{program} {{model}} {{workspace}}", sandbox="bwrap", sandbox_limits=LIMITS)
    config = CampaignConfig(db=str(db), out=str(out), options=options, timeout_seconds=60)
    run_campaign([RunSpec(TASK, "no-skill", "native", "reference", "-", 0)], config)  # the reference is now cached
    assert (cache / "workspaces" / "references").is_dir()
    run_campaign([RunSpec(TASK, "no-skill", "native", "command", "read-hidden", 0)], config)
    row = next(r for r in Store.open(out).runs() if r["agent"] == "command")
    folder = out / row["evidence_dir"]
    seen = [json.loads(line) for line in (folder / "agent_stdout.txt").read_text().splitlines() if line.startswith("{")][-1]
    assert row["reward"] == 0.0 and row["status"] == "agent-failed", (row, seen)
    assert seen["source_db"] in (0, "PermissionError")  # /dev/null over it: nothing to read
    assert seen["cache"] == [] and seen["campaign"] == [] and seen["references"] == "FileNotFoundError"
    assert not (folder / "output.csv").exists()


@needs_bwrap
def test_the_preflight_probe_refuses_a_sandbox_that_shows_a_hidden_file(tmp_path):
    shown = tmp_path / "shown"
    shown.mkdir()
    secret = shown / "reference.duckdb"
    secret.write_text("secret rows")
    (shown / "empty.duckdb").write_text("")
    ws = tmp_path / "ws"
    ws.mkdir()
    box = sb.BwrapSandbox(extra_ro=[shown])
    env = {"HOME": sb.SANDBOX_HOME, "PATH": "/usr/bin:/bin"}
    # the probe runs python3 inside, with the same mounts a run would get
    assert box.visible(ws, env, [secret, shown / "empty.duckdb"], hidden=[]) == [str(secret)]
    assert box.visible(ws, env, [secret, shown], hidden=[secret, shown]) == []
    with pytest.raises(SandboxError, match=r"hidden path is visible inside the bwrap sandbox: \S+/reference.duckdb .*nothing was run"):
        box.refuse_visible(ws, env, [secret], hidden=[])
