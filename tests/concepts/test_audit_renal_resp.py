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
