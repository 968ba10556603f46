"""Lint the agent-visible task material: instructions, skills and operational specs.

Rules (each a way a benchmark silently breaks):
- skills and operational specs contain no SQL statements (they teach rules, not answers);
- operational specs contain no item ids and no table names (no database recipes);
- an instruction's ``Columns:`` line lists exactly the task's required columns, in order,
  and it has the ``{output_path}`` placeholder;
- skills have front matter with name (= folder), description and category; every skill a
  task names exists; an operational spec exists exactly when the task declares one;
- no agent-visible file holds patient identifiers, and (given a database) no key value of
  the task's own reference rows — a copied answer always carries its keys.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from clinbench.derive.catalogue import SKILLS_DIR, TASKS_DIR, TaskSpec, load_catalogue

# Uppercase SQL shapes (prose says "select the worst value", never "SELECT x FROM y").
_SQL_PATTERNS = [
    re.compile(r"```\s*sql", re.I),
    re.compile(r"\bSELECT\b[\s\S]{0,400}?\bFROM\b"),
    re.compile(r"\b(CREATE|DROP|ALTER)\s+(OR\s+REPLACE\s+)?(TEMP\s+)?(TABLE|VIEW|SCHEMA)\b", re.I),
    re.compile(r"\bINSERT\s+INTO\b", re.I),
    re.compile(r"\bWITH\s+\w+\s+AS\s*\(", re.I),
    re.compile(r"\b(LEFT|INNER|RIGHT|FULL|CROSS)\s+(OUTER\s+)?JOIN\b"),
    re.compile(r"\bGROUP\s+BY\b|\bORDER\s+BY\b|\bPARTITION\s+BY\b"),
    re.compile(r"\bselect\s+[\w\s,.*()]+?\s+from\s+\w+\.\w+", re.I),
]
# MIMIC-IV item ids: ICU items 22xxxx-23xxxx, lab items 50xxx-52xxx.
_ITEM_ID = re.compile(r"(?<![\d.])(2[23]\d{4}|5[0-2]\d{3})(?![\d.])")
_TABLE_WORDS = re.compile(
    r"\b(mimiciv_\w+|eicu_crd|itemid|chartevents|labevents|inputevents|outputevents|procedureevents|"
    r"microbiologyevents|diagnoses_icd|icustays|nursecharting|d_items|d_labitems)\b",
    re.I,
)
# MIMIC-IV subject/hadm/stay ids are 8 digits starting 1, 2, 3.
_PATIENT_ID = re.compile(r"(?<![\d.])[123]\d{7}(?![\d.])")
_COLUMNS_LINE = re.compile(r"^Columns:\s*(.+)$", re.M)
_FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.S)


@dataclass(frozen=True)
class LintIssue:
    path: str
    rule: str
    detail: str

    def __str__(self) -> str:
        return f"{self.path}: {self.rule}: {self.detail}"


def lint(tasks_dir: Path | None = None, skills_dir: Path | None = None,
         db_path: Path | None = None) -> list[LintIssue]:
    """All issues in the shipped (or given) task and skill folders; empty when clean."""
    tasks_dir = tasks_dir or TASKS_DIR
    skills_dir = skills_dir or SKILLS_DIR
    catalogue = load_catalogue(None if tasks_dir == TASKS_DIR else tasks_dir)
    issues: list[LintIssue] = []
    skill_files = sorted(skills_dir.glob("*/SKILL.md"))
    known_skills = {p.parent.name for p in skill_files}
    for path in skill_files:
        text = path.read_text(encoding="utf-8")
        issues += _front_matter(path, text)
        issues += _sql(path, text)
        issues += _patient_ids(path, text)
    for spec in catalogue.values():
        task_dir = tasks_dir / spec.family / spec.id
        for name in [*spec.skills, spec.decoy_skill]:
            if name not in known_skills:
                issues.append(LintIssue(str(task_dir / "task.toml"), "unknown-skill", f"no skill folder {name!r}"))
        issues += _instruction(spec, task_dir / "instruction.md")
        op = task_dir / "operational-spec.md"
        if spec.operational_spec != op.is_file():
            issues.append(LintIssue(str(op), "operational-spec",
                                    "file must exist exactly when task.toml says operational_spec = true"))
        if op.is_file():
            text = op.read_text(encoding="utf-8")
            issues += _sql(op, text)
            issues += _patient_ids(op, text)
            for m in _ITEM_ID.finditer(text):
                issues.append(LintIssue(str(op), "item-id", f"line {_line(text, m.start())}: {m.group(0)}"))
            for m in _TABLE_WORDS.finditer(text):
                issues.append(LintIssue(str(op), "database-recipe", f"line {_line(text, m.start())}: {m.group(0)}"))
    if db_path is not None:
        issues += _reference_values(catalogue, tasks_dir, skills_dir, Path(db_path))
    return issues


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _sql(path: Path, text: str) -> list[LintIssue]:
    out = []
    for pattern in _SQL_PATTERNS:
        m = pattern.search(text)
        if m:
            snippet = " ".join(m.group(0).split())[:60]
            out.append(LintIssue(str(path), "sql", f"line {_line(text, m.start())}: {snippet!r}"))
    return out


def _patient_ids(path: Path, text: str) -> list[LintIssue]:
    return [LintIssue(str(path), "reference-value", f"line {_line(text, m.start())}: identifier {m.group(0)}")
            for m in _PATIENT_ID.finditer(text)]


def _front_matter(path: Path, text: str) -> list[LintIssue]:
    m = _FRONT.match(text)
    if not m:
        return [LintIssue(str(path), "front-matter", "must start with --- name/description/category ---")]
    fields = dict(line.split(":", 1) for line in m.group(1).splitlines() if ":" in line)
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    out = []
    for key in ("name", "description", "category"):
        if not fields.get(key):
            out.append(LintIssue(str(path), "front-matter", f"missing {key}"))
    if fields.get("name") and fields["name"] != path.parent.name:
        out.append(LintIssue(str(path), "front-matter", f"name {fields['name']!r} differs from folder {path.parent.name!r}"))
    return out


def instruction_columns(text: str) -> list[str] | None:
    m = _COLUMNS_LINE.search(text)
    if not m:
        return None
    return re.findall(r"`([^`]+)`", m.group(1))


def _instruction(spec: TaskSpec, path: Path) -> list[LintIssue]:
    if not path.is_file():
        return [LintIssue(str(path), "instruction", "missing")]
    text = path.read_text(encoding="utf-8")
    out = _patient_ids(path, text)
    if "{output_path}" not in text:
        out.append(LintIssue(str(path), "instruction", "no {output_path} placeholder"))
    cols = instruction_columns(text)
    if cols is None:
        out.append(LintIssue(str(path), "columns", "no 'Columns:' line"))
    elif cols != spec.required_columns:
        missing = [c for c in spec.required_columns if c not in cols]
        extra = [c for c in cols if c not in spec.required_columns]
        detail = f"missing {missing}, extra {extra}" if missing or extra else "order differs from task.toml"
        out.append(LintIssue(str(path), "columns", detail))
    return out


def _reference_values(catalogue: dict[str, TaskSpec], tasks_dir: Path, skills_dir: Path,
                      db_path: Path) -> list[LintIssue]:
    """Key values of each task's reference rows must not appear in its agent-visible files."""
    import duckdb

    from clinbench.errors import DataError

    if not db_path.is_file():
        raise DataError(f"database {db_path} not found; pass --db a database with the concepts built")
    out: list[LintIssue] = []
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        existing = {f"{s}.{t}" for s, t in con.execute("SELECT schema_name, table_name FROM duckdb_tables()").fetchall()}
        for spec in catalogue.values():
            if spec.target_table not in existing:
                continue
            files = [tasks_dir / spec.family / spec.id / n for n in ("instruction.md", "operational-spec.md")]
            files += [skills_dir / s / "SKILL.md" for s in [*spec.skills, spec.decoy_skill]]
            tokens: set[str] = set()
            for f in files:
                if f.is_file():
                    tokens |= set(re.findall(r"\d+", f.read_text(encoding="utf-8")))
            for key in spec.keys:
                rows = con.execute(
                    f'SELECT DISTINCT CAST("{key}" AS VARCHAR) FROM {spec.target_table} '
                    f'WHERE TRY_CAST("{key}" AS BIGINT) >= 10000'
                ).fetchall()
                leaked = sorted(v for (v,) in rows if v in tokens)
                if leaked:
                    out.append(LintIssue(spec.id, "reference-value", f"{key} value(s) {', '.join(leaked[:5])} appear in its files"))
    finally:
        con.close()
    return out
