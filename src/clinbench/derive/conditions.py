"""What each condition gives the agent besides the database: the prompt text and skill files.

- ``no-skill``: the instruction only.
- ``with-skill``: the task's skill documents.
- ``with-skill-all``: every skill of the benchmark (M4Bench's noise probe: can the agent find
  the relevant knowledge in a larger library?).
- ``with-skill-decoy``: one skill of another family (the catalogue's ``decoy_skill``).
- ``with-skill-rawsql``: the task's reference SQL as one self-contained statement, as a skill.
- ``operational-spec``: the task's complete clinical rules (no item ids, no recipes), in the prompt.
"""

from __future__ import annotations

from pathlib import Path

from clinbench.derive.catalogue import CONDITIONS, SKILLS_DIR, TaskSpec
from clinbench.errors import TaskError

RAWSQL_SKILL = "reference-sql"


def check_condition(spec: TaskSpec, condition: str) -> None:
    if condition not in CONDITIONS:
        raise TaskError(f"unknown condition {condition!r}; use one of {', '.join(CONDITIONS)}")
    if condition == "operational-spec" and not spec.operational_spec:
        raise TaskError(f"task {spec.id} has no operational spec; pick another condition")


def instruction_text(spec: TaskSpec, output_path: str) -> str:
    path = spec.task_dir / "instruction.md"
    if not path.is_file():
        raise TaskError(f"{path} is missing; every task needs an instruction.md")
    return path.read_text(encoding="utf-8").replace("{output_path}", output_path)


def skill_text(name: str) -> str:
    path = SKILLS_DIR / name / "SKILL.md"
    if not path.is_file():
        raise TaskError(f"skill {name!r} has no {path}; add it or fix the task's skills list")
    return path.read_text(encoding="utf-8")


def reference_sql(spec: TaskSpec) -> str:
    """The task's reference SQL as one self-contained statement (from the concepts builder)."""
    try:
        from clinbench.concepts.build import target_sql
    except ImportError as exc:
        raise TaskError("the concepts builder is not installed; the with-skill-rawsql condition needs it") from exc
    return target_sql(spec.target_table)


def all_skill_names() -> list[str]:
    """Every skill folder of the benchmark, in name order."""
    return sorted(p.name for p in SKILLS_DIR.iterdir() if (p / "SKILL.md").is_file())


def condition_skills(spec: TaskSpec, condition: str, rewrite=None) -> dict[str, str]:
    """Skill folder name -> SKILL.md text for the condition (empty for no-skill/operational-spec)."""
    check_condition(spec, condition)
    if condition == "with-skill":
        return {name: skill_text(name) for name in spec.skills}
    if condition == "with-skill-all":
        return {name: skill_text(name) for name in all_skill_names()}
    if condition == "with-skill-decoy":
        return {spec.decoy_skill: skill_text(spec.decoy_skill)}
    if condition == "with-skill-rawsql":
        sql = reference_sql(spec)
        if rewrite is not None:
            sql = rewrite(sql)
        body = (
            "---\n"
            f"name: {RAWSQL_SKILL}\n"
            f"description: A DuckDB query that derives {spec.id} from this database.\n"
            "category: reference\n"
            "---\n\n"
            "# Reference query\n\n"
            "Running this statement on the task database returns the requested output.\n\n"
            f"```sql\n{sql.strip()}\n```\n"
        )
        return {RAWSQL_SKILL: body}
    return {}


def prompt_text(spec: TaskSpec, condition: str, output_path: str, skills: dict[str, str],
                layout_notes: list[str]) -> str:
    parts = [instruction_text(spec, output_path).rstrip(), ""]
    parts.append("## Environment\n")
    parts.append("The data is in the DuckDB database `database.duckdb` in this directory "
                 "(open it with DuckDB; it is yours to query).")
    parts.extend(layout_notes)
    if skills:
        parts.append("\n## Skills\n")
        parts.append("Read these documents before you start:")
        parts.extend(f"- `skills/{name}/SKILL.md`" for name in skills)
    if condition == "operational-spec":
        path = spec.operational_spec_path()
        if path is None or not path.is_file():
            raise TaskError(f"{path} is missing; task {spec.id} declares an operational spec in its task.toml")
        parts.append("\n## Operational specification\n")
        parts.append(path.read_text(encoding="utf-8").strip())
    return "\n".join(parts).rstrip() + "\n"


def write_skills(skills: dict[str, str], out_dir: Path) -> None:
    for name, text in skills.items():
        dest = out_dir / "skills" / name
        dest.mkdir(parents=True, exist_ok=True)
        (dest / "SKILL.md").write_text(text, encoding="utf-8")
