"""Re-score every run of a campaign from its evidence (output.csv) against a database's references.

Re-scoring with the same database reproduces the stored numbers; after a scorer or
reference change it updates the store and each run's score.json (and its manifest).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from clinbench.campaign import evidence
from clinbench.campaign.execute import score_into_record
from clinbench.campaign.store import Store
from clinbench.errors import ClinbenchError


@dataclass
class RescoreResult:
    run_id: str
    old_reward: float | None
    new_reward: float | None

    @property
    def changed(self) -> bool:
        return self.old_reward != self.new_reward


def rescore_campaign(out: str | Path, db: str | Path | None = None) -> list[RescoreResult]:
    out = Path(out).resolve()
    store = Store.open(out)
    results = []
    for row in store.runs():
        record = store.record_of(row["run_id"])
        folder = out / (row["evidence_dir"] or f"{evidence.RUNS_DIR}/{row['run_id']}")
        manifest_path = folder / evidence.MANIFEST
        if not manifest_path.is_file():
            raise ClinbenchError(f"run {row['run_id']} has no evidence at {folder}; cannot re-score it")
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        database = db or manifest.get("db")
        if not database or not Path(database).is_file():
            raise ClinbenchError(f"database {database} of run {row['run_id']} not found; pass --db")
        output = folder / "output.csv"
        score = score_into_record(record, row["task"], output if output.is_file() else None, database)
        old_score = json.loads((folder / evidence.SCORE).read_text()) if (folder / evidence.SCORE).is_file() else {}
        if "run_error" in old_score:
            score["run_error"] = old_score["run_error"]
        if record.status != "ok" and record.reward is None:
            record.reward = 0.0
        store.record(record)
        evidence.write_json(folder / evidence.SCORE, score)
        meta = {k: v for k, v in manifest.items() if k != "files"}
        evidence.write_manifest(folder, meta)
        results.append(RescoreResult(row["run_id"], row["reward"], record.reward))
    return results
