"""Each campaign records the software it ran with (clinbench, DuckDB, SDKs) in versions.json."""

from __future__ import annotations

import json

import duckdb

from clinbench import __version__
from clinbench import versions
from clinbench.campaign.campaign import run_campaign
from clinbench.campaign.execute import CampaignConfig


def test_a_campaign_records_clinbench_duckdb_and_sdk_versions(tmp_path):
    db = tmp_path / "empty.duckdb"
    duckdb.connect(str(db)).close()
    run_campaign([], CampaignConfig(db=str(db), out=str(tmp_path / "camp")))
    [entry] = json.loads((tmp_path / "camp" / "versions.json").read_text())
    assert entry["clinbench"] == __version__
    assert entry["packages"]["duckdb"] == duckdb.__version__
    assert "openai" in entry["packages"] and "ray" in entry["packages"]  # None when not installed
    assert len(entry["constraints_sha256"]) == 64 and entry["recorded_at"]


def test_a_resumed_campaign_appends_only_when_versions_change(tmp_path, monkeypatch):
    versions.record_versions(tmp_path)
    versions.record_versions(tmp_path)
    assert len(json.loads((tmp_path / "versions.json").read_text())) == 1
    monkeypatch.setattr(versions, "__version__", "9.9.9")
    versions.record_versions(tmp_path)
    history = json.loads((tmp_path / "versions.json").read_text())
    assert [h["clinbench"] for h in history] == [__version__, "9.9.9"]
