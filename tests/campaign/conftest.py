"""Fixtures for campaign tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from campaign_fixtures import build_tiny_db


@pytest.fixture
def tiny_db(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    return build_tiny_db(tmp_path / "tiny.duckdb")


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    """Workspaces and fingerprints go to the test's folder, never the user's ~/.cache/clinbench."""
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
