"""Rebuild a campaign's results store from its evidence folders (``clinbench store rebuild DIR``).

Every run folder ``runs/<run_id>/`` holds a ``manifest.json`` with the run's full record and
the sha256 of every evidence file, and the campaign's ``seals.jsonl`` holds the sha256 of each
manifest. A folder whose files no longer match its manifest, whose manifest is not the one
sealed for it, or whose manifest predates full records, is left out and named. The score is
never taken from the manifest: a derive run's is recomputed from its sealed ``output.csv``
against the database it ran on (``db``, else the one its manifest names). The new store is
written beside the old one and renamed over it at the end; the old file, if any, is kept as
``results.duckdb.bak``. Audit verdicts are not evidence: run ``clinbench audit DIR`` again.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from clinbench.atomic import temp_name
from clinbench.campaign import evidence
from clinbench.records import STORE_FILE, RunRecord, RunStatus
from clinbench.records.store import Store, StoreError
from clinbench.write_errors import explain


@dataclass
class RebuildReport:
    path: Path
    runs: int = 0
    skipped: dict[str, str] = field(default_factory=dict)  # run folder -> why it was left out
    backup: Path | None = None


def rebuild_store(directory: str | Path, db: str | Path | None = None) -> RebuildReport:
    from clinbench.campaign.campaign import campaign_lock

    out = Path(directory).resolve()
    runs_dir = out / evidence.RUNS_DIR
    if not runs_dir.is_dir():
        raise StoreError(f"{out} has no {evidence.RUNS_DIR}/ folder: pass the --out folder of a campaign run")
    report = RebuildReport(out / STORE_FILE)
    records: list[RunRecord] = []
    for folder in sorted(p for p in runs_dir.iterdir() if p.is_dir()):
        record, why = _read(folder)
        if record is not None and record.benchmark == "derive":
            why = _rescore(record, folder, db)
        if why:
            report.skipped[folder.name] = why
        else:
            records.append(record)
    with campaign_lock(out):
        staging = temp_name(out / ".rebuild")
        try:
            staging.mkdir()
            store = Store.create(staging)
            store.record_many(records)
            bindings: dict[str, tuple[str, str]] = {}
            for record, folder in ((r, runs_dir / r.run_id) for r in records):
                if record.data_digest:
                    db = json.loads((folder / evidence.MANIFEST).read_text(encoding="utf-8")).get("db") or ""
                    bindings[_target(record.task)] = (record.data_digest, db)
            for table, (digest, db) in sorted(bindings.items()):
                store.bind({table: digest}, db)
            old = out / STORE_FILE
            if old.exists():
                report.backup = old.with_name(STORE_FILE + ".bak")
                os.replace(old, report.backup)
            old.with_name(STORE_FILE + ".wal").unlink(missing_ok=True)
            os.replace(staging / STORE_FILE, old)
        except OSError as exc:
            raise StoreError(explain(exc, out) or f"cannot write the rebuilt store in {out}: {exc}") from exc
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    report.runs = len(records)
    return report


def recover_unrecorded(store: Store, out: Path) -> list[str]:
    """Record the runs whose evidence was published but never recorded (the campaign was killed
    or interrupted between the two, e.g. while another process held the store), as ``store
    rebuild`` would: only a sealed, intact folder, its score recomputed from its output. Return
    their ids; a rerun then skips them instead of redoing them over their evidence."""
    runs_dir = out / evidence.RUNS_DIR
    if not runs_dir.is_dir():
        return []
    recorded = store.run_ids()
    found = []
    for folder in sorted(p for p in runs_dir.iterdir() if p.is_dir() and p.name not in recorded):
        record, why = _read(folder)
        if record is not None and record.benchmark == "derive":
            why = _rescore(record, folder, None)
        if record is not None and not why:
            store.record(record)
            found.append(record.run_id)
    return found


def _read(folder: Path) -> tuple[RunRecord | None, str]:
    manifest_path = folder / evidence.MANIFEST
    if not manifest_path.is_file():
        return None, "no manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        bad = evidence.verify_manifest(folder)
    except (OSError, ValueError, KeyError) as exc:
        return None, f"unreadable manifest ({exc})"
    if bad:
        return None, f"evidence changed since the run: {', '.join(bad)}"
    if "record" not in manifest:
        return None, "manifest written before full records (re-run that run with --retry-failed or a new --out)"
    record = RunRecord.from_json(manifest["record"])
    if record.run_id != folder.name:
        return None, f"manifest names run {record.run_id}, not {folder.name}"
    return record, ""


def _rescore(record: RunRecord, folder: Path, db: str | Path | None) -> str:
    """Put the score of ``record`` recomputed from the run's sealed output into it; return why it
    cannot be (empty when it was)."""
    from clinbench.campaign.execute import score_into_record
    from clinbench.errors import ClinbenchError, ResourceError

    manifest = json.loads((folder / evidence.MANIFEST).read_text(encoding="utf-8"))
    database = Path(db or manifest.get("db") or "")
    if not database.is_file():
        return f"its database {database} is not there to score its output against: pass --db"
    output = folder / evidence.OUTPUT
    try:
        score_into_record(record, record.task, output if output.is_file() else None, database,
                          manifest.get("scored_columns", "value"))
    except ResourceError:  # out of memory or spill disk: this machine's, never the output's 0; nothing is written
        raise
    except ClinbenchError as exc:  # an output that does not score is the agent's failure, as in the run
        record.reward, record.strict, record.key_f1, record.column_scores = 0.0, False, 0.0, []
        record.status, record.error = RunStatus.AGENT_FAILED, record.error or f"scoring failed: {exc}"
    return ""


def _target(task: str) -> str:
    from clinbench.derive.catalogue import get_task

    return get_task(task).target_table
