"""A campaign's forked workers and DuckDB objects the campaign process leaves for its garbage collector.

A connection reachable only through a reference cycle, destroyed by a forked child's collector (a copy of
the process without DuckDB's threads), killed the child with SIGSEGV; a worker killed so loses its run and
breaks the pool. Seen as a forked scorer that never finished in a test session's worker process."""

from __future__ import annotations

import gc
from multiprocessing import get_context

import duckdb

from clinbench.campaign import campaign


def _collect_in_worker(spec, config):
    gc.collect()  # what any worker's collector does, sooner or later
    return f"collected in run {spec}"


class _Cycle:
    pass


def test_a_worker_forked_while_a_connection_awaits_collection_survives_collecting_it(monkeypatch):
    monkeypatch.setattr(campaign, "_pool_context", lambda: get_context("fork"))
    gc.disable()  # the cycle below stays uncollected until the campaign forks, as garbage does between collections
    try:
        held = _Cycle()
        held.me = held
        held.con = duckdb.connect()
        held.con.execute("SET threads = 4")
        held.con.execute("SELECT sum(i) FROM range(2000000) t(i)").fetchall()  # its threads started
        del held
        pool, results = campaign._run_local([1, 2], None, 2, _collect_in_worker)
        # before: concurrent.futures.process.BrokenProcessPool (a worker died of SIGSEGV)
        assert sorted(results) == ["collected in run 1", "collected in run 2"]
    finally:
        gc.enable()
