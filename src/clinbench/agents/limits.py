"""Resource limits of a sandboxed agent run: memory, processes, file size, disk, output, logs.

Each limit is configurable (``clinbench run --limit memory=2g --limit processes=256``) and
recorded with the run (``sandbox.json`` in its evidence). How each is enforced:

* memory and processes: a cgroup of the run's own (cgroup v2, or the v1 ``memory`` and
  ``pids`` controllers) when the harness may create one; otherwise ``RLIMIT_DATA`` per
  process for memory and, for a non-root user, ``RLIMIT_NPROC`` (which the kernel does not
  apply to root: without a cgroup, root runs have no process limit, and ``sandbox.json`` says so);
* file size: ``RLIMIT_FSIZE`` (a write past it fails with EFBIG, or SIGXFSZ kills the writer);
* disk: a size-limited tmpfs for ``/tmp`` (and HOME under it), and a watchdog that ends the
  run when the workspace grows by more than ``disk`` bytes;
* output: ``output.csv`` larger than ``output`` bytes is refused, not copied;
* logs: the agent's stdout and stderr are kept up to ``log`` bytes each; the rest is counted, not kept;
  the egress proxy's ``egress.jsonl`` holds at most ``log`` bytes (past it every request is refused);
* inodes: files and folders the run may add to the workspace and its ``/tmp`` together (the disk
  watchdog counts them: empty files take no bytes, so ``disk`` alone does not bound them);
* connections: egress connections open at once (each holds one harness thread; more are refused).

Exceeding one is a failed run whose error names the limit.
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import secrets
import signal
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from clinbench.errors import SandboxError

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
CGROUP_ROOT = Path("/sys/fs/cgroup")
_UNITS = {"": 1, "b": 1, "k": KiB, "kb": KiB, "kib": KiB, "m": MiB, "mb": MiB, "mib": MiB,
          "g": GiB, "gb": GiB, "gib": GiB, "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}
# what each --limit key sets, and the field it sets
KEYS = {"memory": "memory_bytes", "processes": "processes", "file-size": "file_size_bytes", "disk": "disk_bytes",
        "tmp": "tmp_bytes", "output": "output_bytes", "log": "log_bytes", "inodes": "inodes", "connections": "connections"}
COUNTS = ("processes", "inodes", "connections")  # limits that are numbers of things, not sizes


@dataclass(frozen=True)
class Limits:
    """Defaults sit well above what a real run needs (the largest full-MIMIC reference is ~0.5 GB)."""

    memory_bytes: int = 8 * GiB
    processes: int = 1024  # tasks: threads count too
    file_size_bytes: int = 4 * GiB
    disk_bytes: int = 16 * GiB  # growth of the workspace during the run
    tmp_bytes: int = 2 * GiB  # the sandbox's /tmp (HOME lives under it)
    output_bytes: int = 2 * GiB  # output.csv
    log_bytes: int = 32 * MiB  # each of stdout, stderr, egress.jsonl
    inodes: int = 100_000  # files and folders added to the workspace and /tmp
    connections: int = 32  # egress connections open at once

    def with_(self, **changes: int) -> Limits:
        return Limits(**{**asdict(self), **changes})

    def describe(self) -> dict[str, int]:
        return {key: getattr(self, attr) for key, attr in KEYS.items()}


def parse_size(text: str) -> int:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    if not match or match.group(2).lower() not in _UNITS:
        raise SandboxError(f"cannot read {text!r} as a size: write e.g. 512m, 2g or 1048576")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


def parse_limits(items: list[str] | tuple[str, ...], base: Limits | None = None) -> Limits:
    """``["memory=2g", "processes=64"]`` on top of ``base`` (the defaults)."""
    changes: dict[str, int] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip().lower()
        if not sep or key not in KEYS:
            raise SandboxError(f"--limit {item!r}: write KEY=VALUE with KEY one of {', '.join(KEYS)}")
        number = int(value) if key in COUNTS and value.strip().isdigit() else parse_size(value)
        if number <= 0:
            raise SandboxError(f"--limit {item!r}: a limit must be positive")
        changes[KEYS[key]] = number
    return (base or Limits()).with_(**changes)


def human(n: int) -> str:
    for unit, size in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if n >= size:
            return f"{n / size:.4g} {unit}"
    return f"{n} bytes"


# -- cgroups -----------------------------------------------------------------------------
def _own_cgroup(controller: str | None) -> str | None:
    """This process's cgroup path for a v1 controller (or v2 when ``controller`` is None)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, names, path = line.split(":", 2)
        if (controller is None and names == "") or (controller is not None and controller in names.split(",")):
            return path
    return None


class RunCgroup:
    """A cgroup for one run: memory and process limits, and whether either was hit."""

    def __init__(self, dirs: dict[str, Path], version: int):
        self.dirs = dirs  # controller ('memory', 'pids') -> folder; v2: both the same folder
        self.version = version

    @classmethod
    def create(cls, limits: Limits) -> RunCgroup | None:
        """A fresh cgroup with the limits set, or None when this machine does not let us make one."""
        name = f"clinbench-{os.getpid()}-{secrets.token_hex(4)}"
        made: list[Path] = []
        try:
            v2 = CGROUP_ROOT / "cgroup.controllers"
            if v2.is_file() and {"memory", "pids"} <= set(v2.read_text().split()):
                base = CGROUP_ROOT / (_own_cgroup(None) or "/").lstrip("/")
                folder = base / name
                folder.mkdir()
                made.append(folder)
                (folder / "memory.max").write_text(str(limits.memory_bytes))
                with contextlib.suppress(OSError):
                    (folder / "memory.swap.max").write_text("0")
                (folder / "pids.max").write_text(str(limits.processes))
                return cls({"memory": folder, "pids": folder}, 2)
            dirs = {}
            for controller in ("memory", "pids"):
                root = CGROUP_ROOT / controller
                own = _own_cgroup(controller)
                if not root.is_dir() or own is None:
                    return None
                folder = root / own.lstrip("/") / name
                folder.mkdir()
                made.append(folder)
                dirs[controller] = folder
            (dirs["memory"] / "memory.limit_in_bytes").write_text(str(limits.memory_bytes))
            (dirs["pids"] / "pids.max").write_text(str(limits.processes))
            return cls(dirs, 1)
        except OSError:
            for folder in reversed(made):
                with contextlib.suppress(OSError):
                    folder.rmdir()
            return None

    def procs_files(self) -> list[str]:
        return sorted({str(d / "cgroup.procs") for d in self.dirs.values()})

    def join(self) -> None:
        """Move the calling process in (run in the child before exec: everything it starts stays in)."""
        pid = str(os.getpid())
        for path in self.procs_files():
            with open(path, "w") as fh:
                fh.write(pid)

    def _counter(self, file: str, key: str) -> int:
        controller = "memory" if file.startswith("memory") else "pids"
        try:
            for line in (self.dirs[controller] / file).read_text().splitlines():
                name, _, value = line.partition(" ")
                if name == key:
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def hits(self) -> list[str]:
        """Which limits stopped something: 'memory' (a process was OOM-killed), 'processes' (a fork failed)."""
        hit = []
        oom = self._counter("memory.events", "oom_kill") if self.version == 2 else self._counter("memory.oom_control", "oom_kill")
        if oom:
            hit.append("memory")
        if self._counter("pids.events", "max"):
            hit.append("processes")
        return hit

    def close(self) -> None:
        """Kill whatever is left inside and remove the cgroup."""
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            pids = set()
            for path in self.procs_files():
                with contextlib.suppress(OSError):
                    pids |= {int(p) for p in Path(path).read_text().split()}
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.02)
        for folder in {*self.dirs.values()}:
            for _ in range(50):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


# -- per-process limits -------------------------------------------------------------------
def rlimits(limits: Limits, *, cgroup: bool) -> dict[int, int]:
    """The setrlimit values for the sandbox's first process (its children inherit them)."""
    values = {resource.RLIMIT_FSIZE: limits.file_size_bytes, resource.RLIMIT_CORE: 0}
    if not cgroup:
        values[resource.RLIMIT_DATA] = limits.memory_bytes
        if os.geteuid() != 0:
            # counts every process of this user: allow the ones already running plus the limit
            values[resource.RLIMIT_NPROC] = _processes_of_this_user() + limits.processes
    return values


def _processes_of_this_user() -> int:
    uid, count = os.getuid(), 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == uid:
                    count += 1
    return count


def enforcement(limits: Limits, cgroup: RunCgroup | None) -> dict[str, str]:
    """How each limit is enforced on this run (recorded in sandbox.json)."""
    by_cgroup = f"cgroup v{cgroup.version}" if cgroup else None
    return {
        "memory": by_cgroup or "RLIMIT_DATA (per process)",
        "processes": by_cgroup or ("RLIMIT_NPROC (per user)" if os.geteuid() != 0 else "not enforced (root without a cgroup)"),
        "file-size": "RLIMIT_FSIZE",
        "disk": "workspace watchdog",
        "tmp": "tmpfs size",
        "output": "harness refuses a larger output.csv",
        "log": "harness keeps at most this much of stdout, of stderr and of egress.jsonl",
        "inodes": "workspace watchdog (workspace walk; bwrap: + the sandbox's /tmp by statvfs)",
        "connections": "egress proxy",
    }
