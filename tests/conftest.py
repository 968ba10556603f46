"""Shared test fixtures. Fixtures are made by code; real open data comes from ../shared/data."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = (REPO.parent / "shared" / "data").resolve()
MIMIC_DEMO = SHARED_DATA / "mimic-iv-demo-2.2"
EICU_DEMO = SHARED_DATA / "eicu-demo-2.0.1"


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is absent: the real open demo data lives in ../shared/data beside the repository")
    return path


@pytest.fixture(scope="session")
def shared_data() -> Path:
    return _need(SHARED_DATA)


@pytest.fixture(scope="session")
def mimic_demo_dir() -> Path:
    return _need(MIMIC_DEMO)


@pytest.fixture(scope="session")
def eicu_demo_dir() -> Path:
    return _need(EICU_DEMO)
