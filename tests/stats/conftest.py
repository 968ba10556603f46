"""Fixtures of the stats tests: small per-run tables written by code."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# helper modules beside the tests, importable under either pytest import mode (prepend or importlib)
sys.path.insert(0, str(Path(__file__).resolve().parent))

from stats_fixtures import M4BENCH_RUNS, write_hand_csv  # noqa: E402


@pytest.fixture
def hand_csv(tmp_path: Path) -> Path:
    return write_hand_csv(tmp_path / "runs.csv")


@pytest.fixture
def m4bench_runs() -> Path:
    return M4BENCH_RUNS  # shipped in the package (clinbench/report/published)


