"""Clinical text normalisation shared by the gatekeeper, leak guard, price matching and judge.

One place for: tokenising, British/American spelling folding (haem/hem, oe/e), a light
suffix stemmer, stop words, and the abbreviation table that expands what clinicians type
("cbc", "cxr", "ekg", "mi") into the words the record and price table use.
"""

from __future__ import annotations

import functools
import re
import unicodedata

_TOKEN = re.compile(r"[a-z0-9]+")

STOPWORDS = frozenset(
    "a an the of in on at to for from with without and or by as is are was were be been "
    "has have had do does did this that these those it its his her their he she they we you "
    "i me my your our any some not no nor than then there here which who whom what when "
    "where why how all can could would should will shall may might must please also due "
    "unspecified specified other nos nec into per".split()
)

# Words that qualify a diagnosis without naming it: dropping them gives the core term
# ("acute appendicitis" -> "appendicitis") so the leak guard also catches the bare name.
QUALIFIERS = frozenset(
    "acute chronic subacute severe mild moderate left right bilateral primary secondary "
    "new onset newly diagnosed recurrent initial encounter closed open uncomplicated "
    "complicated simple type stage grade episode single multiple".split()
)

# Abbreviations and everyday names -> the words the record uses. Applied on token
# boundaries to lower-cased text before tokenising.
ABBREVIATIONS: dict[str, str] = {
    "cbc": "complete blood count", "fbc": "complete blood count", "bmp": "basic metabolic panel",
    "cmp": "comprehensive metabolic panel", "chem7": "basic metabolic panel",
    "chem 7": "basic metabolic panel", "u&e": "basic metabolic panel", "lft": "liver function tests", "lfts": "liver function tests", "hfp": "liver function tests",
    "ua": "urinalysis", "u/a": "urinalysis", "urine dipstick": "urinalysis",
    "cxr": "chest radiograph", "xr": "radiograph", "x-ray": "radiograph", "xray": "radiograph",
    "x ray": "radiograph", "film": "radiograph", "plain film": "radiograph",
    "ecg": "electrocardiogram", "ekg": "electrocardiogram", "12 lead": "electrocardiogram",
    "echo": "echocardiogram", "tte": "transthoracic echocardiogram",
    # the heart's ultrasound is the echocardiogram, not the chest ultrasound of the lungs and pleura
    "heart ultrasound": "echocardiogram", "cardiac ultrasound": "echocardiogram", "ultrasound heart": "echocardiogram",
    "ultrasound of the heart": "echocardiogram", "ultrasound of heart": "echocardiogram",
    "tee": "transesophageal echocardiogram", "toe": "transesophageal echocardiogram",
    "ctpa": "ct pulmonary angiogram", "cta": "ct angiography", "mra": "mr angiography", "mrv": "mr venography",
    # an MRCP is an MRI of the bile ducts and the pancreas
    "mrcp": "mri cholangiopancreatography biliary pancreas",
    "magnetic resonance cholangiopancreatography": "mri cholangiopancreatography biliary pancreas", "ercp": "endoscopic retrograde cholangiopancreatography",
    "egd": "upper endoscopy", "ogd": "upper endoscopy", "esophagogastroduodenoscopy": "upper endoscopy",
    "oesophagogastroduodenoscopy": "upper endoscopy", "gastroscopy": "upper endoscopy",
    "mri": "mri", "magnetic resonance imaging": "mri", "magnetic resonance": "mri", "computed tomography": "ct", "cat scan": "ct",
    "usg": "ultrasound", "u/s": "ultrasound", "sonogram": "ultrasound", "ultrasonography": "ultrasound",
    "sonography": "ultrasound",
    # the trauma ultrasound (its own study, not a breast ultrasound by spelling: "FAST ultrasound" was $250 as one)
    **dict.fromkeys(("fast exam", "fast scan", "fast ultrasound", "efast", "e-fast", "e fast", "extended fast"),
                    "focused assessment with ultrasound for trauma"),
    # where a study is done names no body site ("point of care ultrasound" got case 26's lung ultrasound)
    "pocus": "pointofcare ultrasound", "point of care": "pointofcare", "point-of-care": "pointofcare",
    "joint fluid": "synovial fluid",
    "duplex": "duplex ultrasound", "doppler": "doppler ultrasound",
    "abg": "arterial blood gas", "vbg": "venous blood gas", "bnp": "brain natriuretic peptide",
    "nt probnp": "nt-probnp", "ntprobnp": "nt-probnp",
    "trop": "troponin", "hs trop": "high-sensitivity troponin", "hstnt": "high-sensitivity troponin t",
    "tnt": "troponin t", "tni": "troponin i", "crp": "c-reactive protein", "esr": "erythrocyte sedimentation rate",
    "pct": "procalcitonin", "tsh": "thyroid stimulating hormone", "ft4": "free thyroxine", "t4": "thyroxine",
    "ft3": "free triiodothyronine", "t3": "triiodothyronine", "hba1c": "hemoglobin a1c", "a1c": "hemoglobin a1c",
    "inr": "inr", "ptt": "partial thromboplastin time",
    "aptt": "activated partial thromboplastin time", "coags": "coagulation panel", "coag": "coagulation panel",
    "ldh": "lactate dehydrogenase", "ck": "creatine kinase", "cpk": "creatine kinase",
    "lp": "lumbar puncture", "spinal tap": "lumbar puncture", "csf": "cerebrospinal fluid",
    "bhb": "beta-hydroxybutyrate", "hcg": "hcg", "bhcg": "hcg", "beta hcg": "hcg",
    "upt": "urine pregnancy test", "t&s": "type and screen", "g&s": "type and screen",
    "group and save": "type and screen", "type and cross": "type and crossmatch",
    "dat": "direct antiglobulin test", "coombs": "direct antiglobulin test", "ana": "antinuclear antibody",
    "hiv": "hiv", "hcv": "hepatitis c", "hbv": "hepatitis b", "pcr": "pcr", "rvp": "respiratory viral panel",
    "c diff": "clostridioides difficile", "c. diff": "clostridioides difficile", "cdiff": "clostridioides difficile",
    "clostridium difficile": "clostridioides difficile", "h pylori": "helicobacter pylori",
    "h. pylori": "helicobacter pylori", "phos": "phosphate", "wbc": "white cell count", "hgb": "hemoglobin", "hb": "hemoglobin",
    "plt": "platelets", "lactic acid": "lactate", "bun": "urea nitrogen", "cr": "creatinine",
    # a quadrant is one site, named by one word ("right lower quadrant" is not the right upper one, nor "right
    # lower lobe"); an upper extremity is the arm, a lower one the leg
    "ruq": "rightupperquadrant", "right upper quadrant": "rightupperquadrant",
    "rlq": "rightlowerquadrant", "right lower quadrant": "rightlowerquadrant",
    "luq": "leftupperquadrant", "left upper quadrant": "leftupperquadrant",
    "llq": "leftlowerquadrant", "left lower quadrant": "leftlowerquadrant",
    "upper extremity": "arm", "upper extremities": "arms", "lower extremity": "leg", "lower extremities": "legs",
    "abd": "abdomen", "abdo": "abdomen", "abdominal": "abdomen",
    # "with"/"without" are stop words, so contrast phases become their own tokens.
    "with and without contrast": "biphasic contrast", "without and with contrast": "biphasic contrast",
    "w and wo contrast": "biphasic contrast", "w/wo contrast": "biphasic contrast",
    "without contrast": "noncontrast", "w/o contrast": "noncontrast", "wo contrast": "noncontrast",
    "without iv contrast": "noncontrast", "non-contrast": "noncontrast", "non contrast": "noncontrast",
    "unenhanced": "noncontrast", "plain ct": "ct noncontrast", "with iv contrast": "contrast",
    # "no" is a stop word too: "CT chest (no contrast)" read as a CT with contrast
    "no contrast": "noncontrast", "no iv contrast": "noncontrast", "no intravenous contrast": "noncontrast",
    "w/o iv contrast": "noncontrast", "wo iv contrast": "noncontrast", "without intravenous contrast": "noncontrast",
    "non-enhanced": "noncontrast", "nonenhanced": "noncontrast", "non enhanced": "noncontrast",
    "with intravenous contrast": "contrast", "ncct": "ct noncontrast",
    "hrct": "high resolution ct noncontrast", "high resolution ct": "high resolution ct noncontrast",
    "w contrast": "contrast", "w/ contrast": "contrast", "w/contrast": "contrast", "with contrast": "contrast",
    "iv contrast": "contrast", "contrast-enhanced": "contrast", "contrast enhanced": "contrast",
    "w/": "with", "w/o": "without",
    "dvt": "deep vein thrombosis", "pe": "pulmonary embolism", "mi": "myocardial infarction",
    "stemi": "st elevation myocardial infarction", "nstemi": "non st elevation myocardial infarction",
    "chf": "congestive heart failure", "hf": "heart failure", "copd": "chronic obstructive pulmonary disease",
    "dka": "diabetic ketoacidosis", "uti": "urinary tract infection", "aki": "acute kidney injury",
    "arf": "acute renal failure", "ckd": "chronic kidney disease", "af": "atrial fibrillation",
    "afib": "atrial fibrillation", "a fib": "atrial fibrillation", "rvr": "rapid ventricular response",
    "sah": "subarachnoid hemorrhage", "cva": "stroke", "tia": "transient ischemic attack",
    "sbo": "small bowel obstruction", "itp": "immune thrombocytopenia", "ptx": "pneumothorax",
    "cap pneumonia": "community acquired pneumonia", "gi": "gastrointestinal", "ugib": "upper gastrointestinal bleed",
    "lgib": "lower gastrointestinal bleed", "chb": "complete heart block", "cdi": "clostridioides difficile infection",
    "hfref": "heart failure with reduced ejection fraction", "hfpef": "heart failure with preserved ejection fraction",
    "t1dm": "type 1 diabetes mellitus", "t2dm": "type 2 diabetes mellitus", "dm": "diabetes mellitus",
    "htn": "hypertension", "cad": "coronary artery disease", "acs": "acute coronary syndrome",
    "ards": "acute respiratory distress syndrome", "sle": "systemic lupus erythematosus",
    "gerd": "gastroesophageal reflux disease",
    "ibd": "inflammatory bowel disease", "sirs": "systemic inflammatory response syndrome",
    "heart attack": "myocardial infarction", "kidney stone": "renal calculus", "renal stone": "renal calculus",
    "blood clot": "thrombosis", "broken": "fracture", "fractured": "fracture", "collapsed lung": "pneumothorax",
    "brain bleed": "intracranial hemorrhage", "mini stroke": "transient ischemic attack",
    "overactive thyroid": "hyperthyroidism", "kidney infection": "pyelonephritis",
    "third degree": "complete", "third-degree": "complete", "3rd degree": "complete", "ureteric": "ureteral",
    # laboratory shorthand of hospital lab strings ("Creat-1.4 UreaN-22 TotBili-0.8")
    "creat": "creatinine", "urean": "urea nitrogen", "totbili": "total bilirubin", "alkphos": "alkaline phosphatase",
    "ctropnt": "troponin t", "fena": "fractional excretion of sodium", "probnp": "nt-probnp", "hco3": "bicarbonate",
    "mca": "middle cerebral artery", "aca": "anterior cerebral artery", "pca": "posterior cerebral artery",
    "c difficile": "clostridioides difficile", "c. difficile": "clostridioides difficile",
    "heart block": "atrioventricular block", "av block": "atrioventricular block",
    "prerenal azotemia": "prerenal acute kidney injury", "gallstone": "calculous", "gallstones": "calculous",
    "stone": "calculus", "stones": "calculi", "underactive thyroid": "hypothyroidism",
}

_ABBREV_RE = re.compile(
    r"(?<![a-z0-9])(" + "|".join(re.escape(k) for k in sorted(ABBREVIATIONS, key=len, reverse=True)) + r")(?![a-z0-9])"
)


_AE = re.compile(r"(?<=[a-z])ae(?=[a-z])|(?<![a-z])ae(?=[a-z]{3})")
_OE = re.compile(r"(?<![a-z])oe(?=[a-z]{3})|(?<=[a-z])oe(?=[a-z]{2})")


def fold(text: str) -> str:
    """Lower-case, strip accents, fold British spellings (haem->hem, oedema->edema, ae->e)."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    text = text.replace("'s ", " ").replace("\u2019s ", " ")
    text = text.replace("haem", "hem")
    if "ae" in text:  # (most texts hold neither: the search costs more than the test)
        text = _AE.sub("e", text)
    if "oe" in text:
        text = _OE.sub("e", text)
    text = text.replace("rrhoea", "rrhea")
    return text


def expand(text: str) -> str:
    """Fold, then replace abbreviations and everyday names with record vocabulary."""
    return _ABBREV_RE.sub(lambda m: ABBREVIATIONS[m.group(1)], fold(text))


_SUFFIXES = ("ations", "ation", "ings", "ing", "ments", "ment", "ants", "ant", "ents", "ent", "ives", "ive", "ies", "ed", "es", "s")


@functools.lru_cache(maxsize=1 << 16)  # bounded: tokens come from agents' text too
def stem(token: str) -> str:
    """A light suffix stripper: plural, -ed/-ing, and -ation/-ant/-ent/-ive so that
    "anticoagulation" and "anticoagulant" meet; both sides of every comparison use it."""
    if len(token) > 4:
        for suf in _SUFFIXES:
            if token.endswith(suf) and not token.endswith(("ss", "us", "is")) and len(token) - len(suf) >= 4:
                token = token[: -len(suf)] + ("i" if suf == "ies" else "")
                break
        if token.endswith("e") and not token.endswith("ae") and len(token) > 4:
            token = token[:-1]
        if token.endswith("y") and len(token) > 4:
            token = token[:-1] + "i"
    return token


def tokens(text: str, *, expand_abbrev: bool = True, keep_stop: bool = False) -> list[str]:
    """Stemmed content tokens."""
    if len(text) <= _REMEMBERED:  # test names, orders and record lines come again and again
        return list(_remembered_tokens(text, expand_abbrev, keep_stop))
    return _tokens(text, expand_abbrev, keep_stop)


_REMEMBERED = 300  # characters: a longer text (an agent's) is tokenised each time, not kept


@functools.lru_cache(maxsize=1 << 15)  # bounded in entries, and each entry by _REMEMBERED
def _remembered_tokens(text: str, expand_abbrev: bool, keep_stop: bool) -> tuple[str, ...]:
    return tuple(_tokens(text, expand_abbrev, keep_stop))


def _tokens(text: str, expand_abbrev: bool, keep_stop: bool) -> list[str]:
    text = expand(text) if expand_abbrev else fold(text)
    return [stem(t) for t in _TOKEN.findall(text) if keep_stop or t not in STOPWORDS]


def normal_form(text: str) -> str:
    """A canonical string for equality tests: expanded, stemmed, stop words dropped."""
    return " ".join(tokens(text))


def core_tokens(text: str) -> list[str]:
    """Content tokens without qualifiers (acute, left, severe ...); the bare disease name."""
    qual = {stem(q) for q in QUALIFIERS}
    return [t for t in tokens(text) if t not in qual and not t.isdigit()]


def sentences(text: str) -> list[str]:
    """Split prose into sentences, keeping decimals (1.2 mg/dL) and abbreviations intact."""
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z0-9])", text.strip())
    return [p.strip() for p in parts if p.strip()]


def clauses(text: str) -> list[str]:
    """Sentences further split at semicolons (how reports separate findings)."""
    out: list[str] = []
    for s in sentences(text):
        out.extend(c.strip() for c in s.split(";") if c.strip())
    return out


# Words that name a disease process rather than qualify one. Missing such a word is a
# major specificity error (3), not a minor qualifier (4); and one such word stands for
# another only when the two are near-identical (e.g. spelling variants), so that
# "osteoarthritis" does not pass for "septic arthritis".
DISEASE_SUFFIXES = ("itis", "osis", "emia", "penia", "oma", "pathy", "plasia", "rrhage", "rrhea", "lithiasis",
                     "thorax", "cele", "ectasia", "algia")
DISEASE_HEADS = {stem(w) for w in (
    "infarction embolism emboli thrombosis thrombus fracture hemorrhage obstruction dissection failure ulcer "
    "infection block fibrillation flutter tachycardia bradycardia pneumonia pregnancy stroke calculus stone "
    "aneurysm abscess tear hernia cancer carcinoma tumor malignancy ketoacidosis acidosis syndrome "
    "colic angina purpura crisis injury toxicity overdose").split()}


def is_disease_word(word: str) -> bool:
    return word.endswith(DISEASE_SUFFIXES) or stem(word) in DISEASE_HEADS
