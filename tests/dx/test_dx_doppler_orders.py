"""Doppler and duplex ultrasound are treated like angiography: flow is what they add to a
greyscale ultrasound, as the opacified lumen is what contrast adds to a CT. Found by a review:
"RUQ ultrasound" ($220) got case 25's abdominal ultrasound with Doppler ($600) whole, "patent
hepatic and portal veins" included; "ultrasound extremity" ($180) got the venous duplex ($550) of
cases 3, 16 and 23; "arterial doppler legs" got the venous duplex."""

from clinbench.dx.costs import PriceTable
from clinbench.dx.gatekeeper import UNAVAILABLE_REFUSAL, OfflineGatekeeper, greyscale_part
from clinbench.dx.record import ResultEntry

# Ultrasound orders without Doppler, each billed as a greyscale study ("leg ultrasound" and
# "aortic ultrasound" are billed as duplex scans, and pay for one)
PLAIN = ("RUQ ultrasound", "right upper quadrant ultrasound", "liver ultrasound", "hepatobiliary ultrasound",
         "abdominal ultrasound", "ultrasound abdomen", "renal ultrasound", "ultrasound kidneys", "ultrasound extremity",
         "soft tissue ultrasound leg", "pelvic ultrasound", "thyroid ultrasound")
FLOW_WORDS = ("flow", "patent", "augmentation", "compressible")


def answer(case, order):
    reply = OfflineGatekeeper(case).answer("test", order)
    return reply, PriceTable.bundled().charge(order, reply.served).price


def test_a_greyscale_order_gets_the_greyscale_part_of_an_organs_doppler_study(case_by_id):
    reply, cost = answer(case_by_id[25], "RUQ ultrasound")
    assert reply.text == ("Abdominal ultrasound: enlarged, diffusely echogenic liver without focal lesion; "
                          "moderate ascites; spleen 13 cm; no biliary dilatation.")
    assert reply.source == "REAL" and cost == 220.0
    # the Doppler study ordered by name: its whole report at its price
    reply, cost = answer(case_by_id[25], "abdominal ultrasound with doppler")
    assert "patent hepatic and portal veins" in reply.text and cost == 600.0


def test_a_vascular_duplex_is_never_served_to_a_greyscale_order(case_by_id):
    for case_id in (3, 16, 23):
        # a greyscale study of the leg the record images: neither the duplex's findings nor a blanket
        # "no abnormality detected" (a compression ultrasound shows the thrombus the duplex found), refused free
        reply, _ = answer(case_by_id[case_id], "ultrasound extremity")
        assert (reply.source, reply.text) == ("REFUSED", UNAVAILABLE_REFUSAL)  # a refusal is never charged
        # billed as the venous duplex, the order gets it at the duplex's price
        reply, cost = answer(case_by_id[case_id], "leg ultrasound")
        assert reply.text.startswith("Lower extremity venous duplex ultrasound:") and cost == 550.0
        # a study of arteries is not one of veins
        reply, _ = answer(case_by_id[case_id], "arterial doppler legs")
        assert reply.text == ("Lower extremity arterial duplex ultrasound: triphasic waveforms throughout; "
                              "no stenosis or occlusion.")


def test_no_greyscale_order_gets_a_recorded_doppler_studys_vascular_findings(cases):
    # was 12 of these 384 replies (cases 3, 23, 25)
    leaks = [(case.case_id, order) for case in cases for order in PLAIN
             for reply in [OfflineGatekeeper(case).answer("test", order)]
             if reply.source == "REAL" and any(w in reply.text for w in FLOW_WORDS)
             and reply.matched in ("Lower extremity venous duplex ultrasound", "Abdominal ultrasound with Doppler",
                                   "Abdominal ultrasound")]
    assert len(cases) * len(PLAIN) == 384
    assert leaks == []


def test_the_greyscale_part_drops_the_findings_only_doppler_shows():
    entry = ResultEntry("Thyroid ultrasound with colour Doppler",
                        "diffusely enlarged, hypoechoic gland with markedly increased vascularity; no nodules", "imaging")
    part = greyscale_part(entry)
    assert (part.name, part.text) == ("Thyroid ultrasound", "diffusely enlarged, hypoechoic gland; no nodules.")
    assert greyscale_part(ResultEntry("Portal vein Doppler", "patent portal vein with hepatopetal flow", "imaging")) is None
