"""Raw layers: kept by data synth/load, used for masked databases only while the raw tables are
unchanged, and never a way for a reference, dropped concept or other table to reach an agent."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from clinbench.derive import cache_files, raw_layer
from clinbench.derive.catalogue import load_catalogue
from clinbench.derive.workspace import cache_dir, prepare_database, prepare_workspace
from clinbench.ehr.synth import synth_eicu, synth_mimic_iv

from derive_fixtures import MARKER, drop_marker


@pytest.fixture(scope="module")
def synth_with_layer(tmp_path_factory) -> tuple[Path, Path]:
    """(a 40-patient synthetic MIMIC-IV written with its raw layer kept, the cache folder holding the layer)."""
    root = tmp_path_factory.mktemp("raw-layer")
    mp = pytest.MonkeyPatch()
    mp.setenv("CLINBENCH_CACHE", str(root / "cache"))
    try:
        db = synth_mimic_iv(root / "mimic.duckdb", patients=40, seed=3, after_raw=raw_layer.keep)
    finally:
        mp.undo()
    return db, root / "cache"


def add_concepts_and_references(db: Path) -> None:
    """What a concepts build adds: a concept, the concepts standard tasks drop (each with a marker)
    and every reference (with the reference marker), stored uncompressed so a byte scan of the
    source finds each marker (the positive control)."""
    con = duckdb.connect(str(db))
    con.execute("PRAGMA force_compression='uncompressed'")
    con.execute("CREATE SCHEMA IF NOT EXISTS mimiciv_derived")
    con.execute("CREATE TABLE mimiciv_derived.vitalsign AS SELECT stay_id, charttime, valuenum AS heart_rate "
                "FROM mimiciv_icu.chartevents WHERE itemid = 220045")
    cat = load_catalogue().values()
    for name in sorted({d for t in cat for d in t.drop}):
        con.execute(f"CREATE TABLE mimiciv_derived.{name} AS SELECT 1 AS stay_id, '{drop_marker(name)}' AS answer")
    for target in sorted({t.target_table for t in cat if t.database == "mimic-iv"}):
        con.execute(f"CREATE OR REPLACE TABLE {target} AS SELECT 1 AS stay_id, '{MARKER}' AS note")
    con.execute("CHECKPOINT")
    con.close()


def use_layer_cache(monkeypatch, tmp_path, layer_cache: Path) -> None:
    """A fresh workspace cache holding only (a sealed copy of) the kept raw layer."""
    shutil.copytree(layer_cache / "workspaces" / "raw", tmp_path / "cache" / "workspaces" / "raw")
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    for layer in (cache_dir() / "raw").glob("*.duckdb"):
        cache_files.seal(layer)  # the copy is a new file: seal it as keep() sealed the original


def contents(db: Path) -> dict[str, tuple]:
    """Every table of ``db`` -> (columns, row count, an order-independent hash of its rows)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        out = {}
        for schema, table in con.execute("SELECT schema_name, table_name FROM duckdb_tables() ORDER BY ALL").fetchall():
            cols = con.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND "
                               "table_name = ? ORDER BY column_index", [schema, table]).fetchall()
            rows = con.execute(f'SELECT count(*), sum(hash(t)) FROM "{schema}"."{table}" AS t').fetchone()
            out[f"{schema}.{table}"] = (tuple(cols), rows)
        return out
    finally:
        con.close()


def test_synth_keeps_a_read_only_layer_of_raw_tables_only(synth_with_layer):
    db, layer_cache = synth_with_layer
    [layer] = (layer_cache / "workspaces" / "raw").glob("*.duckdb")
    assert layer.stat().st_mode & 0o777 == 0o444
    held = contents(layer)
    source = contents(db)
    assert "clinbench_meta.synthesis" in source and "clinbench_meta.synthesis" not in held  # written after the copy
    assert held == {k: v for k, v in source.items() if k.startswith(("mimiciv_hosp.", "mimiciv_icu."))}


def test_synth_without_the_flag_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    synth_eicu(tmp_path / "eicu.duckdb", patients=10, seed=0)
    assert not (tmp_path / "cache").exists()


@pytest.mark.slow
def test_no_layer_is_kept_when_it_would_leave_the_disk_short(tmp_path, monkeypatch):
    from collections import namedtuple

    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(raw_layer.shutil, "disk_usage", lambda _p: usage(10**9, 10**9 - 10**5, 10**5))  # 100 kB free
    synth_mimic_iv(tmp_path / "s.duckdb", patients=5, seed=1, after_raw=raw_layer.keep)
    assert (tmp_path / "s.duckdb").is_file()
    assert not list((tmp_path / "cache").rglob("*.duckdb"))


def test_keep_refuses_a_file_with_other_tables(tmp_path, monkeypatch):
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    con = duckdb.connect(str(tmp_path / "x.duckdb"))
    con.execute("CREATE SCHEMA eicu_crd; CREATE TABLE eicu_crd.patient AS SELECT 1 AS patientunitstayid")
    con.execute("CREATE TABLE main.notes AS SELECT 'x' AS n")
    assert raw_layer.keep(con, "eicu") is None
    con.execute("DROP TABLE main.notes")  # gone from the catalogue, but its pages may still be in the file
    assert raw_layer.keep(con, "eicu") is not None  # the caller's promise: call it on a brand-new file
    con.close()


@pytest.mark.slow
def test_masked_databases_from_the_layer_hold_what_they_held_without_it(synth_with_layer, tmp_path, monkeypatch):
    db, layer_cache = synth_with_layer
    source = tmp_path / "source.duckdb"
    shutil.copyfile(db, source)  # a byte copy finds the same layer
    add_concepts_and_references(source)
    raw = source.read_bytes()
    assert MARKER.encode() in raw and drop_marker("first_day_sofa").encode() in raw  # positive controls
    tasks = ["mimic-sofa-24h", "mimic-kdigo-48h", "mimic-sofa-24h-raw"]

    without = {t: contents(prepare_database(load_catalogue()[t], "native", source).path) for t in tasks}
    use_layer_cache(monkeypatch, tmp_path / "with", layer_cache)
    [layer] = (cache_dir() / "raw").glob("*.duckdb")
    assert raw_layer.find(source, "mimic-iv")[0] == layer
    for task in tasks:
        spec = load_catalogue()[task]
        ws = prepare_workspace(task, "no-skill", "native", source, tmp_path / f"ws-{task}")
        db_file = ws / "database.duckdb"
        assert contents(db_file) == without[task], task
        data = db_file.read_bytes()
        forbidden = [MARKER, "target_", "clinbench_meta", *(drop_marker(d) for d in spec.drop)]
        assert [f for f in forbidden if f.encode() in data] == [], task
    # a raw task's masked database is the layer itself (a hard link: no copy, no re-encoding)
    raw_db = prepare_database(load_catalogue()["mimic-sofa-24h-raw"], "native", source).path
    assert raw_db.stat().st_ino == layer.stat().st_ino


@pytest.mark.parametrize("change", [
    "DELETE FROM mimiciv_icu.chartevents WHERE rowid = 3",
    "UPDATE mimiciv_hosp.labevents SET valuenum = -1 WHERE rowid = 2",
    "INSERT INTO mimiciv_hosp.patients (subject_id, gender, anchor_age, anchor_year) VALUES (99999999, 'F', 50, 2150)",
    "ALTER TABLE mimiciv_hosp.patients ADD COLUMN extra INTEGER",
])
@pytest.mark.slow
def test_a_changed_raw_table_is_never_served_from_the_layer(synth_with_layer, tmp_path, monkeypatch, change):
    db, layer_cache = synth_with_layer
    source = tmp_path / "source.duckdb"
    shutil.copyfile(db, source)
    con = duckdb.connect(str(source))
    con.execute(change)
    con.execute("CHECKPOINT")
    con.close()
    use_layer_cache(monkeypatch, tmp_path, layer_cache)
    assert raw_layer.find(source, "mimic-iv") is None
    masked = prepare_database(load_catalogue()["mimic-sofa-24h-raw"], "native", source).path
    assert contents(masked) == {k: v for k, v in contents(source).items() if not k.startswith("clinbench_meta.")}


@pytest.mark.slow
def test_only_the_newest_layers_of_a_dataset_stay(tmp_path, monkeypatch):
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    kept = []
    for i in range(raw_layer.KEPT_PER_DATASET + 2):
        con = duckdb.connect(str(tmp_path / f"e{i}.duckdb"))
        con.execute(f"CREATE SCHEMA eicu_crd; CREATE TABLE eicu_crd.patient AS SELECT range AS id FROM range({i + 1})")
        kept.append(raw_layer.keep(con, "eicu"))
        con.close()
    assert len(set(kept)) == len(kept)  # different contents, different layers
    assert sorted((cache_dir() / "raw").glob("eicu.*.duckdb")) == sorted(kept[-raw_layer.KEPT_PER_DATASET:])
    assert raw_layer.find(tmp_path / "e0.duckdb", "eicu") is None
    assert raw_layer.find(tmp_path / f"e{len(kept) - 1}.duckdb", "eicu")[0] == kept[-1]


def test_a_raw_block_with_other_contents_is_never_served_from_the_layer(synth_with_layer, tmp_path, monkeypatch):
    """Same catalogue and storage metadata, one block's contents changed (its checksum): not the layer.
    DuckDB's own error names the offset, so the layout the check reads is the one DuckDB writes."""
    db, layer_cache = synth_with_layer
    source = tmp_path / "source.duckdb"
    shutil.copyfile(db, source)
    use_layer_cache(monkeypatch, tmp_path, layer_cache)
    assert raw_layer.find(source, "mimic-iv") is not None
    con = duckdb.connect(str(source), read_only=True)
    block = con.execute("SELECT min(block_id) FROM pragma_storage_info('mimiciv_icu.chartevents') "
                        "WHERE block_id >= 0").fetchone()[0]
    offset = raw_layer.block_offset(block, con.execute("SELECT block_size FROM pragma_database_size()").fetchone()[0])
    con.close()
    with source.open("r+b") as fh:
        fh.seek(offset)
        stored = fh.read(raw_layer.CHECKSUM_BYTES)
        fh.seek(offset)
        fh.write(bytes(b ^ 0xFF for b in stored))
    assert raw_layer.find(source, "mimic-iv") is None
    con = duckdb.connect(str(source), read_only=True)
    with pytest.raises(duckdb.Error, match=f"checksum.*location {offset}"):
        con.execute("SELECT sum(hash(c)) FROM mimiciv_icu.chartevents AS c").fetchall()
    con.close()


@pytest.mark.slow
def test_a_cache_that_cannot_be_written_never_fails_the_synthesis(tmp_path, monkeypatch):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("x")
    monkeypatch.setenv("CLINBENCH_CACHE", str(blocked))
    db = synth_eicu(tmp_path / "eicu.duckdb", patients=10, seed=0, after_raw=raw_layer.keep)
    assert "eicu_crd.patient" in contents(db)


@pytest.mark.slow
def test_a_database_from_elsewhere_gets_its_raw_layer_on_first_use(source_db, tmp_path):
    """No `data load` layer: the first masked database writes the raw tables into a new file first and
    keeps that as the layer; a raw task then links to it, and rebuilding concepts keeps it."""
    source = tmp_path / "source.duckdb"
    shutil.copyfile(source_db, source)
    assert raw_layer.find(source, "mimic-iv") is None
    prepare_database(load_catalogue()["mimic-sofa-24h"], "native", source)
    layer, held = raw_layer.find(source, "mimic-iv")
    assert held == {k for k in contents(source) if k.startswith(("mimiciv_hosp.", "mimiciv_icu."))}
    assert contents(layer) == {k: v for k, v in contents(source).items() if k in held}  # raw tables and nothing else
    data = layer.read_bytes()
    assert [m for m in (MARKER, "target_", "mimiciv_derived", "eicu_crd", drop_marker("sofa")) if m.encode() in data] == []
    raw_db = prepare_database(load_catalogue()["mimic-sofa-24h-raw"], "native", source).path
    assert raw_db.stat().st_ino == layer.stat().st_ino
    con = duckdb.connect(str(source))  # a concepts rebuild: a new source fingerprint, the same raw tables
    con.execute("CREATE TABLE mimiciv_derived.extra_concept AS SELECT 1 AS stay_id")
    con.close()
    rebuilt = prepare_database(load_catalogue()["mimic-sofa-24h-raw"], "native", source).path
    assert rebuilt != raw_db and rebuilt.stat().st_ino == layer.stat().st_ino
    assert "mimiciv_derived.extra_concept" in contents(prepare_database(load_catalogue()["mimic-sofa-24h"], "native",
                                                                        source).path)


@pytest.mark.slow
def test_concurrent_first_uses_write_each_layer_once(source_db, tmp_path):
    """Standard and raw tasks prepared at once on a new source: one raw layer, one shared layer, and
    every raw task's database is that raw layer."""
    script = ("import sys\nfrom clinbench.derive.workspace import prepare_workspace\n"
              "prepare_workspace(sys.argv[3], 'no-skill', 'native', sys.argv[1], sys.argv[2], shared=True)\n")
    tasks = ["mimic-sofa-24h", "mimic-kdigo-48h", "mimic-sofa-24h-raw", "mimic-meld-24h-raw"]
    procs = [subprocess.Popen([sys.executable, "-c", script, str(source_db), str(tmp_path / task), task])
             for task in tasks]
    assert [p.wait() for p in procs] == [0] * len(tasks)
    [layer] = (cache_dir() / "raw").glob("mimic-iv.*.duckdb")
    assert len(list(cache_dir().glob("mimic-iv.standard.native.shared.*.duckdb"))) == 1
    for task in tasks[2:]:
        assert (tmp_path / task / "database.duckdb").stat().st_ino == layer.stat().st_ino
    for task in tasks[:2]:
        assert "mimiciv_derived.vitalsign" in contents(tmp_path / task / "database.duckdb")


@pytest.mark.parametrize(("failure", "kept"), [(duckdb.IOException, "none"), (duckdb.InterruptException, "raised")])
def test_a_failed_copy_goes_on_without_a_layer_but_ctrl_c_in_its_queries_stops_the_load(failure, kept, tmp_path,
                                                                                        monkeypatch):
    # before: Ctrl-C landing in the layer's CHECKPOINT or signature query (DuckDB's InterruptException, a
    # duckdb.Error) was taken for a cache failure: `data synth` ignored it and finished (exit 0)
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    con = duckdb.connect(str(tmp_path / "new.duckdb"))
    con.execute("CREATE SCHEMA mimiciv_hosp; CREATE TABLE mimiciv_hosp.patients AS SELECT 1 AS subject_id")

    def fail(*_args):
        raise failure("stopped")

    monkeypatch.setattr(raw_layer, "signature", fail)
    if kept == "none":
        assert raw_layer.keep(con, "mimic-iv") is None
    else:
        with pytest.raises(duckdb.InterruptException):
            raw_layer.keep(con, "mimic-iv")
    con.close()
