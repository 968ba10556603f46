"""The results store: one DuckDB file ``DIR/results.duckdb`` per campaign (tables declared in ``clinbench.records``).

Tables:

* ``runs``: one row per finished run (derive or dx), with its score, cost, isolation and
  audit verdict (``publishable``, ``flag_reason``).
* ``column_scores``: per scored column of a derive run, match rate and normalised MAE.
* ``usage``: model tokens and requests of a run, model vs harness seconds, the CLI's own cost
  guess, and the usage of earlier failed attempts that ``--retry-failed`` or ``--retry-agent-failed`` replaced.
* ``data_binding``: the data the campaign is bound to, one row per task reference
  (``clinbench.campaign.binding``).

A run's ``status`` is a ``RunStatus``; records written as ``error`` or ``timeout`` (older
stores) are agent failures. A store written before the neutral dx columns is migrated when it is
opened: its dx rows' gatekeeper and judge move out of ``condition``/``schema``, their error out of
``flag_reason``.

A run is recorded in one transaction that replaces any earlier rows of the same
``run_id``: recording is idempotent, and a process killed mid-write leaves either the
whole run or none of it (DuckDB rolls back an uncommitted transaction on reopen).
DuckDB lets one process write a file at a time, so every call opens and closes its own
connection and waits briefly if another process holds the file. A call ATTACHes the file to the
process's one in-memory DuckDB and DETACHes it (which checkpoints it and lets go of its lock) when
the last call using it ends: starting and closing a DuckDB for each call cost 17-25 ms, about half
of recording a run (``_engine``).
"""

from __future__ import annotations

import csv
import itertools
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clinbench.atomic import atomic_path
from clinbench.duck import LOCK_NOTICE_SECONDS, duckdb, lock_holder  # how often a waiting caller is told why
from clinbench.errors import ClinbenchError
from clinbench.records import (ADDED_COLUMNS, BENCHMARKS, BINDING_COLUMNS, COLUMN_SCORE_COLUMNS, DX_LEGACY_SQL,
                               LEGACY_STATUS, RUN_COLUMNS, STORE_FILE, USAGE_COLUMNS, USAGE_FIELDS, ColumnScore,
                               RunRecord, RunStatus, Usage, normalise_status)
from clinbench.write_errors import explain


class StoreError(ClinbenchError):
    """The results store cannot be opened or holds something unexpected."""


_TABLES = {"runs": RUN_COLUMNS, "column_scores": COLUMN_SCORE_COLUMNS, "usage": USAGE_COLUMNS}
class StoreLocked(StoreError):
    """Another process held the store longer than the caller could wait."""


CORRUPT_HINT = "rebuild it from the runs' evidence with `clinbench store rebuild {dir}`"
LOCK_WAIT_SECONDS = 30.0  # how long a command waits for a store another process holds (a campaign: forever)


_RUNS_WITH_USAGE = f"SELECT r.*, {', '.join(f'u.{c}' for c in USAGE_FIELDS)} FROM runs r "


class _ReadInProgress(Exception):
    """This process has the file attached read-only and a call wants to write it."""


@dataclass
class _Attached:
    alias: str
    read_only: bool
    users: Counter = field(default_factory=Counter)  # thread id -> calls of that thread using it


class _Engine:
    """The process's one in-memory DuckDB, each store file attached to it while calls use it.

    Calls on one file share its attachment (the threads of a campaign or of ``clinbench serve``), as
    they shared one DuckDB when each connected on its own. A forked child never uses, closes or
    detaches anything of its parent's (DuckDB's threads and the parent's file lock are not its own):
    it starts its own, keeping the inherited one referenced so it is never torn down there. A child
    forked while its parent has the file open cannot write it (one writer a process: a one-line
    StoreError); campaigns fork their workers before recording anything."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.con: duckdb.DuckDBPyConnection | None = None
        self.files: dict[str, _Attached] = {}  # by absolute path
        self.aliases = itertools.count()

    def attach(self, path: Path, read_only: bool) -> tuple[duckdb.DuckDBPyConnection, str]:
        key, me = os.path.abspath(path), threading.get_ident()
        with self.lock:
            if self.con is None:
                self.con = duckdb.connect()
            entry = self.files.get(key)
            if entry is not None and entry.read_only and not read_only:
                if entry.users[me]:  # this thread's own read: waiting for it would never end
                    raise duckdb.ConnectionException(f"{path} is open read-only in this same call; it cannot be "
                                                     "written until that read ends")
                raise _ReadInProgress  # other threads' reads: wait for them to end
            if entry is None:
                alias = f"__store{next(self.aliases)}"
                self.con.execute(f"ATTACH {_lit(key)} AS {alias}{' (READ_ONLY)' if read_only else ''}")
                entry = self.files[key] = _Attached(alias, read_only)
            entry.users[me] += 1
            con = self.con.cursor()
        try:
            con.execute(f"USE {entry.alias}")
        except BaseException:
            self.release(key, con)
            raise
        return con, key

    def release(self, key: str, con: duckdb.DuckDBPyConnection) -> None:
        with suppress(duckdb.Error):
            con.close()
        with self.lock:
            entry = self.files.get(key)
            if entry is None:
                return
            entry.users[threading.get_ident()] -= 1
            if entry.users.total() <= 0:
                # checkpoints the file and releases its lock; a checkpoint that fails (a full disk) leaves it
                # attached, its commits in the write-ahead log, and the next call uses it again
                entry.users.clear()
                self.con.execute(f"DETACH {entry.alias}")
                del self.files[key]


_engine = _Engine()
_inherited: list[_Engine] = []


def _after_fork_in_child() -> None:
    global _engine
    _inherited.append(_engine)
    _engine = _Engine()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _carry_failed_usage(con: duckdb.DuckDBPyConnection, runs: list[RunRecord]) -> None:
    """A failed run being replaced (``--retry-failed``, ``--retry-agent-failed``) leaves its tokens in the new record's ``earlier_*``
    (one query for all of ``runs``)."""
    with_usage = {run.run_id: run for run in runs if run.usage is not None}
    if not with_usage:
        return
    rows = con.execute(
        "SELECT r.run_id, coalesce(u.input_tokens, 0) + coalesce(u.earlier_input_tokens, 0), "
        "coalesce(u.output_tokens, 0) + coalesce(u.earlier_output_tokens, 0), "
        "coalesce(u.requests, 0) + coalesce(u.earlier_requests, 0), r.finished_at "
        "FROM runs r JOIN usage u USING (run_id) WHERE r.run_id IN (SELECT unnest(?)) AND r.status <> 'ok'",
        [list(with_usage)]).fetchall()
    for run_id, *old in rows:
        run = with_usage[run_id]
        # recording the same attempt again (idempotent) carries nothing
        if old[3] != run.finished_at and run.usage.earlier_requests == 0:
            run.usage.earlier_input_tokens, run.usage.earlier_output_tokens, run.usage.earlier_requests = (
                int(old[0] or 0), int(old[1] or 0), int(old[2] or 0))


def _ddl() -> list[str]:
    tables = {**_TABLES, "data_binding": BINDING_COLUMNS}
    return [
        f"CREATE TABLE IF NOT EXISTS {table} ({', '.join(f'{c} {t}' for c, t in cols.items())})"
        for table, cols in tables.items()
    ] + [f"ALTER TABLE runs ADD COLUMN IF NOT EXISTS {c} {RUN_COLUMNS[c]}" for c in ADDED_COLUMNS] + [
        f"ALTER TABLE usage ADD COLUMN IF NOT EXISTS {c} {t}" for c, t in USAGE_COLUMNS.items()
    ] + [f"UPDATE runs SET status = '{new}' WHERE status = '{old}'" for old, new in LEGACY_STATUS.items()] + [
        DX_LEGACY_SQL]


class Store:
    """A campaign's results store at ``<dir>/results.duckdb``."""

    def __init__(self, path: Path):
        self.path = Path(path)

    @classmethod
    def create(cls, directory: str | os.PathLike[str]) -> Store:
        """Open the store in ``directory``, creating the folder and tables if needed."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        store = cls(directory / STORE_FILE)
        store.migrate()
        return store

    def migrate(self) -> None:
        """Create missing tables and columns, and move older rows to the current layout (idempotent)."""
        with self.connect() as con:
            for statement in _ddl():
                con.execute(statement)

    @classmethod
    def open(cls, directory: str | os.PathLike[str]) -> Store:
        """Open an existing store; a folder without one is an error."""
        path = Path(directory) / STORE_FILE
        if not path.exists():
            raise StoreError(f"no results store at {path}: pass the --out folder of a campaign run")
        store = cls(path)
        with store.connect(read_only=True) as con:
            have = {r[0] for r in con.execute("SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() "
                                         "AND table_name = 'runs'").fetchall()}
        if not have:
            raise StoreError(f"{path} holds no runs table; " + CORRUPT_HINT.format(dir=path.parent))
        if set(RUN_COLUMNS) - have:
            store.migrate()  # a store written by an older clinbench
        return store

    @contextmanager
    def connect(self, *, read_only: bool = False, wait_seconds: float | None = None,
                on_wait: Callable[[str], None] | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection; any storage failure (full disk, read-only, corrupt file) is a one-line StoreError.

        While another process holds the file, wait up to ``wait_seconds`` (``LOCK_WAIT_SECONDS`` by
        default; ``math.inf``: until it lets go), telling ``on_wait`` why every ``LOCK_NOTICE_SECONDS``;
        then ``StoreLocked``."""
        start = time.monotonic()
        limit = LOCK_WAIT_SECONDS if wait_seconds is None else wait_seconds
        told = None
        engine = _engine
        while True:
            try:
                con, key = engine.attach(self.path, read_only)
                break
            except _ReadInProgress:  # reads of this process have it: they are short
                if time.monotonic() - start > limit:
                    raise StoreLocked(f"the results store {self.path} is being read in this process for longer than "
                                      f"{limit:.0f} s; try again when that read ends") from None
                time.sleep(0.01)
            except duckdb.IOException as exc:  # another process holds the file
                if lock_holder(exc) is None:  # not a lock conflict (a corrupt block, a read-only place)
                    raise self._error(exc) from exc
                waited = time.monotonic() - start
                if waited > limit:
                    raise StoreLocked(self._locked(exc)) from exc
                if on_wait is not None and (told is None or waited - told >= LOCK_NOTICE_SECONDS):
                    told = waited
                    on_wait(f"{self._locked(exc)}; waiting ({waited:.0f} s so far)")
                time.sleep(0.05)
            except (duckdb.Error, OSError) as exc:
                raise self._error(exc) from exc
        try:
            yield con
        except (duckdb.Error, OSError) as exc:
            raise self._error(exc) from exc
        finally:
            with suppress(duckdb.Error, OSError):
                engine.release(key, con)

    def _locked(self, exc: BaseException) -> str:
        holder = lock_holder(exc)
        who = f" ({holder})" if holder else ""
        return (f"the results store {self.path} is locked by another process{who}: a duckdb shell, notebook or "
                "other command with it open; close that, or wait for it")

    def _error(self, exc: BaseException) -> StoreError:
        hint = CORRUPT_HINT.format(dir=self.path.parent)
        message = explain(exc, self.path, corrupt_hint=hint)
        if message is None:
            message = f"cannot use the results store {self.path} ({str(exc).strip().splitlines()[0][:200]}); " + hint
        return StoreError(message)

    # -- writing ---------------------------------------------------------------------
    def record(self, run: RunRecord, **wait: Any) -> None:
        """Record one finished run with its column scores and usage, replacing any earlier copy
        (``wait``: ``wait_seconds`` and ``on_wait`` of ``connect``)."""
        self.record_many([run], **wait)

    def record_many(self, runs: Iterable[RunRecord], **wait: Any) -> None:
        runs = list(runs)
        for run in runs:
            if run.benchmark not in BENCHMARKS:
                raise StoreError(f"run {run.run_id}: benchmark must be one of {BENCHMARKS}, not {run.benchmark!r}")
            try:
                run.status = normalise_status(run.status)
            except ValueError:
                raise StoreError(f"run {run.run_id}: status must be one of {', '.join(RunStatus)}, "
                                 f"not {run.status!r}") from None
        if not runs:
            return
        marks = ", ".join("?" for _ in RUN_COLUMNS)
        latest = {run.run_id: run for run in runs}  # a run named twice: its last record is kept
        runs = list(latest.values())
        ids = list(latest)
        with self.connect(**wait) as con:
            con.execute("BEGIN TRANSACTION")
            try:
                _carry_failed_usage(con, runs)
                for table in _TABLES:
                    con.execute(f"DELETE FROM {table} WHERE run_id IN (SELECT unnest(?))", [ids])
                con.executemany(f"INSERT INTO runs ({', '.join(RUN_COLUMNS)}) VALUES ({marks})", [run.row() for run in runs])
                scores = [[run.run_id, c.name, c.match_rate, c.nmae] for run in runs for c in run.column_scores]
                if scores:
                    con.executemany("INSERT INTO column_scores VALUES (?, ?, ?, ?)", scores)
                usage = [[run.run_id, *(getattr(run.usage, f) for f in USAGE_FIELDS)] for run in runs if run.usage is not None]
                if usage:
                    con.executemany(f"INSERT INTO usage (run_id, {', '.join(USAGE_FIELDS)}) VALUES "
                                    f"(?{', ?' * len(USAGE_FIELDS)})", usage)
                con.execute("COMMIT")
            except BaseException:
                # an interrupt or a failed write may already have ended the transaction
                with suppress(duckdb.Error):
                    con.execute("ROLLBACK")
                raise

    def records(self, run_ids: Iterable[str] | None = None) -> dict[str, RunRecord]:
        """Recorded runs back as ``RunRecord``s (with column scores and usage), by run id: the ones named, or
        every run; read in one connection (a campaign's worth in two queries)."""
        wanted = None if run_ids is None else set(run_ids)
        with self.connect(read_only=True) as con:
            cur = con.execute(_RUNS_WITH_USAGE + "LEFT JOIN usage u USING (run_id) ORDER BY r.run_id")
            names = [d[0] for d in cur.description]
            rows = [dict(zip(names, r)) for r in cur.fetchall()]
            scores: dict[str, list[ColumnScore]] = {}
            for run_id, name, rate, nmae in con.execute(
                    "SELECT run_id, column_name, match_rate, nmae FROM column_scores ORDER BY run_id, column_name").fetchall():
                scores.setdefault(run_id, []).append(ColumnScore(name, rate, nmae))
        out = {}
        for row in rows:
            if wanted is not None and row["run_id"] not in wanted:
                continue
            usage = None
            if row.get("input_tokens") is not None or row.get("requests") is not None:
                usage = Usage(**{f: row[f] if row.get(f) is not None else getattr(Usage, f) for f in USAGE_FIELDS})
            out[row["run_id"]] = RunRecord(**{name: row.get(name) for name in RUN_COLUMNS},
                                           column_scores=scores.get(row["run_id"], []), usage=usage)
        return out

    def set_verdict(self, run_id: str, publishable: bool, flag_reason: str | None, *, charged: bool = False) -> None:
        """Store the audit verdict of one run; ``charged``: flagged for its agent's own conduct (counted as 0)."""
        with self.connect() as con:
            con.execute("UPDATE runs SET publishable = ?, flag_reason = ?, flag_charged = ? WHERE run_id = ?",
                        [publishable, flag_reason, charged and not publishable, run_id])

    def bind(self, fingerprints: dict[str, str], db: str, *, replace: bool = False) -> None:
        """Add (or with ``replace``, overwrite) the campaign's data binding, one row per reference."""
        with self.connect() as con:
            for name, fingerprint in sorted(fingerprints.items()):
                if replace:
                    con.execute("DELETE FROM data_binding WHERE name = ?", [name])
                con.execute("INSERT OR IGNORE INTO data_binding VALUES (?, ?, ?, now()::TIMESTAMP)", [name, fingerprint, db])

    def set_data(self, run_id: str, data_digest: str, rescored_against: str | None) -> None:
        with self.connect() as con:
            con.execute("UPDATE runs SET data_digest = ?, rescored_against = coalesce(?, rescored_against) WHERE run_id = ?",
                        [data_digest, rescored_against, run_id])

    # -- reading ---------------------------------------------------------------------
    def binding(self) -> dict[str, tuple[str, str]]:
        """Reference table -> (fingerprint, database path) the campaign is bound to (empty before its first run)."""
        with self.connect(read_only=True) as con:
            have = con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
                               "AND table_name = 'data_binding'").fetchone()[0]
            if not have:
                return {}
            return {n: (f, d) for n, f, d in con.execute("SELECT name, fingerprint, db FROM data_binding").fetchall()}

    def run_ids(self) -> set[str]:
        """The ids of every recorded run (what a resumed campaign skips)."""
        with self.connect(read_only=True) as con:
            return {r[0] for r in con.execute("SELECT run_id FROM runs").fetchall()}

    def count(self) -> int:
        with self.connect(read_only=True) as con:
            return con.execute("SELECT count(*) FROM runs").fetchone()[0]

    def runs(self, *, publishable_only: bool = False, benchmark: str | None = None) -> list[dict[str, Any]]:
        """Every run as a dict of the ``runs`` columns plus usage tokens, ordered by run_id."""
        where, params = [], []
        if publishable_only:
            where.append("r.publishable")
        if benchmark is not None:
            where.append("r.benchmark = ?")
            params.append(benchmark)
        sql = (
            _RUNS_WITH_USAGE
            + "LEFT JOIN usage u USING (run_id)"
            + (f" WHERE {' AND '.join(where)}" if where else "")
            + " ORDER BY r.run_id"
        )
        with self.connect(read_only=True) as con:
            cur = con.execute(sql, params)
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row)) for row in cur.fetchall()]

    def get(self, run_id: str) -> dict[str, Any] | None:
        return next((r for r in self.runs() if r["run_id"] == run_id), None)

    def column_scores(self, run_id: str | None = None) -> list[dict[str, Any]]:
        sql = "SELECT * FROM column_scores" + (" WHERE run_id = ?" if run_id else "") + " ORDER BY run_id, column_name"
        with self.connect(read_only=True) as con:
            cur = con.execute(sql, [run_id] if run_id else [])
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row)) for row in cur.fetchall()]

    def runs_table(self, *, publishable_only: bool = False):
        """The runs (with usage) as a pyarrow Table, for the stats module."""
        import duckdb  # noqa: F401  (the package's Python layer gives connections .sql() and Arrow results)

        where = " WHERE r.publishable" if publishable_only else ""
        with self.connect(read_only=True) as con:
            return con.sql(
                _RUNS_WITH_USAGE
                + f"LEFT JOIN usage u USING (run_id){where} ORDER BY r.run_id"
            ).to_arrow_table()

    def export_csv(self, out: str | os.PathLike[str], *, publishable_only: bool = False) -> Path:
        """Write the runs (with usage) to a CSV file, atomically."""
        out = Path(out)
        rows = self.runs(publishable_only=publishable_only)
        names = list(RUN_COLUMNS) + USAGE_FIELDS
        with atomic_path(out) as tmp, tmp.open("w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(names)
            for row in rows:
                writer.writerow(["" if row.get(n) is None else row[n] for n in names])
        return out
