"""Issue 24: the demo cases in the MIMIC-IV-Note layout (the ``demo-notes`` case set).

Each note case is generated from its demo case. For every test the demo case's record
answers, the note is answered from the record too (REAL), in the note's own tokens
(``Na-138``), and every value it serves is a value the demo case's record states: the
note is the same case in the other layout.
"""

from __future__ import annotations

import re

from clinbench.dx.cases import demo_cases, load_cases
from clinbench.dx.gatekeeper import REAL, OfflineGatekeeper
from clinbench.dx.note_layout import NOTE_ID_OFFSET, note_cases
from clinbench.dx.record import parse_record


def _numbers(text: str) -> set[str]:
    # values, not the digits inside names such as HCO3, pCO2 or Free T4
    return {x.replace(",", "") for x in re.findall(r"(?<![A-Za-z\d.])\d[\d,]*(?:\.\d+)?", text)}


def test_at_least_16_demo_cases_are_notes_with_lab_strings_studies_and_placeholders():
    notes = load_cases("demo-notes")
    assert len(notes) >= 16
    assert len({c.case_id for c in notes} | {c.case_id for c in demo_cases()}) == len(notes) + 32
    text = {c.case_id: c.full_text for c in notes}
    one = text[NOTE_ID_OFFSET + 1]  # appendicitis
    assert "___ 04:50PM BLOOD WBC-15.8* Neuts-84* Hgb-15.2 Plt Ct-265" in one
    assert "___ 04:51PM BLOOD Na-138 K-4.1 Cl-101 HCO3-24 UreaN-14 Creat-0.9 Glucose-104*" in one
    assert "CT ABDOMEN AND PELVIS WITH CONTRAST ___: FINDINGS: the appendix measures 12 mm" in one
    assert "\nBrief Hospital Course:\n" in one and "\nDischarge Diagnosis:\nAcute appendicitis." in one
    assert "___ BLOOD CULTURE no growth at 5 days." in text[NOTE_ID_OFFSET + 9]
    for t in text.values():
        assert "Admission Date:  ___" in t and "\nPertinent Results:\n" in t and "\nChief Complaint:\n" in t


def test_every_test_a_note_holds_is_served_from_it_with_the_demo_version_s_values():
    # ~2 s CPU: 237 orders through two gatekeepers each (28 cases); no smaller set covers every layout form
    demo = {c.case_id: c for c in demo_cases()}
    orders = 0
    for note in note_cases(list(demo.values())):
        case = demo[note.case_id - NOTE_ID_OFFSET]
        demo_gk, note_gk = OfflineGatekeeper(case), OfflineGatekeeper(note)
        recorded = _numbers(" ".join(e.text for e in parse_record(case.full_text, case.case_summary).results))
        for order in case.test_names:
            before = demo_gk.answer("test", order)
            if before.source != REAL:
                continue
            after = note_gk.answer("test", order)
            assert after.source == REAL, (note.case_id, order, after.text)
            served = _numbers(after.text)
            assert served <= recorded, (note.case_id, order, after.text)
            assert served & _numbers(before.text) or not _numbers(before.text), (note.case_id, order, after.text)
            orders += 1
    assert orders >= 200
