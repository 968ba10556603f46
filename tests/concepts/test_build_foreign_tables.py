"""A database that already holds derived tables clinbench did not build (mimic-code's own build scripts, M4's
`m4 init-derived`, a user's tables): no build replaces or drops them unless asked (`--replace-derived`).

Before, `clinbench run` on a database with mimic-code's 65 derived tables silently dropped its arb and
code_status and replaced the rest with the m4bench profile's (M4's older definitions: a fractional age)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from clinbench.duck import duckdb
from clinbench.ehr.synth import synth_mimic_iv
from tests.concepts.derived_digest import derived_tables


def _cli(*args: str, cache) -> subprocess.CompletedProcess:
    env = {**os.environ, "CLINBENCH_CACHE": str(cache), "COLUMNS": "400"}
    return subprocess.run([sys.executable, "-m", "clinbench", *args], env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture()
def theirs(tmp_path):
    """30 synthetic patients and two derived tables made by another tool: an age table and arb (which
    mimic-code builds and the m4bench profile does not)."""
    db = tmp_path / "theirs.duckdb"
    synth_mimic_iv(db, patients=30, seed=0)
    con = duckdb.connect(str(db))
    try:
        con.execute("CREATE SCHEMA mimiciv_derived")
        con.execute("CREATE TABLE mimiciv_derived.age AS SELECT subject_id, hadm_id, 42 AS age FROM mimiciv_hosp.admissions")
        con.execute("CREATE TABLE mimiciv_derived.arb AS SELECT 1 AS subject_id")
    finally:
        con.close()
    return db


def test_a_build_or_a_run_refuses_to_replace_tables_it_did_not_build_and_writes_nothing(theirs, tmp_path):
    before = derived_tables(theirs)
    for args in (("concepts", "build", str(theirs)),
                 ("run", "--db", str(theirs), "--out", str(tmp_path / "c"), "--tasks", "mimic-sofa-24h",
                  "--agent", "reference")):
        done = _cli(*args, cache=tmp_path / "cache")
        assert done.returncode != 0 and "Traceback" not in done.stderr
        error = done.stderr.strip().splitlines()[-1]
        assert error.startswith(f"error: {theirs} holds ") and "clinbench did not build" in error
        assert "mimiciv_derived.arb" in error and "nothing was written" in error
        assert f"`clinbench concepts build {theirs} --replace-derived`" in error
        assert derived_tables(theirs) == before
    con = duckdb.connect(str(theirs), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'clinbench_meta' "
                           "AND table_name = 'concept_builds'").fetchone() == (0,)  # no bookkeeping begun
    finally:
        con.close()


def test_replace_derived_replaces_them_once_and_later_builds_need_no_flag(theirs, tmp_path):
    done = _cli("concepts", "build", str(theirs), "--replace-derived", cache=tmp_path / "cache")
    assert done.returncode == 0, done.stderr
    after = derived_tables(theirs)
    assert "mimiciv_derived.arb" not in after  # the m4bench profile builds no arb
    con = duckdb.connect(str(theirs), read_only=True)
    try:  # the profile's age, not the 42 the other tool wrote
        assert con.execute("SELECT count(*) FROM mimiciv_derived.age WHERE age = 42").fetchone()[0] < \
            con.execute("SELECT count(*) FROM mimiciv_derived.age").fetchone()[0]
    finally:
        con.close()
    again = _cli("concepts", "build", str(theirs), cache=tmp_path / "cache")
    assert again.returncode == 0 and derived_tables(theirs) == after, again.stderr
