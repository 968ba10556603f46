"""The derive CLI commands, through the real entry point."""

from __future__ import annotations

import json
import subprocess
import sys

import duckdb
import pytest

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)


def cb(*args):
    """In-process run of the Typer app (fast); exit codes and output as the user sees them."""
    from typer.testing import CliRunner

    from clinbench.cli import app

    result = CliRunner().invoke(app, [str(a) for a in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def cb_process(*args):
    """The real entry point, for the error path (``main`` turns library errors into exit 2)."""
    return subprocess.run([sys.executable, "-m", "clinbench", *map(str, args)], capture_output=True, text=True)


def _meld_db(path):
    con = duckdb.connect(str(path))
    con.execute("CREATE SCHEMA mimiciv_derived")
    con.execute("CREATE TABLE mimiciv_derived.target_meld_24h (subject_id INTEGER, hadm_id INTEGER, stay_id INTEGER, meld DOUBLE)")
    con.execute("INSERT INTO mimiciv_derived.target_meld_24h VALUES (1, 10, 100, 20.0), (2, 20, 200, 7.5)")
    con.close()
    return path


def test_tasks_list_show_lint():
    r = cb("tasks", "list")
    assert r.exit_code == 0 and "mimic-ventilation-raw" in r.output
    r = cb("tasks", "show", "mimic-meld-24h")
    assert r.exit_code == 0 and "meld 1" in r.output and "{output_path}" in r.output
    r = cb("tasks", "lint")
    assert r.exit_code == 0 and "clean" in r.output
    r = cb_process("tasks", "show", "nope")
    assert r.returncode == 2 and r.stderr.startswith("error: unknown task 'nope'")


def test_reference_export_and_score(tmp_path):
    db = _meld_db(tmp_path / "x.duckdb")
    out = tmp_path / "ref.csv"
    r = cb("tasks", "reference", "mimic-meld-24h", "--db", db, "--out", out)
    assert r.exit_code == 0, r.output
    assert out.read_text().splitlines() == ["subject_id,hadm_id,stay_id,meld", "1,10,100,20.0", "2,20,200,7.5"]
    r = cb("score", "mimic-meld-24h", out, "--db", db, "--json")
    data = json.loads(r.output)
    assert data["reward"] == 1.0 and data["strict"] is True
    bad = tmp_path / "bad.csv"
    bad.write_text("subject_id,hadm_id,stay_id\n1,10,100\n")
    r = cb("score", "mimic-meld-24h", bad, "--db", db)
    assert r.exit_code == 0 and "missing required column(s): meld" in r.output and "reward 0.0000" in r.output
    r = cb_process("score", "mimic-meld-24h", out, "--db", tmp_path / "none.duckdb")
    assert r.returncode == 2 and "not found" in r.stderr


def test_workspace_command(source_db, tmp_path):
    r = cb("workspace", "mimic-sofa-24h", "--condition", "with-skill", "--schema", "native", "--db", source_db, "--out", tmp_path / "ws")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "ws" / "skills" / "sofa-score" / "SKILL.md").is_file()
    assert "skills/sofa-score/SKILL.md" in (tmp_path / "ws" / "prompt.md").read_text()
    from clinbench.errors import DataError

    with pytest.raises(DataError, match="not empty"):
        cb("workspace", "mimic-sofa-24h", "--condition", "with-skill", "--db", source_db, "--out", tmp_path / "ws")


def test_workspace_builds_the_reference_its_database_lacks(tmp_path):
    from clinbench.ehr.schema import create_empty

    db = tmp_path / "raw.duckdb"
    with duckdb.connect(str(db)) as con:
        create_empty(con, "mimic-iv")
    r = cb_process("workspace", "mimic-sofa-24h", "--db", db, "--out", tmp_path / "ws")
    assert r.returncode == 0, r.stderr
    assert "target_sofa_24h" in r.stdout and (tmp_path / "ws" / "prompt.md").is_file()
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM mimiciv_derived.target_sofa_24h").fetchone() == (0,)


def test_score_a_mistyped_output_path_is_an_error_and_wrong_columns_name_the_expected_ones(tmp_path):
    db = _meld_db(tmp_path / "m.duckdb")
    r = cb_process("score", "mimic-meld-24h", tmp_path / "outptu.csv", "--db", db)
    assert r.returncode == 2
    assert r.stderr.strip() == (f"error: {tmp_path / 'outptu.csv'} does not exist: give the CSV the agent wrote "
                                "(e.g. WORKSPACE/output.csv)")
    bad = tmp_path / "output.csv"
    bad.write_text("id,score\n100,20\n")
    r = cb("score", "mimic-meld-24h", bad, "--db", db)
    assert r.exit_code == 0  # a wrong output is a valid score of 0, with the reason
    assert "reward 0.0000" in r.output and "missing key column(s): stay_id" in r.output
    assert "mimic-meld-24h expects the columns: subject_id, hadm_id, stay_id, meld" in r.output


def test_reference_with_an_unknown_variant_names_the_known_ones(tmp_path):
    db = _meld_db(tmp_path / "m.duckdb")
    r = cb_process("tasks", "reference", "mimic-sofa-24h", "--db", db, "--out", tmp_path / "v.csv", "--variant", "bogus")
    assert r.returncode == 2
    assert r.stderr.strip() == ("error: task mimic-sofa-24h has no variant 'bogus'; its variants: missing_as_null, "
                                "running_infusions, ventilated_pf (see `clinbench concepts variants DB`)")
    assert not (tmp_path / "v.csv").exists()


def test_a_task_of_the_other_dataset_says_to_pass_that_database_not_to_build_concepts(tmp_path):
    db = _meld_db(tmp_path / "m.duckdb")
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE SCHEMA mimiciv_hosp")
        con.execute("CREATE TABLE mimiciv_hosp.patients (subject_id INTEGER)")
    expected = (f"error: {db} holds no eicu data, so it has no reference for eicu-gcs; "
                "pass --db a database loaded from eicu with the concepts built")
    for args in (("tasks", "reference", "eicu-gcs", "--out", tmp_path / "e.csv"), ("workspace", "eicu-gcs", "--out", tmp_path / "ws")):
        r = cb_process(*args, "--db", db)
        assert r.returncode == 2 and r.stderr.strip() == expected, args
    (tmp_path / "out.csv").write_text("patientunitstayid,gcs\n1,15\n")
    r = cb_process("score", "eicu-gcs", tmp_path / "out.csv", "--db", db)
    assert r.returncode == 2 and r.stderr.strip() == expected


def test_score_scored_columns_option_is_applied_and_recorded(tmp_path):
    db = tmp_path / "c.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE SCHEMA mimiciv_derived")
        con.execute("CREATE TABLE mimiciv_derived.target_creatinine_baseline (hadm_id INTEGER, gender VARCHAR, age DOUBLE, "
                    "scr_min DOUBLE, ckd INTEGER, mdrd_est DOUBLE, scr_baseline DOUBLE)")
        con.execute("INSERT INTO mimiciv_derived.target_creatinine_baseline VALUES "
                    "(1, 'M', 60, 1.0, 0, 1.0691, 1.0), (2, 'F', 80, 1.5, 1, 0.7848, 1.5)")
    out = tmp_path / "out.csv"  # right but for one gender
    out.write_text("hadm_id,gender,age,scr_min,ckd,mdrd_est,scr_baseline\n1,M,60,1.0,0,1.0691,1.0\n2,M,80,1.5,1,0.7848,1.5\n")
    value = json.loads(cb("score", "mimic-creatinine-baseline", out, "--db", db, "--json").output)
    assert (value["reward"], value["scored_columns"], sorted(value["columns"])) == (1.0, "value", ["ckd", "mdrd_est", "scr_baseline"])
    required = json.loads(cb("score", "mimic-creatinine-baseline", out, "--db", db, "--json", "--scored-columns", "required").output)
    # scr_baseline, ckd, mdrd_est, gender (1 of 2), age, scr_min: (5 + 0.5) / 6
    assert required["reward"] == pytest.approx(5.5 / 6) and required["scored_columns"] == "required"
    assert required["columns"]["gender"]["match_rate"] == 0.5
    bad = cb_process("score", "mimic-creatinine-baseline", out, "--db", db, "--scored-columns", "all")
    assert bad.returncode == 2 and "must be value or required" in bad.stderr and "Traceback" not in bad.stderr


def test_score_json_skips_typer_the_duckdb_python_layer_and_dataclasses_and_prints_what_the_command_line_prints(tmp_path):
    import os

    db = _meld_db(tmp_path / "m.duckdb")
    output = tmp_path / "output.csv"
    output.write_text("subject_id,hadm_id,stay_id,meld\n1,10,100,20.0\n2,20,200,9.0\n")
    args = ["score", "mimic-meld-24h", str(output), "--db", str(db), "--json"]
    # the fast path ends with os._exit (no teardown): made a SystemExit here so the modules can be looked at
    script = ("import sys, json, runpy, os\n"
              "os._exit = sys.exit\n"
              f"sys.argv = ['clinbench', *{args!r}]\n"
              "try:\n    runpy.run_module('clinbench', run_name='__main__')\nexcept SystemExit as exc:\n"
              "    print(json.dumps([exc.code, *(m in sys.modules for m in ('typer', 'duckdb', 'dataclasses'))]), file=sys.stderr)\n")
    env = {**os.environ, "CLINBENCH_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    # dataclasses imports inspect, ast and dis: 15 ms of a score process (clinbench.plain)
    assert json.loads(done.stderr.strip().splitlines()[-1]) == [0, False, False, False]
    assert json.loads(done.stdout)["reward"] == 0.5  # meld 20.0 matches, 9.0 against 7.5 does not
    assert done.stdout == cb(*args).output  # the full command line's answer, byte for byte
    real = subprocess.run([sys.executable, "-m", "clinbench", *args], capture_output=True, text=True, env=env)
    assert (real.returncode, real.stdout, real.stderr) == (0, done.stdout, "")  # all of it written before os._exit
    # an error is the full command line's own one-line message (it runs the command again)
    missing = subprocess.run([sys.executable, "-m", "clinbench", *args[:2], str(tmp_path / "no.csv"), *args[3:]],
                             capture_output=True, text=True, env=env)
    assert missing.returncode == 2 and missing.stderr.startswith(f"error: {tmp_path / 'no.csv'} does not exist")
    # bytes no CSV reader wants (an agent's output is untrusted): the same answer as the full command line, no traceback
    garbage = tmp_path / "garbage.csv"
    garbage.write_bytes(b'\xff\xfe"unterminated,\x00\x1b[2J\n' * 3)
    hostile = [*args[:2], str(garbage), *args[3:]]
    fast = subprocess.run([sys.executable, "-m", "clinbench", *hostile], capture_output=True, text=True, env=env)
    full = cb(*hostile)
    assert "Traceback" not in fast.stderr and fast.returncode == full.exit_code
    assert fast.stdout == (full.output if full.exit_code == 0 else "")


def test_the_score_fast_paths_duckdb_starts_beside_the_imports_and_its_failure_reaches_the_caller(monkeypatch):
    """`score --json` starts DuckDB on a thread while its modules import: the connection it hands back runs SQL,
    and a start that fails raises in the caller (the fast path then leaves it to the full command line)."""
    import threading

    from clinbench import duck

    wait = duck.connect_meanwhile()
    assert wait().execute("SELECT 40 + 2").fetchone() == (42,)

    seen = []

    def failing_connect(*args, **kwargs):
        seen.append(threading.current_thread().name)
        raise duck.duckdb.IOException("could not start")

    monkeypatch.setattr(duck.duckdb, "connect", failing_connect)
    with pytest.raises(duck.duckdb.IOException, match="could not start"):
        duck.connect_meanwhile()()
    assert seen == ["duckdb-start"]  # started off the caller's thread
