"""Fail-closed isolation for external agents: Docker where an engine answers, else bubblewrap.

Inside the sandbox an agent sees the system's read-only program folders, its workspace
(the only writable path), a private /tmp and HOME, and whatever read-only paths its
program needs (``ro_paths``). It has no network but loopback: nothing on the host,
the reference database, the campaign store or other runs is reachable. If it must reach
its model endpoint, the harness runs an ``EgressProxy`` and mounts its unix socket; a
small bridge inside listens on loopback and forwards to that socket.

With neither Docker nor bubblewrap, ``choose_sandbox`` refuses unless the user passed
``--unsafe-no-isolation``; the run then executes directly and is recorded as not isolated.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from clinbench.errors import SandboxError

SANDBOX_HOME = "/tmp/home"
SANDBOX_WORKSPACE = "/workspace"  # a fixed path inside, so no host path (or its parents) exists there
EGRESS_DIR = "/run/clinbench"  # where the egress socket and bridge appear inside
BRIDGE_SCRIPT = Path(__file__).with_name("egress_bridge.py")
SYSTEM_RO = ("/usr", "/opt")
# Only the parts of /etc that programs need (users, libraries, certificates, shell profile):
# the rest of /etc (shadow, environment files, service credentials) stays out of view.
ETC_RO = ("passwd", "group", "hosts", "nsswitch.conf", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime",
          "alternatives", "ssl", "ca-certificates", "ca-certificates.conf", "pki", "profile", "profile.d", "bash.bashrc",
          "inputrc", "locale.alias", "locale.gen", "mime.types", "os-release", "debian_version", "terminfo", "gai.conf",
          "host.conf", "protocols", "services", "magic", "timezone", "xdg")
DOCKER_IMAGE_ENV = "CLINBENCH_DOCKER_IMAGE"


@dataclass
class Egress:
    """How the agent reaches its endpoint from inside: a unix socket and the loopback port of the bridge."""

    socket_path: Path
    port: int


@dataclass
class ProcessResult:
    returncode: int | None
    timed_out: bool
    elapsed: float


def _answers(cmd: list[str]) -> bool:
    try:
        return subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=15).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@functools.lru_cache(maxsize=1)
def docker_available() -> bool:
    return shutil.which("docker") is not None and _answers(["docker", "info"])


@functools.lru_cache(maxsize=1)
def bwrap_available() -> bool:
    """bwrap is installed and can create the namespaces we need on this kernel."""
    exe = shutil.which("bwrap")
    if exe is None:
        return False
    return _answers([exe, "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr",
                     *_usr_merge_links(), "--proc", "/proc", "--dev", "/dev", "true"])


def _usr_merge_links() -> list[str]:
    args: list[str] = []
    for name in ("bin", "sbin", "lib", "lib64", "lib32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), f"/{name}"]
        elif path.is_dir():
            args += ["--ro-bind", str(path), f"/{name}"]
    return args


class Sandbox:
    """Wraps an argv so that it runs isolated; ``kind`` is 'bwrap', 'docker' or 'none'."""

    kind = "none"
    isolated = False

    def wrap(self, argv: list[str], workspace: Path, env: dict[str, str], *, ro_paths: list[Path] = (),
             egress: Egress | None = None, hidden: list[Path] = ()) -> tuple[list[str], dict[str, str]]:
        """(argv, env) to run on the host; ``hidden`` paths must not be visible inside."""
        home = Path(env["HOME"])
        home.mkdir(parents=True, exist_ok=True)
        return list(argv), dict(env)

    def home_for(self, private_dir: Path) -> str:
        """The HOME the agent sees: a private folder on the host, or a tmpfs path inside."""
        return str(private_dir / "home")

    def workspace_path(self, workspace: Path) -> str:
        """Where the agent sees its workspace."""
        return str(Path(workspace).resolve())


class NoSandbox(Sandbox):
    """Direct execution (only with --unsafe-no-isolation)."""


class _Isolated(Sandbox):
    """What the isolating sandboxes share: fixed HOME and workspace paths inside, and the bridge."""

    def home_for(self, private_dir: Path) -> str:
        return SANDBOX_HOME

    def workspace_path(self, workspace: Path) -> str:
        return SANDBOX_WORKSPACE

    @staticmethod
    def _behind_bridge(argv: list[str], egress: Egress) -> list[str]:
        """``argv`` started only once the egress bridge listens on loopback inside."""
        return ["/bin/sh", "-c", 'python3 "$0" "$1" "$2" && shift 2 && exec "$@"',
                f"{EGRESS_DIR}/bridge.py", f"{EGRESS_DIR}/egress.sock", str(egress.port), *argv]


@dataclass
class BwrapSandbox(_Isolated):
    kind: str = "bwrap"
    isolated: bool = True
    extra_ro: list[Path] = field(default_factory=list)

    def wrap(self, argv, workspace, env, *, ro_paths=(), egress=None, hidden=()):
        ws = str(Path(workspace).resolve())
        args = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        for path in SYSTEM_RO:
            if Path(path).exists():
                args += ["--ro-bind", path, path]
        for name in ETC_RO:
            if Path("/etc", name).exists():
                args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
        args += _usr_merge_links()
        args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", SANDBOX_HOME]
        mounted = [*SYSTEM_RO, *(str(Path(p).resolve()) for p in [*self.extra_ro, *ro_paths])]
        for p in mounted[len(SYSTEM_RO):]:
            args += ["--ro-bind", p, p]
        # a reference, store or cache that happens to sit under a mounted folder is masked
        for path in hidden:
            path = Path(path).resolve()
            if path.exists() and any(path.is_relative_to(m) for m in mounted):
                args += ["--tmpfs", str(path)] if path.is_dir() else ["--ro-bind", "/dev/null", str(path)]
        args += ["--bind", ws, SANDBOX_WORKSPACE]
        args += _read_only_binds(ws, "--ro-bind")  # the shared masked database stays read-only inside
        inner = list(argv)
        if egress is not None:
            args += ["--dir", EGRESS_DIR, "--bind", str(egress.socket_path), f"{EGRESS_DIR}/egress.sock",
                     "--ro-bind", str(BRIDGE_SCRIPT), f"{EGRESS_DIR}/bridge.py"]
            inner = self._behind_bridge(argv, egress)
        args += ["--remount-ro", "/", "--chdir", SANDBOX_WORKSPACE, "--clearenv"]
        for key, value in env.items():
            args += ["--setenv", key, value]
        return args + ["--", *inner], {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


@dataclass
class DockerSandbox(_Isolated):
    """One container per run: no network (or only the mounted egress socket), the workspace the only mount."""

    kind: str = "docker"
    isolated: bool = True
    image: str = "clinbench-agent:latest"
    cpus: float = 2.0
    memory: str = "4g"

    def wrap(self, argv, workspace, env, *, ro_paths=(), egress=None, hidden=()):
        # only the workspace, the program and the egress socket are mounted: nothing else to hide
        ws = str(Path(workspace).resolve())
        args = ["docker", "run", "--rm", "-i", "--network", "none", "--cpus", str(self.cpus), "--memory", self.memory,
                "--read-only", "--tmpfs", "/tmp:exec", "--security-opt", "no-new-privileges", "--cap-drop", "ALL",
                "-v", f"{ws}:{SANDBOX_WORKSPACE}:rw", "-w", SANDBOX_WORKSPACE]
        args += _read_only_binds(ws, "-v")  # the shared masked database stays read-only inside
        for extra in ro_paths:
            p = str(Path(extra).resolve())
            args += ["-v", f"{p}:{p}:ro"]
        inner = list(argv)
        if egress is not None:
            args += ["-v", f"{egress.socket_path}:{EGRESS_DIR}/egress.sock", "-v", f"{BRIDGE_SCRIPT}:{EGRESS_DIR}/bridge.py:ro"]
            inner = self._behind_bridge(argv, egress)
        for key, value in env.items():
            args += ["-e", f"{key}={value}"]
        return args + [self.image, "/bin/sh", "-c", f'mkdir -p {SANDBOX_HOME} && exec "$@"', "sh", *inner], dict(os.environ)


def _read_only_binds(ws: str, flag: str) -> list[str]:
    """Mount arguments that keep the workspace's read-only files (its shared database) read-only inside."""
    from clinbench.derive.workspace import read_only_files

    args: list[str] = []
    for path in read_only_files(ws):
        inside = f"{SANDBOX_WORKSPACE}/{path.name}"
        args += [flag, str(path), inside] if flag == "--ro-bind" else [flag, f"{path}:{inside}:ro"]
    return args


def choose_sandbox(*, unsafe_no_isolation: bool = False, prefer: str | None = None) -> Sandbox:
    """The strongest sandbox this machine offers; refuse when there is none and no explicit unsafe flag."""
    if prefer not in (None, "docker", "bwrap"):
        raise SandboxError(f"unknown sandbox {prefer!r}: use bwrap or docker")
    if prefer in (None, "docker") and docker_available():
        return DockerSandbox(image=os.environ.get(DOCKER_IMAGE_ENV, DockerSandbox.image))
    if prefer in (None, "bwrap") and bwrap_available():
        return BwrapSandbox()
    if unsafe_no_isolation:
        return NoSandbox()
    raise SandboxError(
        "no sandbox available for an external agent (no Docker engine answers and bubblewrap is missing or "
        "cannot create namespaces): install bubblewrap (apt-get install bubblewrap), or pass "
        "--unsafe-no-isolation to run unisolated (runs are then marked not isolated)"
    )


def run_process(argv: list[str], env: dict[str, str], *, cwd: Path, stdout_path: Path, stderr_path: Path,
                timeout: float) -> ProcessResult:
    """Run argv in its own process group, kill the whole group on timeout."""
    start = time.monotonic()
    with stdout_path.open("wb") as out, stderr_path.open("wb") as err:
        try:
            proc = subprocess.Popen(argv, env=env, cwd=str(cwd), stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    start_new_session=True)
        except FileNotFoundError as exc:
            raise SandboxError(f"cannot start {argv[0]!r}: not found on PATH; install it or fix --agent-command") from exc
        try:
            rc = proc.wait(timeout=timeout)
            return ProcessResult(rc, False, time.monotonic() - start)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
            return ProcessResult(None, True, time.monotonic() - start)
        except BaseException:  # Ctrl-C / SIGTERM of the campaign: the agent's group must not outlive it
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
            raise
