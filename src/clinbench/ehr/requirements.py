"""Which raw tables each task family needs: the one place the loader and `data info` ask.

A family needs a table when its reference derivation reads it directly or through an
intermediate concept, for example SOFA reads ``inputevents`` through the vasopressor
concepts and ``outputevents`` through urine output. The lists follow the public mimic-code /
eicu-code conventions, and ``tests/ehr/test_ehr_requirements.py`` checks them
against the raw tables the reference SQL in ``concepts/`` actually reads.
A database "supports" a family when every one of these tables is present and non-empty:
an empty or absent source would make a score silently look normal, and a wrong clinical
value is worse than none.
"""

from __future__ import annotations

from collections.abc import Iterable

from clinbench.errors import DataError

_H, _I = "mimiciv_hosp", "mimiciv_icu"


def _q(schema: str, *names: str) -> frozenset[str]:
    return frozenset(f"{schema}.{n}" for n in names)


# Building blocks, named after the intermediate concepts that read them.
_STAYS = _q(_I, "icustays")
_AGE = _q(_H, "patients", "admissions")
_LABS = _q(_H, "labevents")  # chemistry, blood counts, coagulation, enzymes, blood gases
_CHART = _q(_I, "chartevents")  # vital signs, GCS, FiO2, weight, ventilator settings, CRRT
_URINE = _q(_I, "outputevents")
_PRESSORS = _q(_I, "inputevents")
_RRT = _q(_I, "chartevents", "inputevents", "procedureevents")
_ANTIBIOTICS_CULTURES = _q(_H, "prescriptions", "microbiologyevents")
_DIAGNOSES = _q(_H, "diagnoses_icd")
_SURGERY = _q(_H, "services")

MIMIC_IV_FAMILIES: dict[str, frozenset[str]] = {
    "apsiii": _STAYS | _LABS | _CHART | _URINE | _DIAGNOSES,  # APS: physiology only, no age points
    "charlson": _AGE | _DIAGNOSES,
    "creatinine-baseline": _AGE | _LABS | _DIAGNOSES,
    "gcs": _STAYS | _CHART,
    "kdigo": _STAYS | _LABS | _CHART | _URINE,
    "meld": _STAYS | _LABS | _RRT,
    "oasis": _STAYS | _AGE | _SURGERY | _CHART | _URINE,
    "sapsii": _STAYS | _AGE | _SURGERY | _DIAGNOSES | _LABS | _CHART | _URINE,
    "sepsis3": _STAYS | _LABS | _CHART | _URINE | _PRESSORS | _ANTIBIOTICS_CULTURES,
    "sirs": _STAYS | _LABS | _CHART,
    "sofa": _STAYS | _LABS | _CHART | _URINE | _PRESSORS,
    "suspicion-infection": _STAYS | _ANTIBIOTICS_CULTURES,
    "urine-output-rate": _STAYS | _CHART | _URINE,
    "vasopressor-equivalents": _PRESSORS,
    "ventilation": _CHART,
}

_E = "eicu_crd"
EICU_FAMILIES: dict[str, frozenset[str]] = {
    # GCS is charted by nurses: nurseCharting holds the total and the components.
    "gcs": _q(_E, "patient", "nursecharting"),
    # OASIS (M4Bench's oasis.sql): age and pre-ICU stay (patient), GCS and vitals as nurses
    # chart them (nurseCharting), the physical exam's GCS where charting has none (physicalExam),
    # urine output (intakeOutput), ventilation (respiratoryCare, apacheApsVar) and elective
    # surgery (apachePredVar).
    "oasis": _q(_E, "patient", "nursecharting", "physicalexam", "intakeoutput",
                "respiratorycare", "apacheapsvar", "apachepredvar"),
}


def family_requirements(dataset: str) -> dict[str, frozenset[str]]:
    """Task family -> the qualified raw tables it needs, for 'mimic-iv' or 'eicu'."""
    if dataset == "mimic-iv":
        return MIMIC_IV_FAMILIES
    if dataset == "eicu":
        return EICU_FAMILIES
    raise DataError(f"unknown dataset {dataset!r}: use 'mimic-iv' or 'eicu'")


def required_tables(dataset: str) -> frozenset[str]:
    """Every raw table some task family of ``dataset`` needs."""
    return frozenset().union(*family_requirements(dataset).values())


def families_needing(dataset: str, tables: Iterable[str]) -> list[str]:
    """The families that cannot be derived without any of ``tables``."""
    missing = set(tables)
    return sorted(f for f, need in family_requirements(dataset).items() if need & missing)


def supported_families(dataset: str, present: Iterable[str]) -> list[str]:
    """The families whose tables are all in ``present`` (qualified names of non-empty tables)."""
    have = set(present)
    return sorted(f for f, need in family_requirements(dataset).items() if need <= have)
