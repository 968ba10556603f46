"""A database whose raw tables are views over Parquet files, as M4 makes them (`m4 init`: one view per
table over its Parquet file, each file converted from the CSV with the types DuckDB guesses from its rows):
its datasets are found, the concepts build from it, its tasks are scorable with the same reference as the
declared types give, and their agents get the rows as tables."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from clinbench.concepts.build import build_concepts
from clinbench.concepts.compare import table_mismatch
from clinbench.duck import duckdb
from clinbench.ehr.synth import synth_mimic_iv
from clinbench.records.store import Store

pytestmark = pytest.mark.slow  # real processes; `make test-fast` leaves this file out


def test_a_campaign_runs_on_raw_tables_that_are_views_over_parquet(tmp_path):
    db, typed = tmp_path / "m4.duckdb", tmp_path / "typed.duckdb"
    synth_mimic_iv(db, patients=60, seed=0)
    shutil.copyfile(db, typed)
    con = duckdb.connect(str(db))
    try:
        tables = [f"{s}.{t}" for s, t in con.execute("SELECT schema_name, table_name FROM duckdb_tables() "
                                                       "WHERE schema_name LIKE 'mimiciv_%'").fetchall()]
        assert len(tables) == 31
        for table in tables:
            csv, parquet = tmp_path / f"{table}.csv.gz", tmp_path / f"{table}.parquet"
            con.execute(f"COPY {table} TO '{csv}' (HEADER)")
            # M4 0.5.3's conversion (src/m4/data_io.py, _csv_to_parquet_all), statement for statement
            con.execute(f"COPY (SELECT * FROM read_csv_auto('{csv}', sample_size=-1, auto_detect=true, "
                        f"nullstr=['', 'NULL', 'NA', 'N/A', '___'], ignore_errors=false)) "
                        f"TO '{parquet}' (FORMAT PARQUET, COMPRESSION ZSTD)")
            con.execute(f"DROP TABLE {table}")
            con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{parquet}')")
        guessed = dict(con.execute("SELECT column_name, data_type FROM duckdb_columns() "
                                   "WHERE schema_name = 'mimiciv_icu' AND table_name = 'chartevents'").fetchall())
        assert (guessed["stay_id"], guessed["value"], guessed["valuenum"]) == ("BIGINT", "VARCHAR", "DOUBLE")
    finally:
        con.close()
    env = {**os.environ, "CLINBENCH_CACHE": str(tmp_path / "cache"), "COLUMNS": "300"}
    done = subprocess.run([sys.executable, "-m", "clinbench", "run", "--db", str(db), "--out", str(tmp_path / "c"),
                           "--tasks", "mimic-sofa-24h,mimic-sofa-24h-raw", "--agent", "reference"],
                          env=env, capture_output=True, text=True, timeout=300)
    # before: "holds no data for mimic-sofa-24h" (no dataset found among its tables); with some tables views,
    # the build failed on a view (no storage layout), then the views counted as empty sources
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert sorted((r.task, r.reward) for r in Store.open(tmp_path / "c").records().values()) == [
        ("mimic-sofa-24h", 1.0), ("mimic-sofa-24h-raw", 1.0)]
    # the reference is the one the declared types give (INTEGER ids, not the guessed BIGINT)
    build_concepts(typed, only=["sofa-24h"])
    guessed_con = duckdb.connect(str(db), read_only=True)
    try:
        guessed_con.execute(f"ATTACH '{typed}' AS typed (READ_ONLY)")
        assert table_mismatch(guessed_con, "mimiciv_derived.target_sofa_24h", "typed.mimiciv_derived.target_sofa_24h") is None
    finally:
        guessed_con.close()

    workspace = tmp_path / "ws"
    made = subprocess.run([sys.executable, "-m", "clinbench", "workspace", "mimic-sofa-24h-raw", "--db", str(db),
                           "--out", str(workspace)], env=env, capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    masked = duckdb.connect(str(workspace / "database.duckdb"), read_only=True)
    source = duckdb.connect(str(db), read_only=True)
    try:  # the agent gets the rows themselves: a view over the user's files would be unreadable in its sandbox
        for table in ("mimiciv_icu.chartevents", "mimiciv_hosp.labevents", "mimiciv_icu.icustays"):
            schema, name = table.split(".")
            assert masked.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = ? AND table_name = ?",
                                  [schema, name]).fetchone() == (1,)
            assert masked.execute(f"SELECT count(*) FROM {table}").fetchone() == \
                source.execute(f"SELECT count(*) FROM {table}").fetchone()
        assert masked.execute("SELECT count(*) FROM duckdb_views() WHERE NOT internal").fetchone() == (0,)
    finally:
        masked.close()
        source.close()
