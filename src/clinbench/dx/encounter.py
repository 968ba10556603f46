"""One diagnostic encounter: agent turns, gatekeeper replies, charges, transcript.

A turn is text with ``<question>``, ``<test>`` and ``<diagnosis>`` tags (several
questions or tests allowed), or a JSON object (``{"questions": [...]}``, ``{"tests":
[...]}``, ``{"diagnosis": "..."}``, or ``{"action": "question|test|diagnosis", "content":
...}``). As in the paper's baseline prompt, a turn asks questions or orders tests, not
both; a diagnosis ends the case. Only the first ``max_questions`` (5) questions and
``max_tests`` (3) tests of a turn are served. After ``max_turns`` turns without a
diagnosis the agent gets one last prompt that demands it ("forced"); no answer then
counts as no diagnosis.

The transcript is a list of JSON-able events (written as transcript.jsonl): the agent's
raw text, each action with the gatekeeper's reply, its REAL/SYNTHETIC/REFUSED source and
its cost, visit charges, format errors and the diagnosis. The source is never shown to
the agent.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Protocol

from clinbench import untrusted
from clinbench.dx.cases import Case
from clinbench.dx.costs import VISIT_FEE, CostLedger, PriceTable
from clinbench.dx.gatekeeper import Gatekeeper
from clinbench.dx.models import ModelError

MAX_QUESTIONS = 5
MAX_TESTS = 3
MAX_TURNS = 20

INSTRUCTIONS = f"""You are a physician working up a new patient. Each turn, do exactly one of:
- ask the patient or examine: up to {MAX_QUESTIONS} <question>...</question> tags;
- order tests: up to {MAX_TESTS} <test>...</test> tags, each naming one specific test or study
  (e.g. "complete blood count", "CT head without contrast"; not "blood work");
- give your final diagnosis: <diagnosis>...</diagnosis> (once; this ends the case).
Do not ask questions and order tests in the same turn. Every physician visit (a run of
question turns) costs ${VISIT_FEE:.0f}; every test has a price. Be accurate and economical."""

_TAG = {kind: re.compile(rf"<{kind}>(.*?)</{kind}>", re.I | re.S) for kind in ("question", "test", "diagnosis")}
_JSON = re.compile(r"\{.*\}", re.S)


class DxAgent(Protocol):
    name: str
    model: str

    def start(self, case_summary: str, instructions: str) -> None: ...

    def turn(self, observation: str) -> str: ...


@dataclass
class ParsedTurn:
    questions: list[str] = field(default_factory=list)
    tests: list[str] = field(default_factory=list)
    diagnosis: str | None = None

    @property
    def empty(self) -> bool:
        return not self.questions and not self.tests and self.diagnosis is None


def _as_list(value) -> list[str]:
    """A string or a list of strings; anything else an agent sends (5, true, {...}, [1, null])
    is no action, so the turn is the agent's format error, not the harness's crash."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v for v in value if v.strip()]
    return []


def parse_turn(text: str) -> ParsedTurn:
    """Read the actions of one agent turn (tags first, then JSON)."""
    turn = ParsedTurn(
        questions=[q.strip() for q in _TAG["question"].findall(text) if q.strip()],
        tests=[t.strip() for t in _TAG["test"].findall(text) if t.strip()],
    )
    dx = [d.strip() for d in _TAG["diagnosis"].findall(text)]
    turn.diagnosis = dx[0] if dx else None
    if not turn.empty:
        return turn
    m = _JSON.search(text)
    if not m:
        return turn
    try:
        data = untrusted.loads(m.group(0))
    except json.JSONDecodeError:
        return turn
    if not isinstance(data, dict):
        return turn
    action = {"questions": "question", "tests": "test"}.get(str(data.get("action", "")).lower(),
                                                             str(data.get("action", "")).lower())
    if action in ("question", "test", "diagnosis"):
        data = {action + ("" if action == "diagnosis" else "s"): data.get("content")}
    turn.questions = _as_list(data.get("questions", data.get("question")))
    turn.tests = _as_list(data.get("tests", data.get("test")))
    if data.get("diagnosis") is not None:
        turn.diagnosis = str(data["diagnosis"]).strip()
    return turn


@dataclass
class EncounterResult:
    case_id: int
    diagnosis: str
    forced: bool
    turns: int
    transcript: list[dict]
    ledger: CostLedger
    error: str | None = None  # a model call failed; transcript and ledger hold what happened before
    error_role: str | None = None  # 'agent' | 'gatekeeper'

    @property
    def cost(self) -> float:
        return self.ledger.total

    def sources(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for e in self.transcript:
            if "source" in e:
                out[e["source"]] = out.get(e["source"], 0) + 1
        return out


def _failed(case: Case, n: int, events: list[dict], ledger: CostLedger, exc: ModelError) -> EncounterResult:
    events.append({"turn": n, "event": "error", "role": exc.role, "text": str(exc)})
    return EncounterResult(case.case_id, "", False, n, events, ledger, error=str(exc), error_role=exc.role)


def run_encounter(case: Case, agent: DxAgent, gatekeeper: Gatekeeper, prices: PriceTable, *,
                  max_turns: int = MAX_TURNS, max_questions: int = MAX_QUESTIONS,
                  max_tests: int = MAX_TESTS) -> EncounterResult:
    """Play one encounter. A failed model call (agent or gatekeeper) ends it with ``error``
    set; nothing is charged for a request the gatekeeper failed to answer."""
    ledger = CostLedger()
    events: list[dict] = [{"turn": 0, "event": "vignette", "text": case.case_summary}]
    agent.start(case.case_summary, INSTRUCTIONS)
    observation = f"{INSTRUCTIONS}\n\nPatient: {case.case_summary}"
    in_visit = False
    for n in range(1, max_turns + 2):
        forced = n > max_turns
        if forced:
            observation = ("Turn limit reached. Give your final diagnosis now, in <diagnosis> tags, "
                           "with no questions or tests.")
        if hasattr(agent, "note_cost"):
            agent.note_cost(ledger.total, ledger.visit_cost, ledger.test_cost)
        try:
            text = agent.turn(observation)
        except ModelError as exc:
            events.extend(_drain(agent, n))
            return _failed(case, n, events, ledger, exc)
        events.extend(_drain(agent, n))
        events.append({"turn": n, "event": "agent", "text": text})
        parsed = parse_turn(text)
        if parsed.diagnosis is not None or forced:
            dx = (parsed.diagnosis or "").strip()
            events.append({"turn": n, "event": "diagnosis", "content": dx, "forced": forced})
            ledger.turn_kinds.append("diagnosis")
            return EncounterResult(case.case_id, dx, forced, n, events, ledger)
        if parsed.questions and parsed.tests:
            msg = "Ask questions or order tests in a turn, not both. Nothing was done; try again."
        elif parsed.empty:
            msg = "No action found. Use <question>, <test> or <diagnosis> tags."
        else:
            msg = ""
        if msg:
            events.append({"turn": n, "event": "format_error", "text": msg})
            ledger.turn_kinds.append("invalid")
            observation = msg
            continue
        lines: list[str] = []
        if parsed.questions:
            kind, items, limit = "question", parsed.questions, max_questions
        else:
            kind, items, limit = "test", parsed.tests, max_tests
        replies = []
        for item in items[:limit]:
            try:
                replies.append((item, gatekeeper.answer(kind, item)))
            except ModelError as exc:  # the harness failed: nothing of this turn is charged
                return _failed(case, n, events, ledger, exc)
        if kind == "question":
            if not in_visit:
                events.append({"turn": n, "event": "visit", "cost": VISIT_FEE})
            in_visit = True
        else:
            in_visit = False
        ledger.turn_kinds.append(kind)
        for item, reply in replies:
            event = {"turn": n, "event": kind, "content": item, "reply": reply.text,
                     "source": reply.source, "blocked": reply.blocked, "cost": 0.0}
            if getattr(reply, "prompt", ""):
                event["prompt"] = reply.prompt  # the gatekeeper prompt's version
            if kind == "test" and reply.source != "REFUSED":
                priced = prices.charge(item, getattr(reply, "served", ""))
                ledger.tests.append(priced)
                event.update(cost=priced.price, code=priced.code, priced_as=priced.description)
            events.append(event)
            lines.append(f"{'Q' if kind == 'question' else 'Test'}: {item}\n{'A' if kind == 'question' else 'Result'}: {reply.text}")
        if len(items) > limit:
            lines.append(f"Only the first {limit} {kind}s of a turn are handled; {len(items) - limit} ignored.")
            events.append({"turn": n, "event": "limit", "text": f"{len(items) - limit} {kind}s ignored"})
        observation = "\n\n".join(lines)
    raise AssertionError("unreachable: the forced turn always ends the encounter")


def _drain(agent: DxAgent, n: int) -> list[dict]:
    """Events an agent kept about its own reasoning (the panel's roles), stamped with the turn."""
    drain = getattr(agent, "drain_events", None)
    return [{"turn": n, **e} for e in drain()] if drain else []


def transcript_jsonl(result: EncounterResult) -> str:
    return "".join(json.dumps(e, ensure_ascii=False, default=str) + "\n" for e in result.transcript)
