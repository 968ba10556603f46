"""Issue 24: the demo-notes cases and the synthetic MIMIC-IV database agree.

`data synth mimic-iv --notes` writes each note case's admission (its ``hadm_id``) with the
note's lab strings as labevents. For every note case, the values the note parser reads from
``Pertinent Results`` are the labevents rows of that admission (same analyte by the
d_labitems label, same value as written, same abnormal flag), and the grounded gatekeeper
serves those rows, with the note's own words for each value, as the note-only gatekeeper
does. The cohort the database is written for is unchanged by the extra admissions.
"""

from __future__ import annotations

import re
import subprocess
import sys

import duckdb
import pytest

from clinbench.dx.cases import load_cases
from clinbench.dx.gatekeeper import REAL, OfflineGatekeeper
from clinbench.dx.grounded import GroundedGatekeeper
from clinbench.dx.note_admissions import with_note_admissions
from clinbench.dx.note_layout import NOTE_HADM_BASE, NOTE_ID_OFFSET
from clinbench.dx.record import parse_record
from clinbench.dx.testnames import concept_of_label, concepts
from clinbench.ehr.synth import synth_mimic_iv

PATIENTS, SEED = 12, 3


@pytest.fixture(scope="module")
def dbs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("notes")  # what `data synth mimic-iv --notes` writes (its CLI: the slow test below)
    return (synth_mimic_iv(folder / "notes.duckdb", patients=PATIENTS, seed=SEED, after_raw=with_note_admissions()),
            synth_mimic_iv(folder / "plain.duckdb", patients=PATIENTS, seed=SEED))


@pytest.fixture(scope="module")
def notes():
    return load_cases("demo-notes")


def _labevents(db) -> dict[int, list[tuple]]:
    """hadm_id -> (d_labitems label, value, valuenum, flag) of its labevents rows."""
    out: dict[int, list[tuple]] = {}
    with duckdb.connect(str(db), read_only=True) as con:
        for hadm, *row in con.execute("SELECT l.hadm_id, d.label, l.value, l.valuenum, l.flag FROM mimiciv_hosp.labevents l "
                                      "JOIN mimiciv_hosp.d_labitems d USING (itemid) WHERE l.hadm_id >= ?",
                                      [NOTE_HADM_BASE]).fetchall():
            out.setdefault(hadm, []).append(tuple(row))
    return out


def _parsed(case) -> list[tuple[str, str, bool]]:
    """(concept, value as written, flagged) of every analyte the note parser reads from the lab strings."""
    out = []
    for e in parse_record(case.full_text, case.case_summary).results:
        if e.kind == "analyte" and e.fluid == "blood":
            value = e.text[len(e.name) + 1:]
            out.append((concept_of_label(e.name, e.fluid), value.rstrip("*"), value.endswith("*")))
    return out


def test_a_note_case_admission_holds_its_lab_strings_as_labevents_checked_by_hand(dbs, notes):
    db, _ = dbs
    appendicitis = next(c for c in notes if c.case_id == NOTE_ID_OFFSET + 1)
    assert appendicitis.hadm_id == NOTE_HADM_BASE + 101
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT itemid, value, valuenum, valueuom, ref_range_lower, ref_range_upper, flag, "
                           "strftime(charttime, '%H:%M') FROM mimiciv_hosp.labevents WHERE hadm_id = ? "
                           "AND itemid IN (51301, 50912, 50956) ORDER BY itemid", [appendicitis.hadm_id]).fetchall()
        arrival = con.execute("SELECT strftime(edregtime, '%H:%M') FROM mimiciv_hosp.admissions WHERE hadm_id = ?",
                              [appendicitis.hadm_id]).fetchone()
    # the note: "___ 04:50PM BLOOD WBC-15.8* ...", "___ 04:51PM BLOOD ... Creat-0.9 ...", "Lipase: 28 U/L." as a lab string
    assert rows == [(50912, "0.9", 0.9, "mg/dL", 0.4, 1.1, None, "16:51"),
                    (50956, "28", 28.0, "IU/L", 0.0, 60.0, None, "16:53"),
                    (51301, "15.8", 15.8, "K/uL", 4.0, 11.0, "abnormal", "16:50")]
    assert arrival == ("13:30",)  # before the draws: the grounded gatekeeper's "first after arrival" is the note's


def test_every_note_case_s_lab_strings_are_its_admission_s_labevents(dbs, notes):
    db, _ = dbs
    assert len(notes) >= 16
    total, rows = 0, _labevents(db)
    for case in notes:
        parsed = _parsed(case)
        stored = [(concept_of_label(label, "blood"), value, flag == "abnormal") for label, value, _, flag in
                  rows[case.hadm_id]]
        assert parsed and sorted(parsed) == sorted(stored), case.case_id
        assert all(float(v) == num for (_, v, num, _) in rows[case.hadm_id])
        total += len(parsed)
    assert total >= 240  # 243 analytes in 28 notes


def test_the_grounded_gatekeeper_serves_the_labevents_in_the_note_s_words(dbs, notes):
    db, _ = dbs
    served = 0
    for case in notes:
        grounded, note_only = GroundedGatekeeper(case, OfflineGatekeeper(case), db), OfflineGatekeeper(case)
        for concept, value, _ in _parsed(case):
            order = concepts()[concept].display  # "Sodium", "Eosinophils", "Thyroid stimulating hormone"
            reply = grounded.answer("test", order)
            assert (reply.source, reply.matched) == (REAL, "labevents"), (case.case_id, order, reply.text)
            # "Sodium: 116 mEq/L (reference 135-145) abnormal." and the note's own token "Sodium: Na-116*."
            assert re.match(rf"[^:]+: {re.escape(value)} ", reply.text), (case.case_id, order, reply.text)
            note = note_only.answer("test", order).text
            assert re.search(rf"-{re.escape(value)}\*?(?!\d|\.\d)", note), (case.case_id, order, note)
            served += 1
    assert served >= 240
    pneumonia = next(c for c in notes if c.case_id == NOTE_ID_OFFSET + 4)
    # a panel gets what was reported on its tube: the note's line, the admission's specimen
    assert OfflineGatekeeper(pneumonia).answer("test", "CBC").text == (
        "Complete blood count: WBC-17.4* Neuts-89* Hgb-12.8 Plt Ct-302.")
    assert GroundedGatekeeper(pneumonia, OfflineGatekeeper(pneumonia), db).answer("test", "CBC").text == (
        "Complete blood count: White Blood Cells 17.4 K/uL (reference 4-11) abnormal, Hemoglobin 12.8 g/dL "
        "(reference 12-16), Platelet Count 302 K/uL (reference 150-400), Neutrophils 89 % (reference 40-75) abnormal.")
    # nothing else on a specimen comes with a panel: a BMP's reply names only its own analytes
    bmp = set(concepts()["basic metabolic panel"].components)
    for case in notes:
        grounded = GroundedGatekeeper(case, OfflineGatekeeper(case), db)
        reply = grounded.answer("test", "Basic metabolic panel").text
        others = [lab for lab in grounded.first if concept_of_label(lab, "blood") not in bmp and f" {lab} " in reply]
        assert not others, (case.case_id, others, reply)
    dka = next(c for c in notes if c.case_id == NOTE_ID_OFFSET + 5)
    # a serum order gets the serum value, not the record's "Capillary blood glucose: 486 mg/dL"
    assert OfflineGatekeeper(dka).answer("test", "Glucose").text == "Glucose: Glucose-492*."
    assert GroundedGatekeeper(dka, OfflineGatekeeper(dka), db).answer("test", "Glucose").text == (
        "Glucose: 492 mg/dL (reference 70-100) abnormal.")


def test_the_cohort_is_the_same_with_or_without_the_note_admissions(dbs, notes):
    with_notes, plain = dbs
    hadm = [c.hadm_id for c in notes]
    with duckdb.connect() as con:
        con.execute(f"ATTACH '{with_notes}' AS n (READ_ONLY)")
        con.execute(f"ATTACH '{plain}' AS p (READ_ONLY)")
        for table in ("patients", "admissions", "labevents", "d_labitems"):
            extra = con.execute(f"SELECT count(*) FROM (SELECT * FROM n.mimiciv_hosp.{table} "
                                f"EXCEPT ALL SELECT * FROM p.mimiciv_hosp.{table})").fetchone()[0]
            lost = con.execute(f"SELECT count(*) FROM (SELECT * FROM p.mimiciv_hosp.{table} "
                               f"EXCEPT ALL SELECT * FROM n.mimiciv_hosp.{table})").fetchone()[0]
            assert lost == 0, table
            if table in ("admissions", "labevents"):
                assert extra == con.execute(f"SELECT count(*) FROM n.mimiciv_hosp.{table} WHERE hadm_id IN "
                                            f"({', '.join(map(str, hadm))})").fetchone()[0] > 0, table
        assert con.execute("SELECT count(*) FROM n.mimiciv_icu.icustays WHERE hadm_id >= ? AND hadm_id < 20000000",
                           [NOTE_HADM_BASE]).fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM n.mimiciv_hosp.patients").fetchone()[0] == PATIENTS + len(notes)


@pytest.mark.slow  # two CLI processes
def test_data_synth_notes_writes_the_admissions_and_dx_run_says_when_a_database_lacks_them(dbs, tmp_path):
    linked = tmp_path / "linked.duckdb"
    done = subprocess.run([sys.executable, "-m", "clinbench", "data", "synth", "mimic-iv", "--out", str(linked),
                           "--patients", str(PATIENTS), "--seed", str(SEED), "--notes"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "and the demo-notes admissions" in done.stdout
    with duckdb.connect(str(linked), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM mimiciv_hosp.admissions WHERE hadm_id >= ? AND hadm_id < 20000000",
                           [NOTE_HADM_BASE]).fetchone()[0] == 28
    _, plain = dbs  # written without --notes
    done = subprocess.run([sys.executable, "-m", "clinbench", "dx", "run", "--cases", "demo-notes", "--agent", "oracle",
                           "--max-cases", "2", "--jobs", "1", "--mimic-db", str(plain), "--out", str(tmp_path / "c")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    said = " ".join(done.stdout.split())
    assert "holds no admission for 2 of 2 cases' hadm_id: their lab orders are answered from the record" in said
    assert "clinbench data synth mimic-iv --notes" in said
