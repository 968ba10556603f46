"""`clinbench data synth`: writes the database, documents the knobs, reports bad input in one line."""

from __future__ import annotations

import pytest
import subprocess
import sys

import duckdb


def _run(*args):
    return subprocess.run([sys.executable, "-m", "clinbench", "data", "synth", *args], capture_output=True, text=True,
                          timeout=300)


@pytest.mark.slow
def test_synth_writes_a_mimic_database_with_the_requested_patients(tmp_path):
    out = tmp_path / "m.duckdb"
    done = _run("mimic-iv", "--patients", "25", "--seed", "3", "--out", str(out), "--ventilated", "0.6")
    assert done.returncode == 0, done.stderr
    assert "wrote" in done.stdout and "25 patients" in done.stdout
    with duckdb.connect(str(out), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM mimiciv_hosp.patients").fetchone()[0] == 25


@pytest.mark.slow
def test_synth_writes_an_eicu_database(tmp_path):
    out = tmp_path / "e.duckdb"
    done = _run("eicu", "--patients", "12", "--out", str(out))
    assert done.returncode == 0, done.stderr
    with duckdb.connect(str(out), read_only=True) as con:
        assert con.execute("SELECT count(DISTINCT uniquepid) FROM eicu_crd.patient").fetchone()[0] == 12


def test_help_documents_the_prevalence_knobs():
    done = _run("--help")
    assert done.returncode == 0
    for knob in ("--septic", "--ventilated", "--pressors", "--aki", "--crrt", "--liver", "--quirks"):
        assert knob in done.stdout


@pytest.mark.slow
def test_bad_knob_is_a_one_line_error_and_no_file(tmp_path):
    out = tmp_path / "m.duckdb"
    done = _run("mimic-iv", "--patients", "5", "--out", str(out), "--crrt", "0.5", "--aki", "0.1")
    assert done.returncode == 2
    assert done.stderr.strip().startswith("error:") and "exceeds aki" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.slow
def test_ctrl_c_during_synth_says_interrupted_without_traceback_or_file(tmp_path):
    import signal
    import time

    out = tmp_path / "big.duckdb"
    # Ctrl-C as a terminal's foreground command gets it: a suite started in the background (`.ci/run &`) hands
    # its children SIGINT ignored, which Python then keeps ignoring (the synth finished with exit 0)
    proc = subprocess.Popen([sys.executable, "-m", "clinbench", "data", "synth", "mimic-iv", "--patients", "20000",
                             "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".big.duckdb.tmp-*")) and time.monotonic() < deadline:
        time.sleep(0.05)  # interrupt while the temporary database is being filled
    time.sleep(2.0)  # by then it is inside DuckDB inserts, whose interrupt is not a KeyboardInterrupt
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1] == ("interrupted: nothing was written: the database appears at --out only "
                                               "when complete; rerun the same command")
    assert list(tmp_path.iterdir()) == []
