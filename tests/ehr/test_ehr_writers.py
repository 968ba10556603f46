"""Writers (`data load`, `data synth`) never replace what they should not, clean up after a killed
writer, refuse a header-only required table, and say so when the disk is full or read-only."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from clinbench.ehr.requirements import required_tables
from clinbench.ehr.schema import dataset_tables
from ehr_helpers import PATIENTS_CSV, write_gz


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "clinbench", "data", *args], capture_output=True, text=True, timeout=300)


def _error(res) -> str:
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    lines = res.stderr.strip().splitlines()
    errors = [line for line in lines if line.startswith("error:")]
    assert errors == lines[-1:], res.stderr  # one error line, last (a progress bar may precede it)
    return errors[0]


@pytest.mark.slow
def test_an_existing_out_is_refused_without_force_and_an_input_file_always(small_mimic, tmp_path):
    out = tmp_path / "m.duckdb"
    assert _cli("synth", "mimic-iv", "--patients", "5", "--out", str(out)).returncode == 0
    before = out.read_bytes()
    assert _error(_cli("synth", "mimic-iv", "--patients", "6", "--out", str(out))) == (
        f"error: {out} already exists: pass --force to replace it, or choose another --out")
    assert _error(_cli("load", "mimic-iv", str(small_mimic), "--out", str(out), "--partial")).endswith(
        "already exists: pass --force to replace it, or choose another --out")
    assert out.read_bytes() == before
    assert _cli("synth", "mimic-iv", "--patients", "6", "--out", str(out), "--force").returncode == 0
    assert out.read_bytes() != before

    patients = small_mimic / "hosp" / "patients.csv.gz"
    data = patients.read_bytes()
    msg = _error(_cli("load", "mimic-iv", str(small_mimic), "--out", str(patients), "--partial", "--force"))
    assert msg == f"error: --out {patients} is a file of the input folder {small_mimic}: choose a path outside it"
    assert patients.read_bytes() == data


@pytest.mark.slow
def test_the_temporary_file_of_a_killed_writer_is_removed_by_the_next_writer(tmp_path):
    out = tmp_path / "big.duckdb"
    proc = subprocess.Popen([sys.executable, "-m", "clinbench", "data", "synth", "mimic-iv", "--patients", "20000",
                             "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".big.duckdb.tmp-*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    left = list(tmp_path.glob(".big.duckdb.tmp-*"))
    assert left, "the killed writer left nothing to clean up: the test did not kill it mid-write"
    assert _cli("synth", "mimic-iv", "--patients", "5", "--out", str(out)).returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.duckdb"]


def _header_only_folder(root):
    """Every table a task family needs, with its official header and no rows (patients has rows)."""
    for table in dataset_tables("mimic-iv"):
        if table.qualified not in required_tables("mimic-iv"):
            continue
        module = table.schema.removeprefix("mimiciv_")
        header = ",".join(table.column_names) + "\n"
        write_gz(root / module / f"{table.name}.csv.gz", PATIENTS_CSV if table.name == "patients" else header)
    return root


@pytest.mark.slow
def test_a_required_table_present_but_empty_is_an_error_naming_it(tmp_path):
    src = _header_only_folder(tmp_path / "mimic")
    out = tmp_path / "m.duckdb"
    msg = _error(_cli("load", "mimic-iv", str(src), "--out", str(out)))
    assert msg.startswith("error: ") and " holds no rows: mimiciv_" in msg
    assert "need it (their references would be degenerate); add the rows, or pass --partial to load anyway" in msg
    assert not out.exists()

    done = _cli("load", "mimic-iv", str(src), "--out", str(out), "--partial")
    assert done.returncode == 0, done.stderr
    warned = " ".join(done.stderr.split())
    assert "warning: icu/chartevents.csv.gz holds no rows: mimiciv_icu.chartevents is empty" in warned


@pytest.mark.slow
def test_a_full_disk_is_reported_as_a_full_disk_not_a_bad_input(small_mimic, tmpfs):
    small = tmpfs("small", "size=512k")
    out = small / "m.duckdb"
    assert _error(_cli("synth", "mimic-iv", "--patients", "200", "--out", str(out))) == (
        f"error: disk full: no space left on the device holding {out}; free space (or choose another location) and retry")
    msg = _error(_cli("load", "mimic-iv", str(_header_only_folder(small_mimic.parent / "full")), "--out", str(out),
                      "--partial"))
    assert msg.startswith("error: disk full: no space left on the device holding")
    assert list(small.iterdir()) == []  # no temporary file left behind


def test_a_read_only_out_is_reported_as_read_only(tmpfs):
    ro = tmpfs("ro", "size=1m,ro")
    out = ro / "m.duckdb"
    assert _error(_cli("synth", "mimic-iv", "--patients", "5", "--out", str(out))) == (
        f"error: cannot write {out}: the location is read-only or not writable by you; choose a writable location")
