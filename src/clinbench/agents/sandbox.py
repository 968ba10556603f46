"""Fail-closed isolation for external agents: bubblewrap, or Docker once a probe run succeeds.

Inside the sandbox an agent sees only: the system's read-only program folders (/usr, /opt and
a short list of /etc files), its workspace at ``/workspace`` (the only writable host path), a
private size-limited /tmp holding HOME, its own executable (the file, or for an npm install
the package tree), and folders the user names explicitly (``extra_ro`` / ``ro_paths``: the
toolbox, ``--agent-mount``). It has no network but its own loopback: nothing on the host,
the reference database, the campaign store or other runs is reachable. If it must reach its
model endpoint, the harness runs an ``EgressProxy`` and mounts its unix socket; a small
bridge inside listens on loopback and forwards to that socket.

Docker is used only when an engine answers, the agent image exists and a probe container
runs (``docker_available``); it is never chosen because a ``docker`` command exists. With
neither Docker nor bubblewrap, ``choose_sandbox`` refuses unless the user passed
``--unsafe-no-isolation``; the run then executes directly and is recorded as not isolated.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import secrets
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from clinbench.agents.limits import Limits
from clinbench.errors import SandboxError


class HiddenPathVisible(SandboxError):
    """A preflight probe inside the sandbox read a path that must stay hidden: the campaign stops."""

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
DOCKER_IMAGE = "clinbench-agent:latest"
DOCKERFILE = "Dockerfile"
DOCKER_UID = 1000  # the image's non-root user (see the Dockerfile)


@dataclass
class Egress:
    """How the agent reaches its endpoint from inside: a unix socket and the loopback port of the bridge."""

    socket_path: Path
    port: int


def _answers(cmd: list[str]) -> bool:
    try:
        return subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=15).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def docker_image() -> str:
    return os.environ.get(DOCKER_IMAGE_ENV, DOCKER_IMAGE)


@functools.lru_cache(maxsize=4)
def docker_unavailable_reason(image: str | None = None) -> str | None:
    """Why Docker cannot be used (None when it can): an engine must answer, the agent image must
    exist, and a probe container (no network, the image's non-root user) must run."""
    image = image or docker_image()
    if shutil.which("docker") is None:
        return "no docker command"
    if not _answers(["docker", "info"]):
        return "no Docker engine answers (docker info fails)"
    if not _answers(["docker", "image", "inspect", image]):
        return f"the agent image {image} is absent: build it with `docker build -t {image} .` (the repository's {DOCKERFILE})"
    if not _answers(["docker", "run", "--rm", "--network", "none", "--cap-drop", "ALL", image, "/bin/sh", "-c", "test \"$(id -u)\" != 0"]):
        return f"a probe container of {image} did not run as a non-root user"
    return None


def docker_available() -> bool:
    return docker_unavailable_reason() is None


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


def masked(hidden: list[Path], mounted: list[Path]) -> list[Path]:
    """The hidden paths (resolved) that exist and sit under (or are) a mounted path: those a
    sandbox must mask, wherever they live."""
    found = []
    for path in hidden:
        path = Path(path).resolve()
        if path.exists() and any(path.is_relative_to(m) for m in mounted) and path not in found:
            found.append(path)
    return found


# Run inside the sandbox: which of the paths it is given can be read (a non-empty file or folder).
PROBE = """import json, os, sys
seen = []
for p in sys.argv[1:]:
    try:
        if os.path.isdir(p):
            if os.listdir(p):
                seen.append(p)
        elif os.path.exists(p):
            with open(p, "rb") as fh:
                if fh.read(1):
                    seen.append(p)
    except OSError:
        pass
print(json.dumps(seen))
"""
PROBE_TIMEOUT_SECONDS = 60


class Sandbox:
    """Wraps an argv so that it runs isolated; ``kind`` is 'bwrap', 'docker' or 'none'."""

    kind = "none"
    isolated = False

    def visible(self, workspace: Path, env: dict[str, str], paths: list[Path], *, ro_paths: list[Path] = (),
                hidden: list[Path] = (), limits: Limits | None = None) -> list[str]:
        """Which of ``paths`` a program inside this sandbox (set up as for a run with these
        ``ro_paths`` and ``hidden``) can read: a preflight probe run inside, with ``python3``."""
        paths = [str(Path(p).resolve()) for p in paths if Path(p).exists()]
        if not paths or not self.isolated:
            return paths
        argv, host_env = self.wrap(["python3", "-c", PROBE, *paths], workspace, env, ro_paths=ro_paths,
                                   hidden=hidden, limits=limits)
        try:
            proc = subprocess.run(argv, env=host_env, cwd=workspace, capture_output=True, text=True,
                                  timeout=PROBE_TIMEOUT_SECONDS, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SandboxError(f"the hidden-path probe could not run inside the {self.kind} sandbox ({exc}); "
                               "nothing was run") from exc
        finally:
            self.stop()
        try:
            seen = json.loads(proc.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            tail = (proc.stderr.strip().splitlines() or [""])[-1][:200]
            raise SandboxError(f"the hidden-path probe did not run inside the {self.kind} sandbox (exit "
                               f"{proc.returncode}: {tail}); nothing was run") from None
        return [p for p in seen if p in paths]

    def refuse_visible(self, workspace: Path, env: dict[str, str], paths: list[Path], **kw) -> None:
        """Raise ``HiddenPathVisible`` when a probe inside the sandbox can read one of ``paths``
        (an unisolated run sees everything: it is marked not isolated instead)."""
        if self.isolated and (seen := self.visible(workspace, env, paths, **kw)):
            raise HiddenPathVisible(f"a hidden path is visible inside the {self.kind} sandbox: {', '.join(seen)} "
                                    "(the source database, campaign folder and cache must never be); move it out of "
                                    "the folders the sandbox shows, or report this as a bug; nothing was run")

    def wrap(self, argv: list[str], workspace: Path, env: dict[str, str], *, ro_paths: list[Path] = (),
             egress: Egress | None = None, hidden: list[Path] = (),
             limits: Limits | None = None) -> tuple[list[str], dict[str, str]]:
        """(argv, env) to run on the host; ``ro_paths`` are shown read-only at their own paths,
        ``hidden`` paths must not be visible inside."""
        home = Path(env["HOME"])
        home.mkdir(parents=True, exist_ok=True)
        return list(argv), dict(env)

    def stop(self) -> None:
        """Stop what outlives the wrapped process when it is killed, and remove what ``wrap`` made
        (called at a timeout and at the end of every run; may be called more than once)."""

    def home_for(self, private_dir: Path) -> str:
        """The HOME the agent sees: a private folder on the host, or a tmpfs path inside."""
        return str(private_dir / "home")

    def workspace_path(self, workspace: Path) -> str:
        """Where the agent sees its workspace."""
        return str(Path(workspace).resolve())

    def mounts(self, ro_paths: list[Path] = ()) -> list[str]:
        """The host paths shown to the agent besides the system folders (recorded in sandbox.json)."""
        return []


class NoSandbox(Sandbox):
    """Direct execution (only with --unsafe-no-isolation)."""


class _Isolated(Sandbox):
    """What the isolating sandboxes share: fixed HOME and workspace paths inside, and the bridge."""

    extra_ro: list[Path]

    def home_for(self, private_dir: Path) -> str:
        return SANDBOX_HOME

    def workspace_path(self, workspace: Path) -> str:
        return SANDBOX_WORKSPACE

    def mounts(self, ro_paths: list[Path] = ()) -> list[str]:
        return list(dict.fromkeys(str(Path(p).resolve()) if Path(p).is_dir() else str(Path(p).absolute())
                                  for p in [*self.extra_ro, *ro_paths]))

    @staticmethod
    def _behind_bridge(argv: list[str], egress: Egress) -> list[str]:
        """``argv`` started only once the egress bridge listens on loopback inside."""
        return ["/bin/sh", "-c", 'python3 "$0" "$1" "$2" && shift 2 && exec "$@"',
                f"{EGRESS_DIR}/bridge.py", f"{EGRESS_DIR}/egress.sock", str(egress.port), *argv]


@dataclass
class BwrapSandbox(_Isolated):
    kind: str = "bwrap"
    isolated: bool = True
    extra_ro: list[Path] = field(default_factory=list)  # folders or files shown read-only (e.g. a toolbox)

    def wrap(self, argv, workspace, env, *, ro_paths=(), egress=None, hidden=(), limits=None):
        limits = limits or Limits()
        ws = str(Path(workspace).resolve())
        args = ["bwrap", "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
                "--new-session", "--cap-drop", "ALL"]
        for path in SYSTEM_RO:
            if Path(path).exists():
                args += ["--ro-bind", path, path]
        for name in ETC_RO:
            if Path("/etc", name).exists():
                args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
        args += _usr_merge_links()
        args += ["--proc", "/proc", "--dev", "/dev", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp",
                 "--dir", SANDBOX_HOME]
        shown = self.mounts(ro_paths)
        for p in shown:
            # a file is bound at the path the agent calls it by; its folder is not shown
            args += ["--ro-bind", str(Path(p).resolve()), p]
        # a reference, store or cache under any mounted folder (a system folder included) is masked
        system = [Path(p) for p in SYSTEM_RO] + [Path("/etc", n) for n in ETC_RO]
        for path in masked(hidden, [*system, *map(Path, shown)]):
            args += ["--tmpfs", str(path)] if path.is_dir() else ["--ro-bind", "/dev/null", str(path)]
        args += ["--bind", ws, SANDBOX_WORKSPACE]
        args += _read_only_binds(ws, "--ro-bind")  # the shared masked database stays read-only inside
        inner = list(argv)
        if egress is not None:
            args += ["--dir", EGRESS_DIR, "--bind", str(egress.socket_path), f"{EGRESS_DIR}/egress.sock",
                     "--ro-bind", str(BRIDGE_SCRIPT), f"{EGRESS_DIR}/bridge.py"]
            inner = self._behind_bridge(argv, egress)
        args += ["--remount-ro", "/", "--chdir", SANDBOX_WORKSPACE]
        # the run's environment is bwrap's own, which the agent inherits: never --setenv, whose
        # values (API keys) any local user reads in /proc/<pid>/cmdline; bwrap is named by its
        # full path since the environment's PATH is the one inside
        args[0] = shutil.which("bwrap") or "bwrap"
        return args + ["--", *inner], dict(env)


@dataclass
class DockerSandbox(_Isolated):
    """One named container per run, as the image's non-root user: no network (or only the mounted
    egress socket), a read-only root, the workspace the only writable mount; the environment
    (API keys included) goes in through an env-file, never on the command line."""

    kind: str = "docker"
    isolated: bool = True
    image: str = DOCKER_IMAGE
    cpus: float = 2.0
    extra_ro: list[Path] = field(default_factory=list)
    name: str | None = None  # the container of the current run
    _private: Path | None = None

    def wrap(self, argv, workspace, env, *, ro_paths=(), egress=None, hidden=(), limits=None):
        limits = limits or Limits()
        # only the workspace, the program, named folders and the egress socket are mounted
        ws = str(Path(workspace).resolve())
        self.stop()
        self.name = f"clinbench-{secrets.token_hex(6)}"
        self._private = Path(tempfile.mkdtemp(prefix="cb-docker-"))
        env_file = self._private / "env"
        fd = os.open(env_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            for key, value in env.items():
                if "\n" in value:
                    raise SandboxError(f"environment variable {key} holds a newline; it cannot go through an env-file")
                fh.write(f"{key}={value}\n")
        args = ["docker", "run", "--rm", "-i", "--name", self.name, "--network", "none",
                "--cpus", str(self.cpus), "--memory", str(limits.memory_bytes), "--memory-swap", str(limits.memory_bytes),
                "--pids-limit", str(limits.processes), "--ulimit", f"fsize={limits.file_size_bytes}",
                "--ulimit", "core=0", "--read-only", "--tmpfs", f"/tmp:exec,size={limits.tmp_bytes}",
                "--security-opt", "no-new-privileges", "--cap-drop", "ALL",
                "--env-file", str(env_file), "-v", f"{ws}:{SANDBOX_WORKSPACE}:rw", "-w", SANDBOX_WORKSPACE]
        if os.getuid() != 0:
            args += ["--user", f"{os.getuid()}:{os.getgid()}"]  # writes to the workspace as the harness's user
        else:  # the image's own non-root user (uid DOCKER_UID) writes to the workspace
            _give_to(Path(ws), DOCKER_UID)
        args += _read_only_binds(ws, "-v")  # the shared masked database stays read-only inside
        shown = self.mounts(ro_paths)
        for p in shown:
            args += ["-v", f"{Path(p).resolve()}:{p}:ro"]
        for path in masked(hidden, list(map(Path, shown))):  # the image's own /usr and /opt hold no host file
            args += ["--mount", f"type=tmpfs,destination={path}"] if path.is_dir() else ["-v", f"/dev/null:{path}:ro"]
        inner = list(argv)
        if egress is not None:
            args += ["-v", f"{egress.socket_path}:{EGRESS_DIR}/egress.sock", "-v", f"{BRIDGE_SCRIPT}:{EGRESS_DIR}/bridge.py:ro"]
            inner = self._behind_bridge(argv, egress)
        host_env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "DOCKER_HOST", "DOCKER_CONFIG", "DOCKER_CONTEXT")}
        return args + [self.image, "/bin/sh", "-c", f'mkdir -p {SANDBOX_HOME} && exec "$@"', "sh", *inner], host_env

    def stop(self) -> None:
        if self.name is not None:
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                subprocess.run(["docker", "kill", self.name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30)
        if self._private is not None:
            shutil.rmtree(self._private, ignore_errors=True)
            self._private = None


def _read_only_binds(ws: str, flag: str) -> list[str]:
    """Mount arguments that keep the workspace's read-only files (its shared database) read-only inside."""
    from clinbench.derive.workspace import read_only_files

    args: list[str] = []
    for path in read_only_files(ws):
        inside = f"{SANDBOX_WORKSPACE}/{path.name}"
        args += [flag, str(path), inside] if flag == "--ro-bind" else [flag, f"{path}:{inside}:ro"]
    return args


def _give_to(root: Path, uid: int) -> None:
    """Hand a workspace to the container's user (symlinks are changed, never followed); its
    read-only files (the shared masked database, a link to the cache) keep their owner."""
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files, None]:
            path = os.path.join(folder, name) if name else folder
            with contextlib.suppress(OSError):
                if os.lstat(path).st_mode & 0o222:
                    os.chown(path, uid, uid, follow_symlinks=False)


def choose_sandbox(*, unsafe_no_isolation: bool = False, prefer: str | None = None,
                   extra_ro: list[Path] = ()) -> Sandbox:
    """The strongest sandbox this machine offers; refuse when there is none and no explicit unsafe flag.

    Docker is chosen only when ``docker_available`` (engine, image and a probe run); asked for
    by name and unusable, it is an error that says why."""
    if prefer not in (None, "docker", "bwrap"):
        raise SandboxError(f"unknown sandbox {prefer!r}: use bwrap or docker")
    if prefer in (None, "docker") and docker_available():
        return DockerSandbox(image=docker_image(), extra_ro=list(extra_ro))
    if prefer == "docker":
        raise SandboxError(f"--sandbox docker: {docker_unavailable_reason() or 'Docker is not usable'}; "
                           "or use --sandbox bwrap")
    if bwrap_available():
        return BwrapSandbox(extra_ro=list(extra_ro))
    if unsafe_no_isolation:
        return NoSandbox()
    raise SandboxError(
        "no sandbox available for an external agent (no Docker engine with the agent image, and bubblewrap is "
        "missing or cannot create namespaces): install bubblewrap (apt-get install bubblewrap), or pass "
        "--unsafe-no-isolation to run unisolated (runs are then marked not isolated)"
    )
