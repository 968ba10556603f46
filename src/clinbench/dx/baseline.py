"""Offline (non-LLM) diagnostic agents: a candidate list of common ED admission diagnoses.

The candidates (``data/ed_diagnoses.csv``, written for clinbench) are common reasons for an
emergency admission, each with its ICD-10-CM code, a profile (the features that point to it,
as short ';'-separated phrases: symptoms, signs, result words such as "high lipase" or
"appendicolith") and the tests that would confirm it. Each candidate's names are its own
plus the ICD-10-CM description and inclusion terms of its code (``icd.terms``).

Ranking a candidate against what the agent knows (the vignette and every reply served):

* **profile phrases found**: a phrase counts when all its content words occur in one clause
  of the findings that is not negated ("no leukocyte esterase" does not count), each phrase
  weighted by how few candidates share its words;
* **result flags**: every "analyte value" in a result is compared with the normal range of
  that analyte in ``data/normal_results.csv`` and adds the words "high <analyte>" or
  "low <analyte>" to the findings;
* **embedding**: the cosine (all-MiniLM-L6-v2) between the findings and the candidate's
  names and profile.

Agents: ``ed-instant`` diagnoses from the vignette alone (no cost); ``ed-workup`` asks five
standard history and examination questions (one visit), orders the confirmatory tests of the
leading candidates (up to six, three a turn), then diagnoses the best-ranked candidate.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import math
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from clinbench.atomic import atomic_path
from clinbench.dx.cases import Case
from clinbench.dx.text import expand, tokens

OFFLINE_AGENTS = ("ed-instant", "ed-workup")
QUESTIONS = (
    "When did the symptoms start and how have they changed?",
    "What is the past medical history?",
    "What medications does the patient take?",
    "Does the patient smoke, drink alcohol or use drugs, and any recent travel?",
    "What are the vital signs and the examination findings?",
)
MAX_ORDERS = 6
EMBED_WEIGHT = 4.0
_NEGATION = re.compile(r"^\s*(no|not|without|denies|negative for|absent|never|nil)\b", re.I)


@dataclass(frozen=True)
class Candidate:
    name: str
    code: str
    phrases: tuple[tuple[str, ...], ...]  # token sets of the profile phrases
    tests: tuple[str, ...]
    text: str  # names and profile, for the embedding


@functools.lru_cache(maxsize=1)
def candidates() -> tuple[Candidate, ...]:
    from clinbench.dx.icd import terms

    path = resources.files("clinbench.dx") / "data" / "ed_diagnoses.csv"
    out = []
    with path.open(encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            # a profile phrase says what is present; "no ..." phrases are reading notes only
            profile = [p.strip() for p in r["profile"].split(";") if p.strip() and not _NEGATION.match(p)]
            names = list(dict.fromkeys([r["diagnosis"], *terms(r["icd10"])]))
            out.append(Candidate(
                r["diagnosis"], r["icd10"], tuple(tuple(dict.fromkeys(tokens(p))) for p in profile if tokens(p)),
                tuple(t.strip() for t in r["tests"].split(";") if t.strip()),
                "; ".join(names) + ". " + "; ".join(profile)))
    return tuple(out)


@functools.lru_cache(maxsize=1)
def _candidate_vectors() -> np.ndarray:
    """Unit embeddings of the candidates, computed once and cached as .npy by content hash
    in ``$CLINBENCH_CACHE`` (default ``~/.cache/clinbench``)."""
    from clinbench.cache import cache_root
    from clinbench.dx.embeddings import embed

    texts = [c.text for c in candidates()]
    key = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
    path = cache_root() / f"ed-candidates-minilm-{key}.npy"
    if path.is_file():
        arr = np.load(path)
        if arr.shape == (len(texts), 384):
            return arr
    arr = embed(texts)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, arr)
    return arr


@functools.lru_cache(maxsize=1)
def _phrase_weights() -> dict[tuple[str, ...], float]:
    """Inverse candidate frequency of each phrase's words: rarer evidence weighs more."""
    cands = candidates()
    df: dict[str, int] = {}
    for c in cands:
        for w in {w for p in c.phrases for w in p}:
            df[w] = df.get(w, 0) + 1
    n = len(cands)
    return {p: sum(math.log(1 + n / df[w]) for w in p) / len(p) for c in cands for p in c.phrases}


@functools.lru_cache(maxsize=1)
def normal_ranges() -> dict[str, tuple[float, float]]:
    """Analyte -> (low, high) from the normal-results table ("lipase {10-60} U/L")."""
    from clinbench.dx.gatekeeper import normal_results

    out: dict[str, tuple[float, float]] = {}
    for row in normal_results():
        for m in re.finditer(r"([A-Za-z][A-Za-z -]*?)\s*\{([0-9.]+)-([0-9.]+)\}", row.template):
            name = m.group(1).strip().lower()
            name = re.sub(r"^(and|with|of)\s+", "", name)
            if 2 <= len(name) <= 40:
                out.setdefault(name, (float(m.group(2)), float(m.group(3))))
    return out


def result_flags(text: str) -> list[str]:
    """'high lipase', 'low sodium' ... for each analyte value outside its normal range."""
    flags = []
    low_text = expand(text)
    for name, (lo, hi) in normal_ranges().items():
        pattern = re.escape(expand(name)) + r"[^0-9;,.]{0,12}?(-?\d+(?:\.\d+)?)"
        for m in re.finditer(pattern, low_text):
            value = float(m.group(1))
            if value > hi * 1.05:
                flags.append(f"high {name}")
            elif value < lo * 0.95:
                flags.append(f"low {name}")
    return flags


def _clauses(text: str) -> list[set[str]]:
    out = []
    for part in re.split(r"[.;,\n]|\bbut\b|\bwith no\b", text):
        if part.strip() and not _NEGATION.match(part):
            out.append(set(tokens(part)))
    return out


def rank(findings: list[str]) -> list[tuple[float, Candidate]]:
    """Candidates best first, scored against the findings (vignette first)."""
    from clinbench.dx.embeddings import embed

    text = "\n".join(findings)
    clauses = _clauses(text) + [set(tokens(f)) for f in result_flags(text)]
    weights = _phrase_weights()
    vecs = embed(findings)
    query = vecs[0] * len(findings) + vecs[1:].sum(axis=0) if len(findings) > 1 else vecs[0]
    query = query / (np.linalg.norm(query) or 1.0)
    cos = _candidate_vectors() @ query
    scored = []
    for c, sim in zip(candidates(), cos):
        hit = sum(weights[p] for p in c.phrases if any(set(p) <= cl for cl in clauses))
        scored.append((hit / math.sqrt(len(c.phrases)) + EMBED_WEIGHT * float(sim), c))
    return sorted(scored, key=lambda x: -x[0])


class EdInstantAgent:
    name = "ed-instant"
    model = "ed-candidates"

    def start(self, case_summary: str, instructions: str) -> None:
        self.summary = case_summary

    def turn(self, observation: str) -> str:
        return f"<diagnosis>{rank([self.summary])[0][1].name}</diagnosis>"


class EdWorkupAgent:
    name = "ed-workup"
    model = "ed-candidates"

    def start(self, case_summary: str, instructions: str) -> None:
        self.findings = [case_summary]
        self.stage = "ask"
        self.orders: list[str] = []

    def _served(self, observation: str) -> None:
        for block in observation.split("\n\n"):
            m = re.match(r"(?:Q|Test): .*?\n(?:A|Result): (.*)", block, re.S)
            if m:
                self.findings.append(m.group(1).strip())

    def turn(self, observation: str) -> str:
        self._served(observation)
        if self.stage == "ask":
            self.stage = "plan"
            return "".join(f"<question>{q}</question>" for q in QUESTIONS)
        if self.stage == "plan":
            self.stage = "order"
            for _, c in rank(self.findings)[:3]:
                self.orders += [t for t in c.tests if t not in self.orders]
            self.orders = self.orders[:MAX_ORDERS]
        if self.orders:
            batch, self.orders = self.orders[:3], self.orders[3:]
            return "".join(f"<test>{t}</test>" for t in batch)
        return f"<diagnosis>{rank(self.findings)[0][1].name}</diagnosis>"


def make_offline_agent(spec: str, case: Case):
    return EdInstantAgent() if spec == "ed-instant" else EdWorkupAgent()
