"""What went wrong when a file could not be written or read back: disk full, read-only, corrupt.

One place turns an ``OSError`` or a DuckDB error into the sentence a user acts on, so every
writer (results store, evidence, loader, synthesiser) reports a full disk as a full disk,
not as a bad input file or a traceback.
"""

from __future__ import annotations

import errno
import re
from pathlib import Path

from clinbench.errors import ClinbenchError


class WriteError(ClinbenchError):
    """A file could not be written: the disk is full, the place is read-only, or the file is corrupt."""


_DISK_FULL = ("no space left on device", "disk full", "disk is full")
_CORRUPT = ("corrupt", "checksum", "not a valid duckdb database", "could not read enough bytes", "invalid")


# DuckDB's errors about data or SQL: their messages quote the data (a CSV line, a cell, an agent's bytes), so
# words such as "No space left on device" in one are the data's, never a storage failure
_DUCKDB_DATA_ERRORS = frozenset({"ConversionException", "InvalidInputException", "BinderException", "ParserException",
                                 "ConstraintException", "CatalogException", "OutOfRangeException", "TypeMismatchException",
                                 "SyntaxException", "NotImplementedException", "DataError", "ProgrammingError"})


def kind_of(exc: BaseException) -> str | None:
    """'disk-full', 'read-only', 'corrupt' or None (not a storage failure)."""
    if type(exc).__module__ in ("_duckdb", "duckdb") and type(exc).__name__ in _DUCKDB_DATA_ERRORS:
        return None
    if isinstance(exc, OSError) and exc.errno is not None:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return "disk-full"
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return "read-only"
    text = str(exc).lower()
    if any(s in text for s in _DISK_FULL):
        return "disk-full"
    if any(s in text for s in ("read-only file system", "permission denied")):
        return "read-only"
    # a lock another program holds is not corruption; the word, not the letters ("in block at location" is)
    if any(s in text for s in _CORRUPT) and not re.search(r"\block\b", text):
        return "corrupt"
    return None


def cannot_write(exc: BaseException) -> bool:
    """``exc`` is a full disk or a read-only place: where things are written failed, not the input or the SQL."""
    return kind_of(exc) in ("disk-full", "read-only")


def explain(exc: BaseException, path: str | Path, *, corrupt_hint: str = "") -> str | None:
    """One line for a storage failure on ``path``, or None when ``exc`` is something else."""
    kind = kind_of(exc)
    where = Path(path)
    if kind == "disk-full":
        return f"disk full: no space left on the device holding {where}; free space (or choose another location) and retry"
    if kind == "read-only":
        return f"cannot write {where}: the location is read-only or not writable by you; choose a writable location"
    if kind == "corrupt":
        return f"{where} is corrupt ({_first_line(exc)})" + (f"; {corrupt_hint}" if corrupt_hint else "")
    return None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
