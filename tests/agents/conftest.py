"""Fixtures for agent tests: a tiny hand-made workspace and stand-in CLIs on PATH."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_fixtures import make_workspace
from standins import install_standins


@pytest.fixture
def workspace(tmp_path) -> Path:
    return make_workspace(tmp_path / "ws")


@pytest.fixture
def standin_path(tmp_path, monkeypatch) -> Path:
    bin_dir = install_standins(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ.get('PATH', '')}")
    return bin_dir


@pytest.fixture(scope="session")
def sofa_db(tmp_path_factory) -> Path:
    """A small synthetic MIMIC-IV database with the sofa-24h task's reference built."""
    from clinbench.concepts.build import build_concepts
    from clinbench.ehr.synth import synth_mimic_iv

    db = synth_mimic_iv(tmp_path_factory.mktemp("sofa") / "synth.duckdb", patients=20, seed=3)
    build_concepts(db, only=["sofa-24h"])
    return db
