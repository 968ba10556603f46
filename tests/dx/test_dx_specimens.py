"""An order naming a specimen other than blood is answered from that specimen's results, never
with the blood value of the same analyte. Found by the refusal survey: "CSF glucose" got case
17's serum glucose (136 mg/dL) although its lumbar puncture records a CSF glucose of 18 mg/dL,
"stool leukocytes" the blood white cell count, "urine ketones" case 5's serum
beta-hydroxybutyrate, and "sodium" case 24's urine sodium (62 mmol/L; its blood sodium is 116)."""

import pytest

from clinbench.dx.gatekeeper import OfflineGatekeeper
from clinbench.dx.testnames import concept_of_order

FLUID_ORDERS = ("CSF glucose", "CSF protein", "CSF white cell count", "CSF lactate", "CSF cell count", "urine sodium",
                "urine glucose", "urine ketones", "urine potassium", "urine creatinine", "stool leukocytes",
                "fecal leukocytes", "synovial fluid glucose", "synovial fluid white cell count",
                "ascitic fluid albumin", "ascitic fluid cell count", "pleural fluid LDH", "pleural fluid protein",
                "pleural fluid glucose")
BLOOD_RESULTS = ("Complete blood count", "Basic metabolic panel", "Comprehensive metabolic panel", "Serum lactate",
                 "Serum beta-hydroxybutyrate", "Lactate dehydrogenase", "Liver function tests")


@pytest.mark.parametrize("case_id, order, reply", [
    (17, "CSF glucose", "Glucose: 18 mg/dL with simultaneous serum glucose 136 mg/dL."),  # was "Glucose: 136 mg/dL."
    (17, "CSF protein", "Protein: 312 mg/dL."),  # was "CSF protein: no abnormality detected."
    (17, "CSF white cell count", "White cells: 2,850 per microlitre with 92% neutrophils."),  # was the blood count's
    # was "Serum beta-hydroxybutyrate: 7.2 mmol/L ..."; billed as the urinalysis, it gets the urinalysis
    (5, "urine ketones", "Urinalysis: glucose 4+, ketones 3+, no leukocyte esterase, no nitrite."),
    (24, "sodium", "Sodium: 116 mmol/L."),  # was "Urine sodium: 62 mmol/L."
    (24, "urine sodium", "Urine sodium: 62 mmol/L."),
    (25, "ascitic fluid cell count", "Ascitic white cells: 120 per microlitre."),  # was "no abnormality detected"
])
def test_a_specimen_gets_its_own_result(case_by_id, case_id, order, reply):
    assert OfflineGatekeeper(case_by_id[case_id]).answer("test", order).text == reply


def test_no_order_of_another_specimen_gets_a_blood_result_in_any_demo_case(cases):
    # was 275 of these 640 replies (the 19 orders below, and "sodium" given a urine sodium)
    wrong = []
    for case in cases:
        gk = OfflineGatekeeper(case)
        for order in FLUID_ORDERS:
            reply = gk.answer("test", order)
            if reply.source == "REAL" and reply.matched in BLOOD_RESULTS:
                wrong.append((case.case_id, order, reply.text))
        if "urine" in gk.answer("test", "sodium").text.lower():
            wrong.append((case.case_id, "sodium"))
    assert (len(FLUID_ORDERS) + 1) * len(cases) == 640
    assert wrong == []


def test_the_synonym_table_never_reads_another_specimen_as_blood():
    # the grounded gatekeeper asks the same table which labevents answer an order
    assert [concept_of_order(o) for o in ("CSF glucose", "urine sodium", "stool leukocytes", "pleural fluid LDH")] \
        == [None, None, None, None]
    assert [concept_of_order(o) for o in ("glucose", "serum sodium", "UA", "urine dipstick", "LDH")] \
        == ["glucose", "sodium", "urinalysis", "urinalysis", "lactate dehydrogenase"]
