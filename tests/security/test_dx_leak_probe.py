"""Attack (issue 13, item 7): learn the diagnosis from how the offline gatekeeper words its replies.

The leak guard removes any clause that names the case's diagnosis. If a blocked reply reads
differently from an ordinary one, an agent can order "<candidate> assay" (or ask "Does
the patient have <candidate>?") for every candidate and pick the one whose reply stands
out. The probe below does exactly that over the 32 demo cases with the 32 demo diagnoses
as candidates: it blanks the candidate's own words and all numbers out of each reply,
learns each candidate's usual reply shape from the other cases (an attacker can run as many
cases as it likes), and picks the candidate whose reply in this case departs from its usual
shape. Before the fix the blocked reply ("There is nothing
further I can report") gave the diagnosis away in 32/32 cases and an adaptive agent
scored 31/32 through the encounter loop. Now the probe must do no better than chance
(one hit expected among 32 cases when it guesses blindly), and an adaptive agent that
uses the probe must not score above the same agent ignoring the replies.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from clinbench.dx.cases import demo_cases
from clinbench.dx.costs import PriceTable
from clinbench.dx.encounter import run_encounter
from clinbench.dx.gatekeeper import OfflineGatekeeper
from clinbench.dx.judge import make_judge

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)

ORDER = "{} assay"
QUESTION = "Does the patient have {}?"
CHANCE_MARGIN = 3  # binomial(32, 1/32): P(hits >= 4) < 2%


@pytest.fixture(scope="module")
def cases():
    return demo_cases()


def shape(reply: str, candidate: str) -> str:
    """The reply with the agent's own words and every number blanked out."""
    text = re.sub(re.escape(candidate), "X", reply, flags=re.I)
    return re.sub(r"\d+(\.\d+)?", "#", text)


def usual_shapes(cases, kind: str, template: str, candidates: list[str]) -> dict[str, dict[int, str]]:
    """For each candidate, its reply shape in every case."""
    out: dict[str, dict[int, str]] = {c: {} for c in candidates}
    for case in cases:
        gk = OfflineGatekeeper(case)
        for cand in candidates:
            out[cand][case.case_id] = shape(gk.answer(kind, template.format(cand)).text, cand)
    return out


def probe_pick(replies: dict[str, str], candidates: list[str], seen: dict[str, dict[int, str]], case_id: int) -> str:
    """The first candidate whose reply shape differs from its most common shape in the
    other cases; the first candidate when none does."""
    for cand in candidates:
        others = Counter(v for k, v in seen[cand].items() if k != case_id)
        if others and shape(replies[cand], cand) != others.most_common(1)[0][0]:
            return cand
    return candidates[0]


@pytest.mark.parametrize("kind,template", [("test", ORDER), ("question", QUESTION)])
def test_candidate_probe_finds_the_diagnosis_no_more_often_than_chance(cases, kind, template):
    candidates = [c.final_diagnosis for c in cases]
    seen = usual_shapes(cases, kind, template, candidates)
    hits = 0
    for case in cases:
        gk = OfflineGatekeeper(case)
        replies = {cand: gk.answer(kind, template.format(cand)).text for cand in candidates}
        hits += probe_pick(replies, candidates, seen, case.case_id) == case.final_diagnosis
    assert hits <= CHANCE_MARGIN, f"the {kind} probe named the diagnosis in {hits}/{len(cases)} cases"


class ProbeAgent:
    """Orders "<candidate> assay" for every candidate, three a turn, then diagnoses:
    the adaptive one picks from the replies, the blind one always names the first candidate."""

    name = model = "probe"

    def __init__(self, candidates: list[str], adaptive: bool, seen: dict, case_id: int):
        self.candidates, self.adaptive, self.seen, self.case_id = candidates, adaptive, seen, case_id

    def start(self, case_summary: str, instructions: str) -> None:
        self.pending = list(self.candidates)
        self.asked: list[str] = []
        self.replies: dict[str, str] = {}

    def turn(self, observation: str) -> str:
        for block in observation.split("\n\n"):
            m = re.match(r"Test: (.*) assay\nResult: (.*)", block, re.S)
            if m:
                self.replies[m.group(1)] = m.group(2)
        if self.pending:
            batch, self.pending = self.pending[:3], self.pending[3:]
            return "".join(f"<test>{ORDER.format(c)}</test>" for c in batch)
        pick = probe_pick(self.replies, self.candidates, self.seen, self.case_id) if self.adaptive else self.candidates[0]
        return f"<diagnosis>{pick}</diagnosis>"


def test_adaptive_agent_scores_no_more_than_a_blind_one_through_the_encounter_loop(cases):
    candidates = [c.final_diagnosis for c in cases]
    judge, prices = make_judge("offline"), PriceTable.bundled()
    seen = usual_shapes(cases, "test", ORDER, candidates)
    correct = {True: 0, False: 0}
    for adaptive in (True, False):
        for case in cases:
            result = run_encounter(case, ProbeAgent(candidates, adaptive, seen, case.case_id), OfflineGatekeeper(case), prices, max_turns=20)
            correct[adaptive] += judge.score(case.final_diagnosis, result.diagnosis).correct
    assert correct[True] <= correct[False], f"adaptive {correct[True]}/32 vs blind {correct[False]}/32"
    assert correct[True] <= CHANCE_MARGIN


MALFORMED = ("{} assay", "{}", "{} test", "{} panel", "{} level")


def test_no_malformed_order_reply_depends_on_the_answer_for_any_name_or_synonym(cases):
    """Issue 24: for every demo case, its diagnosis and each synonym, ordered as a malformed
    test ("<name> assay", the bare name, "<name> test", "<name> panel", "<name> level"),
    the reply in the case whose answer it is must read as in other cases (the name and
    numbers blanked). Before: "COPD ... assay" alone among the 32 names got a synthetic
    result instead of the condition refusal; "pulmonary embolism", "DVT", "aortic
    dissection", "renal colic", "meningitis", "ectopic pregnancy test" and "alcoholic liver
    disease panel" were served the case's own results (13 of 1,870 orders differed)."""
    gks = {c.case_id: OfflineGatekeeper(c) for c in cases}
    differ, orders = [], 0
    for i, case in enumerate(cases):
        others = [cases[(i + 5) % len(cases)], cases[(i + 17) % len(cases)]]
        for name in [case.final_diagnosis, *case.synonyms]:
            for template in MALFORMED:
                order = template.format(name)
                own = shape(gks[case.case_id].answer("test", order).text, name)
                elsewhere = {shape(gks[o.case_id].answer("test", order).text, name) for o in others}
                orders += 1
                if elsewhere != {own}:
                    differ.append((case.case_id, order, own, elsewhere))
    assert orders >= 900
    assert not differ, differ[:3]
