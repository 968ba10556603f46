"""DuckDB's engine as clinbench uses it: the C extension the ``duckdb`` package wraps.

DuckDB >= 2.0's ``duckdb`` package lays a Python relational API over its extension ``_duckdb``
(200 kB of Python and ``importlib.metadata`` for its version: 40-110 ms to import (measured), paid by
every ``score``, ``rescore`` and ``run`` process: benchmarks/score_vs_m4bench.py). Connections,
``execute``/``fetch*``, the exceptions, ``StatementType``, ``extract_statements`` and ``__version__``
are the extension's own objects, the same ones ``duckdb`` re-exports, so modules import ``duckdb``
from here. The package is imported only where its Python layer is used (tests/test_layering.py lists
each place): Arrow exchange (synth's scans of pyarrow tables, the store's runs table) and the agent's
sandbox (agents/toolbox.py mounts the package's folder; agents/duckdb_shell.py runs in there with it
alone). An older DuckDB, without ``_duckdb``, is imported whole.

Database files that other processes may hold (a source database while another campaign builds its
references on demand) are opened through ``when_free`` / ``connect_when_free``: a lock conflict is waited
out, saying who holds the file, instead of failing at once.
"""

from __future__ import annotations

# all loaded by DuckDB's own import anyway (``import _duckdb`` imports re, typing and collections.abc):
# nothing here is added to `clinbench score`'s start
import os
import re
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from pathlib import Path

T = TypeVar("T")

try:
    import _duckdb as duckdb
except ImportError:  # DuckDB < 2.0
    import duckdb  # type: ignore[no-redef]

__all__ = ["RELATIONS", "connect_meanwhile", "connect_when_free", "duckdb", "held_too_long", "lock_holder", "out_of_memory",
           "when_free"]

# How long an open of a database file waits while another process holds it (a build that clinbench
# runs on demand, another campaign preparing its tasks, a notebook; CLINBENCH_LOCK_WAIT sets it), and
# how often it says so.
LOCK_WAIT_SECONDS = 600.0
LOCK_NOTICE_SECONDS = 30.0
_LOCK_HOLDER = re.compile(r"Conflicting lock is held in (\S+) \(PID (\d+)\)")

# What a database holds, for any question about which tables it has: its tables and its views, as one
# relation (database_name, schema_name, table_name). A source table may be a view: M4 makes its databases
# of views over Parquet files.
RELATIONS = ("(SELECT database_name, schema_name, table_name FROM duckdb_tables() "
             "UNION ALL SELECT database_name, schema_name, view_name FROM duckdb_views() WHERE NOT internal)")


def connect_meanwhile():
    """Start an in-memory DuckDB on another thread and return a function that waits for it.

    Starting DuckDB takes 20-30 ms (its catalogue of functions) and holds no Python lock, so a process
    that imports its Python modules in the meantime (``clinbench score``) ends that much sooner. The
    function returns the connection, or raises what the start raised."""
    import threading

    box: list = []

    def start() -> None:
        try:
            box.append(duckdb.connect())
        except BaseException as exc:  # noqa: BLE001 - raised in the thread that waits
            box.append(exc)

    thread = threading.Thread(target=start, name="duckdb-start", daemon=True)
    thread.start()

    def wait():
        thread.join()
        if isinstance(box[0], BaseException):
            raise box[0]
        return box[0]

    return wait


def lock_holder(exc: BaseException) -> str | None:
    """The process DuckDB names as holding a file (``program, PID n``; "" when it names none), or None when
    ``exc`` is no lock conflict, but another failure to open the file."""
    text = str(exc)
    if not isinstance(exc, duckdb.IOException) or not ("could not set lock" in text.lower()
                                                        or "conflicting lock" in text.lower()):
        return None  # e.g. a corrupt block, a missing file, a read-only place
    found = _LOCK_HOLDER.search(text)
    return f"{found.group(1)}, PID {found.group(2)}" if found else ""


def out_of_memory(exc: BaseException) -> str | None:
    """The line for DuckDB running out of memory (what it could not get, and what to do), or None when ``exc``
    is something else. DuckDB spills what it can to disk first: this is memory it could not do without."""
    if not isinstance(exc, duckdb.OutOfMemoryException):
        return None
    first = (str(exc).strip().splitlines() or [""])[0].removeprefix("Out of Memory Error:").strip()
    return f"DuckDB ran out of memory ({first}): close other programs, or use a machine with more memory"


def held_too_long(exc: BaseException) -> str | None:
    """The line for a lock conflict that outlasted ``when_free``'s wait (which file, held by whom, how long it
    was waited for, what to do), or None when ``exc`` is no lock conflict."""
    who = lock_holder(exc)
    if who is None:
        return None
    named = re.search(r'lock on file "([^"]+)"', str(exc))
    from clinbench.errors import DataError  # as _wait_limit: only on this failure path

    try:
        limit = _wait_limit()
    except DataError:  # a bad CLINBENCH_LOCK_WAIT: said on its own, before any wait
        limit = 0.0
    waited = f" for the whole {limit:g} s wait" if limit else ""
    return (f"{named.group(1) if named else 'the database'} is held by another process{f' ({who})' if who else ''}"
            f"{waited}: close that program, or set CLINBENCH_LOCK_WAIT to wait longer (seconds), and retry")


def when_free(open_file: Callable[[], T], path: str | Path, *, wait_seconds: float | None = None,
              on_wait: Callable[[str], None] | None = None) -> T:
    """``open_file()`` (a connect or an ATTACH of ``path``) once no other process holds the file: while one
    does, it is tried again for up to ``wait_seconds`` (``LOCK_WAIT_SECONDS``), telling ``on_wait`` (default:
    a line on stderr) after the first second and every ``LOCK_NOTICE_SECONDS``; then the conflict is raised
    as DuckDB gave it, for the caller's message. Two clinbench commands on one database (two campaigns
    building their references on demand) so take turns instead of the second failing."""
    start, told, pause, limit = time.monotonic(), None, 0.02, wait_seconds
    while True:
        try:
            return open_file()
        except duckdb.IOException as exc:
            who = lock_holder(exc)
            if who is None:
                raise
            limit = _wait_limit() if limit is None else limit
            waited = time.monotonic() - start
            if waited >= limit:
                raise
            if waited >= 1.0 and (told is None or waited - told >= LOCK_NOTICE_SECONDS):
                told = waited
                holder = f" ({who})" if who else ""
                (on_wait or _tell)(f"{path} is held by another process{holder}; waiting for it to let go "
                                   f"({waited:.0f} s so far, up to {limit:g} s; Ctrl-C to stop)")
            time.sleep(pause)
            pause = min(pause * 2, 0.5)


def connect_when_free(path: str | Path, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """``duckdb.connect(path)``, waiting while another process holds the file (``when_free``)."""
    return when_free(lambda: duckdb.connect(str(path), read_only=read_only), path)


def _wait_limit() -> float:
    """``CLINBENCH_LOCK_WAIT`` seconds, else ``LOCK_WAIT_SECONDS``."""
    raw = os.environ.get("CLINBENCH_LOCK_WAIT", "").strip()
    if not raw:
        return LOCK_WAIT_SECONDS
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        from clinbench.errors import DataError

        raise DataError(f"CLINBENCH_LOCK_WAIT={raw!r} is not a number of seconds: set it to one (0: do not wait "
                        "for a database another process holds), or unset it")
    return seconds


def _tell(message: str) -> None:
    sys.stderr.write(f"{message}\n")
    sys.stderr.flush()
