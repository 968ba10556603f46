"""Ventilation episodes from hand-made ventilator_setting / oxygen_delivery rows, in both reference profiles:
the cases the synthetic data never has and the statement's FULL JOIN of the two sources and its one-window
gap rule must keep as mimic-code's union of times, LEFT JOINs and (stay, status) window did (a source row
without a stay or a time has no status; both sources charted at one time make one charting)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinbench.concepts.build import output_table
from clinbench.concepts.catalog import find_concept, load_concepts
from clinbench.concepts.graph import dependency_map
from clinbench.concepts.helpers import statement
from tests.concepts.fixtures2 import fresh, h, insert, make_template, rows


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_template(tmp_path_factory.mktemp("vent") / "template.duckdb")


def _recompute(con, name: str, profile: str) -> None:
    concepts = load_concepts(profile=profile)
    concept = find_concept(name, concepts)
    body = statement(concept.qualified, concepts, dependency_map(concepts), "mimiciv_derived").body
    con.execute(f"CREATE OR REPLACE TABLE {output_table(concept, 'mimiciv_derived')} AS {body}")


def _vs(con, stay_id, hours, mode):
    insert(con, "mimiciv_derived.ventilator_setting",
           {"subject_id": stay_id or 99, "stay_id": stay_id, "charttime": None if hours is None else h(hours), "ventilator_mode": mode})


def _od(con, stay_id, hours, device):
    insert(con, "mimiciv_derived.oxygen_delivery",
           {"subject_id": stay_id or 99, "stay_id": stay_id, "charttime": None if hours is None else h(hours), "o2_flow": 2.0,
            "o2_delivery_device_1": device})


@pytest.mark.parametrize("profile", ["mimic-code", "m4bench"])
def test_ventilation_source_rows_without_stay_or_time_and_shared_times(template: Path, tmp_path: Path, profile: str):
    con = fresh(template, tmp_path / "v.duckdb")
    # stay 1: CMV and a nasal cannula charted at 0 h (one charting: InvasiveVent), CMV at 2 h, cannula at 3 and 4 h
    _vs(con, 1, 0, "CMV")
    _od(con, 1, 0, "Nasal cannula")
    _vs(con, 1, 2, "CMV")
    _od(con, 1, 3, "Nasal cannula")
    _od(con, 1, 4, "Nasal cannula")
    _vs(con, 1, None, "CMV")  # no time: never a charting
    # no stay: never a charting, whatever the device
    _od(con, None, 10, "Nasal cannula")
    _od(con, None, 11, "Nasal cannula")
    _vs(con, None, 10, "CMV")
    # stay 2: the same status 19 h apart -> two episodes, the first ending at its own last charting
    for hours in (0, 1, 20, 21):
        _od(con, 2, hours, "Nasal cannula")
    # stay 3: a status comes back 3 h after its last charting, after another status -> a new episode
    # (the lone 0 h charting is a one-charting episode: dropped)
    _od(con, 3, 0, "Nasal cannula")
    _od(con, 3, 1, "High flow nasal cannula")
    _od(con, 3, 2, "High flow nasal cannula")
    _od(con, 3, 3, "Nasal cannula")
    _od(con, 3, 4, "Nasal cannula")
    _recompute(con, "ventilation", profile)
    got = [(r["stay_id"], r["starttime"], r["endtime"], r["ventilation_status"])
           for r in rows(con, "SELECT * FROM mimiciv_derived.ventilation ORDER BY stay_id NULLS LAST, starttime")]
    assert got == [
        (1, h(0), h(3), "InvasiveVent"),  # ends at the next charting of any status
        (1, h(3), h(4), "SupplementalOxygen"),
        (2, h(0), h(1), "SupplementalOxygen"),
        (2, h(20), h(21), "SupplementalOxygen"),
        (3, h(1), h(3), "HFNC"),
        (3, h(3), h(4), "SupplementalOxygen"),
    ]
