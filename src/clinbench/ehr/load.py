"""Load PhysioNet MIMIC-IV and eICU-CRD files into one DuckDB database.

The files are streamed by DuckDB's own CSV and Parquet readers straight into tables
declared in ``mimic_iv_tables`` / ``eicu_tables`` (official names and types). Everything is
checked before a byte is written (layout, headers, checksums with ``verify``, required
tables), then the database is built in a temporary file beside ``out`` and renamed over
it at the end (``clinbench.atomic.atomic_database``), so a failed or interrupted load never leaves a half-built database.

Rules a user can rely on:
- Headers are matched case-insensitively and by name (the official demo's procedureevents
  spells ``ORIGINALAMOUNT``); a missing or unexpected column is an error naming it.
- ``.csv.gz``, ``.csv`` and ``.parquet`` are read, in that order of preference.
- A declared table with no file is left out of the database, never created empty: an
  empty chartevents would make every score look normal. When a task family needs it, the
  load stops and names it unless ``partial`` is set (``requirements.py`` says which).
- A table a task family needs that is present but empty (a header-only file) stops the load,
  naming it, unless ``partial`` is set (then it is a warning): references built from it would
  be degenerate.
- A full disk or a read-only destination is reported as such (``WriteError``), never as a bad
  input file; the temporary files of a killed load are removed by the next writer.
- A data file that is not a declared table is loaded with inferred types, with a warning.
- Where files are looked for: MIMIC-IV ``<dir>/{hosp,icu,ed,note}/`` (files at the top,
  such as the demo's ``demo_subject_id.csv``, are not tables); eICU-CRD the top of ``<dir>``
  only (a subfolder, such as a ``partial/`` subset of a table, is named as not read).
- Rows keep the file's order (DuckDB's insertion order is preserved), so a derivation that
  breaks ties by physical order gives the same answer on every load.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from clinbench.atomic import atomic_database
from clinbench.duck import duckdb
from clinbench.ehr.requirements import families_needing, required_tables
from clinbench.ehr.schema import Table, dataset_tables
from clinbench.errors import DataError
from clinbench.write_errors import cannot_write

EXTENSIONS = (".csv.gz", ".csv", ".parquet")
CHECKSUMS = "SHA256SUMS.txt"
MIMIC_MODULES = ("hosp", "icu", "ed", "note")
_TABLE_NAME = re.compile(r"[a-z_][a-z0-9_]*")


@dataclass(frozen=True)
class LoadEvent:
    """One step of a load, for a progress display: a table starts or ends, or a warning."""

    kind: Literal["start", "done", "warning"]
    table: str = ""
    file: str = ""
    rows: int = 0
    bytes: int = 0
    index: int = 0
    total: int = 0
    message: str = ""


Progress = Callable[[LoadEvent], None]


@dataclass
class LoadReport:
    path: Path
    dataset: str
    rows: dict[str, int] = field(default_factory=dict)  # qualified table -> rows loaded
    missing: list[str] = field(default_factory=list)  # declared tables with no file
    extra: list[str] = field(default_factory=list)  # undeclared tables, inferred types
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def total_rows(self) -> int:
        return sum(self.rows.values())


@dataclass(frozen=True)
class _Source:
    """A file to load: into a declared table, or (table.columns empty) an inferred one."""

    table: Table
    path: Path
    rel: str  # path relative to the source folder, as SHA256SUMS.txt names it
    declared: bool


# --------------------------------------------------------------------------- public API


def load_dataset(
    dataset: str,
    src_dir: str | Path,
    out_path: str | Path,
    *,
    partial: bool = False,
    verify: bool = False,
    progress: Progress | None = None,
    after_raw: Callable[[duckdb.DuckDBPyConnection, str], object] | None = None,
) -> LoadReport:
    """Load ``dataset`` ('mimic-iv' or 'eicu') from ``src_dir`` into ``out_path``; see the module doc.

    ``after_raw(con, dataset)``: called on the new file once its raw tables are loaded (`data load`
    passes ``clinbench.derive.raw_layer.keep``, which keeps a copy for masked databases).
    """
    started = time.perf_counter()
    src = Path(src_dir)
    out = Path(out_path)
    report = LoadReport(path=out, dataset=dataset)

    def warn(message: str) -> None:
        report.warnings.append(message)
        if progress is not None:
            progress(LoadEvent("warning", message=message))

    if not src.is_dir():
        raise DataError(f"{src} is not a folder: give the folder that holds the PhysioNet files")
    if not out.parent.is_dir():
        raise DataError(f"{out.parent} does not exist: create it or choose another --out")
    if out.is_dir():
        raise DataError(f"{out} is a folder: give a file name such as {out / 'mimic.duckdb'}")

    sources, report.missing = _discover(dataset, src, warn)
    if not sources:  # even --partial: a database with no table is of no use and looks like a load
        where = "hosp/, icu/, ed/ or note/" if dataset == "mimic-iv" else "the folder"
        raise DataError(f"{src} holds no table files (.csv.gz, .csv or .parquet) in {where}: nothing was written; "
                        "give the folder that holds the PhysioNet files")
    report.extra = [s.table.qualified for s in sources if not s.declared]
    for s in sources:
        if not s.declared:
            warn(f"{s.rel} is not an official {dataset} table: loading it as {s.table.qualified} with inferred types")
    _check_required(dataset, src, report.missing, partial)
    for s in sources:
        if s.declared:
            _check_header(s)
    if verify:
        _verify_checksums(src, sources, warn)

    required = required_tables(dataset)
    with atomic_database(out) as con:
        for index, s in enumerate(sources, start=1):
            if progress is not None:
                progress(LoadEvent("start", s.table.qualified, s.rel, bytes=s.path.stat().st_size,
                                   index=index, total=len(sources)))
            rows = _load_one(con, s)
            report.rows[s.table.qualified] = rows
            if rows == 0 and s.table.qualified in required:
                families = ", ".join(families_needing(dataset, [s.table.qualified]))
                message = (f"{s.rel} holds no rows: {s.table.qualified} is empty, and task families {families} "
                           "need it (their references would be degenerate)")
                if not partial:
                    raise DataError(f"{message}; add the rows, or pass --partial to load anyway")
                warn(message)
            if progress is not None:
                progress(LoadEvent("done", s.table.qualified, s.rel, rows=rows, index=index, total=len(sources)))
        if after_raw is not None:
            after_raw(con, dataset)
    report.seconds = time.perf_counter() - started
    return report


# --------------------------------------------------------------------------- discovery


def _loader(dataset: str, doc: str) -> Callable[..., Path]:
    def load(src_dir: str | Path, out_path: str | Path, *, partial: bool = False, verify: bool = False,
             progress: Progress | None = None) -> Path:
        return load_dataset(dataset, src_dir, out_path, partial=partial, verify=verify, progress=progress).path

    load.__doc__ = doc
    return load


load_mimic_iv = _loader("mimic-iv", "Load a MIMIC-IV PhysioNet folder (``hosp/``, ``icu/``, optional ``ed/``, ``note/``).")
load_eicu = _loader("eicu", "Load an eICU-CRD PhysioNet folder (camelCase ``*.csv.gz`` files) into schema ``eicu_crd``.")


def _data_files(folder: Path, src: Path, warn: Callable[[str], None]) -> dict[str, Path]:
    """lower-case file stem -> the preferred data file for it in ``folder`` (see EXTENSIONS)."""
    found: dict[str, Path] = {}
    if not folder.is_dir():
        return found
    for ext in EXTENSIONS:  # preference order: the first extension found wins
        for path in sorted(folder.iterdir()):
            name = path.name.lower()
            if not (path.is_file() and name.endswith(ext)):
                continue
            stem = name[: -len(ext)]
            if stem in found:
                warn(f"{path.relative_to(src).as_posix()} ignored: {found[stem].relative_to(src).as_posix()} "
                     "holds the same table and is loaded instead")
            else:
                found[stem] = path
    return found


def _discover(dataset: str, src: Path, warn: Callable[[str], None]) -> tuple[list[_Source], list[str]]:
    declared = dataset_tables(dataset)
    folders: dict[str, dict[str, Path]]  # schema -> its data files
    if dataset == "mimic-iv":
        if not any((src / m).is_dir() for m in ("hosp", "icu")):
            raise DataError(f"{src} has no hosp/ or icu/ folder: give the MIMIC-IV folder that holds hosp/ and icu/ "
                            "(for example .../mimiciv/3.1)")
        folders = {f"mimiciv_{m}": _data_files(src / m, src, warn) for m in MIMIC_MODULES}
    else:
        top = _data_files(src, src, warn)
        if not any(t.source.lower() in top for t in declared):
            raise DataError(f"{src} holds no eICU-CRD files (patient.csv.gz, lab.csv.gz, ...): "
                            "give the folder that holds them")
        for sub in sorted(p for p in src.iterdir() if p.is_dir()):
            if _data_files(sub, src, lambda _: None):
                warn(f"{sub.name}/ not read: eICU-CRD tables are the files at the top of {src}")
        folders = {"eicu_crd": top}

    sources: list[_Source] = []
    missing: list[str] = []
    present = {schema for schema, files in folders.items() if files}
    for table in declared:
        files = folders[table.schema]
        path = files.pop(table.source.rsplit("/", 1)[-1].lower(), None)
        if path is not None:
            sources.append(_Source(table, path, path.relative_to(src).as_posix(), declared=True))
        elif table.schema in present or table.schema not in ("mimiciv_ed", "mimiciv_note"):
            missing.append(table.qualified)  # an absent ed/ or note/ module is not "missing"

    for schema, files in folders.items():  # what is left is not a declared table
        for stem, path in files.items():
            rel = path.relative_to(src).as_posix()
            if _TABLE_NAME.fullmatch(stem):
                sources.append(_Source(Table(schema, stem, ()), path, rel, declared=False))
            else:
                warn(f"{rel} skipped: {stem!r} is not a usable table name")
    return sources, missing


def _check_required(dataset: str, src: Path, missing: list[str], partial: bool) -> None:
    needed = sorted(set(missing) & required_tables(dataset))
    if needed and not partial:
        families = ", ".join(families_needing(dataset, needed))
        raise DataError(f"{src} lacks {len(needed)} table(s) that task families need: {', '.join(needed)} "
                        f"(families {families}); add the files, or pass --partial to load the rest "
                        "without those families")


# --------------------------------------------------------------------------- checks


def _read_header(s: _Source) -> list[str]:
    if s.path.name.lower().endswith(".parquet"):
        try:
            con = duckdb.connect()
            names = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM read_parquet({_lit(s.path)})").fetchall()]
            con.close()
        except duckdb.Error as exc:
            raise DataError(f"{s.rel}: not a readable Parquet file ({_first_line(exc)}): re-download it") from exc
        return names
    opener = gzip.open if s.path.name.lower().endswith(".gz") else open
    try:
        with opener(s.path, "rt", encoding="utf-8", newline="") as fh:
            line = fh.readline()
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise DataError(f"{s.rel}: cannot read its header ({exc}): the file is truncated or corrupt, re-download it") from exc
    if not line.strip():
        raise DataError(f"{s.rel}: the file is empty: re-download it")
    return next(csv.reader(io.StringIO(line)))


def _check_header(s: _Source) -> None:
    header = [h.strip().lower() for h in _read_header(s)]
    declared = list(s.table.column_names)
    missing = [c for c in declared if c not in header]
    unexpected = [c for c in header if c not in declared]
    if missing or unexpected or len(header) != len(set(header)):
        parts = []
        if missing:
            parts.append(f"missing column(s) {', '.join(missing)}")
        if unexpected:
            parts.append(f"unexpected column(s) {', '.join(unexpected)}")
        if not parts:
            parts.append("duplicated column names")
        raise DataError(f"{s.rel}: header does not match {s.table.qualified}: {'; '.join(parts)}; "
                        "check that the file is the official one for this table")


def read_checksums(path: Path) -> dict[str, str]:
    """Parse a ``sha256sum`` listing (``<hex>  <path>`` or ``<hex> *<path>``) into path -> hex."""
    sums: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.strip().split(maxsplit=1)
        if len(parts) == 2 and re.fullmatch(r"[0-9a-fA-F]{64}", parts[0]):
            sums[parts[1].lstrip("*").removeprefix("./")] = parts[0].lower()
    return sums


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _verify_checksums(src: Path, sources: list[_Source], warn: Callable[[str], None]) -> None:
    listing = src / CHECKSUMS
    if not listing.is_file():
        warn(f"{src} has no {CHECKSUMS}: nothing to verify the files against")
        return
    sums = read_checksums(listing)
    for s in sources:
        expected = sums.get(s.rel)
        if expected is None:
            warn(f"{s.rel} is not listed in {CHECKSUMS}: not verified")
            continue
        actual = sha256_of(s.path)
        if actual != expected:
            raise DataError(f"checksum mismatch for {s.rel}: {CHECKSUMS} lists {expected[:12]}…, the file is "
                            f"{actual[:12]}…; re-download it, or load without --verify if the change is deliberate")


# --------------------------------------------------------------------------- loading


def _lit(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


# Quote and escape are both '"' (RFC 4180, as PhysioNet writes them); a quoted empty string
# stays an empty string, as with mimic-code's Postgres COPY ... NULL ''.
CSV_OPTIONS = "header=true, delim=',', quote='\"', escape='\"', allow_quoted_nulls=false"


def _load_one(con: duckdb.DuckDBPyConnection, s: _Source) -> int:
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {s.table.schema}")
    is_parquet = s.path.name.lower().endswith(".parquet")
    try:
        if not s.declared:
            reader = (f"read_parquet({_lit(s.path)})" if is_parquet
                      else f"read_csv({_lit(s.path)}, {CSV_OPTIONS}, sample_size=-1)")
            con.execute(f'CREATE TABLE {s.table.schema}."{s.table.name}" AS SELECT * FROM {reader}')
            return con.execute(f'SELECT count(*) FROM {s.table.schema}."{s.table.name}"').fetchone()[0]
        con.execute(s.table.ddl())
        types = {c.name: c.type for c in s.table.columns}
        header = _read_header(s)
        if is_parquet:
            by_lower = {h.lower(): h for h in header}
            select = ", ".join(f'CAST("{by_lower[c.name]}" AS {c.type})' for c in s.table.columns)
            reader = f"read_parquet({_lit(s.path)})"
        else:
            # Name the file's columns in the file's order (lower-cased), typed from the declaration.
            struct = ", ".join(f"'{h.strip().lower()}': '{types[h.strip().lower()]}'" for h in header)
            select = ", ".join(f'"{c.name}"' for c in s.table.columns)
            reader = f"read_csv({_lit(s.path)}, {CSV_OPTIONS}, columns={{{struct}}})"
        return con.execute(f"INSERT INTO {s.table.qualified} SELECT {select} FROM {reader}").fetchone()[0]
    except duckdb.Error as exc:
        if cannot_write(exc):
            raise  # the destination failed, not the input file: atomic_database says so
        raise DataError(_explain(s, exc)) from exc


def check_out(out: Path, *, force: bool, inputs: Path | None = None) -> None:
    """A writer's ``--out``: never an input file, and an existing file only with ``force``."""
    out = Path(out)
    if inputs is not None and out.exists() and out.resolve().is_relative_to(Path(inputs).resolve()):
        raise DataError(f"--out {out} is a file of the input folder {inputs}: choose a path outside it")
    if out.is_dir():
        raise DataError(f"{out} is a folder: give a file name such as {out / 'mimic.duckdb'}")
    if out.exists() and not force:
        raise DataError(f"{out} already exists: pass --force to replace it, or choose another --out")


def _explain(s: _Source, exc: duckdb.Error) -> str:
    text = str(exc)
    if "GZIP" in text.upper():
        return f"{s.rel} is truncated or corrupt ({_first_line(exc)}): re-download it"
    if "convert" in text.lower() or "conversion" in text.lower():
        return (f"{s.rel}: a value does not fit the official type of {s.table.qualified} ({_first_line(exc)}): "
                "check that the file is the official one")
    return f"{s.rel}: cannot be read into {s.table.qualified} ({_first_line(exc)}): check or re-download the file"
