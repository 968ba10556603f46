"""Diagnostic agents: deterministic baselines and a prompted LLM agent.

* ``scripted:FILE`` replays a file: each non-blank line (``#`` starts a comment) is one
  turn in the tag format, e.g. ``<question>Any fever?</question>``; a line may hold
  several tags. When the file runs out the agent has no diagnosis.
* ``oracle`` diagnoses the case's final diagnosis at once (a harness sanity check).
* ``instant-embed`` diagnoses from the vignette alone: the ICD-10-CM category whose
  description is nearest the vignette by sentence embedding.
* ``order-all`` orders every test the case lists (3 a turn), then answers like
  ``instant-embed`` on the mean embedding of the vignette and every result it was given.
* ``llm`` (with ``--model``) a chat model prompted with the encounter rules.
"""

from __future__ import annotations

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


class LLMAgent:
    """A chat model playing the physician with the encounter instructions as its system prompt."""

    name = "llm"

    def __init__(self, chat) -> None:
        self.chat = chat  # clinbench.dx.llm.JsonChat (only .complete is used)
        self.model = chat.model

    def start(self, case_summary: str, instructions: str) -> None:
        self.messages = [{"role": "system", "content": instructions}]

    def turn(self, observation: str) -> str:
        self.messages.append({"role": "user", "content": observation})
        text = self.chat.complete(self.messages)
        self.messages.append({"role": "assistant", "content": text})
        return text


AGENTS = ("oracle", "instant-embed", "order-all", "scripted:FILE", "llm")


def make_agent(spec: str, case: Case, *, chat=None):
    if spec == "oracle":
        return OracleAgent(case)
    if spec == "instant-embed":
        return InstantEmbedAgent()
    if spec == "order-all":
        return OrderAllAgent(case)
    if spec.startswith("scripted:"):
        return ScriptedAgent(spec.split(":", 1)[1])
    if spec == "llm":
        if chat is None:
            raise AgentError("the llm agent needs a model: pass --model (and OPENAI_BASE_URL/OPENAI_API_KEY)")
        return LLMAgent(chat)
    raise AgentError(f"unknown dx agent {spec!r}: use one of {', '.join(AGENTS)}")
