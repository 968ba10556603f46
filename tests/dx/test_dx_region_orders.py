"""An imaging order of fewer body regions than a recorded study is not served that study. The offline
gatekeeper cannot cut a report by region, so case 23's "CT chest" got the whole CT of chest, abdomen and
pelvis, its pelvic adnexal mass the diagnosis, for $650 (a chest CT), and case 29's "CT chest" the whole
CT angiogram of chest, abdomen and pelvis ($1,600) for $650. Such an order is refused free as not available,
as a normal result the record contradicts is; an order of the same regions or more is served as before,
and a CT of the abdomen is one of the abdomen and pelvis (the price table's "CT abdomen" is that study)."""

import pytest

from clinbench.dx.gatekeeper import UNAVAILABLE_REFUSAL, images_more, regions
from tests.dx.orders import ordered_test


@pytest.mark.parametrize("order", ["CT chest", "CT chest without contrast", "CT chest with contrast", "CT abdomen",
                                   "CT abdomen and pelvis with contrast", "CT pelvis"])
def test_case_23s_ct_of_fewer_regions_is_refused_free(case_by_id, tmp_path, order):
    # was served "CT chest abdomen and pelvis with contrast: 8 cm complex cystic and solid left adnexal mass ..."
    # for $450-800
    event = ordered_test(case_by_id[23], tmp_path, order)
    assert event["source"] == "REFUSED" and event["cost"] == 0.0
    assert event["reply"] == UNAVAILABLE_REFUSAL
    assert "adnexal" not in event["reply"]


@pytest.mark.parametrize("order", ["CT chest", "chest CT angiogram", "CT abdomen and pelvis", "CTA abdominal aorta"])
def test_case_29s_ct_of_fewer_regions_is_not_the_aortic_angiogram(case_by_id, tmp_path, order):
    # was the whole "CT angiography chest abdomen and pelvis: intimal flap ..." for $650-1,600
    event = ordered_test(case_by_id[29], tmp_path, order)
    assert event["source"] == "REFUSED" and event["cost"] == 0.0
    assert "intimal flap" not in event["reply"]


def test_an_order_of_the_same_regions_or_more_is_still_served(case_by_id, tmp_path):
    for case_id, order, start, cost in [
        (23, "CT chest abdomen and pelvis with contrast", "CT chest abdomen and pelvis with contrast: 8 cm complex", 1300.0),
        (23, "CT chest abdomen pelvis", "CT chest abdomen and pelvis with contrast: 8 cm complex", 1300.0),
        (29, "CT angiography chest abdomen and pelvis", "CT angiography chest abdomen and pelvis: intimal flap", 1600.0),
        (29, "aortic CT angiography", "CT angiography chest abdomen and pelvis: intimal flap", 1600.0),
        # "CT abdomen" is the CT of abdomen and pelvis: case 1's appendicitis
        (1, "CT abdomen", "CT abdomen and pelvis with contrast: the appendix measures", 800.0),
        (1, "CT abdomen and pelvis", "CT abdomen and pelvis with contrast: the appendix measures", 800.0),
        (30, "CT KUB", "CT abdomen and pelvis without contrast: 6 mm radiodense focus", 650.0),
        (3, "CT chest", "CT pulmonary angiogram: filling defects", 650.0),
        (8, "CT head", "CT head without contrast:", 450.0),  # beside the CT angiogram of head and neck
        (25, "RUQ ultrasound", "Abdominal ultrasound: enlarged, diffusely echogenic liver", 220.0),
    ]:
        event = ordered_test(case_by_id[case_id], tmp_path, order)
        assert event["source"] == "REAL" and event["reply"].startswith(start), (case_id, order, event["reply"])
        assert event["cost"] == cost, (case_id, order)


def test_regions_of_a_study():
    assert regions("CT chest") == {"chest"} and regions("CT pulmonary angiogram") == {"chest"}
    assert regions("CT abdomen") == regions("CT KUB") == regions("CT abdomen and pelvis") == {"abdomen", "pelvis"}
    assert regions("CT abdomen only with contrast") == {"abdomen"}
    assert regions("aortic CT angiography") == {"chest", "abdomen", "pelvis"}
    assert regions("CTA abdominal aorta") == {"abdomen", "pelvis"}
    assert regions("Abdominal ultrasound") == regions("Right upper quadrant ultrasound") == {"abdomen"}
    assert regions("Transvaginal pelvic ultrasound") == {"pelvis"}
    # another modality, or a study within the order's regions, is never "more"
    assert not images_more("CT chest abdomen and pelvis with contrast", "Chest radiograph")
    assert not images_more("CT chest without contrast", "CT chest abdomen and pelvis")
    assert images_more("CT angiography head and neck", "CT angiography head")
    # an order imaging another region besides one of the study's: the study's others are still not ordered
    assert images_more("CT chest abdomen and pelvis with contrast", "CT head and chest")
