"""Full builds on the real demo and the synthetic database: every concept of this layer is built,
its declared grain (header line `-- Grain:`) is unique, and on synthetic data it is not empty."""

from __future__ import annotations

import duckdb
import pytest

from clinbench.concepts.catalog import load_concepts

FOUNDATION = ("demographics", "measurement", "medication", "treatment", "firstday")
CONCEPTS = sorted(c.qualified for c in load_concepts(profile="mimic-code").values()
                  if c.kind == "concept" and c.domain in FOUNDATION)
# mimic-code tables whose rows repeat a key (kept as mimic-code builds them; each header says why)
NOT_UNIQUE = {"mimiciv_derived.antibiotic", "mimiciv_derived.bg", "mimiciv_derived.norepinephrine_equivalent_dose",
              "mimiciv_derived.rrt", "mimiciv_derived.vasoactive_agent", "mimiciv_derived.weight_durations",
              "mimiciv_derived.height", "mimiciv_derived.acei", "mimiciv_derived.arb", "mimiciv_derived.nsaid",
              "mimiciv_derived.neuroblock", "mimiciv_derived.code_status", "mimiciv_derived.invasive_line"}
UNIQUE = [c for c in CONCEPTS if c not in NOT_UNIQUE]


def _grain_check(db, qualified: str) -> tuple[list[str], int, int]:
    concept = load_concepts()[qualified]
    con = duckdb.connect(str(db), read_only=True)
    try:
        columns = [r[0] for r in con.execute(f"DESCRIBE {qualified}").fetchall()]
        grain = concept.grain_columns(columns)
        keys = ", ".join(grain)
        rows, distinct = con.execute(f"SELECT count(*), count(DISTINCT ({keys})) FROM {qualified}").fetchone()
    finally:
        con.close()
    return grain, rows, distinct


def test_exactly_the_known_tables_declare_a_grain_that_is_not_unique():
    declared = {q for q, c in load_concepts().items() if c.kind == "concept" and "not unique" in c.grain_text}
    assert declared == NOT_UNIQUE


def test_foundation_concepts_are_found():
    assert len(CONCEPTS) == 51  # 6 demographics, 17 measurement, 14 medication, 5 treatment, 9 first-day
    assert "mimiciv_derived.urine_output_rate" in CONCEPTS and "mimiciv_derived.first_day_bg_art" in CONCEPTS


@pytest.mark.parametrize("qualified", UNIQUE)
def test_grain_unique_on_demo(demo_db, qualified):
    grain, rows, distinct = _grain_check(demo_db, qualified)
    assert grain, f"{qualified}: the -- Grain: header names no column of the table"
    assert rows == distinct, f"{qualified}: {rows - distinct} duplicate rows on ({', '.join(grain)})"


@pytest.mark.parametrize("qualified", CONCEPTS)
def test_grain_unique_and_not_empty_on_synthetic(synth_db, qualified):
    grain, rows, distinct = _grain_check(synth_db, qualified)
    assert grain, f"{qualified}: the -- Grain: header names no column of the table"
    if qualified not in NOT_UNIQUE:
        assert rows == distinct, f"{qualified}: {rows - distinct} duplicate rows on ({', '.join(grain)})"
    assert rows > 0, f"{qualified}: {rows} rows on the synthetic database"


def test_demo_build_values_a_clinician_can_check(demo_db):
    con = duckdb.connect(str(demo_db), read_only=True)
    try:
        # 100 patients, 275 admissions, 140 ICU stays in the demo; every stay has a first-day row
        assert con.execute("SELECT count(*) FROM mimiciv_derived.age").fetchone()[0] == 275
        for table in ("icustay_detail", "first_day_lab", "first_day_vitalsign", "first_day_gcs", "first_day_weight"):
            assert con.execute(f"SELECT count(*) FROM mimiciv_derived.{table}").fetchone()[0] == 140
        # temperatures are physiological in deg C after the deg F conversion and error filters
        low, high = con.execute("SELECT min(temperature), max(temperature) FROM mimiciv_derived.vitalsign").fetchone()
        assert 25 < low and high < 45
        # only arterial specimens reach first_day_bg_art
        arterial_only = con.execute(
            "SELECT count(*) FROM mimiciv_derived.first_day_bg_art a JOIN mimiciv_derived.first_day_bg b USING (stay_id) WHERE a.po2_max > b.po2_max"
        ).fetchone()[0]
        assert arterial_only == 0
        # the reconstructed demo chartevents lost the ventilator-mode and O2-device texts (RECONSTRUCTED.md)
        assert con.execute("SELECT count(*) FROM mimiciv_derived.ventilation").fetchone()[0] == 0
    finally:
        con.close()
