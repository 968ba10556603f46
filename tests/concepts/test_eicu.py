"""eICU first-day GCS and OASIS on hand-made unit stays (offsets in minutes from unit admission)."""

from __future__ import annotations

import pytest

from tests.concepts.fixtures2 import by_key, fresh, insert, make_template, recompute

EICU = ("eicu_derived.pivoted_gcs", "eicu_derived.gcs_first_day", "eicu_derived.oasis_first_day",
        "eicu-gcs", "eicu-oasis")


def unit_stay(con, sid: int, *, age: str = "60", hospitaladmitoffset: int = -120, source: str = "Emergency Department") -> None:
    insert(con, "eicu_crd.patient", {
        "patientunitstayid": sid, "patienthealthsystemstayid": sid + 1000, "uniquepid": f"p-{sid}",
        "age": age, "hospitaladmitoffset": hospitaladmitoffset, "unitadmitsource": source,
    })


def gcs_chart(con, sid: int, offset: int, cat: str = "Scores", **values: str) -> None:
    names = {"total": ("Glasgow coma score", "GCS Total"), "motor": ("Glasgow coma score", "Motor"),
             "verbal": ("Glasgow coma score", "Verbal"), "eyes": ("Glasgow coma score", "Eyes"),
             "value": ("Score (Glasgow Coma Scale)", "Value")}
    for key, value in values.items():
        label, name = names[key]
        insert(con, "eicu_crd.nursecharting", {
            "patientunitstayid": sid, "nursingchartoffset": offset, "nursingchartentryoffset": offset,
            "nursingchartcelltypecat": cat, "nursingchartcelltypevallabel": label,
            "nursingchartcelltypevalname": name, "nursingchartvalue": value,
        })


def vital_chart(con, sid: int, offset: int, **values: float) -> None:
    """Vital signs as nurses chart them (the source of the eicu-oasis reference)."""
    names = {"heartrate": ("Heart Rate", "Heart Rate"), "respiration": ("Respiratory Rate", "Respiratory Rate"),
             "temperature": ("Temperature", "Temperature (C)"), "ibp_mean": ("Invasive BP", "Invasive BP Mean"),
             "nibp_mean": ("Non-Invasive BP", "Non-Invasive BP Mean")}
    for key, value in values.items():
        label, name = names[key]
        insert(con, "eicu_crd.nursecharting", {
            "patientunitstayid": sid, "nursingchartoffset": offset, "nursingchartentryoffset": offset,
            "nursingchartcelltypecat": "Vital Signs", "nursingchartcelltypevallabel": label,
            "nursingchartcelltypevalname": name, "nursingchartvalue": str(value),
        })


@pytest.fixture(scope="module")
def eicu(tmp_path_factory):
    folder = tmp_path_factory.mktemp("eicu")
    con = fresh(make_template(folder / "t.duckdb"), folder / "e.duckdb")
    for sid in range(1, 13):
        unit_stay(con, sid)
    gcs_chart(con, 1, 60, total="9", motor="5", verbal="2", eyes="2")
    gcs_chart(con, 1, 120, total="12")
    gcs_chart(con, 2, 60, motor="4")                                   # total from components, others normal: 4+5+4
    gcs_chart(con, 3, -360, total="8")                                 # window starts at -6 h (inclusive)
    gcs_chart(con, 3, -361, total="3")                                 # just outside
    gcs_chart(con, 4, 1441, total="3")                                 # after 24 h: no GCS -> 15
    gcs_chart(con, 5, 30, total="7")
    gcs_chart(con, 5, 20, total="7", motor="4", verbal="1", eyes="2")  # tie on 7: the earlier chart wins
    gcs_chart(con, 6, 30, total="18", motor="6", verbal="1", eyes="1")  # total out of range: use components = 8
    gcs_chart(con, 7, 30, value="13")                                  # the 'Score (Glasgow Coma Scale)' label
    gcs_chart(con, 11, 30, cat="Neurologic", total="3")               # not a Scores / vital-signs chart: ignored
    # OASIS inputs
    vital_chart(con, 8, 60, heartrate=130, respiration=46, temperature=40.0, ibp_mean=145)
    vital_chart(con, 8, 2000, heartrate=30)  # after 24 h: ignored
    vital_chart(con, 9, 60, heartrate=70, respiration=16, temperature=36.6, nibp_mean=80)
    vital_chart(con, 12, -60, heartrate=130)  # before unit admission: the reference reads (0, 1440] only
    vital_chart(con, 12, 0, heartrate=130)
    insert(con, "eicu_crd.intakeoutput", [
        {"patientunitstayid": 8, "intakeoutputoffset": 120, "cellpath": "flowsheet|Flowsheet Cell Labels|I&O|Output (ml)|Urine", "celllabel": "Urine", "cellvaluenumeric": 500.0},
        {"patientunitstayid": 9, "intakeoutputoffset": 120, "cellpath": "flowsheet|Flowsheet Cell Labels|I&O|Output (ml)|Urine", "celllabel": "Urine", "cellvaluenumeric": 3000.0},
    ])
    insert(con, "eicu_crd.apacheapsvar", {"patientunitstayid": 8, "intubated": 1, "urine": -1.0})
    insert(con, "eicu_crd.apachepredvar", [{"patientunitstayid": 9, "electivesurgery": 1, "oobintubday1": 0}])
    con.execute("UPDATE eicu_crd.patient SET age = '> 89', hospitaladmitoffset = -5 WHERE patientunitstayid = 8")
    con.execute("UPDATE eicu_crd.patient SET age = '30', hospitaladmitoffset = -600, unitadmitsource = 'Operating Room' WHERE patientunitstayid = 9")
    recompute(con, *EICU)
    out = {"gcs": by_key(con, "eicu_derived.target_eicu_gcs", "patientunitstayid"),
           "oasis": by_key(con, "eicu_derived.target_eicu_oasis", "patientunitstayid")}
    con.close()
    return out


@pytest.mark.parametrize(("sid", "expected"), [
    # a charted total without components reports them normal (6/5/4), as M4Bench's gcs.sql
    (1, (9, 5, 2, 2)), (2, (13, 4, 5, 4)), (3, (8, 6, 5, 4)), (4, (15, 6, 5, 4)),
    (5, (7, 4, 1, 2)), (6, (8, 6, 1, 1)), (7, (13, 6, 5, 4)), (10, (15, 6, 5, 4)), (11, (15, 6, 5, 4)),
])
def test_eicu_gcs_rules(eicu, sid, expected):
    row = eicu["gcs"][sid]
    assert (row["gcs_min"], row["gcs_motor"], row["gcs_verbal"], row["gcs_eyes"]) == expected


def test_eicu_gcs_columns(eicu):
    assert list(eicu["gcs"][1]) == ["patientunitstayid", "uniquepid", "patienthealthsystemstayid", "gcs_min", "gcs_motor", "gcs_verbal", "gcs_eyes"]
    assert len(eicu["gcs"]) == 12


def test_eicu_oasis_sick_patient(eicu):
    row = eicu["oasis"][8]
    # pre-ICU 5 min -> 5; age > 89 -> 7; GCS none -> 15 -> 0; HR 130 -> 6; MAP 145 -> 3; RR 46 -> 9;
    # temp 40 -> 6; urine 500 -> 10; intubated -> 9; from the ED -> 6
    expected = {"preiculos_score": 5, "age_score": 7, "gcs_score": 0, "heart_rate_score": 6, "mbp_score": 3,
                "resp_rate_score": 9, "temp_score": 6, "urineoutput_score": 10, "mechvent_score": 9,
                "electivesurgery_score": 6}
    assert {k: row[k] for k in expected} == expected
    assert row["oasis"] == sum(expected.values())


def test_eicu_oasis_elective_patient(eicu):
    row = eicu["oasis"][9]
    # pre-ICU 600 min -> 0; age 30 -> 3; normal vitals; urine 3000 -> 0; elective surgery from the OR -> 0
    assert row["oasis"] == 3
    assert row["electivesurgery_score"] == 0 and row["preiculos_score"] == 0


def test_eicu_oasis_missing_data_scores_normal(eicu):
    row = eicu["oasis"][10]
    # only pre-ICU LOS (120 min -> 3), age 60 -> 6 and non-elective admission (6) score
    assert (row["oasis"], row["heart_rate_score"], row["urineoutput_score"], row["mechvent_score"]) == (15, 0, 0, 0)


def test_eicu_oasis_reads_vitals_after_unit_admission_only(eicu):
    assert eicu["oasis"][12]["heart_rate_score"] == 0
