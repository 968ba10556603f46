"""`clinbench demo` runs the whole system offline, and a rerun resumes instead of redoing."""

import os
import subprocess
import sys

import duckdb


def test_demo_end_to_end_then_resumes(tmp_path):
    out = tmp_path / "demo"
    env = {**os.environ, "CLINBENCH_CACHE": str(tmp_path / "cache")}
    first = subprocess.run([sys.executable, "-m", "clinbench", "demo", "--out", str(out), "--patients", "40"],
                           capture_output=True, text=True, env=env, timeout=600)
    assert first.returncode == 0, first.stderr[-2000:]
    html = (out / "report.html").read_text()
    assert "<svg" in html and "mimic-sofa-24h" in html

    with duckdb.connect(str(out / "campaign" / "results.duckdb"), read_only=True) as con:
        by_agent = dict(con.execute("SELECT agent, avg(reward) FROM runs GROUP BY agent").fetchall())
        assert con.execute("SELECT count(*), count(DISTINCT run_id) FROM runs").fetchone() == (16, 16)
    assert by_agent == {"reference": 1.0, "empty": 0.0}
    with duckdb.connect(str(out / "dx" / "results.duckdb"), read_only=True) as con:
        oracle = con.execute("SELECT count(*), avg(reward) FROM runs WHERE agent = 'oracle'").fetchone()
    assert oracle[0] >= 30 and oracle[1] == 1.0

    again = subprocess.run([sys.executable, "-m", "clinbench", "demo", "--out", str(out), "--patients", "40"],
                           capture_output=True, text=True, env=env, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "16 already done" in again.stdout.replace("\n", " ")
    assert "the task references (17 targets for the 28 tasks)" in again.stdout.replace("\n", " ")
