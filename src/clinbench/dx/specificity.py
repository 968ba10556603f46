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

from clinbench.dx.text import expand, is_disease_word, stem, tokens

# The judge's words for what ICD-10-CM words differently.
# (a word every match holds, pattern, replacement): the pattern is searched for only in a text holding the word
_WORDING = [(needle, re.compile(pattern), repl) for needle, pattern, repl in (
    ("embolism and", r"\bembolism and thrombosis\b", "thrombosis"),
    ("bleed", r"\bbleeding\b|\bbleed\b", "hemorrhage"), ("hemorrhagic", r"\bhemorrhagic\b", "hemorrhage"),
    ("leg", r"\blower legs?\b|\blegs?\b", "lower limb"), ("arm", r"\bupper arms?\b|\barms?\b", "upper limb"),
    ("extremit", r"\bextremity\b|\bextremities\b", "limb"), ("clot", r"\bclot\b", "thrombosis"),
    ("embol", r"\bemboli\b|\bembolus\b", "embolism"),
    # an acute kidney injury is N17 "Acute kidney failure" (N17.9 "Acute kidney injury (nontraumatic)"), not
    # S37.0 "Injury of kidney"; ICD-10-CM's kidney failure is the clinician's renal failure
    ("injur", r"\bacute (?:kidney|renal) injury\b", "acute kidney failure"),
    ("renal fail", r"\brenal failure\b", "kidney failure"))]
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
    # what clinicians answer for the ED's diagnoses (each the same disease; tests/dx/test_dx_judge_synonyms.py)
    "svt": "supraventricular tachycardia", "psvt": "paroxysmal supraventricular tachycardia",
    "avnrt": "atrioventricular re-entrant nodal tachycardia", "avrt": "atrioventricular re-entrant tachycardia",
    "hhs": "hyperosmolar hyperglycemic state", "aecopd": "acute exacerbation of chronic obstructive pulmonary disease",
    "aaa": "abdominal aortic aneurysm", "etoh": "alcohol", "mini-stroke": "transient ischemic attack",
    "stomach flu": "gastroenteritis", "simple faint": "vasovagal syncope", "neurocardiogenic": "vasovagal",
    "hypoadrenalism": "adrenal insufficiency", "addison's disease": "primary adrenal insufficiency",
    "addison\u2019s disease": "primary adrenal insufficiency", "addisons disease": "primary adrenal insufficiency",
    "addison disease": "primary adrenal insufficiency",
    "idiopathic thrombocytopenic purpura": "immune thrombocytopenic purpura",
    "pseudomembranous colitis": "clostridioides difficile colitis", "upper urinary tract infection": "pyelonephritis",
    "ruptured ectopic": "ruptured ectopic pregnancy", "ruptured ectopic pregnancy": "ruptured ectopic pregnancy",
    "inflamed appendix": "appendicitis", "adnexal torsion": "ovarian torsion", "testicle": "testis", "torsed": "torsion",
    "delirium tremens": "alcohol withdrawal delirium", "gouty arthritis": "gout",
    "ureterolithiasis": "ureteral calculus", "urolithiasis": "urinary calculus", "urosepsis": "urinary sepsis",
    "dissecting aortic aneurysm": "aortic dissection", "dissecting aneurysm of the aorta": "aortic dissection",
    "dissecting aneurysm of aorta": "aortic dissection", "preinfarction angina": "unstable angina",
    "intraparenchymal hemorrhage": "intracerebral hemorrhage", "intraparenchymal haemorrhage": "intracerebral hemorrhage",
    "intraparenchymal bleed": "intracerebral bleed", "pyogenic arthritis": "septic arthritis",
    "infectious arthritis": "septic arthritis", "infective arthritis": "septic arthritis",
    "bacterial arthritis": "septic arthritis",
    "cerebral infarction": "ischemic stroke", "symptomatic gallstones": "symptomatic cholelithiasis",
    "pulmonary thromboembolism": "pulmonary embolism", "cerebrovascular accident": "stroke",
    "extrauterine pregnancy": "ectopic pregnancy", "goitre": "goiter",
    **{f"{duct} {stone}": "choledocholithiasis" for duct in ("common bile duct", "bile duct", "cbd")
       for stone in ("stone", "stones", "calculus", "calculi")},
}
_NAMES_RE = re.compile(r"(?<![a-z0-9])(" + "|".join(re.escape(k) for k in sorted(DIAGNOSIS_NAMES, key=len, reverse=True))
                       + r")(?![a-z0-9])")
# Names of a disease by the syndrome it presents with, which ICD-10-CM codes apart as that symptom (N23
# "Unspecified renal colic": a colic no stone was found for): the diagnosis in an answer or a reference, never
# in ICD-10-CM's own names. Renal colic is an obstructing urinary stone's colic, and not the pyelonephritis
# or the ruptured aneurysm that mimic it; biliary colic is symptomatic gallstones (K80.2, "colic of gallbladder").
PRESENTING_NAMES = {
    "renal colic": "urinary calculus", "ureteric colic": "ureteral calculus", "ureteral colic": "ureteral calculus",
    "biliary colic": "symptomatic cholelithiasis", "gallstone colic": "symptomatic cholelithiasis",
}
_PRESENTING_RE = re.compile(r"(?<![a-z0-9])(" + "|".join(re.escape(k) for k in sorted(PRESENTING_NAMES, key=len,
                                                                                        reverse=True)) + r")(?![a-z0-9])")


# Diseases ICD-10-CM files apart from the one they are a kind of, as a clinician reads them (the words of a
# kind, the words of what it is a kind of): "acute cystitis" is an acute urinary tract infection, herpes
# simplex encephalitis a viral encephalitis, status asthmaticus an asthma exacerbation, hypertensive
# encephalopathy a hypertensive emergency, an adrenal crisis an adrenal insufficiency, alcoholic cirrhosis with
# ascites a decompensated alcoholic cirrhosis. The judge reads them as narrower (5) and broader (4).
DIAGNOSIS_KINDS = [("cystitis", "urinary tract infection"), ("herpes simplex", "viral"),
                   ("status asthmaticus", "asthma exacerbation"), ("hypertensive encephalopathy", "hypertensive emergency"),
                   ("adrenal crisis", "adrenal insufficiency"), ("cirrhosis with ascites", "decompensated cirrhosis")]


def diagnosis_text(text: str, *, icd_name: bool = False) -> str:
    """The text with diagnosis abbreviations and lay names spelled out, and (unless it is one of ICD-10-CM's
    own names) a disease named by its presenting syndrome named as the disease."""
    text = _NAMES_RE.sub(lambda m: DIAGNOSIS_NAMES[m.group(1)], text.lower())
    return text if icd_name else _PRESENTING_RE.sub(lambda m: PRESENTING_NAMES[m.group(1)], text)


def words(text: str, *, icd_name: bool = False) -> frozenset[str]:
    t = expand(diagnosis_text(text, icd_name=icd_name))
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
                rows.append([code, " ".join(sorted(words(name, icd_name=True)))])
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
        if any(a in want and b not in want and b in have and a not in have for a, b in _COURSES):
            continue  # "acute renal failure" is not N18.9's "chronic renal failure NOS"
        shared = len(have & want)
        if shared < MIN_COVER * len(want):
            continue
        key = (shared, -len(code), -len(extra))  # the most general code that fits: G00, not G00.8 'Other ...'
        # and of two that fit alike, the unspecified one: E05.9 "Thyrotoxicosis, unspecified", not E05.8 "Other
        # thyrotoxicosis"; I21.3 "STEMI of unspecified site", not I21.2 "... of other sites"
        if best_key is None or key > best_key or key == best_key and _other(best) and not _other(code):
            best, best_key = code, key
    return best


_COURSES = [(stem("acute"), stem("chronic")), (stem("chronic"), stem("acute"))]


@functools.lru_cache(maxsize=4096)
def _other(code: str) -> bool:
    """Whether a code is ICD-10-CM's "Other ..." of its parent, or of its "other sites": what a text naming
    no kind or site does not name."""
    name = _icd().get_description(code).lower()
    return name.startswith("other ") or "other site" in name


def _general(code: str) -> str:
    """An "unspecified" code stands for its parent; one of an unspecified site only for itself (I21.3 "STEMI
    of unspecified site" is no I21 "Acute myocardial infarction": the site rule below reads it)."""
    cm = _icd()
    while "unspecified" in cm.get_description(code).lower() and not cm.is_category(code) and not _site_free(code):
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
        out |= words(cm.get_description(child), icd_name=True)
    node: str | None = code
    while node and not cm.is_chapter_or_block(node):
        for name in [cm.get_description(node), *cm.get_inclusion_term(node), *cm.get_includes(node)]:
            out |= words(name, icd_name=True)
        node = cm.get_parent(node)
    return frozenset(out)


def _site_free(code: str) -> bool:
    """Whether a code's name leaves its site unspecified."""
    return any(p in _icd().get_description(code).lower() for p in ("site unspecified", "unspecified site"))


@functools.lru_cache(maxsize=4096)
def _own_words(code: str) -> frozenset[str]:
    """The words of a code's own names and its children's (``_names_words`` less its ancestors')."""
    cm = _icd()
    out: set[str] = set()
    for child in cm.get_children(code):
        out |= words(cm.get_description(child), icd_name=True)
    for name in [cm.get_description(code), *cm.get_inclusion_term(code), *cm.get_includes(code)]:
        out |= words(name, icd_name=True)
    return frozenset(out)


def _unnamed(text: str, code: str) -> set[str]:
    """The words of a text its code does not account for: any word none of the code's names, its
    ancestors' or its children's holds, and a disease word only a heading above the code holds (I71
    "Aortic aneurysm and dissection" heads I71.3 "Abdominal aortic aneurysm, ruptured": the dissection of
    "aortic dissection due to ruptured AAA" is I71.0's disease, not I71.3's)."""
    said = words(text) - _TEMPORAL
    return (said - _names_words(code)) | {w for w in said if is_disease_word(w)} - _own_words(code)


def relation(reference: str, candidate: str) -> str | None:
    """same | narrower | broader | sibling | block | chapter | unrelated, or None (uncoded)."""
    r, c = code_of(reference), code_of(candidate)
    if r is None or c is None:
        return None
    cm = _icd()
    # Words a code does not account for ("alcoholic" when both texts code to K85) leave the
    # relation to the judge's word rule.
    left_r, left_c = _unnamed(reference, r), _unnamed(candidate, c)
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
    if _site_free(c) and (words(candidate) - _TEMPORAL) <= _names_words(r) | words(reference):
        return "broader"
    if _site_free(r) and (words(reference) - _TEMPORAL) <= _names_words(c) | words(candidate):
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
