"""Session fixtures for the synthetic-database tests (loaded with ``pytest_plugins`` by those modules).

Each database is generated once per session into a temporary folder; tests only read them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from clinbench.ehr.synth import synth_eicu, synth_mimic_iv


@pytest.fixture(scope="session")
def synth_mimic500(tmp_path_factory) -> Path:
    """500 patients, default knobs: the cohort the prevalence and realism checks run on."""
    return synth_mimic_iv(tmp_path_factory.mktemp("synth") / "mimic500.duckdb", patients=500, seed=0)


@pytest.fixture(scope="session")
def synth_mimic_clean(tmp_path_factory) -> Path:
    """150 patients with quirks=0: every time must sit inside its window."""
    return synth_mimic_iv(tmp_path_factory.mktemp("synth") / "clean.duckdb", patients=150, seed=1, quirks=0)


@pytest.fixture(scope="session")
def synth_eicu200(tmp_path_factory) -> Path:
    return synth_eicu(tmp_path_factory.mktemp("synth") / "eicu200.duckdb", patients=200, seed=0)
