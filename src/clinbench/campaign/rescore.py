"""Re-score every run of a campaign from its evidence (output.csv) against a database's references.

Re-scoring with the same database reproduces the stored numbers; after a scorer or
reference change it updates the store and each run's score.json (and that one hash in its
manifest). A database whose references or source tables differ from the campaign's data
binding is refused unless ``new_data``; then every run is marked as re-scored against it.
Evidence is sealed once: a run whose evidence no longer matches its manifest is not
re-scored and never resealed. It keeps its stored score, is marked not publishable with
the reason, and is listed as refused.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from clinbench.campaign import evidence
from clinbench.campaign.execute import score_into_record
from clinbench.records import RunStatus
from clinbench.records.store import Store
from clinbench.errors import ClinbenchError


@dataclass
class RescoreResult:
    run_id: str
    old_reward: float | None
    new_reward: float | None
    refused: str | None = None  # why the run was not re-scored (its evidence fails verification)

    @property
    def changed(self) -> bool:
        return self.refused is None and self.old_reward != self.new_reward


def rescore_campaign(out: str | Path, db: str | Path | None = None, *, new_data: bool = False) -> list[RescoreResult]:
    from clinbench.campaign import binding
    from clinbench.concepts.manifest import profile_of
    from clinbench.derive.catalogue import get_task

    out = Path(out).resolve()
    store = Store.open(out)
    rows = store.runs(benchmark="derive")
    tables = {r["task"]: get_task(r["task"]).target_table for r in rows}
    databases = {str(Path(db).resolve())} if db else {_run_db(out, r) for r in rows} - {None}
    digests: dict[str, dict[str, str]] = {}
    profiles: dict[str, str | None] = {}
    for database in sorted(databases):
        if Path(database).is_file():
            digests[database] = (binding.fingerprints(database, list(tables.values())) if new_data else
                                 binding.check(store, database, list(tables.values()), command="rescore"))
            profiles[database] = (profile_of(database, list(tables.values())) if new_data else
                                  binding.check_profile(store, database, list(tables.values()), command="rescore"))
    marked = f"{sorted(databases)[0]} at {datetime.now():%Y-%m-%d %H:%M:%S}" if new_data and databases else None
    from clinbench.derive.score import Scorer

    every = store.runs()
    records = store.records()  # every run's record in one read, not one connection per run
    order = sorted(every, key=lambda r: (r["task"], r["run_id"]))  # a task's runs in a row: its reference read once
    done: dict[str, RescoreResult] = {}
    rescored = []
    try:
        with Scorer() as scorer:
            for row in order:
                done[row["run_id"]] = _rescore_one(out, row, records[row["run_id"]], db, scorer, digests, profiles,
                                                   tables, marked, rescored)
    finally:  # what was re-scored before a failure or Ctrl-C is recorded: its evidence is already resealed
        store.record_many(rescored)
        evidence.sync_seals(out)
    for database, current in digests.items():
        store.bind(current, database, replace=new_data)
    return [done[row["run_id"]] for row in every]


def _rescore_one(out: Path, row: dict, record, db, scorer, digests: dict, profiles: dict, tables: dict,
                 marked: str | None, rescored: list) -> RescoreResult:
    """Verify one run's evidence, score its output again and reseal it; its new record goes to ``rescored``."""
    folder = out / (row["evidence_dir"] or f"{evidence.RUNS_DIR}/{row['run_id']}")
    manifest_path = folder / evidence.MANIFEST
    if not manifest_path.is_file():
        raise ClinbenchError(f"run {row['run_id']} has no evidence at {folder}; cannot re-score it")
    if bad := evidence.verify_manifest(folder):
        reason = f"evidence changed since the run: {', '.join(bad)}"
        Store.open(out).set_verdict(row["run_id"], False, reason)
        return RescoreResult(row["run_id"], row["reward"], row["reward"], refused=reason)
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    database = db or manifest.get("db")
    if not database or not Path(database).is_file():
        raise ClinbenchError(f"database {database} of run {row['run_id']} not found; pass --db")
    output = folder / evidence.OUTPUT
    score = score_into_record(record, row["task"], output if output.is_file() else None, database,
                              manifest.get("scored_columns", "value"), scorer=scorer)
    old_score = json.loads((folder / evidence.SCORE).read_text()) if (folder / evidence.SCORE).is_file() else {}
    for kept in ("run_error", "output_refused"):
        if kept in old_score:
            score[kept] = old_score[kept]
    if record.status == RunStatus.AGENT_FAILED and record.reward is None:
        record.reward = 0.0
    record.data_digest = digests.get(str(Path(database).resolve()), {}).get(tables.get(row["task"]), record.data_digest)
    record.rescored_against = marked or record.rescored_against
    record.profile = profiles.get(str(Path(database).resolve()), record.profile)
    meta = {"rescored_at": datetime.now().isoformat(), "rescored_with": str(database)}
    if "record" in manifest:
        meta["record"] = record.to_json()
    evidence.reseal_score(folder, score, verified=True, sync=False, **meta)
    rescored.append(record)
    return RescoreResult(row["run_id"], row["reward"], record.reward)


def _run_db(out: Path, row: dict) -> str | None:
    manifest = out / (row["evidence_dir"] or f"{evidence.RUNS_DIR}/{row['run_id']}") / evidence.MANIFEST
    if not manifest.is_file():
        return None
    db = json.loads(manifest.read_text(encoding="utf-8")).get("db")
    return str(Path(db).resolve()) if db else None
