"""How specific a diagnosis is against another: one rule, from the ICD-10-CM hierarchy.

Each text is coded to the ICD-10-CM code whose description or inclusion term it matches
best (content words compared after the judge's normalisation; a term may add only temporal
qualifiers such as "acute" or "chronic" that the text lacks). A code whose description says
"unspecified" stands for its parent (I82.40 "... unspecified deep veins of lower extremity"
is I82.4). Then:

* same code, or the candidate's code under the reference's: **same** / **narrower** (5);
* the reference's code under the candidate's, or a candidate whose code is "site
  unspecified" and whose words all name the reference (a "peptic ulcer" covers a duodenal
  ulcer: ICD-10-CM's K26 includes "duodenum ulcer (peptic)"): **broader** (4);
* same category, block or chapter otherwise (a sibling under another parent): **sibling**,
  **block**, **chapter** (never correct: at most 3);
* different chapters: **unrelated** (at most 2).

``relation`` returns None when either text cannot be coded confidently, or a code leaves
some of its text's words unaccounted for; the judge then uses its word rule alone.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

from clinbench.dx.text import expand, stem, tokens

# The judge's words for what ICD-10-CM words differently.
# (a word every match holds, pattern, replacement): the pattern is searched for only in a text holding the word
_WORDING = [(needle, re.compile(pattern), repl) for needle, pattern, repl in (
    ("embolism and", r"\bembolism and thrombosis\b", "thrombosis"),
    ("bleed", r"\bbleeding\b|\bbleed\b", "hemorrhage"), ("hemorrhagic", r"\bhemorrhagic\b", "hemorrhage"),
    ("leg", r"\blower legs?\b|\blegs?\b", "lower limb"), ("arm", r"\bupper arms?\b|\barms?\b", "upper limb"),
    ("extremit", r"\bextremity\b|\bextremities\b", "limb"), ("clot", r"\bclot\b", "thrombosis"),
    ("embol", r"\bemboli\b|\bembolus\b", "embolism"))]
_TEMPORAL = {stem(w) for w in ("acute", "chronic", "subacute", "initial", "encounter", "recurrent", "unspecified")}
_GENERIC = {stem(w) for w in ("site", "part", "parts", "type", "nos", "elsewhere", "classified", "specified",
                               "wall")}
MIN_COVER = 0.6
COMMON = 3000  # a word naming more ICD-10-CM names than this does not select candidates  # share of the text's words the chosen term must account for


# Diagnosis abbreviations and lay names the judge reads (too ambiguous for the shared
# abbreviation table: "mg" is a milligram to a gatekeeper).
DIAGNOSIS_NAMES = {
    "sbp": "spontaneous bacterial peritonitis", "apl": "acute promyelocytic leukemia",
    "aml": "acute myeloid leukemia", "cml": "chronic myeloid leukemia", "cll": "chronic lymphocytic leukemia",
    "gbs": "guillain-barre syndrome", "tb": "tuberculosis", "hsv": "herpes simplex", "vzv": "herpes zoster",
    "shingles": "herpes zoster", "uc": "ulcerative colitis", "ttp": "thrombotic thrombocytopenic purpura",
    "hus": "hemolytic uremic syndrome", "dic": "disseminated intravascular coagulation",
    "pid": "pelvic inflammatory disease", "bph": "benign prostatic hyperplasia", "hcc": "hepatocellular carcinoma",
    "high potassium": "hyperkalemia", "low potassium": "hypokalemia", "high sodium": "hypernatremia",
    "low sodium": "hyponatremia", "high calcium": "hypercalcemia", "low calcium": "hypocalcemia",
    "low blood sugar": "hypoglycemia", "high blood sugar": "hyperglycemia", "testicular": "testis",
    "colonic ischemia": "ischemic colitis", "myasthenic": "myasthenia gravis",
}
_NAMES_RE = re.compile(r"(?<![a-z0-9])(" + "|".join(re.escape(k) for k in sorted(DIAGNOSIS_NAMES, key=len, reverse=True))
                       + r")(?![a-z0-9])")


def diagnosis_text(text: str) -> str:
    """The text with diagnosis abbreviations and lay names spelled out."""
    return _NAMES_RE.sub(lambda m: DIAGNOSIS_NAMES[m.group(1)], text.lower())


def words(text: str) -> frozenset[str]:
    t = expand(diagnosis_text(text))
    for needle, pattern, repl in _WORDING:
        if needle in t:
            t = pattern.sub(repl, t)
    t = t.replace("extremity", "limb")
    return frozenset(tokens(t))


def _icd():
    from clinbench.dx.icd_index import classification

    return classification()


def words_cache_file():
    """Where the words of every ICD-10-CM name are kept (a Path), named by the bytes of the rules that
    make them (dx/text.py's abbreviations and stemmer, this module's names and wording), so a change to
    either is never read stale (the file named v3 missed the quadrant words added after it: 212 names)."""
    import hashlib

    from clinbench.cache import cache_root
    from clinbench.dx import text

    rules = hashlib.sha256(Path(text.__file__).read_bytes() + Path(__file__).read_bytes()).hexdigest()[:12]
    return cache_root() / f"icd10cm-words-v4-{rules}.json"


@functools.lru_cache(maxsize=1)
def _index() -> tuple[list[list[str]], dict[str, list[int]]]:
    """Every (code, words of one of its names) and a word -> entries index; the words are
    cached in $CLINBENCH_CACHE (tokenising 110,000 names takes ~3 s)."""
    from clinbench.atomic import atomic_path

    cm = _icd()
    path = words_cache_file()
    rows: list[list[str]] | None = None
    if path.is_file():
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            rows = None
    if rows is None:
        rows = []
        for code in cm.get_all_codes(True):
            if cm.is_chapter_or_block(code):
                continue
            for name in [cm.get_description(code), *cm.get_inclusion_term(code)]:
                rows.append([code, " ".join(sorted(words(name)))])
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            tmp.write_text(json.dumps(rows), encoding="utf-8")
    index: dict[str, list[int]] = {}
    for i, (_, ws) in enumerate(rows):
        for w in ws.split():
            index.setdefault(w, []).append(i)
    return rows, index


@functools.lru_cache(maxsize=4096)
def code_of(text: str) -> str | None:
    """The ICD-10-CM code a diagnosis text names, or None when no name fits well enough."""
    want = words(text)
    if not want:
        return None
    entries, index = _index()
    # entries reached through the text's rarer words ("left", "acute" name tens of thousands)
    posted = sorted((len(index.get(w, ())), w) for w in want - _TEMPORAL)
    rare = [w for n, w in posted if 0 < n <= COMMON] or [w for n, w in posted[:1] if n]
    seen = {i for w in rare for i in index[w]}
    best, best_key = None, None
    for i in seen:
        code, have = entries[i][0], frozenset(entries[i][1].split())
        extra = have - want - _TEMPORAL
        if extra - _GENERIC:
            continue  # the name says something the text does not
        shared = len(have & want)
        if shared < MIN_COVER * len(want):
            continue
        key = (shared, -len(code), -len(extra))  # the most general code that fits: G00, not G00.8 'Other ...'
        if best_key is None or key > best_key:
            best, best_key = code, key
    return best


def _general(code: str) -> str:
    """An "unspecified" code stands for its parent."""
    cm = _icd()
    while "unspecified" in cm.get_description(code).lower() and not cm.is_category(code):
        parent = cm.get_parent(code)
        if not parent or cm.is_chapter_or_block(parent):
            break
        code = parent
    return code


@functools.lru_cache(maxsize=4096)
def _names_words(code: str) -> frozenset[str]:
    """The words of a code's names, its ancestors' and (for a general code) its children's
    (L03.11 "Cellulitis of other parts of limb" covers "lower" through L03.115-L03.116)."""
    cm = _icd()
    out: set[str] = set()
    for child in cm.get_children(code):
        out |= words(cm.get_description(child))
    node: str | None = code
    while node and not cm.is_chapter_or_block(node):
        for name in [cm.get_description(node), *cm.get_inclusion_term(node), *cm.get_includes(node)]:
            out |= words(name)
        node = cm.get_parent(node)
    return frozenset(out)


def relation(reference: str, candidate: str) -> str | None:
    """same | narrower | broader | sibling | block | chapter | unrelated, or None (uncoded)."""
    r, c = code_of(reference), code_of(candidate)
    if r is None or c is None:
        return None
    cm = _icd()
    # Words a code does not account for ("alcoholic" when both texts code to K85) leave the
    # relation to the judge's word rule.
    left_r, left_c = words(reference) - _names_words(r) - _TEMPORAL, words(candidate) - _names_words(c) - _TEMPORAL
    if left_c or (left_r and r == c):
        return None
    rg, cg = _general(r), _general(c)
    if rg == cg:
        return "same" if r == c or words(reference) <= words(candidate) else (
            "narrower" if cm.is_ancestor(rg, c) or r != rg else "broader")
    if cm.is_ancestor(rg, cg):
        return "narrower"
    if cm.is_ancestor(cg, rg):
        return "broader"
    site_free = lambda code: any(p in cm.get_description(code).lower() for p in ("site unspecified", "unspecified site"))
    if site_free(c) and (words(candidate) - _TEMPORAL) <= _names_words(r) | words(reference):
        return "broader"
    if site_free(r) and (words(reference) - _TEMPORAL) <= _names_words(c) | words(candidate):
        return "narrower"
    anc_r, anc_c = cm.get_ancestors(rg), cm.get_ancestors(cg)
    cat = lambda code, anc: code if cm.is_category(code) else next((x for x in anc if cm.is_category(x)), None)
    if cat(rg, anc_r) is not None and cat(rg, anc_r) == cat(cg, anc_c):
        return "sibling"
    blk = lambda anc: next((x for x in anc if cm.is_block(x)), None)
    if blk(anc_r) is not None and blk(anc_r) == blk(anc_c):
        return "block"
    if anc_r and anc_c and anc_r[-1] == anc_c[-1]:
        return "chapter"
    return "unrelated"
