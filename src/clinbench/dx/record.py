"""Reading a case's ``full_text`` into what the gatekeeper may reveal.

A discharge summary is split into sections by their headings. A heading is recognised in
any of the styles records use: ``History of present illness:`` (with text after the
colon or not), ``HISTORY OF PRESENT ILLNESS`` (capitalised, no colon), ``3. Pertinent
results``, ``## Imaging``, ``**Labs**``, ``Physical Exam (on admission)``. Sections are
sorted into three kinds:

* **history/examination** (what a question can reach),
* **results** (what a test order can reach),
* **withheld** (hospital course, procedures, discharge sections, the header block before
  the first section): never served.

Inside a results section, each ``Name: result`` line is one entry; a line that names a test
on its own (``Complete blood count``, ``CT ABDOMEN AND PELVIS WITH CONTRAST``, ``Lipase:``)
opens a nested block whose following lines, up to a blank line or the next such name, are
that test's result (and each ``Name: value`` line inside it is an entry of its own too);
free prose becomes one entry per sentence, and each ``Name: value`` inside it ("D-dimer:
4.2 mg/L FEU, and Troponin I: 0.09 ng/mL") an entry of its own. MIMIC-IV-Note layouts are
read too: hospital lab strings (``___ 04:50PM BLOOD WBC-11.2* Hgb-11.8* Plt Ct-245``: one
``labline`` entry and one ``analyte`` entry per ``Name-value``, with the fluid), studies
dated by a placeholder (``CXR ___: IMPRESSION: ...``, ``CT HEAD W/O CONTRAST ___ FINDINGS:
...`` and its continuation lines) and microbiology lines (``___ BLOOD CULTURE ... NO
GROWTH``). Imaging impressions are cut at "Impression:" so only findings are served; a
report that has nothing but an impression is served its impression.

Any heading on a line of its own, of four words or fewer, ending in a word for results
("TEST RESULTS", "DISCHARGE LABS:", "Micro") opens a results section.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from clinbench.dx.text import sentences

# heading (lower-case, no colon) -> kind
_SECTION_KINDS: dict[str, str] = {}
for _names, _kind in [
    (("chief complaint", "cc", "reason for admission", "presenting complaint", "presentation"), "history"),
    (("history of present illness", "hpi", "history of presenting complaint", "presenting history",
      "history of the present illness", "history"), "history"),
    (("past medical history", "pmh", "past history", "past surgical history", "medical history",
      "past medical and surgical history"), "history"),
    (("medications", "medications on admission", "home medications", "current medications",
      "outpatient medications", "preadmission medications", "medications at home"), "history"),
    (("allergies",), "history"),
    (("social history",), "history"),
    (("family history",), "history"),
    (("review of systems", "ros"), "history"),
    (("physical examination", "physical exam", "examination", "admission examination", "exam",
      "examination on admission", "admission physical exam", "physical examination on admission"), "exam"),
    (("pertinent results", "results", "laboratory results", "labs", "investigations", "microbiology",
      "procedures", "studies", "laboratory data", "laboratory", "laboratory studies", "laboratory findings",
      "lab results", "diagnostic studies", "diagnostic tests", "pathology", "admission labs", "tests"), "results"),
    (("imaging", "radiology", "imaging studies", "imaging results", "radiology results"), "results"),
    (("major surgical or invasive procedure", "procedures performed", "operations", "consults"), "withheld"),
    (("hospital course", "brief hospital course", "assessment and plan", "assessment", "plan",
      "discharge diagnosis", "discharge diagnoses", "final diagnosis", "impression", "discharge condition",
      "discharge instructions", "discharge medications", "followup instructions", "follow-up",
      "discharge disposition", "diagnosis", "differential diagnosis", "course", "clinical course",
      "course in hospital", "pathological diagnosis", "anatomical diagnosis", "discussion"), "withheld"),
]:
    for _n in _names:
        _SECTION_KINDS[_n] = _kind

_DECORATION = re.compile(r"^\s*(?:#{1,6}\s*|[-*•]\s+)?(?:\*\*|__)?\s*(?:(?:\d{1,2}|[ivxIVX]{1,4}|[A-Za-z])[.)]\s+)?")
_NAMED = re.compile(r"^([A-Za-z][A-Za-z0-9 /&(),'+-]{0,79}?)\s*(?:\*\*|__)?\s*:\s*(.*)$")
_RESULT_LINE = re.compile(r"^\s*([^:]{2,80}):\s+(.+)$")
_IMPRESSION = re.compile(r"\b(impression|conclusion|interpretation|assessment)\s*:", re.I)
_FINDINGS = re.compile(r"^\s*findings\s*:\s*", re.I)
_REPORT_PARTS = ("findings", "impression", "conclusion", "interpretation", "technique", "comparison",
                 "indication", "assessment")


def _normal_heading(text: str) -> str:
    t = re.sub(r"\([^)]*\)", " ", text.lower())
    t = re.sub(r"[*_#:]+", " ", t)
    return re.sub(r"\s+", " ", t).strip(" .-")


_RESULT_HEADING_WORDS = {"results", "labs", "laboratory", "imaging", "radiology", "microbiology", "micro",
                         "studies", "investigations"}


def section_kind(heading: str, *, alone: bool = True) -> str | None:
    """The kind of a known section heading ("Physical Exam (on admission)" -> exam), else None."""
    name = _normal_heading(heading)
    if name in _SECTION_KINDS:
        return _SECTION_KINDS[name]
    for key, kind in _SECTION_KINDS.items():  # "medications on admission to hospital"
        if " " in key and name.startswith(key + " ") and len(name.split()) <= len(key.split()) + 3:
            return kind
    words = name.split()
    if alone and 0 < len(words) <= 4 and words[-1] in _RESULT_HEADING_WORDS:  # "TEST RESULTS", "DISCHARGE LABS"
        return "results"
    return None


def _heading(line: str) -> tuple[str, str, str] | None:
    """(name, kind, inline text) when the line opens a known section (an indented line
    never does: "    Impression: ..." belongs to the report above it)."""
    if line[:1].isspace() and line.strip():
        return None
    bare = _DECORATION.sub("", line).strip()
    if not bare:
        return None
    m = _NAMED.match(bare)
    if m:
        kind = section_kind(m.group(1), alone=not m.group(2).strip().strip("*_").strip())
        if kind:
            return _normal_heading(m.group(1)), kind, m.group(2).strip().strip("*_").strip()
    stripped = bare.rstrip("*_ ").rstrip(":").strip()
    if len(stripped.split()) <= 8 and not stripped.endswith("."):
        kind = section_kind(stripped)
        if kind:
            return _normal_heading(stripped), kind, ""
    return None


# the most words a test's name has ("CT chest, abdomen and pelvis without and with contrast")
_MAX_NAME_WORDS = 9


def _test_name_line(line: str) -> str | None:
    """A line naming a test on its own (a nested block's title): short, no sentence, no value."""
    bare = _DECORATION.sub("", line).strip().strip("*_").strip()
    if bare.endswith(":"):
        bare = bare[:-1].strip()
    elif ":" in bare:
        return None
    words = bare.split()
    if not words or len(words) > _MAX_NAME_WORDS or bare.endswith((".", "?", "!")) or re.search(r"\d\s*(%|mg|mmol|g/|u/l)", bare, re.I):
        return None
    if bare.lower() in _REPORT_PARTS:
        return None
    return bare if bare[0].isupper() or bare[0].isdigit() else None


@dataclass
class Section:
    name: str
    kind: str  # history | exam | results | withheld | vignette
    text: str


@dataclass
class ResultEntry:
    name: str  # the test name as the record writes it ("" for prose sentences and lab lines)
    text: str  # findings only (impressions removed); an analyte's own "Name-value" token
    section: str
    kind: str = "named"  # named | inline | analyte | labline | prose
    fluid: str = ""  # lab strings: blood, urine, ...


@dataclass
class Record:
    sections: list[Section] = field(default_factory=list)
    results: list[ResultEntry] = field(default_factory=list)

    def of_kind(self, *kinds: str) -> list[Section]:
        return [s for s in self.sections if s.kind in kinds]


def strip_impression(text: str) -> str:
    """Findings only: drop everything from the first Impression/Conclusion label on (a
    report with no findings before its impression keeps the impression's text)."""
    m = _IMPRESSION.search(text)
    if m:
        findings = _FINDINGS.sub("", text[: m.start()]).strip().rstrip(";,:")
        if findings:
            return findings
        return _IMPRESSION.sub("", text[m.start():], count=1).strip().rstrip(";,")
    return _FINDINGS.sub("", text).strip().rstrip(";,")


@functools.lru_cache(maxsize=64)
def parse_record(full_text: str, case_summary: str = "") -> Record:
    """The record of a case (cached: every gatekeeper of a case shares one parse; treat it
    as read-only)."""
    rec = Record()
    body = full_text
    if case_summary and body.startswith(case_summary):
        body = body[len(case_summary):]
        rec.sections.append(Section("vignette", "vignette", case_summary))
    # Text before the first known heading (admission dates, "Service: SURGERY", the
    # attending) hints at the answer, so it is withheld; lines under an unknown heading
    # belong to the section above them. Blank lines are kept inside a section (they
    # close a nested result block).
    current = Section("preamble", "withheld", "")
    rec.sections.append(current)
    for line in body.splitlines():
        head = _heading(line)
        if head:
            current = Section(head[0], head[1], head[2])
            rec.sections.append(current)
            continue
        current.text = current.text + "\n" + line.rstrip() if current.text else line.strip()
    for sec in rec.sections:
        sec.text = re.sub(r"\n{3,}", "\n\n", sec.text).strip()
    for sec in rec.of_kind("results"):
        rec.results.extend(_results(sec))
    rec.results = [r for r in rec.results if r.text and r.text.lower() not in ("none performed.", "none.", "none")]
    return rec


# --- MIMIC-IV-Note layouts ---------------------------------------------------------------

_WHEN = r"(?:___|\[\*\*[^\]]*\*\*\]|\d{1,4}[-/]\d{1,2}(?:[-/]\d{1,4})?)"
_CLOCK = r"\d{1,2}:\d{2}\s*(?:[AaPp][Mm])?"
_FLUIDS = ("BLOOD", "URINE", "CSF", "ASCITES", "PLEURAL", "JOINT FLUID", "STOOL", "OTHER BODY FLUID",
           "CEREBROSPINAL FLUID", "SERUM", "PLASMA")
_LAB_LEAD = re.compile(rf"^\s*(?:{_WHEN}\s+)?(?:{_CLOCK}\s+)?(?:({'|'.join(_FLUIDS)})\s+)?")
_LAB_TOKEN = re.compile(r"(?<![\w(%*.-])([A-Za-z%][A-Za-z0-9()%#/]*(?: [A-Z][A-Za-z0-9()%#]*)?)-(?=[^\s-])([<>]?\S+)")
_MICRO = re.compile(
    rf"^\s*{_WHEN}\s+(?:{_CLOCK}\s+)?((?:[A-Z][A-Z/&,()]*\s+){{0,4}}(?:CULTURE|STAIN|ANTIGEN|SCREEN|PCR|TOXIN|"
    r"SMEAR|SEROLOGY|ASSAY|VIRAL LOAD|TITER|ANTIBODY|ANTIBODIES))\b[\s:-]*(.*)$")
_DATED_STUDY = re.compile(rf"^\s*([A-Z][A-Z0-9 /&().,+'-]{{1,60}}?)\s+{_WHEN}(?:\s+{_CLOCK})?\s*:?\s*(.*)$")


def lab_string(line: str) -> tuple[str, list[tuple[str, str]]] | None:
    """(fluid, [(name, "Name-value")]) of a hospital lab string, or None for any other line."""
    lead = _LAB_LEAD.match(line)
    fluid = (lead.group(1) or "") if lead else ""
    rest = line[lead.end():] if lead else line
    toks = [(m.group(1), m.group(0)) for m in _LAB_TOKEN.finditer(rest)]
    if not toks or (len(toks) < 2 and not fluid):
        return None
    covered = sum(len(t) for _, t in toks)
    leftover = re.sub(r"___|\s", "", rest)
    if covered < 0.7 * len(leftover) or "CULTURE" in rest:
        return None
    return fluid.lower() or "blood", toks


def _dated_study(line: str) -> tuple[str, str] | None:
    """("CT HEAD W/O CONTRAST", "FINDINGS: ...") for a study dated by a placeholder."""
    m = _DATED_STUDY.match(line)
    if not m:
        return None
    name = m.group(1).strip()
    letters = [c for c in name if c.isalpha()]
    if not letters or sum(c.isupper() for c in letters) < 0.8 * len(letters):
        return None
    return name, m.group(2).strip()


def _micro(line: str) -> tuple[str, str] | None:
    m = _MICRO.match(line)
    return (m.group(1).strip().rstrip(",-"), m.group(2).strip()) if m else None


# --- Name: value inside prose ------------------------------------------------------------------

_INLINE_NAME = re.compile(r"([A-Za-z][\w/()+-]*(?:[ \t]+[A-Za-z0-9][\w/()+-]*){0,4}):[ \t]+(?=\S)")
_BREAK = frozenset(
    "a an the and or of on at in to for from with by as is are was were be been showed shows revealed reveals "
    "demonstrated found noted taken drawn done performed obtained sent measured had has have her his their "
    "which that this these then also initial".split())
_NOT_A_TEST = {"impression", "conclusion", "interpretation", "assessment", "findings", "technique", "comparison",
               "indication", "diagnosis", "plan", "note", "notes", "history", "reason"}
_SENTENCE_END = re.compile(r"\.(?=\s+[A-Z]|\s*$)")


def inline_entries(paragraph: str, section: str) -> list[ResultEntry]:
    """Each ``Name: value`` of running prose, the value running to the next such name or
    the end of its sentence."""
    text = " ".join(paragraph.split())
    found: list[tuple[int, int, str]] = []  # (name start, value start, name)
    for m in _INLINE_NAME.finditer(text):
        words = m.group(1).split()
        keep: list[str] = []
        for w in reversed(words):
            if w.lower() in _BREAK:
                break
            keep.insert(0, w)
        if not keep or " ".join(keep).lower() in _NOT_A_TEST or keep[-1].lower() in _NOT_A_TEST:
            continue
        name = " ".join(keep)
        found.append((m.end(1) - len(name), m.end(), name))
    out = []
    for i, (_, vstart, name) in enumerate(found):
        stop = found[i + 1][0] if i + 1 < len(found) else len(text)
        end = _SENTENCE_END.search(text, vstart, stop)
        value = text[vstart:end.start() if end else stop]
        value = re.sub(r"(?:[,;]?\s*\b(?:and|with|while)\b)?[\s,;]*$", "", value).strip()
        if value:
            out.append(ResultEntry(name, value, section, "inline"))
    return out


def _is_entry_line(bare: str) -> bool:
    """A ``Name: value`` line whose name is short and not a sentence (as long as a test's
    title: "CT chest abdomen and pelvis with contrast" is seven words)."""
    m = _RESULT_LINE.match(bare)
    if not m:
        return False
    name = m.group(1).strip()
    return len(name.split()) <= _MAX_NAME_WORDS and ". " not in name and not name.lower().startswith(_REPORT_PARTS)


def _line_entries(line: str, section: str) -> list[ResultEntry]:
    bare = _DECORATION.sub("", line).strip()
    lm = _RESULT_LINE.match(bare)
    if lm and _is_entry_line(bare):
        return [ResultEntry(lm.group(1).strip().strip("*_").strip(), strip_impression(lm.group(2)), section)]
    return [ResultEntry("", s, section, "prose") for s in sentences(strip_impression(bare))]


def _results(sec: Section) -> list[ResultEntry]:
    out: list[ResultEntry] = []
    block_name: str | None = None
    block: list[str] = []
    study: list[str] | None = None  # [name, text, continuation...] of a dated study or micro line
    prose: list[str] = []

    def close() -> None:
        nonlocal block_name, block, study, prose
        if block_name is not None and block:
            text = " ".join(ln.strip() for ln in block)
            out.append(ResultEntry(block_name, strip_impression(text), sec.name))
        elif block_name is not None:  # a short line of prose, not a title after all
            out.extend(_line_entries(block_name, sec.name))
        if study is not None:
            out.append(ResultEntry(study[0], strip_impression(" ".join(study[1:]).strip()), sec.name))
        if prose:
            para = " ".join(prose)
            out.extend(ResultEntry("", s, sec.name, "prose") for s in sentences(strip_impression(para)))
            out.extend(inline_entries(para, sec.name))
        block_name, block, study, prose = None, [], None, []

    for line in sec.text.splitlines():
        if not line.strip():
            close()
            continue
        bare = _DECORATION.sub("", line).strip()
        raw = line.strip()  # "___" placeholders are not bold markup
        lab = lab_string(raw)
        if lab is not None:
            close()
            fluid, toks = lab
            out.append(ResultEntry("", " ".join(t for _, t in toks), sec.name, "labline", fluid))
            out.extend(ResultEntry(name, tok, sec.name, "analyte", fluid) for name, tok in toks)
            continue
        started = _micro(raw) or _dated_study(raw)
        if started is not None:
            close()
            study = [started[0], started[1]]
            continue
        if study is not None:
            study.append(bare)
            continue
        indented = line[:1].isspace() or bool(re.match(r"^\s*[-*\u2022]\s", line))
        if block_name is not None and not indented and _is_entry_line(bare):
            close()  # "Complete Blood Count: Normal" after an indented block ends that block
        name = _test_name_line(line)
        if name is not None:
            close()
            block_name = name
            continue
        if block_name is not None:
            block.append(bare)
            if not bare.lower().startswith(_REPORT_PARTS):
                out.extend(e for e in _line_entries(line, sec.name) if e.name)
            continue
        if _is_entry_line(bare):
            if prose:
                close()
            out.extend(_line_entries(line, sec.name))
            continue
        prose.append(bare)
    close()
    return out
