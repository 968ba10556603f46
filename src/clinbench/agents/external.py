"""What every external agent program shares: a sandbox, an egress proxy, a private HOME,
a timeout, resource limits, and the program's stdout kept as evidence.

The harness records how the run was confined in ``sandbox.json`` (evidence): the sandbox
kind, the host paths shown read-only, each limit and how it was enforced, the limit that
stopped the run if one did, and how many bytes of stdout/stderr were past the cap.

Subclasses say how to build the command line and environment (``command``) and how to read
usage and the final message from what the program printed (``parse``).
"""

from __future__ import annotations

import abc
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from clinbench import untrusted
from clinbench.agents import toolbox
from clinbench.agents.base import Agent, AgentOutcome, RunContext, Workspace, output_if_written
from clinbench.agents.attribution import (ENDPOINT_DOWN_SECONDS, EndpointWatch, check_endpoint, endpoint_failure,
                                         log_entries)
from clinbench.agents.egress import EgressProxy, endpoint_host_port, is_loopback
from clinbench.agents.limits import Limits
from clinbench.agents.process import run_process
from clinbench.agents.sandbox import Egress, Sandbox, choose_sandbox
from clinbench.atomic import write_json_atomic
from clinbench.records import RunStatus, Usage
from clinbench.errors import AgentError

STAMP_SCRIPT = Path(__file__).with_name("stamp_lines.py")  # timestamps the program's JSON events
STDOUT_FILE = "agent_stdout.txt"
STDERR_FILE = "agent_stderr.txt"
EGRESS_LOG = "egress.jsonl"
SANDBOX_RECORD = "sandbox.json"
SYSTEM_PREFIXES = ("/usr/", "/etc/", "/opt/", "/bin/", "/lib/", "/lib64/", "/sbin/")
PROXY_PORT_IN_SANDBOX = 18080  # where HTTPS_PROXY points inside, for non-loopback endpoints
BASE_PATH = "/usr/local/bin:/usr/bin:/bin"
_VERSIONS: dict[tuple[str, str, int], str | None] = {}  # (sandbox kind, program file, mtime) -> its --version


@dataclass
class Parsed:
    usage: Usage = field(default_factory=Usage)
    final_message: str | None = None
    cost: float | None = None
    error: str | None = None
    events: list[dict] = field(default_factory=list)
    served_models: set[str] = field(default_factory=set)  # models the CLI's events say answered


def json_events(stdout: str) -> Iterator[dict]:
    """The JSON objects of a program's JSON-lines output; other lines (banners, progress) are skipped."""
    for line in stdout.splitlines():
        try:
            event = untrusted.loads(line)
        except json.JSONDecodeError:  # malformed, too deep or too large
            continue
        if isinstance(event, dict):
            yield event


@dataclass
class Launch:
    argv: list[str]
    env: dict[str, str]


def program_paths(executable: str) -> list[Path]:
    """What of the host a program needs inside the sandbox (read-only): the executable file itself,
    or for an npm install the ``node_modules`` tree holding its package and dependencies.

    Never the folder the program sits in: a user's folder may hold anything (older campaigns,
    references, sockets). A program that needs more names it with ``--agent-mount``."""
    found = shutil.which(executable)
    if found is None:
        raise AgentError(f"{executable!r} is not on PATH: install it (see docs) or pass the full path")
    found_path = Path(found).absolute()
    real = found_path.resolve()
    if str(real).startswith(SYSTEM_PREFIXES) and str(found_path).startswith(SYSTEM_PREFIXES):
        return []
    for parent in real.parents:
        if parent.name == "node_modules":
            return [parent] if found_path.is_relative_to(parent) else [parent, found_path]
    return [found_path]


class ExternalAgent(Agent):
    external = True
    executable = ""

    def __init__(self, *, sandbox: Sandbox | None = None, unsafe_no_isolation: bool = False,
                 base_url: str | None = None, api_key: str | None = None, model: str | None = None,
                 executable: str | None = None, endpoint_api: str = "native", max_tokens: int | None = None,
                 token_budget: int | None = None, limits: Limits | None = None, mounts: list[str | Path] = (),
                 endpoint_down_seconds: float = ENDPOINT_DOWN_SECONDS):
        if endpoint_api not in ("native", "chat"):
            raise AgentError(f"--endpoint-api {endpoint_api!r}: use native (the CLI's own API) or chat (chat completions only)")
        self.endpoint_api, self.max_tokens, self.token_budget = endpoint_api, max_tokens, token_budget
        if executable:
            self.executable = executable
        if shutil.which(self.executable) is None:
            raise AgentError(f"{self.executable!r} is not on PATH: install it or put its folder on PATH")
        self.sandbox = sandbox or choose_sandbox(unsafe_no_isolation=unsafe_no_isolation)
        self.base_url = base_url
        self.api_key = api_key
        self.model = model
        if endpoint_api == "chat" and not (base_url and self.sandbox.isolated):
            raise AgentError("--endpoint-api chat translates in the sandbox's egress proxy: it needs --base-url and a "
                             "sandbox (bwrap or docker), not --unsafe-no-isolation")
        self.limits = limits or Limits()
        self.endpoint_down_seconds = endpoint_down_seconds
        self.mounts = [Path(m).absolute() for m in mounts]
        for mount in self.mounts:
            if not mount.exists():
                raise AgentError(f"--agent-mount {mount}: no such file or folder")

    def version(self, workspace: Path | None = None, env: dict[str, str] | None = None, ro: list[Path] | None = None,
                *, hidden: list[Path] = ()) -> str | None:
        """``PROGRAM --version``'s first line (``codex-cli 0.171.0``), asked inside this agent's sandbox with
        the run's environment and mounts (a bare environment before any run), never on the host with the
        harness's environment. Only the known CLIs are asked: a command agent's program reports none.
        Remembered per sandbox kind and program file."""
        from clinbench.agents.provenance import _PROGRAMS, version_line

        found = shutil.which(self.executable)
        if self.name not in _PROGRAMS or found is None:
            return None
        real = Path(found).resolve()
        key = (self.sandbox.kind, str(real), real.stat().st_mtime_ns)
        if key not in _VERSIONS:
            with tempfile.TemporaryDirectory(prefix="cb-ver-") as scratch:
                root = Path(workspace or scratch)
                if env is None:
                    bin_dir = Path(found).absolute().parent
                    path = BASE_PATH if str(bin_dir).startswith(SYSTEM_PREFIXES) else f"{bin_dir}:{BASE_PATH}"
                    env = {"PATH": path, "HOME": self.sandbox.home_for(Path(scratch)), "LANG": "C.UTF-8", "TMPDIR": "/tmp"}
                ro = [*program_paths(self.executable), *self.mounts] if ro is None else ro
                argv, host_env = self.sandbox.wrap([self.executable, "--version"], root, env, ro_paths=ro, hidden=hidden,
                                                   limits=self.limits)
                if not self.sandbox.isolated:
                    host_env = {**env, "PATH": f"{env['PATH']}:{os.environ.get('PATH', '')}"}
                try:
                    proc = subprocess.run(argv, env=host_env, cwd=root, capture_output=True, text=True, timeout=60,
                                          stdin=subprocess.DEVNULL)
                    _VERSIONS[key] = version_line(proc.stdout, proc.stderr, proc.returncode)
                except (OSError, subprocess.SubprocessError):
                    _VERSIONS[key] = None
                finally:
                    self.sandbox.stop()
        return _VERSIONS[key]

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
        translator = None
        try:
            home = self.sandbox.home_for(private)
            base_url = self.base_url
            egress = None
            box = toolbox.prepare(private, self.sandbox.kind)
            if base_url and self.sandbox.isolated:
                if self.endpoint_api == "chat":
                    from clinbench.agents.api_translate import ChatTranslator

                    translator = ChatTranslator(base_url, deadline=ctx.deadline, max_tokens=self.max_tokens,
                                                token_budget=self.token_budget)
                proxy = EgressProxy(base_url, private / "egress.sock", ctx.evidence_dir / EGRESS_LOG,
                                    translator=translator, deadline=ctx.deadline, limits=self.limits).start()
                host, port, _ = endpoint_host_port(base_url)
                egress = Egress(proxy.socket_path, port if is_loopback(host) else PROXY_PORT_IN_SANDBOX)
                if translator is not None:  # the CLI talks plain http to the bridge: every request reaches the translator
                    base_url = f"http://127.0.0.1:{egress.port}{urlsplit(base_url).path}"
            launch = self.command(workspace, ctx, home, base_url, self.sandbox.workspace_path(workspace.root))
            env = {"PATH": BASE_PATH, "HOME": home, "LANG": "C.UTF-8", "TMPDIR": "/tmp", **launch.env}
            if egress is not None and egress.port == PROXY_PORT_IN_SANDBOX and translator is None:
                proxy_url = f"http://127.0.0.1:{PROXY_PORT_IN_SANDBOX}"
                env.update({"HTTPS_PROXY": proxy_url, "HTTP_PROXY": proxy_url, "https_proxy": proxy_url, "http_proxy": proxy_url})
            ro = [*program_paths(self.executable), *self.mounts]
            bin_dir = Path(shutil.which(self.executable) or self.executable).absolute().parent
            extra_path = [str(box.bin_dir)] if box.bin_dir else []
            if not str(bin_dir).startswith(SYSTEM_PREFIXES):
                extra_path.append(str(bin_dir))  # the program's folder shows only the program
            env["PATH"] = ":".join([*extra_path, env["PATH"]])
            env.update(box.env)
            ro = ro + box.ro_paths + [STAMP_SCRIPT]
            stamped = ["python3", str(STAMP_SCRIPT), *launch.argv]
            # a preflight probe inside the same mounts: a hidden path it can read stops the campaign
            self.sandbox.refuse_visible(workspace.root, env, ctx.hidden_paths, ro_paths=ro, hidden=ctx.hidden_paths,
                                        limits=self.limits)
            agent_version = self.version(workspace.root, env, ro, hidden=ctx.hidden_paths)
            argv, host_env = self.sandbox.wrap(toolbox.with_profile(stamped, box), workspace.root, env, ro_paths=ro,
                                               egress=egress, hidden=ctx.hidden_paths, limits=self.limits)
            if not self.sandbox.isolated:
                host_env = {**env, "PATH": f"{env['PATH']}:{os.environ.get('PATH', '')}"}
            stdout_path, stderr_path = ctx.evidence_dir / STDOUT_FILE, ctx.evidence_dir / STDERR_FILE
            watch = None
            if proxy is not None:
                watch = EndpointWatch(proxy.failing_for, lambda: check_endpoint(
                    self.base_url, chat=translator is not None, model=self.model or ctx.model, api_key=self.api_key),
                    self.endpoint_down_seconds)
            result = run_process(argv, host_env, cwd=workspace.root, stdout_path=stdout_path, stderr_path=stderr_path,
                                 timeout=ctx.remaining(), limits=self.limits, workspace=workspace.root,
                                 on_stop=self.sandbox.stop, stop_if=watch)
        finally:
            if proxy is not None:
                proxy.stop()
            self.sandbox.stop()
            if translator is not None:
                translator.close()
            shutil.rmtree(private, ignore_errors=True)
        if result.limit is None and proxy is not None and proxy.limit_hit is not None:
            result.limit = proxy.limit_hit  # the agent ran into the proxy's own bounds (connections, egress log)
        limit_error = result.limit_message(self.limits)
        write_json_atomic(ctx.evidence_dir / SANDBOX_RECORD, {
            "kind": self.sandbox.kind, "isolated": self.sandbox.isolated, "mounts": self.sandbox.mounts(ro),
            "limits": self.limits.describe(), "enforced_by": result.enforcement, "limit_exceeded": result.limit,
            "timed_out": result.timed_out, "returncode": result.returncode, "bytes_dropped": result.dropped,
            **({"egress_lines_dropped": proxy.log.dropped} if proxy is not None and proxy.log.dropped else {}),
        }, indent=1, sort_keys=True)
        stdout = stdout_path.read_text(encoding="utf-8", errors="replace")
        lines = self.transcript_lines(stdout)
        ctx.transcript.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        parsed = self.parse(stdout)
        limit = translator.limit_hit if translator is not None else None
        if result.timed_out:
            status, error, limit = "timeout", f"agent killed after the {ctx.timeout_seconds:g} s timeout", "timeout"
        elif result.stopped:
            status, error = "error", result.stopped
        elif limit == "token_budget":
            status, error = "error", f"token budget of {self.token_budget} tokens used up ({translator.usage.total_tokens} tokens)"
        elif limit_error:
            status, error, limit = "error", limit_error, result.limit
        elif result.returncode != 0:
            # the CLI's own error event says more than its last stderr line
            tail = stderr_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:] or [""]
            status, error = "error", f"{self.executable} exited with status {result.returncode}: {(parsed.error or tail[0])[:300]}"
        else:
            status, error = ("error" if parsed.error else "ok"), parsed.error
        if proxy is not None and limit in (None, "timeout") and (status != "ok" or output_if_written(workspace) is None):
            cause = endpoint_failure(ctx.evidence_dir / EGRESS_LOG, self.base_url, chat=translator is not None,
                                     model=self.model or ctx.model, api_key=self.api_key)
            if cause is not None:  # the endpoint's failure, on the harness's own evidence: not the agent's
                status, error, limit = RunStatus.HARNESS_ERROR, f"{cause}; {error or 'the agent wrote no output'}", None
        usage = accounted_usage(parsed, translator, ctx.evidence_dir / EGRESS_LOG, result.elapsed)
        served = set(parsed.served_models) | (translator.served_models if translator is not None else set())
        return AgentOutcome(status=status, output_csv=output_if_written(workspace), transcript=ctx.transcript,
                            usage=usage, isolated=self.sandbox.isolated, cost=None, error=error,
                            final_message=parsed.final_message, limit=limit,
                            agent_version=agent_version, served_models=tuple(sorted(served)))


def _busy_seconds(entries: list[dict]) -> float:
    """Seconds during which at least one request was in flight (overlapping attempts count once)."""
    spans = sorted((float(e["started"]), float(e["started"]) + float(e.get("seconds") or 0))
                   for e in entries if isinstance(e.get("started"), (int, float)))
    total, end = 0.0, None
    for start, stop in spans:
        if end is None or start > end:
            total += stop - start
            end = stop
        elif stop > end:
            total += stop - end
            end = stop
    return total


def _model_request(entry: dict) -> bool:
    """A POST the endpoint answered (not one the proxy answered itself because the endpoint failed)."""
    if entry.get("method") != "POST" or entry.get("upstream_error"):
        return False
    if entry.get("translated"):
        return bool(entry.get("model_request"))
    return isinstance(entry.get("status"), int)


def accounted_usage(parsed: Parsed, translator, egress_log: Path, elapsed: float) -> Usage:
    """The run's usage: tokens the endpoint reported (through the translator) or the CLI counted,
    HTTP requests and model seconds as the egress proxy saw them, the CLI's own cost as ``reported_cost``.

    ``requests`` counts the model requests the endpoint answered; attempts the proxy answered itself
    (502: the endpoint unreachable) are in ``http_requests`` only. ``model_seconds`` is the time at
    least one model request was in flight (overlapping retries count once), never more than the run's."""
    usage = translator.usage if translator is not None else parsed.usage
    usage = Usage(**vars(usage))
    allowed = [e for e in log_entries(egress_log) if e.get("allowed") and not e.get("tunnel_opened")]
    usage.http_requests = len(allowed)
    if allowed:  # model requests as the proxy saw them (Claude Code's num_turns counts turns, not requests)
        answered = sum(1 for e in allowed if _model_request(e))
        posted = any(e.get("method") == "POST" for e in allowed)
        usage.requests = answered if translator is not None or posted else usage.requests
        usage.model_seconds = min(elapsed, _busy_seconds([e for e in allowed if e.get("method") != "HEAD"]))
    usage.harness_seconds = max(0.0, elapsed - usage.model_seconds)
    usage.reported_cost = parsed.cost
    return usage
