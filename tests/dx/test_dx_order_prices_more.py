"""Orders agents write that fell to the $100 of an unmatched order, or to a row of another site or specimen, and the
rows they are billed as (found by a grid of 312 orders x 32 demo cases: each order's served reply and charge).

Priced on the basis of the table's rows of their kind: an extremity radiograph of 2 views $100 (the humerus's, the
tibia's), a sinus series as the skull series ($110), a CT or MRI of a limb as the table's other limb studies ($450,
$900), an MRI of the head and neck as the brain's ($900 without contrast, $1,300 without and with), an MRI without and
with contrast of the body $1,400 (the pelvis's), a transrectal ultrasound as the transvaginal one ($280), a
transcranial Doppler as the carotid duplex ($500), a urine analyte as the urine sodium ($15), and two sets of blood
cultures as twice one set. The reply each order gets is the one it got before, or the record's own study of the
ordered site where it had been a normal result the record contradicts ("DVT ultrasound" in the two DVT cases). A
condition's name with a filler word ("DVT study", "deep vein thrombosis test") names no test: refused alike in every case
(tests/security/test_dx_leak_probe.py)."""

from __future__ import annotations

import csv

import pytest

from clinbench.dx.cases import demo_cases
from clinbench.dx.costs import PriceTable
from clinbench.dx.gatekeeper import OfflineGatekeeper
from tests.dx.orders import ordered_test

NEW_ORDERS = [
    # order, code, price: each comment says what the order was charged before
    ("x-ray clavicle", "73000", 100.0),  # unmatched, $100
    ("clavicle radiograph", "73000", 100.0),  # unmatched, $100
    ("x-ray sinuses", "70220", 110.0),  # unmatched, $100
    ("sinus x-ray", "70220", 110.0),  # unmatched, $100
    ("sinus series", "70220", 110.0),  # unmatched, $100
    ("limited sinus x-ray", "70210", 90.0),  # unmatched, $100
    ("x-ray forearm", "73090", 100.0),  # 73060, the humerus radiograph
    ("forearm radiograph", "73090", 100.0),  # 73060, the humerus radiograph
    ("CT femur", "73700", 450.0),  # unmatched, $100
    ("CT thigh", "73700", 450.0),  # 78815, the PET-CT "skull base to mid-thigh", $3,500
    ("CT thigh with contrast", "73701", 550.0),  # unmatched, $100
    ("MRI femur", "73718", 900.0),  # unmatched, $100
    ("MRI foot", "73718", 900.0),  # unmatched, $100
    ("MRI orbits", "70540", 900.0),  # unmatched, $100
    ("orbital MRI", "70540", 900.0),  # unmatched, $100
    ("MRI orbits with and without contrast", "70543", 1300.0),  # unmatched, $100
    ("MRI prostate", "72197", 1400.0),  # unmatched, $100
    ("prostate MRI", "72197", 1400.0),  # unmatched, $100
    ("MRI breast", "77049", 1400.0),  # unmatched, $100
    ("breast MRI", "77049", 1400.0),  # unmatched, $100
    ("MRI breast without contrast", "77047", 1000.0),  # 70551, the MRI brain, by its spelling
    ("prostate ultrasound", "76872", 280.0),  # unmatched, $100
    ("transrectal ultrasound", "76872", 280.0),  # unmatched, $100
    ("TRUS", "76872", 280.0),  # refused as no test
    ("throat swab", "87880", 20.0),  # unmatched, $100
    ("rapid strep", "87880", 20.0),
    ("throat culture", "87070", 40.0),  # 87081, the screening culture, $25
    ("nasopharyngeal swab", "87633", 350.0),  # unmatched, $100
    ("NP swab", "87633", 350.0),  # unmatched, $100
    ("serum toxicology", "80307", 60.0),  # refused as no test
    ("serum drug screen", "80307", 60.0),
    ("spleen Doppler", "93976", 400.0),  # unmatched, $100 (case 25: $600, the complete duplex it is served)
    ("splenic Doppler", "93976", 400.0),  # as "spleen Doppler"
    ("transcranial Doppler", "93886", 500.0),  # unmatched, $100
    ("TCD", "93886", 500.0),  # refused as no test
    ("urine electrolytes", "84300+84133+82436", 45.0),  # 80048, the serum basic metabolic panel, $40
    ("urine potassium", "84133", 15.0),  # 84132, the serum potassium
    ("urine chloride", "82436", 15.0),  # 82435, the blood chloride
    ("blood cultures x2", "87040+87040", 110.0),  # 87040, one set, $55
    ("blood cultures x 2", "87040+87040", 110.0),  # one set
    ("2 sets of blood cultures", "87040+87040", 110.0),  # one set
    ("two sets of blood cultures", "87040+87040", 110.0),  # one set
]

# near misses: orders of a neighbouring site, modality, specimen or count that keep their rows
KEPT = [
    ("arm x-ray", "73060", 100.0), ("humerus x-ray", "73060", 100.0), ("x-ray shoulder", "73030", 110.0),
    ("femur x-ray", "73552", 110.0), ("x-ray skull", "70250", 110.0), ("CT sinuses", "70486", 450.0),
    ("CT orbits", "70480", 500.0), ("CT leg", "73700", 450.0), ("CT hip", "72192", 450.0),
    ("PET CT", "78815", 3500.0), ("MRI thigh", "73718", 900.0), ("MRI ankle", "73721", 900.0),
    ("MRI knee", "73721", 900.0), ("MRI brain", "70551", 900.0), ("MRI pelvis", "72195", 1000.0),
    ("MRI pelvis with contrast", "72197", 1400.0), ("mammogram", "77067", 200.0),
    ("breast ultrasound", "76641", 250.0), ("transvaginal ultrasound", "76830", 280.0),
    ("pelvic ultrasound", "76856", 280.0), ("scrotal ultrasound", "76870", 250.0),
    ("strep a test", "87880", 20.0), ("sputum culture", "87070", 40.0), ("mrsa screen", "87081", 25.0),
    ("respiratory viral panel", "87633", 350.0), ("influenza swab", "87502", 95.0),
    ("urine drug screen", "80307", 60.0), ("blood alcohol", "80320", 45.0),
    ("leg venous duplex", "93970", 550.0), ("upper extremity venous duplex", "93971", 400.0),
    ("carotid Doppler", "93880", 500.0), ("liver Doppler", "93975", 600.0), ("scrotal Doppler", "93976", 400.0),
    ("urine sodium", "84300", 15.0), ("potassium", "84132", 15.0), ("chloride", "82435", 15.0),
    ("electrolytes", "80048", 40.0), ("blood cultures", "87040", 55.0), ("blood culture", "87040", 55.0),
]


@pytest.mark.parametrize("order, code, price", NEW_ORDERS)
def test_an_order_is_billed_as_the_study_it_names(order, code, price):
    priced = PriceTable.bundled().price(order)
    assert (priced.code, priced.price) == (code, price)
    # it names its test: the price is its own whatever recorded report it gets
    assert PriceTable.bundled().names_its_test(order) and not priced.by_region


@pytest.mark.parametrize("order, code, price", KEPT)
def test_a_near_miss_keeps_its_row(order, code, price):
    priced = PriceTable.bundled().price(order)
    assert (priced.code, priced.price) == (code, price)


# what each order may be served from the demo records: the study it names, under the record's name
SERVED = {
    "nasopharyngeal swab": {"Respiratory viral panel"}, "NP swab": {"Respiratory viral panel"},
    "urine electrolytes": {"Urine sodium"},
    "spleen Doppler": {"Abdominal ultrasound with Doppler"}, "splenic Doppler": {"Abdominal ultrasound with Doppler"},
    **{o: {"Blood cultures"} for o in ("blood cultures x2", "blood cultures x 2", "2 sets of blood cultures",
                                       "two sets of blood cultures")},
}


def test_no_new_order_is_served_a_report_of_another_site():
    # over the 32 demo cases: "sinus x-ray" never gets an electrocardiogram's "sinus rhythm", "MRI orbits" or
    # "MRI breast" case 8's MRI brain, "prostate ultrasound" a renal ultrasound, "x-ray forearm" anything recorded
    for case in demo_cases():
        gk = OfflineGatekeeper(case)
        for order, _, _ in NEW_ORDERS:
            reply = gk.answer("test", order)
            assert not reply.served or reply.served in SERVED.get(order, ()), (case.case_id, order, reply.text)


@pytest.mark.parametrize("case_id, start", [
    (3, "Lower extremity venous duplex ultrasound: non-compressible"),
    (16, "Lower extremity venous duplex ultrasound: no deep vein thrombosis"),
    (23, "Lower extremity venous duplex ultrasound: non-compressible"),
])
def test_a_dvt_ultrasound_is_the_recorded_leg_duplex_and_a_dvt_study_names_a_condition(case_by_id, tmp_path, case_id,
                                                                                       start):
    event = ordered_test(case_by_id[case_id], tmp_path, "DVT ultrasound")
    assert event["reply"].startswith(start) and event["cost"] == 550.0
    # was "DVT study: no abnormality detected." for $100 beside the record's thrombus in cases 3 and 23, then (for a
    # day) the recorded duplex in the DVT cases alone: "deep vein thrombosis test" read the answer off the reply
    for order in ("DVT study", "DVT test", "deep vein thrombosis test"):
        event = ordered_test(case_by_id[case_id], tmp_path, order)
        assert event["reply"].startswith("That names a condition, not a test") and event["cost"] == 0.0


def test_a_nasopharyngeal_swab_is_the_recorded_respiratory_viral_panel(case_by_id, tmp_path):
    # was "Nasopharyngeal swab: no abnormality detected." for $100 beside case 11's rhinovirus
    for order in ("nasopharyngeal swab", "NP swab"):
        event = ordered_test(case_by_id[11], tmp_path, order)
        assert event["reply"] == "Respiratory viral panel: rhinovirus detected." and event["cost"] == 350.0


def test_two_sets_of_blood_cultures_cost_twice_one_and_get_the_same_result(case_by_id, tmp_path):
    two = ordered_test(case_by_id[4], tmp_path, "blood cultures x2")
    one = ordered_test(case_by_id[4], tmp_path, "blood cultures")
    assert two["reply"] == one["reply"] and two["reply"].startswith("Blood cultures: Streptococcus pneumoniae")
    assert (two["cost"], one["cost"]) == (110.0, 55.0)  # both were $55


def test_a_users_price_file_prices_two_sets_as_twice_its_one(tmp_path):
    path = tmp_path / "prices.csv"
    with path.open("w", newline="") as fh:
        csv.writer(fh).writerows([["code", "description", "price"], ["87040", "Blood culture", "32"],
                                  ["84300", "Urine sodium", "7"], ["84133", "Urine potassium", "8"],
                                  ["82436", "Urine chloride", "9"]])
    table = PriceTable.load(path)
    assert table.price("blood cultures x2").price == 64.0 and table.price("blood cultures").price == 32.0
    assert table.price("urine electrolytes").price == 24.0


def test_a_spleen_doppler_still_gets_the_abdominal_duplex_that_reports_the_spleen(case_by_id, tmp_path):
    # the served report is unchanged; the order names the limited duplex (93976), so it costs that, as "CT chest"
    # served a recorded CT angiogram costs a chest CT (was $600, the price of the study it got, when it named none)
    event = ordered_test(case_by_id[25], tmp_path, "spleen Doppler")
    assert event["reply"].startswith("Abdominal ultrasound with Doppler:") and "spleen 13 cm" in event["reply"]
    assert event["cost"] == 400.0
    # a greyscale order of the spleen is still the limited abdominal ultrasound, never the duplex
    assert PriceTable.bundled().price("spleen ultrasound").code == "76705"


# --- the normal results of the new orders: of the ordered study and specimen, never one the record contradicts -------

@pytest.mark.parametrize("order", ["serum toxicology", "serum drug screen", "serum tox screen"])
def test_a_serum_drug_screen_is_not_answered_with_a_urine_result(case_by_id, order):
    # "serum drug screen" and "serum tox screen" were "Urine drug screen: negative ..." (the alias "tox screen"),
    # "serum toxicology" "no abnormality detected"
    reply = OfflineGatekeeper(case_by_id[2]).answer("test", order)
    assert reply.text == "Serum drug screen: negative for all tested classes."
    assert OfflineGatekeeper(case_by_id[2]).answer("test", "tox screen").text.startswith("Urine drug screen:")


@pytest.mark.parametrize("order, start", [
    ("DVT ultrasound", "Lower extremity venous duplex ultrasound: deep veins fully compressible"),
    ("nasopharyngeal swab", "Respiratory viral panel: no viruses detected"),
    ("NP swab", "Respiratory viral panel: no viruses detected"),
    ("MRI orbits", "MRI orbits: normal globes, optic nerves and extraocular muscles"),
])
def test_a_new_order_gets_its_studys_normal_result(case_by_id, order, start):
    # each was "<order>: no abnormality detected."
    assert OfflineGatekeeper(case_by_id[2]).answer("test", order).text.startswith(start)


@pytest.mark.parametrize("order", ["MRI orbits", "orbital MRI", "MRI orbits with and without contrast"])
def test_no_normal_orbits_beside_proptosis(case_by_id, tmp_path, order):
    # case 27 (Graves disease) has bilateral proptosis with lid retraction: its "MRI orbits: no abnormality
    # detected." would have cost $900 with the new row
    event = ordered_test(case_by_id[27], tmp_path, order)
    assert (event["source"], event["cost"]) == ("REFUSED", 0.0)


def test_a_femur_radiograph_is_the_recorded_hip_radiograph_of_the_femoral_neck_fracture(case_by_id, tmp_path):
    # was "Femur x-ray: no abnormality detected." for $110 beside case 15's left subcapital femoral neck fracture:
    # the femur is the hip's bone as well as the thigh's ("femur" named no site)
    event = ordered_test(case_by_id[15], tmp_path, "femur x-ray")
    assert event["reply"].startswith("Left hip radiograph: cortical discontinuity") and event["cost"] == 110.0
    for order in ("CT femur", "MRI femur"):  # no CT or MRI recorded: no normal result beside the fracture
        event = ordered_test(case_by_id[15], tmp_path, order)
        assert "no abnormality" not in event["reply"] and event["cost"] == 0.0


@pytest.mark.parametrize("case_id", [3, 16, 23])
def test_a_femur_study_in_the_leg_duplex_cases_is_refused_as_the_thighs_is(case_by_id, tmp_path, case_id):
    for order in ("femur x-ray", "CT femur", "CT thigh"):
        event = ordered_test(case_by_id[case_id], tmp_path, order)
        assert event["reply"].startswith("That result is not available") and event["cost"] == 0.0


@pytest.mark.parametrize("case_id, reply", [(19, "Urine sodium: 8 mmol/L."), (24, "Urine sodium: 62 mmol/L.")])
def test_urine_electrolytes_are_the_recorded_urine_sodium(case_by_id, tmp_path, case_id, reply):
    # was "Urine electrolytes: no abnormality detected." beside the record's urine sodium (a row billed as three
    # tests gets those of them the record holds)
    event = ordered_test(case_by_id[case_id], tmp_path, "urine electrolytes")
    assert event["reply"] == reply and event["cost"] == 45.0


@pytest.mark.parametrize("case_id", [6, 7])
def test_a_fast_is_never_the_recorded_right_upper_quadrant_study_billed_as_its_part(case_by_id, tmp_path, case_id):
    event = ordered_test(case_by_id[case_id], tmp_path, "FAST exam")
    assert "gallstones" not in event["reply"] and event["reply"].startswith("Focused assessment with sonography")
