"""The judge: scores a candidate diagnosis against the reference on the SDBench 1-5 rubric.

| 5 | same as reference, or strictly more specific and correct |
| 4 | a minor qualifier missing; management largely unchanged |
| 3 | major error in etiology, site or specificity |
| 2 | only superficial features shared |
| 1 | wrong organ system |

A score of 4 or more counts as correct. A final diagnosis is one diagnosis: a list, hedged
("A or B or C", "A vs B", "A; B", a numbered differential) or joined ("A and B", "A, B", "A / B",
"A + B", "A. B." where each part names a diagnosis), scores as its worst member, in both judges
(``members`` splits it; one rule for both); a list of more than ``MAX_MEMBERS`` (5) scores 1
without grading its members. One interface (``Judge.score(reference,
candidate) -> Verdict``), two implementations:

* ``OfflineJudge``, deterministic. Both texts are expanded (abbreviations and everyday
  names, see ``text.py``; the judge's own names of diagnoses, and a disease named by its presenting
  syndrome, renal colic for an obstructing urinary stone, see ``specificity.py``) and compared word by word
  (a kind of a disease ICD-10-CM files apart, ``DIAGNOSIS_KINDS``, first: acute cystitis is a urinary tract
  infection): a word one side has and the other
  lacks is "explained" when it is a qualifier-free synonym of a word on the other side
  (cosine of the two words' embeddings >= ``word_match``) or when both words name the same
  ICD-10-CM code. Then, in order: an explicit conflict of site, side, type or form
  (left/right, anterior/inferior, type A/B, with/without ST elevation, reduced/preserved
  ejection fraction ...) caps the score at 3; no unexplained words on either side is 5; only
  the reference has unexplained words (the candidate is less specific) is 4 when the texts
  are still close (phrase cosine >= ``close``); only the candidate has them (more
  specific) is 5, or 3 when an added word names another disease (``_other_diseases``: a disease
  word, or a linked part that alone names another of the diagnoses the cases are drawn from); a
  candidate that negates the reference's disease ("not A", "A excluded") is 1; both sides have them is 4 only for near-paraphrases (cosine >=
  ``paraphrase``) and otherwise 3, 2 or 1 by cosine. Phrase cosines use all-MiniLM-L6-v2.
* ``LLMJudge``: a model given the SDBench rubric (``prompts/judge.md``, its version recorded
  with each verdict), returning JSON ``{"score": 1-5, "reason": ...}``.
"""

from __future__ import annotations

import csv
import functools
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Protocol

import numpy as np

from clinbench.dx.cases import demo_cases
from clinbench.dx.specificity import (DIAGNOSIS_KINDS, DIAGNOSIS_NAMES, _GENERIC, _TEMPORAL, _icd, _index, _names_words,
                                      code_of, diagnosis_text, relation)
from clinbench.dx.specificity import words as icd_words
from clinbench.dx.text import ABBREVIATIONS, QUALIFIERS, STOPWORDS, expand, is_disease_word, stem, tokens
from clinbench.errors import ClinbenchError, DataError

CORRECT = 4


@dataclass
class Verdict:
    score: int
    reason: str
    prompt: str = ""  # the version of the model prompt behind the verdict (LLM judge)
    # what the offline judge's word rule found that ICD-10-CM's hierarchy does not overrule: "conflict" (a
    # conflicting side, type or form) or "missing" (a disease of the reference the candidate does not name)
    firm: str = field(default="", compare=False, repr=False)

    @property
    def correct(self) -> bool:
        return self.score >= CORRECT


class Judge(Protocol):
    def score(self, reference: str, candidate: str) -> Verdict: ...


_HEDGE = re.compile(r"\s*(?:\band/or\b|(?<!\bwith)\s+or\b(?!\s+without)|\bvs\.?(?=\s)|\bversus\b|[;\n]|"
                    r"(?:^|\s)\(?\d[.)]\s|\?)\s*", re.I)
_LIST_LEAD = re.compile(r"^\s*(?:differential(?: diagnosis)?|either|possible|possibly|likely|probable)\s*[:\-]?\s*", re.I)
# What joins the diagnoses of a list ("A and B", "A, B", "A / B", "A + B", "A & B", "A. B."): a
# separator only between two texts that each name a diagnosis (``_names_diagnosis``), so "deep vein
# thrombosis of the femoral and popliteal veins" stays one.
_JOINER = re.compile(r"(\s*(?:\band\b|&|\+|,|(?:(?<=\w\w)|(?<=\s))/|(?<=\w\w[.!])\s)\s*)", re.I)
# A text that starts so qualifies the diagnosis before it ("pneumonia, with sepsis").
_LINKED = re.compile(r"^(?:with|without|due|secondary|complicated|caused|causing|from|in|of|on|after|"
                     r"following|involving|affecting|associated|related|at|to|not|no|rather|instead|"
                     r"excluding|negative)\b", re.I)


MAX_MEMBERS = 5  # a final answer listing more diagnoses than this scores 1, none of them graded


def _names_diagnosis(text: str) -> bool:
    """Whether a text names a diagnosis of its own: a disease word, or a whole ICD-10-CM name."""
    return any(is_disease_word(w) for w in _words(text)) or code_of(text) is not None


def _one_icd_name(text: str) -> bool:
    """Whether ICD-10-CM names the whole text as one diagnosis ("Acute embolism and thrombosis of
    deep veins of left lower extremity", "Atrial fibrillation and flutter")."""
    code = code_of(text)  # as ``relation`` reads a code: every word of the text accounted for
    return code is not None and not (icd_words(text) - _names_words(code) - _TEMPORAL)


def _symptom_only(text: str, another) -> bool:
    """Whether a text names only a symptom or sign: no disease word (in its words or ICD-10-CM's: a
    bleed is a hemorrhage), and ICD-10-CM names it in chapter R, by its code or by one of chapter R's
    names ("chest pain", "shortness of breath", "fever"; "seizure" is R56.9 "Seizure(s) (convulsive) NOS"
    though coded G40.89 "Other seizures"), a sign even where a case has it as its diagnosis; or no code
    names it and it names no diagnosis of the catalogue (``another``: "syncope", not "vasovagal syncope" or
    "adrenal insufficiency"). Not "acute exacerbation of COPD", "subarachnoid bleed", "migraine" (G43)."""
    if any(is_disease_word(w) for w in [*_words(text), *icd_words(text)]):
        return False
    code = code_of(text)
    if code is None:
        return not another(text)
    return code.startswith("R") or icd_words(text) - _TEMPORAL - _GENERIC in _sign_names()


@functools.lru_cache(maxsize=1)
def _sign_names() -> frozenset[frozenset[str]]:
    """The words of each ICD-10-CM name in chapter R (symptoms and signs), less those it gives in
    parentheses (words that may be present or absent: "Seizure(s) (convulsive) NOS"), NOS and the like
    (built once: 1,149 word sets, 25 ms)."""
    cm = _icd()
    return frozenset(frozenset(icd_words(re.sub(r"\([^)]*\)", " ", name), icd_name=True) - _TEMPORAL - _GENERIC)
                     for code in cm.get_all_codes(True) if code.startswith("R") and not cm.is_chapter_or_block(code)
                     for name in [cm.get_description(code), *cm.get_inclusion_term(code)])


def _codes_naming(stems: set[str]) -> set[str]:
    """The ICD-10-CM codes whose names (together) hold every one of these word stems."""
    found = sorted((_codes_with(w) for w in stems), key=len)
    return set(found[0]).intersection(*found[1:]) if found else set()


@functools.lru_cache(maxsize=4096)
def _codes_with(stem_: str) -> frozenset[str]:
    """The ICD-10-CM codes whose names hold this word stem (kept: a judgement asks for the same few stems
    again and again, and each set was built anew, 0.4 ms a time)."""
    rows, index = _index()
    return frozenset(rows[i][0] for i in index.get(stem_, ()))


def _one_code(parts: list[str]) -> bool:
    """Whether one ICD-10-CM code names every word the parts do not negate ("Graves disease,
    thyrotoxicosis" is E05.00): the parts name one diagnosis, not a list."""
    said = {stem(w) for p in parts for span in _negated_spans(p) for w in _words(span)}
    return bool(_codes_naming({stem(w) for p in parts for w in _words(p)} - said - _NEGATOR_STEMS))


def _listed(part: str) -> list[str]:
    """The diagnoses one hedge member joins by and , / + & or sentence ends."""
    bits = _JOINER.split(part)
    groups: list[str] = []
    named: list[bool] = []
    for i in range(0, len(bits), 2):
        piece = bits[i].strip(" ,.")
        if not piece:
            continue
        own = _names_diagnosis(piece) and not _LINKED.match(piece)
        if groups and not (own and named[-1]):
            groups[-1] += bits[i - 1] + bits[i]
            named[-1] = named[-1] or own
        else:
            groups.append(bits[i])
            named.append(own)
    out = [g.strip(" ,.") for g in groups if g.strip(" ,.")]
    if len(out) > 1 and (_one_icd_name(part) or _one_code(out) or all(relation(out[0], g) in ("same", "narrower", "broader")
                                                    for g in out[1:])):
        return [part]  # one diagnosis by ICD-10-CM, or one disease named twice ("Crohn's disease and regional ileitis")
    return out


def _denied_only(part: str) -> bool:
    """Whether every disease word of a part is said not to be there ("pneumonia unlikely", "DVT
    ruled out", "no thyroid storm"): it qualifies the diagnosis before it, it is no second guess."""
    disease = {stem(w) for w in _words(part) if is_disease_word(w)}
    said = {stem(w) for span in _negated_spans(part) for w in _words(span)}
    return bool(said) and disease <= said


def _ends_negated(part: str) -> bool:
    """Whether a part ends inside a negation ("... without perforation")."""
    return any(m.end() == len(part.rstrip(" ,.")) and m.group("span").strip()
               for m in _NEGATION_BEFORE.finditer(part.rstrip(" ,.")))


def _join_denied(parts: list[str]) -> list[str]:
    """A part whose diseases are all said absent joins the member before it (the first part, the one after)."""
    if len(parts) > 1 and _denied_only(parts[0]):
        parts = [f"{parts[0]}, {parts[1]}", *parts[2:]]
    out: list[str] = []
    for p in parts:
        if out and _denied_only(p):
            out[-1] = f"{out[-1]}, {p}"
        else:
            out.append(p)
    return out


def members(candidate: str) -> list[str]:
    """The diagnoses a final answer names: one for a diagnosis, several for a list, hedged
    ("A or B or C", "A vs. B", "A; B", "1. A 2. B", "A, B or C") or not ("A and B", "A, B",
    "A / B", "A + B", "A. B.": an unrelated diagnosis added is not a more specific one)."""
    text = "\n".join(candidate.strip().splitlines())  # every line break (\u2028 ...) separates
    if _one_icd_name(text):  # "Diverticulitis of sigmoid colon without perforation or abscess"
        return [text] if text else []
    parts: list[str] = []
    start = 0
    for m in [*_HEDGE.finditer(text), None]:
        piece = text[start:m.start() if m else len(text)].strip(" ,.")
        if piece:
            if parts and re.fullmatch(r"\s*or\s*", sep, re.I) and _ends_negated(parts[-1]):
                parts[-1] += f" or {piece}"  # "without perforation or abscess": both said absent
            else:
                parts.append(piece)
        if m:
            sep, start = m.group(0), m.end()
    out: list[str] = []
    for p in parts:
        out.extend(_listed(p))
    out = _join_denied(out)
    if len(out) <= 1:
        return [text] if text else []
    return [_LIST_LEAD.sub("", m) or m for m in out]


def worst_member(score_one, reference: str, candidate: str) -> Verdict:
    """A list scores as its worst member; a list of more than ``MAX_MEMBERS`` diagnoses scores 1
    without grading any (no judge model request for each of hundreds of names)."""
    parts = members(candidate)
    if len(parts) <= 1:
        return score_one(reference, candidate)
    if len(parts) > MAX_MEMBERS:
        return Verdict(1, f"a list of {len(parts)} diagnoses, more than {MAX_MEMBERS}: not a final diagnosis "
                          "(scored 1, no member graded)")
    verdicts = [score_one(reference, m) for m in parts]
    worst = min(verdicts, key=lambda v: v.score)
    return Verdict(worst.score, f"a list of {len(parts)} diagnoses scores as its worst member: {worst.reason}",
                   worst.prompt)


# Mutually exclusive values of one attribute: two different members, one on each side, conflict.
_EXCLUSIVE = [
    {"left", "right"},
    {"anterior", "inferior", "posterior", "lateral", "septal", "anterolateral", "inferolateral"},
    {"upper", "lower", "middle"},
    {"small", "large"},
    {"reduced", "preserved"},
    {"systolic", "diastolic"},
    {"typea", "typeb"},
    {"type1", "type2"},
    {"bacterial", "viral", "fungal"},
    {"pneumococcal", "meningococcal", "staphylococcal", "streptococcal", "listeria", "haemophilus"},
    {"gastric", "duodenal", "esophageal"},
    {"ischemic", "hemorrhage"},  # (a hemorrhagic stroke is a hemorrhage: ``_SAME_STEMS``)
    {"mobitz", "complete", "third", "first"},
    {"acute", "chronic"},
    {"community", "hospital", "nosocomial", "ventilator", "healthcare"},  # where a pneumonia was acquired
]
_EXCLUSIVE_STEMS = [{stem(w) for w in group} for group in _EXCLUSIVE]
# Words the word rule reads as one: the adjective of a disease is that disease, and a decompensated heart failure
# or COPD is its exacerbation (ICD-10-CM's J44.1 "Decompensated COPD with (acute) exacerbation")
_SAME_STEMS = {stem("hemorrhagic"): stem("hemorrhage"), stem("decompensated"): stem("exacerbation"),
               stem("decompensation"): stem("exacerbation")}
# Words that name only where a disease is, when a candidate adds them ("right lower lobe pneumonia")
_SITE_WORDS = {stem(w) for w in ("lobe", "lobes", "lobar", "multilobar", "upper", "lower", "middle", "basal", "base",
                                 "apical", "segment", "segmental", "artery", "territory")}
_NEGATORS = {"non", "not", "without", "no"}
_NEGATOR_STEMS = {stem(w) for w in _NEGATORS}

_WORD = re.compile(r"[a-z0-9]+")
_QUAL_STEMS = {stem(q) for q in QUALIFIERS} - {"type"}


def _words(text: str, keep_qualifiers: bool = False) -> list[str]:
    """Expanded words with 'type a'/'type 1' joined, stop words (and qualifiers) dropped."""
    t = expand(diagnosis_text(text))
    t = re.sub(r"\btype\s+([a-z0-9])\b", r"type\1", t)
    t = re.sub(r"\bnon[\s-]+", "non ", t)
    words = _WORD.findall(t)
    return [w for w in words if (w not in STOPWORDS or w in _NEGATORS)
            and (keep_qualifiers or stem(w) not in _QUAL_STEMS)]


def _negated(words: list[str]) -> bool:
    return any(w == "non" for w in words)


# A diagnosis said not to be there: a cue and the words it covers (to the clause's end, or back to
# its start for a cue that follows: "appendicitis excluded").
_NEGATION_BEFORE = re.compile(r"\b(?:no\s+evidence\s+(?:of|for)|no\s+sign\s+of|negative\s+for|absence\s+of|free\s+of|"
                              r"ruled\s+out|excluded|not(?!\s+(?:elsewhere|otherwise)\b)|no|without|rather\s+than|instead\s+of)\b"
                              r"(?P<span>[^,;:.()]*)", re.I)
_NEGATION_AFTER = re.compile(r"(?:^|(?<=[,;:.()]))(?P<span>[^,;:.()]*?)\b(?:(?:is|was|has\s+been|been)\s+)?(?<!not\s)(?:excluded|ruled\s+out|"
                             r"unlikely|not\s+likely|less\s+likely|absent|not\s+present|not\s+confirmed|"
                             r"(?<=\bis\s)negative|(?<=\bwas\s)negative|(?<=\bbeen\s)negative|disproven|refuted)\b", re.I)
# ("negative" negates only as "is/was negative": "gram-negative", "HIV negative patient" and
# "culture negative" name a kind, not an absence)


def _negated_spans(candidate: str) -> list[str]:
    return [m.group("span") for rx in (_NEGATION_BEFORE, _NEGATION_AFTER) for m in rx.finditer(candidate)
            if m.group("span").strip()]


def conflict(ref_words: list[str], cand_words: list[str]) -> str | None:
    rs, cs = ({_SAME_STEMS.get(stem(w), stem(w)) for w in ref_words},
              {_SAME_STEMS.get(stem(w), stem(w)) for w in cand_words})
    for group in _EXCLUSIVE_STEMS:
        a, b = rs & group, cs & group
        if a and b and not (a & b):
            return f"{'/'.join(sorted(a))} vs {'/'.join(sorted(b))}"
    if _negated(ref_words) != _negated(cand_words) and len(rs & cs) >= 2:
        # the feature one side negates, the other has: "non ST elevation" and "ST elevation", not "myocardial infarction"
        neg, other = (ref_words, cs) if _negated(ref_words) else (cand_words, rs)
        if any(stem(b) in other for a, b in zip(neg, neg[1:]) if a == "non"):
            return "one side negates a feature the other has"
    return None


class OfflineJudge:
    word_match = 0.62
    same_disease = 0.8
    close = 0.55
    paraphrase = 0.8

    def __init__(self) -> None:
        from clinbench.dx.embeddings import embedder

        self.model = embedder()  # caches every text's vector

    def _prepare(self, texts: list[str]) -> None:
        """Embed, in one batch, the texts not seen before (word and phrase vectors are reused)."""
        self.model.embed(texts)

    def _vec(self, text: str) -> np.ndarray:
        return self.model.embed([text])[0]

    def _explained(self, word: str, others: list[str]) -> bool:
        if not others:
            return False
        same = _SAME_STEMS.get(stem(word), stem(word))
        if any(_SAME_STEMS.get(stem(o), stem(o)) == same for o in others):
            return True
        v = self._vec(word)
        for o in others:
            need = self.same_disease if is_disease_word(word) and is_disease_word(o) else self.word_match
            if float(v @ self._vec(o)) >= need:
                return True
        return False

    def _names_its_own(self, reference: str, part: str) -> bool:
        """Whether a part of the candidate names the reference's own disease less specifically, by a
        feature or class of it: each of its disease words is a word of the reference, or of an everyday
        name of it, other than its head disease words, and the two are close ("upper GI bleed" of a
        bleeding duodenal ulcer, "urinary tract infection" of pyelonephritis, a "kidney infection"; not
        "subarachnoid hemorrhage" of the bleeding ulcer). A part naming the head disease ("cerebral
        embolism" of a pulmonary embolism) is that disease only if it scores correct on its own."""
        disease = {w for w in icd_words(part) if is_disease_word(w)}
        if not disease or not disease <= _known_as(reference) or _core(reference) & {stem(w) for w in _words(part)}:
            return False
        rp, pp = " ".join(_words(reference)) or reference, " ".join(_words(part)) or part
        self._prepare([rp, pp])
        return float(self._vec(rp) @ self._vec(pp)) >= self.close

    def _names_another(self, reference: str, part: str) -> bool:
        """Whether a linked part alone names another diagnosis than the reference: one of the diagnoses the
        benchmark's cases are drawn from (``_catalogue``) that the part alone is correct for and the
        reference is not ("influenza", "ovarian torsion", "adrenal insufficiency": no disease word to the
        judge). Named means scored 5, the diagnosis or more specific: "syncope" is less specific than
        vasovagal syncope, a sign. A complication the catalogue does not hold as a diagnosis stays a detail
        of the reference ("ruptured tubal ectopic pregnancy with hemoperitoneum"). A part is judged only
        against names that share a word with it or are close (cosine >= ``close``)."""
        said = {stem(w) for w in _words(part)}
        if not said:
            return False
        names, stems_, vecs = self._catalogue
        pp = " ".join(_words(part))
        self._prepare([pp])
        near = vecs @ self._vec(pp)
        return any((said & s or cos >= self.close) and self._score_one(d, part).score == 5
                   and not self._score_one(d, reference).correct
                   for d, s, cos in zip(names, stems_, near))

    @functools.cached_property
    def _catalogue(self) -> tuple[tuple[str, ...], list[set[str]], np.ndarray]:
        """The catalogue's names, with each name's word stems and phrase vector."""
        names = _catalogue()
        phrases = [" ".join(_words(d)) or d for d in names]
        self._prepare(phrases)
        return names, [{stem(w) for w in _words(d)} for d in names], np.stack([self._vec(p) for p in phrases])

    def score(self, reference: str, candidate: str) -> Verdict:
        return worst_member(self._score_one, reference, candidate)

    def _score_one(self, reference: str, candidate: str) -> Verdict:
        if not candidate.strip():
            return Verdict(1, "no diagnosis given")
        if denied := self._denies(reference, candidate):
            return Verdict(1, f"negates the reference diagnosis ({denied!r} is said not to be it)")
        if kind := _kind(reference, candidate):
            return kind
        verdict = self._by_words(reference, candidate)
        rel = relation(reference, candidate)
        if rel in _CAPS and {stem(w) for w in _words(candidate)} <= {stem(w) for w in _words(reference)}:
            rel = None  # "Colitis" for ischaemic colitis: a plain hypernym by its words, coded elsewhere
        return _specificity(verdict, rel)

    def _denies(self, reference: str, candidate: str) -> str | None:
        """The negated words of the candidate ("not A", "A excluded", "no evidence of A", "B
        without A") when they name the reference's disease: what it shares with the reference's
        disease words, or (a reference without one) what the judge itself scores as correct."""
        own = [{stem(w) for w in _words(s)} for s in _negated_spans(reference)]  # "A without B": B is not its disease
        disease = {stem(w) for w in _words(reference) if is_disease_word(w)}
        core = disease - set().union(*own)
        for span in _negated_spans(candidate):
            said = {stem(w) for w in _words(span)}
            if any(said <= o for o in own):
                continue  # the candidate negates what the reference negates
            if core & said or (said and not disease and self._score_words(reference, span).correct):
                return span.strip()
        return None

    def _score_words(self, reference: str, candidate: str) -> Verdict:
        return _specificity(self._by_words(reference, candidate), relation(reference, candidate))

    def _by_words(self, reference: str, candidate: str) -> Verdict:
        rw, cw = _words(reference), _words(candidate)
        rs, cs = {stem(w) for w in rw}, {stem(w) for w in cw}
        clash = conflict(_words(reference, keep_qualifiers=True), _words(candidate, keep_qualifiers=True))
        if rs == cs and not clash:
            return Verdict(5, "same diagnosis after normalisation")
        rp, cp = " ".join(rw) or reference, " ".join(cw) or candidate
        self._prepare([rp, cp, *rw, *cw])
        cos = float(self._vec(rp) @ self._vec(cp))
        if clash:
            return Verdict(3 if cos >= 0.45 else 2, f"conflicting {clash}", firm="conflict")
        r_only = [w for w in dict.fromkeys(rw) if stem(w) not in cs and w not in _NEGATORS]
        c_only = [w for w in dict.fromkeys(cw) if stem(w) not in rs and w not in _NEGATORS]
        shared = [w for w in cw if stem(w) in rs]
        r_left = [w for w in r_only if not self._explained(w, cw)]
        c_left = [w for w in c_only if not self._explained(w, rw)]
        if not r_left and c_left == ["syndrome"]:
            c_left = []  # "alcohol withdrawal syndrome": the reference's name with its generic head
        if not r_left and not c_left:
            return Verdict(5, f"equivalent wording (cosine {cos:.2f})")
        if r_left and c_left and all(stem(w) in _SITE_WORDS for w in c_left) and cos >= self.close and not any(
                is_disease_word(w) or stem(w) in _SITE_WORDS for w in r_left):
            # a less specific name with its site added ("right lower lobe pneumonia" for community-acquired pneumonia)
            return Verdict(4, f"less specific: lacks {', '.join(r_left)}, adds its site {', '.join(c_left)} "
                              f"(cosine {cos:.2f})")
        if not c_left:
            major = [w for w in r_left if is_disease_word(w)]
            if major:
                return Verdict(3, f"misses the disease named by {', '.join(major)} (cosine {cos:.2f})", firm="missing")
            if cos >= self.close and (shared or cos >= self.paraphrase):
                return Verdict(4, f"less specific: lacks {', '.join(r_left)} (cosine {cos:.2f})")
            return Verdict(3, f"much less specific: lacks {', '.join(r_left)} (cosine {cos:.2f})")
        if not r_left:
            other = _other_diseases(reference, candidate, c_left, lambda part: self._names_its_own(reference, part),
                                    lambda part: self._score_one(reference, part).correct,
                                    lambda part: self._names_another(reference, part))
            if other:  # "A with B", "B (A)": an unrelated diagnosis added is 3 (SDBench)
                return Verdict(3, f"adds another disease: {', '.join(other)} (cosine {cos:.2f})")
            return Verdict(5 if cos >= self.close else 3, f"more specific: adds {', '.join(c_left)} (cosine {cos:.2f})")
        if cos >= self.paraphrase:
            return Verdict(4, f"close paraphrase (cosine {cos:.2f})")
        if cos >= 0.45:
            return Verdict(3, f"different {', '.join(c_left)} for {', '.join(r_left)} (cosine {cos:.2f})")
        if cos >= 0.2:
            return Verdict(2, f"largely different diagnosis (cosine {cos:.2f})")
        return Verdict(1, f"unrelated diagnosis (cosine {cos:.2f})")


def _kind(reference: str, candidate: str) -> Verdict | None:
    """A candidate naming a kind of the reference's disease that ICD-10-CM files apart (``DIAGNOSIS_KINDS``:
    "acute cystitis" for a urinary tract infection) is narrower (5), the reference's kind named by what it is
    a kind of broader (4): the two texts' words the same once the kind's words are read as its class's."""
    rs, cs = {stem(w) for w in _words(reference)}, {stem(w) for w in _words(candidate)}
    for narrow, broad in _KINDS:
        if narrow <= cs and not narrow <= rs and (cs - narrow) | broad == rs:
            return Verdict(5, f"a kind of the reference: {' '.join(sorted(narrow))} is a {' '.join(sorted(broad))}")
        if narrow <= rs and not narrow <= cs and (rs - narrow) | broad == cs:
            return Verdict(4, f"less specific: the reference's {' '.join(sorted(narrow))} is a {' '.join(sorted(broad))}")
    return None


_KINDS = [({stem(w) for w in _words(a)}, {stem(w) for w in _words(b)}) for a, b in DIAGNOSIS_KINDS]


_CAUSE = re.compile(r"\b(?:due\s+to|secondary\s+to|caused\s+by|because\s+of|from)\b(.*)", re.I | re.S)
# What links a diagnosis to another it has, comes from or comes with ("A with B", "B due to A").
_LINK = re.compile(r"\b(?:associated\s+with|complicated\s+by|with|due\s+to|secondary\s+to|caused\s+by|because\s+of|"
                   r"from)\b", re.I)


def _other_diseases(reference: str, candidate: str, added: list[str], its_own, names_it, another) -> list[str]:
    """The added words that name another disease than the reference's: a disease word that is
    not the stated cause of the reference's disease ("hyperkalemia due to acute kidney injury") nor
    said to be absent ("appendicitis, not cholecystitis"), in a candidate no one ICD-10-CM code names
    whole ("perforated appendicitis with abscess" is K35.33, "Crohn's disease and regional ileitis"
    K50.0, "immune thrombocytopenic purpura" D69.3; no code names appendicitis with cholecystitis).
    The whole candidate, not the added words with one word of the reference: I26 names "pulmonary"
    with "embolism" and K26.0 "hemorrhage" with "duodenal ulcer", yet "pulmonary embolism with
    exacerbation of COPD" and "subarachnoid hemorrhage with bleeding duodenal ulcer" are two diseases
    each. A reference named only as the cause ("B due to A" for A, where B alone is not correct for
    A: ``names_it``) exempts nothing: B is another diagnosis ("cerebral infarction due to myocardial
    infarction"), unless a symptom or sign (``_symptom_only``), one a case may have as its diagnosis too
    ("seizure due to hyponatremia", as "hyponatremic seizure", is a seizure the hyponatremia caused).
    Nor is a linked part that names the reference's own disease
    less specifically another disease (``its_own``: "upper GI bleed from duodenal ulcer" for a
    bleeding duodenal ulcer, "urinary tract infection with pyelonephritis"). A linked part without a
    disease word to the judge is another disease when it alone names a diagnosis of the catalogue the
    reference is not correct for (``another``: "acute appendicitis with influenza", "ovarian torsion due
    to acute appendicitis"); a complication the catalogue does not name stays a detail ("... with
    hemoperitoneum"), and a sign stays a sign ("syncope due to pulmonary embolism"). Such a part stays
    another disease even when one ICD-10-CM code names the whole candidate: the cases tell the two apart,
    and ICD-10-CM's names hold both words for other reasons ("ischemic stroke with TIA" in Z86.73, a history
    of "TIA, and cerebral infarction ... stroke NOS"; "migraine with seizure" in G43.1's "migraine triggered
    seizures")."""
    cause = _CAUSE.search(candidate)
    causal = {stem(w) for w in _words(cause.group(1))} if cause else set()
    causal |= {stem(w) for span in _negated_spans(candidate) for w in _words(span)}  # said not to be there
    lead = candidate[:cause.start()] if cause else candidate
    if cause and not names_it(lead):
        # the reference is only the cause of another diagnosis: "B due to A" for A is another guess, but
        # a symptom or sign it causes is not ("chest pain due to aortic dissection": chapter R of ICD-10-CM),
        # nor the reference's own disease named less specifically ("upper GI bleed from duodenal ulcer")
        if _symptom_only(lead, another) or its_own(lead):
            return []
        return [w for w in added if stem(w) not in causal]
    parts = _LINK.split(candidate)
    owned = {stem(w) for part in parts if its_own(part) for w in _words(part)}
    named: set[str] = set()  # the words of a linked part naming another diagnosis of the catalogue
    if len(parts) > 1:
        for part in parts:
            words_ = {stem(w) for w in _words(part)}
            if (words_ - causal - owned) & {stem(w) for w in added} and another(part):
                named |= words_
    other = [w for w in added if (is_disease_word(w) or stem(w) in named) and stem(w) not in causal | owned]
    if other and not named and _codes_naming(_said_words(candidate)):
        return []
    return other


def _core(reference: str) -> set[str]:
    """The stems of the reference's disease words (of all its words when it has none: "Graves disease")."""
    return {stem(w) for w in _words(reference) if is_disease_word(w)} or {stem(w) for w in _words(reference)}


def _said_words(text: str) -> set[str]:
    """A diagnosis text's words as ICD-10-CM spells them, less those it says are absent and the
    temporal ones ICD-10-CM names leave out."""
    absent = set().union(*(icd_words(span) for span in _negated_spans(text)))
    return set(icd_words(text)) - absent - _TEMPORAL


def _known_as(reference: str) -> set[str]:
    """The reference's words as ICD-10-CM spells them, with those of the everyday names the judge
    reads as it ("kidney infection" for pyelonephritis, "heart attack" for myocardial infarction)."""
    own = set(icd_words(reference))
    return own.union(*(tokens(lay, expand_abbrev=False) for lay, formal in _EVERYDAY if formal <= own))


# (everyday name, the words of what it is read as), from the judge's two tables of names
_EVERYDAY = [(lay, icd_words(formal)) for lay, formal in [*ABBREVIATIONS.items(), *DIAGNOSIS_NAMES.items()]
             if icd_words(formal)]


@functools.lru_cache(maxsize=1)
def _catalogue() -> tuple[str, ...]:
    """The diagnoses the benchmark's cases are drawn from: the 68 ED diagnoses and the demo references."""
    with (_DATA / "ed_diagnoses.csv").open(encoding="utf-8") as fh:
        ed = [r["diagnosis"] for r in csv.DictReader(fh)]
    return tuple(dict.fromkeys([*ed, *(c.final_diagnosis for c in demo_cases())]))


# The ICD-10-CM relation of the two diagnoses decides specificity (one rule: dx/specificity.py);
# the word rule above stands where a text cannot be coded.
_CAPS = {"sibling": 3, "block": 3, "chapter": 3, "unrelated": 2}


def _specificity(verdict: Verdict, rel: str | None) -> Verdict:
    if rel is None or verdict.firm == "conflict" and rel in ("same", "narrower", "broader") or \
            verdict.firm == "missing" and rel == "broader":
        # a conflicting side, type or form stays one ("Non-ST elevation" is no site of a STEMI), and a parent code
        # names no disease the candidate leaves out ("Type 2 diabetes mellitus" for one with ketoacidosis)
        return verdict
    if rel in ("same", "narrower"):
        return verdict if verdict.score == 5 else Verdict(5, f"ICD-10-CM: {rel} code ({verdict.reason})")
    if rel == "broader":
        return verdict if verdict.score == 4 else Verdict(4, f"ICD-10-CM: less specific, a parent code ({verdict.reason})")
    cap = _CAPS[rel]
    if verdict.score <= cap:
        return verdict
    return Verdict(cap, f"ICD-10-CM: {rel} of the reference, not the same disease ({verdict.reason})")




class LLMJudge:
    """Model-backed judge (role 'judge'); a reply without a 1-5 score raises ``ModelError``."""

    def __init__(self, model) -> None:
        from clinbench.dx.prompts import prompt

        self.llm = model  # clinbench.dx.models.RoleModel
        self.label = f"llm:{model.spec.label}"
        self.prompt = prompt("judge")  # the SDBench rubric, prompts/judge.md

    def score(self, reference: str, candidate: str) -> Verdict:
        return worst_member(self._score_one, reference, candidate)

    def _score_one(self, reference: str, candidate: str) -> Verdict:
        data = self.llm.ask(self.prompt.text, f"Reference diagnosis: {reference}\nCandidate diagnosis: {candidate}",
                            tool="grade", schema={"type": "object", "required": ["score", "reason"],
                                                  "properties": {"score": {"type": "integer", "minimum": 1, "maximum": 5},
                                                                 "reason": {"type": "string"}}},
                            check=_grade_problem)
        return Verdict(_grade(data), str(data.get("reason", "")).strip(), self.prompt.version)


def _grade(data: dict) -> int | None:
    """The integer score 1-5 of a grade (5, 5.0 or "5"), or None."""
    score = data.get("score")
    if isinstance(score, str) and score.strip().isdecimal():  # not isdigit: "²" is a digit int() cannot read
        score = int(score)
    elif isinstance(score, float) and score.is_integer():
        score = int(score)
    return score if isinstance(score, int) and not isinstance(score, bool) and 1 <= score <= 5 else None


def _grade_problem(data: dict) -> str | None:
    """What is wrong with a grade (None when it has an integer score 1-5)."""
    if _grade(data) is None:
        return f"has no integer score from 1 to 5 (score: {data.get('score')!r})"
    return None


@functools.lru_cache(maxsize=1)
def _offline() -> OfflineJudge:
    return OfflineJudge()


def make_judge(kind: str, model=None) -> Judge:
    if kind == "offline":
        return _offline()
    if kind == "llm":
        if model is None:
            raise ClinbenchError("the llm judge needs a model: pass --judge-model (and its endpoint)")
        return LLMJudge(model)
    raise ClinbenchError(f"unknown judge {kind!r}: use offline or llm")


# --- calibration ------------------------------------------------------------------------

@dataclass
class CalibrationPair:
    reference: str
    candidate: str
    expected: int
    kind: str = ""


_DATA = resources.files("clinbench.dx") / "data"
# Labelled (reference, candidate, expected score) sets written for clinbench: the held-out
# check set (not used while the judge's rules were written), the ICD-10-CM specificity
# pairs, and the calibration set the rules were developed on.
LABELLED_SETS = {"check": _DATA / "judge_check.csv", "specificity": _DATA / "judge_specificity.csv",
                 "calibration": _DATA / "judge_calibration.csv"}


def calibration_pairs(path: str | Path | None = None) -> list[CalibrationPair]:
    """The bundled calibration set (written for clinbench), or a CSV with the same columns."""
    src = path or (resources.files("clinbench.dx") / "data" / "judge_calibration.csv")
    try:
        with open(src, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
    except FileNotFoundError as exc:
        raise DataError(f"no calibration file at {src}") from exc
    out = []
    for i, r in enumerate(rows, start=2):
        try:
            out.append(CalibrationPair(r["reference"], r["candidate"], int(r["expected"]), r.get("kind") or ""))
        except (KeyError, ValueError) as exc:
            raise DataError(f"{src} line {i}: needs reference, candidate and an integer expected score") from exc
    return out


def read_pairs(path: str | Path) -> list[tuple[str, str]]:
    """(reference, candidate) rows of a CSV with those two columns."""
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            if not {"reference", "candidate"} <= set(reader.fieldnames or []):
                raise DataError(f"{path} needs columns reference and candidate")
            return [(r["reference"], r["candidate"]) for r in reader]
    except FileNotFoundError as exc:
        raise DataError(f"no pairs file at {path}") from exc


def cohen_kappa(a: list[bool], b: list[bool]) -> float:
    """Cohen's kappa of two binary ratings."""
    n = len(a)
    if n == 0:
        raise DataError("no pairs to compare")
    po = sum(x == y for x, y in zip(a, b)) / n
    pa, pb = sum(a) / n, sum(b) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    return 1.0 if pe == 1 else (po - pe) / (1 - pe)


@dataclass
class Calibration:
    pairs: int
    exact_agreement: float
    within_one: float
    kappa_correct: float
    confusion: dict  # (expected>=4, predicted>=4) -> count
    disagreements: list[tuple[CalibrationPair, Verdict]]


def calibrate(judge: Judge, pairs: list[CalibrationPair]) -> Calibration:
    verdicts = [judge.score(p.reference, p.candidate) for p in pairs]
    exp = [p.expected >= CORRECT for p in pairs]
    got = [v.correct for v in verdicts]
    conf = {f"expected_{'correct' if e else 'wrong'}_judged_{'correct' if g else 'wrong'}": 0
            for e in (True, False) for g in (True, False)}
    for e, g in zip(exp, got):
        conf[f"expected_{'correct' if e else 'wrong'}_judged_{'correct' if g else 'wrong'}"] += 1
    return Calibration(
        pairs=len(pairs),
        exact_agreement=sum(p.expected == v.score for p, v in zip(pairs, verdicts)) / len(pairs),
        within_one=sum(abs(p.expected - v.score) <= 1 for p, v in zip(pairs, verdicts)) / len(pairs),
        kappa_correct=cohen_kappa(exp, got),
        confusion=conf,
        disagreements=[(p, v) for p, v in zip(pairs, verdicts) if (p.expected >= CORRECT) != v.correct],
    )
