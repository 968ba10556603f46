"""The offline gatekeeper: record answers, refusals, synthetic normal results."""

import re

import pytest

from clinbench.dx.gatekeeper import (REAL, REFUSED, SYNTHETIC, UNAVAILABLE_REFUSAL, OfflineGatekeeper, find_normal,
                                     images_more, normal_results)


@pytest.mark.slow
def test_every_listed_test_of_every_demo_case_is_answered_from_the_record(cases):
    for c in cases:
        gk = OfflineGatekeeper(c)
        for name in c.test_names:
            r = gk.answer("test", name)
            assert r.source == REAL, (c.case_id, name, r)
            assert not r.blocked and len(r.text) > 10


def test_abbreviations_and_analytes(case_by_id):
    gk = OfflineGatekeeper(case_by_id[1])
    assert gk.answer("test", "CBC").text.startswith("Complete blood count: white cell count 15.8")
    assert gk.answer("test", "hemoglobin").text == "Haemoglobin: 15.2 g/dL."  # the shape of every result
    ct = gk.answer("test", "CT abd/pelvis w contrast")
    assert ct.source == REAL and "12 mm" in ct.text
    assert "impression" not in ct.text.lower()  # impressions are withheld


@pytest.mark.parametrize("order", ["blood work", "Bloods", "labs", "everything", "all tests", "full workup",
                                   "imaging", "routine labs please", "a scan", "test for infection",
                                   "rule out something serious"])
def test_vague_orders_are_refused(case_by_id, order):
    r = OfflineGatekeeper(case_by_id[2]).answer("test", order)
    assert r.source == REFUSED
    assert "specific" in r.text or "specify" in r.text


def test_modality_without_body_part_is_refused(case_by_id):
    r = OfflineGatekeeper(case_by_id[2]).answer("test", "CT")
    assert r.source == REFUSED and "body part" in r.text


def test_uncovered_test_gets_a_plausible_normal_value_with_units(case_by_id):
    gk = OfflineGatekeeper(case_by_id[2])  # the STEMI case has no lipase
    r = gk.answer("test", "serum lipase")
    assert r.source == SYNTHETIC
    m = re.fullmatch(r"Lipase: (\d+) U/L\.", r.text)  # "Name: result." like a recorded one
    assert m and 20 <= int(m.group(1)) <= 45
    assert gk.answer("test", "serum lipase").text == r.text  # same case, same value
    tsh = gk.answer("test", "TSH")
    value = float(re.search(r"([\d.]+) mIU/L", tsh.text).group(1))
    assert tsh.source == SYNTHETIC and 1.0 <= value <= 3.0
    assert "synthetic" not in (r.text + tsh.text).lower()


def test_normal_table_rows_render_numbers_inside_ranges():
    rows = normal_results()
    assert len(rows) >= 80
    for row in rows:
        text = row.render("seed")
        assert "{" not in text and "}" not in text, row.test
    assert find_normal("CT head") is not None and find_normal("quantum flux assay") is None


def test_questions_reach_history_and_examination(case_by_id):
    gk = OfflineGatekeeper(case_by_id[3])
    assert "long-haul trip" in gk.answer("question", "Has she travelled recently?").text
    assert "contraceptive" in gk.answer("question", "What medications does she take?").text
    vitals = gk.answer("question", "What are her vital signs?")
    assert vitals.source == REAL and "oxygen saturation 91%" in vitals.text
    assert gk.answer("question", "What is the diagnosis?").source == REFUSED
    assert gk.answer("question", "What was the D-dimer?").source == REFUSED
    other = gk.answer("question", "Does she keep any exotic pets?")
    assert other.source == SYNTHETIC


@pytest.mark.slow
def test_discharge_summary_layout_with_withheld_sections():
    # A note laid out like a hospital discharge summary (text written for this test).
    from clinbench.dx.cases import Case

    summary = "A 50-year-old woman with two days of right flank pain."
    note = "\n".join([
        summary, "", "Service: UROLOGY", "Attending: ___",
        "Chief Complaint:", "Flank pain", "Major Surgical or Invasive Procedure:", "Cystoscopy and left stent placement",
        "History of Present Illness:", "Two days of colicky right flank pain radiating to the groin.",
        "Social History:", "Works as a gardener. Never smoked.",
        "Physical Exam:", "Vitals: T 37.0 HR 92 BP 140/85. Right CVA tenderness.",
        "Pertinent Results:", "Hgb-13.1 Creat-1.4 WBC-9.8",
        "Brief Hospital Course:", "Taken for stent placement after CT confirmed the obstruction.",
        "Medications on Admission:", "Lisinopril 10 mg daily",
        "Discharge Diagnosis:", "Obstructing right ureteral stone",
    ])
    case = Case(case_id=900, mimic_note_id="x", final_diagnosis="Obstructing right ureteral stone",
                case_title="x", case_summary=summary, full_text=note, estimated_clinician_visits=1,
                tests=[{"name": "CT abdomen"}], case_sets=["test"])
    gk = OfflineGatekeeper(case)
    assert "gardener" in gk.answer("question", "What is her job?").text
    assert "Lisinopril" in gk.answer("question", "What medications does she take?").text
    assert gk.answer("test", "hemoglobin").text == "Hemoglobin: Hgb-13.1."  # the record's own words
    creat = gk.answer("test", "creatinine")
    assert creat.text == "Creatinine: Creat-1.4." and creat.source == "REAL"
    served = " ".join(gk.answer("question", q).text for q in
                      ["What service is she on?", "Any procedures?", "Was a stent placed?", "What happened in hospital?"])
    assert "UROLOGY" not in served and "stent" not in served.lower()


@pytest.mark.slow
def test_other_names_of_a_recorded_test_get_the_record_not_a_normal_value(cases):
    # Ordering a recorded test under any name the reference table gives it must return the
    # record's result: a synthetic normal value there would contradict the case.
    from clinbench.dx.matching import name_score

    checked = 0
    for c in cases:
        gk = OfflineGatekeeper(c)
        for entry in gk.named:
            for row in normal_results():
                if max(name_score(n, entry.name) for n in row.names()) < 88:
                    continue
                for alias in row.names():
                    r = gk.answer("test", alias)
                    checked += 1
                    if images_more(entry.name, alias):
                        # an order of fewer body regions ("ct angiogram head", a name of the head and neck row) is not
                        # served the study: another recorded study of its regions, or refused, never a normal value
                        assert r.served != entry.name, (c.case_id, entry.name, alias, r.text)
                        assert r.source == REAL or r.text == UNAVAILABLE_REFUSAL, (c.case_id, entry.name, alias, r.text)
                        continue
                    assert r.source == REAL, (c.case_id, entry.name, alias, r.text)
    assert checked > 300


@pytest.mark.parametrize("case_id,order,expect", [
    (2, "cardiac catheterization", "Coronary angiography:"), (8, "MRI head", "MRI brain:"),
    (17, "CSF analysis", "Lumbar puncture:"), (27, "thyroid function tests", "Thyroid function tests: Thyroid stimulating hormone: less than 0.01"),
    (12, "NT-proBNP", "Brain natriuretic peptide:"), (30, "CT KUB", "CT abdomen and pelvis without contrast:"),
    (29, "CT aortogram", "CT angiography chest abdomen and pelvis:"), (3, "leg ultrasound", "Lower extremity venous"),
])
def test_differently_worded_orders_reach_the_recorded_result(case_by_id, case_id, order, expect):
    r = OfflineGatekeeper(case_by_id[case_id]).answer("test", order)
    assert r.source == REAL and r.text.startswith(expect)


def test_a_wound_culture_is_not_answered_with_the_blood_cultures(case_by_id):
    r = OfflineGatekeeper(case_by_id[4]).answer("test", "wound culture")
    assert r.source == SYNTHETIC and "pneumoniae" not in r.text


def test_bedside_measurements_come_from_the_examination(case_by_id):
    r = OfflineGatekeeper(case_by_id[11]).answer("test", "pulse oximetry")
    assert r.source == REAL and r.text == "Oxygen saturation: 84% on room air."


def test_question_wording_reaches_the_note(case_by_id):
    gk = OfflineGatekeeper(case_by_id[8])
    assert gk.answer("question", "Is he on anticoagulation?").text == "No anticoagulant or antiplatelet."
    assert gk.answer("question", "Is he taking any blood thinners?").text == "No anticoagulant or antiplatelet."


def test_questions_the_note_does_not_cover_are_answered_as_not_reported(case_by_id):
    gk = OfflineGatekeeper(case_by_id[1])
    assert gk.answer("question", "Any chest pain?").source == SYNTHETIC
    nv = gk.answer("question", "Any nausea or vomiting?")  # either part covered is enough
    assert nv.source == REAL and "vomited once" in nv.text
    assert gk.answer("question", "When did the pain start?").text.startswith("The patient was well until the evening")
    exam = gk.answer("question", "Examine the chest.")
    assert exam.source == SYNTHETIC and exam.text == "On examination that is unremarkable."
