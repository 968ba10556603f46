"""Fail-closed isolation: what an external agent can and cannot reach from inside bubblewrap."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import pytest

from clinbench.agents import sandbox as sb
from clinbench.agents.base import RunContext, Workspace
from clinbench.agents.command import CommandAgent
from clinbench.agents.egress import EgressProxy
from clinbench.agents.sandbox import BwrapSandbox, Egress, NoSandbox, choose_sandbox
from clinbench.errors import SandboxError

from agent_fixtures import make_workspace

needs_bwrap = pytest.mark.skipif(not sb.bwrap_available(), reason="bubblewrap cannot create namespaces here (.ci/run installs it)")

PROBE = r'''
import json, os, socket, sys
port, reference, other_run, outside, private = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
result = {}
s = socket.socket()
s.settimeout(3)
try:
    s.connect(("127.0.0.1", port)); result["host_loopback"] = "connected"
except OSError as exc:
    result["host_loopback"] = type(exc).__name__
try:
    socket.create_connection(("1.1.1.1", 80), timeout=3); result["internet"] = "connected"
except OSError as exc:
    result["internet"] = type(exc).__name__
result["reference_visible"] = os.path.exists(reference)
result["other_run_visible"] = os.path.exists(other_run)
result["etc_shadow_visible"] = os.path.exists("/etc/shadow")
for name, path in (("outside", outside), ("usr", "/usr/clinbench-probe"), ("root", "/clinbench-probe")):
    try:
        open(path, "w").write("x"); result["write_" + name] = "ok"
    except OSError as exc:
        result["write_" + name] = type(exc).__name__
open(private, "w").write("tmp is writable")
result["home"] = os.environ.get("HOME")
result["home_writable"] = os.access(os.environ["HOME"], os.W_OK)
open("output.csv", "w").write("probe\n" + json.dumps(result) + "\n")
'''


def _listener():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    accepted = []

    def serve():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            accepted.append(1)
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return srv, accepted


def _probe(tmp_path, sandbox, private):
    campaign = tmp_path / "campaign"
    ws = make_workspace(campaign / "runs" / "r1" / "workspace")
    other = make_workspace(campaign / "runs" / "r2" / "workspace")
    reference = tmp_path / "reference.duckdb"
    reference.write_text("hidden")
    (ws / "probe.py").write_text(PROBE)
    outside = campaign / "runs" / "r1" / "escaped.txt"
    srv, accepted = _listener()
    try:
        agent = CommandAgent(
            f"/usr/bin/python3 {{workspace}}/probe.py {srv.getsockname()[1]} {reference} {other / 'database.duckdb'} {outside} {private}",
            sandbox=sandbox,
        )
        ctx = RunContext(evidence_dir=campaign / "runs" / "r1" / "evidence", task_id="t", timeout_seconds=60)
        outcome = agent.run(Workspace.from_dir(ws), ctx)
    finally:
        srv.close()
    assert outcome.status == "ok", (ctx.evidence_dir / "agent_stderr.txt").read_text()
    return outcome, json.loads(outcome.output_csv.read_text().splitlines()[1]), accepted, outside


@needs_bwrap
@pytest.mark.slow
def test_bwrap_blocks_network_reference_other_runs_and_outside_writes(tmp_path):
    private = Path(f"/tmp/clinbench-probe-{tmp_path.name}")
    outcome, seen, accepted, outside = _probe(tmp_path, BwrapSandbox(), private)
    assert outcome.isolated is True
    assert seen["host_loopback"] == "ConnectionRefusedError" and accepted == []
    assert seen["internet"] != "connected"
    assert seen["reference_visible"] is False and seen["other_run_visible"] is False
    assert seen["etc_shadow_visible"] is False
    assert seen["write_outside"] != "ok" and not outside.exists()
    assert seen["write_usr"] != "ok" and seen["write_root"] != "ok"
    assert seen["home"] == "/tmp/home" and seen["home_writable"] is True
    assert not private.exists()  # the sandbox's /tmp is its own


@pytest.mark.slow
def test_unsafe_run_sees_everything_and_is_marked_not_isolated(tmp_path):
    outcome, seen, accepted, _ = _probe(tmp_path, NoSandbox(), tmp_path / "private")
    assert outcome.isolated is False
    assert seen["reference_visible"] is True and seen["host_loopback"] == "connected"


def test_no_sandbox_refuses_unless_unsafe(monkeypatch):
    monkeypatch.setattr(sb, "docker_available", lambda: False)
    monkeypatch.setattr(sb, "bwrap_available", lambda: False)
    with pytest.raises(SandboxError, match="--unsafe-no-isolation"):
        choose_sandbox()
    assert choose_sandbox(unsafe_no_isolation=True).isolated is False


def test_docker_is_preferred_when_an_engine_answers(monkeypatch, tmp_path):
    monkeypatch.setattr(sb, "docker_available", lambda: True)
    box = choose_sandbox()
    assert box.kind == "docker"
    argv, _ = box.wrap(["codex", "exec"], tmp_path, {"HOME": "/tmp/home"},
                       egress=Egress(tmp_path / "e.sock", 8080))
    assert argv[argv.index("--network") + 1] == "none"
    assert f"{tmp_path}:/workspace:rw" in argv and "--memory" in argv and "--cpus" in argv
    mounts = [argv[i + 1] for i, a in enumerate(argv) if a == "-v"]
    assert len(mounts) == 3  # workspace, egress socket, bridge: nothing else of the host


def test_egress_proxy_refuses_other_hosts_and_logs_every_request(tmp_path):
    log = tmp_path / "egress.jsonl"
    with EgressProxy("https://api.example.org/v1", tmp_path / "p.sock", log):
        for request in (b"CONNECT evil.example.com:443 HTTP/1.1\r\nHost: evil.example.com\r\n\r\n",
                        b"GET http://other.example.com/ HTTP/1.1\r\nHost: other.example.com\r\n\r\n"):
            c = socket.socket(socket.AF_UNIX)
            c.connect(str(tmp_path / "p.sock"))
            c.sendall(request)
            reply = c.recv(4096)
            c.close()
            assert reply.startswith(b"HTTP/1.1 403")
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(e["target"], e["allowed"]) for e in entries] == [("evil.example.com:443", False), ("http://other.example.com/", False)]


def test_an_agent_past_its_timeout_is_killed_and_marked_timeout(tmp_path):
    ws = make_workspace(tmp_path / "ws")
    agent = CommandAgent("/bin/sh -c 'sleep 30; echo late > output.csv'", sandbox=NoSandbox())
    ctx = RunContext(evidence_dir=tmp_path / "ev", task_id="t", timeout_seconds=1)
    start = __import__("time").monotonic()
    outcome = agent.run(Workspace.from_dir(ws), ctx)
    assert outcome.status == "timeout" and outcome.output_csv is None
    assert __import__("time").monotonic() - start < 10


@needs_bwrap
@pytest.mark.slow
def test_a_reference_under_a_mounted_program_folder_is_masked(tmp_path):
    program = tmp_path / "tools"
    program.mkdir()
    secret_db, secret_dir = program / "reference.duckdb", program / "campaign"
    secret_db.write_text("secret rows")
    secret_dir.mkdir()
    (secret_dir / "results.duckdb").write_text("secret store")
    script = program / "agent.sh"
    script.write_text(f"#!/bin/sh\ncat {secret_db} {secret_dir}/results.duckdb > output.csv 2>&1; cat {script} >> output.csv\n")
    script.chmod(0o755)
    ws = make_workspace(tmp_path / "ws")
    ctx = RunContext(evidence_dir=tmp_path / "ev", task_id="t", timeout_seconds=30, hidden_paths=[secret_db, secret_dir])
    outcome = CommandAgent(str(script), sandbox=BwrapSandbox()).run(Workspace.from_dir(ws), ctx)
    seen = outcome.output_csv.read_text()
    assert "secret" not in seen.replace(str(secret_db), "").replace(str(secret_dir), "")
    assert "#!/bin/sh" in seen  # the program folder itself stays readable


def test_egress_proxy_tunnels_connect_to_the_allowed_host_only(tmp_path):
    echo = socket.socket()
    echo.bind(("127.0.0.1", 0))
    echo.listen(1)
    port = echo.getsockname()[1]

    def serve():
        conn, _ = echo.accept()
        conn.sendall(conn.recv(100).upper())
        conn.close()

    threading.Thread(target=serve, daemon=True).start()
    log = tmp_path / "egress.jsonl"
    with EgressProxy(f"https://127.0.0.1:{port}/v1", tmp_path / "p.sock", log):
        c = socket.socket(socket.AF_UNIX)
        c.connect(str(tmp_path / "p.sock"))
        c.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        assert c.recv(100).startswith(b"HTTP/1.1 200")
        c.sendall(b"tls bytes")
        got = b""
        while len(got) < 9 and (chunk := c.recv(100)):
            got += chunk
        assert got == b"TLS BYTES"
        c.close()
    echo.close()
    entry = json.loads(log.read_text().splitlines()[0])
    assert entry["allowed"] and entry["target"] == f"127.0.0.1:{port}" and entry["bytes_received"] == 9


def test_program_paths_show_the_file_not_the_users_folder_and_the_npm_tree_for_a_package(tmp_path, monkeypatch):
    from clinbench.agents.external import program_paths

    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "agent.sh").write_text("#!/bin/sh\n")
    (tools / "agent.sh").chmod(0o755)
    (tools / "reference.duckdb").write_text("secret")
    package = tmp_path / "clis" / "node_modules" / "@x" / "cli" / "bin"
    package.mkdir(parents=True)
    (package / "cli.js").write_text("#!/usr/bin/env node\n")
    (package / "cli.js").chmod(0o755)
    (tmp_path / "clis" / "node_modules" / ".bin").mkdir()
    (tmp_path / "clis" / "node_modules" / ".bin" / "cli").symlink_to("../@x/cli/bin/cli.js")
    monkeypatch.setenv("PATH", f"{tools}:{tmp_path / 'clis' / 'node_modules' / '.bin'}:/usr/bin:/bin")
    assert program_paths("agent.sh") == [tools / "agent.sh"]
    assert program_paths("cli") == [tmp_path / "clis" / "node_modules"]
    assert program_paths("sh") == []  # a system program needs nothing beyond the system folders
