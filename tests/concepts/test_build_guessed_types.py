"""A database whose loader guessed column types from the rows, as M4's `m4 init` does (hannesill/m4 0.5.3,
src/m4/data_io.py: `read_csv_auto(..., sample_size=-1, nullstr=[...])` into Parquet, one view per file). On a
chartevents whose rows hold no text value (the MIMIC-IV demo rebuilt from its MEDS export is such a file) it
makes ``value`` DOUBLE, and SQL comparing it with text fails. The failure names the data, not the SQL."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from clinbench.duck import duckdb
from clinbench.ehr.synth import synth_mimic_iv


def _m4_layout_chartevents(db: Path, folder: Path) -> None:
    """chartevents without its text values, written to CSV and read back as `m4 init` reads a file; every
    table's Parquet file in M4's folder layout (``folder``/hosp, ``folder``/icu)."""
    csv, parquet = folder / "chartevents.csv.gz", folder / "icu" / "chartevents.parquet"
    con = duckdb.connect(str(db))
    try:
        for schema, table in con.execute("SELECT schema_name, table_name FROM duckdb_tables() "
                                         "WHERE schema_name IN ('mimiciv_hosp', 'mimiciv_icu')").fetchall():
            (folder / schema.removeprefix("mimiciv_")).mkdir(exist_ok=True)
            if table != "chartevents":
                con.execute(f"COPY {schema}.{table} TO '{folder / schema.removeprefix('mimiciv_') / table}.parquet'")
        con.execute(f"COPY (SELECT * FROM mimiciv_icu.chartevents WHERE TRY_CAST(value AS DOUBLE) IS NOT NULL "
                    f"OR value IS NULL) TO '{csv}' (HEADER)")
        con.execute(f"COPY (SELECT * FROM read_csv_auto('{csv}', sample_size=-1, auto_detect=true, "
                    f"nullstr=['', 'NULL', 'NA', 'N/A', '___'], ignore_errors=false)) "
                    f"TO '{parquet}' (FORMAT PARQUET, COMPRESSION ZSTD)")
        con.execute("DROP TABLE mimiciv_icu.chartevents")
        con.execute(f"CREATE VIEW mimiciv_icu.chartevents AS SELECT * FROM read_parquet('{parquet}')")
        assert con.execute("SELECT data_type FROM duckdb_columns() WHERE table_name = 'chartevents' "
                           "AND column_name = 'value'").fetchone() == ("DOUBLE",)
    finally:
        con.close()


def test_a_column_typed_by_guess_is_named_with_the_load_that_fixes_it(tmp_path):
    db, m4_data = tmp_path / "m4.duckdb", tmp_path / "parquet"
    synth_mimic_iv(db, patients=30, seed=0)
    m4_data.mkdir()
    _m4_layout_chartevents(db, m4_data)
    env = {**os.environ, "CLINBENCH_CACHE": str(tmp_path / "cache"), "COLUMNS": "300"}
    done = subprocess.run([sys.executable, "-m", "clinbench", "concepts", "build", str(db)], env=env,
                          capture_output=True, text=True, timeout=300)
    # before: "gcs.sql:19: Conversion Error: Could not convert string 'No Response-ETT' to DOUBLE; ... fix the SQL"
    assert done.returncode != 0 and "Traceback" not in done.stderr
    error = done.stderr.strip().splitlines()[-1]
    assert error.startswith("error: ") and "Could not convert string" in error
    assert "mimiciv_icu.chartevents.value DOUBLE (declared: VARCHAR)" in error
    assert "`clinbench data load DATASET DIR --out DB`" in error and "fix the SQL" not in error
    # what it says works: M4's Parquet folder loaded with the declared types builds
    fixed = tmp_path / "fixed.duckdb"
    load = subprocess.run([sys.executable, "-m", "clinbench", "data", "load", "mimic-iv", str(m4_data), "--out", str(fixed)],
                          env=env, capture_output=True, text=True, timeout=300)
    assert load.returncode == 0, load.stderr
    rebuilt = subprocess.run([sys.executable, "-m", "clinbench", "concepts", "build", str(fixed)], env=env,
                             capture_output=True, text=True, timeout=300)
    assert rebuilt.returncode == 0, rebuilt.stderr
    info = subprocess.run([sys.executable, "-m", "clinbench", "data", "info", str(db)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert info.returncode == 0 and "mimiciv_icu.chartevents.value DOUBLE (declared: VARCHAR)" in info.stdout


def test_data_info_lists_a_few_columns_of_another_kind_and_counts_the_rest(tmp_path):
    from clinbench.ehr.info import database_info

    db = tmp_path / "m4.duckdb"
    synth_mimic_iv(db, patients=5, seed=1)
    con = duckdb.connect(str(db))
    try:  # eight columns a guessing loader typed otherwise (all-null columns come out VARCHAR)
        for column in ("value", "valuenum", "valueuom", "warning"):
            kind = "DOUBLE" if column in ("value", "valueuom") else "VARCHAR"
            con.execute(f"ALTER TABLE mimiciv_icu.chartevents ALTER {column} TYPE {kind} USING NULL")
        for column in ("amount", "rate", "patientweight", "totalamount"):
            con.execute(f"ALTER TABLE mimiciv_icu.inputevents ALTER {column} TYPE VARCHAR")
    finally:
        con.close()
    caveat = next(c for c in database_info(db).caveats if c.startswith("columns hold another kind"))
    assert "mimiciv_icu.chartevents.value DOUBLE (declared: VARCHAR)" in caveat
    assert caveat.count("(declared: ") == 6 and ", and 2 more;" in caveat
