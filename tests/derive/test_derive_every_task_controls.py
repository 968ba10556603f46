"""Every mechanism control is available on all 28 tasks (issue 19): each task's operational spec
reaches the prompt, its raw-SQL skill is a statement that runs in its own workspace, and its
decoy is a skill of another family."""

from __future__ import annotations

import re

import duckdb
import pytest

from clinbench.derive.catalogue import load_catalogue
from clinbench.derive.workspace import prepare_workspace

TASKS = list(load_catalogue().values())


@pytest.fixture(scope="module")
def _shared_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def isolated_cache(_shared_cache, monkeypatch):
    """One workspace cache for this module (tasks with the same table set share a database)."""
    monkeypatch.setenv("CLINBENCH_CACHE", str(_shared_cache))


def test_all_28_tasks_declare_an_operational_spec_that_exists():
    assert len(TASKS) == 28
    missing = [t.id for t in TASKS if t.operational_spec_path() is None or not t.operational_spec_path().is_file()]
    assert missing == []


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_operational_spec_prompt_contains_the_spec(task, source_db, tmp_path):
    ws = prepare_workspace(task.id, "operational-spec", "native", source_db, tmp_path / "ws")
    prompt = (ws / "prompt.md").read_text(encoding="utf-8")
    spec_text = task.operational_spec_path().read_text(encoding="utf-8").strip()
    assert "## Operational specification" in prompt
    assert spec_text in prompt
    assert not (ws / "skills").exists()


def test_standard_and_raw_tasks_of_a_reference_get_the_same_spec(source_db, tmp_path):
    a = prepare_workspace("mimic-sofa-24h", "operational-spec", "native", source_db, tmp_path / "a")
    b = prepare_workspace("mimic-sofa-24h-raw", "operational-spec", "native", source_db, tmp_path / "b")
    spec = lambda ws: (ws / "prompt.md").read_text().split("## Operational specification", 1)[1]  # noqa: E731
    assert spec(a) == spec(b) and "Renal: highest creatinine" in spec(a)


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
@pytest.mark.slow
def test_rawsql_skill_builds_and_runs_in_the_tasks_workspace(task, source_db, tmp_path):
    ws = prepare_workspace(task.id, "with-skill-rawsql", "native", source_db, tmp_path / "ws")
    skill = (ws / "skills" / "reference-sql" / "SKILL.md").read_text(encoding="utf-8")
    sql = re.search(r"```sql\n(.*)\n```", skill, re.S).group(1)
    assert "target_" not in sql  # self-contained: never reads the (removed) answer table
    con = duckdb.connect(str(ws / "database.duckdb"), read_only=True)
    try:
        columns = [d[0] for d in con.execute(f"SELECT * FROM ({sql}) LIMIT 0").description]
    finally:
        con.close()
    assert [c for c in task.required_columns if c not in columns] == []


def test_every_decoy_is_a_skill_of_another_family():
    family_skills: dict[str, set[str]] = {}
    for t in TASKS:
        family_skills.setdefault(t.family, set()).update(t.skills)
    wrong = [(t.id, t.decoy_skill) for t in TASKS if t.decoy_skill in family_skills[t.family]]
    owned = {s for skills in family_skills.values() for s in skills}
    assert wrong == [] and all(t.decoy_skill in owned for t in TASKS)


def test_tasks_show_names_the_task_whose_spec_is_shared():
    from typer.testing import CliRunner

    from clinbench.cli import app

    shown = {t: " ".join(CliRunner().invoke(app, ["tasks", "show", t]).output.split())
             for t in ("mimic-meld-24h", "mimic-meld-24h-raw")}
    assert "operational spec: yes" in shown["mimic-meld-24h"] and "shared with" not in shown["mimic-meld-24h"]
    assert "operational spec: yes (shared with mimic-meld-24h)" in shown["mimic-meld-24h-raw"]
