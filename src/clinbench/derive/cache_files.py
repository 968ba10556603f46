"""Files in the workspace cache: where it is, its lock, and how a cached database is sealed.

A cached database is built under a file lock and renamed into place, then sealed: made
read-only (mode 0444) and stamped with its inode, size, mtime and mode. A later use checks the
stamp and rebuilds the file when anything wrote to it since.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path

from clinbench.atomic import write_json_atomic


def cache_root() -> Path:
    """``$CLINBENCH_CACHE`` (default ``~/.cache/clinbench``): every cache of clinbench's lives under it."""
    return Path(os.environ.get("CLINBENCH_CACHE") or Path.home() / ".cache" / "clinbench")


def cache_dir() -> Path:
    return cache_root() / "workspaces"


@contextlib.contextmanager
def lock(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def stamp_path(path: Path) -> Path:
    return path.with_suffix(".stamp.json")


def seal(path: Path) -> None:
    """Make a built database read-only and remember how it looks, so a later change is noticed."""
    os.chmod(path, 0o444)
    write_json_atomic(stamp_path(path), _stamp(path))


def intact(path: Path) -> bool:
    """The cached file exists and is as it was sealed (inode, size, mtime, mode 0444)."""
    try:
        return json.loads(stamp_path(path).read_text(encoding="utf-8")) == _stamp(path)
    except (OSError, ValueError):
        return False


def _stamp(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode & 0o777]
