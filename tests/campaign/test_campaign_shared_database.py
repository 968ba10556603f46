"""Campaigns started together on one database: each builds the references it needs on demand while the
others hold the file, so they take turns (duck.when_free) instead of all but the first failing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from clinbench.duck import duckdb
from clinbench.ehr.synth import synth_mimic_iv
from clinbench.records.store import Store

pytestmark = pytest.mark.slow  # real processes; `make test-fast` leaves this file out

CAMPAIGNS = {"a": "mimic-sofa-24h,mimic-kdigo-48h", "b": "mimic-meld-24h,mimic-oasis-24h", "c": "mimic-urine-output-rate"}


def test_three_campaigns_started_at_once_on_a_fresh_database_all_run(tmp_path):
    db = tmp_path / "mimic.duckdb"
    synth_mimic_iv(db, patients=60, seed=0)  # raw tables only: every reference is built on demand
    env = {**os.environ, "CLINBENCH_CACHE": str(tmp_path / "cache")}
    procs = {name: subprocess.Popen([sys.executable, "-m", "clinbench", "run", "--db", str(db), "--out",
                                     str(tmp_path / name), "--tasks", tasks, "--agent", "reference"],
                                    env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for name, tasks in CAMPAIGNS.items()}
    outputs = {name: proc.communicate(timeout=300)[0] for name, proc in procs.items()}
    assert {name: proc.returncode for name, proc in procs.items()} == {"a": 0, "b": 0, "c": 0}, outputs
    assert not any("Traceback" in text for text in outputs.values())
    for name, tasks in CAMPAIGNS.items():
        runs = Store.open(tmp_path / name).records().values()
        assert sorted((r.task, r.reward) for r in runs) == sorted((t, 1.0) for t in tasks.split(","))
    con = duckdb.connect(str(db), read_only=True)
    try:
        built = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'mimiciv_derived'")
                 .fetchall()}
    finally:
        con.close()
    assert {"target_sofa_24h", "target_kdigo_48h", "target_meld_24h", "target_oasis_24h",
            "target_urine_output_rate"} <= built
