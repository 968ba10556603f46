"""Treatment concepts on hand-made patients: ventilation status priority and the 14 h gap,
RRT and CRRT detection."""

from __future__ import annotations

import pytest


def _o2(hand, time, device, flow=2.0):
    hand.chart(223834, time, flow)  # O2 flow: an O2 device row only exists with a flow at the same time
    hand.chart(226732, time, None, value=device)


@pytest.mark.slow
def test_ventilation_priority_gap_and_single_observations(hand):
    hand.add_stay()
    # day 1: invasive ventilation by ventilator mode; at 12:00 a BiPAP mask is charted too -> still InvasiveVent
    for t in ("2150-01-01 10:00", "2150-01-01 12:00", "2150-01-01 14:00"):
        hand.chart(223849, t, None, value="CMV/ASSIST")
    _o2(hand, "2150-01-01 12:00", "Bipap mask ")
    # nasal cannula 16:00 and 17:50; the next one 13.5 h later crosses 14 hour boundaries -> new episode
    _o2(hand, "2150-01-01 16:00", "Nasal cannula")
    _o2(hand, "2150-01-01 17:50", "Nasal cannula")
    _o2(hand, "2150-01-02 07:20", "Nasal cannula")
    _o2(hand, "2150-01-02 08:20", "Nasal cannula")
    _o2(hand, "2150-01-02 09:00", "Endotracheal tube")  # a single observation: dropped
    _o2(hand, "2150-01-02 10:00", "Nasal cannula")  # single again (status changed before it): dropped
    hand.chart(226732, "2150-01-02 11:00", None, value="Tracheostomy tube")  # device without O2 flow: never seen
    hand.chart(226732, "2150-01-02 12:00", None, value="Tracheostomy tube")
    # day 3: 13 hour boundaries between two nasal cannula chartings -> one episode
    _o2(hand, "2150-01-03 10:00", "Nasal cannula")
    _o2(hand, "2150-01-03 23:00", "Nasal cannula")
    hand.build("ventilation")
    got = [
        (str(r["starttime"])[5:16], str(r["endtime"])[5:16], r["ventilation_status"])
        for r in hand.rows("SELECT * FROM mimiciv_derived.ventilation ORDER BY starttime")
    ]
    assert got == [
        ("01-01 10:00", "01-01 16:00", "InvasiveVent"),  # ends at the next charting of any status
        ("01-01 16:00", "01-01 17:50", "SupplementalOxygen"),  # next charting >= 14 boundaries away: ends at its last
        ("01-02 07:20", "01-02 09:00", "SupplementalOxygen"),
        ("01-03 10:00", "01-03 23:00", "SupplementalOxygen"),
    ]


def test_ventilation_tracheostomy_outranks_ventilator_mode(hand):
    hand.add_stay()
    for t in ("2150-01-01 10:00", "2150-01-01 11:00"):
        hand.chart(223849, t, None, value="CPAP/PSV")
        _o2(hand, t, "Tracheostomy tube")
    for t in ("2150-01-01 12:00", "2150-01-01 13:00"):
        _o2(hand, t, "High flow nasal cannula")
    hand.build("ventilation")
    got = [r["ventilation_status"] for r in hand.rows("SELECT * FROM mimiciv_derived.ventilation ORDER BY starttime")]
    assert got == ["Tracheostomy", "HFNC"]


def _procedure(hand, itemid, start, end):
    hand.insert(
        "mimiciv_icu.procedureevents",
        dict(subject_id=1, hadm_id=10, stay_id=100, starttime=start, endtime=end, itemid=itemid, value=1.0, valueuom="None"),
    )


def test_rrt_and_crrt_detection(hand):
    hand.add_stay()  # ICU from 2150-01-01 10:00: first-day window 04:00 .. 01-02 10:00
    hand.chart(226499, "2150-01-01 12:00", 200.0)  # hemodialysis output -> IHD, active
    _procedure(hand, 225802, "2150-01-01 14:00", "2150-01-01 20:00")  # Dialysis - CRRT
    hand.chart(224144, "2150-01-01 15:00", 150.0)  # blood flow inside the CRRT range
    hand.chart(227290, "2150-01-01 15:00", None, value="CVVHDF")
    hand.chart(224146, "2150-01-01 15:00", None, value="Active")
    hand.chart(224146, "2150-01-01 16:00", None, value="Clotted")
    _procedure(hand, 224270, "2150-01-02 10:00", "2150-01-02 11:00")  # dialysis catheter: present, not active
    hand.chart(226499, "2150-01-02 11:30", 100.0)  # after the first-day window (and after the catheter range)
    hand.build("rrt", "crrt", "first_day_rrt")
    rrt = {str(r["charttime"])[5:16]: (r["dialysis_present"], r["dialysis_active"], r["dialysis_type"]) for r in hand.rows("SELECT * FROM mimiciv_derived.rrt")}
    assert rrt == {
        "01-01 12:00": (1, 1, "IHD"),
        "01-01 14:00": (1, 1, "CRRT"),
        "01-01 15:00": (1, 1, "CRRT"),
        "01-01 16:00": (1, 1, "CRRT"),
        "01-02 10:00": (1, 0, None),
        "01-02 11:30": (1, 1, "IHD"),
    }
    crrt = {str(r["charttime"])[11:16]: r for r in hand.rows("SELECT * FROM mimiciv_derived.crrt")}
    assert (crrt["15:00"]["crrt_mode"], crrt["15:00"]["system_active"], crrt["15:00"]["blood_flow"]) == ("CVVHDF", 1, 150.0)
    assert (crrt["16:00"]["clotted"], crrt["16:00"]["system_active"]) == (1, None)
    first = hand.one("SELECT * FROM mimiciv_derived.first_day_rrt")
    assert (first["dialysis_present"], first["dialysis_active"], first["dialysis_type"]) == (1, 1, "CRRT, IHD")
