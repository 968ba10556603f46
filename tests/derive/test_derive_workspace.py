"""Workspaces: what an agent sees, caching, and that no reference byte leaks in."""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from clinbench.agents import sandbox
from clinbench.derive import workspace
from clinbench.derive.catalogue import load_catalogue
from clinbench.derive.workspace import cache_dir, prepare_workspace, read_only_files
from clinbench.errors import DataError, TaskError

from derive_fixtures import MARKER, drop_marker


def cached(pattern: str) -> list:
    """The cached task databases matching ``pattern`` (not the shared layer they are copied from)."""
    return sorted(p for p in cache_dir().glob(pattern) if ".shared." not in p.name)


def tables(db) -> set[str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {f"{s}.{t}" for s, t in con.execute("SELECT schema_name, table_name FROM duckdb_tables()").fetchall()}
    finally:
        con.close()


@pytest.mark.slow
def test_standard_keeps_derived_minus_targets(source_db, tmp_path):
    ws = prepare_workspace("mimic-sofa-24h", "no-skill", "native", source_db, tmp_path / "ws")
    names = tables(ws / "database.duckdb")
    assert "mimiciv_derived.vitalsign" in names
    assert "mimiciv_derived.first_day_sofa" not in names
    assert not any(".target_" in n or ".variant_" in n for n in names)
    assert "mimiciv_icu.chartevents" in names and "mimiciv_hosp.labevents" in names
    assert not any(n.startswith("eicu") for n in names)
    prompt = (ws / "prompt.md").read_text()
    assert "output.csv" in prompt and "{output_path}" not in prompt
    assert not (ws / "skills").exists()


def test_raw_has_no_derived_schema(source_db, tmp_path):
    ws = prepare_workspace("mimic-sofa-24h-raw", "no-skill", "native", source_db, tmp_path / "ws")
    names = tables(ws / "database.duckdb")
    assert not any(n.startswith("mimiciv_derived.") for n in names)
    assert "mimiciv_icu.icustays" in names


def test_eicu_only_eicu_crd(source_db, tmp_path):
    ws = prepare_workspace("eicu-gcs", "no-skill", "native", source_db, tmp_path / "ws")
    names = tables(ws / "database.duckdb")
    assert names and all(n.startswith("eicu_crd.") for n in names)


def test_rows_copied_unchanged(source_db, tmp_path):
    ws = prepare_workspace("mimic-kdigo-48h-raw", "no-skill", "native", source_db, tmp_path / "ws")
    con = duckdb.connect(str(ws / "database.duckdb"), read_only=True)
    assert con.execute("SELECT sum(valuenum) FROM mimiciv_icu.chartevents").fetchone()[0] == 208
    con.close()


@pytest.mark.slow
def test_runs_share_the_read_only_cached_database_without_a_copy(source_db, tmp_path):
    a = prepare_workspace("mimic-meld-24h", "no-skill", "native", source_db, tmp_path / "a", shared=True)
    b = prepare_workspace("mimic-meld-24h", "no-skill", "native", source_db, tmp_path / "b", shared=True)
    [db] = cached("mimic-iv.standard.native.*.duckdb")
    assert (a / "database.duckdb").stat().st_ino == (b / "database.duckdb").stat().st_ino == db.stat().st_ino
    assert stat.S_IMODE(db.stat().st_mode) == 0o444
    assert read_only_files(a) == [a / "database.duckdb"]  # what a sandbox binds read-only
    prompt = (a / "prompt.md").read_text()
    assert "read-only" in prompt and "ATTACH 'scratch.duckdb' AS scratch (READ_WRITE)" in prompt


@pytest.mark.slow
def test_standard_tasks_start_from_one_shared_layer_without_any_dropped_concept(source_db, tmp_path):
    sofa = prepare_workspace("mimic-sofa-24h", "no-skill", "native", source_db, tmp_path / "sofa")
    meld = prepare_workspace("mimic-meld-24h", "no-skill", "native", source_db, tmp_path / "meld")
    [shared] = cache_dir().glob("mimic-iv.standard.native.shared.*.duckdb")
    droppable = {f"mimiciv_derived.{d}" for t in load_catalogue().values() if t.mode == "standard" for d in t.drop}
    assert "mimiciv_icu.chartevents" in tables(shared) and not tables(shared) & droppable
    # each task's database adds back the concepts other tasks drop and it keeps
    assert "mimiciv_derived.meld" in tables(sofa / "database.duckdb") - tables(meld / "database.duckdb")
    assert "mimiciv_derived.first_day_sofa" in tables(meld / "database.duckdb") - tables(sofa / "database.duckdb")
    assert shared.stat().st_ino not in {(w / "database.duckdb").stat().st_ino for w in (sofa, meld)}


def test_a_workspace_on_another_filesystem_gets_a_read_only_copy(source_db, tmp_path, monkeypatch):
    link = os.link

    def cross_device(src, dst):
        if Path(dst).name == "database.duckdb":
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        link(src, dst)

    monkeypatch.setattr(workspace.os, "link", cross_device)
    ws = prepare_workspace("mimic-meld-24h-raw", "no-skill", "native", source_db, tmp_path / "ws", shared=True)
    [cached] = cache_dir().glob("mimic-iv.raw.native.*.duckdb")
    db = ws / "database.duckdb"
    assert db.stat().st_ino != cached.stat().st_ino and db.read_bytes() == cached.read_bytes()
    assert stat.S_IMODE(db.stat().st_mode) == 0o444


@pytest.mark.slow
def test_a_cached_database_written_by_an_unsandboxed_process_is_rebuilt(source_db, tmp_path):
    first = prepare_workspace("mimic-meld-24h-raw", "no-skill", "native", source_db, tmp_path / "a", shared=True)
    db = first / "database.duckdb"
    os.chmod(db, 0o644)  # root outside a sandbox can do this to the shared inode
    con = duckdb.connect(str(db))
    con.execute("DELETE FROM mimiciv_icu.chartevents")
    con.close()
    second = prepare_workspace("mimic-meld-24h-raw", "no-skill", "native", source_db, tmp_path / "b")
    assert (second / "database.duckdb").stat().st_ino != db.stat().st_ino
    con = duckdb.connect(str(second / "database.duckdb"), read_only=True)
    assert con.execute("SELECT sum(valuenum) FROM mimiciv_icu.chartevents").fetchone()[0] == 208
    con.close()


@pytest.mark.slow
def test_concurrent_processes_build_the_cached_database_once(source_db, tmp_path):
    script = ("import sys\nfrom clinbench.derive.workspace import prepare_workspace\n"
              "prepare_workspace('mimic-sofa-24h-raw', 'no-skill', 'native', sys.argv[1], sys.argv[2], shared=True)\n")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(source_db), str(tmp_path / f"w{i}")])
             for i in range(3)]
    assert [p.wait() for p in procs] == [0, 0, 0]
    inodes = {(tmp_path / f"w{i}" / "database.duckdb").stat().st_ino for i in range(3)}
    assert len(inodes) == 1 and len(list(cache_dir().glob("mimic-iv.raw.native.*.duckdb"))) == 1


PROBE = r"""
import duckdb, json, os
seen = {}
for what, act in [("open_rw", lambda: duckdb.connect("database.duckdb")),
                  ("chmod", lambda: os.chmod("database.duckdb", 0o644)),
                  ("unlink", lambda: os.unlink("database.duckdb")),
                  ("write", lambda: open("database.duckdb", "r+b").write(b"x"))]:
    try:
        act()
        seen[what] = "done"
    except Exception as exc:
        seen[what] = type(exc).__name__
con = duckdb.connect("database.duckdb", read_only=True)
con.execute("CREATE TEMP TABLE mine AS SELECT count(*) AS n FROM mimiciv_icu.chartevents")
con.execute("ATTACH 'scratch.duckdb' AS scratch (READ_WRITE)")
con.execute("CREATE TABLE scratch.kept AS SELECT * FROM mine")
seen["rows"] = con.execute("SELECT n FROM scratch.kept").fetchone()[0]
print(json.dumps(seen))
"""


@pytest.mark.skipif(not sandbox.bwrap_available(), reason="bubblewrap cannot create namespaces here (.ci/run installs it)")
def test_inside_bwrap_a_run_cannot_change_the_shared_database_but_can_keep_its_own_tables(source_db, tmp_path):
    ws = prepare_workspace("mimic-meld-24h-raw", "no-skill", "native", source_db, tmp_path / "ws", shared=True)
    [cached] = cache_dir().glob("mimic-iv.raw.native.*.duckdb")
    before = cached.read_bytes()
    prefixes = [Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()]
    argv, env = sandbox.BwrapSandbox().wrap([sys.executable, "-c", PROBE], ws, {"HOME": "/tmp"}, ro_paths=prefixes)
    out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    # DuckDB refuses to open it for writing; chmod, unlink (a mount point) and a raw write all fail
    assert seen == {"open_rw": "IOException", "chmod": "OSError", "unlink": "OSError", "write": "PermissionError",
                    "rows": 3}
    assert (ws / "scratch.duckdb").is_file()
    assert cached.read_bytes() == before and (ws / "database.duckdb").stat().st_ino == cached.stat().st_ino


@pytest.mark.slow
def test_cache_invalidated_when_source_changes(tmp_path):
    from derive_fixtures import make_source_db

    src = make_source_db(tmp_path / "s.duckdb")
    prepare_workspace("mimic-meld-24h-raw", "no-skill", "native", src, tmp_path / "a")
    con = duckdb.connect(str(src))
    con.execute("INSERT INTO mimiciv_hosp.patients (subject_id) VALUES (3)")
    con.close()
    ws = prepare_workspace("mimic-meld-24h-raw", "no-skill", "native", src, tmp_path / "b")
    con = duckdb.connect(str(ws / "database.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM mimiciv_hosp.patients").fetchone()[0] == 3
    con.close()


def test_bad_inputs(source_db, tmp_path):
    with pytest.raises(TaskError, match="unknown condition"):
        prepare_workspace("mimic-sofa-24h", "hints", "native", source_db, tmp_path / "x")
    from clinbench.derive.conditions import check_condition

    spec = load_catalogue()["mimic-sofa-24h"].replace(operational_spec=False)
    with pytest.raises(TaskError, match="task mimic-sofa-24h has no operational spec; pick another condition"):
        check_condition(spec, "operational-spec")
    with pytest.raises(TaskError, match="unknown schema variant"):
        prepare_workspace("mimic-sofa-24h", "no-skill", "scrambled", source_db, tmp_path / "x")
    with pytest.raises(DataError, match="not found"):
        prepare_workspace("mimic-sofa-24h", "no-skill", "native", tmp_path / "none.duckdb", tmp_path / "x")
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    with pytest.raises(DataError, match="mimiciv_hosp"):
        prepare_workspace("mimic-sofa-24h", "no-skill", "native", empty, tmp_path / "x")
    assert not (tmp_path / "x" / "database.duckdb").exists()


@pytest.mark.slow
def test_leak_scan_every_task_and_variant(source_db, tmp_path):
    """No workspace database holds a target/variant table name, the reference marker, or its dropped concepts."""
    raw = source_db.read_bytes()
    assert MARKER.encode() in raw and b"target_sofa_24h" in raw  # positive controls
    assert drop_marker("first_day_sofa").encode() in raw
    cat = load_catalogue()
    always = [MARKER] + sorted({t.target_table.split(".")[1] for t in cat.values()}) + ["variant_sofa_24h", "variant_"]
    # every task natively; the renaming variants once per (database, mode) — they copy the same tables
    seen: set[tuple[str, str]] = set()
    for task in cat.values():
        forbidden = always + [drop_marker(d) for d in task.drop]
        variants = ["native"]
        if (task.database, task.mode) not in seen:
            seen.add((task.database, task.mode))
            variants += ["obfuscated", "restructured"]
        for variant in variants:
            ws = prepare_workspace(task.id, "no-skill", variant, source_db, tmp_path / f"{task.id}-{variant}")
            data = (ws / "database.duckdb").read_bytes()
            assert [f for f in forbidden if f.encode() in data] == [], (task.id, variant)


def test_conditions_deliver_the_right_material(source_db, tmp_path):
    ws = prepare_workspace("mimic-sepsis3-raw", "with-skill", "native", source_db, tmp_path / "a")
    assert sorted(p.name for p in (ws / "skills").iterdir()) == ["sepsis-3-cohort", "sofa-score", "suspicion-of-infection"]
    ws = prepare_workspace("mimic-sepsis3-raw", "with-skill-decoy", "native", source_db, tmp_path / "b")
    assert [p.name for p in (ws / "skills").iterdir()] == ["kdigo-aki-staging"]
    ws = prepare_workspace("mimic-sepsis3-raw", "operational-spec", "native", source_db, tmp_path / "c")
    prompt = (ws / "prompt.md").read_text()
    assert "## Operational specification" in prompt and "48 hours" in prompt
    assert not (ws / "skills").exists()
    ws = prepare_workspace("mimic-sofa-24h", "no-skill", "restructured", source_db, tmp_path / "d")
    assert "chartevents_numeric" in (ws / "prompt.md").read_text()
    assert {"mimiciv_icu.chartevents_numeric", "mimiciv_icu.chartevents_text", "mimiciv_hosp.lab_results"} <= tables(ws / "database.duckdb")


def test_obfuscated_mapping_kept_outside_workspace(source_db, tmp_path):
    ws = prepare_workspace("mimic-meld-24h-raw", "no-skill", "obfuscated", source_db, tmp_path / "ws")
    assert sorted(p.name for p in ws.iterdir()) == ["database.duckdb", "prompt.md"]
    names = tables(ws / "database.duckdb")
    assert not any("mimiciv" in n or "chartevents" in n for n in names)
    mappings = list(cache_dir().glob("mimic-iv.raw.obfuscated.*.mapping.json"))
    assert len(mappings) == 1 and "mimiciv_icu.chartevents" in mappings[0].read_text()


@pytest.mark.slow
def test_tasks_with_the_same_table_set_share_one_cached_database(source_db, tmp_path):
    from clinbench.derive.workspace import variant_mapping

    for task in ("mimic-sofa-24h-raw", "mimic-meld-24h-raw", "mimic-charlson-raw"):
        prepare_workspace(task, "no-skill", "native", source_db, tmp_path / task)
    assert len(list(cache_dir().glob("mimic-iv.raw.native.*.duckdb"))) == 1
    # standard tasks drop different concepts, so they do not share
    prepare_workspace("mimic-sofa-24h", "no-skill", "native", source_db, tmp_path / "a")
    prepare_workspace("mimic-meld-24h", "no-skill", "native", source_db, tmp_path / "b")
    assert len(cached("mimic-iv.standard.native.*.duckdb")) == 2
    plan = variant_mapping("mimic-meld-24h-raw", "obfuscated", source_db)
    assert plan.reconstruct["mimiciv_icu.chartevents"].startswith('SELECT "c_')


def test_a_workspace_gets_a_read_only_copy_of_its_own_unless_shared(source_db, tmp_path):
    ws = prepare_workspace("mimic-meld-24h-raw", "no-skill", "native", source_db, tmp_path / "ws")
    [cached] = cache_dir().glob("mimic-iv.raw.native.*.duckdb")
    db = ws / "database.duckdb"
    assert db.stat().st_ino != cached.stat().st_ino and db.read_bytes() == cached.read_bytes()
    assert stat.S_IMODE(db.stat().st_mode) == 0o444
