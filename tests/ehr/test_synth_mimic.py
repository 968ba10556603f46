"""Synthetic MIMIC-IV: integrity, clinical prevalence, texture and realism, checked with plain SQL."""

from __future__ import annotations

import duckdb
import pytest

from clinbench.ehr.mimic_iv_tables import CORE_SCHEMAS, MIMIC_IV_TABLES
from clinbench.ehr.synth import synth_mimic_iv
from clinbench.errors import DataError

pytest_plugins = ["synth_fixtures"]


def _q(path, sql):
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute(sql).fetchall()


def _one(path, sql):
    return _q(path, sql)[0][0]


# -- shape and determinism -------------------------------------------------------------
def test_tables_and_types_match_the_shared_declarations(synth_mimic_clean):
    declared = {(t.schema, t.name, c.name, c.type) for t in MIMIC_IV_TABLES if t.schema in CORE_SCHEMAS
                for c in t.columns}
    rows = _q(synth_mimic_clean, "SELECT table_schema, table_name, column_name, data_type FROM information_schema.columns "
                                 "WHERE table_schema <> 'clinbench_meta'")
    assert set(rows) == declared
    # besides the source tables, only the synthesis record (what reports read to say "synthetic")
    assert _q(synth_mimic_clean, "SELECT dataset, patients, seed FROM clinbench_meta.synthesis") == [("mimic-iv", 150, 1)]


@pytest.mark.slow
def test_same_seed_gives_identical_tables_and_another_seed_does_not(tmp_path):
    a = synth_mimic_iv(tmp_path / "a.duckdb", patients=40, seed=7)
    b = synth_mimic_iv(tmp_path / "b.duckdb", patients=40, seed=7)
    c = synth_mimic_iv(tmp_path / "c.duckdb", patients=40, seed=8)
    with duckdb.connect() as con:
        for name, path in (("a", a), ("b", b), ("c", c)):
            con.execute(f"ATTACH '{path}' AS {name} (READ_ONLY)")
        for table in ("mimiciv_hosp.patients", "mimiciv_hosp.admissions", "mimiciv_icu.chartevents",
                      "mimiciv_hosp.labevents", "mimiciv_icu.inputevents", "mimiciv_hosp.microbiologyevents",
                      "mimiciv_hosp.prescriptions", "mimiciv_hosp.diagnoses_icd", "mimiciv_icu.outputevents"):
            n = con.execute(f"SELECT count(*) FROM a.{table}").fetchone()[0]
            assert n > 0, table
            diff = con.execute(f"SELECT count(*) FROM (SELECT * FROM a.{table} EXCEPT ALL SELECT * FROM b.{table})"
                               f" UNION ALL SELECT count(*) FROM (SELECT * FROM b.{table} EXCEPT ALL SELECT * FROM a.{table})"
                               ).fetchall()
            assert diff == [(0,), (0,)], table
        other = con.execute("SELECT count(*) FROM (SELECT * FROM a.mimiciv_icu.chartevents "
                            "EXCEPT ALL SELECT * FROM c.mimiciv_icu.chartevents)").fetchone()[0]
        assert other > 0


# -- integrity -------------------------------------------------------------------------
@pytest.mark.parametrize("table, key", [
    ("mimiciv_hosp.patients", "subject_id"), ("mimiciv_hosp.admissions", "hadm_id"),
    ("mimiciv_icu.icustays", "stay_id"), ("mimiciv_hosp.transfers", "transfer_id"),
    ("mimiciv_hosp.labevents", "labevent_id"), ("mimiciv_hosp.microbiologyevents", "microevent_id"),
    ("mimiciv_hosp.prescriptions", "pharmacy_id"), ("mimiciv_hosp.emar", "emar_id"),
    ("mimiciv_icu.inputevents", "orderid"), ("mimiciv_icu.d_items", "itemid"), ("mimiciv_hosp.d_labitems", "itemid"),
    ("mimiciv_hosp.d_icd_diagnoses", "icd_code, icd_version"), ("mimiciv_hosp.diagnoses_icd", "hadm_id, seq_num"),
])
def test_keys_are_unique(synth_mimic500, table, key):
    rows, distinct = _q(synth_mimic500, f"SELECT count(*), count(DISTINCT ({key})) FROM {table}")[0]
    assert rows > 0 and rows == distinct


@pytest.mark.parametrize("child, cols, parent, pcols", [
    ("mimiciv_hosp.admissions", "subject_id", "mimiciv_hosp.patients", "subject_id"),
    ("mimiciv_icu.icustays", "subject_id, hadm_id", "mimiciv_hosp.admissions", "subject_id, hadm_id"),
    ("mimiciv_hosp.transfers", "subject_id, hadm_id", "mimiciv_hosp.admissions", "subject_id, hadm_id"),
    ("mimiciv_hosp.services", "hadm_id", "mimiciv_hosp.admissions", "hadm_id"),
    ("mimiciv_icu.chartevents", "subject_id, hadm_id, stay_id", "mimiciv_icu.icustays", "subject_id, hadm_id, stay_id"),
    ("mimiciv_icu.inputevents", "stay_id", "mimiciv_icu.icustays", "stay_id"),
    ("mimiciv_icu.outputevents", "stay_id", "mimiciv_icu.icustays", "stay_id"),
    ("mimiciv_icu.procedureevents", "stay_id", "mimiciv_icu.icustays", "stay_id"),
    ("mimiciv_icu.chartevents", "itemid", "mimiciv_icu.d_items", "itemid"),
    ("mimiciv_icu.inputevents", "itemid", "mimiciv_icu.d_items", "itemid"),
    ("mimiciv_icu.outputevents", "itemid", "mimiciv_icu.d_items", "itemid"),
    ("mimiciv_icu.procedureevents", "itemid", "mimiciv_icu.d_items", "itemid"),
    ("mimiciv_icu.datetimeevents", "itemid", "mimiciv_icu.d_items", "itemid"),
    ("mimiciv_hosp.labevents", "itemid", "mimiciv_hosp.d_labitems", "itemid"),
    ("mimiciv_hosp.labevents", "subject_id", "mimiciv_hosp.patients", "subject_id"),
    ("mimiciv_hosp.diagnoses_icd", "icd_code, icd_version", "mimiciv_hosp.d_icd_diagnoses", "icd_code, icd_version"),
    ("mimiciv_hosp.procedures_icd", "icd_code, icd_version", "mimiciv_hosp.d_icd_procedures", "icd_code, icd_version"),
    ("mimiciv_hosp.microbiologyevents", "subject_id, hadm_id", "mimiciv_hosp.admissions", "subject_id, hadm_id"),
    ("mimiciv_hosp.prescriptions", "subject_id, hadm_id", "mimiciv_hosp.admissions", "subject_id, hadm_id"),
    ("mimiciv_hosp.emar", "pharmacy_id", "mimiciv_hosp.prescriptions", "pharmacy_id"),
])
def test_foreign_keys_resolve(synth_mimic500, child, cols, parent, pcols):
    orphans = _one(synth_mimic500, f"SELECT count(*) FROM {child} WHERE ({cols}) IS NOT NULL "
                                   f"AND ({cols}) NOT IN (SELECT ({pcols}) FROM {parent})")
    assert orphans == 0


WINDOW_CHECKS = {
    "chartevents": "SELECT count(*) FROM mimiciv_icu.chartevents e JOIN mimiciv_icu.icustays i USING (stay_id) "
                   "WHERE e.charttime < i.intime OR e.charttime > i.outtime",
    "outputevents": "SELECT count(*) FROM mimiciv_icu.outputevents e JOIN mimiciv_icu.icustays i USING (stay_id) "
                    "WHERE e.charttime < i.intime OR e.charttime > i.outtime",
    "inputevents": "SELECT count(*) FROM mimiciv_icu.inputevents e JOIN mimiciv_icu.icustays i USING (stay_id) "
                   "WHERE e.starttime < i.intime OR e.endtime > i.outtime OR e.starttime >= e.endtime",
    "procedureevents": "SELECT count(*) FROM mimiciv_icu.procedureevents e JOIN mimiciv_icu.icustays i "
                       "USING (stay_id) WHERE e.starttime < i.intime - INTERVAL 2 HOUR OR e.endtime > i.outtime",
    "icustays in admission": "SELECT count(*) FROM mimiciv_icu.icustays i JOIN mimiciv_hosp.admissions a "
                             "USING (hadm_id) WHERE i.intime < a.admittime OR i.outtime > a.dischtime "
                             "OR i.intime >= i.outtime",
    "labevents in admission": "SELECT count(*) FROM mimiciv_hosp.labevents l JOIN mimiciv_hosp.admissions a "
                              "USING (hadm_id) WHERE l.charttime < coalesce(a.edregtime, a.admittime) "
                              "OR l.charttime > a.dischtime",
    "cultures in admission": "SELECT count(*) FROM mimiciv_hosp.microbiologyevents m JOIN mimiciv_hosp.admissions a "
                             "USING (hadm_id) WHERE m.chartdate < date_trunc('day', a.admittime) "
                             "OR m.charttime > a.dischtime OR m.charttime < a.admittime",
    "prescriptions in admission": "SELECT count(*) FROM mimiciv_hosp.prescriptions p JOIN mimiciv_hosp.admissions a "
                                  "USING (hadm_id) WHERE p.starttime < a.admittime OR p.stoptime > a.dischtime "
                                  "OR p.starttime > p.stoptime",
    "transfers": "SELECT count(*) FROM mimiciv_hosp.transfers WHERE outtime <= intime",
    "admissions": "SELECT count(*) FROM mimiciv_hosp.admissions WHERE dischtime <= admittime "
                  "OR edregtime >= edouttime OR (deathtime IS NOT NULL AND deathtime <> dischtime)",
    "overlapping admissions": "SELECT count(*) FROM mimiciv_hosp.admissions a JOIN mimiciv_hosp.admissions b "
                              "ON a.subject_id = b.subject_id AND a.hadm_id < b.hadm_id "
                              "AND a.admittime < b.dischtime AND b.admittime < a.dischtime",
}


@pytest.mark.parametrize("name", sorted(WINDOW_CHECKS))
def test_times_sit_inside_their_windows_without_quirks(synth_mimic_clean, name):
    assert _one(synth_mimic_clean, WINDOW_CHECKS[name]) == 0


def test_quirks_put_a_few_events_outside_the_stay_and_error_values_in(synth_mimic500):
    outside, total = _q(synth_mimic500, "SELECT count(*) FILTER (e.charttime > i.outtime), count(*) "
                                        "FROM mimiciv_icu.chartevents e JOIN mimiciv_icu.icustays i USING (stay_id)")[0]
    assert 0 < outside < 0.02 * total
    assert _one(synth_mimic500, "SELECT count(*) FROM mimiciv_icu.chartevents WHERE valuenum = 999999") > 0
    dup = _one(synth_mimic500, "SELECT count(*) FROM (SELECT stay_id, charttime, itemid FROM mimiciv_icu.outputevents "
                               "GROUP BY ALL HAVING count(*) > 1)")
    assert dup > 0


# -- prevalence at 500 patients (acceptance) --------------------------------------------
def test_at_least_15_percent_of_stays_are_invasively_ventilated(synth_mimic500):
    share = _one(synth_mimic500, """
        SELECT avg(CASE WHEN stay_id IN (
            SELECT stay_id FROM mimiciv_icu.chartevents
            WHERE (itemid = 223849 AND value IN ('CMV/ASSIST/AutoFlow', 'CMV/ASSIST', 'SIMV/PSV/AutoFlow', 'PRVC/AC',
                                                 'CPAP/PSV'))
               OR (itemid = 229314 AND value IN ('APV (cmv)', '(S) CMV', 'P-SIMV', 'ASV'))
               OR (itemid = 226732 AND value IN ('Endotracheal tube', 'Tracheostomy tube'))) THEN 1 ELSE 0 END)
        FROM mimiciv_icu.icustays""")
    assert share >= 0.15


def test_at_least_10_percent_of_stays_get_a_vasopressor(synth_mimic500):
    share = _one(synth_mimic500, """
        SELECT avg(CASE WHEN stay_id IN (SELECT stay_id FROM mimiciv_icu.inputevents
                                         WHERE itemid IN (221906, 221289, 221749, 221662, 222315) AND rate > 0)
                   THEN 1 ELSE 0 END) FROM mimiciv_icu.icustays""")
    assert share >= 0.10


def test_at_least_15_percent_of_stays_have_a_creatinine_rise_of_0_3_within_48h(synth_mimic500):
    share = _one(synth_mimic500, """
        WITH cr AS (
            SELECT i.stay_id, l.charttime, l.valuenum
            FROM mimiciv_hosp.labevents l JOIN mimiciv_icu.icustays i
              ON l.hadm_id = i.hadm_id AND l.charttime BETWEEN i.intime - INTERVAL 6 HOUR AND i.outtime
            WHERE l.itemid = 50912 AND l.valuenum IS NOT NULL)
        SELECT count(DISTINCT a.stay_id) / (SELECT count(*) FROM mimiciv_icu.icustays)
        FROM cr a JOIN cr b ON a.stay_id = b.stay_id AND b.charttime > a.charttime
                           AND b.charttime <= a.charttime + INTERVAL 48 HOUR AND b.valuenum - a.valuenum >= 0.3""")
    assert share >= 0.15


def test_at_least_10_percent_of_stays_have_an_antibiotic_within_24h_of_a_culture(synth_mimic500):
    share = _one(synth_mimic500, """
        WITH ab AS (SELECT subject_id, starttime FROM mimiciv_hosp.prescriptions
                    WHERE drug_type = 'MAIN' AND route IN ('IV', 'PO/NG', 'PO')
                      AND regexp_matches(lower(drug), 'vancomycin|piperacillin|cefepime|ceftriaxone|metronidazole|'
                                                      'meropenem|levofloxacin|azithromycin|ciprofloxacin|sulfameth|cefazolin')),
             cu AS (SELECT DISTINCT subject_id, coalesce(charttime, chartdate) AS t FROM mimiciv_hosp.microbiologyevents)
        SELECT count(DISTINCT i.stay_id) / (SELECT count(*) FROM mimiciv_icu.icustays)
        FROM mimiciv_icu.icustays i
        JOIN cu ON cu.subject_id = i.subject_id AND cu.t BETWEEN i.intime - INTERVAL 24 HOUR AND i.outtime
        JOIN ab ON ab.subject_id = cu.subject_id AND ab.starttime BETWEEN cu.t - INTERVAL 24 HOUR
                                                                       AND cu.t + INTERVAL 24 HOUR""")
    assert share >= 0.10


# Charlson components by ICD prefix (Quan 2005 as coded in the public Charlson concept), one or two
# prefixes per component and version are enough to recognise a code of that component.
CHARLSON_PREFIXES = {
    "myocardial_infarct": (("410", "412"), ("I21", "I22", "I252")),
    "congestive_heart_failure": (("428",), ("I50", "I43")),
    "peripheral_vascular_disease": (("440", "441", "4439"), ("I70", "I71", "I739")),
    "cerebrovascular_disease": (("430", "431", "432", "433", "434", "435", "436", "437", "438"), ("I6", "G45")),
    "dementia": (("290",), ("F00", "F01", "F02", "F03", "G30")),
    "chronic_pulmonary_disease": (("490", "491", "492", "493", "494", "495", "496"), ("J4",)),
    "rheumatic_disease": (("7140", "725"), ("M05", "M06", "M32")),
    "peptic_ulcer_disease": (("531", "532", "533", "534"), ("K25", "K26", "K27", "K28")),
    "mild_liver_disease": (("570", "571"), ("K70", "K73", "K74", "B18")),
    "diabetes_without_cc": (("2500", "2501", "2502", "2503"), ("E100", "E110", "E119", "E109")),
    "diabetes_with_cc": (("2504", "2505", "2506", "2507"), ("E102", "E112", "E1122")),
    "paraplegia": (("342", "343", "344"), ("G81", "G82")),
    "renal_disease": (("585", "586", "582"), ("N18", "N19")),
    "malignant_cancer": (("14", "15", "16"), ("C0", "C1", "C3")),
    "severe_liver_disease": (("4560", "5722", "5723"), ("I850", "K721", "K729")),
    "metastatic_solid_tumor": (("196", "197", "198", "199"), ("C77", "C78", "C79", "C80")),
    "aids": (("042", "043", "044"), ("B20", "B21", "B22", "B24")),
}


def test_every_charlson_component_occurs(synth_mimic500):
    for name, (nine, ten) in CHARLSON_PREFIXES.items():
        cond = " OR ".join([f"(icd_version = 9 AND starts_with(icd_code, '{p}'))" for p in nine]
                           + [f"(icd_version = 10 AND starts_with(icd_code, '{p}'))" for p in ten])
        assert _one(synth_mimic500, f"SELECT count(*) FROM mimiciv_hosp.diagnoses_icd WHERE {cond}") > 0, name


def test_icd9_and_icd10_are_mixed_and_ckd_codes_exist(synth_mimic500):
    versions = dict(_q(synth_mimic500, "SELECT icd_version, count(*) FROM mimiciv_hosp.diagnoses_icd GROUP BY 1"))
    assert versions[9] > 100 and versions[10] > 100
    assert _one(synth_mimic500, "SELECT count(*) FROM mimiciv_hosp.diagnoses_icd WHERE (icd_version = 9 AND "
                                "icd_code LIKE '585%') OR (icd_version = 10 AND icd_code LIKE 'N18%')") > 0


# -- texture the conventions depend on ---------------------------------------------------
def test_dictionary_rows_carry_the_real_ids_labels_and_units(synth_mimic500):
    facts = {
        "SELECT label, unitname FROM mimiciv_icu.d_items WHERE itemid = 220045": ("Heart Rate", "bpm"),
        "SELECT label, unitname FROM mimiciv_icu.d_items WHERE itemid = 223761": ("Temperature Fahrenheit", "°F"),
        "SELECT label, category FROM mimiciv_icu.d_items WHERE itemid = 223900": ("GCS - Verbal Response",
                                                                                  "Neurological"),
        "SELECT label, linksto FROM mimiciv_icu.d_items WHERE itemid = 227488": ("GU Irrigant Volume In",
                                                                                 "outputevents"),
        "SELECT label, linksto FROM mimiciv_icu.d_items WHERE itemid = 222315": ("Vasopressin", "inputevents"),
        "SELECT label, fluid FROM mimiciv_hosp.d_labitems WHERE itemid = 50912": ("Creatinine", "Blood"),
        "SELECT label, category FROM mimiciv_hosp.d_labitems WHERE itemid = 52033": ("Specimen Type", "Blood Gas"),
    }
    for sql, expected in facts.items():
        assert _q(synth_mimic500, sql) == [expected], sql


def test_gcs_is_charted_every_1_to_4_hours_with_some_gaps_of_6_hours_or_more(synth_mimic500):
    gaps = dict(_q(synth_mimic500, """
        SELECT h >= 6, count(*) FROM (
            SELECT date_diff('minute', lag(charttime) OVER w, charttime) / 60 AS h FROM mimiciv_icu.chartevents
            WHERE itemid = 220739 WINDOW w AS (PARTITION BY stay_id ORDER BY charttime)) WHERE h IS NOT NULL
        GROUP BY 1"""))
    assert gaps[False] > 50 * gaps[True] > 0


def test_intubated_verbal_response_is_charted_as_no_response_ett(synth_mimic500):
    rows = _q(synth_mimic500, """
        SELECT count(*), count(*) FILTER (p.stay_id IS NOT NULL)
        FROM mimiciv_icu.chartevents c
        LEFT JOIN mimiciv_icu.procedureevents p ON p.stay_id = c.stay_id AND p.itemid = 225792
             AND c.charttime BETWEEN p.starttime AND p.endtime
        WHERE c.itemid = 223900 AND c.value = 'No Response-ETT'""")[0]
    assert rows[0] > 100 and rows[0] == rows[1]


def test_temperature_is_charted_under_both_items_and_with_unit_errors(synth_mimic500):
    f, c, both, wrong = _q(synth_mimic500, """
        SELECT count(*) FILTER (itemid = 223761), count(*) FILTER (itemid = 223762),
               (SELECT count(*) FROM (SELECT stay_id, charttime FROM mimiciv_icu.chartevents
                                      WHERE itemid IN (223761, 223762) GROUP BY ALL HAVING count(DISTINCT itemid) = 2)),
               count(*) FILTER (itemid = 223761 AND valuenum < 50)
        FROM mimiciv_icu.chartevents""")[0]
    assert f > c > 0 and both > 0 and wrong > 0


def test_infusions_include_threshold_doses_units_and_overlaps(synth_mimic500):
    q = synth_mimic500
    assert _one(q, "SELECT count(*) FROM mimiciv_icu.inputevents WHERE itemid = 221906 AND rate = 0.1 "
                   "AND rateuom = 'mcg/kg/min'") > 0
    assert _one(q, "SELECT count(DISTINCT rate) FROM mimiciv_icu.inputevents WHERE itemid = 221662 "
                   "AND rate IN (5, 15)") == 2
    assert _one(q, "SELECT count(*) FROM mimiciv_icu.inputevents WHERE itemid = 222315 AND rateuom = 'units/hour'") > 0
    assert _one(q, "SELECT count(*) FROM mimiciv_icu.inputevents WHERE itemid = 229709") > 0
    overlaps = _one(q, """SELECT count(*) FROM mimiciv_icu.inputevents a JOIN mimiciv_icu.inputevents b
                          ON a.stay_id = b.stay_id AND a.itemid = 221906 AND b.itemid = 222315
                         AND a.starttime < b.endtime AND b.starttime < a.endtime""")
    assert overlaps > 0
    # norepinephrine amount = rate x weight x minutes / 1000 (mg), as charted
    worst = _one(q, "SELECT max(abs(amount - rate * patientweight * date_diff('minute', starttime, endtime) / 1000)) "
                    "FROM mimiciv_icu.inputevents WHERE itemid = 221906")
    assert worst < 1e-3


def test_antibiotic_routes_include_the_ones_conventions_exclude(synth_mimic500):
    routes = {r for (r,) in _q(synth_mimic500, "SELECT DISTINCT route FROM mimiciv_hosp.prescriptions")}
    assert {"IV", "PO/NG", "NU", "TP", "BOTH EYES", "LEFT EAR", "OU"} <= routes
    assert _one(synth_mimic500, "SELECT count(*) FROM mimiciv_hosp.prescriptions WHERE drug LIKE '%Gel%'") > 0


def test_cultures_come_with_and_without_organisms_and_some_only_with_a_date(synth_mimic500):
    pos, neg, date_only, cancelled = _q(synth_mimic500, """
        SELECT count(DISTINCT micro_specimen_id) FILTER (org_name IS NOT NULL AND org_name <> 'CANCELLED'),
               count(DISTINCT micro_specimen_id) FILTER (org_name IS NULL),
               count(DISTINCT micro_specimen_id) FILTER (charttime IS NULL),
               count(DISTINCT micro_specimen_id) FILTER (org_name = 'CANCELLED')
        FROM mimiciv_hosp.microbiologyevents""")[0]
    assert pos > 0 and neg > pos and date_only > 0 and cancelled > 0
    kinds = {r for (r,) in _q(synth_mimic500, "SELECT DISTINCT spec_type_desc FROM mimiciv_hosp.microbiologyevents")}
    assert {"BLOOD CULTURE", "URINE", "SPUTUM", "MRSA SCREEN"} <= kinds


def test_urine_output_has_irrigant_exact_half_ml_per_kg_and_hourly_foley(synth_mimic500):
    q = synth_mimic500
    assert _one(q, "SELECT count(*) FROM mimiciv_icu.outputevents WHERE itemid = 227488") > 0
    # irrigant in and out are charted together; out usually exceeds in (urine + irrigant), and now and
    # then falls below it, so the net urine output of that hour is negative
    more, less, alone = _q(q, """SELECT count(*) FILTER (o.value >= i.value), count(*) FILTER (o.value < i.value),
                                 count(*) FILTER (o.value IS NULL)
                                 FROM mimiciv_icu.outputevents i LEFT JOIN mimiciv_icu.outputevents o
                                 ON o.stay_id = i.stay_id AND o.charttime = i.charttime AND o.itemid = 227489
                                 WHERE i.itemid = 227488""")[0]
    assert more > 5 * less > 0 and alone == 0
    # stays at 80 kg charting 40 mL an hour: exactly 0.5 mL/kg/h
    exact = _one(q, """SELECT count(DISTINCT o.stay_id) FROM mimiciv_icu.outputevents o
                       JOIN mimiciv_icu.chartevents w ON w.stay_id = o.stay_id AND w.itemid = 226512 AND w.valuenum = 80
                       WHERE o.itemid = 226559 AND o.value = 40""")
    assert exact > 0
    gap = _one(q, """SELECT median(h) FROM (SELECT date_diff('minute', lag(charttime) OVER w, charttime) / 60 AS h
                     FROM mimiciv_icu.outputevents WHERE itemid = 226559 WINDOW w AS (PARTITION BY stay_id ORDER BY charttime))""")
    assert gap == 1


def test_ventilation_has_episode_gaps_around_14_hours_and_supplemental_oxygen(synth_mimic500):
    gaps = _q(synth_mimic500, """
        SELECT count(*) FILTER (h >= 14), count(*) FILTER (h BETWEEN 8 AND 13.99) FROM (
            SELECT date_diff('minute', lag(charttime) OVER w, charttime) / 60 AS h FROM mimiciv_icu.chartevents
            WHERE itemid IN (223849, 229314) WINDOW w AS (PARTITION BY stay_id ORDER BY charttime))""")[0]
    assert gaps[0] > 0 and gaps[1] > 0
    devices = {r for (r,) in _q(synth_mimic500, "SELECT DISTINCT value FROM mimiciv_icu.chartevents WHERE itemid = 226732")}
    assert {"Endotracheal tube", "Tracheostomy tube", "Bipap mask ", "High flow nasal cannula", "Nasal cannula",
            "None"} <= devices


def test_outpatient_creatinine_within_a_week_before_admission_exists(synth_mimic500):
    n = _one(synth_mimic500, """SELECT count(*) FROM mimiciv_hosp.labevents l JOIN mimiciv_hosp.admissions a
                                ON a.subject_id = l.subject_id
                                WHERE l.hadm_id IS NULL AND l.itemid = 50912
                                  AND l.charttime BETWEEN a.admittime - INTERVAL 7 DAY AND a.admittime""")
    assert n > 0


def test_blood_gases_chart_the_specimen_type(synth_mimic500):
    kinds = dict(_q(synth_mimic500, "SELECT value, count(*) FROM mimiciv_hosp.labevents WHERE itemid = 52033 GROUP BY 1"))
    assert kinds["ART."] > kinds["VEN."] > 0
    # every blood-gas specimen with a pO2 has its specimen type
    missing = _one(synth_mimic500, """SELECT count(*) FROM mimiciv_hosp.labevents p WHERE p.itemid = 50821
                                      AND p.specimen_id NOT IN (SELECT specimen_id FROM mimiciv_hosp.labevents
                                                                WHERE itemid = 52033)""")
    assert missing == 0


def _coded(prefixes):
    nine, ten = prefixes
    return " OR ".join([f"(icd_version = 9 AND starts_with(icd_code, '{p}'))" for p in nine]
                       + [f"(icd_version = 10 AND starts_with(icd_code, '{p}'))" for p in ten])


def test_cardiac_markers_and_crp_are_ordered_for_a_minority_with_plausible_values(synth_mimic500):
    q = synth_mimic500
    stats = {item: row for item, *row in _q(q, """
        SELECT itemid, any_value(valueuom), count(DISTINCT hadm_id) / (SELECT count(*) FROM mimiciv_hosp.admissions),
               median(valuenum), avg(CASE WHEN valuenum IS NULL AND starts_with(comments, '<') THEN 1 ELSE 0 END)
        FROM mimiciv_hosp.labevents WHERE itemid IN (51003, 50911, 50910, 50963, 50889) GROUP BY itemid""")}
    units = {item: row[0] for item, row in stats.items()}
    assert units == {51003: "ng/mL", 50911: "ng/mL", 50910: "IU/L", 50963: "pg/mL", 50889: "mg/L"}
    # share of admissions tested (MIMIC-IV demo: troponin T 30 %, NT-proBNP 8 %, CRP 6 %)
    assert 0.15 <= stats[51003][1] <= 0.5 and 0.03 <= stats[50963][1] <= 0.25 and 0.02 <= stats[50889][1] <= 0.2
    # troponin T: mostly below the 0.01 ng/mL limit (no value, a "<0.01" comment), reported ones mostly low
    assert 0.3 <= stats[51003][3] <= 0.8
    assert 0.02 <= stats[51003][2] <= 0.5
    assert 1 <= stats[50911][2] <= 15 and 50 <= stats[50910][2] <= 400
    assert 300 <= stats[50963][2] <= 10_000 and 3 <= stats[50889][2] <= 150
    # CK-MB sits in a troponin T tube
    lone = _one(q, """SELECT count(*) FROM mimiciv_hosp.labevents WHERE itemid = 50911 AND specimen_id NOT IN
                      (SELECT specimen_id FROM mimiciv_hosp.labevents WHERE itemid = 51003)""")
    assert lone == 0
    # the story holds: infarcts have higher troponin peaks, heart failure higher NT-proBNP
    for item, prefixes, ratio in ((51003, CHARLSON_PREFIXES["myocardial_infarct"], 2),
                                  (50963, CHARLSON_PREFIXES["congestive_heart_failure"], 3)):
        coded, other = _q(q, f"""
            WITH peak AS (SELECT hadm_id, max(valuenum) AS v FROM mimiciv_hosp.labevents
                          WHERE itemid = {item} AND valuenum IS NOT NULL GROUP BY hadm_id)
            SELECT median(v) FILTER (c), median(v) FILTER (NOT c) FROM (
                SELECT v, hadm_id IN (SELECT hadm_id FROM mimiciv_hosp.diagnoses_icd WHERE {_coded(prefixes)}) AS c
                FROM peak)""")[0]
        assert coded > ratio * other, item


# -- realism against the real demo --------------------------------------------------------
def test_medians_and_charting_density_match_the_real_demo(synth_mimic500, mimic_demo_dir):
    demo = mimic_demo_dir
    with duckdb.connect() as con:
        con.execute(f"ATTACH '{synth_mimic500}' AS s (READ_ONLY)")
        con.execute(f"""CREATE TEMP TABLE d_chart AS SELECT itemid, valuenum FROM read_csv('{demo}/icu/chartevents.csv.gz',
                        header = true, columns = {{'subject_id': 'INTEGER', 'hadm_id': 'INTEGER', 'stay_id': 'INTEGER',
                        'caregiver_id': 'INTEGER', 'charttime': 'TIMESTAMP', 'storetime': 'TIMESTAMP',
                        'itemid': 'INTEGER', 'value': 'VARCHAR', 'valuenum': 'DOUBLE', 'valueuom': 'VARCHAR',
                        'warning': 'INTEGER'}})""")
        con.execute(f"""CREATE TEMP TABLE d_lab AS SELECT itemid, valuenum
                        FROM read_csv_auto('{demo}/hosp/labevents.csv.gz') WHERE valuenum IS NOT NULL""")
        # the demo's most frequent numeric chart and lab items among those the generator charts
        top = con.execute("""
            WITH d AS (SELECT 'chart' AS src, itemid, count(*) AS n, median(valuenum) AS med FROM d_chart
                       WHERE valuenum IS NOT NULL GROUP BY ALL
                       UNION ALL SELECT 'lab', itemid, count(*), median(valuenum) FROM d_lab GROUP BY ALL),
                 s AS (SELECT 'chart' AS src, itemid, median(valuenum) AS med FROM s.mimiciv_icu.chartevents
                       WHERE valuenum IS NOT NULL GROUP BY ALL
                       UNION ALL SELECT 'lab', itemid, median(valuenum) FROM s.mimiciv_hosp.labevents
                       WHERE valuenum IS NOT NULL GROUP BY ALL)
            SELECT d.src, d.itemid, d.med, s.med FROM d JOIN s USING (src, itemid) ORDER BY d.n DESC LIMIT 25""").fetchall()
        assert len(top) == 25
        off = [(src, item, dm, sm) for src, item, dm, sm in top if not (dm / 1.5 <= sm <= dm * 1.5)]
        assert off == []
        chart_items = ",".join(str(item) for src, item, _, _ in top if src == "chart")
        demo_days = con.execute(f"SELECT sum(los) FROM read_csv_auto('{demo}/icu/icustays.csv.gz')").fetchone()[0]
        synth_days = con.execute("SELECT sum(los) FROM s.mimiciv_icu.icustays").fetchone()[0]
        demo_rate = con.execute(f"SELECT count(*) FROM d_chart WHERE itemid IN ({chart_items})").fetchone()[0] / demo_days
        synth_rate = con.execute(f"SELECT count(*) FROM s.mimiciv_icu.chartevents "
                                 f"WHERE itemid IN ({chart_items})").fetchone()[0] / synth_days
        assert 0.5 <= synth_rate / demo_rate <= 2.0
        # the most used vasoactive infusions: median charted rate (norepinephrine, vasopressin: enough
        # infusions for a stable median) and segment length (those two and phenylephrine)
        for item in (221906, 221749, 222315):
            dm, dmin = con.execute(f"SELECT median(rate), median(date_diff('minute', starttime, endtime)) "
                                   f"FROM read_csv_auto('{demo}/icu/inputevents.csv.gz') WHERE itemid = {item}").fetchone()
            sm, smin = con.execute(f"SELECT median(rate), median(date_diff('minute', starttime, endtime)) "
                                   f"FROM s.mimiciv_icu.inputevents WHERE itemid = {item}").fetchone()
            if item != 221749:
                assert dm / 1.5 <= sm <= dm * 1.5, item
            assert dmin / 2 <= smin <= dmin * 2, item


# -- bad input -------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, message", [
    ({"patients": 0}, "patients=0"),
    ({"ventilated": 1.5}, "knob ventilated=1.5 is not a share"),
    ({"crrt": 0.5, "aki": 0.2}, "crrt=0.5 exceeds aki=0.2"),
    ({"sepsis": 0.3}, "unknown knob(s) sepsis"),
])
def test_bad_arguments_raise_one_line_errors_and_write_nothing(tmp_path, kwargs, message):
    out = tmp_path / "x.duckdb"
    with pytest.raises(DataError) as err:
        synth_mimic_iv(out, **kwargs)
    assert message in str(err.value) and "\n" not in str(err.value)
    assert list(tmp_path.iterdir()) == []


def test_output_must_be_a_duckdb_file_in_an_existing_folder(tmp_path):
    with pytest.raises(DataError, match="must end in .duckdb"):
        synth_mimic_iv(tmp_path / "x.db", patients=5)
    with pytest.raises(DataError, match="does not exist"):
        synth_mimic_iv(tmp_path / "nope" / "x.duckdb", patients=5)
    (tmp_path / "dir.duckdb").mkdir()
    with pytest.raises(DataError, match="is a folder"):
        synth_mimic_iv(tmp_path / "dir.duckdb", patients=5)


def test_a_failure_midway_leaves_the_previous_file_untouched(tmp_path, monkeypatch):
    out = synth_mimic_iv(tmp_path / "keep.duckdb", patients=10, seed=1)
    before = out.read_bytes()
    from clinbench.ehr.synth import mimic_iv

    def boom(self):
        raise RuntimeError("disk full")

    monkeypatch.setattr(mimic_iv._Mimic, "labs", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        synth_mimic_iv(out, patients=10, seed=2)
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.duckdb"]


def test_every_item_id_a_concept_reads_is_in_the_dictionaries(synth_mimic_clean):
    """Item ids named in the project's concept SQL (``itemid = n`` / ``itemid IN (...)``) exist with a label."""
    import re
    from pathlib import Path

    import clinbench.concepts as concepts

    sql_files = list(Path(concepts.__file__).parent.rglob("*.sql"))
    assert len(sql_files) > 50
    ids: set[int] = set()
    for path in sql_files:
        # \b: microbiology's org_itemid (90856 negative, 90760 cancelled) is not a d_items / d_labitems id
        for match in re.finditer(r"\bitemid\s*(?:NOT\s+)?(?:IN\s*\(([^)]*)\)|=\s*(\d+))", path.read_text(), re.IGNORECASE):
            ids |= {int(i) for i in re.findall(r"\b\d{5,6}\b", match.group(1) or match.group(2))}
    icu = {i for (i,) in _q(synth_mimic_clean, "SELECT itemid FROM mimiciv_icu.d_items WHERE label IS NOT NULL")}
    lab = {i for (i,) in _q(synth_mimic_clean, "SELECT itemid FROM mimiciv_hosp.d_labitems WHERE label IS NOT NULL")}
    assert len(ids) > 100
    assert sorted(i for i in ids if i not in icu | lab) == []


@pytest.mark.slow
def test_knobs_at_zero_and_one_switch_the_courses_off_and_on(tmp_path):
    off = synth_mimic_iv(tmp_path / "off.duckdb", patients=30, seed=5, septic=0, ventilated=0, pressors=0, aki=0,
                         crrt=0, liver=0, quirks=0)
    assert _one(off, "SELECT count(*) FROM mimiciv_icu.chartevents WHERE itemid IN (223849, 229314)") == 0
    assert _one(off, "SELECT count(*) FROM mimiciv_icu.inputevents WHERE itemid IN (221906, 221289, 221749, "
                     "221662, 222315)") == 0
    assert _one(off, "SELECT count(*) FROM mimiciv_icu.chartevents WHERE valuenum = 999999") == 0
    on = synth_mimic_iv(tmp_path / "on.duckdb", patients=30, seed=5, septic=1, ventilated=1, pressors=1, aki=1,
                        crrt=1, liver=1, quirks=1)
    share = _one(on, "SELECT avg(CASE WHEN stay_id IN (SELECT stay_id FROM mimiciv_icu.inputevents WHERE itemid IN "
                     "(221906, 221289, 221749, 221662, 222315)) THEN 1 ELSE 0 END) FROM mimiciv_icu.icustays")
    assert share > 0.9
    for patients in (1, 2):
        tiny = synth_mimic_iv(tmp_path / f"tiny{patients}.duckdb", patients=patients, seed=5)
        assert _one(tiny, "SELECT count(*) FROM mimiciv_hosp.patients") == patients
