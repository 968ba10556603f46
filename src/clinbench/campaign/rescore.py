"""Re-score every run of a campaign from its evidence (output.csv) against a database's references.

Re-scoring with the same database reproduces the stored numbers and writes nothing; after a
scorer or reference change it updates the store and each changed run's score.json (and that
one hash in its manifest, sealed again). A task's outputs are scored together (``Scorer.many``:
one query for those of one header, each with the score it gets alone); every run's evidence
is verified first, whether its score changes or not. A database whose references or source tables differ from the campaign's data
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
from clinbench.derive.score import Scorer, ScoreResult
from clinbench.records import RunRecord, RunStatus
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
    every = store.runs()
    records = store.records()  # every run's record in one read, not one connection per run
    order = sorted(every, key=lambda r: (r["task"], r["run_id"]))  # a task's runs in a row: its reference read once
    done: dict[str, RescoreResult] = {}
    rescored: list = []
    try:
        with Scorer() as scorer:
            pending: list[_Run] = []
            for row in order:
                run = _verified(out, row, records[row["run_id"]], db)
                if isinstance(run, RescoreResult):
                    done[row["run_id"]] = run
                    continue
                if pending and (pending[0].row["task"], pending[0].database) != (row["task"], run.database):
                    _rescore_batch(pending, scorer, digests, profiles, tables, marked, done, rescored)
                    pending = []
                pending.append(run)
            _rescore_batch(pending, scorer, digests, profiles, tables, marked, done, rescored)
    finally:  # what was re-scored before a failure or Ctrl-C is recorded: its evidence is already resealed
        store.record_many(rescored)
        if rescored:
            evidence.sync_seals(out)
    for database, current in digests.items():
        store.bind(current, database, replace=new_data)
    return [done[row["run_id"]] for row in every]


@dataclass
class _Run:
    """A run whose evidence verifies, ready to be scored again."""

    row: dict
    record: RunRecord
    folder: Path
    manifest: dict
    database: str
    output: Path | None


def _verified(out: Path, row: dict, record: RunRecord, db) -> _Run | RescoreResult:
    """The run ready to re-score, or (its evidence fails verification) its refusal, recorded in the store."""
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
    return _Run(row, record, folder, manifest, str(database), output if output.is_file() else None)


def _rescore_batch(runs: list[_Run], scorer, digests: dict, profiles: dict, tables: dict, marked: str | None,
                   done: dict, rescored: list) -> None:
    """Score the outputs of runs of one task and database together, then reseal each run whose score or
    record changed (an unchanged one is left as it was sealed); their new records go to ``rescored``."""
    if not runs:
        return
    wanted = [(run.manifest.get("scored_columns", "value"), run.manifest["files"][evidence.OUTPUT]["sha256"], run.output)
              for run in runs if run.output is not None and run.record.status != RunStatus.HARNESS_ERROR]
    scored = _score_outputs(scorer, runs[0].row["task"], runs[0].database, wanted)

    def score_of(task_id: str, output_csv: Path, db: str, *, scored_columns: str) -> ScoreResult:
        return scored[(scored_columns, str(output_csv))]

    for run in runs:
        record, folder, row = run.record, run.folder, run.row
        before = record.to_json()
        score = score_into_record(record, row["task"], run.output, run.database,
                                  run.manifest.get("scored_columns", "value"), scorer=score_of)
        old_score = json.loads((folder / evidence.SCORE).read_text()) if (folder / evidence.SCORE).is_file() else {}
        for kept in ("run_error", "output_refused"):
            if kept in old_score:
                score[kept] = old_score[kept]
        if record.status == RunStatus.AGENT_FAILED and record.reward is None:
            record.reward = 0.0
        resolved = str(Path(run.database).resolve())
        record.data_digest = digests.get(resolved, {}).get(tables.get(row["task"]), record.data_digest)
        record.rescored_against = marked or record.rescored_against
        record.profile = profiles.get(resolved, record.profile)
        done[row["run_id"]] = RescoreResult(row["run_id"], row["reward"], record.reward)
        if record.to_json() == before and json.loads(json.dumps(score, default=str)) == old_score:
            continue  # the same score and record: nothing to write, nothing to seal again
        meta = {"rescored_at": datetime.now().isoformat(), "rescored_with": run.database}
        if "record" in run.manifest:
            meta["record"] = record.to_json()
        evidence.reseal_score(folder, score, verified=True, sync=False, **meta)
        rescored.append(record)


def _score_outputs(scorer, task_id: str, database: str, wanted: list[tuple[str, str, Path]]) -> dict:
    """(scored columns, output path) -> its score, for each (scored columns, sha256, output path) wanted.

    Outputs of the same bytes (their sealed sha256, just verified) get the same score, so each is scored
    once, unless its result names its own file (a reader's message), which another run's must not carry."""
    first: dict[tuple[str, str], Path] = {}
    copies: list[tuple[str, str, Path]] = []
    for columns, digest, output in wanted:
        if (columns, digest) in first:
            copies.append((columns, digest, output))
        else:
            first[(columns, digest)] = output
    scored: dict[tuple[str, str], ScoreResult] = {}

    def score(outputs: list[tuple[str, Path]]) -> None:
        by_columns: dict[str, list[Path]] = {}
        for columns, output in outputs:
            by_columns.setdefault(columns, []).append(output)
        for columns, paths in by_columns.items():
            results = scorer.many(task_id, paths, database, scored_columns=columns)
            scored.update({(columns, str(o)): r for o, r in zip(paths, results)})

    score([(columns, output) for (columns, _), output in first.items()])
    alone = []
    for columns, digest, output in copies:
        original = str(first[(columns, digest)])
        if original in scored[(columns, original)].reason:
            alone.append((columns, output))
        else:
            scored[(columns, str(output))] = scored[(columns, original)]
    score(alone)
    return scored


def _run_db(out: Path, row: dict) -> str | None:
    manifest = out / (row["evidence_dir"] or f"{evidence.RUNS_DIR}/{row['run_id']}") / evidence.MANIFEST
    if not manifest.is_file():
        return None
    db = json.loads(manifest.read_text(encoding="utf-8")).get("db")
    return str(Path(db).resolve()) if db else None
