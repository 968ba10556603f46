"""KDIGO and MELD on hand-made patients: every value below is computed by hand in the comments."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.concepts.fixtures2 import by_key, fresh, h, insert, make_template, recompute, rows, stay

KDIGO = ("kdigo_creatinine", "kdigo_uo", "kdigo_stages", "kdigo-48h")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_template(tmp_path_factory.mktemp("organ") / "template.duckdb")


def creat(con, subject_id: int, hours: float, value: float) -> None:
    insert(con, "mimiciv_hosp.labevents", {"subject_id": subject_id, "hadm_id": subject_id, "itemid": 50912, "charttime": h(hours), "valuenum": value})


def stage_at(con, stay_id: int, hours: float, column: str = "aki_stage_creat"):
    found = rows(con, f"SELECT {column} FROM mimiciv_derived.kdigo_stages WHERE stay_id = {stay_id} AND charttime = TIMESTAMP '{h(hours)}'")
    assert len(found) == 1
    return found[0][column]


@pytest.fixture(scope="module")
def kdigo_db(template: Path, tmp_path_factory: pytest.TempPathFactory):
    con = fresh(template, tmp_path_factory.mktemp("kdigo") / "k.duckdb")
    # creatinine series (stay id: series of (hour, mg/dL))
    series = {
        1: [(0, 1.0), (10, 1.3)],                  # +0.3 in 48 h -> 1
        # binary floating point, as mimic-code: 1.1 + 0.3 = 1.4000000000000001 > 1.4 -> 0
        2: [(0, 1.1), (10, 1.4)],
        # 0.8 x 1.5 = 1.2000000000000002 > 1.2, no 48 h value -> 0 (variant kdigo-48h__creatinine_rounding: 1)
        3: [(-100, 0.8), (10, 1.2)],
        4: [(-100, 1.0), (10, 1.9)],               # 1.9x -> 1
        5: [(-100, 1.0), (10, 2.0)],               # 2x -> 2
        6: [(-100, 1.0), (10, 3.0)],               # 3x -> 3
        7: [(0, 3.7), (10, 4.0)],                  # >= 4.0 after a 48 h low <= 3.7 -> 3
        8: [(0, 3.8), (10, 4.1)],                  # >= 4.0 and 3.8 + 0.3 = 4.1 <= 4.1: acute rise -> 3
        9: [(0, 1.0), (48, 1.3)],                  # the 48 h window includes exactly 48 h -> 1
        10: [(0, 1.0), (48 + 1 / 60, 1.29)],        # 48 h + 1 min later, and < 1.5x -> 0
        11: [(0, 1.0), (10, 1.29)],                # +0.29 -> 0
        # demo stay 32119961: 6.6 -> 7.2 is >= 4.0 after a rise >= 0.3 over the 48 h low, whatever
        # that low is -> 3 (6.6 + 0.3 = 6.8999999999999995 <= 7.2)
        12: [(0, 6.6), (10, 7.2)],
    }
    for stay_id, values in series.items():
        stay(con, stay_id, hours=96)
        for hours, value in values:
            creat(con, stay_id, hours, value)
    # urine output: 70 kg, hourly charts from hour 1
    uo_rates = {
        21: [34.3] * 8 + [100.0] * 22,  # 0.49 mL/kg/h for 8 h -> 1
        22: [35.0] * 30,                # exactly 0.5 -> 0
        23: [34.3] * 30,                # < 0.5 for >= 12 h -> 2
        24: [20.0] * 30,                # 0.286 < 0.3 for 24 h -> 3 (only once 24 h are covered)
        25: [0.0] * 13 + [100.0] * 17,  # anuria for 12 h -> 3
    }
    for stay_id, volumes in uo_rates.items():
        stay(con, stay_id, hours=96)
        insert(con, "mimiciv_derived.weight_durations", {"stay_id": stay_id, "starttime": h(-1), "endtime": h(96), "weight": 70.0})
        for i, volume in enumerate(volumes, start=1):
            insert(con, "mimiciv_derived.urine_output", {"stay_id": stay_id, "charttime": h(i), "urineoutput": volume})
    # CRRT charted at hour 30 -> 3; at hour 50 (after 48 h) the target ignores it
    stay(con, 31, hours=96)
    insert(con, "mimiciv_derived.crrt", {"stay_id": 31, "charttime": h(30), "crrt_mode": "CVVHDF"})
    stay(con, 32, hours=96)
    insert(con, "mimiciv_derived.crrt", {"stay_id": 32, "charttime": h(50), "crrt_mode": "CVVHDF"})
    stay(con, 33, hours=96)  # no data at all -> 0 everywhere
    # CRRT charted twice at hour 2, beside urine output at hours 1 and 2, and once without a time
    stay(con, 34, hours=96)
    insert(con, "mimiciv_derived.weight_durations", {"stay_id": 34, "starttime": h(-1), "endtime": h(96), "weight": 70.0})
    for i in (1, 2):
        insert(con, "mimiciv_derived.urine_output", {"stay_id": 34, "charttime": h(i), "urineoutput": 100.0})
    for when in (h(2), h(2), None):
        insert(con, "mimiciv_derived.crrt", {"stay_id": 34, "charttime": when, "crrt_mode": "CVVHDF"})
    recompute(con, *KDIGO)
    yield con
    con.close()


@pytest.mark.parametrize(("stay_id", "hours", "expected"), [
    (1, 10, 1), (2, 10, 0), (3, 10, 0), (4, 10, 1), (5, 10, 2), (6, 10, 3), (7, 10, 3), (8, 10, 3),
    (9, 48, 1), (10, 48 + 1 / 60, 0), (11, 10, 0), (12, 10, 3),
])
def test_creatinine_stage_boundaries(kdigo_db, stay_id, hours, expected):
    assert stage_at(kdigo_db, stay_id, hours) == expected


def test_creatinine_references_are_the_48h_and_7day_lows(kdigo_db):
    got = rows(kdigo_db, f"SELECT creat_low_past_48hr, creat_low_past_7day FROM mimiciv_derived.kdigo_creatinine WHERE stay_id = 3 AND charttime = TIMESTAMP '{h(10)}'")
    assert got == [{"creat_low_past_48hr": None, "creat_low_past_7day": 0.8}]


def test_urine_output_stages(kdigo_db):
    target = by_key(kdigo_db, "mimiciv_derived.target_kdigo_48h")
    assert {s: target[s]["aki_stage_uo"] for s in (21, 22, 23, 24, 25)} == {21: 1, 22: 0, 23: 2, 24: 3, 25: 3}


def test_oliguria_stage_3_needs_24_covered_hours(kdigo_db):
    # at hour 23 the 24 h window covers 23 charts (23 h): only the 12 h rule applies
    assert stage_at(kdigo_db, 24, 23, "aki_stage_uo") == 2
    assert stage_at(kdigo_db, 24, 24, "aki_stage_uo") == 3


def test_urine_rate_is_volume_over_weight_over_covered_hours(kdigo_db):
    got = rows(kdigo_db, f"SELECT uo_rt_6hr, uo_tm_6hr, uo_rt_12hr FROM mimiciv_derived.kdigo_uo WHERE stay_id = 21 AND charttime = TIMESTAMP '{h(8)}'")
    # charts at hours 2..8 (7 charts, 7 h covered), 34.3 mL each: 240.1 / 70 / 7 = 0.49 (DECIMAL, as mimic-code)
    assert [{k: None if v is None else float(v) for k, v in r.items()} for r in got] == [{"uo_rt_6hr": 0.49, "uo_tm_6hr": 7.0, "uo_rt_12hr": None}]


def test_first_six_icu_hours_do_not_stage_urine(kdigo_db):
    assert stage_at(kdigo_db, 23, 6, "aki_stage_uo") == 0


def test_crrt_is_stage_3_within_48h_only(kdigo_db):
    target = by_key(kdigo_db, "mimiciv_derived.target_kdigo_48h")
    assert (target[31]["aki_stage_crrt"], target[31]["aki_stage"]) == (3, 3)
    assert (target[32]["aki_stage_crrt"], target[32]["aki_stage"]) == (0, 0)


def test_kdigo_target_rows_columns_and_missing_as_zero(kdigo_db):
    got = rows(kdigo_db, "SELECT * FROM mimiciv_derived.target_kdigo_48h ORDER BY stay_id")
    assert list(got[0]) == ["subject_id", "hadm_id", "stay_id", "aki_stage", "aki_stage_creat", "aki_stage_uo", "aki_stage_crrt"]
    assert len(got) == 21  # one row per stay: 12 creatinine, 5 urine, 4 CRRT or empty stays
    none = next(r for r in got if r["stay_id"] == 33)
    assert (none["aki_stage"], none["aki_stage_creat"], none["aki_stage_uo"], none["aki_stage_crrt"]) == (0, 0, 0, 0)
    # the overall stage is the worst of the three criteria
    assert all(r["aki_stage"] == max(r["aki_stage_creat"], r["aki_stage_uo"], r["aki_stage_crrt"]) for r in got)


def test_smoothed_stage_holds_the_worst_stage_for_six_hours(kdigo_db):
    got = rows(kdigo_db, "SELECT charttime, aki_stage, aki_stage_smoothed FROM mimiciv_derived.kdigo_stages WHERE stay_id = 25 ORDER BY charttime")
    by_time = {r["charttime"]: r for r in got}
    # anuria reaches stage 3 at hour 12; urine resumes at hour 14, stage drops later but smoothing keeps 3 for 6 h
    assert by_time[h(12)]["aki_stage"] == 3
    last3 = max(t for t, r in by_time.items() if r["aki_stage"] == 3)
    assert by_time[last3 + (h(6) - h(0))]["aki_stage_smoothed"] == 3
    assert by_time[last3 + (h(7) - h(0))]["aki_stage_smoothed"] < 3


# ---------------------------------------------------------------- MELD

MELD_CASES = {
    # stay: (creatinine, bilirubin, inr, sodium, rrt)
    41: (None, None, None, None, 0),     # all missing = 1.0: 0.643 -> round 0.6 -> 6
    42: (2.0, 3.0, 1.5, 130.0, 0),       # 0.66335 + 0.41528 + 0.45412 + 0.643 = 2.176 -> 22, Na 130
    43: (1.0, 0.5, 0.8, 140.0, 1),       # RRT: creatinine 4.0 -> 0.957 ln 4 + 0.643 = 1.970 -> 20; Na > 137
    44: (10.0, 30.0, 5.0, 120.0, 0),     # sum > 4 -> MELD(i) 40; Na floored at 125
    45: (10.0, 1.0, 1.0, 125.0, 0),      # creatinine capped at 4.0 -> 20; Na 125
}


def test_meld_na_by_hand(template, tmp_path):
    con = fresh(template, tmp_path / "meld.duckdb")
    for stay_id, (cr, bili, inr, na, rrt) in MELD_CASES.items():
        stay(con, stay_id)
        insert(con, "mimiciv_derived.first_day_lab", {"stay_id": stay_id, "creatinine_max": cr, "bilirubin_total_max": bili, "inr_max": inr, "sodium_min": na})
        if rrt:
            insert(con, "mimiciv_derived.rrt", {"stay_id": stay_id, "charttime": h(2), "dialysis_present": 1, "dialysis_active": 1})
    recompute(con, "first_day_rrt", "meld", "meld-24h")
    got = {s: r["meld"] for s, r in by_key(con, "mimiciv_derived.target_meld_24h").items()}
    # meld.rrt is first_day_rrt.dialysis_present: 1 when documented, NULL (not 0) when nothing was
    assert {s: r["rrt"] for s, r in by_key(con, "mimiciv_derived.meld").items()} == {41: None, 42: None, 43: 1, 44: None, 45: None}
    assert got[41] == pytest.approx(6.0)
    assert got[42] == pytest.approx(22 + 1.32 * 7 - 0.033 * 22 * 7)
    assert got[43] == pytest.approx(20.0)
    assert got[44] == pytest.approx(40.0)  # 40 + 1.32*12 - 0.033*40*12 = 40
    assert got[45] == pytest.approx(20 + 1.32 * 12 - 0.033 * 20 * 12)
    con.close()


def test_meld_rrt_outside_first_day_does_not_count(template, tmp_path):
    con = fresh(template, tmp_path / "meld2.duckdb")
    stay(con, 46)
    insert(con, "mimiciv_derived.first_day_lab", {"stay_id": 46, "creatinine_max": 1.0})
    insert(con, "mimiciv_derived.rrt", {"stay_id": 46, "charttime": h(30), "dialysis_present": 1})
    recompute(con, "first_day_rrt", "meld", "meld-24h")
    assert rows(con, "SELECT meld FROM mimiciv_derived.target_meld_24h") == [{"meld": pytest.approx(6.0)}]
    con.close()


def test_a_stay_without_creatinine_keeps_one_empty_row_as_mimic_code(kdigo_db):
    # stay 21 has urine output only; mimic-code's LEFT JOIN gives it one all-NULL creatinine row,
    # and kdigo_stages carries it (a synthetic stress database found 5 such stays missing)
    creat_rows = rows(kdigo_db, "SELECT charttime, creat, creat_low_past_48hr FROM mimiciv_derived.kdigo_creatinine WHERE stay_id IN (21, 33) ORDER BY stay_id")
    assert creat_rows == [{"charttime": None, "creat": None, "creat_low_past_48hr": None}] * 2
    assert rows(kdigo_db, "SELECT count(*) AS n FROM mimiciv_derived.kdigo_stages WHERE stay_id = 33") == [{"n": 1}]


def test_rows_charted_twice_at_one_time_repeat_and_untimed_rows_are_one_empty_row(kdigo_db):
    # mimic-code joins the distinct (stay, time) pairs of the three sources to each source: the urine
    # output at hour 2 pairs with both CRRT rows of hour 2 (two rows), and every untimed source row of the
    # stay (the CRRT row, and kdigo_creatinine's all-NULL row of a stay without creatinine) is one row
    # (the smoothed stage of the untimed row is the worst of the subject's untimed rows: 0; hour 1
    # precedes the CRRT: 0)
    got = rows(kdigo_db, "SELECT charttime, aki_stage_crrt, aki_stage, aki_stage_smoothed AS smoothed "
                         "FROM mimiciv_derived.kdigo_stages WHERE stay_id = 34 ORDER BY charttime NULLS FIRST")
    assert got == [{"charttime": None, "aki_stage_crrt": None, "aki_stage": 0, "smoothed": 0},
                   {"charttime": h(1), "aki_stage_crrt": None, "aki_stage": 0, "smoothed": 0},
                   {"charttime": h(2), "aki_stage_crrt": 3, "aki_stage": 3, "smoothed": 3},
                   {"charttime": h(2), "aki_stage_crrt": 3, "aki_stage": 3, "smoothed": 3}]
