"""Reading a case's ``full_text`` into what the gatekeeper may reveal.

A discharge summary is split into sections by their headings ("History of present
illness:", "Pertinent results:" ...). Sections are sorted into three kinds:

* **history/examination** (what a question can reach),
* **results** (what a test order can reach; one entry per "Name: result" line, or per
  sentence when the note is free prose),
* **withheld** (hospital course, procedures, discharge sections, the header block before
  the first section): never served.

Imaging impressions are cut at "Impression:" so only findings are served.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from clinbench.dx.text import sentences

# heading (lower-case, no colon) -> kind
_SECTION_KINDS: dict[str, str] = {}
for _names, _kind in [
    (("chief complaint", "cc", "reason for admission", "presenting complaint"), "history"),
    (("history of present illness", "hpi", "history of presenting complaint", "presenting history"), "history"),
    (("past medical history", "pmh", "past history", "past surgical history", "medical history"), "history"),
    (("medications", "medications on admission", "home medications", "current medications",
      "outpatient medications", "preadmission medications"), "history"),
    (("allergies",), "history"),
    (("social history",), "history"),
    (("family history",), "history"),
    (("review of systems", "ros"), "history"),
    (("physical examination", "physical exam", "examination", "admission examination", "exam"), "exam"),
    (("pertinent results", "results", "laboratory results", "labs", "investigations", "microbiology",
      "procedures", "studies"), "results"),
    (("imaging", "radiology", "imaging studies"), "results"),
    (("major surgical or invasive procedure", "procedures performed", "operations", "consults"), "withheld"),
    (("hospital course", "brief hospital course", "assessment and plan", "assessment", "plan",
      "discharge diagnosis", "discharge diagnoses", "final diagnosis", "impression", "discharge condition",
      "discharge instructions", "discharge medications", "followup instructions", "follow-up",
      "discharge disposition"), "withheld"),
]:
    for _n in _names:
        _SECTION_KINDS[_n] = _kind

_HEADING = re.compile(r"^\s*([A-Za-z][A-Za-z /&-]{1,40}):\s*(.*)$")
_RESULT_LINE = re.compile(r"^\s*([^:]{2,80}):\s+(.+)$")
_IMPRESSION = re.compile(r"\b(impression|conclusion|interpretation|assessment)\s*:", re.I)
_FINDINGS = re.compile(r"^\s*findings\s*:\s*", re.I)


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
    # belong to the section above them.
    current = Section("preamble", "withheld", "")
    rec.sections.append(current)
    for line in body.splitlines():
        m = _HEADING.match(line)
        name = m.group(1).strip().lower() if m else None
        if m and name in _SECTION_KINDS:
            current = Section(name, _SECTION_KINDS[name], m.group(2).strip())
            rec.sections.append(current)
            continue
        current.text = (current.text + "\n" + line).strip() if line.strip() else current.text
    for sec in rec.of_kind("results"):
        for line in sec.text.splitlines():
            lm = _RESULT_LINE.match(line)
            if lm and not lm.group(1).strip().lower().startswith(("findings", "impression")):
                rec.results.append(ResultEntry(lm.group(1).strip(), strip_impression(lm.group(2)), sec.name))
            else:
                for s in sentences(strip_impression(line)):
                    rec.results.append(ResultEntry("", s, sec.name))
    rec.results = [r for r in rec.results if r.text and r.text.lower() not in ("none performed.", "none.")]
    return rec
