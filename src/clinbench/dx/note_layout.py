"""The demo cases rewritten as MIMIC-IV-Note discharge summaries (the ``demo-notes`` case set).

Each note is generated from its demo case, so it is the same case in the other layout: the
same history, examination, results and diagnosis. Sections get the note's headings
(``Chief Complaint:``, ``History of Present Illness:``, ``Physical Exam:``, ``Pertinent
Results:``, ``Brief Hospital Course:``, ``Discharge Diagnosis:``), dates and names are
``___`` placeholders, and results take the note's forms:

* a lab result whose every item is a known analyte with a number becomes a hospital lab
  string (``___ 04:50PM BLOOD WBC-15.8* Neuts-84* Hgb-15.2 Plt Ct-265``, ``*`` outside the
  reference range of ``_ANALYTES``; units as in the demo, so every value is unchanged);
* a culture becomes a microbiology line (``___ BLOOD CULTURE no growth at 5 days.``);
* an imaging report becomes a dated study (``CT ABDOMEN AND PELVIS WITH CONTRAST ___:
  FINDINGS: ... IMPRESSION: ...``);
* anything else (an ECG, an echocardiogram, a result in words) keeps its ``Name: result``
  line, as notes do.

A note case is numbered ``NOTE_ID_OFFSET`` + its demo case's id, so both sets fit one store, and
carries the admission ``NOTE_HADM_BASE`` + that number: ``data synth mimic-iv --notes`` writes that
admission with the note's lab strings as its labevents (``dx/note_admissions.py``).
"""

from __future__ import annotations

import re

from clinbench.dx.cases import Case

NOTE_ID_OFFSET = 100
NOTE_HADM_BASE = 19_990_000  # below the hadm_ids of a synthetic cohort of any size (20,000,001 up)
MIN_LAB_STRINGS = 2  # a demo case becomes a note case when this many of its results are lab strings

# demo phrase (lower case) -> (MIMIC lab-string name, low, high) of the reference range
_ANALYTES: dict[str, tuple[str, float, float]] = {
    "white cell count": ("WBC", 4.0, 11.0), "haemoglobin": ("Hgb", 12.0, 16.0), "haematocrit": ("Hct", 36, 48),
    "platelets": ("Plt Ct", 150, 400), "mean corpuscular volume": ("MCV", 80, 100),
    "eosinophils": ("AbsEos", 0.0, 0.5),  # the demo counts them (x10^9/L); a note's "Eos-" is a percentage
    "sodium": ("Na", 135, 145), "potassium": ("K", 3.5, 5.1), "chloride": ("Cl", 96, 108),
    "bicarbonate": ("HCO3", 22, 32), "anion gap": ("AnGap", 8, 20), "urea nitrogen": ("UreaN", 6, 20),
    "creatinine": ("Creat", 0.4, 1.1), "glucose": ("Glucose", 70, 100), "calcium": ("Calcium", 8.4, 10.3),
    "albumin": ("Albumin", 3.5, 5.2), "total bilirubin": ("TotBili", 0.0, 1.5),
    "alkaline phosphatase": ("AlkPhos", 35, 105), "alt": ("ALT", 0, 40), "ast": ("AST", 0, 40),
    "inr": ("INR(PT)", 0.9, 1.1), "activated partial thromboplastin time": ("PTT", 25, 36.5),
    "ph": ("pH", 7.35, 7.45), "paco2": ("pCO2", 35, 45), "pco2": ("pCO2", 35, 45), "pao2": ("pO2", 85, 105),
}
# a demo result that is one analyte: its name -> the analyte phrase above or its own entry
_SINGLE: dict[str, tuple[str, float, float]] = {
    "lipase": ("Lipase", 0, 60), "c-reactive protein": ("CRP", 0, 5), "serum lactate": ("Lactate", 0.5, 2.0),
    "thyroid stimulating hormone": ("TSH", 0.27, 4.2), "free thyroxine": ("Free T4", 0.93, 1.7),
    "serum magnesium": ("Mg", 1.6, 2.6), "serum calcium": ("Calcium", 8.4, 10.3),
    "creatine kinase": ("CK(CPK)", 0, 200),
    "hemoglobin a1c": ("%HbA1c", 4.0, 6.0),
}
_ITEM = re.compile(r"^(?:on [^,]*?,\s*)?([a-zA-Z][a-zA-Z -]*?)\s+([\d,]*\d(?:\.\d+)?)(\s*%)?(?:\s+[^\s,(]+)?"
                   r"(?:\s+with\s+(\d+)%\s+neutrophils)?$")
_NUMBER_ONLY = re.compile(r"^([\d,]*\d(?:\.\d+)?)(\s*%)?(?:\s+[^\s,(]+)?$")
_HEADINGS = {
    "chief complaint": "Chief Complaint", "history of present illness": "History of Present Illness",
    "past medical history": "Past Medical History", "medications": "Medications on Admission",
    "allergies": "Allergies", "social history": "Social History", "family history": "Family History",
    "physical examination": "Physical Exam", "hospital course": "Brief Hospital Course",
    "discharge diagnosis": "Discharge Diagnosis",
}


def reference_range(name: str) -> tuple[float, float] | None:
    """The reference range a note's lab-string name is flagged against (``*`` outside it)."""
    if name == "Neuts":
        return 40.0, 75.0
    return next(((lo, hi) for token, lo, hi in (*_ANALYTES.values(), *_SINGLE.values()) if token == name), None)


def _token(name: str, value: str, low: float, high: float) -> str:
    number = float(value.replace(",", ""))
    flag = "*" if not low <= number <= high else ""
    return f"{name}-{value.replace(',', '')}{flag}"


def lab_tokens(name: str, result: str) -> list[str] | None:
    """The lab-string tokens of a demo result (``Complete blood count``, ``white cell count
    15.8 x10^9/L with 84% neutrophils, ...``), or None when any item is not a known analyte."""
    text = result.strip().rstrip(".")
    single = _SINGLE.get(name.lower())
    if single:
        m = _NUMBER_ONLY.match(text)
        return [_token(single[0], m.group(1), single[1], single[2])] if m else None
    tokens: list[str] = []
    for item in re.split(r",\s+(?=[a-zA-Z])", text):
        m = _ITEM.match(item.strip())
        if not m or m.group(1).lower() not in _ANALYTES:
            return None
        token, low, high = _ANALYTES[m.group(1).lower()]
        tokens.append(_token(token, m.group(2), low, high))
        if m.group(4):
            tokens.append(_token("Neuts", m.group(4), *reference_range("Neuts")))
    return tokens or None


def _micro_name(name: str) -> str | None:
    m = re.fullmatch(r"(blood|urine|sputum|stool|csf|synovial fluid) cultures?", name.strip(), re.I)
    return f"{m.group(1).upper()} CULTURE" if m else None


def _sections(body: str) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        m = re.fullmatch(r"([A-Z][a-z ]+):", line.strip())
        if m:
            out.append((m.group(1).lower(), []))
        elif out:
            out[-1][1].append(line)
    return out


def _results_lines(lines: list[str], imaging: bool) -> tuple[list[str], list[str], list[str], list[str]]:
    labs, micro, studies, other = [], [], [], []
    minute = 50
    for line in lines:
        m = re.fullmatch(r"([^:]{2,80}): (.+)", line.strip())
        if not m:
            if line.strip():
                other.append(line.strip())
            continue
        name, result = m.group(1), m.group(2)
        if imaging:
            report = re.sub(r"^Findings:\s*", "FINDINGS: ", result)
            report = re.sub(r"\bImpression:\s*", "IMPRESSION: ", report)
            if not report.startswith("FINDINGS:"):
                report = "FINDINGS: " + report
            studies.append(f"{name.upper()} ___: {report}")
            continue
        tokens = lab_tokens(name, result)
        fluid = "BLOOD"
        if tokens:
            labs.append(f"___ 04:{minute:02d}PM {fluid} " + " ".join(tokens))
            minute = min(minute + 1, 59)
        elif _micro_name(name):
            micro.append(f"___ {_micro_name(name)} {result}")
        else:
            other.append(f"{name}: {result}")
    return labs, micro, studies, other


def note_text(case: Case) -> str:
    """The discharge summary of a demo case in the MIMIC-IV-Note layout."""
    body = case.full_text[len(case.case_summary):] if case.full_text.startswith(case.case_summary) else case.full_text
    sex = "F" if re.search(r"\b(woman|girl|female)\b", case.case_summary, re.I) else "M"
    out = ["Name:  ___                    Unit No:   ___",
           "Admission Date:  ___              Discharge Date:   ___",
           f"Date of Birth:  ___             Sex:   {sex}", "Attending: ___.", ""]
    labs: list[str] = []
    micro: list[str] = []
    studies: list[str] = []
    other: list[str] = []
    rest: list[tuple[str, list[str]]] = []
    for heading, lines in _sections(body):
        if heading in ("pertinent results", "imaging"):
            parts = _results_lines(lines, imaging=heading == "imaging")
            for acc, part in zip((labs, micro, studies, other), parts):
                acc.extend(part)
        else:
            rest.append((heading, lines))
    placed = False
    for heading, lines in rest:
        if heading in ("hospital course", "discharge diagnosis") and not placed:
            out += _pertinent(labs, micro, studies, other)
            placed = True
        text = "\n".join(ln.replace("The patient", "Mr. ___" if sex == "M" else "Ms. ___", 1)
                         for ln in lines).strip()
        out += [f"{_HEADINGS.get(heading, heading.title())}:", text, ""]
    if not placed:
        out += _pertinent(labs, micro, studies, other)
    return "\n".join(out).rstrip() + "\n"


def _pertinent(labs: list[str], micro: list[str], studies: list[str], other: list[str]) -> list[str]:
    out = ["Pertinent Results:", "ADMISSION LABS:", *labs, *other, ""]
    if micro:
        out += ["MICROBIOLOGY:", *micro, ""]
    if studies:
        out += ["IMAGING:", *studies, ""]
    return out


def note_case(case: Case) -> Case:
    """The demo case as a note case (same diagnosis, tests and vignette)."""
    note_id = f"synthetic-note-{case.case_id:03d}"
    return case.model_copy(update={
        "case_id": NOTE_ID_OFFSET + case.case_id, "mimic_note_id": note_id,
        "hadm_id": NOTE_HADM_BASE + NOTE_ID_OFFSET + case.case_id,
        "case_title": f"{note_id}: {case.final_diagnosis}",
        "full_text": case.case_summary + "\n\n" + note_text(case)})


def note_cases(demo: list[Case]) -> list[Case]:
    """The demo cases with at least ``MIN_LAB_STRINGS`` results that become lab strings."""
    out = []
    for case in demo:
        note = note_case(case)
        if sum(1 for ln in note.full_text.splitlines() if re.match(r"___ \d\d:\d\d[AP]M BLOOD ", ln)) >= MIN_LAB_STRINGS:
            out.append(note)
    return out
