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
