"""Diagnostic agents: deterministic baselines and a prompted LLM agent.

* ``scripted:FILE`` replays a file: each non-blank line (``#`` starts a comment) is one
  turn in the tag format, e.g. ``<question>Any fever?</question>``; a line may hold
  several tags. When the file runs out the agent has no diagnosis.
* ``oracle`` diagnoses the case's final diagnosis at once (a harness sanity check).
* ``instant-embed`` diagnoses from the vignette alone: the ICD-10-CM category whose
  description is nearest the vignette by sentence embedding.
* ``order-all`` orders every test the case lists (3 a turn), then answers like
  ``instant-embed`` on the mean embedding of the vignette and every result it was given.
* ``llm`` (with ``--model``): a chat model given the encounter rules, acting through the
  tools ask / order / diagnose (or tags); ``dxo``: the same with a prompt in which the model
  plays the MAI-DxO panel of five physicians (one model, one call per turn).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from clinbench.dx.cases import Case
from clinbench.dx.encounter import MAX_TESTS
from clinbench.errors import AgentError


class ScriptedAgent:
    name = "scripted"

    def __init__(self, path: str | Path, model: str = "") -> None:
        path = Path(path)
        if not path.is_file():
            raise AgentError(f"no script file at {path}: give scripted:PATH to a file of tagged turns")
        self.lines = [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines()
                      if ln.strip() and not ln.strip().startswith("#")]
        self.model = model or path.name
        self.i = 0

    def start(self, case_summary: str, instructions: str) -> None:
        self.i = 0

    def turn(self, observation: str) -> str:
        if self.i >= len(self.lines):
            return ""
        self.i += 1
        return self.lines[self.i - 1]


class OracleAgent:
    name = "oracle"
    model = ""

    def __init__(self, case: Case) -> None:
        self.case = case

    def start(self, case_summary: str, instructions: str) -> None:
        pass

    def turn(self, observation: str) -> str:
        return f"<diagnosis>{self.case.final_diagnosis}</diagnosis>"


def _nearest_description(vector: np.ndarray) -> str:
    from clinbench.dx.icd import nearest_diagnoses

    return nearest_diagnoses(vector[None, :], k=1)[0][0][1]


class InstantEmbedAgent:
    name = "instant-embed"
    model = "all-MiniLM-L6-v2"

    def start(self, case_summary: str, instructions: str) -> None:
        self.summary = case_summary

    def turn(self, observation: str) -> str:
        from clinbench.dx.embeddings import embed

        return f"<diagnosis>{_nearest_description(embed([self.summary])[0])}</diagnosis>"


class OrderAllAgent:
    name = "order-all"
    model = "all-MiniLM-L6-v2"

    def __init__(self, case: Case) -> None:
        self.tests = case.test_names

    def start(self, case_summary: str, instructions: str) -> None:
        self.summary = case_summary
        self.pending = list(self.tests)
        self.seen: list[str] = []
        self.first = True

    def turn(self, observation: str) -> str:
        if not self.first:
            self.seen.append(observation)
        self.first = False
        if self.pending:
            batch, self.pending = self.pending[:MAX_TESTS], self.pending[MAX_TESTS:]
            return "".join(f"<test>{t}</test>" for t in batch)
        from clinbench.dx.embeddings import embed

        # Numbers and units carry no meaning for a sentence encoder and pull every lab
        # panel towards the same point, so results are embedded as words only, and the
        # vignette weighs as much as all results together.
        results = [re.sub(r"[-+]?\d[\d.,/^x]*\s*(%|[a-zA-Z/^0-9]*/[a-zA-Z]+|mg|g|mmol|mmhg)?", " ", block)
                   for obs in self.seen for block in obs.split("\n\n") if block.strip()]
        vecs = embed([self.summary] + results)
        vec = vecs[0] + (vecs[1:].mean(axis=0) if len(vecs) > 1 else 0.0)
        vec /= np.linalg.norm(vec) or 1.0
        return f"<diagnosis>{_nearest_description(vec)}</diagnosis>"


ACTION_TOOLS = [
    {"type": "function", "function": {
        "name": "ask", "description": "Ask the patient questions or examine them (one visit).",
        "parameters": {"type": "object", "required": ["questions"],
                       "properties": {"questions": {"type": "array", "items": {"type": "string"}}}}}},
    {"type": "function", "function": {
        "name": "order", "description": "Order specific tests or studies by name.",
        "parameters": {"type": "object", "required": ["tests"],
                       "properties": {"tests": {"type": "array", "items": {"type": "string"}}}}}},
    {"type": "function", "function": {
        "name": "diagnose", "description": "Give the final diagnosis; this ends the case.",
        "parameters": {"type": "object", "required": ["diagnosis"],
                       "properties": {"diagnosis": {"type": "string"}}}}},
]

PANEL_PROMPT = """You run a virtual panel of five physicians who work up the patient together:
- Dr. Hypothesis keeps a ranked differential (top three) and updates it after every finding.
- Dr. Test-Chooser picks at most three tests per round that best separate the leading diagnoses.
- Dr. Challenger argues against the leading diagnosis and proposes tests that could falsify it.
- Dr. Stewardship prefers cheaper equivalent tests and vetoes low-yield ones.
- Dr. Checklist checks that test names are specific and the panel's reasoning is consistent.
Each turn, let the panel debate briefly, agree on one action, and take it."""


def _tags(name: str, args: dict) -> str:
    if name == "ask":
        return "".join(f"<question>{q}</question>" for q in args.get("questions") or [])
    if name == "order":
        return "".join(f"<test>{t}</test>" for t in args.get("tests") or [])
    if name == "diagnose":
        return f"<diagnosis>{args.get('diagnosis', '')}</diagnosis>"
    return ""


class LLMAgent:
    """A chat model playing the physician. Actions come as tool calls (ask / order /
    diagnose) or, from models without tool calling, as tagged text."""

    name = "llm"

    def __init__(self, chat, panel: bool = False) -> None:
        self.chat = chat  # clinbench.dx.llm.JsonChat
        self.model = chat.model
        self.panel = panel
        if panel:
            self.name = "dxo"

    def start(self, case_summary: str, instructions: str) -> None:
        system = (PANEL_PROMPT + "\n\n" + instructions) if self.panel else instructions
        system += "\nUse the tools ask, order and diagnose, or the tags above."
        self.messages: list[dict] = [{"role": "system", "content": system}]
        self.pending: list[str] = []  # ids of tool calls awaiting results

    def turn(self, observation: str) -> str:
        if self.pending:
            for i, call_id in enumerate(self.pending):
                self.messages.append({"role": "tool", "tool_call_id": call_id,
                                      "content": observation if i == 0 else "(see the previous result)"})
        else:
            self.messages.append({"role": "user", "content": observation})
        msg = self.chat.create(messages=self.messages, tools=ACTION_TOOLS)
        calls = list(msg.tool_calls or [])
        if calls:
            self.messages.append({"role": "assistant", "content": msg.content or "", "tool_calls": [
                {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
                for c in calls]})
            self.pending = [c.id for c in calls]
            text = ""
            for c in calls:
                try:
                    args = json.loads(c.function.arguments or "{}")
                except json.JSONDecodeError:
                    args = {}
                text += _tags(c.function.name, args if isinstance(args, dict) else {})
            return text
        self.pending = []
        self.messages.append({"role": "assistant", "content": msg.content or ""})
        return msg.content or ""


AGENTS = ("oracle", "instant-embed", "order-all", "scripted:FILE", "llm", "dxo")


def make_agent(spec: str, case: Case, *, chat=None):
    if spec == "oracle":
        return OracleAgent(case)
    if spec == "instant-embed":
        return InstantEmbedAgent()
    if spec == "order-all":
        return OrderAllAgent(case)
    if spec.startswith("scripted:"):
        return ScriptedAgent(spec.split(":", 1)[1])
    if spec in ("llm", "dxo"):
        if chat is None:
            raise AgentError(f"the {spec} agent needs a model: pass --model (and OPENAI_BASE_URL/OPENAI_API_KEY)")
        return LLMAgent(chat, panel=spec == "dxo")
    raise AgentError(f"unknown dx agent {spec!r}: use one of {', '.join(AGENTS)}")
