"""Atomic writes: the destination holds the old content or the new, and no temp file is left."""

from __future__ import annotations

import duckdb
import pytest

from clinbench.atomic import atomic_database, atomic_path, write_json_atomic, write_text_atomic


def test_write_text_replaces_the_file_and_leaves_nothing_else(tmp_path):
    out = tmp_path / "sub" / "report.md"
    write_text_atomic(out, "old\n")
    write_text_atomic(out, "né\n")
    assert out.read_bytes() == "né\n".encode("utf-8")
    assert sorted(p.name for p in out.parent.iterdir()) == ["report.md"]


def test_write_json_passes_the_formatting_through(tmp_path):
    out = write_json_atomic(tmp_path / "a.json", {"b": 1, "a": [2]}, indent=1, sort_keys=True)
    assert out.read_text(encoding="utf-8") == '{\n "a": [\n  2\n ],\n "b": 1\n}'


@pytest.mark.parametrize("error", [ValueError, KeyboardInterrupt])
def test_a_failed_write_keeps_the_old_file_and_removes_the_temp(tmp_path, error):
    out = tmp_path / "out.csv"
    out.write_text("old\n")
    with pytest.raises(error):
        with atomic_path(out) as tmp:
            tmp.write_text("half")
            raise error()
    assert out.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_temp_names_differ_between_writers_and_keep_the_extension(tmp_path):
    with atomic_path(tmp_path / "x.png") as a, atomic_path(tmp_path / "x.png") as b:
        assert a != b and a.parent == b.parent == tmp_path and a.suffix == ".png"
        a.write_bytes(b"a")
        b.write_bytes(b"b")
    # b closes first, then a: each rename is whole, so the last writer to finish wins
    assert (tmp_path / "x.png").read_bytes() == b"a"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.png"]


def test_database_replaces_the_old_one_and_drops_its_stale_wal(tmp_path):
    out = tmp_path / "db.duckdb"
    with atomic_database(out) as con:
        con.execute("CREATE TABLE t AS SELECT 1 AS x")
    (tmp_path / "db.duckdb.wal").write_bytes(b"stale log of an earlier database")
    with atomic_database(out) as con:
        con.execute("CREATE TABLE t AS SELECT 2 AS x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db.duckdb"]
    with duckdb.connect(str(out), read_only=True) as con:
        assert con.execute("SELECT x FROM t").fetchall() == [(2,)]


def test_a_failed_database_build_keeps_the_old_database(tmp_path):
    out = tmp_path / "db.duckdb"
    with atomic_database(out) as con:
        con.execute("CREATE TABLE t AS SELECT 1 AS x")
    with pytest.raises(KeyboardInterrupt):
        with atomic_database(out) as con:
            con.execute("CREATE TABLE u AS SELECT range AS x FROM range(1000)")
            raise KeyboardInterrupt
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db.duckdb"]
    with duckdb.connect(str(out), read_only=True) as con:
        assert con.execute("SELECT table_name FROM duckdb_tables()").fetchall() == [("t",)]
