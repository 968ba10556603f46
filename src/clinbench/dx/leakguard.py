"""The leak guard: no gatekeeper reply may name the case's final diagnosis.

Forbidden phrases are the final diagnosis, the case's listed synonyms, and the ICD-10-CM
names of its code and category (description and inclusion terms); each also in its
"core" form without qualifiers ("acute appendicitis" -> "appendicitis"). A clause leaks
when it contains every content word of some forbidden phrase (order-free, after spelling
folding, abbreviation expansion and stemming), so "fracture through the femoral neck"
is caught by "femoral neck fracture". Leaking clauses are removed; if nothing is left the
result is empty; the gatekeepers then serve the ordinary negative
for that kind of request instead, so a blocked reply reads like any other. Cases without a code get one by fuzzy
lookup of the diagnosis in the classification.
"""

from __future__ import annotations

from dataclasses import dataclass

from clinbench.dx import icd
from clinbench.dx.cases import Case
from clinbench.dx.text import clauses, core_tokens, tokens

@dataclass
class GuardResult:
    text: str  # "" when every clause leaked
    blocked: bool  # at least one clause was removed


class LeakGuard:
    def __init__(self, case: Case) -> None:
        code = case.icd10 if icd.is_code(case.icd10) else icd.lookup(case.final_diagnosis)
        names = [case.final_diagnosis, *case.synonyms, *icd.terms(code)]
        phrases: set[frozenset[str]] = set()
        for name in names:
            for toks in (tokens(name), core_tokens(name)):
                # A bare qualifier or a one-letter token is never a diagnosis on its own.
                toks = [t for t in toks if len(t) > 1]
                if toks:
                    phrases.add(frozenset(toks))
        self.phrases = sorted(phrases, key=len)
        self.code = code

    def leaks(self, text: str, allow: str = "") -> bool:
        have, echoed = set(tokens(text)), set(tokens(allow))
        return any(p <= have and not p <= echoed for p in self.phrases)

    def clean(self, reply: str, allow: str = "") -> GuardResult:
        """Remove leaking clauses. ``allow`` is the agent's own request: a phrase it wrote
        itself may be echoed back ("appendicitis assay: no abnormality detected"), which
        tells it nothing; only template replies pass it, never text from the record."""
        kept = [c for c in clauses(reply) if not self.leaks(c, allow)]
        if len(kept) == len(clauses(reply)):
            return GuardResult(reply, False)
        if not kept or all(len(tokens(c)) <= 1 for c in kept):
            return GuardResult("", True)
        text = "; ".join(c.rstrip(".;") for c in kept).strip()
        return GuardResult(text[0].upper() + text[1:] + ".", True)
