"""Run records: what one finished run is, in both benchmarks, and how the results store lays it out.

The bottom layer of the project: agents report ``Usage``, the campaign engine and the
diagnosis runner build ``RunRecord``s, the store (``clinbench.records.store``) writes them,
stats and report read them. This package imports nothing of theirs.

A run's ``status`` is one ``RunStatus``:

* ``ok``: the run was scored;
* ``agent-failed``: the agent (or its model) wrote no answer, a bad one, or ran out of time;
  reward 0, counted in every statistic;
* ``harness-error``: clinbench failed (workspace, sandbox, endpoint, gatekeeper, judge, a bug);
  no reward, left out of statistics, its cause in ``error``.

Columns are neutral: a diagnosis run fills ``task`` with its case, ``gatekeeper`` and ``judge``
with its referees, and leaves ``condition`` and ``schema`` (derivation settings) empty; any
run's failure goes in ``error``, while ``publishable`` / ``flag_reason`` are the audit's.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from clinbench.column_score import ColumnScore  # noqa: F401  (re-exported: records hold it)

STORE_FILE = "results.duckdb"  # a campaign folder's store: DIR/results.duckdb beside DIR/runs/<run_id>/
BENCHMARKS = ("derive", "dx")


class RunStatus(StrEnum):
    OK = "ok"
    AGENT_FAILED = "agent-failed"
    HARNESS_ERROR = "harness-error"


# Statuses written by older stores and agents: both are the agent's failure.
LEGACY_STATUS = {"error": RunStatus.AGENT_FAILED, "timeout": RunStatus.AGENT_FAILED}


def normalise_status(status: str) -> RunStatus:
    """The status to store (the older 'error' and 'timeout' are agent failures); ValueError for anything else."""
    return LEGACY_STATUS.get(status) or RunStatus(status)


RUN_COLUMNS: dict[str, str] = {
    "run_id": "VARCHAR PRIMARY KEY",
    "benchmark": "VARCHAR",  # 'derive' | 'dx'
    "task": "VARCHAR",  # a derivation task, or a diagnosis case id
    "family": "VARCHAR",
    "condition": "VARCHAR",  # derive: no-skill | with-skill; dx: ''
    "schema": "VARCHAR",  # derive: the schema variant; dx: ''
    "agent": "VARCHAR",
    "model": "VARCHAR",
    "trial": "INTEGER",
    "status": "VARCHAR",  # a RunStatus
    "reward": "DOUBLE",
    "strict": "BOOLEAN",
    "key_f1": "DOUBLE",
    "ordered_value_nmae": "DOUBLE",
    "judge_score": "INTEGER",
    "cost": "DOUBLE",
    "publishable": "BOOLEAN",  # the audit's verdict
    "flag_reason": "VARCHAR",  # why the audit flagged the run (or it ran unisolated)
    "isolated": "BOOLEAN",
    "elapsed_seconds": "DOUBLE",
    "evidence_dir": "VARCHAR",
    "finished_at": "TIMESTAMP",
    "error": "VARCHAR",  # why a run is not ok
    "data_digest": "VARCHAR",  # fingerprint of the reference and source data the run was scored against
    "rescored_against": "VARCHAR",  # set when re-scored against other data: that database and when
    "agent_version": "VARCHAR",  # the agent program's own version (codex-cli 0.171.0, …), as it printed it
    "served_model": "VARCHAR",  # model(s) the endpoint said answered, comma-separated (may differ from model)
    "gatekeeper": "VARCHAR",  # dx: the gatekeeper (offline, llm:<model>, +grounded); derive: NULL
    "judge": "VARCHAR",  # dx: the judge (offline, llm:<model>, +self-judge, (rejudged)); derive: NULL
    "profile": "VARCHAR",  # derive: reference profile the run was scored against, name@version (concepts.profiles)
    "workspace": "VARCHAR",  # derive: digest of the tables and columns its agent's database held (derive.workspace.view_digest)
    # the audit flagged the run for its agent's own conduct: statistics count it as reward 0 instead of leaving it out
    "flag_charged": "BOOLEAN",
}
# absent from stores written before them (added on open)
ADDED_COLUMNS = ("error", "data_digest", "rescored_against", "agent_version", "served_model", "gatekeeper", "judge",
                 "profile", "workspace", "flag_charged")
COLUMN_SCORE_COLUMNS: dict[str, str] = {
    "run_id": "VARCHAR",
    "column_name": "VARCHAR",
    "match_rate": "DOUBLE",
    "nmae": "DOUBLE",
}
USAGE_COLUMNS: dict[str, str] = {
    "run_id": "VARCHAR",
    "input_tokens": "BIGINT",
    "output_tokens": "BIGINT",
    "requests": "INTEGER",
    "cached_input_tokens": "BIGINT",
    "http_requests": "INTEGER",  # as counted by the egress proxy (external agents) or the client
    "model_seconds": "DOUBLE",  # time spent waiting for the model
    "harness_seconds": "DOUBLE",  # the rest of the run: workspace, tools, sandbox, scoring
    "reported_cost": "DOUBLE",  # the agent CLI's own dollar estimate (runs.cost is from the price table)
    "earlier_input_tokens": "BIGINT",  # failed attempts replaced by --retry-failed / --retry-agent-failed
    "earlier_output_tokens": "BIGINT",
    "earlier_requests": "INTEGER",
}
USAGE_FIELDS = [c for c in USAGE_COLUMNS if c != "run_id"]
BINDING_COLUMNS: dict[str, str] = {
    "name": "VARCHAR PRIMARY KEY",  # a reference table
    "fingerprint": "VARCHAR",
    "db": "VARCHAR",
    "bound_at": "TIMESTAMP",
}


def _dx_legacy(fields: dict[str, Any]) -> dict[str, Any]:
    """A dx record written before ``gatekeeper``/``judge`` existed held them in condition/schema and its error
    in flag_reason (``DX_LEGACY_SQL`` is the same move for a stored table)."""
    return {"gatekeeper": fields["condition"] or "", "judge": fields["schema"] or "", "condition": "", "schema": "",
            "error": fields["error"] or fields["flag_reason"], "flag_reason": None}


DX_LEGACY_SQL = ("UPDATE runs SET gatekeeper = coalesce(condition, ''), judge = coalesce(schema, ''), condition = '', "
                 "schema = '', error = coalesce(error, flag_reason), flag_reason = NULL "
                 "WHERE benchmark = 'dx' AND gatekeeper IS NULL")


def token_count(value: Any) -> int:
    """A token or request count a CLI or a model server reported: a whole number from 0 to 2**53, else 0
    (NaN, infinity, a negative or a 30-digit number are an agent's or a server's bytes, not a count, and would
    stop the results store: its columns are 64-bit)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if isinstance(value, float) and not math.isfinite(value):
        return 0
    count = int(value)
    return count if 0 <= count <= 2**53 else 0


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    cached_input_tokens: int = 0
    http_requests: int = 0
    model_seconds: float = 0.0
    harness_seconds: float | None = None
    reported_cost: float | None = None
    earlier_input_tokens: int = 0
    earlier_output_tokens: int = 0
    earlier_requests: int = 0

    def add(self, other: Usage) -> Usage:
        """Sums of the counters (harness seconds and reported cost are set once per run, not added)."""
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.requests + other.requests,
            self.cached_input_tokens + other.cached_input_tokens,
            self.http_requests + other.http_requests,
            self.model_seconds + other.model_seconds,
            self.harness_seconds,
            self.reported_cost,
            self.earlier_input_tokens + other.earlier_input_tokens,
            self.earlier_output_tokens + other.earlier_output_tokens,
            self.earlier_requests + other.earlier_requests,
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @classmethod
    def from_tokens(cls, usage: dict[str, Any], requests: int = 1) -> Usage:
        """From a usage object with ``input_tokens``/``output_tokens`` (Anthropic Messages, Claude Code, Codex);
        cached input is ``cached_input_tokens`` (Codex), ``cache_read_input_tokens`` (Anthropic) or
        ``input_tokens_details.cached_tokens`` (Responses)."""
        num = token_count
        details = usage.get("input_tokens_details")
        cached = num(usage.get("cached_input_tokens")) or num(usage.get("cache_read_input_tokens")) or (
            num(details.get("cached_tokens")) if isinstance(details, dict) else 0)
        return cls(num(usage.get("input_tokens")), num(usage.get("output_tokens")), requests, cached)


@dataclass
class RunRecord:
    """One finished run, as the ``runs`` table holds it."""

    run_id: str
    benchmark: str
    task: str
    condition: str = ""
    schema: str = ""
    agent: str = ""
    model: str = ""
    trial: int = 0
    status: str = RunStatus.OK
    family: str = ""
    reward: float | None = None
    strict: bool | None = None
    key_f1: float | None = None
    ordered_value_nmae: float | None = None
    judge_score: int | None = None
    cost: float | None = None
    publishable: bool = True
    flag_reason: str | None = None
    isolated: bool = False
    elapsed_seconds: float | None = None
    evidence_dir: str | None = None
    finished_at: datetime | None = None
    error: str | None = None
    data_digest: str | None = None
    rescored_against: str | None = None
    agent_version: str | None = None
    served_model: str | None = None
    gatekeeper: str | None = None
    judge: str | None = None
    profile: str | None = None
    workspace: str | None = None
    flag_charged: bool = False
    column_scores: list[ColumnScore] = field(default_factory=list)
    usage: Usage | None = None

    def to_json(self) -> dict[str, Any]:
        """Every field as JSON-ready data (the run's manifest keeps it, so a store can be rebuilt)."""
        data = {name: getattr(self, name) for name in RUN_COLUMNS}
        data["status"] = str(self.status)
        data["finished_at"] = self.finished_at.isoformat() if self.finished_at else None
        data["column_scores"] = [c.stored() for c in self.column_scores]
        data["usage"] = vars(self.usage) if self.usage is not None else None
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunRecord:
        fields = {name: data.get(name) for name in RUN_COLUMNS}
        if fields["finished_at"]:
            fields["finished_at"] = datetime.fromisoformat(fields["finished_at"])
        for name, default in (("publishable", True), ("isolated", False), ("trial", 0), ("flag_charged", False)):
            if fields[name] is None:
                fields[name] = default
        if fields["benchmark"] == "dx" and fields["gatekeeper"] is None:  # written before the dx columns
            fields.update(_dx_legacy(fields))
        usage = data.get("usage")
        scores = [ColumnScore(c["column_name"], c.get("match_rate"), c.get("nmae")) for c in data.get("column_scores") or []]
        return cls(**fields, column_scores=scores, usage=Usage(**usage) if usage else None)

    def row(self) -> list[Any]:
        values = {name: getattr(self, name) for name in RUN_COLUMNS}
        values["status"] = str(self.status)
        if values["finished_at"] is None:
            values["finished_at"] = datetime.now()
        return [values[name] for name in RUN_COLUMNS]


def mixed(runs: Iterable[dict]) -> list[str]:
    """What the runs mix: an agent run under several program versions, or a requested model
    answered by several served models. One line per problem; empty when the runs are uniform."""
    versions: dict[str, set[str]] = defaultdict(set)
    served: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in runs:
        if r.get("agent_version"):
            versions[r["agent"]].add(r["agent_version"])
        if r.get("served_model"):
            served[(r["agent"], r.get("model") or "-")].add(r["served_model"])
    problems = [f"{agent} ran as {' and '.join(sorted(v))}" for agent, v in sorted(versions.items()) if len(v) > 1]
    problems += [f"{agent} model {model} was answered by {' / '.join(sorted(v))}"
                 for (agent, model), v in sorted(served.items()) if len(v) > 1]
    return problems
