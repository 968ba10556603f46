"""A CT without contrast never gets a recorded angiogram: an angiogram's findings are contrast in
the vessels (filling defects, an intimal flap), unseen without it, so the ordered study is one the
record lacks and is answered as such, at its own price. Found by a review: case 29's "CT chest
without contrast" got the aortic CT angiogram's intimal flap for $550 (the angiogram costs $1,600),
through the "CT chest" alias of the reference table's contrast row. A recorded contrast CT that is
no angiogram is another matter: what it shows (an inflamed appendix, diverticulitis, free air)
shows without contrast, so a CT of its site without contrast gets its report at the order's own
price; a normal result would be one the record contradicts."""

import pytest

from clinbench.dx.costs import PriceTable
from clinbench.dx.gatekeeper import OfflineGatekeeper
from tests.dx.orders import ordered_test

# Wordings of a CT without contrast that clinicians type; "no" is a stop word, so four of
# these read as CTs with contrast before
WITHOUT = ("CT {} without contrast", "non-contrast CT {}", "CT {} no contrast", "CT {} (no contrast)",
           "CT {} w/o IV contrast", "CT {} without intravenous contrast", "unenhanced CT {}", "plain CT {}")
SITES = ("head", "chest", "abdomen and pelvis", "chest abdomen and pelvis", "thorax")
# the demo records' angiograms, and their contrast CTs that are none
ANGIOGRAMS = {"CT pulmonary angiogram", "CT angiography head and neck", "CT angiography chest abdomen and pelvis"}
CONTRAST_CTS = {"CT abdomen and pelvis with contrast", "CT chest abdomen and pelvis with contrast"}


def test_case_29s_ct_chest_without_contrast_is_not_the_aortic_angiogram(case_by_id, tmp_path):
    event = ordered_test(case_by_id[29], tmp_path, "CT chest without contrast")
    assert event["reply"] == "CT chest without contrast: no consolidation, mass or nodule; no pleural effusion or pneumothorax."
    assert event["cost"] == 550.0 and event["code"] == "71250"
    # an honest order of the angiogram still gets it; a chest CT (billed with contrast) gets a recorded angiogram of
    # the chest (case 3's), not case 29's, which also images the abdomen and pelvis (test_dx_region_orders)
    assert ordered_test(case_by_id[29], tmp_path, "CT angiography chest abdomen and pelvis")["cost"] == 1600.0
    chest = ordered_test(case_by_id[3], tmp_path, "CT chest")
    assert "filling defects" in chest["reply"] and chest["cost"] == 650.0


def test_no_ct_without_contrast_gets_an_angiogram_in_any_demo_case(cases):
    # was 122 of these 1,376 replies, in 7 cases (1, 3, 14, 20, 23, 29, 31), angiograms and contrast CTs alike
    orders = [form.format(site) for site in SITES for form in WITHOUT] + ["CT KUB", "stone protocol CT", "HRCT chest"]
    replies = [(case.case_id, order, reply) for case in cases
               for order, reply in ((o, OfflineGatekeeper(case).answer("test", o)) for o in orders)]
    assert len(replies) == 1376
    assert [(c, o) for c, o, r in replies if r.served in ANGIOGRAMS] == []
    # cases 3 (pulmonary angiogram) and 29 (aortic angiogram): a chest CT without contrast is a normal one, as the
    # pulmonary embolus and the intimal flap need contrast to be seen; in case 3 a normal one its radiograph's
    # pleural effusion contradicts is refused instead (test_dx_implied_results)
    assert {r.source for c, o, r in replies if c == 29 and "chest" in o} == {"SYNTHETIC"}
    assert {r.source for c, o, r in replies if c == 3 and "chest" in o} == {"REFUSED"}


def test_a_ct_without_contrast_gets_the_recorded_contrast_ct_of_its_site(case_by_id, cases, tmp_path):
    # case 1's "CT abdomen and pelvis without contrast" was "no calculi or hydronephrosis; no acute abnormality",
    # which its contrast CT (an inflamed appendix) contradicts
    event = ordered_test(case_by_id[1], tmp_path, "CT abdomen and pelvis without contrast")
    assert event["reply"].startswith("CT abdomen and pelvis with contrast: the appendix measures")
    assert (event["code"], event["cost"]) == ("74176", 650.0)  # the order's own price, not the contrast CT's $800
    # over the demo: none of these 768 replies got a recorded contrast CT before (120 normal results its report
    # contradicts), each order does now in the 5 cases that hold one (1, 14, 20, 23, 31), but for the abdomen (and
    # pelvis) orders in case 23, whose CT also images the chest: refused as not available (test_dx_region_orders)
    orders = [form.format(site) for site in ("abdomen and pelvis", "abdomen", "chest abdomen and pelvis")
              for form in WITHOUT]
    served = {(case.case_id, order) for case in cases for order in orders
              if OfflineGatekeeper(case).answer("test", order).served in CONTRAST_CTS}
    assert len(orders) * len(cases) == 768
    assert {c for c, _ in served} == {1, 14, 20, 23, 31} and len(served) == 5 * len(orders) - 16
    assert {o for c, o in served if c == 23} == {o for o in orders if "chest" in o}


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
