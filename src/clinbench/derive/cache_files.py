"""Files in the workspace cache: where it is, its lock, and how a cached database is sealed.

A cached database is built under a file lock and renamed into place, then sealed: made
read-only (mode 0444) and stamped with its inode, size, mtime and mode, and its sha256. A later
use checks the stamp and rebuilds the file when anything wrote to it since; a run's own use
also checks the sha256 (``verified``), which a writer that restores the mtime cannot keep, unless
this process read the same stamp's bytes last (the run before, checked after it ended).
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


def lock_file(path: Path) -> Path:
    """The lock a cached database (or layer) at ``path`` is built, checked and removed under."""
    return path.with_suffix(".lock")


@contextlib.contextmanager
def lock(path: Path, *, wait: bool = True):
    """Hold the lock file ``path``; yields True. Without ``wait``, yields False at once when another
    holds it (the caller leaves the file alone)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def stamp_path(path: Path) -> Path:
    return path.with_suffix(".stamp.json")


def seal(path: Path, *, checksum: bool = True, source: dict[str, str] | None = None) -> None:
    """Make a built database read-only and remember how it looks, so a later change is noticed
    (``checksum``: with its sha256, for a file workspaces use; a layer only ever copied needs none).
    ``source``: the source the database was built for (``cache_prune.source``: machine, file,
    fingerprint), so a file no source can use again is found; None for a layer several fingerprints
    share (the raw layer)."""
    from clinbench.atomic import write_json_atomic  # not at the top: a score needs only cache_dir (16 ms)

    os.chmod(path, 0o444)
    sealed = {"stamp": _stamp(path), "sha256": sha256_file(path) if checksum else None}
    if source is not None:
        sealed["source"] = source
    write_json_atomic(stamp_path(path), sealed)


def sealed_source(path: Path) -> dict[str, str] | None:
    """The source the cached database was sealed for (``seal``); None when not recorded."""
    source = _sealed(path).get("source")
    if isinstance(source, dict) and all(isinstance(source.get(k), str) for k in ("host", "path", "fingerprint")):
        return source
    return None


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
    """``intact``, and its bytes still hash to the sha256 it was sealed with: read again unless this process
    read them last, at this same stamp (``sha256_file``: the previous run's check after it ended, or the seal).
    So each run reads a shared database once, not twice; a writer that restores the mtime between two runs is
    caught by the second run's own check after it (``campaign.execute``: that run is flagged, and the next use,
    whose recorded sha256 then differs, reads the file again and rebuilds it)."""
    try:
        st = path.stat()
    except OSError:
        return False
    sealed = _sealed(path)  # read once: its stamp (``intact``) and its sha256
    if sealed.get("stamp") != _stamp_of(st) or sealed.get("sha256") is None:
        return False
    last = _READ.get((st.st_dev, st.st_ino))
    return last == (_stamp_of(st), sealed["sha256"]) or sealed["sha256"] == sha256_file(path)


# (device, inode) -> (stamp, sha256) of the file's bytes as this process last read them whole: a bounded map of
# the few cached databases one process uses
_READ: dict[tuple[int, int], tuple[list[int], str]] = {}


def sealed_sha256(path: Path) -> str | None:
    """The sha256 the cached file was sealed with (None for a file sealed before checksums)."""
    return _sealed(path).get("sha256")


def sha256_file(path: Path) -> str:
    import hashlib  # not at the top: a score needs only cache_dir (hashlib's import is 20 ms)

    with Path(path).open("rb") as fh:
        before = os.fstat(fh.fileno())
        digest = hashlib.file_digest(fh, "sha256").hexdigest()  # one buffer: no block copies
        after = os.fstat(fh.fileno())
    if _stamp_of(before) == _stamp_of(after):  # not written while it was read: these bytes are the file's
        if len(_READ) >= 64:
            _READ.clear()
        _READ[(after.st_dev, after.st_ino)] = (_stamp_of(after), digest)
    return digest


def _stamp(path: Path) -> list[int]:
    return _stamp_of(path.stat())


def _stamp_of(st: os.stat_result) -> list[int]:
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode & 0o777]
