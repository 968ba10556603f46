"""Hand-made first-day patients for the score tests: each case is one ICU stay built from a spec.

A spec names what is charted for the stay (first-day aggregates, blood gases, ventilation,
infusions, diagnoses, services); ``build`` turns it into rows. Stays without a value for a
component leave it unmeasured.
"""

from __future__ import annotations

import duckdb

from tests.concepts.fixtures2 import h, insert, stay

FIRST_DAY = {
    "lab": "mimiciv_derived.first_day_lab",
    "vital": "mimiciv_derived.first_day_vitalsign",
    "gcs": "mimiciv_derived.first_day_gcs",
    "bgart": "mimiciv_derived.first_day_bg_art",
}
INFUSIONS = {"nor": "norepinephrine", "epi": "epinephrine", "dop": "dopamine", "dob": "dobutamine", "vasopressin": "vasopressin"}


def build(con: duckdb.DuckDBPyConnection, stay_id: int, spec: dict) -> None:
    stay(con, stay_id, age=spec.get("age", 60), admission_type=spec.get("admission_type", "EW EMER."),
         admit_hours_before=spec.get("admit_hours_before", 2))
    for key, table in FIRST_DAY.items():
        if key in spec:
            insert(con, table, {"subject_id": stay_id, "stay_id": stay_id, **spec[key]})
    if "uo" in spec:
        insert(con, "mimiciv_derived.first_day_urine_output", {"subject_id": stay_id, "stay_id": stay_id, "urineoutput": spec["uo"]})
    for row in spec.get("vs", []):
        insert(con, "mimiciv_derived.vitalsign", {"subject_id": stay_id, "stay_id": stay_id, "charttime": h(2), **row})
    for row in spec.get("bg", []):
        insert(con, "mimiciv_derived.bg", {"subject_id": stay_id, "hadm_id": stay_id, "specimen": "ART.", "charttime": h(2), **row})
    for start, end, status in spec.get("vent", []):
        insert(con, "mimiciv_derived.ventilation", {"stay_id": stay_id, "starttime": h(start), "endtime": h(end), "ventilation_status": status})
    for key, name in INFUSIONS.items():
        for start, end, rate in spec.get(key, []):
            insert(con, f"mimiciv_derived.{name}", {"stay_id": stay_id, "starttime": h(start), "endtime": h(end), "vaso_rate": rate})
    for code, version in spec.get("dx", []):
        insert(con, "mimiciv_hosp.diagnoses_icd", {"subject_id": stay_id, "hadm_id": stay_id, "seq_num": 1, "icd_code": code, "icd_version": version})
    if "service" in spec:
        insert(con, "mimiciv_hosp.services", {"subject_id": stay_id, "hadm_id": stay_id, "transfertime": h(-1), "curr_service": spec["service"]})


def lab(**values) -> dict:
    return {"lab": values}


def vital(**values) -> dict:
    return {"vital": values}


def same(name: str, value: float) -> dict:
    """A first-day min and max that are both ``value``."""
    return {f"{name}_min": value, f"{name}_max": value}


VENT_ALL_DAY = [(-12, 30, "InvasiveVent")]
