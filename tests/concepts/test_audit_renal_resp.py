"""Audit of the renal and respiratory concepts against mimic-code's conventions.

Hand-made patients sit exactly on the thresholds where our SQL and the public concept could
part ways; every expected value is worked out by hand in the comments.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from tests.concepts.fixtures2 import by_key, fresh, h, insert, make_template, recompute, rows, stay


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_template(tmp_path_factory.mktemp("audit_rr") / "template.duckdb")


@pytest.fixture()
def con(template: Path, tmp_path: Path):
    c = fresh(template, tmp_path / "a.duckdb")
    yield c
    c.close()


@pytest.mark.parametrize("gap_minutes", [6, 20, 4, 15, 10])
def test_kdigo_uo_six_covered_hours_made_of_short_gaps_count_as_six(con, gap_minutes):
    # 70 kg; urine charted at hour 2 (first chart: its gap counts as 1 h), then every
    # `gap_minutes` up to hour 7. At hour 7 the 6 h window (hour 1 to 7, both ends) holds every
    # chart: covered time = 1 + 5 h of short gaps = exactly 6 h, so the 6 h rate exists
    # (1 mL per chart -> far below 0.5 mL/kg/h) and, past the first 6 ICU hours, stage 1.
    # Summed in binary floating point the short gaps can come to 5.99999999 h; the public
    # concept rounds covered hours to 6 places before the ">= 6 h" test.
    stay(con, 41, hours=96)
    insert(con, "mimiciv_derived.weight_durations", {"stay_id": 41, "starttime": h(-1), "endtime": h(96), "weight": 70.0})
    t = h(2)
    while t <= h(7):
        insert(con, "mimiciv_derived.urine_output", {"stay_id": 41, "charttime": t, "urineoutput": 1.0})
        t += timedelta(minutes=gap_minutes)
    recompute(con, "kdigo_uo", "kdigo_stages")
    got = rows(con, f"SELECT u.uo_tm_6hr, u.uo_rt_6hr, k.aki_stage_uo FROM mimiciv_derived.kdigo_uo u "
                    f"JOIN mimiciv_derived.kdigo_stages k USING (stay_id, charttime) WHERE stay_id = 41 AND charttime = TIMESTAMP '{h(7)}'")
    n = 5 * 60 // gap_minutes + 1  # charts from hour 2 to hour 7
    assert got[0]["uo_rt_6hr"] == round(n / 70 / 6, 4)
    assert got[0]["aki_stage_uo"] == 1


# MELD-Na on hand-made first-day labs (stay: creatinine, bilirubin, INR, sodium, RRT hour).
# MELD(i) = 10 x round(0.957 ln Cr + 0.378 ln Bili + 1.120 ln INR + 0.643, 1), labs < 1 -> 1,
# Cr > 4 or RRT -> 4, sum > 4 -> 40; Na bounded to 125-137 and applied only when MELD(i) > 11.
MELD_CASES = {
    # nothing measured: 10 x round(0.643, 1) = 6
    51: ((None, None, None, None, None), 6.0),
    # 0.66334 + 0.41528 + 0.45412 + 0.643 = 2.1757 -> 22; Na 130: 22 + 1.32*7 - 0.033*22*7
    52: ((2.0, 3.0, 1.5, 130.0, None), 22 + 1.32 * 7 - 0.033 * 22 * 7),
    # 0.44979 + 0.643 = 1.0928 -> 11: not > 11, so Na 120 changes nothing
    53: ((1.6, None, None, 120.0, None), 11.0),
    # 0.50781 + 0.643 = 1.1508 -> 12; Na 120 counts as 125: 12 + 1.32*12 - 0.033*12*12
    54: ((1.7, None, None, 120.0, None), 12 + 1.32 * 12 - 0.033 * 12 * 12),
    # RRT at hour 3 sets Cr to 4: 1.32669 + 0.643 = 1.9697 -> 20; Na 140 counts as 137
    55: ((0.8, None, None, 140.0, 3), 20.0),
    # every lab below 1 counts as 1
    56: ((0.5, 0.3, 0.9, 137.0, None), 6.0),
    # sum 5.06 > 4 -> 40; at 40 the sodium term cancels (1.32 = 0.033 x 40)
    57: ((10.0, 30.0, 5.0, 125.0, None), 40.0),
    # RRT 25 h after admission is outside the first day: Cr 0.8 -> 1 -> 6
    58: ((0.8, None, None, None, 25), 6.0),
}


def test_meld_na_hand_computed(con):
    for stay_id, ((cr, bili, inr, na, rrt_hour), _) in MELD_CASES.items():
        stay(con, stay_id)
        insert(con, "mimiciv_derived.first_day_lab", {"subject_id": stay_id, "stay_id": stay_id, "creatinine_max": cr,
                                                      "bilirubin_total_max": bili, "inr_max": inr, "sodium_min": na})
        if rrt_hour is not None:
            insert(con, "mimiciv_derived.rrt", {"stay_id": stay_id, "charttime": h(rrt_hour), "dialysis_present": 1})
    recompute(con, "meld", "meld-24h")
    got = by_key(con, "mimiciv_derived.target_meld_24h")
    assert {s: round(got[s]["meld"], 6) for s in MELD_CASES} == {s: round(v, 6) for s, (_, v) in MELD_CASES.items()}
