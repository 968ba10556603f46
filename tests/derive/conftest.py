"""Fixtures for the derive tests; the database builders live in ``derive_fixtures``."""

from __future__ import annotations

from pathlib import Path

import pytest

from derive_fixtures import make_source_db


@pytest.fixture(scope="session")
def source_db(tmp_path_factory) -> Path:
    return make_source_db(tmp_path_factory.mktemp("src") / "source.duckdb")


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    """Each test gets its own workspace cache (never the user's ~/.cache/clinbench)."""
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
