"""Diagnostic cases: the MIMIC-IV-Ext-SDBench ``dataset.json`` loader and the bundled demo cases.

A case has the dataset's fields (``case_id``, ``mimic_note_id``, ``final_diagnosis``,
``case_title``, ``case_summary``, ``full_text``, ``estimated_clinician_visits``, ``tests``,
``case_sets``). Demo cases are written for this project (no MIMIC text) as one Markdown
file each under ``demo_cases/``: a ``key: value`` header between ``---`` lines, then the
discharge summary. Demo cases add two optional fields the dataset lacks: ``icd10`` (the
code of the final diagnosis) and ``synonyms`` (other names of it), used by the leak guard.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from clinbench.errors import DataError

Split = Literal["train", "validation", "test"]
SPLITS: tuple[str, ...] = ("train", "validation", "test")


class CaseTest(BaseModel):
    name: str


class Case(BaseModel):
    case_id: int
    mimic_note_id: str
    final_diagnosis: str = Field(min_length=1)
    case_title: str
    case_summary: str = Field(min_length=1)
    full_text: str = Field(min_length=1)
    estimated_clinician_visits: int = Field(ge=0)
    tests: list[CaseTest]
    case_sets: list[Split] = Field(min_length=1)
    # Not in dataset.json; present on demo cases.
    icd10: str | None = None
    hadm_id: int | None = None  # the MIMIC-IV admission, for the grounded gatekeeper
    synonyms: list[str] = Field(default_factory=list)
    synthetic: bool = False

    @property
    def test_names(self) -> list[str]:
        return [t.name for t in self.tests]

    def record(self) -> dict:
        """The case as a dataset.json record (the dataset's nine fields only)."""
        return self.model_dump(include={
            "case_id", "mimic_note_id", "final_diagnosis", "case_title", "case_summary",
            "full_text", "estimated_clinician_visits", "tests", "case_sets"})


def _check_split(split: str | None) -> None:
    if split is not None and split not in SPLITS:
        raise DataError(f"unknown split {split!r}: use one of {', '.join(SPLITS)}")


def _select(cases: list[Case], split: str | None) -> list[Case]:
    _check_split(split)
    return [c for c in cases if split is None or split in c.case_sets]


def _describe(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "record"
    return f"{where}: {first['msg']}"


def load_dataset(path: str | Path, *, split: str | None = None) -> list[Case]:
    """Read a MIMIC-IV-Ext-SDBench ``dataset.json`` (a file, or a folder holding one)."""
    _check_split(split)
    path = Path(path)
    if path.is_dir():
        path = path / "dataset.json"
    if not path.is_file():
        raise DataError(f"no dataset file at {path}: point --cases at your dataset.json or use 'demo'")
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path} is not valid JSON (line {exc.lineno}): re-download dataset.json") from exc
    if not isinstance(records, list):
        raise DataError(f"{path} must hold a JSON array of case records")
    cases: list[Case] = []
    seen: set[int] = set()
    for i, rec in enumerate(records):
        name = f"record {i}"
        if isinstance(rec, dict) and "case_id" in rec:
            name = f"case {rec['case_id']} (record {i})"
        if not isinstance(rec, dict):
            raise DataError(f"{path}: {name} is not an object")
        try:
            case = Case.model_validate(rec)
        except ValidationError as exc:
            raise DataError(f"{path}: {name} is malformed: {_describe(exc)}") from exc
        if case.case_id in seen:
            raise DataError(f"{path}: {name} repeats case_id {case.case_id}")
        seen.add(case.case_id)
        cases.append(case)
    return _select(cases, split)


def _parse_demo(name: str, text: str) -> Case:
    if not text.startswith("---\n"):
        raise DataError(f"demo case {name} has no header")
    header, body = text[4:].split("\n---\n", 1)
    fields: dict[str, str] = {}
    for line in header.splitlines():
        if line.strip():
            key, _, value = line.partition(":")
            fields[key.strip()] = value.strip()
    summary = fields["case_summary"]
    note_id = f"synthetic-demo-{int(fields['case_id']):03d}"
    try:
        return Case(
            case_id=int(fields["case_id"]),
            mimic_note_id=note_id,
            final_diagnosis=fields["final_diagnosis"],
            case_title=f"{note_id}: {fields['final_diagnosis']}",
            case_summary=summary,
            # As in the dataset, full_text is the vignette followed by the discharge summary.
            full_text=summary + "\n\n" + body.strip() + "\n",
            estimated_clinician_visits=int(fields["estimated_clinician_visits"]),
            tests=[{"name": t.strip()} for t in fields["tests"].split(";") if t.strip()],
            case_sets=[s.strip() for s in fields["case_sets"].split(",")],
            icd10=fields.get("icd10"),
            synonyms=[s.strip() for s in fields.get("synonyms", "").split(";") if s.strip()],
            synthetic=True,
        )
    except (KeyError, ValueError, ValidationError) as exc:
        raise DataError(f"demo case {name} is malformed: {exc}") from exc


def demo_cases(*, split: str | None = None) -> list[Case]:
    """The bundled synthetic cases (original text written for clinbench)."""
    folder = resources.files("clinbench.dx") / "demo_cases"
    cases = [_parse_demo(f.name, f.read_text(encoding="utf-8"))
             for f in sorted(folder.iterdir(), key=lambda f: f.name) if f.name.endswith(".md")]
    return _select(sorted(cases, key=lambda c: c.case_id), split)


def load_cases(source: str | Path, *, split: str | None = None) -> list[Case]:
    """``demo`` for the bundled cases, ``demo-notes`` for them in the MIMIC-IV-Note layout,
    else a dataset.json path."""
    if str(source) == "demo":
        return demo_cases(split=split)
    if str(source) == "demo-notes":
        from clinbench.dx.note_layout import note_cases

        return note_cases(demo_cases(split=split))
    return load_dataset(source, split=split)
