"""What a laboratory test is called: one concept for a clinician's order and a record's label.

``data/test_synonyms.csv`` (curated for clinbench) lists each concept once with its kind
(``analyte`` or ``panel``), fluid, every name it goes by (what clinicians order, MIMIC-IV
lab-string abbreviations such as ``UreaN``, ``Plt Ct``, ``cTropnT``, MIMIC-IV d_labitems labels
such as ``Calcium, Total``, and LOINC long common names), a panel's component concepts and LOINC codes where they help. An order and a
record's label mean the same test when they resolve to the same concept: "BUN" and
``UreaN-18``, "platelet count" and ``Plt Ct-245``, "troponin I" and a record's "Troponin".
Assays a hospital reports in place of one another (troponin T or I, BNP or NT-proBNP) are
one concept, so an order is answered with what the record measured.
"""

from __future__ import annotations

import csv
import functools
import re
from dataclasses import dataclass
from importlib import resources

from clinbench.dx.matching import best_match, modalities
from clinbench.dx.text import normal_form, stem, tokens

# Words that do not change which test is meant ("serum potassium", "lactate level").
_NEUTRAL = re.compile(r"\b(serum|plasma|level|levels|stat|repeat|measurement|concentration|value)\b", re.I)
FUZZY_THRESHOLD = 92.0
# Words that name a specimen other than blood. The table's concepts are blood tests and the
# urinalysis: "CSF glucose", "stool leukocytes" and "synovial fluid glucose" are none of them,
# and "urine sodium" is no blood sodium (all four were answered with the blood value).
_URINE = {stem(w) for w in ("urine", "urinary")}
_OTHER_FLUIDS = {stem(w) for w in ("cerebrospinal stool stools fecal feces pleural ascitic ascites peritoneal "
                                   "synovial sputum bronchoalveolar vitreous").split()}
_IMAGING = {"ct", "mri", "radiograph", "ultrasound", "angio", "echo"}


@dataclass(frozen=True)
class TestConcept:
    concept: str
    kind: str  # analyte | panel
    fluid: str  # blood | urine
    names: tuple[str, ...]
    components: tuple[str, ...]
    loinc: tuple[str, ...]

    @property
    def display(self) -> str:
        if self.kind == "panel":
            return self.names[0][0].upper() + self.names[0][1:]
        same = [n for n in self.names if n.lower() == self.concept and n != n.lower()]  # "INR", "pH"
        return same[0] if same else self.concept[0].upper() + self.concept[1:]


@functools.lru_cache(maxsize=1)
def concepts() -> dict[str, TestConcept]:
    path = resources.files("clinbench.dx") / "data" / "test_synonyms.csv"
    with path.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    out = {}
    for r in rows:
        split = lambda v: tuple(x.strip() for x in v.split("|") if x.strip())
        out[r["concept"]] = TestConcept(r["concept"], r["kind"], r["fluid"], split(r["names"]),
                                        split(r["components"]), split(r["loinc"]))
    return out


@functools.lru_cache(maxsize=1)
def _exact() -> dict[tuple[str, str], str]:
    """(normal form of a name, fluid) -> concept."""
    out: dict[tuple[str, str], str] = {}
    for c in concepts().values():
        for n in c.names:
            out.setdefault((normal_form(n), c.fluid), c.concept)
    return out


@functools.lru_cache(maxsize=1)
def _fuzzy_names() -> list[tuple[str, str]]:
    # Abbreviations of three letters or fewer ("K", "Na", "PT") only ever match exactly.
    return [(n, c.concept) for c in concepts().values() for n in c.names if len(n) > 3]


@functools.lru_cache(maxsize=8192)
def concept_of_label(label: str, fluid: str = "") -> str | None:
    """The concept of a record's own label (exact names only: "Hgb", "INR(PT)"); a lab
    string's fluid decides between blood and urine glucose."""
    form = normal_form(label)
    for f in ((fluid,) if fluid else ("blood", "urine")):
        hit = _exact().get((form, f))
        if hit:
            return hit
    return None


def specimen(name: str) -> str:
    """"urine", "other" (CSF, stool, pleural fluid ...) or "" (blood, not said, or an imaging
    study: "pleural ultrasound") for a test name."""
    toks = tokens(name)
    if modalities(toks) & _IMAGING:
        return ""
    return "other" if _OTHER_FLUIDS.intersection(toks) else "urine" if _URINE.intersection(toks) else ""


@functools.lru_cache(maxsize=8192)
def concept_of_order(order: str) -> str | None:
    """The concept a clinician's order names, if it is a laboratory test of the table (of the
    specimen the order names: a urine order is a urine concept, another fluid's none)."""
    text = _NEUTRAL.sub(" ", order)
    form = normal_form(text)
    fluid = specimen(order) or "blood"
    if not form or fluid == "other":
        return None
    hit = _exact().get((form, fluid))
    if hit:
        return hit
    if fluid == "blood":
        hit = _exact().get((form, "urine"))  # "UA", "urinalysis": a urine concept without a fluid word
        if hit:
            return hit
    names = [(n, c) for n, c in _fuzzy_names() if concepts()[c].fluid == fluid]
    return best_match(text, names, FUZZY_THRESHOLD)[0]


def panels_with(concept: str) -> list[str]:
    """The panels that report ``concept`` (hemoglobin -> complete blood count, ...)."""
    return [c.concept for c in concepts().values() if concept in c.components]
