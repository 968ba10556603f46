"""Evidence is sealed once: tampering is flagged, and rescore never reseals it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import duckdb
import pytest

from clinbench.campaign.audit import audit_campaign
from clinbench.campaign.evidence import verify_manifest
from clinbench.records.store import Store

KEPT = ("reference", "honest", "user-folder", "fd-inheritance")


@pytest.fixture(scope="module")
def tampered(hostile, tmp_path_factory):
    """A copy of the campaign (four of its runs), tampered with after the fact, then rescored by the CLI."""
    out = shutil.copytree(hostile.out, tmp_path_factory.mktemp("tampered") / "camp", symlinks=True)
    keep = [hostile.rows[k]["run_id"] for k in KEPT]
    with duckdb.connect(str(out / "results.duckdb")) as con:
        for table in ("runs", "column_scores", "usage"):
            con.execute(f"DELETE FROM {table} WHERE run_id NOT IN ({', '.join('?' * len(keep))})", keep)
    folders = {k: out / hostile.rows[k]["evidence_dir"] for k in KEPT}
    before = {k: (f / "manifest.json").read_bytes() for k, f in folders.items()}
    # a 0-scoring run given the reference's output; another's transcript emptied; 'honest' left intact
    shutil.copyfile(folders["reference"] / "output.csv", folders["user-folder"] / "output.csv")
    (folders["fd-inheritance"] / "transcript.jsonl").write_text("")
    res = subprocess.run([sys.executable, "-m", "clinbench", "rescore", str(out)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return out, folders, before, res.stdout


@pytest.mark.slow
def test_rescore_after_tampering_does_not_reseal_and_the_run_stays_unpublishable(hostile, tampered):
    # before: rescore re-sealed the manifest; the next audit flagged nothing and the run became publishable at 1.0
    out, folders, before, stdout = tampered
    rid = hostile.rows["user-folder"]["run_id"]
    assert f"{rid}: NOT re-scored, kept unpublishable: evidence changed since the run: output.csv (added)" in stdout
    assert "2 refused (evidence fails verification; not resealed)" in stdout
    assert (folders["user-folder"] / "manifest.json").read_bytes() == before["user-folder"]
    row = Store.open(out).get(rid)
    assert row["reward"] == 0.0 and row["publishable"] is False
    verdict = next(v for v in audit_campaign(out) if v.run_id == rid)
    assert "evidence changed since the run: output.csv (added)" in verdict.reasons
    assert Store.open(out).get(rid)["publishable"] is False


@pytest.mark.slow
def test_changed_evidence_bytes_are_flagged_and_not_rescored(hostile, tampered):
    out, folders, before, stdout = tampered
    rid = hostile.rows["fd-inheritance"]["run_id"]
    assert f"{rid}: NOT re-scored, kept unpublishable: evidence changed since the run: transcript.jsonl" in stdout
    assert verify_manifest(folders["fd-inheritance"]) == ["transcript.jsonl"]  # still failing: nothing resealed
    assert (folders["fd-inheritance"] / "manifest.json").read_bytes() == before["fd-inheritance"]
    assert Store.open(out).get(rid)["publishable"] is False


@pytest.mark.slow
def test_rescore_of_intact_evidence_to_the_same_score_leaves_it_as_sealed(hostile, tampered):
    out, folders, before, stdout = tampered
    assert "2 runs re-scored; 0 changed" in stdout
    assert verify_manifest(folders["honest"]) == []
    assert (folders["honest"] / "manifest.json").read_bytes() == before["honest"]  # nothing rewritten or resealed
    assert Store.open(out).get(hostile.rows["honest"]["run_id"])["reward"] == 1.0
