"""End to end on a synthetic database with real concepts: the llm agent driven by the scripted
server writes the reference derivation and scores 1.0; the reference and empty built-ins bracket it."""

from __future__ import annotations

import json

import pytest

from clinbench.agents.factory import AgentOptions
from tests.agents.scripted_server import ScriptedServer
from clinbench.campaign.campaign import run_campaign
from clinbench.campaign.execute import CampaignConfig
from clinbench.campaign.matrix import RunSpec
from clinbench.records.store import Store

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)

TASK = "mimic-sofa-24h"


@pytest.fixture(scope="module")
def synth_db(tmp_path_factory):
    from clinbench.concepts.build import build_concepts
    from clinbench.ehr.synth import synth_mimic_iv

    root = tmp_path_factory.mktemp("e2e")
    db = synth_mimic_iv(root / "synth.duckdb", patients=20, seed=3)
    build_concepts(db, only=["sofa-24h"])
    return db


def test_llm_agent_whole_task_scores_one(synth_db, tmp_path, monkeypatch):
    from clinbench.concepts.build import target_sql

    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    script = [
        {"tool": "list_tables", "arguments": {}},
        {"tool": "read_skill", "arguments": {"name": "sofa-score"}},
        {"tool": "run_sql", "arguments": {"sql": "SELECT count(*) FROM mimiciv_icu.icustays"}},
        {"tool": "write_output", "arguments": {"sql": target_sql("sofa-24h")}},
        {"text": "Wrote one row per ICU stay."},
    ]
    out = tmp_path / "camp"
    with ScriptedServer(script) as srv:
        config = CampaignConfig(db=str(synth_db), out=str(out), options=AgentOptions(base_url=srv.base_url))
        specs = [RunSpec(TASK, "with-skill", "native", "llm", "scripted", 0),
                 RunSpec(TASK, "with-skill", "native", "reference", "-", 0),
                 RunSpec(TASK, "with-skill", "native", "empty", "-", 0)]
        summary = run_campaign(specs, config)
    assert summary.by_status == {"ok": 3}
    runs = {r["agent"]: r for r in Store.open(out).runs()}
    assert (runs["llm"]["reward"], runs["llm"]["strict"]) == (1.0, True)
    assert (runs["reference"]["reward"], runs["reference"]["strict"]) == (1.0, True)
    assert runs["empty"]["reward"] == 0.0
    score = json.loads((out / runs["llm"]["evidence_dir"] / "score.json").read_text())
    assert score["reference_rows"] > 0 and score["agent_rows"] == score["reference_rows"]
    listed = next(m for m in srv.requests[1]["messages"] if m["role"] == "tool")["content"]
    assert "mimiciv_icu.icustays" in listed.splitlines() and "target_" not in listed
    assert "mimiciv_derived.first_day_sofa" not in listed.splitlines()  # the task drops it
