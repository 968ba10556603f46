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
from clinbench.dx.gatekeeper import OfflineGatekeeper
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


@pytest.mark.parametrize("name", ["Limited abdominal ultrasound (right upper quadrant)", "Right upper quadrant ultrasound",
                                  "Gallbladder ultrasound", "Liver or gallbladder ultrasound (single organ)"])
def test_a_left_quadrant_never_gets_a_right_upper_quadrant_study_however_it_is_named(case_by_id, name):
    # a report of the right upper quadrant that mentions the spleen, as such reports do
    case = _with_study(case_by_id[6], "Right upper quadrant ultrasound:",
                       f"{name}: multiple gallstones with a thickened gallbladder wall and pericholecystic fluid; "
                       "common bile duct 4 mm; spleen 10 cm.")
    gk = OfflineGatekeeper(case)
    for order in ("LUQ ultrasound", "left upper quadrant ultrasound", "LLQ ultrasound", "left lower quadrant ultrasound",
                  "RLQ ultrasound"):
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
