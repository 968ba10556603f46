"""Charlson comorbidity flags (one ICD-9 and one ICD-10 code each), age score and index weights."""

from __future__ import annotations

import pytest

from tests.concepts.fixtures2 import by_key, fresh, insert, make_template, recompute, stay

COMPONENTS = {
    # component: (ICD-9 code, ICD-10 code, weight in the index)
    "myocardial_infarct": ("41001", "I214", 1),
    "congestive_heart_failure": ("4280", "I509", 1),
    "peripheral_vascular_disease": ("4439", "I739", 1),
    "cerebrovascular_disease": ("43491", "I639", 1),
    "dementia": ("2900", "F03", 1),
    "chronic_pulmonary_disease": ("496", "J449", 1),
    "rheumatic_disease": ("7140", "M069", 1),
    "peptic_ulcer_disease": ("5310", "K250", 1),
    "mild_liver_disease": ("5712", "K703", 1),
    "diabetes_without_cc": ("25000", "E101", 1),  # E10.1: the public code's 'E10l' typo misses it
    "diabetes_with_cc": ("25040", "E112", 2),
    "paraplegia": ("3441", "G822", 2),
    "renal_disease": ("5856", "N186", 2),
    "malignant_cancer": ("1749", "C509", 2),
    "severe_liver_disease": ("5722", "K721", 3),
    "metastatic_solid_tumor": ("1970", "C787", 6),
    "aids": ("042", "B20", 6),
}
# the task reference's bands (M4Bench: age <= 50 -> 0, <= 60 -> 1, ...); variant
# charlson__age_below_bands keeps mimic-code's (< 50 -> 0, < 60 -> 1, ...)
AGE_SCORES = {49: 0, 50: 0, 51: 1, 60: 1, 61: 2, 70: 2, 71: 3, 80: 3, 81: 4}


@pytest.fixture(scope="module")
def charlson(tmp_path_factory):
    folder = tmp_path_factory.mktemp("charlson")
    con = fresh(make_template(folder / "t.duckdb"), folder / "c.duckdb")
    hadm = 100
    cases = {}
    for component, (icd9, icd10, _) in COMPONENTS.items():
        for version, code in ((9, icd9), (10, icd10)):
            hadm += 1
            stay(con, hadm, age=40)
            insert(con, "mimiciv_hosp.diagnoses_icd", {"subject_id": hadm, "hadm_id": hadm, "seq_num": 1, "icd_code": code, "icd_version": version})
            cases[hadm] = component
    for age in AGE_SCORES:
        stay(con, age, age=age)
    # severe liver disease replaces mild; metastases replace malignancy; complicated diabetes replaces simple
    stay(con, 900, age=40)
    for code in ("5712", "5722", "1749", "1970", "25000", "25040"):
        insert(con, "mimiciv_hosp.diagnoses_icd", {"subject_id": 900, "hadm_id": 900, "seq_num": 1, "icd_code": code, "icd_version": 9})
    recompute(con, "mimiciv_derived.charlson", "mimiciv_derived.target_charlson")
    got = by_key(con, "mimiciv_derived.target_charlson", "hadm_id")
    con.close()
    return got, cases


def test_each_code_sets_its_component_only(charlson):
    got, cases = charlson
    for hadm, component in cases.items():
        flags = {c: got[hadm][c] for c in COMPONENTS}
        assert flags == {c: int(c == component) for c in COMPONENTS}, (hadm, component)


def test_index_weights(charlson):
    got, cases = charlson
    for hadm, component in cases.items():
        assert got[hadm]["charlson_comorbidity_index"] == COMPONENTS[component][2], component


@pytest.mark.parametrize(("age", "score"), list(AGE_SCORES.items()))
def test_age_score(charlson, age, score):
    got, _ = charlson
    assert got[age]["age_score"] == score
    assert got[age]["charlson_comorbidity_index"] == score  # no diagnoses


def test_severe_forms_replace_mild_ones(charlson):
    got, _ = charlson
    # liver max(1, 3) + diabetes max(2, 1) + cancer max(2, 6) = 11
    assert got[900]["charlson_comorbidity_index"] == 11


def test_target_columns(charlson):
    got, _ = charlson
    assert list(next(iter(got.values()))) == ["subject_id", "hadm_id", "age_score", *COMPONENTS, "charlson_comorbidity_index"]
