"""Files in the workspace cache: where it is, its lock, and how a cached database is sealed.

A cached database is built under a file lock and renamed into place, then sealed: made
read-only (mode 0444) and stamped with its inode, size, mtime and mode, and its sha256. A later
use checks the stamp and rebuilds the file when anything wrote to it since; a run's own use
also checks the sha256 (``verified``), which a writer that restores the mtime cannot keep.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path

from clinbench.cache import cache_root


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


def seal(path: Path, *, checksum: bool = True) -> None:
    """Make a built database read-only and remember how it looks, so a later change is noticed
    (``checksum``: with its sha256, for a file workspaces use; a layer only ever copied needs none)."""
    from clinbench.atomic import write_json_atomic  # not at the top: a score needs only cache_dir (16 ms)

    os.chmod(path, 0o444)
    write_json_atomic(stamp_path(path), {"stamp": _stamp(path), "sha256": sha256_file(path) if checksum else None})


def _sealed(path: Path) -> dict:
    try:
        sealed = json.loads(stamp_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return sealed if isinstance(sealed, dict) else {}


def intact(path: Path) -> bool:
    """The cached file exists and is as it was sealed (inode, size, mtime, mode 0444)."""
    try:
        return _sealed(path).get("stamp") == _stamp(path)
    except OSError:
        return False


def verified(path: Path) -> bool:
    """``intact``, and its bytes still hash to the sha256 it was sealed with."""
    return intact(path) and sealed_sha256(path) == sha256_file(path)


def sealed_sha256(path: Path) -> str | None:
    """The sha256 the cached file was sealed with (None for a file sealed before checksums)."""
    return _sealed(path).get("sha256")


def sha256_file(path: Path) -> str:
    import hashlib  # not at the top: a score needs only cache_dir (hashlib's import is 20 ms)

    digest = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _stamp(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode & 0o777]
