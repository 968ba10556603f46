"""The scorer: an agent's output CSV against the task's reference rows, in DuckDB.

Rules (docs/tasks.md and docs/scoring.md, matching M4Bench 0.5.3's evaluator, benchmark/lib/compare.py):
- scored columns: the task's value columns (``scored_columns="value"``, the default, as the
  paper and M4Bench's README describe), or those plus every required column that is not a key
  or an identifier (``"required"``, what M4Bench >= 0.5.3's ``scored_value_columns`` scores);
- rows join to the reference on the task's keys; a duplicated agent key keeps its first row;
- per scored column, match rate = matched cells / (reference rows + extra agent keys +
  duplicate agent rows); numbers match within the column's tolerance (exactly-at-tolerance
  matches), timestamps within ``timestamp_tolerance_seconds``, strings exactly; two empty
  cells match only when the agent supplied the key;
- reward = mean match rate; a scored column missing from the output matches nothing (rate 0)
  while the others still count; a missing key column scores 0 overall; a missing required
  column that is not scored only fails strict; key precision/recall/F1; coverage = key recall;
- strict pass = non-empty output with every required column, coverage >= the task's
  threshold and every scored column >= its accuracy threshold;
- ordered nMAE over numeric scored columns (secondary figure).

Reading is forgiving about formatting (BOM, CRLF, quoting, spaces, true/false, ISO or
space-separated timestamps, header case and order) and strict about content: a file that
is missing, empty, not UTF-8, unparseable or missing a key column scores 0 with a reason
instead of raising. docs/scoring.md lists where this reader differs from M4Bench's pandas one.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from clinbench.duck import duckdb, out_of_memory

from clinbench.derive.catalogue import TaskSpec, get_task
from clinbench.derive.score_read import NULL_TOKENS  # noqa: F401  (re-exported: the rule lives there)
from clinbench.errors import DataError, ResourceError, TaskError
from clinbench.column_score import ColumnScore
from clinbench.plain import Plain

# Which columns count towards the reward (see the module doc).
SCORED_COLUMN_SETS = ("value", "required")
# Identifiers M4Bench never scores, even when required (benchmark/lib/compare.py, 0.5.3).
NON_SCORING_REQUIRED_COLUMNS = frozenset({"subject_id", "hadm_id", "stay_id", "patientunitstayid",
                                          "patienthealthsystemstayid", "uniquepid"})
# Float slack so that a value exactly at the tolerance (e.g. 1.01 vs 1.00 at 0.01) matches
# despite binary representation; far below any catalogued tolerance.
_EPS = 1e-9
_EXAMPLES = 3
# nMAE costs (each in [0, 1]) are added as whole multiples of 2**-60, exactly
_COST_UNIT = 1 << 60


class ScoreResult(Plain):
    """One output's score (``score.json``); ``scored_columns`` says which column set counted: 'value' or
    'required'. Written by hand, not a dataclass: ``clinbench.plain`` says why."""

    def __init__(self, task_id: str, reward: float, strict: bool, key_precision: float, key_recall: float,
                 key_f1: float, coverage: float, ordered_value_nmae: float | None,
                 columns: dict[str, ColumnScore] | None = None, checks: dict[str, bool] | None = None,
                 reference_rows: int = 0, agent_rows: int = 0, extra_keys: int = 0, duplicate_rows: int = 0,
                 missing_columns: list[str] | None = None, scored_columns: str = "value", reason: str = "") -> None:
        self._set(task_id=task_id, reward=reward, strict=strict, key_precision=key_precision, key_recall=key_recall,
                  key_f1=key_f1, coverage=coverage, ordered_value_nmae=ordered_value_nmae,
                  columns={} if columns is None else columns, checks={} if checks is None else checks,
                  reference_rows=reference_rows, agent_rows=agent_rows, extra_keys=extra_keys,
                  duplicate_rows=duplicate_rows, missing_columns=[] if missing_columns is None else missing_columns,
                  scored_columns=scored_columns, reason=reason)

    @property
    def column_match_rates(self) -> dict[str, float]:
        return {name: col.match_rate for name, col in self.columns.items()}

    def as_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data (``score.json``): every attribute, the columns, their examples and
        the lists copied."""
        data = dict(vars(self))
        data["columns"] = {name: {**vars(col), "examples": [{**e, "key": dict(e["key"])} for e in col.examples]}
                           for name, col in self.columns.items()}
        data["checks"], data["missing_columns"] = dict(self.checks), list(self.missing_columns)
        return data

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.as_dict(), indent=indent, ensure_ascii=False)


def scored_columns_for(spec: TaskSpec, scored_columns: str = "value") -> list[str]:
    """The columns that count towards the reward under ``scored_columns`` ('value' or 'required')."""
    if scored_columns not in SCORED_COLUMN_SETS:
        raise TaskError(f"--scored-columns must be one of {', '.join(SCORED_COLUMN_SETS)}, not {scored_columns!r}")
    columns = list(spec.scored_columns)
    if scored_columns == "required":
        columns += [c for c in spec.required_columns
                    if c not in columns and c not in spec.keys and c not in NON_SCORING_REQUIRED_COLUMNS]
    return columns


def score_output(task_id: str, output_csv: str | Path, db_path: str | Path, *,
                 scored_columns: str = "value", cache: bool = True, scorer: Scorer | None = None) -> ScoreResult:
    """Score an output CSV for a catalogued task against the reference built in ``db_path``.

    The reference is prepared once per database file and cached (``score_reference``);
    ``cache=False`` prepares it from the database without reading or writing the cache (a
    one-off score, such as a Harbor verifier's). ``scorer``: score on that one, left open (a
    process about to end need not tear its DuckDB down: ``clinbench.__main__``); otherwise each thread
    scores on one Scorer of its own, kept between its scores (``_thread_scorer``)."""
    if scorer is not None:
        return scorer(task_id, output_csv, db_path, scored_columns=scored_columns)
    if not cache:
        with Scorer(cache=False) as scorer:
            return scorer(task_id, output_csv, db_path, scored_columns=scored_columns)
    scorer = _thread_scorer()
    try:
        return scorer(task_id, output_csv, db_path, scored_columns=scored_columns)
    except BaseException:
        _forget_thread_scorer()  # whatever state the failure left it in: the next score starts afresh
        raise


# Each thread's cached-reference Scorer, kept between scores: a campaign worker scores one run after
# another, and starting and closing a DuckDB for each cost 17-25 ms a run. Its reference is a view of
# the cached Parquet file (no rows held). A forked child starts its own (DuckDB's threads are not its own).
_scorers = threading.local()
_inherited: list = []


def _thread_scorer() -> Scorer:
    scorer = getattr(_scorers, "scorer", None)
    if scorer is None:
        scorer = _scorers.scorer = Scorer()
    return scorer


def _forget_thread_scorer() -> None:
    scorer = getattr(_scorers, "scorer", None)
    _scorers.scorer = None
    if scorer is not None:
        with suppress(duckdb.Error):
            scorer.con.close()


def _after_fork_in_child() -> None:
    global _scorers
    _inherited.append(_scorers)  # never closed here: the parent's DuckDB
    _scorers = threading.local()


os.register_at_fork(after_in_child=_after_fork_in_child)


def score_command(task_id: str, output_csv: str | Path, db_path: str | Path, *,
                  scored_columns: str = "value", scorer: Scorer | None = None) -> ScoreResult:
    """What `clinbench score` does: a mistyped output path and a reference without rows are errors here
    (a run without output scores 0, and every answer would score 0), not scores."""
    spec = get_task(task_id)
    if not Path(output_csv).is_file():
        raise DataError(f"{output_csv} does not exist: give the CSV the agent wrote (e.g. WORKSPACE/output.csv)")
    result = score_output(task_id, output_csv, db_path, scored_columns=scored_columns, scorer=scorer)
    if result.reference_rows == 0:  # that measures the database, not the output
        raise TaskError(f"{db_path} cannot score {task_id}: reference {spec.target_table} has no rows, so every "
                        f"answer would score 0; not scored (`clinbench data info {db_path}` says why)")
    return result


class Scorer:
    """Scores outputs one after another on one DuckDB connection, each reference read once while the
    outputs of its task follow each other (``rescore`` scores a campaign with one): the same results
    as ``score_output`` for each."""

    def __init__(self, *, cache: bool = True, con: duckdb.DuckDBPyConnection | None = None) -> None:
        """``con``: an in-memory connection of its own to score on (default: a new one); closed with the Scorer."""
        self.cache = cache
        self.con = con if con is not None else duckdb.connect()
        self._current: tuple[str, tuple, str] | None = None  # (database, its identity, table) of ``self._ref``
        self._ref = None

    def __enter__(self) -> Scorer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.con.close()

    def __call__(self, task_id: str, output_csv: str | Path, db_path: str | Path, *,
                 scored_columns: str = "value") -> ScoreResult:
        return self.many(task_id, [output_csv], db_path, scored_columns=scored_columns)[0]

    def many(self, task_id: str | list[str], outputs: list, db_path: str | Path, *,
             scored_columns: str = "value") -> list[ScoreResult]:
        """Score several outputs of a task (``task_id``), or each of its own task (a list, one per output: a
        campaign's runs): those of one header, one reference and one comparison (a task and its raw-mode
        twin) in one query, each with the result it gets alone."""
        tasks = [task_id] * len(outputs) if isinstance(task_id, str) else list(task_id)
        specs = {t: get_task(t) for t in ([task_id] if isinstance(task_id, str) else tasks)}
        for spec in specs.values():
            scored_columns_for(spec, scored_columns)  # a bad setting fails before any work
        db_path = Path(db_path)
        if not db_path.is_file():
            raise DataError(f"database {db_path} not found; pass --db the database the references were built in")
        by_reference: dict[tuple, list[int]] = {}
        for i, t in enumerate(tasks):
            by_reference.setdefault((specs[t].target_table, tuple(specs[t].keys)), []).append(i)
        results: list[ScoreResult | None] = [None] * len(outputs)
        with _machine_failures():
            for members in by_reference.values():
                group = [specs[tasks[i]] for i in members]
                ref = self._reference(group[0], db_path)
                for i, result in zip(members, _score_many(group, [outputs[i] for i in members], self.con, ref,
                                                          scored_columns)):
                    results[i] = result
        return results

    def _reference(self, spec: TaskSpec, db_path: Path):
        """The task's reference in ``db_path``, prepared (or read from the cache) unless it is the current one."""
        from clinbench.derive import score_reference
        from clinbench.derive.cache_files import cache_dir
        from clinbench.fileid import file_identity

        def on_missing(schemas: set[str]) -> str:
            from clinbench.derive.reference import missing_reference

            return missing_reference(spec, db_path, schemas)

        # the cache folder too: a reference prepared from another one is not read from this one's file
        key = (str(db_path), file_identity(db_path), spec.target_table, str(cache_dir()) if self.cache else None)
        if key != self._current:
            if self._current is not None:  # the previous reference: a view of the cache or a table
                for kind in ("VIEW", "TABLE"):
                    with suppress(duckdb.Error):
                        self.con.execute(f"DROP {kind} IF EXISTS __ref")
            self._ref = score_reference.cached(self.con, db_path, spec.target_table, list(spec.keys), on_missing,
                                               use_cache=self.cache)
            self._current = key
        return self._ref


def score_against(spec: TaskSpec, output_csv: str | Path, con: duckdb.DuckDBPyConnection,
                  reference: str, *, scored_columns: str = "value") -> ScoreResult:
    """Score ``output_csv`` against the reference relation ``reference`` visible on ``con``."""
    return score_many_against(spec, [output_csv], con, reference, scored_columns=scored_columns)[0]


def score_many_against(spec: TaskSpec, outputs: list, con: duckdb.DuckDBPyConnection, reference: str, *,
                       scored_columns: str = "value") -> list[ScoreResult]:
    """``score_against`` of each output, the reference prepared once (see ``Scorer.many``)."""
    from clinbench.derive import score_reference

    scored_columns_for(spec, scored_columns)
    with _machine_failures():
        ref = score_reference.prepare(con, reference, list(spec.keys))
        return _score_many([spec] * len(outputs), outputs, con, ref, scored_columns)


@contextmanager
def _machine_failures() -> Iterator[None]:
    """DuckDB out of memory, or of disk for its spill files, while scoring: a ``ResourceError`` (the machine's
    failure: a campaign records the run as a harness error, not scored), never a score."""
    try:
        yield
    except duckdb.Error as exc:
        from clinbench.derive.score_read import spill_disk_full

        if memory := out_of_memory(exc):
            raise ResourceError(f"not scored: {memory}") from exc
        if spill_disk_full(exc):
            raise ResourceError("not scored: disk full: no space left for DuckDB's temporary files (its temp_directory); "
                                "free space and run the same command again") from exc
        raise


def _score_many(specs: list[TaskSpec], outputs: list, con: duckdb.DuckDBPyConnection, ref,
                scored_columns: str) -> list[ScoreResult]:
    """Score each output against ``ref`` by its task (``specs``, one per output); files of one plain header
    compared alike (the same keys, scored columns and tolerances) are read and scored together, one query for
    all of them; any other file, or a batch that does not read at once, one by one: each gets what it gets
    alone."""
    from clinbench.derive import score_read

    paths = [Path(p) for p in outputs]
    results: dict[int, ScoreResult] = {}
    alone: list[tuple[int, score_read.Header | None]] = []
    batches: dict[tuple, list[int]] = {}
    headers: dict[tuple, score_read.Header] = {}
    batched: dict[tuple, set[Path]] = {}
    for i, (spec, path) in enumerate(zip(specs, paths)):
        scored = scored_columns_for(spec, scored_columns)
        ref.require([*spec.keys, *scored])
        if problem := score_read.file_problem(path):
            results[i] = _failed(spec, ref, scored_columns, problem,
                                 checks={"output_exists": path.is_file(), "non_empty": False})
            continue
        header = score_read.plain_header(path)
        if len(paths) > 1 and header is not None and all(k in header.columns for k in spec.keys):
            shape = (tuple(header.columns.items()), _comparison(spec, scored))
            headers.setdefault(shape, header)
            if path in batched.setdefault(shape, set()):
                alone.append((i, header))  # a file read twice in one batch would be one file of doubled rows
            else:
                batched[shape].add(path)
                batches.setdefault(shape, []).append(i)
        else:
            alone.append((i, header))
    for shape, members in batches.items():
        header, spec = headers[shape], specs[members[0]]
        present = [c for c in scored_columns_for(spec, scored_columns) if c in header.columns]
        files = [paths[i] for i in members]
        if len(members) > 1 and score_read.load_many(con, files, header, list(spec.keys), present, ref.kinds):
            runs = [(k, specs[i], [c for c in specs[i].required_columns if c not in header.columns])
                    for k, i in enumerate(members)]
            results.update(zip(members, _score_parsed(con, ref, scored_columns, runs, present)))
        else:
            alone += [(i, header) for i in members]
    for i, header in alone:
        results[i] = _score_file(specs[i], paths[i], header, con, ref, scored_columns_for(specs[i], scored_columns),
                                 scored_columns)
    return [results[i] for i in range(len(paths))]


def _comparison(spec: TaskSpec, scored: list[str]) -> tuple:
    """What the scoring query reads of a task: outputs of tasks alike in it are scored by one query."""
    return (tuple(spec.keys), tuple(scored), tuple(spec.tolerance(c) for c in scored), spec.timestamp_tolerance_seconds)


def _failed(spec: TaskSpec, ref, scored_columns: str, reason: str, **extra: Any) -> ScoreResult:
    if ref.rows == 0:
        reason = f"the reference has no rows in this database, so nothing can match; {reason}"
    return ScoreResult(task_id=spec.id, reward=0.0, strict=False, key_precision=0.0, key_recall=0.0,
                       key_f1=0.0, coverage=0.0, ordered_value_nmae=1.0, reference_rows=ref.rows,
                       scored_columns=scored_columns, reason=reason, **extra)


def _score_file(spec: TaskSpec, path: Path, header, con: duckdb.DuckDBPyConnection, ref, scored: list[str],
                scored_columns: str) -> ScoreResult:
    """Score one readable file whose plain header is ``header`` (None: DuckDB's sniffer reads it)."""
    from clinbench.derive import score_read

    unreadable = {"output_exists": True, "non_empty": False}
    loaded = False
    try:
        for attempt in range(2):
            if header is None or (attempt and header.reader_names is not None):
                header = score_read.sniffed_header(con, path)
            missing = [c for c in spec.required_columns if c not in header.columns]
            missing_keys = [c for c in spec.keys if c not in header.columns]
            if missing_keys and header.reader_names is not None:
                continue  # let DuckDB's sniffer read the header before calling a key missing
            if missing_keys:
                return _failed(spec, ref, scored_columns, f"missing key column(s): {', '.join(missing_keys)}",
                               missing_columns=missing,
                               checks={"output_exists": True, "non_empty": True, "required_columns": False})
            present = [c for c in scored if c in header.columns]
            if not attempt and header.reader_names is not None and ref.unique_keys and ref.rows:
                paired = _paired(spec, con, ref, path, header, present)
                if paired is not None:
                    return _result(spec, ref, scored, scored_columns, missing, present, *paired,
                                   ref.rows, ref.rows, ref.rows, 0, 0)
            if score_read.load(con, path, header, list(spec.keys), present, ref.kinds):
                loaded = True
                break
    except score_read.Unreadable as exc:
        return _failed(spec, ref, scored_columns, f"output is not a readable CSV: {exc}", checks=unreadable)
    if not loaded:  # unreachable: the sniffed header's text path loads or raises
        return _failed(spec, ref, scored_columns, "output is not a readable CSV", checks=unreadable)
    return _score_parsed(con, ref, scored_columns, [(0, spec, missing)], present)[0]


def _score_parsed(con: duckdb.DuckDBPyConnection, ref, scored_columns: str,
                  runs: list[tuple[int, TaskSpec, list[str]]], present: list[str]) -> list[ScoreResult]:
    """Score the outputs read into ``__parsed`` (rows by ``__f``; all with the columns ``present``), each
    (its ``__f``, task, required columns it lacks) of ``runs``; their tasks compare alike (``_comparison``)."""
    spec = runs[0][1]  # the comparison's
    scored = scored_columns_for(spec, scored_columns)
    kinds, n_ref = ref.kinds, ref.rows
    agent_rows = dict(con.execute("SELECT __f, count(*) FROM __parsed GROUP BY __f").fetchall())
    key_on = _key_on(spec, ref)
    cells, aggregates = _column_sql(spec, ref, present)
    cells = ["f.__f AS __g", "a.__k0 AS __found", "r.__pos AS __pos", *cells]
    aggregates = ["__g", "count(*)", "count(__found)", *aggregates]
    # every reference row once per output file, each joined to that file's rows
    query = (f"SELECT {', '.join(aggregates)} FROM (SELECT {', '.join(cells)} "
             f"FROM {ref.relation} r CROSS JOIN (SELECT DISTINCT __f FROM __parsed) f "
             f"LEFT JOIN __agent a ON a.__f = f.__f AND {key_on}) GROUP BY __g")
    key_names = ", ".join(f"__k{i}" for i in range(len(spec.keys)))
    # a file's figures when the reference has no rows (the join gives it none)
    empty = (0, 0, *[x for c in present for x in ((0, None, None, 0) if c in ref.scales else (0, None))])

    def dedupe() -> dict[str, int]:
        """Keep each file's first row of each key; returns each file's rows left. rowid follows file order,
        so the first occurrence has the smallest rowid. Duplicates are usually few: deleted in place."""
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE __dupkeys AS SELECT __f, {key_names}, min(rowid) AS __first "
            f"FROM __parsed GROUP BY __f, {key_names} HAVING count(*) > 1"
        )
        if con.execute("SELECT count(*) FROM __dupkeys").fetchone()[0]:
            same = " AND ".join(f"p.__k{i} IS NOT DISTINCT FROM d.__k{i}" for i in range(len(spec.keys)))
            con.execute(f"DELETE FROM __parsed p USING __dupkeys d WHERE p.__f = d.__f AND {same} "
                        f"AND p.rowid <> d.__first")
        return dict(con.execute("SELECT __f, count(*) FROM __parsed GROUP BY __f").fetchall())

    def figures() -> dict[str, tuple]:
        return {row[0]: row[1:] for row in con.execute(query).fetchall()}

    # More rows than the reference has keys means duplicates or extra keys for certain: remove
    # duplicates first. Otherwise score at once and remove them only if a key matched twice.
    n_keys = dedupe() if any(n > n_ref for n in agent_rows.values()) else None
    rows = figures()
    if n_keys is None and any(rows.get(f, empty)[0] != n_ref for f in agent_rows):
        n_keys = dedupe()
        rows = figures()
    extra = {}
    if n_keys is None:
        # no reference key matched two agent rows; agent rows that matched none are extra keys
        # or their duplicates (counted only when there are any)
        if any(n - rows.get(f, empty)[1] for f, n in agent_rows.items()):
            extra = dict(con.execute(
                f"SELECT __f, count(*) FROM (SELECT a.__f FROM __parsed a ANTI JOIN {ref.relation} r "
                f"ON {key_on} GROUP BY a.__f, {key_names}) GROUP BY __f").fetchall())

    found: dict[str, dict[str, tuple[int, list[int], float | None]]] = {}  # file -> column -> figures
    for f in agent_rows:
        found[f] = _column_figures(ref, present, rows.get(f, empty))
    examples = _examples(con, spec, ref, {f: {c: v[1] for c, v in cols.items()} for f, cols in found.items()},
                         key_on)

    out = []
    for f, spec, missing in runs:
        n_agent = agent_rows.get(f, 0)
        if n_agent == 0:
            out.append(_failed(spec, ref, scored_columns, "output has a header but no rows",
                               checks={"output_exists": True, "non_empty": False}))
            continue
        n_found = int(rows.get(f, empty)[1])
        if n_keys is not None:
            n_dup = n_agent - n_keys[f]
            n_extra = n_keys[f] - n_found
        else:
            n_extra = extra.get(f, 0)
            n_dup = n_agent - n_found - n_extra
        out.append(_result(spec, ref, scored, scored_columns, missing, present, found[f], examples[f],
                           n_agent, n_found, n_agent - n_dup, n_extra, n_dup))
    return out


def _column_sql(spec: TaskSpec, ref, present: list[str], example: str = "__pos",
                examples: str = "{}") -> tuple[list[str], list[str]]:
    """Per scored column present, the cells computed per joined row (``r`` the reference's, ``a`` the agent's;
    ``__found`` and ``__pos`` beside them) and the aggregates over them: its matches, its first mismatching
    rows (a heap of ``example``, ordered by position, passed through ``examples``) and its nMAE cost."""
    # each column's match flag and nMAE cost computed once per joined row, then aggregated (writing the
    # flag out in count_if and in the FILTER made DuckDB bind and plan it twice: 30 ms a run on 17 columns)
    cells, aggregates = [], []
    for i, c in enumerate(present):
        cells.append(f"{_match_expr(spec, c, ref.kinds[c])} AS __m{i}")
        aggregates.append(f"count_if(__m{i})")
        # the first few mismatching reference rows (by default their positions: an integer heap, cheap)
        heap = f"min_by({example.format(i=i)}, __pos, {_EXAMPLES}) FILTER (WHERE NOT __m{i})"
        aggregates.append(examples.format(heap))
        if c in ref.scales:
            # costs summed as integers of 2**-60: the same sum in any order (a double sum is not: grouped
            # or across DuckDB's threads its last bits followed the order the rows were added in)
            cost, empty = _cost_exprs(c, ref.scales[c])
            cells += [f"{cost} AS __c{i}", f"{empty} AS __z{i}"]
            aggregates += [f"sum(__c{i})", f"count_if(__z{i})"]
    return cells, aggregates


def _column_figures(ref, present: list[str], figures) -> dict[str, tuple[int, list, float | None]]:
    """column -> (matched, first mismatches, nMAE) from the joined rows, the keys found among them and the
    aggregates of ``_column_sql`` (``figures``, in that order)."""
    n_rows, n_found, *columns = figures
    n_rows, n_found = int(n_rows), int(n_found)
    it = iter(columns)
    found: dict[str, tuple[int, list, float | None]] = {}
    for c in present:
        matched, first = int(next(it) or 0), list(next(it) or [])
        nmae = None
        if c in ref.scales:
            # a joined row with a value missing counted a whole unit; one whose key was not found counts
            # nothing, one of two empty cells costs 0
            total, empty = int(next(it) or 0), int(next(it))
            nmae = (total - _COST_UNIT * (n_rows - n_found + empty)) / (_COST_UNIT * n_found) if n_found else 1.0
        found[c] = (matched, first, nmae)
    return found


def _paired(spec: TaskSpec, con: duckdb.DuckDBPyConnection, ref, path: Path, header, present: list[str]):
    """Score an output that lists the reference's keys in the reference's order (sorted by key, as
    `clinbench tasks reference` writes them) row by row, in one pass over the file: no join and no table of
    the agent's rows. (column figures, examples) as the join gives them, or None when the file is not such an
    output or does not read at once: its first row off the reference's keys (or past its end) stops the
    pass, and the join decides, with every message it gives."""
    from clinbench.derive import score_read

    reader, agent = score_read.first_read(path, header, list(spec.keys), present, ref.kinds)
    # each example whole, as ``_examples`` shows it (the reference's key and cell, the agent's text), computed
    # for the few rows kept: neither the file nor the reference is read again (that query read every row of
    # the reference's columns for three rows a column: 15-20 ms of a 209k-row output with mismatches)
    keys = ", ".join(f"CAST(x.k{j} AS VARCHAR)" for j in range(len(spec.keys)))
    text = "{'p': x.p, 't': " + _agent_text("x.v", "x.e") + ", 'r': CAST(x.r AS VARCHAR), 'k': [" + keys + "]}"
    kept = ", ".join(f"'k{j}': __rk{j}" for j in range(len(spec.keys)))
    cells, aggregates = _column_sql(spec, ref, present,
                                    "{{'p': __pos, 'v': __v{i}, 'e': __e{i}, 'r': __r{i}, " + kept + "}}",
                                    "list_transform({}, lambda x: " + text.replace("{", "{{").replace("}", "}}") + ")")
    cells = ["a.__k0 AS __found", "r.__pos AS __pos", *cells]
    cells += [f"a.{_q('v_' + c)} AS __v{i}" for i, c in enumerate(present)]
    cells += [f"a.{_q('e_' + c)} AS __e{i}" for i, c in enumerate(present)]
    cells += [f"r.{_q(c)} AS __r{i}" for i, c in enumerate(present)]
    cells += [f"r.{_q(k)} AS __rk{j}" for j, k in enumerate(spec.keys)]
    # a row whose key is not the reference row's: the output is not in the reference's order (or lacks or
    # adds rows) and the join must score it; the error ends the pass there (the file streams, the reference
    # is the side DuckDB holds: a shuffled 209k-row output stops after 0.08 s CPU, 0.22 s the other way; a
    # check of its first rows alone cost 0.04 s)
    cells.append(f"CASE WHEN {_key_on(spec, ref)} THEN 1 ELSE error('clinbench: not paired') END AS __paired")
    aggregates = ["count(*)", "count(__found)", *aggregates, "count(__paired)"]
    try:
        # the agent's row ``a`` and the reference's ``r`` as structs, computed above the join of two bare
        # scans, which DuckDB reads in step: under the join, the agent's cells made it copy the whole
        # reference first (10 ms CPU and 15 MB of fresh pages a 209k-row score). The reader's columns are
        # c0, c1, ... (a plain header): none of an agent's names can shadow __r
        row = con.execute(f"SELECT {', '.join(aggregates)} FROM (SELECT {', '.join(cells)} "
                          f"FROM (SELECT {agent} AS a, __r AS r FROM {reader} POSITIONAL JOIN {ref.relation} __r))").fetchone()
    except duckdb.Error as exc:
        if score_read.machine_failure(exc):
            raise
        return None
    found = _column_figures(ref, present, row[:-1])
    examples = {c: [{"key": dict(zip(spec.keys, x["k"])), "reference": x["r"], "agent": x["t"]}
                    for x in sorted(first, key=lambda x: x["p"])] for c, (_, first, _) in found.items()}
    found = {c: (matched, [x["p"] for x in first], nmae) for c, (matched, first, nmae) in found.items()}
    return found, examples


def _key_on(spec: TaskSpec, ref) -> str:
    """Reference row ``r`` and agent row ``a`` have the same key (the join's condition)."""
    return " AND ".join(f"r.{_q(ref.join_column(i))} = a.__k{i}" for i in range(len(spec.keys)))


def _result(spec: TaskSpec, ref, scored: list[str], scored_columns: str, missing: list[str], present: list[str],
            found: dict[str, tuple[int, list[int], float | None]], examples: dict[str, list],
            n_agent: int, n_found: int, n_keys: int, n_extra: int, n_dup: int) -> ScoreResult:
    """One output's score from its counts."""
    kinds, n_ref = ref.kinds, ref.rows
    denom = n_ref + n_extra + n_dup
    columns: dict[str, ColumnScore] = {}
    for c in scored:
        kind = kinds[c]
        tol = spec.timestamp_tolerance_seconds if kind == "timestamp" else spec.tolerance(c)
        if c not in present:
            columns[c] = ColumnScore(name=c, kind=kind, tolerance=tol, matched=0, denominator=denom,
                                     match_rate=0.0, nmae=1.0 if c in ref.scales else None)
            continue
        matched, _, nmae = found[c]
        rate = matched / denom if denom else 0.0
        columns[c] = ColumnScore(name=c, kind=kind, tolerance=tol, matched=matched, denominator=denom,
                                 match_rate=rate, nmae=nmae, examples=examples[c])

    precision = n_found / n_keys if n_keys else 0.0
    recall = n_found / n_ref if n_ref else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    nmaes = [col.nmae for col in columns.values() if col.nmae is not None]
    checks = {
        "output_exists": True,
        "non_empty": True,
        "required_columns": not missing,
        "coverage": recall >= spec.coverage_threshold,
        "accuracy": all(col.match_rate >= spec.accuracy_threshold for col in columns.values()),
    }
    # M4Bench: a missing scored column matches nothing, the others still count
    reward = sum(col.match_rate for col in columns.values()) / len(columns)
    reason = ""
    if missing:
        scored_missing = [c for c in missing if c in columns]
        reason = f"missing required column(s): {', '.join(missing)}"
        if scored_missing:
            reason += f" (scored 0: {', '.join(scored_missing)})"
    elif not n_ref:
        reason = "the reference has no rows in this database, so nothing can match"
    elif not checks["coverage"]:
        reason = f"row coverage {recall:.3f} below {spec.coverage_threshold}"
    elif not checks["accuracy"]:
        low = [c for c, col in columns.items() if col.match_rate < spec.accuracy_threshold]
        reason = f"match rate below {spec.accuracy_threshold} in: {', '.join(low)}"
    return ScoreResult(
        task_id=spec.id, reward=reward, strict=all(checks.values()), key_precision=precision,
        key_recall=recall, key_f1=f1, coverage=recall,
        ordered_value_nmae=sum(nmaes) / len(nmaes) if nmaes else None, columns=columns, checks=checks,
        reference_rows=n_ref, agent_rows=n_agent, extra_keys=n_extra, duplicate_rows=n_dup,
        missing_columns=missing, scored_columns=scored_columns, reason=reason,
    )


def _match_expr(spec: TaskSpec, c: str, kind: str) -> str:
    r, a, e = f"r.{_q(c)}", f"a.{_q('v_' + c)}", f"a.{_q('e_' + c)}"
    if kind == "numeric":
        tol = spec.tolerance(c)
        # equal values are close; the CASE computes the tolerance only for the other rows (most rows of
        # an output: 1-2 ms a column of 209k rows). A missing value (NULL =) takes the ELSE branch
        close = (f"CASE WHEN {a} = {r} THEN true "
                 f"ELSE abs({r} - {a}) <= {tol!r} + {_EPS} * greatest(1.0, abs({r})) END")
    elif kind == "timestamp":
        close = f"abs(epoch({r}) - epoch({a})) <= {spec.timestamp_tolerance_seconds!r} + {_EPS}"
    else:
        close = f"{r} = {a}"
    # the key found, and both values close, or (a value missing: ``close`` is NULL) both empty
    return f"a.__k0 IS NOT NULL AND coalesce({close}, {r} IS NULL AND {e})"


def _cost_exprs(c: str, scale: float) -> tuple[str, str]:
    """A row's nMAE cost in units of ``_COST_UNIT``, in two parts: ``least`` of the scaled difference and 1,
    which is 1 when either value is missing (``least`` skips a NULL), as the cost is when one is; and
    whether both are missing (cost 0, not 1: subtracted). An equal pair costs 0, as the formula gives it:
    the CASE computes the formula for the other rows only (most cells of an output are equal: 2-3 ms a
    column of 209k rows)."""
    r, a = f"r.{_q(c)}", f"a.{_q('v_' + c)}"
    cost = f"CAST(least(abs({a} - {r}) / {scale!r}, 1.0) * {_COST_UNIT}.0 AS BIGINT)"
    return f"CASE WHEN {a} = {r} THEN 0 ELSE {cost} END", f"a.__k0 IS NOT NULL AND {r} IS NULL AND {a} IS NULL"


def _examples(con: duckdb.DuckDBPyConnection, spec: TaskSpec, ref, positions: dict[str, dict[str, list[int]]],
              key_on: str) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Each file's columns' first mismatching rows (reference positions given, by file), read in one query:
    the agent's cells from ``__agent`` (joined ``key_on``)."""
    wanted = sorted({(f, p) for f, cols in positions.items() for ps in cols.values() for p in ps})
    if not wanted:
        return {f: {c: [] for c in cols} for f, cols in positions.items()}
    columns = list(next(iter(positions.values())))  # every file has the same columns
    cells = [f"CAST(r.{_q(k)} AS VARCHAR)" for k in spec.keys]
    for c in columns:
        cells += [f"CAST(r.{_q(c)} AS VARCHAR)", _agent_text(f"a.{_q('v_' + c)}", f"a.{_q('e_' + c)}")]
    rows = con.execute(
        f"SELECT w.__f, r.__pos, a.__k0 IS NULL, {', '.join(cells)} "
        f"FROM (SELECT unnest(?) AS __f, unnest(?) AS __p) w JOIN {ref.relation} r ON r.__pos = w.__p "
        f"LEFT JOIN __agent a ON a.__f = w.__f AND {key_on}",
        [[f for f, _ in wanted], [p for _, p in wanted]],
    ).fetchall()
    by_pos = {(row[0], row[1]): row[1:] for row in rows}
    n = len(spec.keys)
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for f, cols in positions.items():
        out[f] = {}
        for i, (c, ps) in enumerate(cols.items()):
            out[f][c] = []
            for p in sorted(ps):
                row = by_pos[(f, p)]
                reference, text = row[2 + n + 2 * i], row[3 + n + 2 * i]
                out[f][c].append({"key": dict(zip(spec.keys, row[2:2 + n])), "reference": reference,
                                  "agent": "(key missing)" if row[1] else text})
    return out


def _agent_text(v: str, e: str) -> str:
    """The agent's cell as the examples show it, from its value ``v`` and whether it was empty ``e``."""
    return f"CASE WHEN {e} THEN '' WHEN {v} IS NULL THEN '(unparseable)' ELSE CAST({v} AS VARCHAR) END"


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
