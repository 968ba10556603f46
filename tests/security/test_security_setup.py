"""Operator set-up (issue 28, items 8-10): where the source database and caches live, what an
unsandboxed use of the shared workspace database can change, and what runs on the host."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import duckdb
import pytest

from clinbench.agents import sandbox as sb
from clinbench.agents.factory import AgentOptions
from clinbench.campaign.audit import audit_campaign
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
@pytest.mark.slow
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


# item 9: the shared cached workspace database and what writes to it from outside the sandbox
LIST_TABLES = ("/bin/sh -c 'sleep {sleep}; duckdb database.duckdb -csv -noheader "
               "-c \"SELECT table_name FROM duckdb_tables() ORDER BY 1\"'")


def _cached_databases(cache: Path) -> list[Path]:
    return sorted(p for p in (cache / "workspaces").glob("*.duckdb") if ".shared." not in p.name)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write_when_running(out: Path, target, started: list) -> threading.Thread:
    """Once the run's workspace exists, plant a table in the database ``target()`` names (from outside)."""
    def plant():
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not list((out / ".work").glob("*/database.duckdb")):
            time.sleep(0.05)
        con = duckdb.connect(str(target()))
        con.execute("CREATE TABLE mimiciv_icu.planted AS SELECT 1 AS x")
        con.close()
        started.append(True)

    thread = threading.Thread(target=plant)
    thread.start()
    return thread


def _run(out: Path, db: Path, command: str, **options) -> dict:
    options = AgentOptions(agent_command=command, sandbox_limits=LIMITS, **options)
    run_campaign([RunSpec(TASK, "no-skill", "native", "command", "-", 0)],
                 CampaignConfig(db=str(db), out=str(out), options=options, timeout_seconds=60))
    audit_campaign(out)
    return Store.open(out).runs()[0]


@needs_bwrap
@pytest.mark.slow
def test_a_workspace_folder_opened_read_write_does_not_change_what_a_running_sandboxed_run_sees(tmp_path, monkeypatch):
    # before: `clinbench workspace` gave a hard link to the shared cached database; a write through
    # it (root ignores the 0444 mode) showed up in a sandboxed run already running
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    db = build_tiny_db(tmp_path / "source.duckdb")
    res = subprocess.run([sys.executable, "-m", "clinbench", "workspace", TASK, "--db", str(db), "--out",
                          str(tmp_path / "mine")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    (cached,) = _cached_databases(tmp_path / "cache")
    sealed = _sha(cached)
    out, done = tmp_path / "camp", []
    writer = _write_when_running(out, lambda: tmp_path / "mine" / "database.duckdb", done)
    row = _run(out, db, LIST_TABLES.format(sleep=3), sandbox="bwrap")
    writer.join()
    assert done and "planted" not in (out / row["evidence_dir"] / "agent_stdout.txt").read_text()
    assert _sha(cached) == sealed and row["publishable"] is True, row["flag_reason"]


@needs_bwrap
@pytest.mark.slow
def test_a_run_that_saw_the_shared_database_change_is_flagged(tmp_path, monkeypatch):
    # before: a write to the cached file itself during a run went unnoticed: the run stayed publishable
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    db = build_tiny_db(tmp_path / "source.duckdb")
    out, done = tmp_path / "camp", []
    writer = _write_when_running(out, lambda: _cached_databases(tmp_path / "cache")[0], done)
    row = _run(out, db, LIST_TABLES.format(sleep=3), sandbox="bwrap")
    writer.join()
    assert done and "planted" in (out / row["evidence_dir"] / "agent_stdout.txt").read_text()
    assert row["publishable"] is False
    assert "the shared workspace database changed during the run" in row["flag_reason"]


@pytest.mark.slow
def test_an_unsandboxed_run_writes_only_its_own_copy_of_the_workspace_database(tmp_path, monkeypatch):
    # before: an --unsafe-no-isolation run wrote through its hard link into the shared cached file
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    db = build_tiny_db(tmp_path / "source.duckdb")
    plant = (f"{sys.executable} -c \"import duckdb; duckdb.connect('database.duckdb').execute("
             "'CREATE TABLE mimiciv_icu.planted AS SELECT 1')\"")
    monkeypatch.setattr(sb, "bwrap_available", lambda: False)
    monkeypatch.setattr(sb, "docker_available", lambda: False)
    out = tmp_path / "camp"
    _run(out, db, plant, unsafe_no_isolation=True)
    (cached,) = _cached_databases(tmp_path / "cache")
    con = duckdb.connect(str(cached), read_only=True)
    assert "planted" not in {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    con.close()


# item 10: the agent CLI's --version
PROBED_CLI = """#!/bin/sh
env > "{trace}/env-$$.txt" 2>/dev/null  # on the host this leaves a file with the harness's environment
echo "codex-cli 9.9.9 canary=${{CLINBENCH_SECURITY_CANARY:-none}} home=$HOME"
"""


@needs_bwrap
def test_the_cli_version_probe_runs_in_the_sandbox_not_on_the_host(tmp_path, monkeypatch):
    # before: `codex --version` ran on the host with the harness's whole environment (the canary,
    # every API key) and could write anywhere the harness can
    from clinbench.agents.provenance import current_version

    trace = tmp_path / "trace"
    trace.mkdir()
    cli = tmp_path / "bin" / "codex"
    cli.parent.mkdir()
    cli.write_text(PROBED_CLI.format(trace=trace))
    cli.chmod(0o755)
    monkeypatch.setenv("PATH", f"{cli.parent}:{os.environ['PATH']}")
    monkeypatch.setenv("CLINBENCH_SECURITY_CANARY", "canary-in-the-harness")
    assert current_version("codex", AgentOptions(sandbox="bwrap")) == f"codex-cli 9.9.9 canary=none home={sb.SANDBOX_HOME}"
    assert list(trace.iterdir()) == []


REAL_BIN = Path(os.environ.get("CLINBENCH_REAL_CLIS") or "/nonexistent") / "node_modules" / ".bin"


@needs_bwrap
@pytest.mark.skipif(not (REAL_BIN / "codex").exists(), reason="real CLIs not installed (CLINBENCH_REAL_CLIS=DIR)")
def test_the_real_clis_report_their_version_from_inside_the_sandbox(monkeypatch):
    from clinbench.agents.provenance import current_version

    monkeypatch.setenv("PATH", f"{REAL_BIN}:{os.environ['PATH']}")
    assert re.fullmatch(r"codex-cli \d+\.\d+\.\d+", current_version("codex", AgentOptions(sandbox="bwrap")) or "")
    assert re.match(r"\d+\.\d+\.\d+ \(Claude Code\)", current_version("claude", AgentOptions(sandbox="bwrap")) or "")
