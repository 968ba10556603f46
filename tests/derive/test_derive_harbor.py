"""Harbor task folders: what a Harbor user gets, and its verifier run as Harbor runs it (test.sh)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib

import duckdb
import pytest

from clinbench.derive.harbor import export_harbor_task
from clinbench.derive.reference import export_reference
from derive_fixtures import MARKER


def _verify(folder, app, tmp_path):
    """Run tests/test.sh the way Harbor does, with its paths moved under tmp_path."""
    tests = tmp_path / "uploaded-tests"  # Harbor uploads tests/ after the agent finishes
    shutil.copytree(folder / "tests", tests)
    logs = tmp_path / "logs"
    env = {**os.environ, "APP_DIR": str(app), "TESTS_DIR": str(tests), "LOGS_DIR": str(logs),
           "PYTHON": sys.executable}
    env.pop("PYTHONPATH", None)  # the copied package must be enough
    proc = subprocess.run(["bash", str(tests / "test.sh")], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return float((logs / "reward.txt").read_text()), json.loads((logs / "reward.json").read_text())


@pytest.fixture
def folder(source_db, tmp_path):
    return export_harbor_task("mimic-sofa-24h", source_db, tmp_path / "harbor")


def test_folder_has_the_harbor_layout_and_no_reference_in_the_agent_image(folder):
    names = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if "clinbench/" not in str(p.relative_to(folder)))
    for need in ("instruction.md", "task.toml", "environment/Dockerfile", "environment/database.duckdb",
                 "tests/test.sh", "tests/verify.py", "tests/reference.duckdb", "solution/solve.sh"):
        assert need in names
    toml = tomllib.loads((folder / "task.toml").read_text())
    assert toml["metadata"]["clinbench_task"] == "mimic-sofa-24h" and toml["environment"]["allow_internet"] is False
    assert "/app/output.csv" in (folder / "instruction.md").read_text()
    agent_side = b"".join(p.read_bytes() for p in (folder / "environment").rglob("*") if p.is_file())
    assert MARKER.encode() not in agent_side and b"target_sofa_24h" not in agent_side
    assert MARKER.encode() in (folder / "tests" / "reference.duckdb").read_bytes()  # positive control


@pytest.mark.slow
def test_verifier_scores_the_reference_one_and_nothing_zero(folder, source_db, tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    assert _verify(folder, app, tmp_path / "a")[0] == 0.0
    export_reference("mimic-sofa-24h", source_db, app / "output.csv")
    reward, detail = _verify(folder, app, tmp_path / "b")
    assert reward == 1.0 and detail["strict"] is True


def test_verifier_refuses_a_symlinked_output(folder, source_db, tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    export_reference("mimic-sofa-24h", source_db, tmp_path / "elsewhere.csv")
    (app / "output.csv").symlink_to(tmp_path / "elsewhere.csv")
    reward, detail = _verify(folder, app, tmp_path / "c")
    assert reward == 0.0 and "not a regular file" in detail["reason"]


@pytest.mark.slow
def test_solution_is_the_reference_and_cli_writes_folders(source_db, tmp_path):
    # This small fixture can score sirs and gcs but not meld (inputevents/procedureevents are empty):
    # the scorable tasks are exported and meld is skipped with its reason, never exported to score 0.
    out = tmp_path / "h"
    proc = subprocess.run([sys.executable, "-m", "clinbench", "export-tasks", str(out), "--db", str(source_db),
                           "--tasks", "mimic-sirs-24h-raw,mimic-gcs-24h-raw,mimic-meld-24h"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["mimic-gcs-24h-raw", "mimic-sirs-24h-raw"]
    assert "mimic-meld-24h" in proc.stderr + proc.stdout and "inputevents" in proc.stderr + proc.stdout
    task = out / "mimic-sirs-24h-raw"
    with duckdb.connect(str(task / "tests" / "reference.duckdb"), read_only=True) as con:
        ((schema, table),) = con.execute("SELECT table_schema, table_name FROM information_schema.tables").fetchall()
        rows = con.execute(f'SELECT count(*) FROM "{schema}"."{table}"').fetchone()[0]
    assert rows > 0
    assert len((task / "solution" / "output.csv").read_text().splitlines()) == rows + 1
    again = subprocess.run([sys.executable, "-m", "clinbench", "export-tasks", str(out), "--db", str(source_db),
                            "--tasks", "mimic-sirs-24h-raw"], capture_output=True, text=True, timeout=300)
    assert again.returncode == 2 and "already exists" in again.stderr and "Traceback" not in again.stderr
