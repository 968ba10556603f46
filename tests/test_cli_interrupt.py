"""Ctrl-C in a long command says what it kept and how to resume, exits 130, no traceback.

`concepts build`, `demo` and `run` before its first run used to exit 130 with no word (Typer swallows
KeyboardInterrupt). The interrupt is raised inside the real code path (the build's result hook, the
reference check), as Ctrl-C would raise it there.
"""

from __future__ import annotations

import re

import duckdb
import pytest
from typer.testing import CliRunner

from clinbench.cli import app
from clinbench.ehr.schema import create_empty


@pytest.fixture
def empty_mimic(tmp_path):
    path = tmp_path / "empty.duckdb"
    with duckdb.connect(str(path)) as con:
        create_empty(con, "mimic-iv")
    return path




def test_ctrl_c_in_concepts_build_says_what_is_kept_and_the_rerun_builds_the_rest(empty_mimic, monkeypatch):
    from clinbench.concepts import build

    original, seen = build._BuildState.finish, []

    def finish(self, *args, **kwargs):
        seen.append(1)
        if len(seen) == 2:  # Ctrl-C as the second concept is recorded: the first is kept
            raise KeyboardInterrupt
        return original(self, *args, **kwargs)

    monkeypatch.setattr(build._BuildState, "finish", finish)
    args = ["concepts", "build", str(empty_mimic), "--only", "age,icustay_times,gcs"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 130, res.output
    text = " ".join(res.output.split())
    assert (f"interrupted: 1 concept(s) built or unchanged are kept in {empty_mimic} (each table is written whole); "
            f"rerun `clinbench concepts build {empty_mimic}` to build the rest") in text
    monkeypatch.setattr(build._BuildState, "finish", original)
    again = re.search(r"(\d+) built, (\d+) unchanged, 0 skipped", " ".join(CliRunner().invoke(app, args).output.split()))
    built, unchanged = int(again.group(1)), int(again.group(2))
    assert unchanged >= 1 and built + unchanged == 3  # what the interrupted build finished is not built again


@pytest.mark.slow
def test_ctrl_c_in_run_before_the_first_run_says_nothing_was_recorded(tmp_path, monkeypatch):
    from campaign.campaign_fixtures import build_tiny_db
    from clinbench.concepts import manifest

    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    db = build_tiny_db(tmp_path / "tiny.duckdb")

    def verify(*args, **kwargs):  # Ctrl-C while the references are checked against their manifests
        raise KeyboardInterrupt

    monkeypatch.setattr(manifest, "verify", verify)
    res = CliRunner().invoke(app, ["run", "--db", str(db), "--out", str(tmp_path / "c"), "--task", "mimic-sofa-24h",
                                   "--agent", "reference"])
    assert res.exit_code == 130, res.output
    assert ("interrupted: before any run started: no run was recorded; rerun the same command to start the campaign"
            in " ".join(res.output.split()))
    assert not (tmp_path / "c").exists()


def test_ctrl_c_in_the_demo_names_the_step_what_is_kept_and_how_to_resume(tmp_path, monkeypatch):
    from clinbench.ehr import synth

    def synth_mimic_iv(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(synth, "synth_mimic_iv", synth_mimic_iv)
    res = CliRunner().invoke(app, ["demo", "--out", str(tmp_path / "d")])
    assert res.exit_code == 130, res.output
    assert (f"interrupted: in step 1; nothing finished is kept in {tmp_path / 'd'} yet; rerun `clinbench demo --out "
            f"{tmp_path / 'd'}` with the same options to resume") in " ".join(res.output.split())


def test_progress_on_output_that_is_not_a_terminal_is_plain_lines_at_most_every_few_seconds():
    """A campaign's live bar drew nothing in a log until it ended: plain lines instead, throttled."""
    import io

    from rich.console import Console

    from clinbench.campaign.progress import PLAIN_EVERY_SECONDS, RichReporter
    from clinbench.records import RunRecord

    log = io.StringIO()
    reporter = RichReporter(Console(file=log, force_terminal=False, width=200))
    now = [0.0]
    reporter.plain.clock = lambda: now[0]
    reporter.plain.started = 0.0
    reporter.start(4, 0)
    for i, t in enumerate((1.0, 2.0, 1.0 + PLAIN_EVERY_SECONDS, 7.0)):
        now[0] = t
        reporter.finished(RunRecord(run_id=f"r{i}", benchmark="derive", task="t", condition="no-skill", schema="native",
                                    agent="reference", model="-", trial=0, status="ok", reward=1.0))
    reporter.stop()
    assert log.getvalue().splitlines() == ["runs: 0/4, 0 s, started", "runs: 3/4, 6 s, no-skill: 1.000",
                                           "runs: 4/4, 7 s, no-skill: 1.000"]


def test_demo_db_that_holds_no_mimic_iv_is_refused_in_one_line(tmp_path):
    from clinbench.errors import DataError

    db = tmp_path / "eicu.duckdb"
    with duckdb.connect(str(db)) as con:
        create_empty(con, "eicu")
    res = CliRunner().invoke(app, ["demo", "--db", str(db), "--out", str(tmp_path / "d")])
    assert isinstance(res.exception, DataError) and "holds no MIMIC-IV tables" in str(res.exception)
    assert not (tmp_path / "d").exists()
