"""Honest orders pay their own price (found by a review of the findings-words fix): an order
that names a test is charged that test's price, a CT without contrast is not served a
recorded CT angiogram, and one analyte is not served a panel that does not name it.
Prices below are the bundled table's, worked out by hand."""

import pytest

from clinbench.dx.cases import demo_cases
from clinbench.dx.costs import PriceTable
from clinbench.dx.gatekeeper import OfflineGatekeeper, same_study_site
from clinbench.dx.run import DxConfig, run_dx
from tests.dx.orders import ordered_test


@pytest.mark.parametrize("case_id, order, price, not_in_reply", [
    # 71250 CT thorax without contrast; was $900, the CT pulmonary angiogram's filling defects; then $550 for a
    # normal result the radiograph's pleural effusion contradicts: now "not available for this patient", free
    (3, "CT chest without contrast", 0.0, "filling defects"),
    # 74177 CT abdomen and pelvis with contrast; was $1,600 (the recorded aortic CTA), then $800 for its whole report,
    # chest included: now "not available for this patient", free (test_dx_region_orders)
    (29, "CT abdomen and pelvis", 0.0, "intimal flap"),
    # 71260 CT thorax with contrast; was $1,600, then $650 for the whole aortic CTA: now refused free
    (29, "Chest CT", 0.0, "intimal flap"),
    # 71260 CT thorax with contrast: case 3's CT pulmonary angiogram ($900) images the chest only and is served
    (3, "Chest CT", 650.0, None),
    # 76705 limited abdominal ultrasound; was $600 (the abdominal ultrasound with Doppler)
    (25, "Ultrasound RUQ", 220.0, None),
    # 82947 glucose, 82962 point-of-care glucose; were $40 and $55 (the BMP and CMP)
    (3, "Glucose", 12.0, "Basic metabolic panel"),
    (25, "Fingerstick glucose", 8.0, "Comprehensive metabolic panel"),
])
def test_the_reviewers_orders_pay_their_own_price(case_by_id, tmp_path, case_id, order, price, not_in_reply):
    event = ordered_test(case_by_id[case_id], tmp_path, order)
    assert event["cost"] == price, (order, event["reply"])
    if not_in_reply:
        assert not_in_reply not in event["reply"]


def test_a_ct_without_contrast_is_not_a_recorded_contrast_study():
    assert not same_study_site("CT chest without contrast", "CT pulmonary angiogram")
    assert not same_study_site("non-contrast CT head", "CT angiography head")
    assert not same_study_site("CT angiography chest", "CT chest without contrast")
    # contrast not said, or the same: still the recorded study (2e901f9)
    assert same_study_site("CT chest with contrast", "CT pulmonary angiogram")
    assert same_study_site("aortic CT angiography", "CT angiography chest abdomen and pelvis")
    assert same_study_site("CT chest without contrast", "CT chest without contrast")


def test_one_analyte_never_gets_a_panel_without_it():
    # "Glucose" got the recorded BMP/CMP in 31 demo cases, in 20 of them a panel with no
    # glucose value, in 16 the very text "Basic metabolic panel" returns
    table = PriceTable.bundled()
    for case in demo_cases():
        gk = OfflineGatekeeper(case)
        for order in ("Glucose", "Fingerstick glucose"):
            r = gk.answer("test", order)
            assert "glucose" in r.text.lower(), (case.case_id, order, r.text)
            assert table.charge(order, r.served).price == {"Glucose": 12.0}.get(order, 8.0)


def test_findings_words_still_pay_the_study_or_get_nothing(case_by_id, tmp_path):
    table = PriceTable.bundled()
    for case_id, order in [(3, "filling defects"), (29, "intimal flap")]:
        r = OfflineGatekeeper(case_by_id[case_id]).answer("test", order)
        assert r.source == "REFUSED" and not r.served
    # an order naming no priced test pays what it was served: the aortic CTA, $1,600
    assert ordered_test(case_by_id[29], tmp_path, "aortic CT angiography")["cost"] == 1600.0
    # a priced test's name with findings words added is not that test (nor, naming a CT, any test of no scanner: it
    # matched the $45 troponin)
    assert table.price("troponin CT filling defects lobe").price == 100.0
    assert not table.names_its_test("troponin CT filling defects lobe")
    assert table.charge("troponin CT filling defects lobe", "CT pulmonary angiogram").price == 900.0
    assert table.names_its_test("Ultrasound RUQ") and table.names_its_test("CT chest without contrast")


def test_ed_workup_costs_what_it_did_before_the_findings_words_fix(tmp_path):
    # 4cc47ea: $45,324 over the 32 demo cases; b1b6581 + 2e901f9 charged $45,753. $43,174 since two of its orders
    # are refused free, their normal result contradicted by the record: case 3's "CT chest without contrast"
    # ($550, "no pleural effusion" against the radiograph's) and case 21's "CT angiography chest abdomen and
    # pelvis" ($1,600, "no acute abnormality in the abdomen or pelvis" against a haemoperitoneum)
    records = run_dx(demo_cases(), DxConfig(agent="ed-workup"), tmp_path / "out")
    assert len(records) == 32
    assert sum(r.cost for r in records) == 43174.0


def test_a_cheap_study_of_another_site_or_kind_never_fetches_the_decisive_one():
    # found by a third review: "ct thoracic spine" got case 3's CT pulmonary angiogram for $500 ("thoracic"
    # read as the chest), "CT heart, calcium scoring" case 29's aortic CTA for $250 (a calcium score is a CT
    # without contrast), and "with contrast" (filler only, which named every test) the CTA for $450
    from clinbench.dx.cases import load_cases
    from clinbench.dx.gatekeeper import OfflineGatekeeper

    cases = {c.case_id: c for c in load_cases("demo")}
    spine = OfflineGatekeeper(cases[3]).answer("test", "ct thoracic spine")
    calcium = OfflineGatekeeper(cases[29]).answer("test", "CT heart, calcium scoring")
    assert "filling defects" not in spine.text and "intimal flap" not in calcium.text
    assert not PriceTable.bundled().names_its_test("with contrast")
    filler = OfflineGatekeeper(cases[29]).answer("test", "with contrast")
    assert "intimal flap" not in filler.text or PriceTable.bundled().charge("with contrast", filler.served).price >= 1600
