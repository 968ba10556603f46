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
