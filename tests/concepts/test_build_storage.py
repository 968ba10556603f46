"""`concepts build` when the disk fills or the file cannot be written: one line that says so, and a retry
that builds the rest into the same tables a build with room gives."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clinbench.duck import duckdb
from clinbench.ehr.synth import synth_mimic_iv
from tests.concepts.derived_digest import derived_tables


def _build(db: Path, cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "CLINBENCH_CACHE": str(cache), "COLUMNS": "300"}
    return subprocess.run([sys.executable, "-m", "clinbench", "concepts", "build", str(db)], env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def raw_and_built(tmp_path_factory) -> tuple[Path, Path]:
    """A 100-patient raw database and a copy with the layer `concepts build` builds, on a disk with room."""
    folder = tmp_path_factory.mktemp("storage")
    raw = folder / "raw.duckdb"
    synth_mimic_iv(raw, patients=100, seed=0)
    built = folder / "built.duckdb"
    shutil.copyfile(raw, built)
    assert _build(built, folder / "cache").returncode == 0  # as the user builds it: the default profile, m4bench
    return raw, built


def test_a_disk_filling_mid_build_is_one_line_and_the_retry_builds_the_rest(raw_and_built, tmpfs, tmp_path):
    raw, built = raw_and_built
    grows = built.stat().st_size - raw.stat().st_size  # what the layer adds to the file
    assert grows > 3_000_000
    disk = tmpfs("small", f"size={raw.stat().st_size + grows + 8_000_000}")
    db = disk / "mimic.duckdb"
    shutil.copyfile(raw, db)
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    filler = disk / "filler"
    filler.write_bytes(b"\0" * (free - grows // 3))  # room for a third of the layer

    full = _build(db, tmp_path / "cache")
    assert full.returncode == 2 and "Traceback" not in full.stderr, full.stderr
    errors = [line for line in (full.stdout + full.stderr).splitlines() if line.startswith("error:")]
    assert errors == [f"error: disk full: no space left on the device holding {db}; free space (or choose another "
                      "location) and retry (the tables built before it are kept: the retry builds the rest)"]
    kept = (full.stdout + full.stderr).count("  built ")
    assert kept > 0  # a table or more was committed before the disk filled

    filler.unlink()  # the user frees space and runs the same command
    retry = _build(db, tmp_path / "cache")
    assert retry.returncode == 0, retry.stderr
    rebuilt, unchanged = (int(n) for n in re.search(r"(\d+) built, (\d+) unchanged", " ".join(retry.stdout.split())).groups())
    # what was committed is kept: the tables reported built, and one whose build finished as the other builder failed
    assert kept <= unchanged <= kept + 1 and rebuilt + unchanged == len(derived_tables(built))
    assert derived_tables(db) == derived_tables(built)  # no table half-written, none missing


def test_a_database_on_a_read_only_mount_is_said_to_be_read_only(raw_and_built, tmpfs, tmp_path):
    raw, _ = raw_and_built
    disk = tmpfs("ro", "size=64m")
    db = disk / "mimic.duckdb"
    shutil.copyfile(raw, db)
    remount = subprocess.run(["mount", "-o", "remount,ro", str(disk)], capture_output=True, text=True)
    if remount.returncode != 0:
        pytest.skip(f"cannot remount the tmpfs read-only ({remount.stderr.strip()})")
    done = _build(db, tmp_path / "cache")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == (f"error: cannot write {db}: the location is read-only or not writable by you; "
                                   "choose a writable location")


def test_a_read_only_database_lacking_a_reference_names_it_and_the_one_build_that_makes_it(raw_and_built, tmpfs, tmp_path):
    """A shared MIMIC-IV copy is often mounted read-only: `run` cannot build a reference on demand into it, and
    "choose a writable location" would tell its user to move the database. Built once with `--all`, it runs."""
    _, built = raw_and_built  # the concept layer only: references are built on demand
    disk = tmpfs("shared", "size=96m")  # two 27 MB copies, one built --all (39 MB) with its WAL: room to spare
    layer, everything = disk / "layer.duckdb", disk / "all.duckdb"
    shutil.copyfile(built, layer)
    shutil.copyfile(built, everything)
    env = {**os.environ, "CLINBENCH_CACHE": str(tmp_path / "cache"), "COLUMNS": "300"}
    assert subprocess.run([sys.executable, "-m", "clinbench", "concepts", "build", str(everything), "--all"],
                          env=env, capture_output=True, text=True, timeout=300).returncode == 0
    remount = subprocess.run(["mount", "-o", "remount,ro", str(disk)], capture_output=True, text=True)
    if remount.returncode != 0:
        pytest.skip(f"cannot remount the tmpfs read-only ({remount.stderr.strip()})")

    def run(db: Path, out: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "clinbench", "run", "--db", str(db), "--out", str(tmp_path / out),
                               "--task", "mimic-sofa-24h", "--agent", "reference"],
                              env=env, capture_output=True, text=True, timeout=300)

    lacking = run(layer, "camp-layer")
    assert lacking.returncode == 2 and "Traceback" not in lacking.stderr, lacking.stderr
    assert lacking.stderr.strip() == (
        f"error: {layer} lacks 1 table this command needs (mimiciv_derived.target_sofa_24h) and cannot be written "
        f"here (read-only, or not writable by you): build it once where it is writable (`clinbench concepts build "
        f"{layer} --all`), or pass a writable copy")
    assert not (tmp_path / "camp-layer" / "results.duckdb").exists()

    complete = run(everything, "camp-all")
    assert complete.returncode == 0, complete.stderr
    assert "1 run(s) done (1 ok)" in " ".join(complete.stdout.split())


def test_out_of_memory_mid_build_is_the_machine_not_the_sql_and_the_retry_builds_the_rest(raw_and_built, tmp_path,
                                                                                         monkeypatch):
    """DuckDB given 64 MB and no spill directory runs out of memory in one concept (made to sort 2 M wide rows;
    the others fit): the build stops with one line that says so, not "fix the SQL", keeps what it built, and the
    same command with memory builds the rest into the tables a build with room gives (the CLI's default profile)."""
    from clinbench.concepts import build
    from clinbench.concepts.helpers import Statement
    from clinbench.errors import ResourceError

    raw, built = raw_and_built
    db = tmp_path / "mimic.duckdb"
    shutil.copyfile(raw, db)
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    real_open, real_statement = build._open, build.statement

    def starved(path):
        con = real_open(path)
        con.execute("SET memory_limit = '64MB'")
        con.execute("SET temp_directory = ''")
        return con

    def hog(qualified, *args):
        made = real_statement(qualified, *args)
        if qualified != "mimiciv_derived.vitalsign":
            return made
        return Statement("SELECT range AS x, repeat('x', 120) || range AS y FROM range(2000000) ORDER BY y DESC",
                         made.pieces)

    monkeypatch.setattr(build, "_open", starved)
    monkeypatch.setattr(build, "statement", hog)
    with pytest.raises(ResourceError) as failed:
        build.build_concepts(db, targets=False, workers=1, profile="m4bench")
    assert re.fullmatch(r"mimiciv_derived\.vitalsign was not built: DuckDB ran out of memory \(.+\): close other "
                        r"programs, or use a machine with more memory; the tables built before it are kept, and the "
                        r"same command, run again, builds the rest", str(failed.value))
    kept = set(derived_tables(db))
    assert kept and "mimiciv_derived.vitalsign" not in kept

    monkeypatch.setattr(build, "_open", real_open)
    monkeypatch.setattr(build, "statement", real_statement)
    statuses = {r.name: r.status for r in build.build_concepts(db, targets=False, workers=1, profile="m4bench")}
    assert {n for n, s in statuses.items() if s == "unchanged"} == kept
    assert derived_tables(db) == derived_tables(built)


def test_a_reference_built_while_another_concept_fails_gets_its_manifest_row(raw_and_built, tmp_path, monkeypatch):
    """A build stops at its first failure but lets running concepts finish: a reference that commits then, or
    whose build is killed between its table's commit and its manifest row, is recorded by the next build.
    Before, its manifest row stayed the previous build's: `tasks verify` called it stale and `run` refused, for
    ever (only --force cleared it), while `concepts build` said unchanged."""
    import threading
    import time

    from clinbench.concepts import build, manifest
    from clinbench.errors import ResourceError

    _, built = raw_and_built
    db = tmp_path / "mimic.duckdb"
    shutil.copyfile(built, db)
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    build.build_concepts(db, targets=True, workers=2)
    target = "mimiciv_derived.target_kdigo_48h"
    with duckdb.connect(str(db)) as con:  # new creatinine results: the reference must be rebuilt
        con.execute("UPDATE mimiciv_hosp.labevents SET valuenum = valuenum * 2 WHERE itemid = 50912 AND labevent_id % 3 = 0")

    real = build._materialise
    started = threading.Event()

    def one_fails_meanwhile(con, concept, out, *args, **kwargs):
        if out == target:
            started.set()
            time.sleep(1.0)  # still running when the other concept fails
        elif started.is_set():
            raise ResourceError(f"{out} was not built: out of memory")
        return real(con, concept, out, *args, **kwargs)

    monkeypatch.setattr(build, "_materialise", one_fails_meanwhile)
    with pytest.raises(ResourceError):
        build.build_concepts(db, targets=True, workers=2)
    monkeypatch.setattr(build, "_materialise", real)
    with duckdb.connect(str(db)) as con:
        assert con.execute(f"SELECT count(*) FROM {target}").fetchone()[0] > 0

    statuses = {r.name: r.status for r in build.build_concepts(db, targets=True, workers=2)}
    assert statuses[target] == "unchanged"  # built by the failed build, with its inputs as they are now
    with duckdb.connect(str(db), read_only=True) as con:
        assert manifest.check_tables(con, [target], str(db), profile="m4bench") == []

    # killed between the table's commit and its manifest row: the next build sees the row older than the table
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE mimiciv_hosp.labevents SET valuenum = valuenum * 2 WHERE itemid = 50912 AND labevent_id % 3 = 1")
    real_after = manifest.after_build
    monkeypatch.setattr(manifest, "after_build", lambda con, concept, table, *a, **k:
                        None if table == target else real_after(con, concept, table, *a, **k))
    assert {r.name: r.status for r in build.build_concepts(db, targets=True, workers=2)}[target] == "built"
    monkeypatch.setattr(manifest, "after_build", real_after)
    with duckdb.connect(str(db), read_only=True) as con:
        assert manifest.check_tables(con, [target], str(db), profile="m4bench") != []  # as a kill leaves it
    assert {r.name: r.status for r in build.build_concepts(db, targets=True, workers=2)}[target] == "unchanged"
    with duckdb.connect(str(db), read_only=True) as con:
        assert manifest.check_tables(con, [target], str(db), profile="m4bench") == []
