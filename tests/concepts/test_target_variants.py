"""Each target-level variant moves exactly the rows its header says, on hand-made patients.

A test copies the empty template, inserts a patient whose row should move and one whose row
should not, recomputes the default target and the variant, and reads ``variant_diff``: the
moved keys and the moved columns are asserted exactly.
"""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import pytest

from clinbench.concepts.variants import variant_diff
from tests.concepts.fixtures2 import fresh, h, insert, make_template, recompute, rows, stay


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return make_template(tmp_path_factory.mktemp("target_variants") / "t.duckdb")


def moved(db: Path, name: str) -> tuple[list[dict], dict[str, int], int]:
    """(moved keys, changed cells per column, keys only on one side) of variant ``name``."""
    diff = variant_diff(db, name, examples=100)
    keys = sorted({tuple((k, ex[k]) for k in diff.keys) for ex in diff.examples})
    return [dict(k) for k in keys], {c: n for c, n in diff.changed_by_column.items() if n}, diff.only_default + diff.only_variant


def test_apsiii_missing_as_null_empties_only_unmeasured_components(template, tmp_path):
    db = tmp_path / "v.duckdb"
    con = fresh(template, db)
    for sid in (1, 2):
        stay(con, sid)
    full = {"hr_score": 0, "mbp_score": 0, "temp_score": 0, "resp_rate_score": 0, "hematocrit_score": 0, "wbc_score": 0,
            "creatinine_score": 0, "uo_score": 0, "bun_score": 0, "sodium_score": 0, "albumin_score": 0,
            "bilirubin_score": 0, "glucose_score": 0, "gcs_score": 0}
    insert(con, "mimiciv_derived.apsiii", {"subject_id": 1, "hadm_id": 1, "stay_id": 1, "apsiii": 5, "hr_score": 5})
    insert(con, "mimiciv_derived.apsiii", {"subject_id": 2, "hadm_id": 2, "stay_id": 2, "apsiii": 0, **full})
    # stay 2 has an arterial gas in the first 24 h: PaO2 90 on room air (0), pH 7.40 / PaCO2 40 (0)
    insert(con, "mimiciv_derived.bg", {"subject_id": 2, "hadm_id": 2, "charttime": h(1), "specimen": "ART.",
                                       "po2": 90, "pco2": 40, "ph": 7.40})
    recompute(con, "apsiii-24h", "apsiii-24h__missing_as_null")
    assert rows(con, "SELECT stay_id, apsiii, hr_score, albumin_score, acidbase_score FROM mimiciv_derived.target_apsiii_24h ORDER BY 1") == [
        {"stay_id": 1, "apsiii": 5, "hr_score": 5, "albumin_score": 0, "acidbase_score": 0},
        {"stay_id": 2, "apsiii": 0, "hr_score": 0, "albumin_score": 0, "acidbase_score": 0}]
    con.close()
    keys, columns, one_sided = moved(db, "apsiii-24h__missing_as_null")
    assert keys == [{"stay_id": 1}] and one_sided == 0
    # the 15 unmeasured components of stay 1 (all but hr_score); the total does not move
    assert set(columns) == {*full, "pao2_aado2_score", "acidbase_score"} - {"hr_score"}
    assert set(columns.values()) == {1}


@pytest.mark.parametrize(("name", "table", "measured", "unmeasured"), [
    ("sapsii-24h__missing_as_null", "sapsii", {"sapsii": 9, "bilirubin_score": 9}, "hr_score"),
    ("sirs-24h__missing_as_null", "sirs", {"sirs": 1, "temp_score": 1}, "wbc_score"),
])
@pytest.mark.slow
def test_missing_as_null_is_the_concept_with_its_empty_components(template, tmp_path, name, table, measured, unmeasured):
    db = tmp_path / "v.duckdb"
    con = fresh(template, db)
    stay(con, 1)
    insert(con, f"mimiciv_derived.{table}", {"subject_id": 1, "hadm_id": 1, "stay_id": 1, **measured})
    recompute(con, name.split("__")[0], name)
    con.close()
    keys, columns, _ = moved(db, name)
    assert keys == [{"stay_id": 1}]
    assert unmeasured in columns and not set(measured) & set(columns)


def test_oasis_missing_as_null_keeps_the_anchor_pre_icu_score(template, tmp_path):
    db = tmp_path / "v.duckdb"
    con = fresh(template, db)
    stay(con, 1, admit_hours_before=2)  # 120 min before the ICU: 3 points
    insert(con, "mimiciv_derived.oasis", {"subject_id": 1, "hadm_id": 1, "stay_id": 1, "oasis": 3, "preiculos_score": 3,
                                          "age_score": 6})
    recompute(con, "oasis-24h", "oasis-24h__missing_as_null")
    assert rows(con, "SELECT oasis, preiculos_score, age_score, gcs_score FROM mimiciv_derived.target_oasis_24h") == [
        {"oasis": 9, "preiculos_score": 3, "age_score": 6, "gcs_score": 0}]
    con.close()
    keys, columns, _ = moved(db, "oasis-24h__missing_as_null")
    assert keys == [{"stay_id": 1}]
    assert "gcs_score" in columns and "preiculos_score" not in columns and "age_score" not in columns and "oasis" not in columns


def _gcs(con, sid: int, hours: float, total: int, motor: int, verbal: int, eyes: int) -> None:
    insert(con, "mimiciv_derived.gcs", {"subject_id": sid, "stay_id": sid, "charttime": h(hours), "gcs": total,
                                        "gcs_motor": motor, "gcs_verbal": verbal, "gcs_eyes": eyes, "gcs_unable": 0})


def test_gcs_tie_goes_to_the_earliest_charting_and_the_variant_to_the_latest(template, tmp_path):
    db = tmp_path / "v.duckdb"
    con = fresh(template, db)
    for sid in (1, 2):
        stay(con, sid)
    _gcs(con, 1, 1, 11, 6, 4, 1)  # E1 V4 M6 first ...
    _gcs(con, 1, 3, 11, 6, 1, 4)  # ... then E4 V1 M6: the same total
    _gcs(con, 2, 2, 9, 5, 2, 2)
    recompute(con, "gcs-24h", "gcs-24h__latest_charting")
    assert rows(con, "SELECT stay_id, gcs_min, gcs_motor, gcs_verbal, gcs_eyes FROM mimiciv_derived.target_gcs_24h ORDER BY 1") == [
        {"stay_id": 1, "gcs_min": 11, "gcs_motor": 6, "gcs_verbal": 4, "gcs_eyes": 1},
        {"stay_id": 2, "gcs_min": 9, "gcs_motor": 5, "gcs_verbal": 2, "gcs_eyes": 2}]
    con.close()
    keys, columns, _ = moved(db, "gcs-24h__latest_charting")
    assert keys == [{"stay_id": 1}] and columns == {"gcs_verbal": 1, "gcs_eyes": 1}
    diff = variant_diff(db, "gcs-24h__latest_charting")
    assert (diff.unit, diff.moved_units) == ("stay_id", 1)


def test_gcs_without_charting_is_normal_by_default_and_empty_in_the_variant(template, tmp_path):
    db = tmp_path / "v.duckdb"
    con = fresh(template, db)
    for sid in (1, 2):
        stay(con, sid)
    _gcs(con, 1, 1, 14, 6, 4, 4)
    _gcs(con, 2, 30, 8, 4, 2, 2)  # stay 2: only after the first day
    recompute(con, "gcs-24h", "gcs-24h__missing_as_null")
    assert rows(con, "SELECT stay_id, gcs_min, gcs_motor, gcs_verbal, gcs_eyes FROM mimiciv_derived.target_gcs_24h ORDER BY 1")[1] == \
        {"stay_id": 2, "gcs_min": 15, "gcs_motor": 6, "gcs_verbal": 5, "gcs_eyes": 4}
    con.close()
    keys, columns, _ = moved(db, "gcs-24h__missing_as_null")
    assert keys == [{"stay_id": 2}] and columns == {"gcs_min": 1, "gcs_motor": 1, "gcs_verbal": 1, "gcs_eyes": 1}


def test_charlson_age_50_scores_0_by_default_and_1_in_the_below_bands_variant(template, tmp_path):
    db = tmp_path / "v.duckdb"
    con = fresh(template, db)
    for sid, age in ((1, 50), (2, 55)):
        stay(con, sid, age=age)
        # mimic-code's charlson (age < 50 -> 0, < 60 -> 1): both score 1, plus a myocardial infarct
        insert(con, "mimiciv_derived.charlson", {"subject_id": sid, "hadm_id": sid, "age_score": 1, "myocardial_infarct": 1,
                                                 "charlson_comorbidity_index": 2})
    recompute(con, "mimiciv_derived.target_charlson", "charlson__age_below_bands")
    assert rows(con, "SELECT hadm_id, age_score, charlson_comorbidity_index FROM mimiciv_derived.target_charlson ORDER BY 1") == [
        {"hadm_id": 1, "age_score": 0, "charlson_comorbidity_index": 1},
        {"hadm_id": 2, "age_score": 1, "charlson_comorbidity_index": 2}]
    con.close()
    keys, columns, _ = moved(db, "charlson__age_below_bands")
    assert keys == [{"hadm_id": 1}] and columns == {"age_score": 1, "charlson_comorbidity_index": 1}
    diff = variant_diff(db, "charlson__age_below_bands")
    assert (diff.unit, diff.moved_units) == ("hadm_id", 1)


def test_urine_hour_boundaries_move_a_charting_5_h_50_min_back_into_the_6_h_window(template, tmp_path):
    db = tmp_path / "v.duckdb"
    con = fresh(template, db)
    stay(con, 1)
    insert(con, "mimiciv_icu.chartevents", {"subject_id": 1, "hadm_id": 1, "stay_id": 1, "itemid": 220045,
                                            "charttime": h(0), "valuenum": 80})
    # 08:05 and 13:55: 5 h 50 min apart, 5 clock-hour boundaries (09 ... 13) between them
    for t, ml in ((h(5 / 60), 100.0), (h(5 + 55 / 60), 200.0)):
        insert(con, "mimiciv_derived.urine_output", {"stay_id": 1, "charttime": t, "urineoutput": ml})
    recompute(con, "urine-output-rate", "urine-output-rate__hour_boundaries")
    assert rows(con, "SELECT urineoutput_6hr, uo_tm_6hr, urineoutput_12hr FROM mimiciv_derived.target_urine_output_rate ORDER BY charttime") == [
        {"urineoutput_6hr": 100.0, "uo_tm_6hr": 0.08, "urineoutput_12hr": 100.0},
        {"urineoutput_6hr": 200.0, "uo_tm_6hr": 5.83, "urineoutput_12hr": 300.0}]
    con.close()
    keys, columns, _ = moved(db, "urine-output-rate__hour_boundaries")
    assert keys == [{"stay_id": 1, "charttime": h(5 + 55 / 60)}]
    assert columns == {"urineoutput_6hr": 1, "uo_tm_6hr": 1}


def _antibiotic(con, sid: int, start: datetime) -> None:
    insert(con, "mimiciv_derived.antibiotic", {"subject_id": sid, "hadm_id": sid, "stay_id": sid, "antibiotic": "Cefepime",
                                               "route": "IV", "starttime": start, "stoptime": h(48)})


def _culture(con, sid: int, specimen_id: int, chartdate: date, charttime: datetime | None, spec: str = "BLOOD CULTURE",
             org: str | None = None, org_itemid: int | None = None) -> None:
    insert(con, "mimiciv_hosp.microbiologyevents", {"microevent_id": specimen_id, "subject_id": sid, "hadm_id": sid,
                                                   "micro_specimen_id": specimen_id, "chartdate": chartdate,
                                                   "charttime": charttime, "spec_type_desc": spec,
                                                   "org_name": org, "org_itemid": org_itemid})


def _soi(con, variant: str) -> list[dict]:
    recompute(con, "suspicion-infection", variant)
    return rows(con, "SELECT subject_id, suspected_infection, suspected_infection_time, culture_time, specimen, positive_culture "
                     "FROM mimiciv_derived.target_suspicion_infection ORDER BY 1")


def test_same_minute_culture_counts_neither_way_by_default_and_before_in_the_variant(template, tmp_path):
    db = tmp_path / "v.duckdb"
    con = fresh(template, db)
    for sid in (1, 2):
        stay(con, sid)
        _antibiotic(con, sid, h(5))
    _culture(con, 1, 11, h(5).date(), h(5))  # the same minute as the antibiotic
    _culture(con, 2, 21, h(4).date(), h(4))  # an hour before it
    default = _soi(con, "suspicion-infection__same_minute_before")
    assert [(r["subject_id"], r["suspected_infection"], r["suspected_infection_time"]) for r in default] == [(1, 0, None), (2, 1, h(4))]
    con.close()
    keys, columns, _ = moved(db, "suspicion-infection__same_minute_before")
    assert keys == [{"subject_id": 1, "ab_id": 1}]
    assert columns == {"suspected_infection": 1, "suspected_infection_time": 1, "culture_time": 1, "specimen": 1, "positive_culture": 1}


def test_date_only_culture_is_reported_first_by_default_and_the_timed_one_in_the_variant(template, tmp_path):
    db = tmp_path / "v.duckdb"
    con = fresh(template, db)
    for sid in (1, 2):
        stay(con, sid)
        _antibiotic(con, sid, h(30))  # 2150-01-02 14:00
    day2 = h(30).date()
    _culture(con, 1, 11, day2, None, spec="URINE")  # date only, the antibiotic's day
    _culture(con, 1, 12, day2, h(26))  # 10:00 the same day
    _culture(con, 2, 21, day2, h(26))  # subject 2: the timed culture only
    default = _soi(con, "suspicion-infection__timed_cultures_first")
    assert [(r["subject_id"], r["culture_time"], r["specimen"]) for r in default] == [
        (1, datetime(2150, 1, 2), "URINE"), (2, h(26), "BLOOD CULTURE")]
    con.close()
    keys, columns, _ = moved(db, "suspicion-infection__timed_cultures_first")
    assert keys == [{"subject_id": 1, "ab_id": 1}]
    assert columns == {"suspected_infection_time": 1, "culture_time": 1, "specimen": 1}


def test_cancelled_culture_is_positive_by_default_and_not_in_the_variant(template, tmp_path):
    db = tmp_path / "v.duckdb"
    con = fresh(template, db)
    for sid in (1, 2):
        stay(con, sid)
        _antibiotic(con, sid, h(5))
    _culture(con, 1, 11, h(4).date(), h(4), org="CANCELLED", org_itemid=90760)
    _culture(con, 2, 21, h(4).date(), h(4), org="ESCHERICHIA COLI", org_itemid=80002)
    default = _soi(con, "suspicion-infection__cancelled_not_positive")
    assert [r["positive_culture"] for r in default] == [1, 1]
    con.close()
    keys, columns, _ = moved(db, "suspicion-infection__cancelled_not_positive")
    assert keys == [{"subject_id": 1, "ab_id": 1}] and columns == {"positive_culture": 1}
