"""The grounded gatekeeper: lab orders answered from a (synthetic) MIMIC-IV database's labevents.

The database is written here by hand, so every expected value is checked by eye: admission
2001 arrived in the ED at 08:00; a white cell count drawn at 07:00 (before arrival) must be
skipped, the 08:30 one served, the 12:00 one not (first after arrival wins).
"""

import re

import duckdb
import pytest

from clinbench.dx.gatekeeper import REAL, OfflineGatekeeper
from clinbench.dx.grounded import GroundedGatekeeper
from clinbench.dx.run import DxConfig, run_dx

ITEMS = [(51301, "White Blood Cells", "Blood"), (51222, "Hemoglobin", "Blood"), (51265, "Platelet Count", "Blood"),
         (50983, "Sodium", "Blood"), (50912, "Creatinine", "Blood"), (51498, "Specific Gravity", "Urine")]
LABS = [  # id, hadm, itemid, charttime, value, valuenum, uom, lower, upper, flag
    (1, 2001, 51301, "2150-01-01 07:00", "9.0", 9.0, "K/uL", 4.0, 11.0, None),
    (2, 2001, 51301, "2150-01-01 08:30", "15.8", 15.8, "K/uL", 4.0, 11.0, "abnormal"),
    (3, 2001, 51301, "2150-01-01 12:00", "12.0", 12.0, "K/uL", 4.0, 11.0, "abnormal"),
    (4, 2001, 51222, "2150-01-01 08:30", "15.2", 15.2, "g/dL", 13.7, 17.5, None),
    (5, 2001, 51265, "2150-01-01 08:30", "265", 265.0, "K/uL", 150.0, 440.0, None),
    (6, 2001, 50983, "2150-01-01 09:00", "131", 131.0, "mEq/L", 133.0, 145.0, "abnormal"),
    (7, 2002, 50983, "2150-01-01 09:00", "150", 150.0, "mEq/L", 133.0, 145.0, "abnormal"),  # another admission
]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("mimic") / "mimic.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE SCHEMA mimiciv_hosp; CREATE SCHEMA mimiciv_note")
        con.execute("CREATE TABLE mimiciv_hosp.admissions (subject_id INT, hadm_id INT, admittime TIMESTAMP, "
                    "edregtime TIMESTAMP)")
        con.execute("INSERT INTO mimiciv_hosp.admissions VALUES (1, 2001, '2150-01-01 10:00', '2150-01-01 08:00'), "
                    "(2, 2002, '2150-01-01 10:00', NULL)")
        con.execute("CREATE TABLE mimiciv_hosp.d_labitems (itemid INT, label VARCHAR, fluid VARCHAR)")
        con.executemany("INSERT INTO mimiciv_hosp.d_labitems VALUES (?, ?, ?)", ITEMS)
        con.execute("CREATE TABLE mimiciv_hosp.labevents (labevent_id INT, hadm_id INT, itemid INT, charttime TIMESTAMP, "
                    "value VARCHAR, valuenum DOUBLE, valueuom VARCHAR, ref_range_lower DOUBLE, ref_range_upper DOUBLE, "
                    "flag VARCHAR, specimen_id INT)")
        # one specimen per draw time (the 08:30 blood count is one tube)
        con.executemany("INSERT INTO mimiciv_hosp.labevents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [(*row, int(row[3][-5:].replace(":", ""))) for row in LABS])
        con.execute("CREATE TABLE mimiciv_note.discharge (note_id VARCHAR, hadm_id INT)")
        con.execute("INSERT INTO mimiciv_note.discharge VALUES ('10000001-DS-1', 2001)")
    return path


def grounded(case, db, **update):
    case = case.model_copy(update=update)
    return GroundedGatekeeper(case, OfflineGatekeeper(case), db)


def test_a_panel_gets_the_first_values_after_ed_arrival_with_units_and_ranges(case_by_id, db):
    gk = grounded(case_by_id[1], db, hadm_id=2001)
    r = gk.answer("test", "CBC")
    assert r.source == REAL and r.text == ("Complete blood count: White Blood Cells 15.8 K/uL (reference 4-11) abnormal, "
                                           "Hemoglobin 15.2 g/dL (reference 13.7-17.5), "
                                           "Platelet Count 265 K/uL (reference 150-440).")
    assert gk.answer("test", "serum sodium").text == "Sodium: 131 mEq/L (reference 133-145) abnormal."


def test_the_admission_comes_from_the_note_id_too(case_by_id, db):
    gk = grounded(case_by_id[1], db, mimic_note_id="10000001-DS-1")
    assert gk.hadm_id == 2001 and "131 mEq/L" in gk.answer("test", "sodium").text


def test_what_the_database_lacks_goes_to_the_record(case_by_id, db):
    gk = grounded(case_by_id[1], db, hadm_id=2001)
    assert gk.answer("test", "lipase").text == "Lipase: 28 U/L."  # no lipase in labevents: the record's value
    assert "12 mm" in gk.answer("test", "CT abdomen and pelvis with contrast").text
    assert "navel" in gk.answer("question", "Where did the pain start?").text
    plain = grounded(case_by_id[1], db)  # no admission: the record only
    assert plain.hadm_id is None and plain.answer("test", "CBC").text.startswith("Complete blood count: white cell count 15.8 x10^9/L")


def test_a_campaign_with_mimic_db_is_marked_grounded(tmp_path, case_by_id, db):
    script = tmp_path / "s.txt"
    script.write_text("<test>sodium</test>\n<diagnosis>Appendicitis</diagnosis>\n")
    case = case_by_id[1].model_copy(update={"hadm_id": 2001})
    (rec,) = run_dx([case], DxConfig(agent=f"scripted:{script}", mimic_db=db), tmp_path / "c")
    assert rec.gatekeeper == "offline+grounded" and rec.cost == 15.0  # one sodium, $15
    transcript = (tmp_path / "c" / rec.evidence_dir / "transcript.jsonl").read_text()
    assert "131 mEq/L (reference 133-145)" in transcript


def test_a_blocked_lab_reply_has_the_shape_of_an_ordinary_one(case_by_id, db):
    # Issue 28 item 7: a lab reply the leak guard blocked fell back to the offline table
    # ("Sodium: 140 mmol/L.", no reference range), so its shape told the agent it had named
    # the diagnosis. A case whose diagnosis is named by the label itself (contrived: the
    # synonym "sodium") must get a result in range, with the database's unit and range.
    named = grounded(case_by_id[24], db, hadm_id=2001, synonyms=["sodium"])
    reply = named.answer("test", "serum sodium")
    assert reply.blocked and reply.source == "SYNTHETIC"
    value = re.fullmatch(r"Sodium: ([\d.]+) mEq/L \(reference 133-145\)\.", reply.text)
    assert value and 133 <= float(value.group(1)) <= 145, reply.text
    plain = grounded(case_by_id[1], db, hadm_id=2001).answer("test", "serum sodium").text
    assert re.sub(r"[\d.]+ mEq", "# mEq", plain).replace(" abnormal", "") == re.sub(r"[\d.]+ mEq", "# mEq", reply.text)
