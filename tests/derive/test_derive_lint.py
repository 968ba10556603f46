"""Lint passes on the shipped files and catches each planted problem."""

from __future__ import annotations

import re
import shutil

import duckdb
import pytest

from clinbench.derive.catalogue import SKILLS_DIR, TASKS_DIR
from clinbench.derive.lint import lint
from clinbench.errors import TaskError


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


@pytest.mark.slow
def test_lint_with_a_missing_database_is_a_one_line_error(tmp_path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "clinbench", "tasks", "lint", "--db", str(tmp_path / "nope.duckdb")],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip() == (f"error: database {tmp_path / 'nope.duckdb'} not found; "
                                   "pass --db a database with the concepts built")


def _append(path, text):
    path.write_text(path.read_text() + "\n" + text + "\n")


@pytest.mark.parametrize("line, rule", [
    ("Creatinine is lab item 50912.", "item-id"),
    ("Heart rate is item 220,045.", "item-id"),
    ("Read the vital signs from vitalperiodic.", "database-recipe"),          # eICU source table
    ("Use the lowest value of first_day_lab.", "database-recipe"),           # derived table
    ("Pre-ICU time is patient.hospitaladmitoffset negated.", "database-recipe"),  # qualified by a plain-word table
    ("Admission time is icustays.intime.", "database-recipe"),
    ("Everything lives in eicu_crd.", "database-recipe"),                    # schema
    ("Sum the cells under flowsheet|Flowsheet Cell Labels|I&O|.", "database-recipe"),  # chart path
    ("Select SELECT stay_id, max(gcs) FROM gcs_rows per stay.", "sql"),
    ("Score it as CASE WHEN gcs < 6 THEN 26 END.", "sql"),
    ("Keep rows WHERE specimen = 'ART.' only.", "sql"),
    ("Missing is COALESCE(x, 0).", "sql"),
])
def test_operational_spec_breaking_the_papers_definition_fails(copy, line, rule):
    tasks, skills = copy
    p = tasks / "gcs" / "eicu-gcs" / "operational-spec.md"
    assert ("operational-spec", "eicu-gcs") not in rules(lint(tasks, skills))
    _append(p, line)
    assert (rule, "eicu-gcs") in rules(lint(tasks, skills))


def test_plain_clinical_words_and_output_columns_are_not_table_names(copy):
    tasks, skills = copy
    p = tasks / "vasopressor-equivalents" / "mimic-vasopressor-equivalents-raw" / "operational-spec.md"
    # 'patient', 'sofa', 'weight' are also table names; norepinephrine_equivalent_dose is this task's column
    _append(p, "The patient's weight and sofa score do not change norepinephrine_equivalent_dose.")
    assert not [i for i in lint(tasks, skills) if "vasopressor" in i.path]


def _set_spec(tasks, family, task, value):
    p = tasks / family / task / "task.toml"
    p.write_text(re.sub(r"(?m)^operational_spec = .*$", f"operational_spec = {value}", p.read_text()))
    return p


def test_a_shared_spec_must_name_a_sibling_with_the_same_reference_that_owns_the_file(copy):
    tasks, skills = copy
    _set_spec(tasks, "oasis", "mimic-oasis-24h-raw", '"eicu-oasis"')       # same family, other reference
    _set_spec(tasks, "meld", "mimic-meld-24h-raw", '"mimic-sofa-24h-raw"')  # other family
    _set_spec(tasks, "sofa", "mimic-sofa-24h", '"mimic-sofa-24h"')          # itself: refused by the catalogue
    with pytest.raises(TaskError, match="operational_spec names the task itself"):
        lint(tasks, skills)
    _set_spec(tasks, "sofa", "mimic-sofa-24h", '"mimic-sofa-24h-raw"')
    _set_spec(tasks, "kdigo", "mimic-kdigo-48h", "false")                 # the named sibling has none
    (tasks / "kdigo" / "mimic-kdigo-48h" / "operational-spec.md").unlink()
    (tasks / "sirs" / "mimic-sirs-24h-raw" / "operational-spec.md").unlink()  # declared, file lost
    found = {(i.path.split("/")[-2], i.detail) for i in lint(tasks, skills) if i.rule == "operational-spec"}
    assert found == {
        ("mimic-oasis-24h-raw", "operational_spec names eicu-oasis, whose reference eicu-oasis is not oasis-24h"),
        ("mimic-meld-24h-raw", "operational_spec names 'mimic-sofa-24h-raw', not a task of family meld"),
        ("mimic-sirs-24h-raw", "file must exist exactly when task.toml says operational_spec = true "
                               "(a task sharing a sibling's spec names it and has no file of its own)"),
        ("mimic-kdigo-48h-raw", "operational_spec names mimic-kdigo-48h, which holds no operational-spec.md of its own"),
    }


def test_a_task_sharing_a_spec_may_not_keep_its_own_copy(copy):
    tasks, skills = copy
    src = tasks / "sofa" / "mimic-sofa-24h-raw" / "operational-spec.md"
    shutil.copy(src, tasks / "sofa" / "mimic-sofa-24h" / "operational-spec.md")
    assert ("operational-spec", "mimic-sofa-24h") in rules(lint(tasks, skills))


def test_decoy_skill_of_the_tasks_own_family_fails(copy):
    tasks, skills = copy
    p = tasks / "sepsis3" / "mimic-sepsis3-raw" / "task.toml"
    p.write_text(p.read_text().replace('decoy_skill = "kdigo-aki-staging"', 'decoy_skill = "sofa-score"'))
    with pytest.raises(TaskError, match="decoy_skill must be a skill of another family"):
        lint(tasks, skills)  # the catalogue refuses a decoy from the task's own skills
    p.write_text(p.read_text().replace('decoy_skill = "sofa-score"', 'decoy_skill = "kdigo-aki-staging"'))
    # lint also refuses one from a sibling's skills: the standard SOFA task now teaches SAPS II,
    # which is the raw SOFA task's decoy
    q = tasks / "sofa" / "mimic-sofa-24h" / "task.toml"
    q.write_text(q.read_text().replace('skills = ["sofa-score"]', 'skills = ["sofa-score", "sapsii-score"]')
                 .replace('decoy_skill = "sapsii-score"', 'decoy_skill = "kdigo-aki-staging"'))
    got = [i for i in lint(tasks, skills) if i.rule == "decoy-skill"]
    assert [(i.path.split("/")[-2], i.detail) for i in got] == [
        ("mimic-sofa-24h-raw", "decoy 'sapsii-score' must be a skill of another family's task (families using it: sapsii, sofa)")]
