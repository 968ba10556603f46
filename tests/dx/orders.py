"""One order played through a whole encounter (scripted agent, offline gatekeeper, bundled prices): what the
agent was told and charged for it, as the ledger records it."""

from __future__ import annotations

from clinbench.dx.agents import ScriptedAgent
from clinbench.dx.costs import PriceTable
from clinbench.dx.encounter import run_encounter
from clinbench.dx.gatekeeper import OfflineGatekeeper


def play_order(case, tmp_path, order):
    """The encounter in which the agent orders ``order``, then diagnoses: (its result, the order's test event)."""
    script = tmp_path / "script.txt"
    script.write_text(f"<test>{order}</test>\n<diagnosis>x</diagnosis>\n")
    result = run_encounter(case, ScriptedAgent(script), OfflineGatekeeper(case), PriceTable.bundled())
    (event,) = [e for e in result.transcript if e["event"] == "test"]
    return result, event


def ordered_test(case, tmp_path, order):
    """The test event of ``order`` (``play_order``): its reply and cost."""
    return play_order(case, tmp_path, order)[1]
