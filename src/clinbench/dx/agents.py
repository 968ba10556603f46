"""Diagnostic agents: a replayed script, the oracle, and the LLM agents.

* ``scripted:FILE`` replays a file: each non-blank line (``#`` starts a comment) is one
  turn in the tag format, e.g. ``<question>Any fever?</question>``; a line may hold
  several tags. When the file runs out the agent has no diagnosis.
* ``oracle`` diagnoses the case's final diagnosis at once (a harness sanity check).
* ``baseline`` (with ``--agent-model``): one chat model given the encounter rules, acting
  through the tools ask / order / diagnose (or tags), as the paper's baseline.
* ``dxo``: the MAI Diagnostic Orchestrator (``orchestrator.py``).
* The offline (non-LLM) agents live in ``baseline.py``.
"""

from __future__ import annotations

from pathlib import Path

from clinbench.agents.llm_clients import Message, ToolSpec
from clinbench.dx.cases import Case
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


ACTION_TOOLS = [
    ToolSpec("ask", "Ask the patient questions or examine them (one visit).",
             {"type": "object", "required": ["questions"],
              "properties": {"questions": {"type": "array", "items": {"type": "string"}}}}),
    ToolSpec("order", "Order specific tests or studies by name.",
             {"type": "object", "required": ["tests"],
              "properties": {"tests": {"type": "array", "items": {"type": "string"}}}}),
    ToolSpec("diagnose", "Give the final diagnosis; this ends the case.",
             {"type": "object", "required": ["diagnosis"], "properties": {"diagnosis": {"type": "string"}}}),
]


def _tags(name: str, args: dict) -> str:
    if name == "ask":
        return "".join(f"<question>{q}</question>" for q in _strings(args.get("questions")))
    if name == "order":
        return "".join(f"<test>{t}</test>" for t in _strings(args.get("tests")))
    if name == "diagnose":
        return f"<diagnosis>{args.get('diagnosis', '')}</diagnosis>"
    return ""


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value or [] if str(v).strip()] if isinstance(value, list) else []


class BaselineAgent:
    """One chat model playing the physician (the paper's baseline). Actions come as tool
    calls (ask / order / diagnose) or, from models without tool calling, as tagged text."""

    name = "baseline"

    def __init__(self, model) -> None:
        self.llm = model  # clinbench.dx.models.RoleModel of role 'agent'
        self.model = model.model

    def start(self, case_summary: str, instructions: str) -> None:
        self.system = instructions + "\nUse the tools ask, order and diagnose, or the tags above."
        self.messages: list[Message] = []
        self.pending: list[str] = []  # ids of tool calls awaiting results

    def turn(self, observation: str) -> str:
        if self.pending:
            for i, call_id in enumerate(self.pending):
                self.messages.append(Message("tool", observation if i == 0 else "(see the previous result)",
                                             tool_call_id=call_id))
        else:
            self.messages.append(Message("user", observation))
        reply = self.llm.complete(self.system, self.messages, ACTION_TOOLS)
        self.messages.append(Message("assistant", reply.text, tool_calls=list(reply.tool_calls)))
        self.pending = [c.id for c in reply.tool_calls]
        if reply.tool_calls:
            return "".join(_tags(c.name, c.arguments) for c in reply.tool_calls)
        return reply.text


AGENTS = ("oracle", "scripted:FILE", "baseline", "dxo")
LLM_AGENTS = ("baseline", "dxo")


def make_agent(spec: str, case: Case, *, model=None, dxo=None, prices=None):
    """An agent by name; ``model`` is the agent role's RoleModel, ``dxo`` the orchestrator's settings."""
    if spec == "oracle":
        return OracleAgent(case)
    if spec.startswith("scripted:"):
        return ScriptedAgent(spec.split(":", 1)[1])
    if spec in LLM_AGENTS:
        if model is None:
            raise AgentError(f"the {spec} agent needs a model: pass --agent-model (and its endpoint)")
        if spec == "baseline":
            return BaselineAgent(model)
        from clinbench.dx.orchestrator import DxOrchestrator, DxoSettings

        return DxOrchestrator(model, dxo or DxoSettings(), prices)
    from clinbench.dx.baseline import OFFLINE_AGENTS, make_offline_agent

    if spec in OFFLINE_AGENTS:
        return make_offline_agent(spec, case)
    raise AgentError(f"unknown dx agent {spec!r}: use one of {', '.join(AGENTS + OFFLINE_AGENTS)}")
