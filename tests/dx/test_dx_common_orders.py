"""Common emergency and inpatient orders are answered and priced in every demo case, not
refused: a test a clinician orders gets the record's result, or a normal one when the record
does not hold it. Found by a survey: "stool guaiac", "CSF xanthochromia" and "fibrin degradation
products" got "That does not name a test or study I know", "ANA" was refused as vague ("an" +
"a"). Exam manoeuvres ("rectal exam", "visual acuity") are questions, not orders, and are not
listed."""

import pytest

from clinbench.dx.costs import PriceTable
from clinbench.dx.gatekeeper import UNAVAILABLE_REFUSAL, OfflineGatekeeper

ANSWERED_BEFORE = (
    "complete blood count", "basic metabolic panel", "comprehensive metabolic panel", "magnesium", "lipase", "troponin",
    "BNP", "D-dimer", "lactate", "procalcitonin", "blood cultures", "urinalysis", "urine culture",
    "urine pregnancy test", "PT/INR", "PTT", "fibrinogen", "type and screen", "venous blood gas", "arterial blood gas",
    "serum osmolality", "beta-hydroxybutyrate", "ammonia", "TSH", "CK", "haptoglobin", "peripheral smear",
    "serum acetaminophen level", "salicylate level", "serum ethanol", "urine drug screen", "carboxyhemoglobin", "CRP",
    "ESR", "lumbar puncture", "stool culture", "C. difficile toxin", "respiratory viral panel", "electrocardiogram",
    "chest radiograph", "CT head without contrast", "CT abdomen and pelvis with contrast",
    "right upper quadrant ultrasound", "transthoracic echocardiogram", "lower extremity venous duplex")
REFUSED_BEFORE = (
    "stool guaiac", "CSF xanthochromia", "fibrin degradation products", "opening pressure", "ANA",
    "heparin-induced thrombocytopenia antibody", "urine myoglobin", "gonorrhea and chlamydia NAAT", "wet mount",
    "post-void residual", "osmolal gap", "blood type", "influenza A and B", "urine sediment", "transferrin saturation",
    "volatile alcohols", "MRV brain", "tryptase", "Kleihauer-Betke", "G6PD")

# refused as "not available for this patient" (free): a normal result here is one the record contradicts
WITHHELD = [(3, "fibrin degradation products"), (6, "CT abdomen and pelvis with contrast"),
            (7, "CT abdomen and pelvis with contrast"), (10, "stool guaiac"), (18, "lumbar puncture"),
            (18, "CSF xanthochromia"), (18, "opening pressure"), (21, "CT abdomen and pelvis with contrast"),
            (23, "CT abdomen and pelvis with contrast"),  # the record's CT also images the chest (test_dx_region_orders)
            (23, "fibrin degradation products"),
            (29, "CT abdomen and pelvis with contrast"),  # the record's aortic CT angiogram also images the chest
            (29, "fibrin degradation products")]


def test_common_orders_are_answered_and_priced_in_every_demo_case(cases):
    # refused before: 638 of these 2,080 replies (the 20 orders of REFUSED_BEFORE, in 31 or 32 cases each), 1 unpriced
    table = PriceTable.bundled()
    refused, unpriced, withheld = [], [], []
    for case in cases:
        gk = OfflineGatekeeper(case)
        for order in ANSWERED_BEFORE + REFUSED_BEFORE:
            reply = gk.answer("test", order)
            if reply.text == UNAVAILABLE_REFUSAL:  # a normal result the record contradicts (test_dx_implied_results)
                withheld.append((case.case_id, order))
            elif reply.source == "REFUSED":
                refused.append((case.case_id, order))
            elif not table.charge(order, reply.served).matched:
                unpriced.append((case.case_id, order))
    assert len(ANSWERED_BEFORE + REFUSED_BEFORE) * len(cases) == 2080
    assert refused == [] and unpriced == []
    assert withheld == WITHHELD


@pytest.mark.parametrize("order, reply, code, price", [
    ("stool guaiac", "Fecal occult blood test: negative.", "82272", 15.0),
    ("CSF xanthochromia", "CSF xanthochromia: no xanthochromia.", "84311", 35.0),
    ("fibrin degradation products", "Fibrin degradation products: less than 10 micrograms/mL.", "85362", 30.0),
    ("ANA", "Antinuclear antibody: negative at 1:80.", "86038", 35.0),
])
def test_the_named_tests_get_a_normal_result_and_a_price(case_by_id, order, reply, code, price):
    answered = OfflineGatekeeper(case_by_id[1]).answer("test", order)
    priced = PriceTable.bundled().charge(order, answered.served)
    assert (answered.text, answered.source) == (reply, "SYNTHETIC")
    assert (priced.code, priced.price) == (code, price)


def test_a_recorded_result_answers_the_new_names(case_by_id):
    # the record's own result, never a normal one it contradicts
    assert OfflineGatekeeper(case_by_id[17]).answer("test", "opening pressure").text.startswith(
        "Lumbar puncture: opening pressure 36 cmH2O")
    assert OfflineGatekeeper(case_by_id[24]).answer("test", "osmolal gap").text == "Serum osmolality: 244 mOsm/kg."
    assert OfflineGatekeeper(case_by_id[21]).answer("test", "blood type").text == (
        "Type and screen: group B negative, antibody screen negative.")
    # a DIC panel gets the coagulation tests the record holds: case 29's D-dimer, not a normal one
    assert OfflineGatekeeper(case_by_id[29]).answer("test", "DIC panel").text == "DIC panel: D-dimer: 2,900 ng/mL FEU."
