"""Evidence of a run: the folder ``DIR/runs/<run_id>/`` and its ``manifest.json``.

A run's evidence is assembled in ``DIR/.partial/<run_id>-<nonce>/`` and moved into place by
the process that records the run, right before it records it: a run killed in flight
leaves only a partial folder (removed on the next start), never a half-written run folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
from pathlib import Path
from typing import Any

from clinbench.atomic import write_json_atomic

RUNS_DIR = "runs"
PARTIAL_DIR = ".partial"
WORK_DIR = ".work"
MANIFEST = "manifest.json"
SCORE = "score.json"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def run_dir(campaign_dir: Path, run_id: str) -> Path:
    return campaign_dir / RUNS_DIR / run_id


def new_partial_dir(campaign_dir: Path, run_id: str) -> Path:
    path = campaign_dir / PARTIAL_DIR / f"{run_id}-{secrets.token_hex(4)}"
    path.mkdir(parents=True)
    return path


def new_work_dir(campaign_dir: Path, run_id: str) -> Path:
    path = campaign_dir / WORK_DIR / f"{run_id}-{secrets.token_hex(4)}"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def write_json(path: Path, data: Any) -> None:
    write_json_atomic(path, data, indent=1, sort_keys=True, default=str)


def write_manifest(folder: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """Hash every file in the evidence folder; the manifest itself is written last."""
    files = {
        str(p.relative_to(folder)): {"sha256": sha256_file(p), "bytes": p.stat().st_size}
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    }
    manifest = {**meta, "files": files}
    write_json(folder / MANIFEST, manifest)
    return manifest


def verify_manifest(folder: Path) -> list[str]:
    """Files whose bytes no longer match the manifest (empty when the evidence is intact)."""
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    bad = []
    for name, entry in manifest["files"].items():
        path = folder / name
        if not path.is_file() or sha256_file(path) != entry["sha256"]:
            bad.append(name)
    return bad


def publish(partial: Path, campaign_dir: Path, run_id: str) -> Path:
    """Move a finished run's evidence into ``runs/<run_id>`` (replacing a stale copy)."""
    final = run_dir(campaign_dir, run_id)
    final.parent.mkdir(parents=True, exist_ok=True)
    if final.exists():
        shutil.rmtree(final)
    os.rename(partial, final)
    return final


def clear_leftovers(campaign_dir: Path) -> None:
    """Remove partial evidence and workspaces of runs that were in flight when a campaign died."""
    for name in (PARTIAL_DIR, WORK_DIR):
        shutil.rmtree(campaign_dir / name, ignore_errors=True)
