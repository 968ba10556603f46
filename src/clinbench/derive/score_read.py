"""The agent side of scoring: an output CSV read into ``__parsed``, streaming, in DuckDB.

``__parsed`` holds the file's place in the files read together as ``__f`` (0 for a file read
alone) and the task's keys as ``__k<i>``; its rowid follows file order. The view ``__agent`` over
it gives, per scored column present in the file, its value ``v_<col>`` and whether the cell was
empty ``e_<col>``. Files of one header can be read together (``load_many``: a
campaign's outputs of a task), each then as it reads alone.

Reading is forgiving about formatting (BOM, CRLF, quoting, spaces, true/false, ISO or
space-separated timestamps, header case and order) and strict about content. The fast path
reads the header line itself and hands DuckDB the column names and types, so nothing is
sniffed and the file is parsed once, straight into typed columns. A cell that does not convert
(true/false, 'NA', stray spaces, odd timestamps) sends the file to the text path, which reads
every cell as text and parses it with the same rules. A header it cannot read plainly (quotes)
or a file DuckDB rejects with the given columns goes to DuckDB's own sniffer for the header,
then the same two paths. Every path gives the same values.
"""

from __future__ import annotations

import codecs
import re
from pathlib import Path

from clinbench.duck import duckdb
from clinbench.plain import Frozen

# Cells an agent writes for "no value".
NULL_TOKENS = ("", "null", "none", "nan", "na", "n/a", "<na>", "nat")

_OPTIONS = "header = true, delim = ',', quote = '\"', escape = '\"', null_padding = true"


class Header(Frozen):
    """The output's columns: normalized name (stripped, lower case) -> column name in the reader."""

    def __init__(self, columns: dict[str, str], reader_names: list[str] | None) -> None:
        # reader_names: the names handed to DuckDB (fast path) or None (sniffed)
        self._set(columns=columns, reader_names=reader_names)


# A task's output has a few dozen columns at most. DuckDB's reader and the scoring query grow faster than
# the columns do (100,000 columns: 4.5 s and 0.45 GB; 330,000 in a 2 MB header: over 300 s and 1.8 GB), so
# a hostile header could hold a campaign's scorer for minutes: past this width a file is not read at all.
MAX_COLUMNS = 1000


class Unreadable(Exception):
    """The file is not a CSV DuckDB can read; the message says why."""


def machine_failure(exc: duckdb.Error) -> bool:
    """DuckDB ran out of memory, or of disk for its spill files, or was interrupted, while it read or scored a
    file: this machine's failure, which a scorer raises (``score.ResourceError``), never the output's score.
    Told by the exception's type: a message can quote the agent's bytes (a CSV line, a cell that did not
    convert), so "No space left on device" written into an output must not make its run a harness error."""
    return isinstance(exc, (duckdb.OutOfMemoryException, duckdb.InterruptException)) or spill_disk_full(exc)


def spill_disk_full(exc: duckdb.Error) -> bool:
    """DuckDB could not write its spill files: an I/O error (never one about the file's contents) saying so."""
    return isinstance(exc, duckdb.IOException) and "no space left on device" in str(exc).lower()


def _why(exc: duckdb.Error) -> str:
    """DuckDB's reason in one line: where it names the problem below a first line that does not (its
    "CSV Error on Line: 1" counts lines from the read block, not the file), that problem."""
    lines = str(exc).splitlines()
    for line in lines:
        if m := re.match(r"Maximum line size of (\d+) bytes exceeded", line):
            return f"a line is longer than {int(m.group(1)):,} bytes, DuckDB's limit for a CSV line"
        if line.startswith("It was not possible to automatically detect the CSV parsing dialect"):
            return "DuckDB cannot split it into rows of comma-separated cells (an unclosed quote?)"
    return lines[0] if lines else type(exc).__name__


def file_problem(path: Path) -> str:
    """Why the file cannot be scored at all, or '' when it can be read (one streaming pass)."""
    if not path.is_file():
        return f"output file {path} does not exist"
    decoder = codecs.getincrementaldecoder("utf-8")()
    seen_text = False
    offset = 0  # bytes read before the current chunk
    header_fields, header_read = 1, False  # the first line's comma-separated fields, counted as it streams
    # read into, again and again: a new bytes object a read costs as much again; 256 kB, not 4 MB: a fresh
    # process faults in every page of the buffer (an 18 MB output: 3-4 ms in all, against 6-8 ms)
    buf = bytearray(1 << 18)
    with path.open("rb", buffering=0) as fh:
        while n := fh.readinto(buf):
            chunk = buf if n == len(buf) else buf[:n]
            if not header_read:
                end = chunk.find(b"\n")
                header_fields += chunk.count(b",", 0, len(chunk) if end < 0 else end)
                header_read = end >= 0
                if header_fields > MAX_COLUMNS:
                    return (f"output's header names more than {MAX_COLUMNS:,} columns; write the task's columns "
                            "(its instruction lists them)")
            pending = decoder.getstate()[0]  # the start of a character split across chunks
            if chunk.isascii() and not pending:  # ASCII after whole characters is valid UTF-8
                # isspace, not strip: strip copies the chunk (with 4 MB chunks, 5 ms of an 18 MB output's 7 ms)
                seen_text = seen_text or not chunk.isspace()
                offset += len(chunk)
                continue
            try:
                text = decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                at = offset - len(pending) + exc.start
                return f"output is not UTF-8 text (bad byte at offset {at}); save it as UTF-8"
            seen_text = seen_text or bool(text.lstrip("\ufeff").strip())
            offset += len(chunk)
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            return "output is not UTF-8 text (truncated character at the end); save it as UTF-8"
    if not seen_text:
        return "output file is empty"
    return ""


def plain_header(path: Path) -> Header | None:
    """The header line read directly, or None when it needs DuckDB's sniffer (quotes, no line end,
    an empty or repeated name)."""
    with path.open("rb") as fh:
        line = fh.readline(1 << 20)
    if not line.endswith(b"\n") or b'"' in line:
        return None
    names = [_normal(name) for name in line.decode("utf-8").lstrip("\ufeff").rstrip("\r\n").split(",")]
    if "" in names or len(set(names)) < len(names):
        return None  # DuckDB names empty and repeated columns itself
    reader = [f"c{i}" for i in range(len(names))]
    return Header(dict(zip(names, reader)), reader)


def sniffed_header(con: duckdb.DuckDBPyConnection, path: Path) -> Header:
    try:
        names = [name for name, *_ in con.execute(
            f"DESCRIBE SELECT * FROM read_csv({_lit(str(path))}, all_varchar = true, {_OPTIONS})").fetchall()]
    except duckdb.Error as exc:
        if machine_failure(exc):
            raise
        raise Unreadable(_why(exc)) from exc
    columns: dict[str, str] = {}
    for name in names:
        columns.setdefault(_normal(name), name)
    return Header(columns, None)


def load(con: duckdb.DuckDBPyConnection, path: Path, header: Header, keys: list[str], present: list[str],
         kinds: dict[str, str]) -> bool:
    """Parse the file into ``__parsed`` (its ``__f`` 0); False when the fast path's columns do not
    fit the file.

    Raises ``Unreadable`` when even the text path cannot read it.
    """
    for reader, cell in _readers([path], header, keys, present, kinds):
        try:
            _parse(con, reader, cell, "0", header, keys, present, kinds)
            return True
        except duckdb.ConversionException as exc:
            if cell is _slow:
                raise Unreadable(_why(exc)) from exc
        except duckdb.Error as exc:
            if machine_failure(exc):
                raise
            if header.reader_names is not None:
                return False  # e.g. more fields than the header names: let the sniffer read it
            if cell is _slow:
                raise Unreadable(_why(exc)) from exc
    return False  # unreachable: the text path returns or raises


def load_many(con: duckdb.DuckDBPyConnection, paths: list[Path], header: Header, keys: list[str],
              present: list[str], kinds: dict[str, str]) -> bool:
    """Parse files of the same plain header together into ``__parsed`` (``__f``: the place in ``paths`` of
    each row's file, rows in file order) by the readers ``load`` tries, in turn: a cell that does not convert sends the batch to the
    text path, as it sends a file (the paths give the same values: one 'NA' among a campaign's outputs no
    longer reads each of them three times alone). False when the batch needs more than that (each file is
    then read by ``load``, which gives it what it gets alone)."""
    # the reader's file_index, not its filename: a path string on each of a batch's million rows cost a
    # third of the scoring query (hashed in the join, grouped by) and the parse that wrote it. A DuckDB
    # before 1.3 has no file_index: the batch fails to bind and each file is read alone
    for reader, cell in _readers(paths, header, keys, present, kinds):
        try:
            _parse(con, reader, cell, "file_index", header, keys, present, kinds)
            return True
        except duckdb.ConversionException:
            continue
        except duckdb.Error as exc:
            if machine_failure(exc):
                raise
            return False
    return False


def _readers(paths: list[Path], header: Header, keys: list[str], present: list[str],
             kinds: dict[str, str]) -> list[tuple[str, object]]:
    """The readers ``load`` tries in turn, each with how its cells become values."""
    files = _lit(str(paths[0])) if len(paths) == 1 else "[" + ", ".join(_lit(str(p)) for p in paths) + "]"
    typed = {header.columns[c]: {"numeric": "DOUBLE", "timestamp": "TIMESTAMP"}[kinds[c]]
             for c in [*keys, *present] if kinds[c] != "string"}
    if header.reader_names is None:
        base = f"read_csv({files}, all_varchar = true, {_OPTIONS}"
        readers = [(f"{base}, types = {_struct(typed)})", _fast), (f"{base})", _slow)]
    else:
        def spec(types: dict[str, str]) -> str:
            cols = {name: types.get(name, "VARCHAR") for name in header.reader_names}
            return f"read_csv({files}, columns = {_struct(cols)}, auto_detect = false, {_OPTIONS})"
        readers = [(spec(typed), _fast), (spec({}), _slow)]
    return readers if typed else readers[1:]


def first_read(path: Path, header: Header, keys: list[str], present: list[str],
               kinds: dict[str, str]) -> tuple[str, str]:
    """The first reader ``load`` tries, to scan the file once without keeping its rows (a cell that does
    not convert makes it fail, as it makes ``load`` go on), and ``__parsed``'s columns of a row as one
    struct over that reader's columns, which it names ``__c``. The reader stays a bare table scan: beside
    another (POSITIONAL JOIN) DuckDB then reads both in step, where a projection under the join made it
    hold the other side whole."""
    reader, cell = _readers([path], header, keys, present, kinds)[0]
    cells = _cells(cell, "0", header, keys, present, kinds, table="__c.")
    return f"{reader} AS __c", "struct_pack(" + ", ".join(f"{_q(name)} := {expr}" for expr, name in cells) + ")"


def _parse(con: duckdb.DuckDBPyConnection, reader: str, cell, file: str, header: Header, keys: list[str],
           present: list[str], kinds: dict[str, str]) -> None:
    """Write ``__parsed`` and the view ``__agent`` the scorer reads: ``__f``, the keys and, per column, its
    value ``v_<col>`` and empty flag ``e_<col>``. The fast path keeps each typed cell once (``r_<col>``)
    and the view derives both from it (a campaign's 80 outputs of 13 columns, 96 MB: 0.15 s less CPU than
    writing both out); the text path keeps its parse as written."""
    if cell is not _fast:
        con.execute(f"CREATE OR REPLACE TEMP TABLE __parsed AS {_select(reader, cell, file, header, keys, present, kinds)}")
        con.execute("CREATE OR REPLACE TEMP VIEW __agent AS SELECT * FROM __parsed")
        return
    kept = [f"{expr} AS {_q(name)}" for expr, name in _key_cells(_fast, file, header, keys, kinds)]
    kept += [f"{_q(header.columns[c])} AS {_q('r_' + c)}" for c in present]
    con.execute(f"CREATE OR REPLACE TEMP TABLE __parsed AS SELECT {', '.join(kept)} FROM {reader}")
    view = ["__f", *(f"__k{i}" for i in range(len(keys)))]
    for c in present:
        v, e = _fast(_q("r_" + c), kinds[c])
        view += [f"{v} AS {_q('v_' + c)}", f"({e}) AS {_q('e_' + c)}"]
    con.execute(f"CREATE OR REPLACE TEMP VIEW __agent AS SELECT {', '.join(view)} FROM __parsed")


def _select(reader: str, cell, file: str, header: Header, keys: list[str], present: list[str],
            kinds: dict[str, str]) -> str:
    select = [f"{expr} AS {_q(name)}" for expr, name in _cells(cell, file, header, keys, present, kinds)]
    return f"SELECT {', '.join(select)} FROM {reader}"


def _cells(cell, file: str, header: Header, keys: list[str], present: list[str], kinds: dict[str, str],
           table: str = "") -> list[tuple[str, str]]:
    """``__parsed``'s columns as (expression, name): ``_key_cells`` and each present column's value and
    empty flag, over the reader's columns (of the table ``table`` names, e.g. ``__c.``, when given)."""
    cells = _key_cells(cell, file, header, keys, kinds, table)
    for c in present:
        v, e = cell(table + _q(header.columns[c]), kinds[c])
        cells += [(v, "v_" + c), (f"({e})", "e_" + c)]
    return cells


def _key_cells(cell, file: str, header: Header, keys: list[str], kinds: dict[str, str],
               table: str = "") -> list[tuple[str, str]]:
    """The file's place ``__f`` and its key values ``__k<i>``, as every reader keeps them."""
    return [(file, "__f"), *((cell(table + _q(header.columns[c]), kinds[c])[0], f"__k{i}") for i, c in enumerate(keys))]


def _fast(x: str, kind: str) -> tuple[str, str]:
    """(value, empty flag) of a typed cell, the column reference ``x``."""
    if kind == "numeric":
        return f"CASE WHEN isfinite({x}) THEN {x} END", f"{x} IS NULL OR isnan({x})"
    if kind == "timestamp":
        return x, f"{x} IS NULL"
    return _parse_expr(x, "string"), _empty_expr(x)


def _slow(x: str, kind: str) -> tuple[str, str]:
    """(value, empty flag) of a text cell, the column reference ``x``."""
    return _parse_expr(x, kind), _empty_expr(x, kind)


def _empty_expr(col: str, kind: str = "string") -> str:
    """Whether text cell ``col`` is "no value": a null word, or in a numeric column any NaN (``-nan``, ``+NaN``),
    as the typed reader of the fast path reads it: one file reads the same alone or in a batch on the text path."""
    tokens = ", ".join(_lit(t) for t in NULL_TOKENS)
    empty = f"{col} IS NULL OR lower(trim({col})) IN ({tokens})"
    return f"{empty} OR coalesce(isnan(TRY_CAST({col} AS DOUBLE)), false)" if kind == "numeric" else empty


def _parse_expr(col: str, kind: str) -> str:
    """Agent text -> typed value; NULL for empty or unparseable (the empty flag tells them apart)."""
    v = f"trim({col})"
    if kind == "numeric":
        # the cast tolerates surrounding spaces; NaN/inf are not values; words last (rare)
        num = f"TRY_CAST({col} AS DOUBLE)"
        return (f"COALESCE(CASE WHEN isfinite({num}) THEN {num} END, "
                f"CASE lower({v}) WHEN 'true' THEN 1.0 WHEN 't' THEN 1.0 WHEN 'yes' THEN 1.0 "
                f"WHEN 'false' THEN 0.0 WHEN 'f' THEN 0.0 WHEN 'no' THEN 0.0 END)")
    if kind == "timestamp":
        return f"TRY_CAST({col} AS TIMESTAMP)"
    return f"CASE WHEN {_empty_expr(col)} THEN NULL ELSE {v} END"


def _normal(name: str) -> str:
    return name.strip().lstrip("\ufeff").strip().lower()


def _struct(mapping: dict[str, str]) -> str:
    return "{" + ", ".join(f"{_lit(k)}: {_lit(v)}" for k, v in mapping.items()) + "}"


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
