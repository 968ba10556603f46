"""Suspicion of infection and Sepsis-3 on hand-made antibiotics, cultures and SOFA hours."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest

from tests.concepts.fixtures2 import T0, fresh, h, insert, make_template, recompute, rows, stay


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_template(tmp_path_factory.mktemp("sepsis") / "template.duckdb")


def antibiotic(con, subject_id: int, start: float, name: str = "Vancomycin", stop: float | None = None, stay_id: int | None = None) -> None:
    insert(con, "mimiciv_derived.antibiotic", {
        "subject_id": subject_id, "hadm_id": subject_id, "stay_id": stay_id if stay_id is not None else subject_id,
        "antibiotic": name, "route": "IV", "starttime": h(start), "stoptime": h(stop if stop is not None else start + 24),
    })


_specimen = iter(range(1, 10_000))


def culture(con, subject_id: int, hours: float | None, *, day: date | None = None, org: str | None = None,
            spec: str = "BLOOD CULTURE") -> None:
    """A culture with a charttime (hours from T0) or, when ``hours`` is None, only a date."""
    insert(con, "mimiciv_hosp.microbiologyevents", {
        "microevent_id": next(_specimen), "subject_id": subject_id, "hadm_id": subject_id,
        "micro_specimen_id": next(_specimen), "spec_type_desc": spec, "org_name": org,
        "org_itemid": 80023 if org else None,  # MIMIC-IV codes every grown organism
        "chartdate": h(hours).replace(hour=0, minute=0) if hours is not None else day,
        "charttime": h(hours) if hours is not None else None,
    })


@pytest.fixture(scope="module")
def soi(template, tmp_path_factory):
    con = fresh(template, tmp_path_factory.mktemp("soi") / "soi.duckdb")
    cases = {
        1: dict(abx=10, culture=10 - 72),              # culture exactly 72 h before -> suspected
        2: dict(abx=10, culture=10 - 72 - 1 / 60),     # 72 h + 1 min before -> not
        3: dict(abx=10, culture=10 + 24),              # culture exactly 24 h after -> suspected, time = antibiotic
        4: dict(abx=10, culture=10 + 24 + 1 / 60),     # 24 h + 1 min after -> not
        5: dict(abx=10, culture=10),                   # same minute -> matches neither window (mimic-code)
    }
    for subject, case in cases.items():
        stay(con, subject)
        antibiotic(con, subject, case["abx"])
        culture(con, subject, case["culture"], org="STAPH AUREUS" if subject == 1 else None)
    # date-only culture: antibiotic on day 0 at 23:00, culture dated 3 calendar days earlier
    # (up to 81 h before) -> suspected, time = midnight of the culture date
    stay(con, 6)
    antibiotic(con, 6, 15)  # T0 is 08:00, so +15 h is 23:00 the same day
    culture(con, 6, None, day=T0.date() - timedelta(days=3))
    stay(con, 7)
    antibiotic(con, 7, 15)
    culture(con, 7, None, day=T0.date() - timedelta(days=4))
    # ab_id: by start time, then stop time, then name
    stay(con, 8)
    antibiotic(con, 8, 5, name="Cefepime", stop=30)
    antibiotic(con, 8, 5, name="Aztreonam", stop=30)
    antibiotic(con, 8, 5, name="Zosyn", stop=20)
    antibiotic(con, 8, 1, name="Metronidazole")
    recompute(con, "suspicion-infection")
    got = {(r["subject_id"], r["ab_id"]): r for r in rows(con, "SELECT * FROM mimiciv_derived.target_suspicion_infection")}
    yield got
    con.close()


@pytest.mark.parametrize(("subject", "suspected"), [(1, 1), (2, 0), (3, 1), (4, 0), (5, 0), (6, 1), (7, 0)])
def test_culture_windows(soi, subject, suspected):
    assert soi[(subject, 1)]["suspected_infection"] == suspected


def test_suspected_infection_time_is_the_earlier_event(soi):
    assert soi[(1, 1)]["suspected_infection_time"] == h(10 - 72)  # culture first
    assert soi[(3, 1)]["suspected_infection_time"] == h(10)  # antibiotic first
    assert soi[(3, 1)]["culture_time"] == h(34)
    assert soi[(2, 1)]["suspected_infection_time"] is None and soi[(2, 1)]["culture_time"] is None


def test_date_only_culture_uses_midnight(soi):
    midnight = (T0 - timedelta(days=3)).replace(hour=0, minute=0)
    assert soi[(6, 1)]["culture_time"] == midnight
    assert soi[(6, 1)]["suspected_infection_time"] == midnight


def test_positive_culture_and_specimen(soi):
    assert (soi[(1, 1)]["positive_culture"], soi[(1, 1)]["specimen"]) == (1, "BLOOD CULTURE")
    assert soi[(3, 1)]["positive_culture"] == 0


def test_ab_id_numbering(soi):
    names = [soi[(8, i)]["antibiotic"] for i in range(1, 5)]
    assert names == ["Metronidazole", "Zosyn", "Aztreonam", "Cefepime"]


def test_target_columns_and_unique_keys(soi):
    first = next(iter(soi.values()))
    assert list(first) == ["subject_id", "stay_id", "hadm_id", "ab_id", "antibiotic", "antibiotic_time",
                           "suspected_infection", "suspected_infection_time", "culture_time", "specimen", "positive_culture"]
    assert len(soi) == 7 + 4


# ---------------------------------------------------------------- Sepsis-3

def sofa_hour(con, stay_id: int, end: float, score: int) -> None:
    insert(con, "mimiciv_derived.sofa", {
        "stay_id": stay_id, "hr": int(end), "starttime": h(end - 1), "endtime": h(end),
        "respiration_24hours": score, "coagulation_24hours": 0, "liver_24hours": 0,
        "cardiovascular_24hours": 0, "cns_24hours": 0, "renal_24hours": 0, "sofa_24hours": score,
    })


def suspicion(con, stay_id: int, ab_id: int, infection: float | None, abx: float, culture: float | None) -> None:
    insert(con, "mimiciv_derived.suspicion_of_infection", {
        "subject_id": stay_id, "stay_id": stay_id, "hadm_id": stay_id, "ab_id": ab_id, "antibiotic": "X",
        "antibiotic_time": h(abx), "suspected_infection": 0 if infection is None else 1,
        "suspected_infection_time": None if infection is None else h(infection),
        "culture_time": None if culture is None else h(culture),
    })


def test_sepsis3_windows_and_ordering(template, tmp_path):
    con = fresh(template, tmp_path / "s3.duckdb")
    for s in range(1, 7):
        stay(con, s)
    # 1: SOFA 2 ending 48 h before the suspected infection -> sepsis
    suspicion(con, 1, 1, infection=60, abx=60, culture=50)
    sofa_hour(con, 1, 12, 2)
    # 2: SOFA 2 ending 48 h + 1 h before -> no row
    suspicion(con, 2, 1, infection=61, abx=61, culture=55)
    sofa_hour(con, 2, 12, 2)
    # 3: SOFA 2 ending 24 h after -> sepsis; 25 h after -> would not
    suspicion(con, 3, 1, infection=10, abx=10, culture=20)
    sofa_hour(con, 3, 34, 3)
    sofa_hour(con, 3, 35, 4)
    # 4: SOFA 1 only -> no row
    suspicion(con, 4, 1, infection=10, abx=10, culture=5)
    sofa_hour(con, 4, 10, 1)
    # 5: two suspicions; the earlier suspected-infection time wins, then the earliest SOFA
    suspicion(con, 5, 1, infection=20, abx=20, culture=25)
    suspicion(con, 5, 2, infection=15, abx=18, culture=15)
    sofa_hour(con, 5, 16, 2)
    sofa_hour(con, 5, 17, 5)
    # 6: an antibiotic without a culture is not a suspected infection
    suspicion(con, 6, 1, infection=None, abx=10, culture=None)
    sofa_hour(con, 6, 10, 6)
    recompute(con, "mimiciv_derived.sepsis3", "mimiciv_derived.target_sepsis3")
    got = {r["stay_id"]: r for r in rows(con, "SELECT * FROM mimiciv_derived.target_sepsis3")}
    assert sorted(got) == [1, 3, 5]
    assert got[1]["sofa_time"] == h(12)
    assert (got[3]["sofa_time"], got[3]["sofa_score"]) == (h(34), 3)
    assert (got[5]["suspected_infection_time"], got[5]["antibiotic_time"], got[5]["culture_time"]) == (h(15), h(18), h(15))
    assert (got[5]["sofa_time"], got[5]["sofa_score"]) == (h(16), 2)
    assert all(r["sepsis3"] == 1 for r in got.values())
    assert list(got[1]) == ["subject_id", "stay_id", "antibiotic_time", "culture_time", "suspected_infection_time", "sofa_time",
                            "sofa_score", "respiration", "coagulation", "liver", "cardiovascular", "cns", "renal", "sepsis3"]
    con.close()


def test_sepsis3_ties_on_infection_time_break_on_antibiotic_then_culture(template, tmp_path):
    con = fresh(template, tmp_path / "s3b.duckdb")
    stay(con, 9)
    suspicion(con, 9, 1, infection=10, abx=12, culture=10)
    suspicion(con, 9, 2, infection=10, abx=11, culture=10)
    suspicion(con, 9, 3, infection=10, abx=11, culture=None)  # nulls first
    sofa_hour(con, 9, 11, 2)
    recompute(con, "mimiciv_derived.sepsis3")
    got = rows(con, "SELECT antibiotic_time, culture_time FROM mimiciv_derived.sepsis3")
    assert got == [{"antibiotic_time": h(11), "culture_time": None}]
    con.close()
