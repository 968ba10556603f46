"""The MAI Diagnostic Orchestrator (MAI-DxO): one model playing a panel of five physicians.

Each turn is one structured call (the function ``panel``) whose sections are the roles of
the paper's "chain of debate":

* ``hypothesis``: Dr. Hypothesis, a ranked differential (up to three diagnoses with
  probabilities) updated after the latest findings;
* ``test_chooser``: Dr. Test-Chooser, up to three tests that best separate the leading
  diagnoses;
* ``challenger``: Dr. Challenger, the case against the leading diagnosis and a test that
  could falsify it;
* ``stewardship``: Dr. Stewardship, cheaper equivalents and vetoes of low-yield tests;
* ``checklist``: Dr. Checklist, silent quality control (test names, consistency);
* ``consensus``: the panel's one action, ask / test / diagnose, with its content.

Every turn's sections and the running differential are recorded in the transcript (event
``panel``), and the panel is told the running cost (visits, tests, total; the remaining
budget in budgeted mode). Modes (``DxoSettings.mode``):

* ``no-budget``: the panel as described;
* ``budgeted`` (``budget`` USD): before tests are ordered, each is priced; a test that would
  take the encounter past the budget is cancelled (recorded), and when every test of a turn
  is cancelled the panel diagnoses its leading hypothesis;
* ``question-only``: tests are not available; a test consensus is cancelled and the panel
  is told so;
* ``instant``: the panel diagnoses from the vignette in its first turn;
* ``ensemble`` (``panels`` N): N independent no-budget panels play the case, then one
  aggregation call reads their diagnoses and differentials and gives the final diagnosis
  (``run_ensemble``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from clinbench.agents.llm_clients import Message, ToolSpec
from clinbench.dx.costs import CostLedger, PriceTable
from clinbench.dx.encounter import MAX_TESTS, EncounterResult, run_encounter
from clinbench.dx.models import ModelError
from clinbench.errors import ClinbenchError

MODES = ("no-budget", "budgeted", "question-only", "instant", "ensemble")
ROLES = ("hypothesis", "test_chooser", "challenger", "stewardship", "checklist")


@dataclass(frozen=True)
class DxoSettings:
    mode: str = "no-budget"
    budget: float | None = None  # USD, budgeted mode
    panels: int = 3  # ensemble mode

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ClinbenchError(f"unknown dxo mode {self.mode!r}: use one of {', '.join(MODES)}")
        if self.mode == "budgeted" and (self.budget is None or self.budget <= 0):
            raise ClinbenchError("the budgeted mode needs --budget USD (a positive amount)")
        if self.mode == "ensemble" and self.panels < 2:
            raise ClinbenchError("the ensemble mode needs --panels N with N >= 2")

    @property
    def label(self) -> str:
        if self.mode == "budgeted":
            return f"budgeted-{self.budget:g}"
        if self.mode == "ensemble":
            return f"ensemble-{self.panels}"
        return self.mode


PANEL_SYSTEM = """You are the MAI Diagnostic Orchestrator: you play a panel of five physicians who work up \
one patient together, in a chain of debate, and agree on one action per turn.
- Dr. Hypothesis keeps a ranked differential (top three, with probabilities that sum to at most 1) and \
updates it in a Bayesian way after every new finding.
- Dr. Test-Chooser picks at most three tests that best discriminate between the leading diagnoses.
- Dr. Challenger argues against the leading diagnosis, looks for anchoring and contradictory evidence, \
and proposes a test that could falsify it.
- Dr. Stewardship prefers cheaper equivalent tests and vetoes low-yield ones; it watches the running cost.
- Dr. Checklist silently checks that test names are specific and orderable and that the panel is consistent.
The panel then agrees (consensus) on exactly one action: ask (up to five questions to the patient or \
about the examination), test (up to three specific tests by name, e.g. "complete blood count", \
"CT head without contrast"; never "blood work"), or diagnose (one specific final diagnosis; this ends \
the case). Questions and tests are never combined in one action. Every physician visit (a run of \
question turns) costs $300; every test has a price.
Answer by calling the function `panel` with every section filled."""

_DIFF_ITEM = {"type": "object", "required": ["diagnosis", "probability"],
              "properties": {"diagnosis": {"type": "string"}, "probability": {"type": "number"}}}
PANEL_SCHEMA = {
    "type": "object",
    "required": ["hypothesis", "test_chooser", "challenger", "stewardship", "checklist", "consensus"],
    "properties": {
        "hypothesis": {"type": "object", "required": ["differential"], "properties": {
            "differential": {"type": "array", "items": _DIFF_ITEM, "maxItems": 3},
            "update": {"type": "string"}}},
        "test_chooser": {"type": "object", "properties": {
            "tests": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_TESTS},
            "rationale": {"type": "string"}}},
        "challenger": {"type": "object", "properties": {
            "concern": {"type": "string"}, "falsifying_test": {"type": "string"}}},
        "stewardship": {"type": "object", "properties": {
            "advice": {"type": "string"}, "vetoed": {"type": "array", "items": {"type": "string"}}}},
        "checklist": {"type": "object", "properties": {"issues": {"type": "string"}}},
        "consensus": {"type": "object", "required": ["action"], "properties": {
            "action": {"type": "string", "enum": ["ask", "test", "diagnose"]},
            "questions": {"type": "array", "items": {"type": "string"}},
            "tests": {"type": "array", "items": {"type": "string"}},
            "diagnosis": {"type": "string"}}},
    },
}
PANEL_TOOL = ToolSpec("panel", "The panel's deliberation and consensus action for this turn.", PANEL_SCHEMA)

AGGREGATE_SYSTEM = """You chair the final meeting of several independent diagnostic panels that each \
worked up the same patient. Read their final diagnoses and differentials and give the single most \
likely, specific final diagnosis. Answer by calling the function `aggregate`."""
AGGREGATE_TOOL = ToolSpec("aggregate", "The aggregated final diagnosis.", {
    "type": "object", "required": ["diagnosis"],
    "properties": {"diagnosis": {"type": "string"}, "rationale": {"type": "string"}}})


def _panel_problem(data: dict) -> str | None:
    consensus = data.get("consensus")
    if not isinstance(consensus, dict) or not str(consensus.get("action", "")).strip():
        return "has no consensus section with an action (ask, test or diagnose)"
    return None


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    return [str(v).strip() for v in value if str(v).strip()] if isinstance(value, list) else []


def _differential(section) -> list[dict]:
    items = section.get("differential") if isinstance(section, dict) else None
    out = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and str(item.get("diagnosis", "")).strip():
            try:
                p = float(item.get("probability"))
            except (TypeError, ValueError):
                p = None
            out.append({"diagnosis": str(item["diagnosis"]).strip(), "probability": p})
        elif isinstance(item, str) and item.strip():
            out.append({"diagnosis": item.strip(), "probability": None})
    return out[:3]


class DxOrchestrator:
    name = "dxo"

    def __init__(self, model, settings: DxoSettings | None = None, prices: PriceTable | None = None) -> None:
        self.llm = model  # clinbench.dx.models.RoleModel of role 'agent'
        self.model = model.model
        self.settings = settings or DxoSettings()
        self.prices = prices or PriceTable.bundled()
        self.spent = self.visit_cost = self.test_cost = 0.0

    # hooks the encounter calls
    def start(self, case_summary: str, instructions: str) -> None:
        self.messages: list[Message] = []
        self.events: list[dict] = []
        self.differential: list[dict] = []
        self.note = ""
        self.turns = 0

    def note_cost(self, total: float, visits: float, tests: float) -> None:
        self.spent, self.visit_cost, self.test_cost = total, visits, tests

    def drain_events(self) -> list[dict]:
        out, self.events = self.events, []
        return out

    def _cost_line(self) -> str:
        line = (f"Running cost so far: ${self.spent:,.0f} (visits ${self.visit_cost:,.0f}, "
                f"tests ${self.test_cost:,.0f}).")
        if self.settings.mode == "budgeted":
            line += f" Budget ${self.settings.budget:,.0f}; remaining ${max(self.settings.budget - self.spent, 0):,.0f}."
        return line

    def _mode_line(self) -> str:
        mode = self.settings.mode
        if mode == "instant":
            return "Mode: instant. Diagnose now, from the vignette alone."
        if mode == "question-only":
            return "Mode: question only. Tests cannot be ordered; ask questions, then diagnose."
        if mode == "budgeted":
            return "Mode: budgeted. Tests that would exceed the budget are cancelled."
        return ""

    def turn(self, observation: str) -> str:
        self.turns += 1
        parts = [observation, self._cost_line()]
        if self._mode_line():
            parts.append(self._mode_line())
        if self.note:
            parts.append(self.note)
            self.note = ""
        self.messages.append(Message("user", "\n\n".join(parts)))
        rejected = len(self.llm.rejected)
        try:
            data = self.llm.answer(PANEL_SYSTEM, self.messages, PANEL_TOOL, check=_panel_problem)
        finally:  # a reply the panel had to correct, or that failed, stays in the transcript
            self.events.extend({"event": "rejected_reply", "role": "agent", **r} for r in self.llm.rejected[rejected:])
        # The conversation keeps the panel's own words as text, so any provider can replay it.
        self.messages.append(Message("assistant", json.dumps(data, ensure_ascii=False)))
        return self._act(data)

    def _act(self, data: dict) -> str:
        roles = {r: data.get(r) if isinstance(data.get(r), dict) else {} for r in ROLES}
        diff = _differential(roles["hypothesis"])
        if diff:
            self.differential = diff
        consensus = data.get("consensus") if isinstance(data.get("consensus"), dict) else {}
        action = str(consensus.get("action", "")).lower()
        questions = _strings(consensus.get("questions"))
        tests = _strings(consensus.get("tests"))
        diagnosis = str(consensus.get("diagnosis") or "").strip()
        event = {"event": "panel", "roles": roles, "differential": self.differential,
                 "consensus": {"action": action, "questions": questions, "tests": tests, "diagnosis": diagnosis},
                 "running_cost": self.spent}
        self.events.append(event)
        leading = self.differential[0]["diagnosis"] if self.differential else ""
        mode = self.settings.mode
        if mode == "instant" and action != "diagnose":
            action, diagnosis = "diagnose", leading
            event["override"] = "instant mode: diagnosed the leading hypothesis"
        if action == "diagnose":
            return f"<diagnosis>{diagnosis or leading}</diagnosis>"
        if action == "ask":
            return "".join(f"<question>{q}</question>" for q in questions)
        if action != "test":
            return ""
        if mode == "question-only":
            event["cancelled"] = tests
            self.note = "Tests are not available in question-only mode: ask or diagnose."
            return ""
        if mode == "budgeted":
            kept, cancelled, total = [], [], self.spent
            for t in tests[:MAX_TESTS]:
                price = self.prices.price(t).price
                if total + price <= self.settings.budget:
                    kept.append(t)
                    total += price
                else:
                    cancelled.append(t)
            if cancelled:
                event["cancelled"] = cancelled
                event["override"] = f"budget ${self.settings.budget:,.0f}: {len(cancelled)} test(s) cancelled"
            if not kept:
                event["override"] = f"budget ${self.settings.budget:,.0f} reached: diagnosed the leading hypothesis"
                return f"<diagnosis>{leading}</diagnosis>"
            tests = kept
        return "".join(f"<test>{t}</test>" for t in tests)


def merge_ledgers(ledgers: list[CostLedger]) -> CostLedger:
    """Ensemble cost (the paper's rule): every panel's visits, each distinct test once."""
    merged = CostLedger()
    seen: set[str] = set()
    for ledger in ledgers:
        merged.turn_kinds.extend(ledger.turn_kinds + ["end"])
        for t in ledger.tests:
            key = t.code or t.order.strip().lower()
            if key not in seen:
                seen.add(key)
                merged.tests.append(t)
    return merged


def run_ensemble(case, model, make_gatekeeper, prices: PriceTable, panels: int, *, max_turns: int) -> EncounterResult:
    """N independent no-budget panels, then one aggregation call."""
    events: list[dict] = [{"turn": 0, "event": "vignette", "text": case.case_summary}]
    results: list[EncounterResult] = []
    for i in range(1, panels + 1):
        agent = DxOrchestrator(model, DxoSettings(), prices)
        r = run_encounter(case, agent, make_gatekeeper(), prices, max_turns=max_turns)
        events.extend({"panel": i, **e} for e in r.transcript if e.get("event") != "vignette")
        results.append(r)
        if r.error:
            return EncounterResult(case.case_id, "", False, sum(x.turns for x in results), events,
                                   merge_ledgers([x.ledger for x in results]), r.error, r.error_role)
    ledger = merge_ledgers([r.ledger for r in results])
    turns = sum(r.turns for r in results)
    summary = []
    for i, r in enumerate(results, 1):
        diff = next((e["differential"] for e in reversed(r.transcript) if e.get("event") == "panel"), [])
        summary.append(f"Panel {i}: final diagnosis {r.diagnosis or '(none)'}; differential "
                       + "; ".join(f"{d['diagnosis']} ({d['probability']})" for d in diff))
    user = f"Patient: {case.case_summary}\n\n" + "\n".join(summary)
    try:
        reply = model.complete(AGGREGATE_SYSTEM, [Message("user", user)], [AGGREGATE_TOOL])
    except ModelError as exc:
        events.append({"turn": turns, "event": "error", "role": exc.role, "text": str(exc)})
        return EncounterResult(case.case_id, "", False, turns, events, ledger, str(exc), exc.role)
    call = next((c for c in reply.tool_calls if c.name == "aggregate"), None)
    diagnosis = str((call.arguments if call else {}).get("diagnosis") or reply.text or "").strip()
    events.append({"turn": turns, "event": "aggregate", "panels": [r.diagnosis for r in results],
                   "rationale": (call.arguments if call else {}).get("rationale", "")})
    events.append({"turn": turns, "event": "diagnosis", "content": diagnosis, "forced": False,
                   "panels_summed_cost": sum(r.cost for r in results)})
    return EncounterResult(case.case_id, diagnosis, False, turns, events, ledger)
