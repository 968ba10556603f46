"""Lint passes on the shipped files and catches each planted problem."""

from __future__ import annotations

import shutil

import duckdb
import pytest

from clinbench.derive.catalogue import SKILLS_DIR, TASKS_DIR
from clinbench.derive.lint import lint


def test_shipped_files_are_clean():
    assert [str(i) for i in lint()] == []


@pytest.fixture
def copy(tmp_path):
    tasks, skills = tmp_path / "tasks", tmp_path / "skills"
    shutil.copytree(TASKS_DIR, tasks)
    shutil.copytree(SKILLS_DIR, skills)
    return tasks, skills


def rules(issues):
    return {(i.rule, i.path.split("/")[-2]) for i in issues}


def test_sql_in_skill_fails(copy):
    tasks, skills = copy
    p = skills / "sofa-score" / "SKILL.md"
    p.write_text(p.read_text() + "\nSELECT max(valuenum) FROM mimiciv_icu.chartevents WHERE itemid = 220052\n")
    assert ("sql", "sofa-score") in rules(lint(tasks, skills))


def test_lowercase_sql_and_fence_fail(copy):
    tasks, skills = copy
    p = skills / "meld-score" / "SKILL.md"
    p.write_text(p.read_text() + "\n```sql\nselect * from mimiciv_hosp.labevents\n```\n")
    found = [i for i in lint(tasks, skills) if i.rule == "sql"]
    assert len(found) >= 2


def test_item_id_and_table_in_operational_spec_fail(copy):
    tasks, skills = copy
    p = tasks / "sofa" / "mimic-sofa-24h-raw" / "operational-spec.md"
    p.write_text(p.read_text() + "\nMean pressure is item 220052 in chartevents.\n")
    got = rules(lint(tasks, skills))
    assert ("item-id", "mimic-sofa-24h-raw") in got and ("database-recipe", "mimic-sofa-24h-raw") in got


def test_prose_numbers_are_not_item_ids():
    # thresholds such as 18708 minutes or 6896.80 mL in the OASIS spec are not item ids
    assert not [i for i in lint() if i.rule == "item-id"]


def test_instruction_columns_must_match(copy):
    tasks, skills = copy
    p = tasks / "meld" / "mimic-meld-24h" / "instruction.md"
    p.write_text(p.read_text().replace("`meld`", "`meld_score`"))
    issues = [i for i in lint(tasks, skills) if i.rule == "columns"]
    assert len(issues) == 1 and "meld_score" in issues[0].detail


def test_missing_front_matter_and_placeholder(copy):
    tasks, skills = copy
    p = skills / "sirs-criteria" / "SKILL.md"
    p.write_text(p.read_text().split("---\n", 2)[2])
    q = tasks / "sirs" / "mimic-sirs-24h-raw" / "instruction.md"
    q.write_text(q.read_text().replace("{output_path}", "out.csv"))
    got = rules(lint(tasks, skills))
    assert ("front-matter", "sirs-criteria") in got and ("instruction", "mimic-sirs-24h-raw") in got


def test_patient_identifier_flagged(copy):
    tasks, skills = copy
    p = skills / "gcs-calculation" / "SKILL.md"
    p.write_text(p.read_text() + "\nFor example stay 30019660 scores 7.\n")
    assert ("reference-value", "gcs-calculation") in rules(lint(tasks, skills))


def test_reference_key_values_flagged_with_db(copy, tmp_path):
    tasks, skills = copy
    db = tmp_path / "ref.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE SCHEMA mimiciv_derived")
    con.execute("CREATE TABLE mimiciv_derived.target_meld_24h AS SELECT 7 AS subject_id, 8 AS hadm_id, 424242 AS stay_id, 12.0 AS meld")
    con.close()
    assert lint(tasks, skills, db) == []
    p = tasks / "meld" / "mimic-meld-24h" / "instruction.md"
    p.write_text(p.read_text() + "\nStay 424242 has MELD 12.\n")
    issues = [i for i in lint(tasks, skills, db) if i.rule == "reference-value"]
    assert issues and "424242" in issues[0].detail


def test_lint_with_a_missing_database_is_a_one_line_error(tmp_path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "clinbench", "tasks", "lint", "--db", str(tmp_path / "nope.duckdb")],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip() == (f"error: database {tmp_path / 'nope.duckdb'} not found; "
                                   "pass --db a database with the concepts built")
