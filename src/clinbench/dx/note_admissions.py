"""The admissions of the ``demo-notes`` cases in a synthetic MIMIC-IV database.

``clinbench data synth mimic-iv --notes`` (and ``clinbench demo``) call ``write_note_admissions``
once the cohort is written: each note case (``dx/note_layout.py``) gets a patient and an ED
admission of its own, ``hadm_id`` = the case's (``NOTE_HADM_BASE`` + its number, below every
synthetic cohort's ids, so the cohort's rows and what is derived from them stay as they were),
and one ``labevents`` row for each ``Name-value`` of the note's BLOOD lab strings:

* ``itemid``: the MIMIC-IV d_labitems item of that lab-string name (``ITEMIDS``); the few items
  the synthetic dictionary lacks are added with their MIMIC-IV labels (``EXTRA_ITEMS``);
* ``value``/``valuenum``: the note's number as written; ``valueuom``: the item's MIMIC-IV unit
  (the demo's units are numerically the same: x10^9/L = K/uL, mmol/L = mEq/L);
* ``ref_range_lower/upper``: the range the note flags against, ``flag`` 'abnormal' where the
  note has ``*``;
* ``charttime``: the lab string's clock time on the admission day (after ED arrival, so the
  grounded gatekeeper's "first result after arrival" is that value); one ``specimen_id`` per
  lab string.

The patient's sex is the note's ``Sex:``, the age the vignette's. No ICU stay, no diagnosis
codes: only what the note's results state.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

from clinbench.duck import duckdb
from clinbench.dx.cases import Case, demo_cases
from clinbench.dx.note_layout import note_cases, reference_range
from clinbench.dx.record import lab_string
from clinbench.ehr.synth.items import LAB_UNITS

HOSP = "mimiciv_hosp"
NOTE_SUBJECT_BASE = 9_990_000  # below the subject_ids of any synthetic cohort (10,000,001 up)
ADMISSION_DAY = datetime(2150, 3, 1)  # case n is admitted n days later
ED_ARRIVAL, ADMITTED, DISCHARGED_AFTER = timedelta(hours=13, minutes=30), timedelta(hours=19), timedelta(days=3)

# a note's lab-string name -> MIMIC-IV d_labitems itemid (blood)
ITEMIDS: dict[str, int] = {
    "WBC": 51301, "Neuts": 51256, "Hgb": 51222, "Hct": 51221, "Plt Ct": 51265, "MCV": 51250, "AbsEos": 52073,
    "Na": 50983, "K": 50971, "Cl": 50902, "HCO3": 50882, "AnGap": 50868, "UreaN": 51006, "Creat": 50912,
    "Glucose": 50931, "Calcium": 50893, "Albumin": 50862, "TotBili": 50885, "AlkPhos": 50863, "ALT": 50861,
    "AST": 50878, "INR(PT)": 51237, "PTT": 51275, "pH": 50820, "pCO2": 50818, "pO2": 50821, "Lipase": 50956,
    "CRP": 50889, "Lactate": 50813, "TSH": 50993, "Free T4": 50995, "Mg": 50960, "CK(CPK)": 50910,
    "%HbA1c": 50852,
}
# items the synthetic d_labitems lacks: itemid -> (label, fluid, category, unit), as in MIMIC-IV
EXTRA_ITEMS: dict[int, tuple[str, str, str, str]] = {
    52073: ("Absolute Eosinophil Count", "Blood", "Hematology", "K/uL"),
    50956: ("Lipase", "Blood", "Chemistry", "IU/L"),
    50993: ("Thyroid Stimulating Hormone", "Blood", "Chemistry", "uIU/mL"),
    50995: ("Thyroxine (T4), Free", "Blood", "Chemistry", "ng/dL"),
    50852: ("% Hemoglobin A1c", "Blood", "Chemistry", "%"),
}
_LAB_LINE = re.compile(r"^___ (\d{1,2}):(\d{2})([AP]M) BLOOD ")
_UNITS = {**LAB_UNITS, **{item: unit for item, (_, _, _, unit) in EXTRA_ITEMS.items()}}


def note_labs(case: Case) -> list[tuple[timedelta, str, str, bool]]:
    """(clock time, lab-string name, value as written, flagged) for each analyte of the note's BLOOD lab strings."""
    out = []
    for line in case.full_text.splitlines():
        m = _LAB_LINE.match(line)
        parsed = lab_string(line) if m else None
        if parsed is None:
            continue
        hour = int(m.group(1)) % 12 + (12 if m.group(3) == "PM" else 0)
        clock = timedelta(hours=hour, minutes=int(m.group(2)))
        for name, token in parsed[1]:
            value = token[len(name) + 1:]
            out.append((clock, name, value.rstrip("*"), value.endswith("*")))
    return out


def _rows(cases: list[Case], labevent_start: int, specimen_start: int) -> tuple[list, list, list]:
    patients, admissions, labs = [], [], []
    labevent_id, specimen_id = labevent_start, specimen_start
    for case in cases:
        if case.hadm_id is None:
            raise ValueError(f"note case {case.case_id} has no hadm_id")
        subject = NOTE_SUBJECT_BASE + case.case_id
        sex = re.search(r"Sex:\s+([MF])\b", case.full_text)
        age = re.search(r"(\d{1,3})-year-old", case.case_summary)
        day = ADMISSION_DAY + timedelta(days=case.case_id)
        patients.append((subject, sex.group(1) if sex else "F", int(age.group(1)) if age else 50, day.year,
                         "2017 - 2019"))
        admissions.append((subject, case.hadm_id, day + ADMITTED, day + ADMITTED + DISCHARGED_AFTER, "EW EMER.",
                           "EMERGENCY ROOM", "HOME", "Other", "English", "UNKNOWN", day + ED_ARRIVAL, day + ADMITTED, 0))
        clocks: dict[timedelta, int] = {}
        for clock, name, value, flagged in note_labs(case):
            if name not in ITEMIDS:
                raise ValueError(f"note case {case.case_id}: lab-string name {name!r} has no MIMIC-IV itemid in ITEMIDS")
            if clock not in clocks:
                specimen_id += 1
                clocks[clock] = specimen_id
            lo, hi = reference_range(name) or (None, None)
            labevent_id += 1
            item = ITEMIDS[name]
            labs.append((labevent_id, subject, case.hadm_id, clocks[clock], item, day + clock,
                         day + clock + timedelta(minutes=45), value, float(value), _UNITS.get(item), lo, hi,
                         "abnormal" if flagged else None, "STAT"))
    return patients, admissions, labs


def write_note_admissions(con: duckdb.DuckDBPyConnection, cases: list[Case] | None = None) -> int:
    """Write the note cases' patients, admissions and labevents into the MIMIC-IV database ``con``
    writes (the ``demo-notes`` cases by default); returns the number of labevents rows."""
    cases = note_cases(demo_cases()) if cases is None else cases
    known = {row[0] for row in con.execute(f"SELECT itemid FROM {HOSP}.d_labitems").fetchall()}
    con.executemany(f"INSERT INTO {HOSP}.d_labitems (itemid, label, fluid, category) VALUES (?, ?, ?, ?)",
                    [(item, *row[:3]) for item, row in EXTRA_ITEMS.items() if item not in known])
    labevent_start, specimen_start = con.execute(
        f"SELECT coalesce(max(labevent_id), 0), coalesce(max(specimen_id), 0) FROM {HOSP}.labevents").fetchone()
    patients, admissions, labs = _rows(cases, int(labevent_start), int(specimen_start))
    con.executemany(f"INSERT INTO {HOSP}.patients (subject_id, gender, anchor_age, anchor_year, anchor_year_group) "
                    "VALUES (?, ?, ?, ?, ?)", patients)
    con.executemany(f"INSERT INTO {HOSP}.admissions (subject_id, hadm_id, admittime, dischtime, admission_type, "
                    "admission_location, discharge_location, insurance, language, race, edregtime, edouttime, "
                    "hospital_expire_flag) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", admissions)
    con.executemany(f"INSERT INTO {HOSP}.labevents (labevent_id, subject_id, hadm_id, specimen_id, itemid, charttime, "
                    "storetime, value, valuenum, valueuom, ref_range_lower, ref_range_upper, flag, priority) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", labs)
    return len(labs)


def with_note_admissions(after_raw=None):
    """An ``after_raw`` hook for ``synth_mimic_iv``: the note admissions, then ``after_raw`` (the raw
    layer is kept with them in it)."""
    def hook(con: duckdb.DuckDBPyConnection, dataset: str):
        write_note_admissions(con)
        return after_raw(con, dataset) if after_raw is not None else None
    return hook


def linked_admissions(db: str | Path, cases: list[Case]) -> int:
    """How many of ``cases``' hadm_ids the MIMIC-IV database ``db`` holds an admission for (0 when it has none)."""
    wanted = [c.hadm_id for c in cases if c.hadm_id is not None]
    if not wanted:
        return 0
    with duckdb.connect(str(db), read_only=True) as con:
        try:
            return con.execute(f"SELECT count(DISTINCT hadm_id) FROM {HOSP}.admissions WHERE hadm_id IN "
                               f"({', '.join('?' * len(wanted))})", wanted).fetchone()[0]
        except duckdb.CatalogException:
            return 0
