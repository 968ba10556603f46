"""Load per-run results from a campaign directory or a per-run CSV into one shape.

Sources:
* a campaign directory holding ``results.duckdb`` (table ``runs``; ``column_scores`` when
  present), read with DuckDB directly;
* a per-run CSV with at least task, condition, model, trial, reward, and optionally
  ``strict`` or ``passed`` + ``total_tests`` (strict = passed == total_tests), key_f1,
  ordered_value_nmae, publishable, schema, run_id, evidence_dir. M4Bench's published
  ``final_codex_runs.csv`` is such a file.

Runs whose ``publishable`` is false are dropped unless ``include_flagged``, except a run flagged
for its agent's own conduct (``flag_charged``), which is kept and charged (``audit_rule``,
``CHARGE``: the one rule the derive and dx statistics share). A run's status
is ``ok``, an agent failure (``agent-failed``; the older ``error`` and ``timeout``) or
``harness-error`` (the harness, not the agent, failed: no reward). An agent failure without
a reward counts as reward 0: leaving it out would reward failing loudly over answering badly.
Harness errors are set apart (``Runs.harness_errors``) and never enter a statistic.
A store whose runs of one task were scored against different data (``data_digest``), or whose
runs were scored against different reference profiles (``profile``), is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from clinbench.duck import duckdb
from clinbench.records import LEGACY_STATUS, STORE_FILE, RunStatus
from clinbench.stats.errors import StatsError

REQUIRED = ("task", "condition", "model", "trial", "reward")
BENCHMARKS = ("derive", "dx")
STATUS_OK = "ok"
AGENT_FAILED = (RunStatus.AGENT_FAILED, *LEGACY_STATUS)  # and the statuses of stores written before it
HARNESS_ERROR = RunStatus.HARNESS_ERROR
_ARRAYS = ("task", "condition", "model", "trial", "schema", "reward", "strict", "key_f1", "nmae", "run_id",
           "evidence_dir", "agent", "status", "reward_missing", "input_tokens", "output_tokens", "cost",
           "elapsed", "earlier_input_tokens", "earlier_output_tokens", "gatekeeper", "judge")
# the columns read as they are: text ("" when NULL) and numbers (NaN when NULL)
_TEXT = ("model", "schema", "run_id", "agent", "gatekeeper", "judge")
_NUMBERS = ("key_f1", "nmae", "input_tokens", "output_tokens", "cost", "elapsed", "earlier_input_tokens",
            "earlier_output_tokens")
# What a run charged for its agent's conduct scores, as a run that wrote nothing scorable does
# (docs/scoring.md: a missing key column is reward 0; an omitted column matches 0 at nMAE 1).
CHARGE = {"reward": 0.0, "strict": 0.0, "key_f1": 0.0, "nmae": 1.0, "match_rate": 0.0, "judge_score": 1.0}


def audit_rule(publishable: np.ndarray, charged: np.ndarray, harness: np.ndarray,
               include_flagged: bool) -> tuple[np.ndarray, np.ndarray]:
    """Which runs a statistic keeps, and which of those it charges (scores as ``CHARGE``).

    An unpublishable run is left out unless ``include_flagged``; one flagged for its agent's own
    conduct (``flag_charged``) is kept and charged, so misbehaving never takes a run out of the
    numbers. Harness errors are never charged (they are set apart by the caller)."""
    publishable = np.asarray(publishable, dtype=bool)
    zeroed = np.asarray(charged, dtype=bool) & ~publishable & ~np.asarray(harness, dtype=bool) & (not include_flagged)
    return publishable | include_flagged | zeroed, zeroed


def unscored_failure(reward: np.ndarray, harness: np.ndarray) -> np.ndarray:
    """Runs a statistic scores as ``CHARGE`` for want of a reward: a run without one that the harness did
    not fail (an agent failure, the older stores' ``error`` and ``timeout`` included). Leaving them out
    would reward failing loudly over answering badly."""
    reward = np.asarray(reward, dtype=float)
    return np.isnan(reward) & ~np.asarray(harness, dtype=bool)


@dataclass
class Runs:
    """Per-run columns as aligned arrays (one element a run)."""

    source: str
    task: np.ndarray
    condition: np.ndarray
    model: np.ndarray
    trial: np.ndarray
    schema: np.ndarray
    reward: np.ndarray
    strict: np.ndarray  # float: 1.0 pass, 0.0 fail, NaN unknown
    key_f1: np.ndarray  # NaN when unknown
    nmae: np.ndarray  # NaN when unknown
    run_id: np.ndarray
    evidence_dir: np.ndarray  # absolute path or "" when none
    agent: np.ndarray
    status: np.ndarray
    reward_missing: np.ndarray  # bool: the source had no reward (counted as 0)
    input_tokens: np.ndarray  # float, NaN when unknown
    output_tokens: np.ndarray
    cost: np.ndarray  # dollars, NaN when unknown
    elapsed: np.ndarray  # seconds, NaN when unknown
    gatekeeper: np.ndarray | None = None  # dx runs: "" when none
    judge: np.ndarray | None = None
    earlier_input_tokens: np.ndarray | None = None  # tokens of attempts a --retry-* replaced (NaN unknown)
    earlier_output_tokens: np.ndarray | None = None
    n_flagged_excluded: int = 0
    n_flagged_charged: int = 0  # flagged for the agent's own conduct: kept, as reward 0 (campaign.audit)
    # runs the harness failed (status harness-error): shown apart, in no statistic
    harness_errors: "Runs | None" = None
    # unpublishable runs left out (audit_rule): in no statistic, but their spend is counted
    excluded: "Runs | None" = None
    benchmark: str = "derive"
    # column_scores rows (run_id, column_name, match_rate, nmae) when the source has them
    column_scores: list[tuple[str, str, float | None, float | None]] = field(default_factory=list)
    # directory the source lives in (evidence paths in a store are relative to it)
    base_dir: Path | None = None
    charged_ids: frozenset = frozenset()  # run_ids charged by audit_rule (their column scores are charged too)

    def __post_init__(self) -> None:
        for name in ("earlier_input_tokens", "earlier_output_tokens"):
            if getattr(self, name) is None:
                setattr(self, name, np.full(self.task.size, np.nan))
        for name in ("gatekeeper", "judge"):
            if getattr(self, name) is None:
                setattr(self, name, np.full(self.task.size, "", dtype=object))

    def __len__(self) -> int:
        return int(self.task.size)

    def subset(self, mask: np.ndarray) -> "Runs":
        arrays = {name: getattr(self, name)[mask] for name in _ARRAYS}
        keep = set(arrays["run_id"].tolist()) if self.column_scores else set()
        return Runs(
            source=self.source,
            n_flagged_excluded=self.n_flagged_excluded,
            n_flagged_charged=self.n_flagged_charged,
            benchmark=self.benchmark,
            column_scores=[c for c in self.column_scores if c[0] in keep],
            base_dir=self.base_dir,
            harness_errors=self.harness_errors,
            excluded=self.excluded,
            charged_ids=self.charged_ids,
            **arrays,
        )

    def label(self, i: int) -> str:
        """Who ran run ``i``: ``agent/model``, or whichever of the two is known; a dx run adds its
        gatekeeper and judge when not offline, as
        ``clinbench.stats.accuracy.run_key`` does: runs scored by two judges are never pooled."""
        agent, model = str(self.agent[i]), str(self.model[i])
        if agent and model and model != "-":
            label = f"{agent}/{model}"
        else:
            label = agent or model or "(unnamed)"
        if self.benchmark == "dx":
            settings = [f"{name}={value}" for name, value in (("gatekeeper", self.gatekeeper[i]), ("judge", self.judge[i]))
                        if value and value != "offline"]
            label += f" ({', '.join(settings)})" if settings else ""
        return label

    @property
    def labels(self) -> np.ndarray:
        return np.asarray([self.label(i) for i in range(len(self))], dtype=object)

    @property
    def agent_failed(self) -> np.ndarray:
        return np.isin(self.status, AGENT_FAILED)

    @property
    def has_strict(self) -> bool:
        return bool(np.any(~np.isnan(self.strict)))


def load_runs(source: str | Path, *, include_flagged: bool = False, benchmark: str = "derive") -> Runs:
    """Read runs from a campaign directory or a per-run CSV (see the module docstring)."""
    path = Path(source)
    if benchmark not in BENCHMARKS:
        raise StatsError(f"unknown benchmark {benchmark!r}; use one of {', '.join(BENCHMARKS)}")
    if path.is_dir():
        store = path / STORE_FILE
        if not store.exists():
            raise StatsError(f"{path} holds no {STORE_FILE}: pass a campaign's --out folder or a per-run CSV")
        return _load_store(store, include_flagged=include_flagged, benchmark=benchmark)
    if not path.exists():
        raise StatsError(f"{path} does not exist: pass a campaign's --out folder or a per-run CSV")
    if path.suffix.lower() not in (".csv", ".gz", ".tsv"):
        raise StatsError(f"{path} is neither a campaign folder nor a .csv file; pass one of those")
    return _load_csv(path, include_flagged=include_flagged, benchmark=benchmark)


def _column_expr(columns: set[str]) -> dict[str, str]:
    """SQL for each normalised column given which source columns exist."""

    def have(name: str) -> bool:
        return name in columns

    if have("strict"):
        strict = "CAST(strict AS BOOLEAN)"
    elif have("passed") and have("total_tests"):
        strict = "(CAST(passed AS BIGINT) = CAST(total_tests AS BIGINT))"
    else:
        strict = "CAST(NULL AS BOOLEAN)"
    return {
        "task": "CAST(task AS VARCHAR)",
        "condition": "CAST(condition AS VARCHAR)",
        "model": "coalesce(CAST(model AS VARCHAR), '')",
        "trial": "coalesce(CAST(trial AS BIGINT), 0)",
        "schema": "coalesce(CAST(schema AS VARCHAR), 'native')" if have("schema") else "'native'",
        "reward": "CAST(reward AS DOUBLE)",
        "strict": f"CAST({strict} AS DOUBLE)",
        "key_f1": "CAST(key_f1 AS DOUBLE)" if have("key_f1") else "CAST(NULL AS DOUBLE)",
        "nmae": "CAST(ordered_value_nmae AS DOUBLE)" if have("ordered_value_nmae") else "CAST(NULL AS DOUBLE)",
        "run_id": "coalesce(CAST(run_id AS VARCHAR), '')" if have("run_id") else "''",
        "evidence_dir": "coalesce(CAST(evidence_dir AS VARCHAR), '')" if have("evidence_dir") else "''",
        "agent": "coalesce(CAST(agent AS VARCHAR), '')" if have("agent") else "''",
        **{name: f"coalesce(CAST({name} AS VARCHAR), '')" if have(name) else "''" for name in ("gatekeeper", "judge")},
        "status": "coalesce(CAST(status AS VARCHAR), 'ok')" if have("status") else "'ok'",
        "publishable": "coalesce(CAST(publishable AS BOOLEAN), TRUE)" if have("publishable") else "TRUE",
        "charged": "coalesce(CAST(flag_charged AS BOOLEAN), FALSE)" if have("flag_charged") else "FALSE",
        "input_tokens": "CAST(input_tokens AS DOUBLE)" if have("input_tokens") else "CAST(NULL AS DOUBLE)",
        "output_tokens": "CAST(output_tokens AS DOUBLE)" if have("output_tokens") else "CAST(NULL AS DOUBLE)",
        "cost": "CAST(cost AS DOUBLE)" if have("cost") else "CAST(NULL AS DOUBLE)",
        "elapsed": "CAST(elapsed_seconds AS DOUBLE)" if have("elapsed_seconds") else "CAST(NULL AS DOUBLE)",
        **{name: f"CAST({name} AS DOUBLE)" if have(name) else "CAST(NULL AS DOUBLE)"
           for name in ("earlier_input_tokens", "earlier_output_tokens")},
    }


def _select(con: duckdb.DuckDBPyConnection, relation: str, where: str, source: str) -> dict[str, np.ndarray]:
    columns = {r[0].lower() for r in con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()}
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise StatsError(
            f"{source} lacks column(s) {', '.join(missing)}; a per-run table needs {', '.join(REQUIRED)}"
        )
    exprs = _column_expr(columns)
    sql = f"SELECT {', '.join(f'{e} AS {n}' for n, e in exprs.items())} FROM {relation}{where}"
    try:
        data = con.execute(sql).fetchnumpy()
    except duckdb.Error as exc:
        raise StatsError(f"{source}: cannot read the runs ({str(exc).splitlines()[0]}); check the column types") from exc
    return dict(data)  # keep masked arrays: their masks are the NULLs


def _to_runs(data: dict[str, np.ndarray], *, source: str, include_flagged: bool, benchmark: str, base_dir: Path) -> Runs:
    def floats(name: str) -> np.ndarray:
        col = data[name]
        if np.ma.isMaskedArray(col):
            return col.filled(np.nan).astype(float)
        return np.asarray(col, dtype=float)

    def strings(name: str) -> np.ndarray:
        col = data[name]
        if np.ma.isMaskedArray(col):
            col = col.filled("")
        return np.asarray([("" if v is None else str(v)) for v in col], dtype=object)

    task = strings("task")
    if np.any(task == ""):
        raise StatsError(f"{source}: some runs have no task; every run needs its task id")
    condition = strings("condition")
    if benchmark == "derive" and np.any(condition == ""):  # a diagnosis run has no condition (records: neutral columns)
        raise StatsError(f"{source}: some runs have no condition; every run needs its condition")
    publishable = np.asarray(
        data["publishable"].filled(True) if np.ma.isMaskedArray(data["publishable"]) else data["publishable"], dtype=bool
    )
    charged = np.asarray(
        data["charged"].filled(False) if np.ma.isMaskedArray(data["charged"]) else data["charged"], dtype=bool
    )
    status = strings("status")
    harness = status == HARNESS_ERROR
    keep, zeroed = audit_rule(publishable, charged, harness, include_flagged)
    reward = np.where(zeroed, CHARGE["reward"], floats("reward"))
    missing_reward = unscored_failure(reward, harness)
    reward = np.where(missing_reward, 0.0, reward)
    strict = np.where(zeroed, CHARGE["strict"], floats("strict"))
    # a run without a scorable output did not pass
    strict = np.where(missing_reward & np.isnan(strict), 0.0, strict)
    # a charged run, and an agent failure without a reward, score key F1 and nMAE as no output does
    nothing = zeroed | missing_reward
    key_f1 = np.where(nothing, CHARGE["key_f1"], floats("key_f1"))
    nmae = np.where(nothing, CHARGE["nmae"], floats("nmae"))
    evidence = strings("evidence_dir")
    evidence = np.asarray([str((base_dir / e).resolve()) if e else "" for e in evidence], dtype=object)
    runs = Runs(
        source=source, task=task, condition=condition, trial=np.asarray(data["trial"], dtype=np.int64), reward=reward,
        strict=strict, evidence_dir=evidence, status=status, reward_missing=missing_reward, benchmark=benchmark,
        base_dir=base_dir, **{name: strings(name) for name in _TEXT},
        **{name: floats(name) for name in _NUMBERS if name not in ("key_f1", "nmae")}, key_f1=key_f1, nmae=nmae,
    )
    kept = runs.subset(keep & ~harness)
    kept.harness_errors = runs.subset(keep & harness)
    kept.excluded = runs.subset(~keep)
    kept.n_flagged_excluded = int((~keep).sum())
    kept.n_flagged_charged = int(zeroed.sum())
    kept.charged_ids = frozenset(runs.run_id[zeroed].tolist())
    return kept


def _load_csv(path: Path, *, include_flagged: bool, benchmark: str) -> Runs:
    con = duckdb.connect()
    try:
        try:
            con.execute(
                "CREATE TEMP TABLE src AS SELECT * FROM read_csv(?, header = true, auto_detect = true, sample_size = -1)",
                [str(path)],
            )
        except duckdb.Error as exc:
            raise StatsError(f"{path}: not a readable CSV ({str(exc).splitlines()[0]})") from exc
        columns = {r[0].lower() for r in con.execute("DESCRIBE src").fetchall()}
        where = ""
        if "benchmark" in columns:
            where = f" WHERE coalesce(benchmark, 'derive') = '{benchmark}'"
        data = _select(con, "src", where, str(path))
    finally:
        con.close()
    return _to_runs(data, source=str(path), include_flagged=include_flagged, benchmark=benchmark, base_dir=path.parent)


def _refuse_mixed_data(con: duckdb.DuckDBPyConnection, store: Path, benchmark: str) -> None:
    """Runs of one task scored against different data must not be pooled."""
    columns = {r[0] for r in con.execute("DESCRIBE runs").fetchall()}
    if "data_digest" not in columns:
        return
    mixed = con.execute("SELECT task, count(DISTINCT data_digest) FROM runs WHERE benchmark = ? AND data_digest IS NOT NULL "
                        "GROUP BY task HAVING count(DISTINCT data_digest) > 1 ORDER BY task", [benchmark]).fetchall()
    if mixed:
        raise StatsError(f"{store.parent} pools runs scored against different data ({mixed[0][1]} versions of the "
                         f"reference of {mixed[0][0]}); re-score them against one database with "
                         f"`clinbench rescore {store.parent} --db DB --new-data`, or report each campaign folder separately")


def _refuse_mixed_profiles(con: duckdb.DuckDBPyConnection, store: Path, benchmark: str) -> None:
    """Runs scored against different reference profiles (m4bench, mimic-code, ...) must not be pooled."""
    columns = {r[0] for r in con.execute("DESCRIBE runs").fetchall()}
    if "profile" not in columns:
        return
    profiles = [r[0] for r in con.execute("SELECT DISTINCT profile FROM runs WHERE benchmark = ? AND profile IS NOT NULL "
                                          "ORDER BY 1", [benchmark]).fetchall()]
    if len(profiles) > 1:
        raise StatsError(f"{store.parent} pools runs scored against different reference profiles ({', '.join(profiles)}); "
                         f"re-score them against one database with `clinbench rescore {store.parent} --db DB --new-data`, "
                         "or report each campaign folder separately")


def _load_store(store: Path, *, include_flagged: bool, benchmark: str) -> Runs:
    try:
        con = duckdb.connect(str(store), read_only=True)
    except duckdb.Error as exc:
        hint = ("wait for the campaign to finish writing" if "lock" in str(exc).lower()
                else f"if it is damaged, rebuild it from the evidence with `clinbench store rebuild {store.parent}`")
        raise StatsError(f"cannot open {store} ({str(exc).splitlines()[0]}); {hint}") from exc
    try:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        if "runs" not in tables:
            raise StatsError(f"{store} has no runs table; it is not a clinbench results store")
        relation = "runs"
        if "usage" in tables:
            ucols = {r[0] for r in con.execute("DESCRIBE usage").fetchall()}
            earlier = "".join(f", sum({c}) AS {c}" for c in ("earlier_input_tokens", "earlier_output_tokens") if c in ucols)
            relation = ("(SELECT r.*, u.* EXCLUDE (run_id) FROM runs r LEFT JOIN (SELECT run_id, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens"
                        f"{earlier} FROM usage GROUP BY run_id) u USING (run_id))")
        data = _select(con, relation, f" WHERE benchmark = '{benchmark}'", str(store))
        _refuse_mixed_data(con, store, benchmark)
        _refuse_mixed_profiles(con, store, benchmark)
        scores: list[tuple[str, str, float | None, float | None]] = []
        if "column_scores" in tables:
            scores = [tuple(r) for r in con.execute(
                "SELECT run_id, column_name, match_rate, nmae FROM column_scores ORDER BY run_id, column_name"
            ).fetchall()]
    finally:
        con.close()
    runs = _to_runs(data, source=str(store.parent), include_flagged=include_flagged, benchmark=benchmark, base_dir=store.parent)
    keep = set(runs.run_id.tolist())
    runs.column_scores = [s for s in scores if s[0] in keep]
    return runs
