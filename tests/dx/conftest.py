"""Fixtures for the sequential-diagnosis tests: demo cases and a small scripted encounter."""

from __future__ import annotations

import pytest

from clinbench.dx.cases import demo_cases


@pytest.fixture(scope="session")
def cases():
    return demo_cases()


@pytest.fixture(scope="session")
def case_by_id(cases):
    return {c.case_id: c for c in cases}
