"""Matching an order ("cxr", "CT abd/pelvis w contrast") to a named test.

One scorer for the gatekeeper (record entries, normal-result table) and the price table:
both sides are expanded (abbreviations), stemmed and stripped of stop words, then compared
with rapidfuzz's token-set ratio, with three guards: different imaging modalities never
match ("CT chest" is not "chest radiograph"), nor different body sites ("kidney radiograph"
is not "knee radiograph"), and a multi-word order that shares only part of its words with a
name is scored by the stricter token-sort ratio.
"""

from __future__ import annotations

import functools

from rapidfuzz import fuzz

from clinbench.dx.text import stem, tokens

# Body sites of imaging studies: words -> (site, the regions it lies in). Two studies of
# one modality overlap when one's site is the other's or lies in its region ("aortic CT
# angiography" and "CT angiography chest abdomen and pelvis"; "CT chest" and "CT pulmonary
# angiogram"), not when they are two organs of one region (kidney and gallbladder). A quadrant is one word
# (``text.ABBREVIATIONS``: "RLQ", "right lower quadrant"), the site of its organs; an "upper extremity" is the arm,
# a "lower extremity" the leg, a bare "extremity" the leg, as the price table's unqualified extremity duplex rows
# are; an MRCP is an MRI of the bile ducts and pancreas. An ankle, a foot and the ribs are sites of their own, so
# no other's by spelling ("ankle ultrasound" was the $250 ultrasound of the neck, "rib x-ray" the wrist's radiograph).
# The femur lies in the leg and at the hip: case 15's "femur x-ray" is its hip radiograph of the femoral neck fracture.
SITE_WORDS = [
    ("head brain cranial intracranial cerebral skull", "head", ()),
    ("neck", "neck", ()), ("carotid", "carotid", ("neck",)), ("thyroid", "thyroid", ("neck",)),
    ("chest thorax thoracic mediastinum mediastinal", "chest", ()),
    ("lung lungs pulmonary pleural", "lung", ("chest",)),
    ("heart cardiac coronary transthoracic transesophageal echocardiogram", "heart", ("chest",)),
    ("aorta aortic aortogram", "aorta", ("chest", "abdomen")),
    ("abdomen abdominal", "abdomen", ()),
    ("rightupperquadrant liver hepatic gallbladder biliary hepatobiliary", "liver", ("abdomen",)),
    ("pancreas pancreatic", "pancreas", ("abdomen",)), ("rightlowerquadrant appendix", "appendix", ("abdomen",)),
    ("leftupperquadrant spleen splenic", "spleen", ("abdomen",)), ("leftlowerquadrant colon colonic sigmoid", "colon", ("abdomen",)),
    ("kidney kidneys renal kub ureter", "kidney", ("abdomen",)),
    ("pelvis pelvic", "pelvis", ()), ("bladder", "bladder", ("pelvis",)),
    ("uterus uterine transvaginal ovary ovarian adnexa", "uterus", ("pelvis",)),
    ("leg legs extremity extremities limb calf thigh femoral popliteal", "leg", ()),
    ("ankle ankles", "ankle", ()), ("foot feet", "foot", ()), ("rib ribs", "rib", ()),
    ("hip hips", "hip", ()), ("femur femurs", "femur", ("leg", "hip")), ("knee knees", "knee", ()), ("spine spinal lumbar", "spine", ()),
    ("arm arms forearm hand hands wrist elbow shoulder humerus", "arm", ()),
]
SITES = {t: (site, {site, *regions}) for words, site, regions in SITE_WORDS for w in words.split()
         for t in tokens(w)}

_MODALITIES = {
    "ct": "ct", "mri": "mri", "radiograph": "radiograph", "ultrasound": "ultrasound", "angiography": "angio",
    "angiogram": "angio", "echocardiogram": "echo", "culture": "culture", "biopsy": "biopsy",
    "endoscopy": "endoscopy", "scan": "scan", "duplex": "ultrasound", "doppler": "ultrasound",
}
MODALITY_STEMS = {stem(k): v for k, v in _MODALITIES.items()}
FILLER = {stem(w) for w in "with without contrast study imag scan test order please".split()}


# A study enhanced by contrast: said so, an angiogram, or a named contrast study of vessels.
_WITH_CONTRAST = {stem(w) for w in "contrast biphasic aortogram venogram arteriogram".split()}
# A study without contrast: said so ("noncontrast" is what the abbreviations make of "without
# contrast", "no IV contrast", "unenhanced"); a calcium score is one by definition.
_WITHOUT_CONTRAST = {stem(w) for w in "noncontrast calcium".split()}


def modalities(toks: list[str] | tuple[str, ...]) -> frozenset[str]:
    """The modalities a name names; a scanner that guides a procedure is not one ("CT-guided lung biopsy" and "fine
    needle aspiration with ultrasound guidance" are procedures, not a CT or an ultrasound: "CT lungs" was priced as
    the $2,200 lung biopsy)."""
    return _modalities(tuple(toks))


@functools.lru_cache(maxsize=50000)  # asked of every name an order is scored against (10 M times in the dx tests)
def _modalities(toks: tuple[str, ...]) -> frozenset[str]:
    return frozenset(MODALITY_STEMS[t] for i, t in enumerate(toks)
                     if t in MODALITY_STEMS and not (i + 1 < len(toks) and toks[i + 1].startswith("guid")))


def contrast_phase(toks: list[str] | tuple[str, ...]) -> str:
    """"contrast" for a study with contrast or an angiogram, "none" for one said to be without
    contrast, "" when the name does not say."""
    if "angio" in modalities(toks) or _WITH_CONTRAST.intersection(toks):
        return "contrast"
    return "none" if _WITHOUT_CONTRAST.intersection(toks) else ""


def is_angiogram(toks: list[str] | tuple[str, ...]) -> bool:
    """Whether a study name is an angiogram (CT angiography, an aortogram, a venogram): its
    findings are the contrast in the vessels' lumen, unseen on a study without contrast."""
    return "angio" in modalities(toks) or bool({stem(w) for w in "aortogram venogram arteriogram".split()} & set(toks))


def is_doppler(toks: list[str] | tuple[str, ...]) -> bool:
    """Whether a study name says Doppler or duplex (flow imaging added to a greyscale ultrasound)."""
    return bool({"doppler", "duplex"}.intersection(toks))


def phases_differ(a: str, b: str) -> bool:
    """Whether two contrast phases are one with and one without contrast."""
    return {a, b} == {"none", "contrast"}


# A word of a site that names none by itself: a bare "quadrant" is any of four ("RUQ", "RLQ", ... are sites); where a
# study is done is no site ("bedside ultrasound", "point of care ultrasound", "POCUS").
_NO_SITE = {t for w in ("quadrant", "pointofcare", "bedside", "portable") for t in tokens(w)}


def is_modality_only(toks: list[str]) -> bool:
    """'CT', 'an ultrasound', 'MRI with contrast', 'quadrant ultrasound': a study without a body part."""
    rest = [t for t in toks if t not in MODALITY_STEMS and t not in FILLER and t not in _NO_SITE]
    # an echocardiogram names its organ; a CT or an ultrasound does not
    return bool(modalities(toks) - {"echo"}) and not rest


# Modalities whose study of an organ acquires its whole region and is billed as the region's study (a CT of the
# kidneys is a CT of the abdomen); an ultrasound's probe images the organ ordered.
REGION_MODALITIES = {"ct", "mri", "radiograph"}


def region_study(toks: tuple[str, ...]) -> tuple[str, ...] | None:
    """A CT, MRI or radiograph of organs named by their region ("CT lungs" -> CT chest, "kidney radiograph" ->
    abdomen radiograph, "MRI pancreas" -> MRI abdomen, "carotid CT angiography" -> CT angiography neck), the study it
    is billed as where no test is named by the organ; None for an order of no organ of one region, or of another
    modality (a "pancreas ultrasound" is not the complete abdominal ultrasound, nor a catheter angiogram of the
    kidneys a CT). A CT angiogram of an organ is its region's CT angiogram, never the region's CT (the price table
    keeps angiograms apart)."""
    mods = modalities(toks)
    scanned = mods & {"ct", "mri"}
    if not mods or mods - REGION_MODALITIES - ({"angio"} if scanned else set()) or not any(_region_of(t) for t in toks):
        return None
    return tuple(dict.fromkeys(_region_of(t) or t for t in toks))


def site_names(toks: tuple[str, ...]) -> tuple[str, ...]:
    """A name's words with each body site's word as its site's name ("MRI heart" and "cardiac MRI" both "mri heart",
    "skull radiograph" "head radiograph"); a modality's word is left as it is (an echocardiogram is an echo)."""
    return tuple(SITES[t][0] if t in SITES and t not in MODALITY_STEMS else t for t in toks)


@functools.lru_cache(maxsize=50000)  # asked of every name an order is scored against (27 M times in the dx tests)
def sites_of(toks: tuple[str, ...]) -> frozenset[str]:
    """The body sites a name's words name."""
    return frozenset(SITES[t][0] for t in toks if t in SITES)


def _region_of(token: str) -> str | None:
    """The one region an organ's word lies in ("lung" the chest, "renal" the abdomen); None for a region's own word,
    the aorta (chest and abdomen) or a word that names no site."""
    site, within = SITES.get(token, ("", set()))
    parents = within - {site}
    return next(iter(parents)) if len(parents) == 1 else None


def other_sites(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether each of two names names a body site the other does not: a site is never matched by the spelling of
    another ("kidney radiograph" scored 86.5 against "knee radiograph", case 22's knee effusion; "bladder
    ultrasound" 89 against "gallbladder ultrasound", cases 6 and 7's gallstones; "lung radiograph" 88.7 against the
    tibia's "leg x-ray"). A name of more sites still matches one of fewer ("CT chest abdomen pelvis", "ultrasound
    liver and kidneys")."""
    sa, sb = sites_of(a), sites_of(b)
    return bool(sa - sb) and bool(sb - sa)


@functools.lru_cache(maxsize=20000)
def name_tokens(name: str) -> tuple[str, ...]:
    return tuple(tokens(name))


def score_tokens(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    if not a or not b:
        return 0.0
    ma, mb = modalities(a), modalities(b)
    if ma and mb and not (ma & mb):
        return 0.0
    if other_sites(a, b):
        return 0.0
    sa, sb = " ".join(a), " ".join(b)
    if sa == sb:
        return 100.0
    score = fuzz.token_set_ratio(sa, sb)
    # A subset scores 100 in token-set ratio; prefer the name with fewest extra words.
    score -= 0.5 * len(set(a) ^ set(b))
    shared = set(a) & set(b)
    if not shared:
        score = min(score, fuzz.ratio(sa, sb))
    elif len(shared) < min(len(set(a)), len(set(b))):
        score = min(score, fuzz.token_sort_ratio(sa, sb))
    return float(score)


def name_score(order: str, name: str) -> float:
    """0-100 similarity of an order to a test name."""
    return score_tokens(name_tokens(order), name_tokens(name))


def best_match(order: str | tuple[str, ...], names: list[tuple[str | tuple[str, ...], object]],
               threshold: float) -> tuple[object | None, float]:
    """The payload of the best-scoring (name, payload) pair at or above ``threshold`` (``order`` and each name a
    name or its tokens)."""
    ot = order if isinstance(order, tuple) else name_tokens(order)
    best, best_score = None, 0.0
    for name, payload in names:
        s = score_tokens(ot, name if isinstance(name, tuple) else name_tokens(name))
        if s > best_score:
            best, best_score = payload, s
            if s == 100.0:
                break
    return (best, best_score) if best_score >= threshold else (None, best_score)
