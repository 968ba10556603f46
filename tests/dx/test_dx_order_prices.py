"""What an order costs, and which report it gets, for orders agents write that matched no price row or a wrong one.
Found by a grid of 170 orders x 32 demo cases (the served report and the charge of each) and by records whose
studies are named as hospitals name them.

An ultrasound of an abdominal organ or quadrant no row names ("LUQ ultrasound", "left lower quadrant ultrasound",
"pancreas ultrasound", "appendix ultrasound") was the $100 of an unmatched order: it is the limited abdominal
ultrasound (76705, "one organ or quadrant", $220), priced as its region's study is, so it never reaches the right
upper quadrant's study through their shared code. A non-vascular ultrasound of an arm ("arm ultrasound", "upper
extremity ultrasound") was the arm venous duplex ($400, a vascular study): it is the limited extremity ultrasound
(76882, $180), a joint's the complete joint ultrasound (76881, $250; "hip ultrasound", "shoulder ultrasound" were $100),
while "arm venous duplex" and "upper extremity Doppler" (was $100) are the duplex ($400). A bare "leg ultrasound"
stays the venous duplex ($550), as the price table names it. An "aorta ultrasound" was the aortic duplex ($500): it
is the limited retroperitoneal ultrasound (76775, $200, "e.g. aorta"), with a normal result of its own.

Two studies billed under one code are not one study when they image other sites: a code is billed for several
("upper extremity venous duplex" got a record's "Unilateral leg venous duplex" of a popliteal thrombus, 93971;
"bladder ultrasound" and "aorta ultrasound" a "Limited renal ultrasound", 76775). A recorded ultrasound named by a
quadrant and its region is that quadrant's ("LUQ ultrasound" got "Limited abdominal ultrasound (right upper
quadrant): multiple gallstones ..." for $300)."""

from __future__ import annotations

import pytest

from clinbench.dx.costs import PriceTable
from clinbench.dx.gatekeeper import SITE_REFUSAL, OfflineGatekeeper
from tests.dx.orders import ordered_test


def _with_study(case, old_start: str, line: str):
    """The case with its recorded study starting ``old_start`` replaced by ``line`` (a record naming it otherwise)."""
    lines = case.full_text.split("\n")
    (i,) = [i for i, text in enumerate(lines) if text.startswith(old_start)]
    lines[i] = line
    return case.model_copy(update={"full_text": "\n".join(lines)})


QUADRANTS = ["LUQ ultrasound", "LLQ ultrasound", "left upper quadrant ultrasound", "left lower quadrant ultrasound",
             "ultrasound LUQ", "RLQ ultrasound", "spleen ultrasound", "pancreas ultrasound", "appendix ultrasound"]


@pytest.mark.parametrize("order", QUADRANTS)
def test_an_abdominal_organ_or_quadrant_ultrasound_is_the_limited_abdominal_ultrasound(order):
    # was unmatched, $100
    priced = PriceTable.bundled().price(order)
    assert (priced.code, priced.price) == ("76705", 220.0)
    # priced as its region's study: no billing code, so the record's right upper quadrant study is never "the
    # same procedure"
    assert priced.by_region


@pytest.mark.parametrize("order", ["LUQ ultrasound", "LLQ ultrasound", "left upper quadrant ultrasound",
                                   "left lower quadrant ultrasound"])
@pytest.mark.parametrize("case_id", [6, 7])
def test_a_left_quadrant_is_charged_as_an_ultrasound_and_never_gets_the_gallstones(case_by_id, tmp_path, case_id,
                                                                                   order):
    event = ordered_test(case_by_id[case_id], tmp_path, order)
    assert "gallstones" not in event["reply"] and not event["reply"].startswith("Right upper quadrant")
    assert event["cost"] in (0.0, 220.0)  # $100 before; refused free or charged as the limited study
    # the right upper quadrant still gets its study at the same price
    event = ordered_test(case_by_id[case_id], tmp_path, "RUQ ultrasound")
    assert event["reply"].startswith("Right upper quadrant ultrasound:") and event["cost"] == 220.0


def test_a_left_quadrant_is_charged_220_where_the_record_has_no_abdominal_study(case_by_id, tmp_path):
    for order in ("LUQ ultrasound", "left lower quadrant ultrasound", "appendix ultrasound"):
        event = ordered_test(case_by_id[2], tmp_path, order)  # a myocardial infarction: no abdominal imaging
        assert (event["source"], event["cost"]) == ("SYNTHETIC", 220.0), order  # was $100


@pytest.mark.parametrize("name", ["Limited abdominal ultrasound (right upper quadrant)",
                                  "Right upper quadrant ultrasound", "Gallbladder ultrasound",
                                  "Liver or gallbladder ultrasound (single organ)"])
def test_a_left_quadrant_never_gets_a_right_upper_quadrant_study_however_it_is_named(case_by_id, name):
    # a report of the right upper quadrant that mentions the spleen, as such reports do
    case = _with_study(case_by_id[6], "Right upper quadrant ultrasound:",
                       f"{name}: multiple gallstones with a thickened gallbladder wall and pericholecystic fluid; "
                       "common bile duct 4 mm; spleen 10 cm.")
    gk = OfflineGatekeeper(case)
    for order in ("LUQ ultrasound", "left upper quadrant ultrasound", "LLQ ultrasound",
                  "left lower quadrant ultrasound", "RLQ ultrasound"):
        reply = gk.answer("test", order)
        # was "Limited abdominal ultrasound (right upper quadrant): multiple gallstones ..." for $300 (its name's
        # "abdominal" made it a study of the whole abdomen)
        assert "gallstones" not in reply.text and not reply.served, (name, order)
    assert "gallstones" in gk.answer("test", "RUQ ultrasound").text


@pytest.mark.parametrize("order, code, price", [
    ("arm ultrasound", "76882", 180.0),  # was 93971, the arm venous duplex, $400
    ("upper extremity ultrasound", "76882", 180.0),  # was the same duplex
    ("ultrasound of the arm", "76882", 180.0),  # was the same duplex
    ("forearm ultrasound", "76882", 180.0),  # was unmatched, $100
    ("left arm ultrasound", "76882", 180.0),  # was unmatched, $100
    ("hand ultrasound", "76882", 180.0),  # was unmatched, $100
    ("shoulder ultrasound", "76881", 250.0),  # was unmatched, $100
    ("hip ultrasound", "76881", 250.0),  # was unmatched, $100
    ("wrist ultrasound", "76881", 250.0),  # was unmatched, $100
    ("knee ultrasound", "76881", 250.0), ("extremity ultrasound", "76882", 180.0),
    # the vascular studies of the arm keep the duplex price
    ("arm venous duplex", "93971", 400.0), ("upper extremity venous duplex", "93971", 400.0),
    ("upper extremity Doppler", "93971", 400.0),  # was unmatched, $100
    ("arm Doppler", "93971", 400.0),  # was unmatched, $100
    ("upper extremity arterial duplex", "93931", 400.0),  # was unmatched, $100
    # a leg's ultrasound is the venous duplex, as the table names it; Doppler orders keep their rows
    ("leg ultrasound", "93970", 550.0), ("lower extremity ultrasound", "93970", 550.0),
    ("bilateral leg ultrasound", "93970", 550.0),  # was 93925, the arterial duplex
    ("leg Doppler", "93970", 550.0), ("DVT ultrasound", "93970", 550.0),
    ("lower extremity arterial Doppler", "93925", 550.0), ("carotid ultrasound", "93880", 500.0),
    ("thyroid Doppler", "76536", 250.0), ("ovarian Doppler", "76830", 280.0), ("liver Doppler", "93975", 600.0),
    # an aorta's ultrasound is the limited retroperitoneal study, its duplex the duplex
    ("aorta ultrasound", "76775", 200.0),  # was 93978, the aortic duplex, $500
    ("abdominal aorta ultrasound", "76775", 200.0),  # was 76700, the complete abdominal ultrasound, $300
    ("aorta Doppler", "93978", 500.0), ("aortic duplex", "93978", 500.0),
])
def test_an_ultrasound_is_priced_as_what_it_images(order, code, price):
    priced = PriceTable.bundled().price(order)
    assert (priced.code, priced.price) == (code, price)


@pytest.mark.parametrize("case_id", [3, 16, 23])
def test_an_arm_ultrasound_is_no_vascular_study_and_a_leg_ultrasound_still_is(case_by_id, tmp_path, case_id):
    event = ordered_test(case_by_id[case_id], tmp_path, "arm ultrasound")
    assert event["cost"] == 180.0 and "vein" not in event["reply"]  # was $400
    event = ordered_test(case_by_id[case_id], tmp_path, "upper extremity Doppler")
    assert event["cost"] == 400.0 and not event["reply"].startswith("Lower extremity")  # was $100
    event = ordered_test(case_by_id[case_id], tmp_path, "leg ultrasound")
    assert event["reply"].startswith("Lower extremity venous duplex ultrasound:") and event["cost"] == 550.0


def test_a_code_billed_for_several_sites_does_not_make_two_studies_one(case_by_id, tmp_path):
    # 93971 is a leg's unilateral duplex and an arm's duplex
    case = _with_study(case_by_id[23], "Lower extremity venous duplex ultrasound:",
                       "Unilateral leg venous duplex: non-compressible left common femoral and popliteal veins with "
                       "intraluminal thrombus.")
    gk = OfflineGatekeeper(case)
    for order in ("upper extremity venous duplex", "arm venous duplex"):
        # was "Unilateral leg venous duplex: non-compressible ..." for $400
        assert "popliteal" not in gk.answer("test", order).text, order
    assert "popliteal" in gk.answer("test", "leg venous duplex").text
    # 76775, the limited retroperitoneal ultrasound, is a kidney's, a bladder's and the aorta's
    case = _with_study(case_by_id[9], "Renal ultrasound:",
                       "Limited renal ultrasound: mildly enlarged left kidney with moderate hydronephrosis.")
    gk = OfflineGatekeeper(case)
    for order in ("bladder ultrasound", "aorta ultrasound"):
        # was "Limited renal ultrasound: mildly enlarged left kidney ..." for $200 (bladder)
        assert "hydronephrosis" not in gk.answer("test", order).text, order
    assert "hydronephrosis" in gk.answer("test", "renal ultrasound").text


def test_an_aorta_ultrasound_gets_an_aortas_result(case_by_id, tmp_path):
    event = ordered_test(case_by_id[1], tmp_path, "abdominal aorta ultrasound")
    # was "Abdominal ultrasound: normal liver, gallbladder, kidneys, spleen and aorta." for $300
    assert event["reply"].startswith("Aorta ultrasound: abdominal aorta of normal calibre") and event["cost"] == 200.0
    # not where the record has an aortic dissection
    event = ordered_test(case_by_id[29], tmp_path, "aorta ultrasound")
    assert (event["source"], event["cost"]) == ("REFUSED", 0.0)


# --- angiograms, the trauma ultrasound, point-of-care studies, and other orders the audit found -----------------

@pytest.mark.parametrize("order, code, price", [
    # a CT or MR angiogram is never a catheter study, nor the other scanner's
    ("mesenteric CT angiography", "74174", 1000.0),  # was 75726, the catheter mesenteric angiogram, $3,500
    ("CTA mesenteric", "74174", 1000.0),  # was the same catheter study
    ("cerebral CT angiogram", "70496", 850.0),  # was 36224, the catheter cerebral angiogram, $5,500
    ("CT cerebral angiography", "70496", 850.0),  # was unmatched, $100
    ("CT venography", "70496", 850.0),  # was 75820, the catheter venogram of a limb, $900
    ("MRA brain", "70544", 1000.0),  # was 70496, the CT angiogram of the head, $850
    # an angiogram is not the contrast CT of its region; "angiogram" and "angiography" are one word
    ("CT angiogram abdomen and pelvis", "74174", 1000.0),  # was 74177, the CT abdomen and pelvis, $800
    ("CT abdomen and pelvis angiogram", "74174", 1000.0),  # was the same
    ("CT angiography kidneys", "74174", 1000.0),  # was unmatched, $100 (a CT angiogram of its region)
    ("carotid CTA", "70498", 850.0),  # was unmatched, $100
    ("CTA lower extremity", "73706", 900.0),  # was unmatched, $100 (new row)
    ("CTA head and neck", "70496+70498", 1700.0),  # was 70498, the neck alone, $850
    ("MRI abdomen and pelvis", "74181+72195", 2000.0),  # was 74181, the abdomen alone, $1,000
    # what must not change
    ("mesenteric angiogram", "75726", 3500.0), ("cerebral angiogram", "36224", 5500.0),
    ("coronary angiogram", "93458", 6500.0), ("CT coronary angiography", "75574", 1200.0),
    ("pulmonary angiogram", "71275", 900.0), ("CT pulmonary angiogram", "71275", 900.0),
    ("CTA head", "70496", 850.0), ("CTA neck", "70498", 850.0), ("CT aortogram", "71275+74174", 1600.0),
    ("CT abdomen and pelvis", "74177", 800.0), ("MRCP", "74181", 1000.0), ("ERCP", "43260", 2800.0),
    ("contrast venogram", "75820", 900.0), ("MR angiography head", "70544", 1000.0),
])
def test_an_angiogram_is_priced_as_its_scanners(order, code, price):
    priced = PriceTable.bundled().price(order)
    assert (priced.code, priced.price) == (code, price)


def test_a_ct_or_mr_angiogram_never_gets_a_catheter_angiogram(case_by_id, tmp_path):
    # case 18 has a CT angiogram of head and neck and a catheter cerebral angiogram of the aneurysm
    for order in ("cerebral CT angiogram", "MRA head", "MRA brain", "MR angiography head"):
        event = ordered_test(case_by_id[18], tmp_path, order)
        # "cerebral CT angiogram" was "Cerebral digital subtraction angiography: 7 mm saccular aneurysm ..." for
        # $5,500, through the catheter study's billing code
        assert not event["reply"].startswith("Cerebral digital subtraction angiography"), order
    # nor a normal result beside case 8's occluded middle cerebral artery (was "no abnormality detected", $5,500)
    event = ordered_test(case_by_id[8], tmp_path, "cerebral CT angiogram")
    assert "no abnormality" not in event["reply"] and event["cost"] == 0.0
    # the recorded CT angiogram of head and neck, ordered by its name, costs both studies
    event = ordered_test(case_by_id[18], tmp_path, "CTA head and neck")
    assert event["reply"].startswith("CT angiography head and neck: 7 mm lobulated aneurysm")
    assert event["cost"] == 1700.0  # was $850


@pytest.mark.parametrize("order", ["FAST exam", "FAST scan", "FAST ultrasound", "eFAST"])
def test_the_trauma_ultrasound_is_a_study_of_its_own(case_by_id, tmp_path, order):
    priced = PriceTable.bundled().price(order)
    # "FAST ultrasound" was 76641, the breast ultrasound ($250), by its spelling; "FAST exam" an unknown test
    assert (priced.code, priced.price) == ("76705+93308", 670.0)
    event = ordered_test(case_by_id[2], tmp_path, order)
    assert event["reply"].startswith("Focused assessment with sonography for trauma: no free fluid")
    assert event["cost"] == 670.0
    # never a normal result where the record has free fluid (case 21's ruptured ectopic pregnancy) or ascites
    for case_id in (21, 25):
        event = ordered_test(case_by_id[case_id], tmp_path, order)
        assert (event["source"], event["cost"]) == ("REFUSED", 0.0), (case_id, order)


@pytest.mark.parametrize("order", ["point of care ultrasound", "POCUS", "bedside ultrasound", "portable ultrasound"])
def test_where_an_ultrasound_is_done_names_no_site(case_by_id, order):
    # "point of care ultrasound" was case 26's "Point-of-care lung ultrasound: absent lung sliding ..." (the
    # pneumothorax) for $200, "POCUS" a $450 focused cardiac ultrasound
    reply = OfflineGatekeeper(case_by_id[26]).answer("test", order)
    assert reply.text == SITE_REFUSAL and reply.source == "REFUSED"


def test_a_point_of_care_study_of_a_site_is_still_one(case_by_id, tmp_path):
    event = ordered_test(case_by_id[26], tmp_path, "lung ultrasound")
    assert event["reply"].startswith("Point-of-care lung ultrasound: absent lung sliding") and event["cost"] == 200.0
    assert PriceTable.bundled().price("bedside echo").code == "93308"
    assert PriceTable.bundled().price("point of care glucose").code == "82962"


@pytest.mark.parametrize("order, code, price", [
    ("ankle ultrasound", "76881", 250.0),  # was 76536, the ultrasound of the neck, by its spelling
    ("foot ultrasound", "76882", 180.0),  # was unmatched, $100
    ("rib x-ray", "71100", 110.0),  # was 73110, the wrist radiograph, by its spelling (new row)
    ("x-ray ribs", "71100", 110.0),
    ("ankle x-ray", "73610", 110.0), ("foot x-ray", "73630", 110.0), ("ankle brachial index", "93922", 200.0),
    ("urine toxicology", "80307", 60.0),  # was unmatched, $100
    ("influenza swab", "87502", 95.0),  # was unmatched, $100
    ("joint fluid cell count", "89051", 40.0),  # was unmatched, $100
])
def test_a_site_or_test_is_not_another_by_its_spelling(order, code, price):
    priced = PriceTable.bundled().price(order)
    assert (priced.code, priced.price) == (code, price)


def test_an_ankle_ultrasound_is_not_the_thyroids(case_by_id, tmp_path):
    # was "Thyroid ultrasound: diffusely enlarged, hypoechoic, heterogeneous gland ..." (case 27's Graves disease)
    event = ordered_test(case_by_id[27], tmp_path, "ankle ultrasound")
    assert "thyroid" not in event["reply"].lower() and event["cost"] == 250.0


def test_joint_fluid_is_synovial_fluid(case_by_id, tmp_path):
    event = ordered_test(case_by_id[22], tmp_path, "joint fluid cell count")
    # the record's synovial count, now at the cell count's price (was $100, an unmatched order)
    assert event["reply"].startswith("Synovial fluid cell count: white cells 86,000") and event["cost"] == 40.0
