"""Medication concepts on hand-made patients: unit conversions, weight-based rates, the 0.1
boundary, interval cutting and the norepinephrine-equivalent dose."""

from __future__ import annotations

import pytest

_order = iter(range(1, 10**6))


def _infusion(hand, itemid, start, end, rate, rateuom, weight=80.0, amount=1.0, stay=100):
    order = next(_order)
    hand.insert(
        "mimiciv_icu.inputevents",
        dict(subject_id=1, hadm_id=10, stay_id=stay, starttime=start, endtime=end, itemid=itemid, amount=amount, amountuom="mg",
             rate=rate, rateuom=rateuom, orderid=order, linkorderid=order, patientweight=weight),
    )


def test_vasopressin_units_per_minute_become_units_per_hour(hand):
    hand.add_stay()
    _infusion(hand, 222315, "2150-01-01 11:00", "2150-01-01 12:00", 2.4, "units/hour")
    _infusion(hand, 222315, "2150-01-01 12:00", "2150-01-01 13:00", 0.04, "units/min")
    hand.build("vasopressin")
    rates = [r["vaso_rate"] for r in hand.rows("SELECT vaso_rate FROM mimiciv_derived.vasopressin ORDER BY starttime")]
    assert rates == [2.4, pytest.approx(2.4)]


@pytest.mark.slow
def test_weight_based_rates(hand):
    hand.add_stay()
    _infusion(hand, 221749, "2150-01-01 11:00", "2150-01-01 12:00", 80.0, "mcg/min", weight=80.0)  # 80 mcg/min / 80 kg = 1.0
    _infusion(hand, 221749, "2150-01-01 12:00", "2150-01-01 13:00", 50.0, "mcg/min", weight=None)  # no weight: no rate
    _infusion(hand, 221906, "2150-01-01 11:00", "2150-01-01 12:00", 0.0002, "mg/kg/min", weight=70.0)  # x1000 = 0.2
    _infusion(hand, 221906, "2150-01-01 12:00", "2150-01-01 13:00", 0.08, "mg/kg/min", weight=1.0)  # mis-documented: 0.08
    _infusion(hand, 221906, "2150-01-01 13:00", "2150-01-01 14:00", 0.1, "mcg/kg/min", weight=70.0)
    hand.build("phenylephrine", "norepinephrine")
    phe = [r["vaso_rate"] for r in hand.rows("SELECT vaso_rate FROM mimiciv_derived.phenylephrine ORDER BY starttime")]
    nor = [r["vaso_rate"] for r in hand.rows("SELECT vaso_rate FROM mimiciv_derived.norepinephrine ORDER BY starttime")]
    assert phe == [1.0, None]
    assert nor == [pytest.approx(0.2), 0.08, 0.1]


def test_charted_point_one_stays_on_the_threshold(hand):
    """A charted 0.1 mcg/kg/min is exactly 0.1 (DOUBLE): it meets '<= 0.1' as MIMIC's 32-bit value meets a 32-bit 0.1."""
    hand.add_stay()
    _infusion(hand, 221906, "2150-01-01 11:00", "2150-01-01 12:00", 0.1, "mcg/kg/min")
    _infusion(hand, 221289, "2150-01-01 11:00", "2150-01-01 12:00", 0.1, "mcg/kg/min")
    hand.build("norepinephrine", "epinephrine")
    row = hand.one(
        "SELECT n.vaso_rate <= 0.1 AS nor_le, e.vaso_rate <= 0.1 AS epi_le, CAST(n.vaso_rate AS REAL) = CAST(0.1 AS REAL) AS as_real "
        "FROM mimiciv_derived.norepinephrine n, mimiciv_derived.epinephrine e"
    )
    assert row == {"nor_le": True, "epi_le": True, "as_real": True}


@pytest.mark.slow
def test_vasoactive_intervals_and_norepinephrine_equivalent_dose(hand):
    hand.add_stay()
    _infusion(hand, 221906, "2150-01-01 10:00", "2150-01-01 14:00", 0.1, "mcg/kg/min")  # norepinephrine
    _infusion(hand, 222315, "2150-01-01 12:00", "2150-01-01 16:00", 2.4, "units/hour")  # vasopressin
    _infusion(hand, 221653, "2150-01-01 16:00", "2150-01-01 18:00", 5.0, "mcg/kg/min")  # dobutamine only
    _infusion(hand, 221662, "2150-01-01 20:00", "2150-01-01 21:00", 5.0, "mcg/kg/min")  # dopamine after a gap
    hand.build("norepinephrine_equivalent_dose")
    agents = hand.rows("SELECT strftime(starttime, '%H') AS s, strftime(endtime, '%H') AS e, norepinephrine, vasopressin, dobutamine, dopamine FROM mimiciv_derived.vasoactive_agent ORDER BY starttime")
    assert [(a["s"], a["e"]) for a in agents] == [("10", "12"), ("12", "14"), ("14", "16"), ("16", "18"), ("18", "20"), ("20", "21")]
    assert agents[1]["norepinephrine"] == 0.1 and agents[1]["vasopressin"] == 2.4
    assert agents[4] == {"s": "18", "e": "20", "norepinephrine": None, "vasopressin": None, "dobutamine": None, "dopamine": None}
    ned = {r["s"]: r["ned"] for r in hand.rows("SELECT strftime(starttime, '%H') AS s, norepinephrine_equivalent_dose AS ned FROM mimiciv_derived.norepinephrine_equivalent_dose")}
    # 0.1 ; 0.1 + 2.4 x 2.5 / 60 = 0.2 ; 0.1 ; dopamine 5 / 100 = 0.05 ; dobutamine-only and empty intervals excluded
    assert ned == {"10": 0.1, "12": 0.2, "14": 0.1, "20": 0.05}


def _rx(hand, drug, route, start, drug_type="MAIN", pharmacy_id=None):
    hand.insert(
        "mimiciv_hosp.prescriptions",
        dict(subject_id=1, hadm_id=10, pharmacy_id=pharmacy_id or next(_order), drug_type=drug_type, drug=drug, route=route,
             starttime=start, stoptime="2150-01-06 00:00"),
    )


@pytest.mark.slow
def test_antibiotic_keeps_systemic_routes_only(hand):
    hand.add_stay()
    _rx(hand, "Vancomycin", "IV", "2150-01-01 12:00")  # in the ICU stay
    _rx(hand, "Ciprofloxacin HCl", "PO/NG", "2150-01-01 07:00")  # before ICU admission: no stay_id
    _rx(hand, "Mupirocin Nasal Ointment 2%", "NU", "2150-01-01 13:00")  # nasal route is not excluded
    _rx(hand, "Erythromycin 0.5% Ophth Oint", "BOTH EYES", "2150-01-01 13:00")  # eye route
    _rx(hand, "Ciprofloxacin 0.3% Ophth Soln", "OU", "2150-01-01 13:00")  # eye route
    _rx(hand, "Clindamycin 1% Gel", "TP", "2150-01-01 13:00")  # topical
    _rx(hand, "Bacitracin Cream", "TP", "2150-01-01 13:00")
    _rx(hand, "Sodium Chloride 0.9%", "IV", "2150-01-01 13:00", drug_type="BASE")
    _rx(hand, "Heparin", "SC", "2150-01-01 13:00")  # not an antibiotic
    hand.build("antibiotic")
    got = {r["antibiotic"]: r["stay_id"] for r in hand.rows("SELECT antibiotic, stay_id FROM mimiciv_derived.antibiotic")}
    assert got == {"Vancomycin": 100, "Ciprofloxacin HCl": None, "Mupirocin Nasal Ointment 2%": 100}
