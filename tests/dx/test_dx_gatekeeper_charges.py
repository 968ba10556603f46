"""An order that names no test of its own is charged what it was served: a recorded study
never comes back for less than its own price to such an order, and findings words never
fetch a study. An order that names a test pays that test's price."""

from clinbench.dx.costs import PriceTable
from clinbench.dx.gatekeeper import OfflineGatekeeper
from tests.dx.orders import play_order


def test_an_order_naming_its_test_served_a_dearer_recorded_study_pays_its_own_price(case_by_id, tmp_path):
    # Case 3's record holds "CT pulmonary angiogram" (71275, $900). "CT chest" (71260, $650) gets
    # that whole report. It names its own test, a chest CT, and is charged $650 (this test expected
    # $1,600 for case 29's aortic CTA: the overcharge of honest orders a review found; see
    # test_dx_charge_honest_orders.py; case 29's CTA also images the abdomen and pelvis and is no
    # longer served to a chest CT: test_dx_region_orders.py).
    result, event = play_order(case_by_id[3], tmp_path, "CT chest")
    assert event["reply"].startswith("CT pulmonary angiogram: filling defects")
    assert event["cost"] == 650.0 and event["code"] == "71260"
    assert result.cost == 650.0
    # its own name costs its own price
    assert play_order(case_by_id[3], tmp_path, "CT pulmonary angiogram")[0].cost == 900.0
    assert play_order(case_by_id[29], tmp_path, "CT angiography chest abdomen and pelvis")[0].cost == 1600.0


def test_findings_words_do_not_fetch_a_study(case_by_id, tmp_path):
    # "filling defects" returned case 3's CT pulmonary angiogram for $100 (list $900),
    # "intimal flap" case 29's aortic CTA for $100 (list $1,600)
    for case_id, order, finding in [(3, "filling defects", "filling defects in the right lower lobe"),
                                    (29, "intimal flap", "intimal flap beginning")]:
        result, event = play_order(case_by_id[case_id], tmp_path, order)
        assert finding not in event["reply"], order
        assert "no abnormality" not in event["reply"]  # nor a normal "finding" the record contradicts
    # the reply is decided by the words, not the case: the same in a case without the study
    assert (OfflineGatekeeper(case_by_id[1]).answer("test", "filling defects").text
            == OfflineGatekeeper(case_by_id[3]).answer("test", "filling defects").text)


def test_charge_is_the_higher_of_the_order_and_what_it_served_only_for_an_order_naming_no_test():
    table = PriceTable.bundled()
    assert table.price("CT chest").price == 650.0
    # was 1600.0: "CT chest" names its test and pays its price
    assert table.charge("CT chest", "CT angiography chest abdomen and pelvis").price == 650.0
    assert table.charge("aortic CT angiography", "CT angiography chest abdomen and pelvis").price == 1600.0
    assert table.charge("CT angiography chest abdomen and pelvis", "CT chest").price == 1600.0
    assert table.charge("CBC", "").price == 30.0


def test_a_differently_named_study_of_a_recorded_site_gets_the_record_not_a_normal(case_by_id, tmp_path):
    # These orders got an invented normal result that the record contradicts.
    for case_id, order, expect in [
        (29, "aortic CT angiography", "CT angiography chest abdomen and pelvis: intimal flap"),  # was "no abnormality detected"
        (3, "chest CT angiogram", "CT pulmonary angiogram: filling defects"),
        (3, "duplex ultrasound legs", "Lower extremity venous duplex ultrasound: non-compressible"),  # was normal
        (3, "CT chest with contrast", "CT pulmonary angiogram: filling defects"),  # was "no effusion" (the radiograph has one)
    ]:
        r = OfflineGatekeeper(case_by_id[case_id]).answer("test", order)
        assert r.source == "REAL" and r.text.startswith(expect), (order, r.text)
    # charged as what it returned: the aortic CTA $1,600 (the order's own words match no
    # price row: $100)
    assert PriceTable.bundled().price("aortic CT angiography").price == 100.0
    assert play_order(case_by_id[29], tmp_path, "aortic CT angiography")[1]["cost"] == 1600.0
    # case 29's "chest CT angiogram" was a normal CT pulmonary angiogram, then the aortic CTA's whole report, which
    # images the abdomen and pelvis too: now neither, refused free as not available (test_dx_region_orders)
    chest = OfflineGatekeeper(case_by_id[29]).answer("test", "chest CT angiogram")
    assert chest.source == "REFUSED" and "intimal flap" not in chest.text
    # another organ of the same region is not the same study: case 9's renal ultrasound
    # does not answer a right upper quadrant ultrasound
    ruq = OfflineGatekeeper(case_by_id[9]).answer("test", "right upper quadrant ultrasound")
    assert ruq.source == "SYNTHETIC" and "Renal" not in ruq.text
