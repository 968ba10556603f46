"""Run a sandboxed agent's process: its output read through pipes with a cap, its limits watched.

The agent never holds a descriptor to an evidence file: its stdout and stderr are pipes that
only the harness reads, and the harness writes what it read (up to ``Limits.log_bytes`` per
stream; the rest is counted and dropped) to the evidence files. The process runs in its own
session (killed as a group on timeout) and, where the machine allows it, in a cgroup of its
own that holds its memory and process limits and is emptied when the run ends.
"""

from __future__ import annotations

import os
import resource
import selectors
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from clinbench.agents.limits import COUNTS, Limits, RunCgroup, enforcement, human, rlimits
from clinbench.errors import SandboxError

DRAIN_GRACE_SECONDS = 2.0  # after the agent exits, how long a descendant may keep its pipes open
_XFSZ_CODES = (-signal.SIGXFSZ, 128 + signal.SIGXFSZ)
_STDERR_SIGNS = {  # what a program prints when a per-process limit stops it
    "file-size": ("file too large", "efbig"),
    "tmp": ("no space left on device", "enospc"),
    "memory": ("memoryerror", "cannot allocate memory", "out of memory", "bad_alloc"),
    "processes": ("resource temporarily unavailable", "cannot fork", "fork: retry"),
}


@dataclass
class ProcessResult:
    returncode: int | None
    timed_out: bool
    elapsed: float
    limit: str | None = None  # the limit that stopped the run ('memory', 'processes', 'disk', 'inodes', ...)
    dropped: dict[str, int] = field(default_factory=dict)  # bytes of stdout/stderr past the cap
    enforcement: dict[str, str] = field(default_factory=dict)
    stopped: str | None = None  # why ``stop_if`` ended the run early (its model endpoint is down)

    def limit_message(self, limits: Limits) -> str | None:
        if self.limit is None:
            return None
        value = limits.describe()[self.limit]
        shown = str(value) if self.limit in COUNTS else human(value)
        return f"limit exceeded: {self.limit} ({shown}; raise it with --limit {self.limit}=...)"


def disk_usage(root: Path) -> int:
    """Bytes under ``root`` as ``workspace_usage`` counts them."""
    return workspace_usage(root)[0]


MAX_DEPTH = 128  # folders nested deeper than this are not walked: the run counts as over its disk limit
UNCOUNTABLE = 1 << 62  # bytes and entries of a tree the watchdog could not walk whole: over every limit


def workspace_usage(root: Path) -> tuple[int, int]:
    """(bytes, files and folders) under ``root``: a file counts what it holds or what a copy of it would
    hold, whichever is more (its holes count: the output's copy into the evidence writes them as bytes),
    a hard-linked file counts once, symlinks are not followed.

    The tree is walked by folder descriptors (``os.fwalk``), so a path longer than PATH_MAX is walked too;
    a folder that cannot be opened (made unreadable) or is nested past ``MAX_DEPTH`` hides what it holds,
    so the whole count is ``UNCOUNTABLE`` (over every limit). A name removed while it is walked is skipped."""
    total, count, seen, hidden = 0, 0, set(), []

    def failed(exc: OSError) -> None:
        if not isinstance(exc, FileNotFoundError):  # gone meanwhile: nothing to count
            hidden.append(exc)

    top = os.fspath(root)
    depth0 = top.rstrip(os.sep).count(os.sep)
    try:
        for folder, dirs, files, fd in os.fwalk(top, onerror=failed, follow_symlinks=False):
            if dirs and folder.count(os.sep) - depth0 >= MAX_DEPTH:
                return UNCOUNTABLE, UNCOUNTABLE
            for name in dirs + files:
                try:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except FileNotFoundError:
                    continue
                count += 1
                if (st.st_dev, st.st_ino) in seen:
                    continue
                seen.add((st.st_dev, st.st_ino))
                total += max(st.st_blocks * 512, st.st_size if stat.S_ISREG(st.st_mode) else 0)
    except FileNotFoundError:  # the workspace itself is gone
        return 0, 0
    except OSError:  # the workspace itself, or a name in it, cannot be read
        return UNCOUNTABLE, UNCOUNTABLE
    return (UNCOUNTABLE, UNCOUNTABLE) if hidden else (total, count)


def sandbox_tmp_inodes(pid: int) -> int:
    """Inodes in use on the sandbox's own /tmp (a tmpfs, seen through a sandboxed process's root), or 0.

    ``statvfs`` reads the count at once, without walking the tree; empty files count, as they should."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return 0
    host_tmp = os.stat("/tmp").st_dev
    for child in children:
        tmp = f"/proc/{child}/root/tmp"
        try:
            if os.stat(tmp).st_dev == host_tmp:
                continue
            st = os.statvfs(tmp)
        except OSError:
            continue
        return max(0, st.f_files - st.f_ffree)
    return 0


def _preexec(values: dict[int, int], cgroup: RunCgroup | None) -> Callable[[], None]:
    """Set the run's rlimits and join its cgroup in the child, before bwrap (or the agent) starts."""
    current = {res: resource.getrlimit(res)[1] for res in values}
    pairs = [(res, min(v, current[res]) if current[res] != resource.RLIM_INFINITY else v) for res, v in values.items()]

    def apply() -> None:
        for res, value in pairs:
            resource.setrlimit(res, (value, value))
        if cgroup is not None:
            cgroup.join()

    return apply


def run_process(argv: list[str], env: dict[str, str], *, cwd: Path, stdout_path: Path, stderr_path: Path,
                timeout: float, limits: Limits | None = None, workspace: Path | None = None,
                on_stop: Callable[[], None] | None = None,
                stop_if: Callable[[], str | None] | None = None) -> ProcessResult:
    """Run ``argv`` under ``limits``; kill it (and everything it started) at ``timeout``, at a limit,
    or when ``stop_if`` gives a reason (asked about ten times a second)."""
    limits = limits or Limits()
    cgroup = RunCgroup.create(limits)
    start = time.monotonic()
    baseline, baseline_files = workspace_usage(workspace) if workspace is not None else (0, 0)
    try:
        proc = subprocess.Popen(argv, env=env, cwd=str(cwd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True, close_fds=True,
                                preexec_fn=_preexec(rlimits(limits, cgroup=cgroup is not None), cgroup))
    except FileNotFoundError as exc:
        if cgroup is not None:
            cgroup.close()
        raise SandboxError(f"cannot start {argv[0]!r}: not found on PATH; install it or fix --agent-command") from exc
    timed_out, limit, stopped = False, None, None
    kept = {"stdout": 0, "stderr": 0}
    dropped = {"stdout": 0, "stderr": 0}
    tails = {"stdout": b"", "stderr": b""}
    sel = selectors.DefaultSelector()
    with stdout_path.open("wb") as out, stderr_path.open("wb") as err:
        sinks = {"stdout": out, "stderr": err}
        sel.register(proc.stdout, selectors.EVENT_READ, "stdout")
        sel.register(proc.stderr, selectors.EVENT_READ, "stderr")
        next_disk = start + 0.5
        drain_until = None
        try:
            while True:
                now = time.monotonic()
                if proc.poll() is not None:
                    drain_until = drain_until or now + DRAIN_GRACE_SECONDS
                    if not sel.get_map() or now > drain_until:
                        break
                elif now - start > timeout:
                    timed_out = True
                    _stop(proc, on_stop)
                    continue
                elif stop_if is not None and (stopped := stop_if()) is not None:
                    _stop(proc, on_stop)
                    continue
                elif workspace is not None and now >= next_disk:
                    used, files = workspace_usage(workspace)
                    if used - baseline > limits.disk_bytes:
                        limit = "disk"
                    elif files - baseline_files + sandbox_tmp_inodes(proc.pid) > limits.inodes:
                        limit = "inodes"  # empty files take no bytes, but each is an inode of the harness's disk
                    if limit:
                        _stop(proc, on_stop)
                        continue
                    # a huge tree is walked less often, but at least once a second
                    next_disk = time.monotonic() + min(1.0, max(0.5, 10 * (time.monotonic() - now)))
                for key, _ in sel.select(timeout=0.1):
                    name = key.data
                    try:
                        chunk = os.read(key.fd, 1 << 16)
                    except OSError:
                        chunk = b""
                    if not chunk:
                        sel.unregister(key.fileobj)
                        continue
                    room = max(0, limits.log_bytes - kept[name])
                    if room:
                        sinks[name].write(chunk[:room])
                        kept[name] += min(room, len(chunk))
                    dropped[name] += max(0, len(chunk) - room)
                    tails[name] = (tails[name] + chunk)[-4096:]
        finally:
            sel.close()
            proc.stdout.close()
            proc.stderr.close()
            if proc.poll() is None:
                _stop(proc, on_stop)
            _killpg(proc.pid)  # whatever of its session outlived it
            if on_stop is not None:
                on_stop()
            if cgroup is not None and sys.exc_info()[0] is not None:  # Ctrl-C / SIGTERM of the campaign
                cgroup.close()
    hits = cgroup.hits() if cgroup is not None else []
    if cgroup is not None:
        cgroup.close()
    rc = None if timed_out or limit or stopped else proc.returncode
    if limit is None and hits:
        limit = hits[0]
    if limit is None and not timed_out and rc is not None and rc != 0:
        limit = _limit_from_exit(rc, tails["stderr"].decode("utf-8", "replace").lower())
    return ProcessResult(rc, timed_out, time.monotonic() - start, limit,
                         {k: v for k, v in dropped.items() if v}, enforcement(limits, cgroup), stopped)


def _limit_from_exit(rc: int, stderr_tail: str) -> str | None:
    if rc in _XFSZ_CODES:
        return "file-size"
    for name, signs in _STDERR_SIGNS.items():
        if any(sign in stderr_tail for sign in signs):
            return name
    return None


def _killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _stop(proc: subprocess.Popen, on_stop: Callable[[], None] | None) -> None:
    """Kill the process's session (and, for Docker, its container), then reap it."""
    _killpg(proc.pid)
    if on_stop is not None:
        on_stop()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
