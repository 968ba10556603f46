"""The scorer's reference cache: prepared once per database file, never read once the file changed."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from clinbench.derive import score_reference
from clinbench.derive.score import score_output

TASK = "mimic-meld-24h"  # keys stay_id; scores meld within 1.0 point
OUT = "subject_id,hadm_id,stay_id,meld\n1,10,100,20\n2,20,200,9\n"


@pytest.fixture
def db(tmp_path) -> Path:
    path = tmp_path / "ref.duckdb"
    with duckdb.connect(str(path)) as c:
        c.execute("CREATE SCHEMA mimiciv_derived")
        c.execute("CREATE TABLE mimiciv_derived.target_meld_24h "
                  "(subject_id INTEGER, hadm_id INTEGER, stay_id INTEGER, meld DOUBLE)")
        c.execute("INSERT INTO mimiciv_derived.target_meld_24h VALUES (1, 10, 100, 20.0), (2, 20, 200, 7.5)")
    return path


def cache_files(tmp_path) -> list[Path]:
    return sorted((tmp_path / "cache" / "workspaces" / "references").glob("*.parquet"))


def test_a_second_score_reads_the_cache_not_the_database(db, tmp_path, monkeypatch):
    out = tmp_path / "out.csv"
    out.write_text(OUT)
    first = score_output(TASK, out, db)
    assert first.columns["meld"].matched == 1 and first.reference_rows == 2
    assert len(cache_files(tmp_path)) == 1

    def no_preparing(*args, **kwargs):
        raise AssertionError("the reference was prepared again")

    monkeypatch.setattr(score_reference, "prepare", no_preparing)
    second = score_output(TASK, out, db)
    assert second.as_dict() == first.as_dict()
    # the examples come from the cached rows too: stay 200, reference 7.5 against 9
    assert second.columns["meld"].examples == [{"key": {"stay_id": "200"}, "reference": "7.5", "agent": "9.0"}]


def test_a_changed_database_is_prepared_again_and_replaces_the_old_file(db, tmp_path):
    out = tmp_path / "out.csv"
    out.write_text(OUT)
    assert score_output(TASK, out, db).reward == 0.5
    with duckdb.connect(str(db)) as c:
        c.execute("UPDATE mimiciv_derived.target_meld_24h SET meld = 9.0 WHERE stay_id = 200")
    assert score_output(TASK, out, db).reward == 1.0
    assert len(cache_files(tmp_path)) == 1  # the stale file was removed


def test_a_cache_that_cannot_be_written_still_scores(db, tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("CLINBENCH_CACHE", str(blocker))
    out = tmp_path / "out.csv"
    out.write_text(OUT)
    assert score_output(TASK, out, db).reward == 0.5
    assert score_output(TASK, out, db).reward == 0.5


def test_a_damaged_cache_file_is_prepared_again(db, tmp_path):
    out = tmp_path / "out.csv"
    out.write_text(OUT)
    expected = score_output(TASK, out, db).as_dict()
    [cached] = cache_files(tmp_path)
    cached.write_bytes(b"not parquet")
    assert score_output(TASK, out, db).as_dict() == expected


@pytest.mark.slow
def test_scoring_imports_neither_pydantic_nor_rich():
    """The scorer runs in every Harbor verifier and campaign run; its imports are its start-up cost."""
    import subprocess
    import sys

    code = ("import sys; import clinbench.derive.score, clinbench.derive.score_read, clinbench.derive.score_reference; "
            "print(sorted(m for m in ('pydantic', 'rich', 'numpy', 'sqlglot') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_one_off_score_neither_reads_nor_writes_the_cache(db, tmp_path, monkeypatch):
    out = tmp_path / "out.csv"
    out.write_text(OUT)
    assert score_output(TASK, out, db, cache=False).reward == 0.5
    assert cache_files(tmp_path) == []
    score_output(TASK, out, db)  # now cached

    def no_reading(*args, **kwargs):
        raise AssertionError("the cache was read")

    monkeypatch.setattr(score_reference, "_read", no_reading)
    assert score_output(TASK, out, db, cache=False).reward == 0.5


def test_scores_in_a_row_share_the_threads_duckdb_and_a_failed_score_leaves_the_next_clean(db, tmp_path, monkeypatch):
    # a campaign worker scores one run after another: one DuckDB a thread (starting one cost 17-25 ms a score)
    import threading

    from clinbench.derive import score as score_module
    from clinbench.errors import DataError

    out = tmp_path / "out.csv"
    out.write_text(OUT)
    first = score_output(TASK, out, db)
    scorer = score_module._thread_scorer()
    assert score_output(TASK, out, db).as_dict() == first.as_dict() and score_module._thread_scorer() is scorer
    with pytest.raises(DataError, match="not found"):
        score_output(TASK, out, tmp_path / "missing.duckdb")
    assert score_output(TASK, out, db).as_dict() == first.as_dict() and score_module._thread_scorer() is not scorer
    other = []
    thread = threading.Thread(target=lambda: other.append(score_module._thread_scorer()))
    thread.start()
    thread.join()
    assert other[0] is not score_module._thread_scorer()
    # a score under another cache folder prepares its reference there, not from the first folder's file
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "elsewhere"))
    assert score_output(TASK, out, db).as_dict() == first.as_dict()
    assert len(list((tmp_path / "elsewhere" / "workspaces" / "references").glob("*.parquet"))) == 1


def _score_in_forked_child(out, db, parents_scorer):
    from clinbench.derive import score as score_module

    result = score_output(TASK, out, db)
    raise SystemExit(4 if id(score_module._thread_scorer()) == parents_scorer else 0 if result.reward == 0.5 else 5)


def test_a_forked_worker_scores_on_a_duckdb_of_its_own(db, tmp_path):
    # a campaign's fork workers: the parent's Scorer (its DuckDB's threads) is not the child's to use
    import multiprocessing as mp

    from clinbench.derive import score as score_module

    out = tmp_path / "out.csv"
    out.write_text(OUT)
    assert score_output(TASK, out, db).reward == 0.5
    child = mp.get_context("fork").Process(target=_score_in_forked_child,
                                           args=(out, db, id(score_module._thread_scorer())))
    # as a campaign forks its workers (campaign._run_local): DuckDB garbage of this test process's earlier tests,
    # collected in the child, killed or hung it (seen once: the child never ended)
    import gc

    gc.collect()
    gc.freeze()
    try:
        child.start()
    finally:
        gc.unfreeze()
    child.join(60)
    assert child.exitcode == 0
