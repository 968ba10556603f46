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
from contextlib import suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from clinbench.duck import duckdb

from clinbench.derive.catalogue import TaskSpec, get_task
from clinbench.derive.score_read import NULL_TOKENS  # noqa: F401  (re-exported: the rule lives there)
from clinbench.errors import DataError, TaskError
from clinbench.records import ColumnScore

# Which columns count towards the reward (see the module doc).
SCORED_COLUMN_SETS = ("value", "required")
# Identifiers M4Bench never scores, even when required (benchmark/lib/compare.py, 0.5.3).
NON_SCORING_REQUIRED_COLUMNS = frozenset({"subject_id", "hadm_id", "stay_id", "patientunitstayid",
                                          "patienthealthsystemstayid", "uniquepid"})
# Float slack so that a value exactly at the tolerance (e.g. 1.01 vs 1.00 at 0.01) matches
# despite binary representation; far below any catalogued tolerance.
_EPS = 1e-9
_EXAMPLES = 3


@dataclass
class ScoreResult:
    task_id: str
    reward: float
    strict: bool
    key_precision: float
    key_recall: float
    key_f1: float
    coverage: float
    ordered_value_nmae: float | None
    columns: dict[str, ColumnScore] = field(default_factory=dict)
    checks: dict[str, bool] = field(default_factory=dict)
    reference_rows: int = 0
    agent_rows: int = 0
    extra_keys: int = 0
    duplicate_rows: int = 0
    missing_columns: list[str] = field(default_factory=list)
    scored_columns: str = "value"  # which column set counted: 'value' or 'required'
    reason: str = ""

    @property
    def column_match_rates(self) -> dict[str, float]:
        return {name: col.match_rate for name, col in self.columns.items()}

    def as_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data (``score.json``)."""
        return asdict(self)

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
                 scored_columns: str = "value", cache: bool = True) -> ScoreResult:
    """Score an output CSV for a catalogued task against the reference built in ``db_path``.

    The reference is prepared once per database file and cached (``score_reference``);
    ``cache=False`` prepares it from the database without reading or writing the cache (a
    one-off score, such as a Harbor verifier's)."""
    with Scorer(cache=cache) as scorer:
        return scorer(task_id, output_csv, db_path, scored_columns=scored_columns)


def score_command(task_id: str, output_csv: str | Path, db_path: str | Path, *,
                  scored_columns: str = "value") -> ScoreResult:
    """What `clinbench score` does: a mistyped output path and a reference without rows are errors here
    (a run without output scores 0, and every answer would score 0), not scores."""
    spec = get_task(task_id)
    if not Path(output_csv).is_file():
        raise DataError(f"{output_csv} does not exist: give the CSV the agent wrote (e.g. WORKSPACE/output.csv)")
    result = score_output(task_id, output_csv, db_path, scored_columns=scored_columns)
    if result.reference_rows == 0:  # that measures the database, not the output
        raise TaskError(f"{db_path} cannot score {task_id}: reference {spec.target_table} has no rows, so every "
                        f"answer would score 0; not scored (`clinbench data info {db_path}` says why)")
    return result


class Scorer:
    """Scores outputs one after another on one DuckDB connection, each reference read once while the
    outputs of its task follow each other (``rescore`` scores a campaign with one): the same results
    as ``score_output`` for each."""

    def __init__(self, *, cache: bool = True) -> None:
        self.cache = cache
        self.con = duckdb.connect()
        self._current: tuple[str, tuple, str] | None = None  # (database, its identity, table) of ``self._ref``
        self._ref = None

    def __enter__(self) -> Scorer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.con.close()

    def __call__(self, task_id: str, output_csv: str | Path, db_path: str | Path, *,
                 scored_columns: str = "value") -> ScoreResult:
        from clinbench.derive import score_reference
        from clinbench.fileid import file_identity

        spec = get_task(task_id)
        scored_columns_for(spec, scored_columns)  # a bad setting fails before any work
        db_path = Path(db_path)
        if not db_path.is_file():
            raise DataError(f"database {db_path} not found; pass --db the database the references were built in")

        def on_missing(schemas: set[str]) -> str:
            from clinbench.derive.reference import missing_reference

            return missing_reference(spec, db_path, schemas)

        key = (str(db_path), file_identity(db_path), spec.target_table)
        if key != self._current:
            if self._current is not None:  # the previous reference: a view of the cache or a table
                for kind in ("VIEW", "TABLE"):
                    with suppress(duckdb.Error):
                        self.con.execute(f"DROP {kind} IF EXISTS __ref")
            self._ref = score_reference.cached(self.con, db_path, spec.target_table, list(spec.keys), on_missing,
                                               use_cache=self.cache)
            self._current = key
        return _score(spec, output_csv, self.con, self._ref, scored_columns)


def score_against(spec: TaskSpec, output_csv: str | Path, con: duckdb.DuckDBPyConnection,
                  reference: str, *, scored_columns: str = "value") -> ScoreResult:
    """Score ``output_csv`` against the reference relation ``reference`` visible on ``con``."""
    from clinbench.derive import score_reference

    scored_columns_for(spec, scored_columns)
    ref = score_reference.prepare(con, reference, list(spec.keys))
    return _score(spec, output_csv, con, ref, scored_columns)


def _score(spec: TaskSpec, output_csv: str | Path, con: duckdb.DuckDBPyConnection, ref,
           scored_columns: str) -> ScoreResult:
    from clinbench.derive import score_read

    scored = scored_columns_for(spec, scored_columns)
    ref.require([*spec.keys, *scored])
    kinds, n_ref = ref.kinds, ref.rows

    def failed(reason: str, **extra: Any) -> ScoreResult:
        if n_ref == 0:
            reason = f"the reference has no rows in this database, so nothing can match; {reason}"
        return ScoreResult(task_id=spec.id, reward=0.0, strict=False, key_precision=0.0, key_recall=0.0,
                           key_f1=0.0, coverage=0.0, ordered_value_nmae=1.0, reference_rows=n_ref,
                           scored_columns=scored_columns, reason=reason, **extra)

    path = Path(output_csv)
    problem = score_read.file_problem(path)
    if problem:
        return failed(problem, checks={"output_exists": path.is_file(), "non_empty": False})
    unreadable = {"output_exists": True, "non_empty": False}
    header = score_read.plain_header(path)
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
                return failed(f"missing key column(s): {', '.join(missing_keys)}", missing_columns=missing,
                              checks={"output_exists": True, "non_empty": True, "required_columns": False})
            present = [c for c in scored if c in header.columns]
            if score_read.load(con, path, header, list(spec.keys), present, kinds):
                loaded = True
                break
    except score_read.Unreadable as exc:
        return failed(f"output is not a readable CSV: {exc}", checks=unreadable)
    if not loaded:  # unreachable: the sniffed header's text path loads or raises
        return failed("output is not a readable CSV", checks=unreadable)

    n_agent = con.execute("SELECT count(*) FROM __parsed").fetchone()[0]
    if n_agent == 0:
        return failed("output has a header but no rows", checks={"output_exists": True, "non_empty": False})
    join_on = " AND ".join(f"r.{_q(ref.join_column(i))} = a.__k{i}" for i in range(len(spec.keys)))
    # each column's match flag and nMAE cost computed once per joined row, then aggregated (writing the
    # flag out in count_if and in the FILTER made DuckDB bind and plan it twice: 30 ms a run on 17 columns)
    cells = ["a.__k0 AS __found", "r.__pos AS __pos"]
    aggregates = ["count(*)", "count(__found)"]
    for i, c in enumerate(present):
        cells.append(f"{_match_expr(spec, c, kinds[c])} AS __m{i}")
        aggregates.append(f"count_if(__m{i})")
        # positions of the first few mismatching reference rows (an integer heap: cheap)
        aggregates.append(f"min_by(__pos, __pos, {_EXAMPLES}) FILTER (WHERE NOT __m{i})")
        if c in ref.scales:
            cells.append(f"{_cost_expr(c, ref.scales[c])} AS __c{i}")
            aggregates.append(f"avg(__c{i}) FILTER (WHERE __found IS NOT NULL)")
    query = (f"SELECT {', '.join(aggregates)} FROM (SELECT {', '.join(cells)} "
             f"FROM {ref.relation} r LEFT JOIN __agent a ON {join_on})")
    con.execute("CREATE OR REPLACE TEMP VIEW __agent AS SELECT * FROM __parsed")
    key_names = ", ".join(f"__k{i}" for i in range(len(spec.keys)))

    def dedupe() -> int:
        """Keep each key's first row; returns the rows left. rowid follows file order, so the first
        occurrence has the smallest rowid. Duplicates are usually few: they are deleted in place."""
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE __dupkeys AS SELECT {key_names}, min(rowid) AS __first "
            f"FROM __parsed GROUP BY {key_names} HAVING count(*) > 1"
        )
        if con.execute("SELECT count(*) FROM __dupkeys").fetchone()[0]:
            same = " AND ".join(f"p.__k{i} IS NOT DISTINCT FROM d.__k{i}" for i in range(len(spec.keys)))
            con.execute(f"DELETE FROM __parsed p USING __dupkeys d WHERE {same} AND p.rowid <> d.__first")
        return con.execute("SELECT count(*) FROM __parsed").fetchone()[0]

    # More rows than the reference has keys means duplicates or extra keys for certain: remove
    # duplicates first. Otherwise score at once and remove them only if a key matched twice.
    n_keys = dedupe() if n_agent > n_ref else None
    row = con.execute(query).fetchone()
    if n_keys is None and row[0] != n_ref:
        n_keys = dedupe()
        row = con.execute(query).fetchone()
    if n_keys is not None:
        n_dup = n_agent - n_keys
        n_extra = n_keys - row[1]
    else:
        # no reference key matched two agent rows; agent rows that matched none are extra keys
        # or their duplicates (counted only when there are any)
        unmatched = n_agent - row[1]
        n_extra = 0
        if unmatched:
            n_extra = con.execute(f"SELECT count(*) FROM (SELECT 1 FROM __parsed a ANTI JOIN {ref.relation} r "
                                  f"ON {join_on} GROUP BY {key_names})").fetchone()[0]
        n_dup = unmatched - n_extra
        n_keys = n_agent - n_dup
    it = iter(row[1:])
    n_found = int(next(it))
    denom = n_ref + n_extra + n_dup

    found: dict[str, tuple[int, list[int], float | None]] = {}  # column -> matched, mismatch positions, nMAE
    for c in present:
        matched, positions = int(next(it) or 0), list(next(it) or [])
        nmae = None
        if c in ref.scales:
            nmae_val = next(it)
            nmae = 1.0 if nmae_val is None else float(nmae_val)
        found[c] = (matched, positions, nmae)
    examples = _examples(con, spec, ref, {c: f[1] for c, f in found.items()}, join_on)

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
        close = f"abs({r} - {a}) <= {tol!r} + {_EPS} * greatest(1.0, abs({r}))"
    elif kind == "timestamp":
        close = f"abs(epoch({r}) - epoch({a})) <= {spec.timestamp_tolerance_seconds!r} + {_EPS}"
    else:
        close = f"{r} = {a}"
    both_empty = f"({r} IS NULL AND {e})"
    return f"a.__k0 IS NOT NULL AND ({both_empty} OR ({r} IS NOT NULL AND {a} IS NOT NULL AND {close}))"


def _cost_expr(c: str, scale: float) -> str:
    r, a = f"r.{_q(c)}", f"a.{_q('v_' + c)}"
    agent_empty = f"({a} IS NULL)"
    return (f"CASE WHEN {r} IS NULL AND {agent_empty} THEN 0.0 "
            f"WHEN {r} IS NULL OR {agent_empty} THEN 1.0 "
            f"ELSE least(abs({a} - {r}) / {scale!r}, 1.0) END")


def _examples(con: duckdb.DuckDBPyConnection, spec: TaskSpec, ref, positions: dict[str, list[int]],
              join_on: str) -> dict[str, list[dict[str, Any]]]:
    """Each column's first mismatching rows (reference positions given), read in one query."""
    wanted = sorted({p for ps in positions.values() for p in ps})
    if not wanted:
        return {c: [] for c in positions}
    cells = [f"CAST(r.{_q(k)} AS VARCHAR)" for k in spec.keys]
    for c in positions:
        cells += [f"CAST(r.{_q(c)} AS VARCHAR)", _agent_text(c)]
    rows = con.execute(
        f"SELECT r.__pos, a.__k0 IS NULL, {', '.join(cells)} "
        f"FROM (SELECT * FROM {ref.relation} WHERE __pos IN (SELECT unnest(?))) r LEFT JOIN __agent a ON {join_on}",
        [wanted],
    ).fetchall()
    by_pos = {row[0]: row for row in rows}
    n = len(spec.keys)
    out: dict[str, list[dict[str, Any]]] = {}
    for i, (c, ps) in enumerate(positions.items()):
        out[c] = []
        for p in sorted(ps):
            row = by_pos[p]
            reference, agent = row[2 + n + 2 * i], row[3 + n + 2 * i]
            out[c].append({"key": dict(zip(spec.keys, row[2:2 + n])), "reference": reference,
                           "agent": "(key missing)" if row[1] else agent})
    return out


def _agent_text(c: str) -> str:
    v, e = f"a.{_q('v_' + c)}", f"a.{_q('e_' + c)}"
    return f"CASE WHEN {e} THEN '' WHEN {v} IS NULL THEN '(unparseable)' ELSE CAST({v} AS VARCHAR) END"


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
