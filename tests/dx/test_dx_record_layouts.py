"""Issue 24: the offline gatekeeper never invents what the record holds, in four layouts.

For every test a record holds, ordered under the names clinicians use, the reply is the
record's (REAL) and contains the record's own words; a test stated only as "normal" or
"negative" (a panel, or the panel an analyte belongs to) gets that statement, never
invented numbers; only what the record lacks is synthesized, and the transcript says so.
Before this change 20 of the 51 orders below were answered from the record (31 synthesized
or wrong), and the hypertrophic cardiomyopathy case's ECG and echocardiogram got the
record's whole results block or invented normal findings.
"""

from __future__ import annotations

import re

import pytest

from clinbench.dx.costs import PriceTable
from clinbench.dx.encounter import run_encounter
from clinbench.dx.gatekeeper import REAL, SYNTHETIC, OfflineGatekeeper
from tests.dx.record_layouts import (FREE_HOLDS, MIMIC_HOLDS, STATED_NORMAL, TEST_RESULTS_HOLDS,
                                     free_paragraphs_case, mimic_note_case, results_heading_case)

LAYOUTS = {"mimic_note": (mimic_note_case, MIMIC_HOLDS), "test_results": (results_heading_case, TEST_RESULTS_HOLDS),
           "free_paragraphs": (free_paragraphs_case, FREE_HOLDS)}


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.slow
def test_every_test_the_record_holds_is_served_in_the_record_s_words(layout):
    make, holds = LAYOUTS[layout]
    gk = OfflineGatekeeper(make())
    for order, words in holds.items():
        reply = gk.answer("test", order)
        assert reply.source == REAL, (layout, order, reply)
        missing = [w for w in words if w not in reply.text]
        assert not missing, (layout, order, reply.text)


def test_the_demo_layout_serves_every_recorded_result_line(cases):
    checked = 0
    for case in cases:
        gk = OfflineGatekeeper(case)
        in_results = False
        for line in case.full_text.splitlines():
            if re.fullmatch(r"[A-Z][a-z ]+:", line):
                in_results = line in ("Pertinent results:", "Imaging:")
                continue
            m = re.fullmatch(r"([^:]{2,60}): (.+)", line)
            if not (in_results and m):
                continue
            reply = gk.answer("test", m.group(1))
            value = re.sub(r"^Findings:\s*", "", m.group(2), flags=re.I)
            first = re.split(r"[,;]|\. |\bImpression\b", value)[0].strip().rstrip(".")
            assert reply.source == REAL, (case.case_id, line, reply)
            assert reply.blocked or first in reply.text, (case.case_id, line, reply.text)
            checked += 1
    assert checked >= 200


@pytest.mark.slow
def test_the_hypertrophic_cardiomyopathy_record_is_served_not_contradicted():
    gk = OfflineGatekeeper(results_heading_case())
    ecg, echo = gk.answer("test", "ECG"), gk.answer("test", "echocardiogram")
    assert ecg.text == "ECG: Normal sinus rhythm with possible left ventricular hypertrophy"
    assert echo.text == "Echocardiogram: Left ventricular hypertrophy with asymmetrical septal thickening"
    assert gk.answer("test", "CBC").text == "Complete Blood Count: Normal"
    assert "Impression" not in gk.answer("test", "cardiac MRI").text


@pytest.mark.parametrize("layout", list(STATED_NORMAL))
def test_a_test_the_record_calls_normal_or_negative_is_never_given_invented_values(layout):
    gk = OfflineGatekeeper(LAYOUTS[layout][0]())
    for order in STATED_NORMAL[layout]:
        reply = gk.answer("test", order)
        assert reply.source == REAL, (order, reply)
        assert re.search(r"\b(normal|negative)\b", reply.text, re.I) and not re.search(r"\d", reply.text), reply


def test_a_panel_returns_the_components_the_record_holds():
    gk = OfflineGatekeeper(mimic_note_case())
    bmp = gk.answer("test", "BMP").text
    assert bmp.startswith("Basic metabolic panel: ")
    assert all(t in bmp for t in ("Na-137", "K-4.1", "Cl-101", "HCO3-24", "UreaN-18", "Creat-0.9", "Glucose-124*"))
    assert "Na-139" not in bmp and "ALT-25" not in bmp  # the admission values, and only the panel's
    assert "Glucose-NEG" not in gk.answer("test", "glucose").text  # a urine result is not the blood glucose


def test_only_what_the_record_lacks_is_synthesized_and_the_transcript_says_so():
    case = mimic_note_case()

    class Orders:
        name = model = "orders"

        def start(self, summary, instructions):
            self.turns = iter(["<test>hemoglobin</test><test>TSH</test>", "<diagnosis>sepsis</diagnosis>"])

        def turn(self, observation):
            return next(self.turns)

    result = run_encounter(case, Orders(), OfflineGatekeeper(case), PriceTable.bundled(), max_turns=5)
    tests = {e["content"]: e for e in result.transcript if e.get("kind") == "test" or "source" in e}
    assert tests["hemoglobin"]["source"] == REAL and "Hgb-11.8*" in tests["hemoglobin"]["reply"]
    assert tests["TSH"]["source"] == SYNTHETIC
    assert re.fullmatch(r"Thyroid stimulating hormone: [^:]+\.", tests["TSH"]["reply"])
