"""A task the database cannot score (empty reference, empty source) is never a silent 0.

On the MIMIC-IV demo the rebuilt chartevents has no text values, so the ventilation reference
is empty and the reference agent scored 0.000 on both ventilation tasks, pulling a 26-task
mean to 0.923 with every run `ok`. Here the tiny database's MELD reference is emptied instead.
"""

from __future__ import annotations

import pytest
import duckdb
from typer.testing import CliRunner

from clinbench.campaign.campaign import run_campaign
from clinbench.campaign.execute import CampaignConfig
from clinbench.campaign.matrix import expand
from clinbench.records.store import Store
from clinbench.cli import app
from clinbench.derive.scorable import unscorable_tasks
from clinbench.errors import TaskError


def _empty(db, table: str) -> None:
    with duckdb.connect(str(db)) as con:
        con.execute(f"DELETE FROM {table}")


def _run(db, out, tasks: str):
    return CliRunner().invoke(app, ["run", "--db", str(db), "--out", str(out), "--task", tasks, "--agent", "reference"])


def test_run_refuses_a_task_whose_reference_is_empty_in_one_line_and_records_nothing(tiny_db, tmp_path):
    _empty(tiny_db, "mimiciv_derived.target_meld_24h")
    res = _run(tiny_db, tmp_path / "c", "mimic-meld-24h")
    assert isinstance(res.exception, TaskError)  # the console entry prints it as one line, exit 2
    assert "cannot score mimic-meld-24h: reference mimiciv_derived.target_meld_24h has no rows" in str(res.exception)
    assert "\n" not in str(res.exception)
    assert not (tmp_path / "c" / "results.duckdb").exists()


@pytest.mark.slow
def test_a_matrix_skips_the_unscorable_task_with_its_reason_and_runs_the_rest(tiny_db, tmp_path):
    _empty(tiny_db, "mimiciv_derived.target_meld_24h")
    res = _run(tiny_db, tmp_path / "c", "mimic-sofa-24h,mimic-meld-24h")
    assert res.exit_code == 0, res.output
    assert ("skipped 1 task(s) this database cannot score (every answer would score 0): mimic-meld-24h: "
            "reference mimiciv_derived.target_meld_24h has no rows") in " ".join(res.output.split())
    runs = Store.open(tmp_path / "c").runs()
    assert [(r["task"], r["status"], r["reward"]) for r in runs] == [("mimic-sofa-24h", "ok", 1.0)]


def test_an_empty_source_table_the_family_needs_makes_its_task_unscorable(tiny_db):
    _empty(tiny_db, "mimiciv_icu.outputevents")  # SOFA's renal component reads urine output; MELD does not
    assert unscorable_tasks(tiny_db, ["mimic-sofa-24h", "mimic-meld-24h"]) == {
        "mimic-sofa-24h": "source table mimiciv_icu.outputevents empty"}


@pytest.mark.slow
def test_a_run_scored_against_an_empty_reference_is_a_harness_error_left_out_of_the_mean(tiny_db, tmp_path):
    """What `run` refuses can still reach the scorer (a campaign started another way, `rescore`): not a 0."""
    from clinbench.stats.analysis import analyse

    _empty(tiny_db, "mimiciv_derived.target_meld_24h")
    config = CampaignConfig(db=str(tiny_db), out=str(tmp_path / "c"))
    run_campaign(expand(["mimic-sofa-24h", "mimic-meld-24h"], ["no-skill"], ["native"], ["reference"], [], 1), config)
    status = {r["task"]: (r["status"], r["reward"], r["error"]) for r in Store.open(tmp_path / "c").runs()}
    assert status["mimic-meld-24h"] == ("harness-error", None,
                                        "the reference of mimic-meld-24h has no rows in this database: not scored")
    summary = analyse(tmp_path / "c", None)
    assert summary.overall.mean == 1.0 and summary.tasks == 1


def test_tasks_list_db_marks_the_tasks_the_database_cannot_score(tiny_db):
    _empty(tiny_db, "mimiciv_derived.target_meld_24h")
    res = CliRunner().invoke(app, ["tasks", "list", "--db", str(tiny_db)])
    assert res.exit_code == 0, res.output
    lines = {line.split()[0]: line.split() for line in res.output.splitlines() if line.startswith(("mimic-", "eicu-"))}
    assert lines["mimic-sofa-24h"][-1] == "yes" and lines["mimic-meld-24h"][-1] == "NO"
    assert lines["eicu-gcs"][-2:] == ["no", "data"]
    text = " ".join(res.output.split())  # one line, the tasks that share a reason together
    assert text.startswith("task ") and text.count(f"not scorable on {tiny_db}: ") == 1
    assert "mimic-meld-24h, mimic-meld-24h-raw: reference mimiciv_derived.target_meld_24h has no rows" in text
    assert "not scorable on {}: mimic-apsiii-24h, mimic-apsiii-24h-raw, mimic-charlson-raw, ".format(tiny_db) in text
    assert f"mimic-ventilation-raw: reference not built yet (`run` builds it; or `clinbench concepts build {tiny_db} --all`)" in text


@pytest.mark.slow
def test_score_and_export_tasks_do_not_score_against_an_empty_reference(tiny_db, tmp_path):
    _empty(tiny_db, "mimiciv_derived.target_meld_24h")
    output = tmp_path / "output.csv"
    output.write_text("subject_id,hadm_id,stay_id,meld\n1,10,100,12.0\n")
    res = CliRunner().invoke(app, ["score", "mimic-meld-24h", str(output), "--db", str(tiny_db)])
    assert isinstance(res.exception, TaskError)
    assert "cannot score mimic-meld-24h: reference mimiciv_derived.target_meld_24h has no rows" in str(res.exception)
    res = CliRunner().invoke(app, ["export-tasks", str(tmp_path / "h"), "--db", str(tiny_db),
                                   "--task", "mimic-sofa-24h,mimic-meld-24h"])
    assert res.exit_code == 0, res.output
    assert "skipped 1 task(s) this database cannot score: mimic-meld-24h" in " ".join(res.output.split())
    assert sorted(p.name for p in (tmp_path / "h").iterdir()) == ["mimic-sofa-24h"]
