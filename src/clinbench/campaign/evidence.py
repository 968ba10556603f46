"""Evidence of a run: the folder ``DIR/runs/<run_id>/`` and its ``manifest.json``.

A run's evidence is assembled in ``DIR/.partial/<run_id>-<nonce>/`` and moved into place by
the process that records the run, right before it records it: a run killed in flight
leaves only a partial folder (removed on the next start), never a half-written run folder.

The manifest seals the evidence once, when the run ends, and is itself sealed: publishing a
run appends the sha256 of its manifest to the campaign's ``seals.jsonl``, a hash chain (each
line holds the sha256 of the line before), so a manifest edited afterwards (a reward raised, a
refusal cleared) no longer verifies. Only ``rescore`` writes into a sealed folder afterwards,
and only after the folder verifies (``reseal_score``, which appends a new seal).

An agent's ``output.csv`` is taken into evidence by ``take_output`` only if it is a regular
file of the workspace (not a symlink, FIFO, folder or device, not hard-linked elsewhere)
under the size cap; anything else is refused with the reason, recorded with the run.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import secrets
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from clinbench.atomic import write_json_atomic

RUNS_DIR = "runs"
PARTIAL_DIR = ".partial"
WORK_DIR = ".work"
MANIFEST = "manifest.json"
SCORE = "score.json"
OUTPUT = "output.csv"
SEALS = "seals.jsonl"
MANIFEST_CHANGED = f"{MANIFEST} (changed since it was sealed)"
_COPY_BLOCK = 1 << 20


def sha256_file(path: Path) -> str:
    with path.open("rb") as fh:  # file_digest reads into one buffer: no block copies (a rescore hashes every file)
        return hashlib.file_digest(fh, "sha256").hexdigest()


def run_dir(campaign_dir: Path, run_id: str) -> Path:
    return campaign_dir / RUNS_DIR / run_id


def new_partial_dir(campaign_dir: Path, run_id: str) -> Path:
    path = campaign_dir / PARTIAL_DIR / f"{run_id}-{secrets.token_hex(4)}"
    path.mkdir(parents=True)
    return path


def new_work_dir(campaign_dir: Path, run_id: str) -> Path:
    path = campaign_dir / WORK_DIR / f"{run_id}-{secrets.token_hex(4)}"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def write_json(path: Path, data: Any) -> None:
    write_json_atomic(path, data, indent=1, sort_keys=True, default=str)


def write_manifest(folder: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """Hash every file in the evidence folder; the manifest itself is written last."""
    files = {
        str(p.relative_to(folder)): {"sha256": sha256_file(p), "bytes": p.stat().st_size}
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    }
    manifest = {**meta, "files": files}
    write_json(folder / MANIFEST, manifest)
    return manifest


def take_output(source: Path, dest: Path, max_bytes: int) -> str | None:
    """Copy the agent's ``source`` (``<workspace>/output.csv``) to ``dest``; return why it was refused,
    or None when it was copied or never written.

    The file is opened without following a symlink (``O_NOFOLLOW``, relative to the workspace
    folder, itself opened without following one) and without blocking on a FIFO, then checked
    on the open descriptor: what is read is what was checked."""
    source = Path(source)
    try:
        dir_fd = os.open(source.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        return f"output.csv refused: its workspace folder cannot be opened ({exc.strerror})"
    try:
        try:
            st = os.lstat(source.name, dir_fd=dir_fd)
        except FileNotFoundError:
            return None
        kind = _kind(st.st_mode)
        if kind != "regular file":
            return f"output.csv refused: it is a {kind}, not a regular file in the workspace"
        try:
            fd = os.open(source.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
        except OSError as exc:
            return f"output.csv refused: it cannot be opened without following a link ({exc.strerror})"
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "rb") as src:
        st = os.fstat(src.fileno())
        kind = _kind(st.st_mode)
        if kind != "regular file":
            return f"output.csv refused: it is a {kind}, not a regular file in the workspace"
        if st.st_nlink != 1:
            return f"output.csv refused: it is hard-linked ({st.st_nlink} names), so it may be a file from outside the workspace"
        if st.st_size > max_bytes:
            return f"output.csv refused: {st.st_size} bytes, over the {max_bytes}-byte output cap (--limit output=...)"
        copied = 0
        with dest.open("wb") as out:
            while block := src.read(min(_COPY_BLOCK, max_bytes + 1 - copied)):
                copied += len(block)
                if copied > max_bytes:  # it grew while being copied
                    break
                out.write(block)
    if copied > max_bytes:
        dest.unlink()
        return f"output.csv refused: it grew past the {max_bytes}-byte output cap while being copied"
    return None


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISREG, "regular file"), (stat.S_ISLNK, "symbolic link"), (stat.S_ISDIR, "folder"),
                       (stat.S_ISFIFO, "FIFO (named pipe)"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISBLK, "block device")):
        if test(mode):
            return name
    return "special file"


def _last_line(path: Path) -> bytes:
    with path.open("rb") as fh:
        fh.seek(max(0, fh.seek(0, os.SEEK_END) - 4096))
        lines = fh.read().splitlines()
    return lines[-1] if lines else b""


def seal_manifest(folder: Path, campaign_dir: Path, run_id: str, *, sync: bool = True) -> None:
    """Append the sha256 of ``folder``'s manifest to the campaign's seal chain (under a lock). ``sync=False``
    leaves the line to the operating system (``sync_seals`` once after a batch: a rescore's 560 seals)."""
    path = Path(campaign_dir) / SEALS
    digest = sha256_file(folder / MANIFEST)
    with path.open("a+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            previous = _last_line(path) if path.stat().st_size else b""
            line = json.dumps({"run_id": run_id, "manifest_sha256": digest,
                               "prev": hashlib.sha256(previous).hexdigest() if previous else None}, sort_keys=True)
            fh.write(line.encode() + b"\n")
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def sync_seals(campaign_dir: Path) -> None:
    """Flush the seal chain to disk (after seals appended with ``sync=False``)."""
    path = Path(campaign_dir) / SEALS
    if path.is_file():
        with path.open("rb") as fh:
            os.fsync(fh.fileno())


def read_seals(campaign_dir: Path) -> tuple[dict[str, str], str | None]:
    """(run id -> sha256 of its latest sealed manifest, why the chain stops being trusted or None).
    Lines from the first broken link on are not trusted. Remembered per file size and mtime; a chain
    that only grew since (its earlier bytes unchanged) is read from where it was left."""
    path = Path(campaign_dir) / SEALS
    try:
        st = path.stat()
    except FileNotFoundError:
        return {}, f"manifest not sealed: the campaign has no {SEALS}"
    key = (str(path), st.st_size, st.st_mtime_ns, st.st_ino)
    if _SEALS_MEMO.get("key") != key:
        data = path.read_bytes()
        sealed: dict[str, str] = {}
        broken, previous, number, start = None, None, 0, 0
        memo = _SEALS_MEMO.get("state")
        if (memo is not None and memo["path"] == str(path) and memo["broken"] is None and memo["size"] <= len(data)
                and data[memo["size"] - 1:memo["size"]] == b"\n"
                and hashlib.sha256(data[:memo["size"]]).digest() == memo["digest"]):
            sealed, previous, number, start = dict(memo["sealed"]), memo["last"], memo["lines"], memo["size"]
        for raw in data[start:].splitlines():
            number += 1
            try:
                entry = json.loads(raw)
                ok = entry["prev"] == (hashlib.sha256(previous).hexdigest() if previous is not None else None)
            except (ValueError, KeyError, TypeError, RecursionError):
                ok = False
            if not ok:
                broken = f"manifest not sealed: {SEALS} is broken at line {number}"
                break
            sealed[entry["run_id"]] = entry["manifest_sha256"]
            previous = raw
        _SEALS_MEMO.clear()
        _SEALS_MEMO.update(key=key, value=(sealed, broken),
                           state={"path": str(path), "size": len(data), "digest": hashlib.sha256(data).digest(),
                                  "sealed": sealed, "last": previous, "lines": number, "broken": broken})
    return _SEALS_MEMO["value"]


_SEALS_MEMO: dict[str, Any] = {}


def seal_problem(folder: Path, manifest_sha256: str | None = None) -> str | None:
    """Why the manifest of the run folder ``DIR/runs/<run_id>`` (of sha256 ``manifest_sha256``, default: its
    file's) is not the one sealed for it (None when it is)."""
    sealed, broken = read_seals(folder.parent.parent)
    if folder.name not in sealed:
        return broken or f"manifest not sealed: {SEALS} has no seal for {folder.name}"
    digest = manifest_sha256 or sha256_file(folder / MANIFEST)
    return None if digest == sealed[folder.name] else MANIFEST_CHANGED


def verify_manifest(folder: Path, manifest: bytes | None = None) -> list[str]:
    """Files whose bytes no longer match the manifest, files added since it was written, and the
    manifest itself when it is not the one sealed for the run (empty when the evidence is intact).
    ``manifest``: the manifest's bytes when the caller has read them (they are what is checked)."""
    raw = (folder / MANIFEST).read_bytes() if manifest is None else manifest
    manifest = json.loads(raw)
    bad = [why] if (why := seal_problem(folder, hashlib.sha256(raw).hexdigest())) else []
    for name, entry in manifest["files"].items():
        path = folder / name
        if path.is_symlink() or not path.is_file() or sha256_file(path) != entry["sha256"]:
            bad.append(name)
    added = [name for name in _entries(folder) if name != MANIFEST and name not in manifest["files"]]
    return bad + [f"{name} (added)" for name in sorted(added, key=lambda name: name.split("/"))]


def _entries(folder: Path) -> Iterator[str]:
    """The name under ``folder`` of everything in it that is not a folder (files, links, even to folders,
    pipes...), at any depth, never through a link, and of each folder in it that cannot be read (what it
    holds is not known: rglob, 0.4 s of Python for a rescore's 560 runs, skipped it silently)."""
    stack = [""]
    while stack:
        prefix = stack.pop()
        try:
            with os.scandir(folder / prefix if prefix else folder) as it:
                entries = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in it]
        except OSError:  # unreadable, or gone since it was listed
            if not prefix:
                raise
            yield prefix.rstrip("/")
            continue
        for name, is_folder in entries:
            if is_folder:
                stack.append(prefix + name + "/")
            else:
                yield prefix + name


def reseal_score(folder: Path, score: Any, *, verified: bool = False, sync: bool = True, **meta: Any) -> None:
    """Replace the score of a sealed run whose evidence verifies (``verified``: the caller just checked):
    only ``score.json``'s hash changes in the manifest (with ``meta`` recorded), every other file keeps the
    hash it was sealed with. ``sync``: as ``seal_manifest``'s."""
    if not verified and (bad := verify_manifest(folder)):
        raise ValueError(f"evidence of {folder.name} fails verification ({', '.join(bad)}); it is not resealed")
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    write_json(folder / SCORE, score)
    manifest["files"][SCORE] = {"sha256": sha256_file(folder / SCORE), "bytes": (folder / SCORE).stat().st_size}
    manifest.update(meta)
    write_json(folder / MANIFEST, manifest)
    seal_manifest(folder, folder.parent.parent, folder.name, sync=sync)


def publish(partial: Path, campaign_dir: Path, run_id: str) -> Path:
    """Move a finished run's evidence into ``runs/<run_id>`` (replacing a stale copy)."""
    final = run_dir(campaign_dir, run_id)
    final.parent.mkdir(parents=True, exist_ok=True)
    seal_manifest(partial, campaign_dir, run_id)  # sealed before it is in place: a run in place is sealed
    if final.exists():
        shutil.rmtree(final)
    os.rename(partial, final)
    return final


def clear_leftovers(campaign_dir: Path) -> None:
    """Remove partial evidence and workspaces of runs that were in flight when a campaign died."""
    for name in (PARTIAL_DIR, WORK_DIR):
        shutil.rmtree(campaign_dir / name, ignore_errors=True)
