"""Fixtures of the report tests: the stats tests' hand example, M4Bench's runs, Chromium."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# helper modules beside these tests and the stats tests' fixtures, importable under either
# pytest import mode (prepend or importlib)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "stats"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from chromium_page import find_chromium  # noqa: E402
from stats_fixtures import M4BENCH_RUNS, write_hand_csv, write_hand_store  # noqa: E402,F401


@pytest.fixture
def m4bench_runs() -> Path:
    return M4BENCH_RUNS  # shipped in the package (clinbench/report/published)


@pytest.fixture(scope="session")
def chromium() -> str:
    path = find_chromium()
    if path is None:
        pytest.skip("chromium is not installed (Debian package `chromium`; .ci/run installs it)")
    return path
