"""What every external agent program shares: a sandbox, an egress proxy, a private HOME,
a timeout, and the program's stdout kept as evidence.

Subclasses say how to build the command line and environment (``command``) and how to read
usage and the final message from what the program printed (``parse``).
"""

from __future__ import annotations

import abc
import ipaddress
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from clinbench.agents.base import Agent, AgentOutcome, RunContext, Workspace, output_if_written
from clinbench.agents.egress import EgressProxy, endpoint_host_port
from clinbench.agents.sandbox import Egress, Sandbox, choose_sandbox, run_process
from clinbench.campaign.store import Usage
from clinbench.errors import AgentError

STDOUT_FILE = "agent_stdout.txt"
STDERR_FILE = "agent_stderr.txt"
EGRESS_LOG = "egress.jsonl"
PROXY_PORT_IN_SANDBOX = 18080  # where HTTPS_PROXY points inside, for non-loopback endpoints
BASE_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass
class Parsed:
    usage: Usage = field(default_factory=Usage)
    final_message: str | None = None
    cost: float | None = None
    error: str | None = None
    events: list[dict] = field(default_factory=list)


def json_events(stdout: str) -> Iterator[dict]:
    """The JSON objects of a program's JSON-lines output; other lines (banners, progress) are skipped."""
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict):
            yield event


@dataclass
class Launch:
    argv: list[str]
    env: dict[str, str]


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def program_paths(executable: str) -> list[Path]:
    """Read-only paths a program needs inside the sandbox: its folder and, for npm installs, its package tree."""
    found = shutil.which(executable)
    if found is None:
        raise AgentError(f"{executable!r} is not on PATH: install it (see docs) or pass the full path")
    paths = {Path(found).parent.resolve()}
    real = Path(found).resolve()
    paths.add(real.parent)
    for parent in real.parents:
        if parent.name == "node_modules":
            paths.add(parent)
            break
    system = ("/usr", "/etc", "/opt", "/bin", "/lib", "/sbin")
    return sorted(p for p in paths if not str(p).startswith(system))


class ExternalAgent(Agent):
    external = True
    executable = ""

    def __init__(self, *, sandbox: Sandbox | None = None, unsafe_no_isolation: bool = False,
                 base_url: str | None = None, api_key: str | None = None, model: str | None = None,
                 executable: str | None = None):
        if executable:
            self.executable = executable
        if shutil.which(self.executable) is None:
            raise AgentError(f"{self.executable!r} is not on PATH: install it or put its folder on PATH")
        self.sandbox = sandbox or choose_sandbox(unsafe_no_isolation=unsafe_no_isolation)
        self.base_url = base_url
        self.api_key = api_key
        self.model = model

    @abc.abstractmethod
    def command(self, workspace: Workspace, ctx: RunContext, home: str, base_url: str | None, root: str) -> Launch:
        """The argv and environment to run inside the sandbox, where the workspace is at ``root``."""

    @abc.abstractmethod
    def parse(self, stdout: str) -> Parsed:
        """Usage, final message and cost from what the program printed."""

    def transcript_lines(self, stdout: str) -> list[str]:
        """Lines for transcript.jsonl (the program's own JSON events by default)."""
        return [line for line in stdout.splitlines() if line.strip()]

    def run(self, workspace: Workspace, ctx: RunContext) -> AgentOutcome:
        ctx.evidence_dir.mkdir(parents=True, exist_ok=True)
        private = Path(tempfile.mkdtemp(prefix="cb-"))  # short path: unix socket names are limited to 108 bytes
        proxy: EgressProxy | None = None
        try:
            home = self.sandbox.home_for(private)
            base_url = self.base_url
            egress = None
            if base_url and self.sandbox.isolated:
                proxy = EgressProxy(base_url, private / "egress.sock", ctx.evidence_dir / EGRESS_LOG).start()
                host, port, _ = endpoint_host_port(base_url)
                egress = Egress(proxy.socket_path, port if _is_loopback(host) else PROXY_PORT_IN_SANDBOX)
            launch = self.command(workspace, ctx, home, base_url, self.sandbox.workspace_path(workspace.root))
            env = {"PATH": BASE_PATH, "HOME": home, "LANG": "C.UTF-8", "TMPDIR": "/tmp", **launch.env}
            if egress is not None and egress.port == PROXY_PORT_IN_SANDBOX:
                proxy_url = f"http://127.0.0.1:{PROXY_PORT_IN_SANDBOX}"
                env.update({"HTTPS_PROXY": proxy_url, "HTTP_PROXY": proxy_url, "https_proxy": proxy_url, "http_proxy": proxy_url})
            ro = program_paths(self.executable)
            extra_path = ":".join(str(p) for p in ro)
            env["PATH"] = f"{extra_path}:{env['PATH']}" if extra_path else env["PATH"]
            argv, host_env = self.sandbox.wrap(launch.argv, workspace.root, env, ro_paths=ro, egress=egress,
                                               hidden=ctx.hidden_paths)
            if not self.sandbox.isolated:
                host_env = {**env, "PATH": f"{env['PATH']}:{os.environ.get('PATH', '')}"}
            stdout_path, stderr_path = ctx.evidence_dir / STDOUT_FILE, ctx.evidence_dir / STDERR_FILE
            result = run_process(argv, host_env, cwd=workspace.root, stdout_path=stdout_path,
                                 stderr_path=stderr_path, timeout=ctx.timeout_seconds)
        finally:
            if proxy is not None:
                proxy.stop()
            shutil.rmtree(private, ignore_errors=True)
        stdout = stdout_path.read_text(encoding="utf-8", errors="replace")
        lines = self.transcript_lines(stdout)
        ctx.transcript.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        parsed = self.parse(stdout)
        if result.timed_out:
            status, error = "timeout", f"agent killed after the {ctx.timeout_seconds:g} s timeout"
        elif result.returncode != 0:
            tail = stderr_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:] or [""]
            status, error = "error", f"{self.executable} exited with status {result.returncode}: {tail[0][:300]}"
        else:
            status, error = "ok", parsed.error
        return AgentOutcome(status=status, output_csv=output_if_written(workspace), transcript=ctx.transcript,
                            usage=parsed.usage, isolated=self.sandbox.isolated, cost=parsed.cost, error=error,
                            final_message=parsed.final_message)
