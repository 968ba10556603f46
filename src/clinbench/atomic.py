"""Atomic file writes: a reader sees the old file or the new one, never half of one.

Every writer builds its file under a temporary name in the destination's folder (so the
final rename stays on one file system) and renames it onto the destination only when it
is complete; on any exception, including KeyboardInterrupt, the temporary file is removed.
The temporary name is unique per process and call, so concurrent writers never share one;
it carries the writer's process id, so the next writer of the same file removes the temporary
files (and DuckDB logs) of a writer that was killed. A full disk or a read-only destination
is a one-line ``WriteError`` saying so.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from clinbench.duck import duckdb

_TEMP_PID = re.compile(r"\.tmp-(\d+)-")


def temp_name(path: Path) -> Path:
    """A fresh name beside ``path``: hidden, unique per process and call, same extension.

    The extension is kept because some writers choose a format from it (Chromium's
    ``--screenshot``, DuckDB's ``COPY ... TO``).
    """
    return path.with_name(f".{path.name}.tmp-{os.getpid()}-{os.urandom(4).hex()}{path.suffix}")


def remove_stale_temps(path: Path) -> list[Path]:
    """Remove the temporary files beside ``path`` left by writers that are no longer running."""
    removed = []
    try:
        candidates = list(path.parent.glob(f".{glob.escape(path.name)}.tmp-*"))
    except OSError:
        return removed
    for tmp in candidates:
        match = _TEMP_PID.match(tmp.name[len(path.name) + 1:])
        if match is None or _alive(int(match.group(1))):
            continue
        with suppress(OSError):
            if tmp.is_dir():
                shutil.rmtree(tmp)
            else:
                tmp.unlink()
            removed.append(tmp)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _storage_error(exc: BaseException, path: Path) -> BaseException:
    """``exc`` as a WriteError when it is a full disk or a read-only place, else ``exc`` itself."""
    from clinbench.write_errors import WriteError, explain, cannot_write

    if isinstance(exc, (OSError, duckdb.Error)) and cannot_write(exc):
        return WriteError(explain(exc, path))
    return exc


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it replaces ``path``, on failure it is removed.

    The temporary file is not created: the body writes it (DuckDB and Chromium insist on
    creating their files themselves).
    """
    path = Path(path)
    remove_stale_temps(path)
    tmp = temp_name(path)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException as exc:
        with suppress(OSError):
            tmp.unlink(missing_ok=True)
        translated = _storage_error(exc, path)
        if translated is not exc:
            raise translated from exc
        raise


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically, creating its folder if needed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return path


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8, ``\\n`` line ends on every platform) to ``path`` atomically."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: str | os.PathLike[str], data: Any, **dumps: Any) -> Path:
    """Write ``json.dumps(data, **dumps)`` to ``path`` atomically."""
    return write_text_atomic(path, json.dumps(data, **dumps))


@contextmanager
def atomic_database(path: str | os.PathLike[str]) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to a new DuckDB file that replaces ``path`` only once the body succeeds.

    The file is checkpointed and closed before the rename, so it carries no write-ahead log;
    a stale ``path.wal`` from an earlier database is removed first, since DuckDB would replay
    it onto the new file. On failure the temporary file and its log are removed.
    """
    path = Path(path)
    with atomic_path(path) as tmp:  # a full disk or read-only place becomes a WriteError there
        wal = _wal(tmp)
        try:
            con = duckdb.connect(str(tmp))
            try:
                yield con
                con.execute("CHECKPOINT")
            finally:
                con.close()
            _wal(path).unlink(missing_ok=True)
        finally:
            wal.unlink(missing_ok=True)


def _wal(path: Path) -> Path:
    return path.with_name(path.name + ".wal")


@contextmanager
def atomic_dir(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a fresh temporary folder beside ``path``; on success it is renamed to ``path``
    (which must not exist), on failure it is removed with everything in it."""
    import shutil

    path = Path(path)
    tmp = temp_name(path)
    tmp.mkdir()
    try:
        yield tmp
        os.rename(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
