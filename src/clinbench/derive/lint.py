"""Lint the agent-visible task material: instructions, skills and operational specs.

Rules (each a way a benchmark silently breaks):
- skills and operational specs contain no SQL statements (they teach rules, not answers);
- operational specs contain no item ids (MIMIC-IV ICU and lab item numbers), no schema or table
  names of any source or derived table (bare when the name is not an ordinary word, and
  qualified ``table.column`` / ``schema.table`` always) and no charting paths (no recipes);
- an instruction's ``Columns:`` line lists exactly the task's required columns, in order,
  and it has the ``{output_path}`` placeholder;
- skills have front matter with name (= folder), description and category; every skill a
  task names exists; a decoy skill is a skill of another family (never one of its own
  family's); a task's own operational-spec.md exists exactly when its task.toml says
  ``operational_spec = true``; a task that shares a sibling's spec (``operational_spec =
  "<task id>"``) names a task of its family with the same reference that owns the file;
- no agent-visible file holds patient identifiers, and (given a database) no key value of
  the task's own reference rows — a copied answer always carries its keys.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
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
    re.compile(r"\bCASE\s+WHEN\b[\s\S]{0,200}?\bTHEN\b"),
    re.compile(r"\bWHERE\s+[\w.]+\s*(=|<>|!=|<|>|\bIN\b|\bIS\b|\bLIKE\b|\bBETWEEN\b)"),
    re.compile(r"\bDELETE\s+FROM\b|\bUPDATE\s+\w+(\.\w+)?\s+SET\b", re.I),
    re.compile(r"\b(COALESCE|DATE_TRUNC|DATETIME_DIFF|DATEDIFF|ROW_NUMBER)\s*\(", re.I),
    re.compile(r"\b(CAST|EXTRACT|COUNT|SUM|MAX|MIN|AVG)\s*\([^()]*\)\s*(AS|FROM|OVER)\b"),
    re.compile(r"\bINTERVAL\s+'?\d+'?\s*(HOUR|DAY|MINUTE|SECOND)S?\b"),
    re.compile(r"\bLIKE\s+'[^']*%", re.I),
    re.compile(r"\w::(INTEGER|INT|DOUBLE|NUMERIC|TEXT|VARCHAR|DATE|TIMESTAMP)\b", re.I),
]
# MIMIC-IV item ids: ICU items 22xxxx-23xxxx, lab items 50xxx-53xxx (also written 220,045).
_ITEM_ID = re.compile(r"(?<!\d)(?<!\d[.,])(2[23]\d,?\d{3}|5[0-3],?\d{3})(?!\d|[.,]\d)")
_SCHEMA_WORDS = re.compile(r"\b(mimiciv_\w+|mimic_\w+|eicu_\w+|physionet\w*)\b", re.I)
# Source-column words that only a query needs (item numbers, numeric values, eICU chart paths).
_COLUMN_WORDS = re.compile(
    r"\b(itemid|valuenum|valueuom|cellpath|celllabel|cellattributevalue|nursingchart\w+|labresult\w*|"
    r"\w+offset)\b", re.I)
# eICU charting paths such as "flowsheet|Flowsheet Cell Labels|…".
_CHART_PATH = re.compile(r"\w[\w &()/-]*\|[\w &()/-]+\|")
# Table names that are ordinary clinical words: flagged only when qualified (``patient.age``).
_PLAIN_WORD_TABLES = frozenset({
    "admissions", "age", "allergy", "antibiotic", "apsiii", "caregiver", "charlson", "chemistry",
    "coagulation", "crrt", "diagnosis", "discharge", "dobutamine", "dopamine", "enzyme",
    "epinephrine", "gcs", "height", "hospital", "inflammation", "lab", "lods", "medication",
    "meld", "milrinone", "norepinephrine", "note", "oasis", "patient", "patients", "pharmacy",
    "phenylephrine", "prescriptions", "provider", "radiology", "rrt", "sapsii", "sepsis3",
    "services", "sirs", "sofa", "transfers", "treatment", "triage", "vasopressin", "ventilation",
    "weight",
})
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
    family_skills: dict[str, set[str]] = {}
    for spec in catalogue.values():
        family_skills.setdefault(spec.family, set()).update(spec.skills)
    for spec in catalogue.values():
        task_dir = tasks_dir / spec.family / spec.id
        for name in [*spec.skills, spec.decoy_skill]:
            if name not in known_skills:
                issues.append(LintIssue(str(task_dir / "task.toml"), "unknown-skill", f"no skill folder {name!r}"))
        decoy_owners = sorted(f for f, skills in family_skills.items() if spec.decoy_skill in skills)
        if spec.family in decoy_owners or not decoy_owners:
            issues.append(LintIssue(str(task_dir / "task.toml"), "decoy-skill",
                                    f"decoy {spec.decoy_skill!r} must be a skill of another family's task "
                                    f"(families using it: {', '.join(decoy_owners) or 'none'})"))
        issues += _instruction(spec, task_dir / "instruction.md")
        op = task_dir / "operational-spec.md"
        issues += _operational_spec_declaration(spec, op, catalogue)
        if op.is_file():
            issues += _operational_spec_text(op, op.read_text(encoding="utf-8"), set(spec.required_columns))
    if db_path is not None:
        issues += _reference_values(catalogue, tasks_dir, skills_dir, Path(db_path))
    return issues


def _operational_spec_declaration(spec: TaskSpec, op: Path, catalogue: dict[str, TaskSpec]) -> list[LintIssue]:
    """A task's own file exists exactly when it says ``true``; a shared spec names an owner."""
    if (spec.operational_spec is True) != op.is_file():
        return [LintIssue(str(op), "operational-spec",
                          "file must exist exactly when task.toml says operational_spec = true "
                          "(a task sharing a sibling's spec names it and has no file of its own)")]
    owner_id = spec.operational_spec if isinstance(spec.operational_spec, str) else None
    if owner_id is None:
        return []
    toml = str(op.parent / "task.toml")
    owner = catalogue.get(owner_id)
    if owner is None or owner.family != spec.family:
        return [LintIssue(toml, "operational-spec", f"operational_spec names {owner_id!r}, not a task of family {spec.family}")]
    if owner.reference != spec.reference:
        return [LintIssue(toml, "operational-spec",
                          f"operational_spec names {owner_id}, whose reference {owner.reference} is not {spec.reference}")]
    if owner.operational_spec is not True:
        return [LintIssue(toml, "operational-spec", f"operational_spec names {owner_id}, which holds no operational-spec.md of its own")]
    return []


def _operational_spec_text(path: Path, text: str, output_columns: set[str]) -> list[LintIssue]:
    """The paper's definition: clinical rules only, no item ids, no table names, no SQL.
    The task's own output column names are allowed (one is also a derived table's name)."""
    out = _sql(path, text) + _patient_ids(path, text)
    for m in _ITEM_ID.finditer(text):
        out.append(LintIssue(str(path), "item-id", f"line {_line(text, m.start())}: {m.group(0)}"))
    for pattern in (_SCHEMA_WORDS, _COLUMN_WORDS, _CHART_PATH, _table_words()):
        for m in pattern.finditer(text):
            if m.group(0) not in output_columns:
                out.append(LintIssue(str(path), "database-recipe", f"line {_line(text, m.start())}: {m.group(0)}"))
    return out


@lru_cache(maxsize=1)
def _table_words() -> re.Pattern[str]:
    """Every source (MIMIC-IV, eICU) and derived table name: bare unless an ordinary word, and
    qualified (``name.column``) always."""
    from clinbench.concepts.catalog import load_concepts
    from clinbench.ehr.eicu_tables import EICU_TABLES
    from clinbench.ehr.mimic_iv_tables import MIMIC_IV_TABLES

    names = {t.name.lower() for t in (*MIMIC_IV_TABLES, *EICU_TABLES)}
    names |= {c.table.lower() for c in load_concepts().values()}
    bare = sorted(names - _PLAIN_WORD_TABLES, key=len, reverse=True)
    qualified = sorted(names, key=len, reverse=True)
    return re.compile(rf"\b({'|'.join(map(re.escape, bare))})\b"
                      rf"|\b({'|'.join(map(re.escape, qualified))})\.[A-Za-z_]\w*", re.I)


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
    from clinbench.duck import duckdb

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
            files = [tasks_dir / spec.family / spec.id / "instruction.md"]
            op = spec.operational_spec_path(tasks_dir)
            files += [op] if op is not None else []
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
