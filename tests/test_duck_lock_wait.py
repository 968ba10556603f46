"""Opening a database another process holds: clinbench waits for it to let go, says why, and gives up after
CLINBENCH_LOCK_WAIT seconds; any other failure to open is raised at once."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from clinbench.duck import connect_when_free, duckdb, lock_holder, when_free
from clinbench.errors import DataError


def _hold(db: Path, seconds: float) -> subprocess.Popen:
    """Another process with ``db`` open for writing for ``seconds``; returns once it holds it."""
    holder = subprocess.Popen([sys.executable, "-c", f"import _duckdb, time; c = _duckdb.connect({str(db)!r}); "
                               f"print('open', flush=True); time.sleep({seconds})"], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "open"
    return holder


@pytest.fixture
def db(tmp_path) -> Path:
    path = tmp_path / "held.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE t AS SELECT 42 AS x")
    con.close()
    return path


def test_an_open_waits_for_the_holder_to_let_go_and_says_who_holds_it(db):
    holder = _hold(db, 1.6)
    told: list[str] = []
    try:
        started = time.monotonic()
        con = when_free(lambda: duckdb.connect(str(db), read_only=True), db, wait_seconds=30, on_wait=told.append)
        waited = time.monotonic() - started
    finally:
        holder.wait()
    assert con.execute("SELECT x FROM t").fetchone() == (42,)
    con.close()
    assert 1.0 <= waited < 10
    assert len(told) == 1 and told[0].startswith(f"{db} is held by another process (")
    assert f"PID {holder.pid}); waiting for it to let go (1 s so far, up to 30 s; Ctrl-C to stop)" in told[0]


def test_past_the_wait_the_conflict_is_raised_as_duckdb_gives_it(db, monkeypatch):
    monkeypatch.setenv("CLINBENCH_LOCK_WAIT", "0.3")
    holder = _hold(db, 30)
    try:
        started = time.monotonic()
        with pytest.raises(duckdb.IOException) as err:
            connect_when_free(db)
        waited = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    assert 0.3 <= waited < 3
    assert lock_holder(err.value) is not None and f"PID {holder.pid}" in lock_holder(err.value)


def test_a_file_that_is_not_a_database_is_raised_at_once_not_waited_for(tmp_path):
    junk = tmp_path / "junk.duckdb"
    junk.write_bytes(b"not a database" * 100)
    started = time.monotonic()
    with pytest.raises(duckdb.Error) as err:
        connect_when_free(junk, read_only=True)
    assert time.monotonic() - started < 1
    assert lock_holder(err.value) is None


def test_a_lock_wait_that_is_not_a_number_of_seconds_is_a_one_line_error(db, monkeypatch):
    monkeypatch.setenv("CLINBENCH_LOCK_WAIT", "ten")
    holder = _hold(db, 30)
    try:
        with pytest.raises(DataError, match=r"^CLINBENCH_LOCK_WAIT='ten' is not a number of seconds: set it to one "
                                             r"\(0: do not wait for a database another process holds\), or unset it$"):
            connect_when_free(db)
    finally:
        holder.kill()
        holder.wait()
