"""The workspace cache does not keep masked databases no source can use again (each is as large as its
source on real data): a rewritten source's old ones go when its new ones are built, `data cache` lists
what is left by source and state, and `--prune` / `--all` remove them; a file in use is left alone."""

from __future__ import annotations

import json

import duckdb
import pytest

from clinbench.derive import cache_prune
from clinbench.derive.cache_files import lock, lock_file, sha256_file, stamp_path
from clinbench.derive.workspace import cache_dir, prepare_workspace

from derive_fixtures import make_source_db


def masked() -> set[str]:
    return {p.name for p in cache_dir().glob("*.duckdb")}


def rewrite(src) -> None:
    """What a `concepts build` or a new load does to the source: new contents, new fingerprint."""
    con = duckdb.connect(str(src))
    con.execute("INSERT INTO mimiciv_hosp.patients (subject_id) VALUES (3)")
    con.close()


def patients(db) -> int:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT count(*) FROM mimiciv_hosp.patients").fetchone()[0]
    finally:
        con.close()


def cache_cli(*args):
    from typer.testing import CliRunner

    from clinbench.cli import app

    result = CliRunner().invoke(app, ["data", "cache", *args])
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def test_a_rewritten_sources_old_masked_databases_go_when_its_new_ones_are_built(tmp_path):
    src = make_source_db(tmp_path / "source.duckdb")
    old = prepare_workspace("mimic-meld-24h", "no-skill", "native", src, tmp_path / "a", shared=True)
    prepare_workspace("mimic-meld-24h-raw", "no-skill", "native", src, tmp_path / "b")
    before = masked()
    assert len(before) == 3  # the standard task's database, the shared layer it starts from, the raw tasks'
    assert {cache_prune.states(cache_prune.entries())[p] for p in cache_dir().glob("*.duckdb")} == {"current"}

    rewrite(src)
    new = prepare_workspace("mimic-meld-24h", "no-skill", "native", src, tmp_path / "c", shared=True)
    after = masked()
    assert not before & after and len(after) == 2  # the raw tasks' database of the old contents went too
    assert patients(new / "database.duckdb") == 3
    assert patients(old / "database.duckdb") == 2  # a workspace's hard link keeps the bytes it was given
    seals = {p.name.removesuffix(".stamp.json").removesuffix(".mapping.json") + ".duckdb"
             for p in cache_dir().iterdir() if p.name.endswith((".stamp.json", ".mapping.json"))}
    assert seals == after  # no seal or mapping left of a removed database


def test_a_masked_database_another_process_holds_is_left_and_pruned_later(tmp_path):
    src = make_source_db(tmp_path / "source.duckdb")
    prepare_workspace("mimic-meld-24h-raw", "no-skill", "native", src, tmp_path / "a")
    [held] = cache_dir().glob("*.duckdb")
    rewrite(src)
    with lock(lock_file(held)):  # another open of the lock file: flock refuses it as it would another process
        prepare_workspace("mimic-meld-24h-raw", "no-skill", "native", src, tmp_path / "b")
        assert held.is_file()
    out = cache_cli()
    assert "current 1 file" in out and "superseded 1 file" in out and str(src.resolve()) in out
    assert "next: clinbench data cache --prune (removes 1," in out
    out = cache_cli("--prune")
    assert "removed 1 masked database (" in out
    assert not held.exists() and not stamp_path(held).exists() and len(masked()) == 1


def test_data_cache_prunes_a_gone_sources_databases_and_only_all_removes_unrecorded_ones(tmp_path):
    gone, kept = make_source_db(tmp_path / "gone.duckdb"), make_source_db(tmp_path / "kept.duckdb")
    prepare_workspace("mimic-meld-24h-raw", "no-skill", "native", gone, tmp_path / "a")
    prepare_workspace("mimic-meld-24h-raw", "no-skill", "native", kept, tmp_path / "b")
    legacy = next(e.path for e in cache_prune.entries() if e.source == str(kept.resolve()))
    sealed = json.loads(stamp_path(legacy).read_text())
    del sealed["source"]  # as a file sealed before sources were recorded
    stamp_path(legacy).write_text(json.dumps(sealed))
    gone.unlink()

    out = cache_cli()
    assert "source gone 1 file" in out and "unrecorded 1 file" in out and "built before sources were recorded" in out
    assert "removed" not in out and len(masked()) == 2
    out = cache_cli("--prune")
    assert "removed 1 masked database (" in out and masked() == {legacy.name}
    out = cache_cli("--all")
    assert "removed 1 masked database (" in out and masked() == set()
    assert patients(prepare_workspace("mimic-meld-24h-raw", "no-skill", "native", kept, tmp_path / "c")
                    / "database.duckdb") == 2  # built again on first use


def test_an_empty_cache_is_described_and_a_file_being_written_is_neither_listed_nor_removed(tmp_path):
    cache_dir().mkdir(parents=True)
    writing = cache_dir() / ".mimic-iv.raw.native.0123.duckdb.tmp-1-ab.duckdb"  # a build's file before its rename
    writing.write_bytes(b"x")
    out = cache_cli("--all")
    assert writing.read_bytes() == b"x"  # not listed, not removed
    assert f"workspace cache: {cache_dir()} (0 masked databases, 0 bytes" in out
    assert "next:" not in out


@pytest.mark.parametrize("state", ["current", "superseded"])
def test_states_follow_the_sources_fingerprint(tmp_path, state):
    src = make_source_db(tmp_path / "source.duckdb")
    prepare_workspace("mimic-meld-24h-raw", "no-skill", "native", src, tmp_path / "a")
    [entry] = cache_prune.entries()
    assert entry.source == str(src.resolve()) and entry.size == entry.path.stat().st_size
    if state == "superseded":
        rewrite(src)  # and nothing built since, so the old database is still there
    assert cache_prune.states([entry]) == {entry.path: state}


def test_a_cache_shared_with_another_machine_leaves_that_machines_databases_alone(tmp_path, monkeypatch):
    """Ray workers on several machines share one cache; each may hold its own copy of the source at
    the same path, with another mtime, so another fingerprint: neither may remove the other's."""
    src = make_source_db(tmp_path / "source.duckdb")
    with monkeypatch.context() as m:
        m.setattr(cache_prune.socket, "gethostname", lambda: "worker-2")
        prepare_workspace("mimic-meld-24h-raw", "no-skill", "native", src, tmp_path / "a")
    [theirs] = cache_dir().glob("*.duckdb")
    rewrite(src)
    prepare_workspace("mimic-meld-24h-raw", "no-skill", "native", src, tmp_path / "b")
    assert theirs.is_file() and len(masked()) == 2
    out = cache_cli("--prune")
    assert "another machine's 1 file" in out and f"worker-2:{src.resolve()}" in out
    assert "removed 0 masked databases (" in out and theirs.is_file()


def test_a_masked_database_removed_between_its_check_and_the_link_is_built_again(tmp_path, monkeypatch):
    """`data cache --all` while a campaign runs: a run that found its database a moment before gets one."""
    from clinbench.derive import workspace

    src = make_source_db(tmp_path / "source.duckdb")
    prepare = workspace.prepare_database
    calls = []

    def removed_right_after(*args):
        prepared = prepare(*args)
        calls.append(prepared.path)
        if len(calls) == 1:
            cache_cli("--all")
        return prepared

    monkeypatch.setattr(workspace, "prepare_database", removed_right_after)
    ws, prepared = workspace.build_workspace("mimic-meld-24h-raw", "no-skill", "native", src, tmp_path / "ws",
                                             shared=True)
    assert len(calls) == 2 and patients(ws / "database.duckdb") == 2
    assert (ws / "database.duckdb").stat().st_ino == calls[1].stat().st_ino
    # what the campaign checks the run's database against after the run: these bytes' sha256, not None
    assert prepared.sha256 == sha256_file(ws / "database.duckdb")


def test_a_cache_folder_that_refuses_removal_is_one_line_and_the_build_stands(tmp_path, monkeypatch):
    src = make_source_db(tmp_path / "source.duckdb")
    prepare_workspace("mimic-meld-24h-raw", "no-skill", "native", src, tmp_path / "a")
    [old] = cache_dir().glob("*.duckdb")
    rewrite(src)
    unlink = type(old).unlink

    def refused(self, missing_ok=False):
        if self == old:
            raise PermissionError(13, "Permission denied", str(self))
        return unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(type(old), "unlink", refused)
    ws = prepare_workspace("mimic-meld-24h-raw", "no-skill", "native", src, tmp_path / "b")
    assert patients(ws / "database.duckdb") == 3 and old.is_file()  # the run has its database; the old one stays
    from typer.testing import CliRunner

    from clinbench.cli import app

    result = CliRunner().invoke(app, ["data", "cache", "--prune"])
    assert result.exit_code != 0 and isinstance(result.exception, cache_prune.WriteError)
    assert str(result.exception) == (f"cannot write {old}: the location is read-only or not writable by you; "
                                     "choose a writable location")
