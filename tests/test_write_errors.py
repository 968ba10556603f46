"""Which failures are the disk's: told by what failed, never by words the data put in a message."""

from __future__ import annotations

import errno

import pytest

from clinbench.duck import duckdb
from clinbench.write_errors import cannot_write, kind_of


@pytest.mark.parametrize("words", ["No space left on device", "Read-only file system", "Permission denied"])
def test_a_duckdb_error_quoting_storage_words_from_the_data_is_no_storage_failure(words):
    # a CSV cell or an agent's string that does not convert: DuckDB quotes it in its message
    with pytest.raises(duckdb.ConversionException) as quoted:
        duckdb.connect().execute(f"SELECT CAST('{words}' AS INTEGER)")
    assert words in str(quoted.value)
    assert kind_of(quoted.value) is None and not cannot_write(quoted.value)


def test_the_disk_saying_so_is_still_a_full_or_read_only_disk():
    assert kind_of(OSError(errno.ENOSPC, "No space left on device")) == "disk-full"
    assert kind_of(OSError(errno.EROFS, "Read-only file system")) == "read-only"


def test_a_corrupt_database_block_is_corrupt_and_a_held_lock_is_not(tmp_path):
    import subprocess
    import sys

    db = tmp_path / "broken.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE t AS SELECT range AS i, CAST(range AS VARCHAR) AS s FROM range(300000)")
    with db.open("r+b") as fh:  # a page of the table's data overwritten
        fh.seek(db.stat().st_size // 2)
        fh.write(b"\xff" * 4096)
    with pytest.raises(duckdb.Error) as broken:
        duckdb.connect(str(db)).execute("SELECT sum(i), max(s) FROM t").fetchall()
    assert "in block at location" in str(broken.value)  # "block" holds the letters of "lock"
    assert kind_of(broken.value) == "corrupt"

    held = tmp_path / "held.duckdb"
    holder = subprocess.Popen([sys.executable, "-c", f"import duckdb, sys; c = duckdb.connect({str(held)!r}); print(1, flush=True); "
                               "sys.stdin.read()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        holder.stdout.readline()
        with pytest.raises(duckdb.IOException) as locked:
            duckdb.connect(str(held))
    finally:
        holder.communicate("")
    assert "Conflicting lock" in str(locked.value) and kind_of(locked.value) is None
