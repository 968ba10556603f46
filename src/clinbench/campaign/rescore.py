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
    from clinbench.campaign.matrix import require_references
    from clinbench.concepts.manifest import profile_of
    from clinbench.derive.catalogue import get_task

    out = Path(out).resolve()
    store = Store.open(out)
    records = store.records()  # every run's record in one read, not one connection per run
    manifests = {run_id: _manifest(out, record) for run_id, record in records.items()}  # each read once
    derive = [r for r in records.values() if r.benchmark == "derive"]
    tables = {r.task: get_task(r.task).target_table for r in derive}
    databases = ({str(Path(db).resolve())} if db else
                 {str(Path(m[1]["db"]).resolve()) for r in derive if (m := manifests[r.run_id]) and m[1].get("db")})
    digests: dict[str, dict[str, str]] = {}
    profiles: dict[str, str | None] = {}
    for database in sorted(databases):
        if Path(database).is_file():
            if db:  # a database named for the re-scoring: one without the references is said so first, not as other data
                require_references(sorted({r.task for r in derive}), database)
            digests[database] = (binding.fingerprints(database, list(tables.values())) if new_data else
                                 binding.check(store, database, list(tables.values()), command="rescore"))
            profiles[database] = (profile_of(database, list(tables.values())) if new_data else
                                  binding.check_profile(store, database, list(tables.values()), command="rescore"))
    marked = f"{sorted(databases)[0]} at {datetime.now():%Y-%m-%d %H:%M:%S}" if new_data and databases else None
    # a reference's runs in a row (a task's and its raw-mode twin's): it is read once, its outputs scored together
    order = sorted(records.values(), key=lambda r: (tables.get(r.task) or "", r.task, r.run_id))
    done: dict[str, RescoreResult] = {}
    rescored: list = []
    try:
        with Scorer() as scorer:
            pending: list[_Run] = []
            for record in order:
                run = _verified(out, store, record, manifests[record.run_id], db)
                if isinstance(run, RescoreResult):
                    done[record.run_id] = run
                    continue
                if pending and (tables.get(pending[0].record.task), pending[0].database) != (
                        tables.get(record.task), run.database):
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
    return [done[run_id] for run_id in sorted(records)]


def _folder(out: Path, record: RunRecord) -> Path:
    return out / (record.evidence_dir or f"{evidence.RUNS_DIR}/{record.run_id}")


def _manifest(out: Path, record: RunRecord) -> tuple[bytes, dict] | None:
    """The run's manifest, as bytes (what verification checks) and as data; None when it has none."""
    try:
        raw = (_folder(out, record) / evidence.MANIFEST).read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    try:
        return raw, json.loads(raw)
    except ValueError:
        return raw, {}  # verification names it


@dataclass
class _Run:
    """A run whose evidence verifies, ready to be scored again."""

    record: RunRecord
    old_reward: float | None  # as stored
    folder: Path
    manifest: dict
    database: str
    output: Path | None


def _verified(out: Path, store: Store, record: RunRecord, manifest: tuple[bytes, dict] | None,
              db) -> _Run | RescoreResult:
    """The run ready to re-score, or (its evidence fails verification) its refusal, recorded in the store."""
    folder = _folder(out, record)
    if manifest is None:
        raise ClinbenchError(f"run {record.run_id} has no evidence at {folder}; cannot re-score it")
    if bad := evidence.verify_manifest(folder, manifest[0]):
        reason = f"evidence changed since the run: {', '.join(bad)}"
        store.set_verdict(record.run_id, False, reason)
        return RescoreResult(record.run_id, record.reward, record.reward, refused=reason)
    database = db or manifest[1].get("db")
    if not database or not Path(database).is_file():
        raise ClinbenchError(f"database {database} of run {record.run_id} not found; pass --db")
    output = folder / evidence.OUTPUT
    return _Run(record, record.reward, folder, manifest[1], str(database), output if output.is_file() else None)


def _rescore_batch(runs: list[_Run], scorer, digests: dict, profiles: dict, tables: dict, marked: str | None,
                   done: dict, rescored: list) -> None:
    """Score the outputs of runs of one reference and database together, then reseal each run whose score or
    record changed (an unchanged one is left as it was sealed); their new records go to ``rescored``."""
    if not runs:
        return
    wanted = [(run.record.task, run.manifest.get("scored_columns", "value"),
               run.manifest["files"][evidence.OUTPUT]["sha256"], run.output)
              for run in runs if run.output is not None and run.record.status != RunStatus.HARNESS_ERROR]
    scored = _score_outputs(scorer, runs[0].database, wanted)

    def score_of(task_id: str, output_csv: Path, db: str, *, scored_columns: str) -> ScoreResult:
        return scored[(task_id, scored_columns, str(output_csv))]

    for run in runs:
        record, folder = run.record, run.folder
        before = record.to_json()
        score = score_into_record(record, record.task, run.output, run.database,
                                  run.manifest.get("scored_columns", "value"), scorer=score_of)
        old_score = json.loads((folder / evidence.SCORE).read_text()) if (folder / evidence.SCORE).is_file() else {}
        for kept in ("run_error", "output_refused"):
            if kept in old_score:
                score[kept] = old_score[kept]
        if record.status == RunStatus.AGENT_FAILED and record.reward is None:
            record.reward = 0.0
        resolved = str(Path(run.database).resolve())
        record.data_digest = digests.get(resolved, {}).get(tables.get(record.task), record.data_digest)
        record.rescored_against = marked or record.rescored_against
        record.profile = profiles.get(resolved, record.profile)
        done[record.run_id] = RescoreResult(record.run_id, run.old_reward, record.reward)
        if record.to_json() == before and score == old_score:  # score.json holds JSON-native values only
            continue  # the same score and record: nothing to write, nothing to seal again
        meta = {"rescored_at": datetime.now().isoformat(), "rescored_with": run.database}
        if "record" in run.manifest:
            meta["record"] = record.to_json()
        evidence.reseal_score(folder, score, verified=True, sync=False, **meta)
        rescored.append(record)


def _score_outputs(scorer, database: str, wanted: list[tuple[str, str, str, Path]]) -> dict:
    """(task, scored columns, output path) -> its score, for each (task, scored columns, sha256, output path)
    wanted.

    Outputs of the same bytes (their sealed sha256, just verified) of one task get the same score, so each is
    scored once, unless its result names its own file (a reader's message), which another run's must not
    carry."""
    first: dict[tuple[str, str, str], Path] = {}
    copies: list[tuple[str, str, str, Path]] = []
    for task, columns, digest, output in wanted:
        if (task, columns, digest) in first:
            copies.append((task, columns, digest, output))
        else:
            first[(task, columns, digest)] = output
    scored: dict[tuple[str, str, str], ScoreResult] = {}

    def score(outputs: list[tuple[str, str, Path]]) -> None:
        by_columns: dict[str, list[tuple[str, Path]]] = {}
        for task, columns, output in outputs:
            by_columns.setdefault(columns, []).append((task, output))
        for columns, todo in by_columns.items():
            results = scorer.many([t for t, _ in todo], [o for _, o in todo], database, scored_columns=columns)
            scored.update({(t, columns, str(o)): r for (t, o), r in zip(todo, results)})

    score([(task, columns, output) for (task, columns, _), output in first.items()])
    alone = []
    for task, columns, digest, output in copies:
        original = str(first[(task, columns, digest)])
        if original in scored[(task, columns, original)].reason:
            alone.append((task, columns, output))
        else:
            scored[(task, columns, str(output))] = scored[(task, columns, original)]
    score(alone)
    return scored
