"""The mimic-code profile's concept layer is mimic-code's: every table of mimic-code's
mimiciv_derived equals the anchor (MIT-LCP/mimic-code 8bcbd190, concepts_duckdb, run on the
MIMIC-IV demo; see ../shared/data/anchors-demo/README.md) row for row, with floats equal to 1e-6;
and two builds of one database give identical tables."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from clinbench.concepts.compare import table_mismatch
from tests.conftest import SHARED_DATA

ANCHOR = SHARED_DATA / "anchors-demo" / "mimic-code-derived"

# every table of mimic-code's mimiciv_derived (all 65)
TABLES = [
    "acei", "age", "antibiotic", "apsiii", "arb", "bg", "blood_differential", "cardiac_marker", "charlson",
    "chemistry", "coagulation", "code_status", "complete_blood_count", "creatinine_baseline", "crrt", "dobutamine",
    "dopamine", "enzyme", "epinephrine", "first_day_bg", "first_day_bg_art", "first_day_gcs",
    "first_day_height", "first_day_lab", "first_day_rrt", "first_day_sofa", "first_day_urine_output",
    "first_day_vitalsign", "first_day_weight", "gcs", "height", "icp", "icustay_detail", "icustay_hourly",
    "icustay_times", "inflammation", "invasive_line", "kdigo_creatinine", "kdigo_stages", "kdigo_uo", "lods", "meld",
    "milrinone", "neuroblock", "norepinephrine", "norepinephrine_equivalent_dose", "nsaid", "oasis", "oxygen_delivery",
    "phenylephrine", "rhythm", "rrt", "sapsii", "sepsis3", "sirs", "sofa", "suspicion_of_infection",
    "urine_output", "urine_output_rate", "vasoactive_agent", "vasopressin", "ventilation",
    "ventilator_setting", "vitalsign", "weight_durations",
]


def _mismatch(con: duckdb.DuckDBPyConnection, table: str) -> str | None:
    """None when clinbench's table equals the anchor, else what differs."""
    return table_mismatch(con, f"mimiciv_derived.{table}", f"read_parquet('{ANCHOR / (table + '.parquet')}')")


@pytest.fixture(scope="module")
def anchored(demo_db):
    if not ANCHOR.is_dir():
        pytest.skip(f"{ANCHOR} is absent: the mimic-code anchor outputs live in ../shared/data beside the repository")
    con = duckdb.connect(str(demo_db), read_only=True)
    yield con
    con.close()


def test_the_list_names_every_anchor_table_clinbench_builds(anchored):
    anchor_tables = {p.stem for p in ANCHOR.glob("*.parquet")}
    built = {r[0] for r in anchored.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'mimiciv_derived'").fetchall()}
    assert sorted(anchor_tables & built) == TABLES
    assert len(TABLES) == 65 == len(anchor_tables)


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.slow
def test_table_equals_mimic_code_on_the_demo(anchored, table):
    assert _mismatch(anchored, table) is None


def test_kdigo_stage_3_after_a_rise_from_a_high_low_on_the_demo(anchored):
    # stay 32119961: creatinine 6.6 -> 7.2 within 48 h is >= 4.0 after a >= 0.3 rise: stage 3
    row = anchored.execute(
        "SELECT aki_stage_creat FROM mimiciv_derived.kdigo_stages WHERE stay_id = 32119961 "
        "AND creat = 7.2 AND creat_low_past_48hr = 6.6").fetchall()
    assert row and {r[0] for r in row} == {3}


# ------------------------------------------------------------------ determinism
def _content(db: Path) -> dict[str, list[tuple]]:
    """Every derived and target table as a sorted list of exact rows (floats as their bits)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = con.execute(
            "SELECT schema_name || '.' || table_name FROM duckdb_tables() "
            "WHERE schema_name IN ('mimiciv_derived', 'eicu_derived') ORDER BY 1").fetchall()
        out = {}
        for (table,) in tables:
            rows = con.execute(f"SELECT * FROM {table}").fetchall()
            out[table] = sorted((tuple(repr(v) for v in r) for r in rows))
        return out
    finally:
        con.close()


@pytest.mark.slow
def test_two_builds_of_the_demo_give_identical_tables(demo_db, mimic_demo_dir, tmp_path):
    from clinbench.concepts.build import build_concepts
    from clinbench.ehr.load import load_mimic_iv

    second = tmp_path / "again.duckdb"
    load_mimic_iv(mimic_demo_dir, second)
    build_concepts(second, profile="mimic-code")
    first, again = _content(demo_db), _content(second)
    assert sorted(first) == sorted(again) and len(first) > 70
    differing = [t for t in first if first[t] != again[t]]
    assert differing == []


@pytest.mark.slow
def test_two_builds_of_a_synthetic_database_give_identical_tables(tmp_path):
    from clinbench.concepts.build import build_concepts
    from clinbench.ehr.synth import synth_mimic_iv

    synth_mimic_iv(tmp_path / "a.duckdb", patients=60, seed=3)
    shutil.copy(tmp_path / "a.duckdb", tmp_path / "b.duckdb")
    build_concepts(tmp_path / "a.duckdb")
    build_concepts(tmp_path / "b.duckdb")
    first, again = _content(tmp_path / "a.duckdb"), _content(tmp_path / "b.duckdb")
    assert len(first) > 70
    assert [t for t in first if first[t] != again[t]] == []
