"""Synthetic eICU: shape, integrity and the inputs of the eICU GCS and OASIS tasks, in plain SQL."""

from __future__ import annotations

import pytest
import duckdb

from clinbench.ehr.eicu_tables import EICU_TABLES
from clinbench.ehr.synth import synth_eicu

pytest_plugins = ["synth_fixtures"]

FILLED = ("patient", "hospital", "apacheapsvar", "apachepredvar", "nursecharting", "vitalperiodic", "vitalaperiodic",
          "lab", "intakeoutput", "respiratorycare", "respiratorycharting", "physicalexam", "diagnosis",
          "infusiondrug", "medication", "treatment", "microlab")


def _q(path, sql):
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute(sql).fetchall()


def _one(path, sql):
    return _q(path, sql)[0][0]


@pytest.mark.slow
def test_every_declared_table_exists_with_its_types_and_the_task_tables_are_filled(synth_eicu200):
    declared = {(t.name, c.name, c.type) for t in EICU_TABLES for c in t.columns}
    rows = _q(synth_eicu200, "SELECT table_name, column_name, data_type FROM information_schema.columns "
                             "WHERE table_schema = 'eicu_crd'")
    assert set(rows) == declared
    for table in FILLED:
        assert _one(synth_eicu200, f"SELECT count(*) FROM eicu_crd.{table}") > 0, table


@pytest.mark.slow
def test_same_seed_gives_identical_tables(tmp_path):
    a = synth_eicu(tmp_path / "a.duckdb", patients=30, seed=3)
    b = synth_eicu(tmp_path / "b.duckdb", patients=30, seed=3)
    with duckdb.connect() as con:
        con.execute(f"ATTACH '{a}' AS a (READ_ONLY)")
        con.execute(f"ATTACH '{b}' AS b (READ_ONLY)")
        for table in ("patient", "nursecharting", "lab", "intakeoutput", "apacheapsvar"):
            diff = con.execute(f"SELECT count(*) FROM (SELECT * FROM a.eicu_crd.{table} "
                               f"EXCEPT ALL SELECT * FROM b.eicu_crd.{table})").fetchone()[0]
            assert diff == 0, table


@pytest.mark.slow
def test_keys_unique_and_every_stay_reference_resolves(synth_eicu200):
    n, distinct = _q(synth_eicu200, "SELECT count(*), count(DISTINCT patientunitstayid) FROM eicu_crd.patient")[0]
    assert n == distinct and n >= 200
    for table in FILLED[2:]:
        orphans = _one(synth_eicu200, f"SELECT count(*) FROM eicu_crd.{table} WHERE patientunitstayid NOT IN "
                                      "(SELECT patientunitstayid FROM eicu_crd.patient)")
        assert orphans == 0, table
    assert _one(synth_eicu200, "SELECT count(*) FROM eicu_crd.patient WHERE hospitalid NOT IN "
                               "(SELECT hospitalid FROM eicu_crd.hospital)") == 0


def test_offsets_are_consistent(synth_eicu200):
    bad = _one(synth_eicu200, """SELECT count(*) FROM eicu_crd.patient
                                 WHERE unitdischargeoffset <= 0 OR hospitaladmitoffset > 0
                                    OR hospitaldischargeoffset < unitdischargeoffset""")
    assert bad == 0
    late = _one(synth_eicu200, """SELECT count(*) FROM eicu_crd.nursecharting n JOIN eicu_crd.patient p
                                  USING (patientunitstayid) WHERE n.nursingchartoffset > p.unitdischargeoffset
                                  OR n.nursingchartoffset < -12 * 60""")
    assert late == 0
    # second unit stays of a hospital stay are readmissions, admitted later to hospital time zero
    assert _one(synth_eicu200, "SELECT count(*) FROM eicu_crd.patient WHERE unitvisitnumber = 2") > 0


def test_gcs_is_charted_the_way_eicu_charts_it_with_the_task_edges(synth_eicu200):
    labels = set(_q(synth_eicu200, """SELECT DISTINCT nursingchartcelltypevallabel, nursingchartcelltypevalname
                                      FROM eicu_crd.nursecharting WHERE nursingchartcelltypecat = 'Scores'"""))
    assert {("Glasgow coma score", "GCS Total"), ("Glasgow coma score", "Motor"), ("Glasgow coma score", "Verbal"),
            ("Glasgow coma score", "Eyes"), ("Score (Glasgow Coma Scale)", "Value")} <= labels
    edges = _q(synth_eicu200, """
        WITH g AS (SELECT patientunitstayid AS id, nursingchartoffset AS t, nursingchartvalue AS v
                   FROM eicu_crd.nursecharting
                   WHERE nursingchartcelltypevallabel = 'Glasgow coma score' AND nursingchartcelltypevalname = 'GCS Total')
        SELECT count(*) FILTER (t BETWEEN -360 AND -1),
               count(*) FILTER (t < -360),
               count(*) FILTER (TRY_CAST(v AS INTEGER) NOT BETWEEN 3 AND 15),
               count(*) FILTER (TRY_CAST(v AS INTEGER) IS NULL),
               (SELECT count(*) FROM eicu_crd.patient WHERE patientunitstayid NOT IN
                  (SELECT patientunitstayid FROM eicu_crd.nursecharting WHERE nursingchartcelltypecat = 'Scores'))
        FROM g""")[0]
    before, too_early, out_of_range, text, no_gcs = edges
    assert before > 0 and too_early > 0 and out_of_range > 0 and text > 0 and no_gcs > 0
    # the minimum total in the task window is often below 15 and sometimes 3 to 8
    mins = dict(_q(synth_eicu200, """
        SELECT CASE WHEN m = 15 THEN '15' WHEN m >= 9 THEN '9-14' ELSE '3-8' END, count(*) FROM (
            SELECT patientunitstayid, min(TRY_CAST(nursingchartvalue AS INTEGER)) AS m FROM eicu_crd.nursecharting
            WHERE nursingchartcelltypevalname = 'GCS Total' AND nursingchartoffset BETWEEN -360 AND 1440
              AND TRY_CAST(nursingchartvalue AS INTEGER) BETWEEN 3 AND 15 GROUP BY 1) GROUP BY 1"""))
    assert mins.get("15", 0) > 0 and mins.get("9-14", 0) > 0 and mins.get("3-8", 0) > 0


@pytest.mark.slow
def test_oasis_inputs_cover_every_pre_icu_bin_and_the_missing_data_cases(synth_eicu200):
    bins = {b for (b,) in _q(synth_eicu200, """
        SELECT CASE WHEN hospitaladmitoffset > -0.17 * 60 THEN 5
                    WHEN hospitaladmitoffset >= -4.94 * 60 THEN 3
                    WHEN hospitaladmitoffset >= -24 * 60 THEN 0
                    WHEN hospitaladmitoffset >= -311.8 * 60 THEN 2 ELSE 1 END FROM eicu_crd.patient""")}
    assert bins == {0, 1, 2, 3, 5}
    assert _one(synth_eicu200, "SELECT count(*) FROM eicu_crd.patient WHERE age = '> 89'") > 0
    assert _one(synth_eicu200, "SELECT count(*) FROM eicu_crd.apachepredvar WHERE electivesurgery IS NULL") > 0
    assert _one(synth_eicu200, "SELECT count(*) FROM eicu_crd.apachepredvar WHERE electivesurgery = 1") > 0
    assert _one(synth_eicu200, "SELECT count(*) FROM eicu_crd.patient WHERE patientunitstayid NOT IN "
                               "(SELECT patientunitstayid FROM eicu_crd.apacheapsvar)") > 0
    # ventilation that starts after the first day does not count for the first-day score
    assert _one(synth_eicu200, "SELECT count(*) FROM eicu_crd.respiratorycare WHERE ventstartoffset > 1440") > 0
    assert _one(synth_eicu200, "SELECT count(*) FROM eicu_crd.apacheapsvar WHERE urine = -1") > 0
    uo = _one(synth_eicu200, """SELECT median(s) FROM (SELECT patientunitstayid, sum(cellvaluenumeric) AS s
                                FROM eicu_crd.intakeoutput WHERE cellpath = 'flowsheet|Flowsheet Cell Labels|I&O|Output (ml)|Urine'
                                AND intakeoutputoffset BETWEEN 0 AND 1440 GROUP BY 1)""")
    assert 800 < uo < 3500
    exam = _one(synth_eicu200, """SELECT count(*) FROM eicu_crd.physicalexam WHERE physicalexampath LIKE
                                  'notes/Progress Notes/Physical Exam/Physical Exam/Neurologic/GCS/__'""")
    assert exam > 0


@pytest.mark.slow
def test_values_and_charting_density_resemble_the_real_eicu_demo(synth_eicu200, eicu_demo_dir):
    demo = eicu_demo_dir
    with duckdb.connect() as con:
        con.execute(f"ATTACH '{synth_eicu200}' AS s (READ_ONLY)")
        labs = con.execute(f"""
            WITH d AS (SELECT labname, count(*) AS n, median(labresult) AS m
                       FROM read_csv_auto('{demo}/partial/lab.csv.gz') GROUP BY 1),
                 s AS (SELECT labname, median(labresult) AS m FROM s.eicu_crd.lab GROUP BY 1)
            SELECT d.labname, d.m, s.m FROM d JOIN s USING (labname) ORDER BY d.n DESC LIMIT 10""").fetchall()
        assert len(labs) == 10
        assert [(n, dm, sm) for n, dm, sm in labs if not dm / 1.5 <= sm <= dm * 1.5] == []
        for column in ("unitdischargeoffset", "hospitaladmitoffset", "admissionweight"):
            dm = con.execute(f"SELECT median({column}) FROM read_csv_auto('{demo}/patient.csv.gz')").fetchone()[0]
            sm = con.execute(f"SELECT median({column}) FROM s.eicu_crd.patient").fetchone()[0]
            assert min(dm, sm) / max(dm, sm) >= 1 / 1.5, column
        rate = "SELECT count(*) / (SELECT sum(unitdischargeoffset) / 1440 FROM {p}) FROM {v}"
        demo_rate = con.execute(rate.format(p=f"read_csv_auto('{demo}/patient.csv.gz')",
                                            v=f"read_csv_auto('{demo}/vitalAperiodic.csv.gz')")).fetchone()[0]
        synth_rate = con.execute(rate.format(p="s.eicu_crd.patient", v="s.eicu_crd.vitalaperiodic")).fetchone()[0]
        assert 0.5 <= synth_rate / demo_rate <= 2
