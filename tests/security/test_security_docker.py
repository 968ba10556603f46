"""Docker is used only after a probe run succeeds; its containers are named, killed at the timeout,
and get secrets through an env-file. No Docker engine runs here: a stand-in `docker` command plays
each engine state and logs what clinbench asked of it."""

from __future__ import annotations

import os
import re
import stat
import time
from pathlib import Path

import pytest

from clinbench.agents import sandbox as sb
from clinbench.agents.limits import Limits
from clinbench.agents.process import run_process
from clinbench.errors import SandboxError

REPO = Path(__file__).resolve().parents[2]

FAKE_DOCKER = """#!/bin/sh
echo "$*" >> "$FAKE_DOCKER_LOG"
case "$FAKE_DOCKER_STATE:$1" in
  no-engine:*) exit 1 ;;
  no-image:info) exit 0 ;;
  no-image:*) exit 1 ;;
  probe-fails:run) exit 125 ;;
  *:run) for a in "$@"; do [ "$prev" = "--env-file" ] && cp "$a" "$FAKE_DOCKER_LOG.env"; prev="$a"; done
         case "$*" in *"id -u"*) exit 0 ;; esac
         exec sleep 30 ;;
  *) exit 0 ;;
esac
"""


@pytest.fixture
def docker(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "docker").write_text(FAKE_DOCKER)
    (bin_dir / "docker").chmod(0o755)
    log = tmp_path / "docker.log"
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_DOCKER_LOG", str(log))
    monkeypatch.setattr(sb, "bwrap_available", lambda: True)
    sb.docker_unavailable_reason.cache_clear()

    def state(name: str) -> Path:
        monkeypatch.setenv("FAKE_DOCKER_STATE", name)
        sb.docker_unavailable_reason.cache_clear()
        return log

    yield state
    sb.docker_unavailable_reason.cache_clear()


@pytest.mark.parametrize("state, reason", [
    ("no-engine", "no Docker engine answers"),
    ("no-image", "the agent image clinbench-agent:latest is absent: build it with `docker build -t clinbench-agent:latest .` (the repository's Dockerfile)"),
    ("probe-fails", "a probe container of clinbench-agent:latest did not run as a non-root user"),
])
def test_docker_is_never_chosen_unless_its_probe_run_succeeds(docker, state, reason):
    docker(state)
    assert sb.choose_sandbox().kind == "bwrap"
    with pytest.raises(SandboxError, match=re.escape(reason)):
        sb.choose_sandbox(prefer="docker")


def test_a_docker_run_is_named_limited_and_keeps_secrets_off_the_command_line(docker, tmp_path):
    log = docker("ok")
    box = sb.choose_sandbox()
    assert box.kind == "docker"
    limits = Limits(memory_bytes=1 << 30, processes=99, file_size_bytes=1 << 20, tmp_bytes=1 << 24)
    argv, env = box.wrap(["codex", "exec"], tmp_path, {"HOME": "/tmp/home", "OPENAI_API_KEY": "sk-secret-123"},
                         egress=sb.Egress(tmp_path / "e.sock", 8080), limits=limits)
    assert "sk-secret-123" not in " ".join(argv) and "sk-secret-123" not in " ".join(env.values())
    name = argv[argv.index("--name") + 1]
    assert re.fullmatch(r"clinbench-[0-9a-f]{12}", name)
    assert argv[argv.index("--network") + 1] == "none" and argv[argv.index("--pids-limit") + 1] == "99"
    assert argv[argv.index("--memory") + 1] == str(1 << 30) and "fsize=1048576" in argv
    assert f"/tmp:exec,size={1 << 24}" in argv
    env_file = Path(argv[argv.index("--env-file") + 1])
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600 and "OPENAI_API_KEY=sk-secret-123\n" in env_file.read_text()
    mounts = [argv[i + 1] for i, a in enumerate(argv) if a == "-v"]
    assert len(mounts) == 3  # workspace, egress socket, bridge: nothing else of the host
    # a run past its timeout: the client is killed and so is the container, by name
    start = time.monotonic()
    fake = {k: os.environ[k] for k in ("FAKE_DOCKER_LOG", "FAKE_DOCKER_STATE")}  # the stand-in's own settings
    result = run_process(argv, {**env, **fake}, cwd=tmp_path, stdout_path=tmp_path / "o", stderr_path=tmp_path / "e",
                         timeout=1, on_stop=box.stop)
    assert result.timed_out and time.monotonic() - start < 10
    assert f"kill {name}" in log.read_text()
    assert (Path(str(log) + ".env")).read_text().startswith("HOME=/tmp/home")
    assert not env_file.exists()  # removed when the run stopped


def test_the_agent_image_runs_as_a_non_root_user():
    text = (REPO / sb.DOCKERFILE).read_text()
    users = re.findall(r"^USER\s+(\S+)", text, re.MULTILINE)
    assert users and users[-1] not in ("root", "0")
    assert f"--uid {sb.DOCKER_UID}" in text


def test_a_hidden_path_under_a_docker_mount_is_masked(docker, tmp_path):
    # before: Docker mounted an --agent-mount folder whole, the reference inside it included
    docker("ok")
    shown = tmp_path / "shown"
    (shown / "campaign").mkdir(parents=True)
    (shown / "reference.duckdb").write_text("secret rows")
    argv, _ = sb.choose_sandbox().wrap(["sh"], tmp_path, {"HOME": "/tmp/home"}, ro_paths=[shown],
                                       hidden=[shown / "reference.duckdb", shown / "campaign"])
    assert f"/dev/null:{shown / 'reference.duckdb'}:ro" in argv
    assert f"type=tmpfs,destination={shown / 'campaign'}" in argv
    assert argv.index(f"{shown}:{shown}:ro") < argv.index(f"/dev/null:{shown / 'reference.duckdb'}:ro")
