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
free prose becomes one entry per sentence. Imaging impressions are cut at "Impression:"
so only findings are served.
"""

from __future__ import annotations

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


def section_kind(heading: str) -> str | None:
    """The kind of a known section heading ("Physical Exam (on admission)" -> exam), else None."""
    name = _normal_heading(heading)
    if name in _SECTION_KINDS:
        return _SECTION_KINDS[name]
    for key, kind in _SECTION_KINDS.items():  # "medications on admission to hospital"
        if " " in key and name.startswith(key + " ") and len(name.split()) <= len(key.split()) + 3:
            return kind
    return None


def _heading(line: str) -> tuple[str, str, str] | None:
    """(name, kind, inline text) when the line opens a known section."""
    bare = _DECORATION.sub("", line).strip()
    if not bare:
        return None
    m = _NAMED.match(bare)
    if m:
        kind = section_kind(m.group(1))
        if kind:
            return _normal_heading(m.group(1)), kind, m.group(2).strip().strip("*_").strip()
    stripped = bare.rstrip("*_ ").rstrip(":").strip()
    if len(stripped.split()) <= 8 and not stripped.endswith("."):
        kind = section_kind(stripped)
        if kind:
            return _normal_heading(stripped), kind, ""
    return None


def _test_name_line(line: str) -> str | None:
    """A line naming a test on its own (a nested block's title): short, no sentence, no value."""
    bare = _DECORATION.sub("", line).strip().strip("*_").strip()
    if bare.endswith(":"):
        bare = bare[:-1].strip()
    elif ":" in bare:
        return None
    words = bare.split()
    if not words or len(words) > 9 or bare.endswith((".", "?", "!")) or re.search(r"\d\s*(%|mg|mmol|g/|u/l)", bare, re.I):
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
    name: str  # the test name as the record writes it ("" for prose sentences)
    text: str  # findings only (impressions removed)
    section: str


@dataclass
class Record:
    sections: list[Section] = field(default_factory=list)
    results: list[ResultEntry] = field(default_factory=list)

    def of_kind(self, *kinds: str) -> list[Section]:
        return [s for s in self.sections if s.kind in kinds]


def strip_impression(text: str) -> str:
    """Findings only: drop everything from the first Impression/Conclusion label on."""
    m = _IMPRESSION.search(text)
    if m:
        text = text[: m.start()]
    return _FINDINGS.sub("", text).strip().rstrip(";,")


def parse_record(full_text: str, case_summary: str = "") -> Record:
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


def _line_entries(line: str, section: str) -> list[ResultEntry]:
    bare = _DECORATION.sub("", line).strip()
    lm = _RESULT_LINE.match(bare)
    if lm and not lm.group(1).strip().lower().startswith(_REPORT_PARTS):
        return [ResultEntry(lm.group(1).strip().strip("*_").strip(), strip_impression(lm.group(2)), section)]
    return [ResultEntry("", s, section) for s in sentences(strip_impression(bare))]


def _results(sec: Section) -> list[ResultEntry]:
    out: list[ResultEntry] = []
    block_name: str | None = None
    block: list[str] = []

    def close() -> None:
        nonlocal block_name, block
        if block_name is not None and block:
            text = " ".join(ln.strip() for ln in block)
            out.append(ResultEntry(block_name, strip_impression(text), sec.name))
        elif block_name is not None:  # a short line of prose, not a title after all
            out.extend(_line_entries(block_name, sec.name))
        block_name, block = None, []

    for line in sec.text.splitlines():
        if not line.strip():
            close()
            continue
        name = _test_name_line(line)
        if name is not None:
            close()
            block_name = name
            continue
        if block_name is not None:
            block.append(_DECORATION.sub("", line).strip())
            bare = _DECORATION.sub("", line).strip()
            if not bare.lower().startswith(_REPORT_PARTS):
                out.extend(e for e in _line_entries(line, sec.name) if e.name)
            continue
        out.extend(_line_entries(line, sec.name))
    close()
    return out
