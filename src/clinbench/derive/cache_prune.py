"""Cached masked databases no source can use again: listed, and removed.

Each masked database in the workspace cache, and each shared layer, is built for one fingerprint of
one source file (``workspace.read_catalog``: its size, mtime and catalogue) and sealed with both and
the machine's name (``source``, ``cache_files.seal``). Once that file changes (a `concepts build`, a
reference built on demand, a new `data load` over it) no key can name the old databases again, and
on full MIMIC-IV each is about as large as the source. So:

- ``prune_superseded`` removes a source's databases of other fingerprints once one is built for its
  current fingerprint (``workspace.prepare_database``);
- `clinbench data cache` lists the cache by source and state (``entries``, ``states``) and, with
  ``--prune``, removes the superseded ones and those whose source file is gone; with ``--all``,
  every masked database (each is built again on first use).

Only this machine's sources are judged: a cache shared by several machines (Ray workers) holds
databases of files that are theirs, which may sit at the same path with other contents.

A file is removed only under its own lock, taken without waiting: one being built or checked is left
for next time. A workspace holding a hard link to a removed file keeps its bytes (the inode stays).
The raw layers are not here: several fingerprints share one (``raw_layer`` keeps the newest few).
Databases sealed before sources were recorded are "unrecorded": only ``--all`` removes them.
"""

from __future__ import annotations

import socket
from pathlib import Path

from clinbench.derive.cache_files import cache_dir, lock, lock_file, sealed_source, stamp_path
from clinbench.errors import ClinbenchError
from clinbench.plain import Frozen
from clinbench.write_errors import WriteError, explain

CURRENT, SUPERSEDED, GONE, UNRECORDED, UNREADABLE = "current", "superseded", "source gone", "unrecorded", "unreadable"
ELSEWHERE = "another machine's"
REMOVED_BY_PRUNE = (SUPERSEDED, GONE)


def source(db_path: Path, fingerprint: str) -> dict[str, str]:
    """What a cached database is sealed with: this machine, the source file and its fingerprint."""
    return {"host": socket.gethostname(), "path": str(Path(db_path).resolve()), "fingerprint": fingerprint}


class Entry(Frozen):
    """A cached masked database (or shared layer): its file, size in bytes, and the machine, source
    file and fingerprint it was sealed for (None when not recorded)."""

    def __init__(self, path: Path, size: int, host: str | None, source: str | None, fingerprint: str | None) -> None:
        self._set(path=path, size=size, host=host, source=source, fingerprint=fingerprint)


def entries(root: Path | None = None) -> list[Entry]:
    """Every masked database and shared layer in the cache (not the raw layers, nor a writer's hidden
    temporary file, ``atomic.temp_name``), by name."""
    root = root or cache_dir()
    found = []
    for path in sorted(root.glob("*.duckdb")) if root.is_dir() else []:
        if path.name.startswith("."):  # being written: renamed into place when complete
            continue
        try:
            size = path.stat().st_size
        except OSError:  # removed meanwhile
            continue
        sealed = sealed_source(path) or {}
        found.append(Entry(path, size, sealed.get("host"), sealed.get("path"), sealed.get("fingerprint")))
    return found


def states(found: list[Entry]) -> dict[Path, str]:
    """Each entry's state: current (its source file holds what it was built for), superseded (the file
    changed since), source gone, unrecorded, unreadable (the source cannot be opened now), or another
    machine's (not judged here)."""
    from clinbench.derive.workspace import read_catalog  # workspace imports this module

    here = socket.gethostname()
    now: dict[str, str | None] = {}
    for file in sorted({e.source for e in found if e.source and e.host == here}):
        path = Path(file)
        if not path.is_file():
            now[file] = GONE
            continue
        try:
            now[file] = read_catalog(path)[0]
        except (ClinbenchError, OSError):
            now[file] = None
    out = {}
    for e in found:
        if e.source is None:
            out[e.path] = UNRECORDED
        elif e.host != here:
            out[e.path] = ELSEWHERE
        elif now[e.source] == GONE:
            out[e.path] = GONE
        elif now[e.source] is None:
            out[e.path] = UNREADABLE
        else:
            out[e.path] = CURRENT if now[e.source] == e.fingerprint else SUPERSEDED
    return out


def remove(path: Path) -> bool:
    """Remove a cached database and its seal and mapping, under its lock taken without waiting; False
    (nothing removed) when another process holds the lock. Raises WriteError when the cache's folder
    does not let it (read-only, not this user's)."""
    try:
        with lock(lock_file(path), wait=False) as held:
            if not held:
                return False
            for part in (path, path.with_name(path.name + ".wal"), path.with_suffix(".mapping.json"),
                         stamp_path(path)):
                part.unlink(missing_ok=True)  # the database first: a seal without it is never read as intact
            return True
    except OSError as exc:
        raise WriteError(explain(exc, path) or f"cannot remove {path}: {exc.strerror or exc}") from exc


def prune_superseded(built: dict[str, str]) -> list[Path]:
    """Remove the cached databases sealed for the file of ``built`` (``source``) on this machine with
    another fingerprint; the removed. Housekeeping after a build: a file it cannot remove stays (for
    `clinbench data cache` to report), the build stands."""
    removed = []
    for e in entries():
        if (e.host, e.source) == (built["host"], built["path"]) and e.fingerprint != built["fingerprint"]:
            try:
                if remove(e.path):
                    removed.append(e.path)
            except WriteError:
                pass
    return removed


def removable(found: list[Entry], state: dict[Path, str]) -> list[Entry]:
    """The entries no source can use again (what ``prune`` removes): superseded, or their source is gone."""
    return [e for e in found if state[e.path] in REMOVED_BY_PRUNE]


def prune(found: list[Entry], state: dict[Path, str], *, everything: bool = False) -> tuple[list[Entry], list[Entry]]:
    """(removed, left because in use): the ``removable`` entries, or with ``everything`` every entry."""
    removed, busy = [], []
    for e in found if everything else removable(found, state):
        (removed if remove(e.path) else busy).append(e)
    return removed, busy
