"""An ultrasound ordered of an organ is not served a recorded ultrasound of the organ's region whose report says
nothing of that organ. The offline gatekeeper cannot cut a report by organ, so case 25's "renal ultrasound",
"kidney ultrasound" and "ultrasound of the kidneys" got the whole "Abdominal ultrasound: enlarged, diffusely
echogenic liver without focal lesion; moderate ascites; spleen 13 cm; no biliary dilatation." for $280, and its
"pancreas ultrasound" for $300: the liver findings (the diagnosis) from a study that would not report them. Such
an order is refused free as not available, as an order of fewer body regions is (test_dx_region_orders.py); an
organ the report speaks of is served as before ("RUQ ultrasound" gets case 25's liver). CT, MRI and radiographs
of an organ image its whole region and are served its study as before."""

import pytest

from clinbench.dx.gatekeeper import UNAVAILABLE_REFUSAL, misses_organ
from tests.dx.orders import ordered_test


@pytest.mark.parametrize("order", ["renal ultrasound", "kidney ultrasound", "ultrasound of the kidneys",
                                   "pancreas ultrasound", "renal Doppler ultrasound", "aorta ultrasound"])
def test_case_25s_ultrasound_of_another_organ_than_the_liver_is_refused_free(case_by_id, tmp_path, order):
    # was "Abdominal ultrasound: enlarged, diffusely echogenic liver ..." for $280 (kidneys), $300 (pancreas), and
    # the Doppler report with "patent hepatic and portal veins" for $600 (renal Doppler) and $500 (aorta duplex)
    event = ordered_test(case_by_id[25], tmp_path, order)
    assert event["source"] == "REFUSED" and event["cost"] == 0.0
    assert event["reply"] == UNAVAILABLE_REFUSAL
    assert "echogenic liver" not in event["reply"]


def test_case_21s_bladder_ultrasound_is_not_the_transvaginal_study(case_by_id, tmp_path):
    # was "Transvaginal pelvic ultrasound: empty uterine cavity with thin endometrium; 3 cm complex mass between the
    # right ovary and uterus ..." (the ectopic pregnancy) for $200
    event = ordered_test(case_by_id[21], tmp_path, "bladder ultrasound")
    assert event["source"] == "REFUSED" and event["cost"] == 0.0
    assert "complex mass" not in event["reply"]


def test_an_ultrasound_of_an_organ_the_report_speaks_of_is_still_served(case_by_id, tmp_path):
    for case_id, order, start, cost in [
        (25, "RUQ ultrasound", "Abdominal ultrasound: enlarged, diffusely echogenic liver", 220.0),
        (25, "liver ultrasound", "Abdominal ultrasound: enlarged, diffusely echogenic liver", 220.0),
        (25, "gallbladder ultrasound", "Abdominal ultrasound: enlarged, diffusely echogenic liver", 220.0),
        (25, "abdominal ultrasound", "Abdominal ultrasound: enlarged, diffusely echogenic liver", 300.0),
        # a right upper quadrant ultrasound that reports the pancreas ("pancreas partly obscured by bowel gas")
        (7, "pancreas ultrasound", "Right upper quadrant ultrasound: numerous small gallstones", 220.0),
        (9, "kidney ultrasound", "Renal ultrasound: mildly enlarged left kidney", 280.0),
        (9, "abdominal ultrasound", "Renal ultrasound: mildly enlarged left kidney", 300.0),
        # a CT of an organ is a CT of its region
        (1, "CT kidneys", "CT abdomen and pelvis with contrast: the appendix measures", 800.0),
    ]:
        event = ordered_test(case_by_id[case_id], tmp_path, order)
        assert event["source"] == "REAL" and event["reply"].startswith(start), (case_id, order, event["reply"])
        assert event["cost"] == cost, (case_id, order)


def test_misses_organ():
    abdominal = "enlarged, diffusely echogenic liver without focal lesion; moderate ascites; no biliary dilatation."
    # an organ order against a region's ultrasound: served only when the report speaks of the organ
    assert misses_organ("Abdominal ultrasound", abdominal, "renal ultrasound")
    assert misses_organ("Abdominal ultrasound", abdominal, "pancreas ultrasound")
    assert not misses_organ("Abdominal ultrasound", abdominal + " Right kidney 11 cm.", "renal ultrasound")
    assert not misses_organ("Abdominal ultrasound", abdominal, "RUQ ultrasound")
    assert not misses_organ("Abdominal ultrasound", abdominal, "ultrasound liver and kidneys")
    # an organ of another region's study, named by the study's name, or an order naming the region: not this rule
    assert misses_organ("Transvaginal pelvic ultrasound", "3 cm complex adnexal mass", "bladder ultrasound")
    assert not misses_organ("Renal ultrasound", "moderate left hydronephrosis", "kidney ultrasound")
    assert not misses_organ("Renal ultrasound", "moderate left hydronephrosis", "abdominal ultrasound")
    # "abdominal" places the aorta: an organ order (test_dx_site_words.py; was read as naming the abdomen)
    assert misses_organ("Abdominal ultrasound", abdominal, "abdominal aorta ultrasound")
    assert not misses_organ("Abdominal ultrasound", abdominal, "thyroid ultrasound")
    # another modality, or a CT of an organ against its region's CT
    assert not misses_organ("Abdominal ultrasound", abdominal, "CT kidneys")
    assert not misses_organ("CT abdomen and pelvis with contrast", "the appendix measures 12 mm", "renal ultrasound")
    assert not misses_organ("CT abdomen and pelvis with contrast", "the appendix measures 12 mm", "CT kidneys")
