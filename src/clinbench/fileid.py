"""A file's identity: what changes whenever the file (or its DuckDB write-ahead log) is written.

Path, inode, size, mtime and ctime of the file and of ``<file>.wal``. Any write changes it
(ctime cannot be set back), so anything derived from the file and remembered under this key
stays true for as long as the key matches. Only ``stat`` calls: the file is never opened.
"""

from __future__ import annotations

import glob
import re
from pathlib import Path


def _stamp(st) -> tuple:
    """What changes whenever a file is written: inode, size, mtime and ctime."""
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def file_identity(path: str | Path) -> tuple:
    path = Path(path).resolve()
    key: tuple = (str(path),)
    for part in (path, path.with_name(path.name + ".wal")):
        try:
            st = part.stat()
        except FileNotFoundError:
            key += (None,)
        else:
            key += _stamp(st)
    return key


def named_files_identity(sql: str) -> tuple:
    """The identity of every file a view's SQL names in a string literal (``read_parquet('x/*.parquet')``,
    globs expanded), sorted: the rows of a view over files change with them, not with the database file."""
    found: set[str] = set()
    for literal in re.findall(r"'((?:[^']|'')*)'", sql):
        literal = literal.replace("''", "'")
        if "/" in literal or re.search(r"\.\w{1,8}$", literal):  # a path, not a LIKE pattern or a label
            found.update(glob.glob(literal, recursive=True))
    identities = []
    for name in sorted(found):
        try:
            st = Path(name).stat()
        except OSError:
            continue
        identities.append((name, *_stamp(st)))
    return tuple(identities)
