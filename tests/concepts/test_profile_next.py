"""The mimic-code-next profile: each open upstream correction, on hand-made patients, moves exactly
the rows it should and no other (the same database built with mimic-code, then mimic-code-next)."""

from __future__ import annotations

import pytest

from tests.concepts.conftest import chart

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)

_order = iter(range(1, 10**6))


def _infusion(hand, itemid, start, end, rate, rateuom="mcg/kg/min", stay=100, weight=80.0):
    order = next(_order)
    hand.insert("mimiciv_icu.inputevents",
                dict(subject_id=stay // 100, hadm_id=stay // 10, stay_id=stay, starttime=start, endtime=end, itemid=itemid,
                     amount=1.0, amountuom="mg", rate=rate, rateuom=rateuom, orderid=order, linkorderid=order,
                     patientweight=weight))


def _moved(before: list[dict], after: list[dict], key: str) -> dict:
    """key -> (before, after) of every row that differs, columns that differ only."""
    old, new = {r[key]: r for r in before}, {r[key]: r for r in after}
    assert old.keys() == new.keys()
    out = {}
    for k in old:
        diff = {c: (old[k][c], new[k][c]) for c in old[k] if old[k][c] != new[k][c]}
        if diff:
            out[k] = diff
    return out


def test_sofa_a_zero_norepinephrine_rate_no_longer_scores_cardiovascular_3(hand):
    # PR #2124: stay 100 runs norepinephrine at 0 (paused), stay 200 at 0.05; both MAP 80
    for stay in (100, 200):
        hand.add_stay(subject=stay // 100, hadm=stay // 10, stay=stay)
        chart(hand, 220052, "2150-01-01 11:00:00", 80.0, subject=stay // 100, hadm=stay // 10, stay=stay)
    _infusion(hand, 221906, "2150-01-01 11:00", "2150-01-01 12:00", 0.0, stay=100)
    _infusion(hand, 221906, "2150-01-01 11:00", "2150-01-01 12:00", 0.05, stay=200)
    before, after = hand.both("first_day_sofa", "stay_id")
    assert {r["stay_id"]: r["cardiovascular"] for r in before} == {100: 3, 200: 3}
    assert _moved(before, after, "stay_id") == {100: {"cardiovascular": (3, 0), "sofa": (3, 0)}}


def test_phenylephrine_infusions_of_every_bag_concentration_are_read(hand):
    # issue #2159: 229630 (50/250), 229631 (200/250)_OLD_1, 229632 (200/250); 229789 (intubation push) is not an infusion
    hand.add_stay()
    for hour, itemid in enumerate((221749, 229630, 229631, 229632, 229789)):
        _infusion(hand, itemid, f"2150-01-01 1{hour}:00", f"2150-01-01 1{hour}:30", 1.0 + hour)
    before, after = hand.both("phenylephrine", "starttime")
    assert [r["vaso_rate"] for r in before] == [1.0]
    assert [r["vaso_rate"] for r in after] == [1.0, 2.0, 3.0, 4.0]


def test_charlson_icd10_cm_neuroendocrine_and_merkel_codes(hand):
    # PR #2043: one admission per code, each patient 60 (age score 2) with no other diagnosis
    codes = {10: "C4A1", 20: "C7A00", 30: "C7B00", 40: "C50911"}  # Merkel, neuroendocrine, secondary NET, breast
    for hadm, code in codes.items():
        hand.add_stay(subject=hadm, hadm=hadm, stay=hadm * 10)
        hand.insert("mimiciv_hosp.diagnoses_icd", dict(subject_id=hadm, hadm_id=hadm, seq_num=1, icd_code=code, icd_version=10))
    before, after = hand.both("charlson", "hadm_id")
    assert {r["hadm_id"]: r["age_score"] for r in before} == {10: 2, 20: 2, 30: 2, 40: 2}
    assert _moved(before, after, "hadm_id") == {
        10: {"malignant_cancer": (1, 0), "charlson_comorbidity_index": (4, 2)},  # skin malignancy: out (Quan)
        20: {"malignant_cancer": (0, 1), "charlson_comorbidity_index": (2, 4)},  # malignant neuroendocrine: in
        30: {"metastatic_solid_tumor": (0, 1), "charlson_comorbidity_index": (2, 8)},  # secondary: metastatic
    }  # 40, breast cancer: malignant under both


def test_sirs_wbc_guard_moves_no_row_built_from_labs_and_scores_a_lone_normal_wbc_max_0(hand):
    # PR #2146: stay 100 has a normal WBC, stay 200 none; built from labs, wbc_min and wbc_max are NULL together
    from clinbench.concepts.catalog import load_concepts
    from tests.concepts.conftest import lab

    for stay in (100, 200):
        hand.add_stay(subject=stay // 100, hadm=stay // 10, stay=stay)
    lab(hand, 1, 51301, "2150-01-01 11:00:00", 8.0)
    before, after = hand.both("sirs", "stay_id")
    assert {r["stay_id"]: r["wbc_score"] for r in before} == {100: 0, 200: None}
    assert _moved(before, after, "stay_id") == {}
    # a first-day row with only wbc_max (what the PR guards against), scored by each profile's SQL
    import duckdb

    with duckdb.connect(str(hand.path)) as con:
        con.execute("UPDATE mimiciv_derived.first_day_lab SET wbc_min = NULL WHERE stay_id = 100")
        scores = {}
        for profile in ("mimic-code", "mimic-code-next"):
            sql = load_concepts(profile=profile)["mimiciv_derived.sirs"].sql.rstrip().rstrip(";")
            scores[profile] = con.execute(f"SELECT wbc_score FROM ({sql}) WHERE stay_id = 100").fetchone()[0]
    assert scores == {"mimic-code": None, "mimic-code-next": 0}


def test_urine_output_rate_windows_count_elapsed_hours_not_hour_boundaries(hand):
    # issue #1549: chartings at 09:10 and 14:50 are 5 hour boundaries apart (in the 6 h sum of
    # mimic-code) but 5 h 40 min (out of it here); heart rate from 08:00 starts the first gap
    hand.add_stay(intime="2150-01-01 08:00:00")
    chart(hand, 220045, "2150-01-01 08:00:00", 80.0)
    chart(hand, 220045, "2150-01-02 08:00:00", 80.0)
    for time, ml in (("2150-01-01 09:10:00", 100.0), ("2150-01-01 14:50:00", 50.0)):
        hand.insert("mimiciv_icu.outputevents", dict(subject_id=1, hadm_id=10, stay_id=100, charttime=time, itemid=226559,
                                                     value=ml, valueuom="ml"))
    before, after = hand.both("urine_output_rate", "charttime")
    assert [(r["urineoutput_6hr"], r["uo_tm_6hr"]) for r in before] == [(100.0, pytest.approx(70 / 60, abs=0.005)),
                                                                         (150.0, pytest.approx(410 / 60, abs=0.005))]
    moved = _moved(before, after, "charttime")
    assert list(moved) == [after[1]["charttime"]]  # only the 14:50 row
    assert moved[after[1]["charttime"]]["urineoutput_6hr"] == (150.0, 50.0)
    assert after[1]["uo_tm_6hr"] == pytest.approx(340 / 60, abs=0.005)  # its own gap only: 5 h 40 min
