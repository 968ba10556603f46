"""An abdominal quadrant, an upper or lower extremity and an MRCP are the body sites they name, and an organ with a
price row of its own is priced by it. Found by a grid of 98 orders x 32 demo cases: "quadrant" was a liver word, so
"RLQ ultrasound", "LUQ ultrasound" and "left lower quadrant ultrasound" got cases 6 and 7's right upper quadrant
ultrasound of gallstones for $220 (and case 25's liver for $300); "right lower quadrant" shared "right lower" with
case 3's CT pulmonary angiogram ("right lower lobe"), $900, and case 14's CT ("transition point in the right lower
quadrant") was served to an RLQ ultrasound for $800. "Extremity" was a leg word, so "upper extremity venous duplex"
got the leg duplex of cases 3, 16 and 23 ($400). An MRCP was no MRI of any site, so case 7's "MRI pancreas" was a
normal result ($1,000) beside its oedematous pancreas. Case 19's "bladder ultrasound" got its renal ultrasound
($200), whose kidney findings a bladder study would not report. "MRI heart" was priced as the MRI chest ($1,000),
"head radiograph" as an unmatched order ($100). A bare "quadrant" names none of the four; a bare "extremity" is read
as the leg, as the price table's unqualified extremity duplex rows are."""

import pytest

from clinbench.dx.costs import PriceTable
from clinbench.dx.gatekeeper import SITE_REFUSAL, OfflineGatekeeper
from tests.dx.orders import ordered_test

GALLSTONES = "Right upper quadrant ultrasound:"


@pytest.mark.parametrize("order", ["RLQ ultrasound", "right lower quadrant ultrasound", "LUQ ultrasound",
                                   "left lower quadrant ultrasound"])
@pytest.mark.parametrize("case_id", [6, 7])
def test_another_quadrant_is_not_the_right_upper_quadrant(case_by_id, tmp_path, case_id, order):
    # was "Right upper quadrant ultrasound: multiple gallstones ..." (case 6), "... numerous small gallstones ..."
    # (case 7) for $220
    event = ordered_test(case_by_id[case_id], tmp_path, order)
    assert not event["reply"].startswith(GALLSTONES) and "gallstones" not in event["reply"]


@pytest.mark.parametrize("case_id, order", [(3, "CT right lower quadrant"), (14, "RLQ ultrasound")])
def test_a_quadrant_shares_no_words_with_a_lobe_or_a_ct_report(case_by_id, tmp_path, case_id, order):
    # was "CT pulmonary angiogram: filling defects in the right lower lobe ..." for $900 (case 3) and "CT abdomen and
    # pelvis with contrast: dilated fluid-filled small bowel loops ..." for $800 (case 14)
    event = ordered_test(case_by_id[case_id], tmp_path, order)
    assert not event["reply"].startswith(("CT pulmonary angiogram", "CT abdomen and pelvis"))


@pytest.mark.parametrize("case_id, order, start", [
    (6, "RUQ ultrasound", "Right upper quadrant ultrasound: multiple gallstones"),
    (6, "right upper quadrant ultrasound", "Right upper quadrant ultrasound: multiple gallstones"),
    (7, "RUQ ultrasound", "Right upper quadrant ultrasound: numerous small gallstones"),
    (25, "RUQ ultrasound", "Abdominal ultrasound: enlarged, diffusely echogenic liver"),
    (7, "pancreas ultrasound", "Right upper quadrant ultrasound: numerous small gallstones"),  # it reports the pancreas
])
def test_the_right_upper_quadrant_is_still_served(case_by_id, tmp_path, case_id, order, start):
    event = ordered_test(case_by_id[case_id], tmp_path, order)
    assert event["source"] == "REAL" and event["reply"].startswith(start) and event["cost"] == 220.0


def test_a_bare_quadrant_names_no_site(case_by_id):
    # was case 6's gallstones for $220
    assert OfflineGatekeeper(case_by_id[6]).answer("test", "quadrant ultrasound").text == SITE_REFUSAL


@pytest.mark.parametrize("case_id", [3, 16, 23])
def test_an_upper_extremity_is_the_arm(case_by_id, tmp_path, case_id):
    # was "Lower extremity venous duplex ultrasound: ..." for $400 (case 23: "non-compressible left common femoral,
    # femoral and popliteal veins with intraluminal echogenic thrombus ...")
    event = ordered_test(case_by_id[case_id], tmp_path, "upper extremity venous duplex")
    assert not event["reply"].startswith("Lower extremity") and "popliteal" not in event["reply"]
    event = ordered_test(case_by_id[case_id], tmp_path, "lower extremity venous duplex")
    assert event["reply"].startswith("Lower extremity venous duplex ultrasound:") and event["cost"] == 550.0


def test_an_mrcp_is_an_mri_of_the_bile_ducts_and_pancreas(case_by_id, tmp_path):
    # was "MRI pancreas: no abnormality detected." for $1,000 beside the MRCP's oedematous pancreas
    event = ordered_test(case_by_id[7], tmp_path, "MRI pancreas")
    assert "no abnormality detected" not in event["reply"]
    for order, cost in (("MRCP", 1000.0), ("MRI pancreas", 1000.0), ("MRI abdomen", 1000.0), ("MRI liver", 1400.0)):
        event = ordered_test(case_by_id[7], tmp_path, order)
        assert event["reply"].startswith("Magnetic resonance cholangiopancreatography: oedematous pancreas")
        assert event["cost"] == cost, order
    # a normal MRCP beside a recorded study of the liver or pancreas would be one the record may contradict
    assert OfflineGatekeeper(case_by_id[6]).answer("test", "MRCP").source == "REFUSED"  # was normal, $1,000


def test_case_19s_bladder_ultrasound_is_not_its_renal_ultrasound(case_by_id, tmp_path):
    # was "Renal ultrasound: normal-sized kidneys without hydronephrosis; bladder decompressed." for $200
    event = ordered_test(case_by_id[19], tmp_path, "bladder ultrasound")
    assert "kidneys" not in event["reply"]


@pytest.mark.parametrize("order, code, price", [
    ("MRI heart", "75557", 1500.0),  # was the MRI chest, $1,000
    ("heart MRI", "75557", 1500.0), ("cardiac MRI", "75557", 1500.0),
    ("head radiograph", "70250", 110.0),  # was unmatched, $100
    ("skull radiograph", "70250", 110.0),
    # what must not change: an organ billed by its region's row, and a row of more sites is not an organ's
    ("CT kidneys", "74177", 800.0), ("CT lungs", "71260", 650.0), ("lung radiograph", "71045", 90.0),
    ("ultrasound brain", None, 100.0), ("upper extremity venous duplex", "93971", 400.0),
    ("lower extremity venous duplex", "93970", 550.0), ("RUQ ultrasound", "76705", 220.0),
])
def test_an_organ_with_a_row_of_its_own_is_priced_by_it(order, code, price):
    priced = PriceTable.bundled().price(order)
    assert (priced.code, priced.price) == (code, price)
