"""`clinbench tasks verify` fails closed: a changed source table, a changed SQL file, a missing manifest."""

from __future__ import annotations

import shutil

import duckdb
import pytest
from typer.testing import CliRunner

from clinbench.cli import app

MELD = "mimiciv_derived.target_meld_24h"


@pytest.fixture(scope="module")
def built_db(tmp_path_factory):
    from clinbench.concepts.build import build_concepts
    from clinbench.ehr.synth import synth_mimic_iv

    path = tmp_path_factory.mktemp("manifest") / "synth.duckdb"
    synth_mimic_iv(path, patients=20, seed=1)
    build_concepts(path, only=["meld-24h"])
    return path


def _verify(db):
    return CliRunner().invoke(app, ["tasks", "verify", "--db", str(db), "--tasks", "mimic-meld-24h"])


def test_fresh_build_verifies_and_manifest_holds_the_build_facts(built_db):
    res = _verify(built_db)
    assert res.exit_code == 0, res.output
    with duckdb.connect(str(built_db), read_only=True) as con:
        row = con.execute("SELECT rows, duckdb_version, source_tables, length(sql_sha256) FROM "
                          "clinbench_meta.reference_manifest WHERE name = ?", [MELD]).fetchone()
        rows = con.execute(f"SELECT count(*) FROM {MELD}").fetchone()[0]
    assert row[0] == rows and row[1] == duckdb.__version__ and row[3] == 64
    assert "mimiciv_hosp.labevents" in row[2].split(",")


def test_changed_source_table_is_caught(built_db, tmp_path):
    db = tmp_path / "changed.duckdb"
    shutil.copy(built_db, db)
    assert _verify(db).exit_code == 0  # its source fingerprints are now cached for this file
    with duckdb.connect(str(db)) as con:  # in place: same row count, one value changed
        con.execute("UPDATE mimiciv_hosp.labevents SET valuenum = valuenum + 1 WHERE labevent_id = "
                    "(SELECT min(labevent_id) FROM mimiciv_hosp.labevents)")
    res = _verify(db)
    assert res.exit_code == 1
    assert f"{MELD}: stale: its source data changed since it was built (mimiciv_hosp.labevents)" in " ".join(res.output.split())


def test_changed_sql_file_is_caught(built_db, tmp_path, monkeypatch):
    import clinbench.concepts.catalog as catalog

    tree = tmp_path / "concepts"
    shutil.copytree(catalog.CONCEPTS_DIR, tree, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    meld = tree / "mimic_iv" / "firstday" / "first_day_lab.sql"  # meld-24h reads first_day_lab
    meld.write_text(meld.read_text(encoding="utf-8") + "\n-- edited\n", encoding="utf-8")
    monkeypatch.setattr(catalog, "CONCEPTS_DIR", tree)
    res = _verify(built_db)
    assert res.exit_code == 1
    assert "stale: the SQL of meld-24h or of a concept it reads changed" in " ".join(res.output.split())


def test_hand_made_reference_without_manifest_fails_closed(tmp_path):
    from campaign_fixtures import build_tiny_db

    db = build_tiny_db(tmp_path / "hand.duckdb", manifest=False)
    res = CliRunner().invoke(app, ["tasks", "verify", "--db", str(db), "--tasks", "mimic-meld-24h"])
    assert res.exit_code == 1 and "has no manifest" in res.output
