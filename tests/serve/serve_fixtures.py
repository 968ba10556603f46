"""A small campaign folder for the app's tests: the demo's `reference` and `variant` agents on the
tiny hand-made database of tests/campaign (two tasks, two conditions), and the demo dx cases."""

from __future__ import annotations

from pathlib import Path

import duckdb

from tests.campaign.campaign_fixtures import build_tiny_db


def build_campaign(root: Path) -> Path:
    """``root/campaign``: reference and variant on sofa-24h (no-skill and with-skill), reference on meld-24h.

    The variant leaves stay 200's SOFA total empty and scores its liver 0 for stay 100, so its runs miss
    cells in two columns; the campaign's run ids are those of `clinbench run`."""
    from clinbench.agents.factory import AgentOptions
    from clinbench.campaign.campaign import run_campaign
    from clinbench.campaign.execute import CampaignConfig
    from clinbench.campaign.matrix import RunSpec

    db = build_tiny_db(root / "tiny.duckdb")
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE mimiciv_derived.variant_sofa_24h__missing_as_null AS "
                    "SELECT * REPLACE (CASE WHEN stay_id = 200 THEN NULL ELSE sofa END AS sofa, "
                    "CASE WHEN stay_id = 100 THEN 0 ELSE liver END AS liver) FROM mimiciv_derived.target_sofa_24h")
    out = root / "campaign"
    specs = [RunSpec("mimic-sofa-24h", c, "native", a, "-", 0) for c in ("no-skill", "with-skill")
             for a in ("reference", "variant")]
    specs.append(RunSpec("mimic-meld-24h", "no-skill", "native", "reference", "-", 0))
    run_campaign(specs, CampaignConfig(db=str(db), out=str(out), options=AgentOptions(variant="missing_as_null")))
    return out


PAYLOADS = ("<script>alert('xss-script')</script>", "<img src=x onerror=\"alert('xss-img')\">",
            "javascript:alert('xss-href')")


def build_hostile(root: Path, campaign: Path) -> Path:
    """``root/hostile``: one run whose transcript, column names and model name carry script payloads.

    A hostile agent controls its transcript; a hostile or damaged store controls the rest, so the
    run is written as such a store would hold it (its evidence resealed, as if it had been genuine)."""
    import json
    import shutil

    from clinbench.campaign import evidence
    from clinbench.records import ColumnScore, RunRecord
    from clinbench.records.store import Store

    script, img, href = PAYLOADS
    source = next((campaign / "runs").glob("mimic-sofa-24h.no-skill.native.variant*"))
    out = root / "hostile"
    run_id = "mimic-sofa-24h.no-skill.native.hostile.t0"
    folder = out / "runs" / run_id
    shutil.copytree(source, folder)
    lines = [{"type": "assistant", "content": f"I will now run {script}",
              "tool_calls": [{"name": f"run_sql{img}", "arguments": json.dumps({"sql": f"SELECT '{img}' AS x"})}]},
             {"type": "tool_result", "content": f"[{href}](click) {img}"},
             {"type": script, "text": href}]
    (folder / "transcript.jsonl").write_text("".join(json.dumps(e) + "\n" for e in lines), encoding="utf-8")
    score = json.loads((folder / "score.json").read_text())
    score["columns"][script] = {**score["columns"]["liver"], "name": script,
                                "examples": [{"key": {"stay_id": img}, "reference": href, "agent": script}]}
    score["reason"] = f"match rate below 1.0 in: {script}"
    (folder / "score.json").write_text(json.dumps(score), encoding="utf-8")
    manifest = json.loads((folder / "manifest.json").read_text())
    (folder / "manifest.json").unlink()
    evidence.write_manifest(folder, {k: v for k, v in manifest.items() if k != "files"})
    Store.create(out).record(RunRecord(
        run_id=run_id, benchmark="derive", task="mimic-sofa-24h", family="sofa", condition="no-skill",
        schema="native", agent=f"hostile{img}", model=f"{script}{href}", status="ok", reward=0.5,
        evidence_dir=f"runs/{run_id}", flag_reason=script, publishable=False,
        column_scores=[ColumnScore(script, 0.5, 0.5)]))
    # a row whose evidence folder points outside the campaign (a tampered store)
    Store.open(out).record(RunRecord(run_id="escape", benchmark="derive", task="mimic-sofa-24h", status="ok",
                                     reward=1.0, evidence_dir="../../../../../../.."))
    return out
