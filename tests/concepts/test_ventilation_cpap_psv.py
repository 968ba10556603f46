"""The CPAP/PSV rule on a hand-made patient: the episodes the ventilation concept (mimic-code: a CPAP/PSV
mode is invasive) and the CPAP/PSV-as-non-invasive variant each give."""

from __future__ import annotations
import pytest

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)

VENT_MODE, O2_FLOW, O2_DEVICE = 223849, 223834, 226732


def _hhmm(value) -> str:
    return str(value)[11:16]


def test_cpap_psv_charting_is_invasive_by_default_and_noninvasive_without_an_airway(hand):
    hand.add_stay()
    hand.chart(VENT_MODE, "2150-01-01 09:00", None, value="Standby")  # no class: neither starts an episode
    for t in ("2150-01-01 10:00", "2150-01-01 11:00", "2150-01-01 12:00", "2150-01-01 13:00", "2150-01-01 14:00"):
        hand.chart(VENT_MODE, t, None, value="CPAP/PSV")
    for t in ("2150-01-01 13:00", "2150-01-01 14:00"):  # endotracheal tube charted alongside from 13:00
        hand.chart(O2_FLOW, t, 5.0)
        hand.chart(O2_DEVICE, t, None, value="Endotracheal tube")
    hand.build("ventilation", "ventilation__cpap_psv_noninvasive")

    default = [(_hhmm(r["starttime"]), _hhmm(r["endtime"]), r["ventilation_status"])
               for r in hand.rows("SELECT * FROM mimiciv_derived.ventilation ORDER BY starttime")]
    assert default == [("10:00", "14:00", "InvasiveVent")]
    variant = [(r["ventilation_seq"], _hhmm(r["starttime"]), _hhmm(r["endtime"]), r["ventilation_status"])
               for r in hand.rows("SELECT * FROM mimiciv_derived.variant_ventilation__cpap_psv_noninvasive ORDER BY ventilation_seq")]
    assert variant == [
        (1, "10:00", "13:00", "NonInvasiveVent"),  # ends at the next charting of another status
        (2, "13:00", "14:00", "InvasiveVent"),
    ]
