"""The results store: schema as planned, idempotent atomic recording, exports."""

from __future__ import annotations

import csv
import multiprocessing as mp

import duckdb
import pytest

from clinbench.records import STORE_FILE, ColumnScore, RunRecord, Usage
from clinbench.records.store import Store, StoreError


def _run(run_id: str, reward: float = 1.0, **kw) -> RunRecord:
    return RunRecord(
        run_id=run_id, benchmark="derive", task="mimic-sofa-24h", family="score", condition="no-skill",
        schema="native", agent="reference", model="-", trial=0, reward=reward, strict=reward == 1.0,
        key_f1=1.0, ordered_value_nmae=0.0, column_scores=[ColumnScore("sofa_24hours", reward, 0.0)],
        usage=Usage(100, 20, 3), **kw,
    )


def test_tables_and_columns_match_the_planned_interface(tmp_path):
    store = Store.create(tmp_path)
    con = duckdb.connect(str(tmp_path / STORE_FILE), read_only=True)
    cols = {t: [r[0] for r in con.execute(f"DESCRIBE {t}").fetchall()] for t in ("runs", "column_scores", "usage")}
    types = dict(con.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE table_name='runs'").fetchall())
    con.close()
    assert cols["runs"][:3] == ["run_id", "benchmark", "task"]
    assert "judge_score" in cols["runs"] and "finished_at" in cols["runs"] and len(cols["runs"]) == 32
    assert cols["runs"][-10:] == ["error", "data_digest", "rescored_against", "agent_version", "served_model",
                                  "gatekeeper", "judge", "profile", "workspace", "flag_charged"]
    assert cols["column_scores"] == ["run_id", "column_name", "match_rate", "nmae"]
    assert cols["usage"][:4] == ["run_id", "input_tokens", "output_tokens", "requests"] and "cached_input_tokens" in cols["usage"]
    assert types["reward"] == "DOUBLE" and types["finished_at"] == "TIMESTAMP" and types["trial"] == "INTEGER"
    assert store.count() == 0


@pytest.mark.slow
def test_recording_twice_keeps_one_row_with_the_latest_values(tmp_path):
    store = Store.create(tmp_path)
    store.record(_run("a", reward=0.5))
    store.record(_run("a", reward=1.0))
    store.record(_run("b", reward=0.0))
    assert store.count() == 2
    assert store.get("a")["reward"] == 1.0
    assert store.get("a")["input_tokens"] == 100
    assert [c["match_rate"] for c in store.column_scores("a")] == [1.0]
    assert store.run_ids() == {"a", "b"}


def test_bad_status_is_refused_and_nothing_is_written(tmp_path):
    store = Store.create(tmp_path)
    with pytest.raises(StoreError, match="status must be one of"):
        store.record_many([_run("a"), _run("b", status="crashed")])
    assert store.count() == 0


def test_failed_transaction_leaves_no_partial_run(tmp_path):
    store = Store.create(tmp_path)
    bad = _run("a")
    bad.column_scores = [ColumnScore("x", "not-a-number")]  # type: ignore[arg-type]
    with pytest.raises(Exception):
        store.record(bad)
    assert store.count() == 0 and store.column_scores() == []


def test_verdict_publishable_filter_and_csv_export(tmp_path):
    store = Store.create(tmp_path)
    store.record_many([_run("a"), _run("b", reward=0.25)])
    store.set_verdict("b", False, "identical output to run a")
    assert [r["run_id"] for r in store.runs(publishable_only=True)] == ["a"]
    assert store.runs_table(publishable_only=False).num_rows == 2
    out = store.export_csv(tmp_path / "runs.csv")
    rows = list(csv.DictReader(out.open()))
    assert [r["run_id"] for r in rows] == ["a", "b"]
    assert rows[1]["flag_reason"] == "identical output to run a" and rows[1]["publishable"] == "False"
    assert float(rows[1]["reward"]) == 0.25


def test_a_process_that_never_imported_the_duckdb_package_reads_the_runs_table(tmp_path):
    """The store runs on DuckDB's extension alone (clinbench.duck); the runs table's Arrow result is the
    package's Python layer, which runs_table loads itself: a stats process has nothing else load it."""
    import subprocess
    import sys

    Store.create(tmp_path).record_many([_run("a"), _run("b", reward=0.25)])
    probe = ("import sys\nfrom clinbench.records.store import Store\nstore = Store.open(sys.argv[1])\n"
             "print('duckdb' in sys.modules)\nt = store.runs_table()\nprint(t.num_rows, t.column('reward').to_pylist())")
    done = subprocess.run([sys.executable, "-c", probe, str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["False", "2 [1.0, 0.25]"]


def test_open_missing_store_says_what_to_pass(tmp_path):
    with pytest.raises(StoreError, match="no results store"):
        Store.open(tmp_path)


def _writer(directory, start):
    store = Store(directory / STORE_FILE)
    for i in range(start, start + 10):
        store.record(_run(f"r{i:03d}"))


@pytest.mark.slow
def test_two_processes_recording_concurrently_lose_nothing(tmp_path):
    Store.create(tmp_path)
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(tmp_path, s)) for s in (0, 100)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    assert Store.open(tmp_path).count() == 20


def _record_in_forked_child(directory, run_id, parents_duckdb=None):
    from clinbench.records import store as store_module

    if parents_duckdb is not None and id(store_module._engine) == parents_duckdb:
        raise SystemExit(4)  # the child would use its parent's DuckDB
    try:
        Store.open(directory).record(_run(run_id))
    except StoreError:
        raise SystemExit(3)


def test_a_forked_child_records_on_its_own_duckdb_and_the_parents_store_stays_usable(tmp_path):
    # every call attaches the file to the process's one DuckDB; a forked child (a campaign's fork workers) must
    # not use its parent's, whose copy in the child has no threads and does not hold the parent's lock
    store = Store.create(tmp_path)
    store.record(_run("parent-before"))
    from clinbench.records import store as store_module

    fork = mp.get_context("fork")
    child = fork.Process(target=_record_in_forked_child, args=(tmp_path, "child", id(store_module._engine)))
    child.start()
    child.join(60)
    assert child.exitcode == 0
    with store.connect(read_only=True) as con:  # the parent has the file open while a child is forked
        late = fork.Process(target=_record_in_forked_child, args=(tmp_path, "late-child"))
        late.start()
        late.join(60)
        # the child cannot write a file its parent's DuckDB has open (DuckDB allows one writer a process): a
        # one-line error, where through the inherited DuckDB it wrote behind the parent's back
        assert late.exitcode == 3
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 2
    store.record(_run("parent-after"))
    assert {r["run_id"] for r in Store.open(tmp_path).runs()} == {"parent-before", "child", "parent-after"}


def test_threads_recording_into_one_store_at_once_lose_no_run(tmp_path):
    import threading

    store = Store.create(tmp_path)
    failures = []

    def record(worker):
        try:
            for i in range(8):
                store.record(_run(f"w{worker}-{i}"))
        except Exception as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=record, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not failures and store.count() == 32


def test_a_store_is_checked_on_its_own_tables_while_another_is_open(tmp_path):
    # both files are attached to one DuckDB at once: the catalog would list the other store's runs table
    good = Store.create(tmp_path / "good")
    (tmp_path / "bad").mkdir()
    duckdb.connect(str(tmp_path / "bad" / STORE_FILE)).execute("CREATE TABLE other (x INTEGER)").close()
    with good.connect(read_only=True):
        with pytest.raises(StoreError, match="holds no runs table"):
            Store.open(tmp_path / "bad")


def test_a_run_recorded_while_this_process_reads_the_store_waits_for_the_read(tmp_path):
    # a read attaches the file read-only (clinbench serve's pages); a write from another thread waits for it
    import threading
    import time

    store = Store.create(tmp_path)
    reading = threading.Event()

    def read():
        with store.connect(read_only=True) as con:
            reading.set()
            con.execute("SELECT count(*) FROM runs").fetchone()
            time.sleep(0.4)

    reader = threading.Thread(target=read)
    reader.start()
    reading.wait(10)
    started = time.monotonic()
    store.record(_run("while-read"))
    waited = time.monotonic() - started
    reader.join(10)
    assert store.count() == 1 and waited >= 0.2


def test_a_write_inside_the_same_threads_read_fails_at_once_rather_than_wait_for_itself(tmp_path):
    import time

    store = Store.create(tmp_path)
    started = time.monotonic()
    with store.connect(read_only=True):
        with pytest.raises(StoreError, match="open read-only in this same call"):
            store.record(_run("inside-a-read"))
    assert time.monotonic() - started < 5  # not the 30 s lock wait
    store.record(_run("after-the-read"))
    assert store.count() == 1
