"""A CT without contrast never gets a recorded contrast study or angiogram: a contrast
acquisition holds no unenhanced images, so the ordered study is one the record lacks and is
answered as such, at its own price. Found by a review: case 29's "CT chest without contrast"
got the aortic CT angiogram's intimal flap for $550 (the angiogram costs $1,600), through the
"CT chest" alias of the reference table's contrast row."""

import pytest

from clinbench.dx.agents import ScriptedAgent
from clinbench.dx.costs import PriceTable
from clinbench.dx.encounter import run_encounter
from clinbench.dx.gatekeeper import OfflineGatekeeper

# Wordings of a CT without contrast that clinicians type; "no" is a stop word, so four of
# these read as CTs with contrast before
WITHOUT = ("CT {} without contrast", "non-contrast CT {}", "CT {} no contrast", "CT {} (no contrast)",
           "CT {} w/o IV contrast", "CT {} without intravenous contrast", "unenhanced CT {}", "plain CT {}")
SITES = ("head", "chest", "abdomen and pelvis", "chest abdomen and pelvis", "thorax")
# the demo records' contrast studies and angiograms
CONTRAST_STUDIES = {"CT abdomen and pelvis with contrast", "CT pulmonary angiogram", "CT angiography head and neck",
                    "CT angiography chest abdomen and pelvis", "CT chest abdomen and pelvis with contrast"}


def play(case, tmp_path, order):
    script = tmp_path / "script.txt"
    script.write_text(f"<test>{order}</test>\n<diagnosis>x</diagnosis>\n")
    result = run_encounter(case, ScriptedAgent(script), OfflineGatekeeper(case), PriceTable.bundled())
    (event,) = [e for e in result.transcript if e["event"] == "test"]
    return event


def test_case_29s_ct_chest_without_contrast_is_not_the_aortic_angiogram(case_by_id, tmp_path):
    event = play(case_by_id[29], tmp_path, "CT chest without contrast")
    assert event["reply"] == "CT chest without contrast: no consolidation, mass or nodule; no pleural effusion or pneumothorax."
    assert event["cost"] == 550.0 and event["code"] == "71250"
    # an honest order of the angiogram, or of a chest CT (billed with contrast), still gets it
    assert play(case_by_id[29], tmp_path, "CT angiography chest abdomen and pelvis")["cost"] == 1600.0
    chest = play(case_by_id[29], tmp_path, "CT chest")
    assert "intimal flap" in chest["reply"] and chest["cost"] == 650.0


def test_no_ct_without_contrast_gets_a_contrast_study_in_any_demo_case(cases):
    # was 122 of these 1,376 replies, in 7 cases (1, 3, 14, 20, 23, 29, 31)
    orders = [form.format(site) for site in SITES for form in WITHOUT] + ["CT KUB", "stone protocol CT", "HRCT chest"]
    served = [(case.case_id, order, reply.served) for case in cases
              for order, reply in ((o, OfflineGatekeeper(case).answer("test", o)) for o in orders)
              if reply.served in CONTRAST_STUDIES]
    assert len(orders) * len(cases) == 1376
    assert served == []


@pytest.mark.parametrize("order, code, price", [
    ("CT head (no contrast)", "70450", 450.0),  # was 70460, with contrast, $550
    ("CT chest no contrast", "71250", 550.0),  # was 71260, $650
    ("CT chest w/o IV contrast", "71250", 550.0),  # was 71260, $650
    ("HRCT chest", "71250", 550.0),  # was 71260, $650
    ("CT chest abdomen pelvis without contrast", "71250+74176", 1100.0),  # was the aortic CT angiogram, $1,600
    ("CT chest abdomen and pelvis without contrast", "71250+74176", 1100.0),  # was 74176, no chest, $650
    ("CT abdomen and pelvis without intravenous contrast", "74176", 650.0),  # was 74177, with contrast, $800
    ("CTA brain", "70496", 850.0),  # was 70450, the head CT without contrast, $450
    ("CT brain with contrast", "70460", 550.0),  # was 70450, $450
])
def test_an_order_is_priced_as_a_study_of_its_own_contrast_phase(order, code, price):
    priced = PriceTable.bundled().price(order)
    assert (priced.code, priced.price) == (code, price)
