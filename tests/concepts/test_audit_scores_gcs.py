"""Audit of the first-day scores and GCS against their definitions, on hand-made patients.

Each case is computed by hand from the rule it checks (the rule is named in the test).
MIMIC stays start at T0 (fixtures2); eICU offsets are minutes from unit admission.
"""

from __future__ import annotations

import pytest

from tests.concepts.fixtures2 import by_key, fresh, h, insert, make_template, recompute, stay
from tests.concepts.score_cases import build, lab, same

MOTOR, VERBAL, EYES = 223901, 223900, 220739


def chart(con, stay_id: int, hours: float, itemid: int, valuenum: float, value: str | None = None) -> None:
    insert(con, "mimiciv_icu.chartevents", {
        "subject_id": stay_id, "hadm_id": stay_id, "stay_id": stay_id, "charttime": h(hours),
        "storetime": h(hours), "itemid": itemid, "value": value if value is not None else f"{valuenum:g}",
        "valuenum": valuenum,
    })


def gcs(con, stay_id: int, hours: float, motor=None, verbal=None, eyes=None) -> None:
    if motor is not None:
        chart(con, stay_id, hours, MOTOR, motor)
    if verbal == "ETT":  # intubated: charted as text, numeric 1 in MIMIC-IV
        chart(con, stay_id, hours, VERBAL, 1, "No Response-ETT")
    elif verbal is not None:
        chart(con, stay_id, hours, VERBAL, verbal)
    if eyes is not None:
        chart(con, stay_id, hours, EYES, eyes)


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return make_template(tmp_path_factory.mktemp("audit_c") / "template.duckdb")


@pytest.fixture(scope="module")
def mimic_gcs(template, tmp_path_factory):
    con = fresh(template, tmp_path_factory.mktemp("audit_gcs") / "g.duckdb")
    for sid in (1, 2, 3):
        stay(con, sid)
    # stay 1: intubated (15), verbal missing < 6 h after it (15), then a lone eye score
    # 7 h later (no carry: 6 + 5 + 2 = 13), then a lone motor 1 h later (4 + 5 + 2 = 11)
    gcs(con, 1, 1, motor=1, verbal="ETT", eyes=1)
    gcs(con, 1, 3, motor=1, eyes=1)
    gcs(con, 1, 10, eyes=2)
    gcs(con, 1, 11, motor=4)
    # stay 2: window -6 h .. +24 h, both ends included; tie on 13 goes to the earlier charting
    gcs(con, 2, -7, motor=1, verbal=1, eyes=1)
    gcs(con, 2, -6, motor=5, verbal=4, eyes=4)
    gcs(con, 2, 24, motor=6, verbal=3, eyes=4)
    gcs(con, 2, 24.1, motor=1, verbal=1, eyes=1)
    # stay 3: first charting after extubation does not reuse the intubated charting's scores
    gcs(con, 3, 1, motor=6, verbal="ETT", eyes=4)
    gcs(con, 3, 2, motor=5, verbal=4)
    recompute(con, "gcs", "first_day_gcs", "gcs-24h")
    out = {"rows": {sid: [(r[0], r[1], r[2]) for r in con.execute(
                "SELECT gcs, gcs_verbal, gcs_unable FROM mimiciv_derived.gcs WHERE stay_id = ? ORDER BY charttime",
                [sid]).fetchall()] for sid in (1, 2, 3)},
           "target": by_key(con, "mimiciv_derived.target_gcs_24h")}
    con.close()
    return out


def test_gcs_intubated_verbal_is_15_and_carries_under_6_hours(mimic_gcs):
    assert mimic_gcs["rows"][1] == [(15, 0, 1), (15, 0, 0), (13, None, 0), (11, None, 0)]


def test_gcs_first_day_minimum_with_components_of_that_charting(mimic_gcs):
    row = mimic_gcs["target"][1]
    # no verbal score at that charting: the task reference fills the normal 5 (M4Bench)
    assert (row["gcs_min"], row["gcs_motor"], row["gcs_verbal"], row["gcs_eyes"]) == (11, 4, 5, 2)


def test_gcs_window_ends_included_and_tie_goes_to_earlier_charting(mimic_gcs):
    row = mimic_gcs["target"][2]
    assert (row["gcs_min"], row["gcs_motor"], row["gcs_verbal"], row["gcs_eyes"]) == (13, 5, 4, 4)


def test_gcs_after_extubation_missing_eyes_default_normal(mimic_gcs):
    assert mimic_gcs["rows"][3] == [(15, 0, 1), (13, 4, 0)]


APS_CASES = {
    # ARF: creatinine 2.0 and urine 300 mL on an admission coded without ESRD -> ARF table: 10;
    # with N18.6 -> 7
    11: ({**lab(**same("creatinine", 2.0)), "uo": 300, "dx": [("4019", 9)]}, "creatinine_score", 10),
    12: ({**lab(**same("creatinine", 2.0)), "uo": 300, "dx": [("N186", 10)]}, "creatinine_score", 7),
    # an admission without any ICD code has no ESRD flag: mimic-code's "ckd = 0" is then false, no ARF -> 7
    17: ({**lab(**same("creatinine", 2.0)), "uo": 300}, "creatinine_score", 7),
    # intubated GCS: verbal not assessable, scored 0
    13: ({"gcs": {"gcs_min": 15, "gcs_motor": 1, "gcs_verbal": 0, "gcs_eyes": 1, "gcs_unable": 1}}, "gcs_score", 0),
    # eyes 1, verbal 1, motor 1 -> 48
    14: ({"gcs": {"gcs_min": 3, "gcs_motor": 1, "gcs_verbal": 1, "gcs_eyes": 1, "gcs_unable": 0}}, "gcs_score", 48),
    # the first-day temperature is scored as charted: 35.5 C -> 2 (variant apsiii-24h__axillary_plus_1
    # raises an axillary reading by 1 C)
    16: ({"vital": same("temperature", 35.5)}, "temp_score", 2),
}
OASIS_CASES = {
    # pre-ICU stay 10 min 30 s = 0.175 h >= 0.17 h -> 3; 10 min -> 5
    21: ({"admit_hours_before": 10.5 / 60}, "preiculos_score", 3),
    22: ({"admit_hours_before": 10 / 60}, "preiculos_score", 5),
}


@pytest.fixture(scope="module")
def mimic_scores(template, tmp_path_factory):
    con = fresh(template, tmp_path_factory.mktemp("audit_scores") / "s.duckdb")
    for sid, (spec, _, _) in {**APS_CASES, **OASIS_CASES}.items():
        build(con, sid, spec)
    recompute(con, "apsiii", "oasis")
    out = {"apsiii": by_key(con, "mimiciv_derived.apsiii"), "oasis": by_key(con, "mimiciv_derived.oasis")}
    con.close()
    return out


@pytest.mark.parametrize("sid", list(APS_CASES))
def test_apsiii_component(mimic_scores, sid):
    _, column, expected = APS_CASES[sid]
    assert mimic_scores["apsiii"][sid][column] == expected


@pytest.mark.parametrize("sid", list(OASIS_CASES))
def test_oasis_pre_icu_los(mimic_scores, sid):
    _, column, expected = OASIS_CASES[sid]
    assert mimic_scores["oasis"][sid][column] == expected


def test_eicu_oasis_set_apnea_tidal_volume_counts_as_ventilation(template, tmp_path_factory):
    con = fresh(template, tmp_path_factory.mktemp("audit_eicu") / "e.duckdb")
    for sid in (1, 2):
        insert(con, "eicu_crd.patient", {
            "patientunitstayid": sid, "patienthealthsystemstayid": sid + 100, "uniquepid": f"p-{sid}",
            "age": "60", "hospitaladmitoffset": -120, "unitadmitsource": "Emergency Department",
        })
    # a ventilator setting with no airway field charted: in the window (stay 1), after 24 h (stay 2)
    insert(con, "eicu_crd.respiratorycare", [
        {"respcareid": 1, "patientunitstayid": 1, "respcarestatusoffset": 60, "setapneatv": "500"},
        {"respcareid": 2, "patientunitstayid": 2, "respcarestatusoffset": 1500, "setapneatv": "500"},
    ])
    recompute(con, "eicu_derived.pivoted_gcs", "eicu_derived.gcs_first_day", "eicu_derived.oasis_first_day", "eicu-oasis")
    rows = by_key(con, "eicu_derived.target_eicu_oasis", "patientunitstayid")
    con.close()
    assert (rows[1]["mechvent_score"], rows[2]["mechvent_score"]) == (9, 0)


def test_first_day_height_mean_rounds_half_up_like_the_public_decimal_rounding(template, tmp_path_factory):
    con = fresh(template, tmp_path_factory.mktemp("audit_height") / "h.duckdb")
    stay(con, 1)
    insert(con, "mimiciv_derived.height", [
        {"subject_id": 1, "stay_id": 1, "charttime": h(1), "height": 150.00},
        {"subject_id": 1, "stay_id": 1, "charttime": h(2), "height": 150.01},
    ])
    recompute(con, "first_day_height")
    value = con.execute("SELECT height FROM mimiciv_derived.first_day_height WHERE stay_id = 1").fetchone()[0]
    con.close()
    assert value == 150.01  # (150.00 + 150.01) / 2 = 150.005 -> 150.01


def test_eicu_oasis_urine_counts_urinary_catheter_and_foley_cells_but_not_stool(template, tmp_path_factory):
    con = fresh(template, tmp_path_factory.mktemp("audit_eicu_uo") / "u.duckdb")
    for sid in (1, 2):
        insert(con, "eicu_crd.patient", {
            "patientunitstayid": sid, "patienthealthsystemstayid": sid + 100, "uniquepid": f"p-{sid}",
            "age": "60", "hospitaladmitoffset": -120, "unitadmitsource": "Emergency Department",
        })
    out = "flowsheet|Flowsheet Cell Labels|I&O|Output (ml)|"
    cells = [
        (1, "Urinary Catheter Output: Indwelling/Continuous Ure", 800.0),
        (1, "Foley", 700.0),
        (1, "Stool", 5000.0),
        (2, "Indwelling Foley", 500.0),
    ]
    insert(con, "eicu_crd.intakeoutput", [
        {"intakeoutputid": i, "patientunitstayid": sid, "intakeoutputoffset": 120, "cellpath": out + label,
         "celllabel": label, "cellvaluenumeric": value}
        for i, (sid, label, value) in enumerate(cells, start=1)
    ])
    recompute(con, "eicu_derived.pivoted_gcs", "eicu_derived.gcs_first_day", "eicu_derived.oasis_first_day", "eicu-oasis")
    rows = by_key(con, "eicu_derived.target_eicu_oasis", "patientunitstayid")
    con.close()
    # stay 1: 800 + 700 = 1500 mL (1427-2544.14) -> 1; stay 2: 500 mL (< 671.09) -> 10
    assert (rows[1]["urineoutput_score"], rows[2]["urineoutput_score"]) == (1, 10)
