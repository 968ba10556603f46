"""Run a campaign: the matrix minus the runs already recorded, in parallel, recorded as they finish.

One engine for both benchmarks: a derivation campaign runs ``execute.execute_run`` on
``matrix.RunSpec``s, a diagnosis campaign ``dx.run.execute_encounter`` on ``dx.run.DxSpec``s.
A spec needs a ``run_id`` and an ``agent``; a config an ``out`` folder, ``bound(store, specs)``
(the config bound to the campaign's data) and ``lost(spec, cause)`` (the record of a run whose
worker died).

Only this process writes the store and publishes evidence, one finished run at a time
(``evidence.publish`` then ``Store.record``): a campaign killed at any moment loses only
the runs in flight, and a rerun of the same command skips every recorded run (and first
records a run killed between the two from its sealed evidence, ``rebuild.recover_unrecorded``). A lock
file keeps two campaigns from sharing one folder.

Executors: ``local`` (worker processes, ``--jobs``) and ``ray`` (one Ray task per run, for
many machines on a shared folder; ``pip install 'clinbench[ray]'``).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import gc
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

from clinbench.campaign import evidence
from clinbench.campaign.execute import CampaignConfig, RunResult, StorageFailure, execute_run
from clinbench.campaign.matrix import RunSpec
from clinbench.records import STORE_FILE, RunRecord, RunStatus
from clinbench.records.store import Store
from clinbench.errors import ClinbenchError
from clinbench.versions import record_versions
from clinbench.write_errors import explain

Runner = Callable[[RunSpec, CampaignConfig], RunResult]
LOCK_FILE = ".campaign.lock"
PLAN_FILE = ".campaign-plan.json"  # the run ids of the latest invocation


class CampaignError(ClinbenchError):
    """The campaign cannot start or its executor failed."""


@dataclass
class CampaignSummary:
    planned: int
    skipped: int
    finished: int = 0
    by_status: dict[str, int] = field(default_factory=dict)
    timings: list[dict[str, float]] = field(default_factory=list)
    causes: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (status, cause) -> run ids
    records: list[RunRecord] = field(default_factory=list, repr=False)  # the runs recorded, in order

    def add(self, record: RunRecord) -> None:
        self.finished += 1
        self.records.append(record)
        self.by_status[record.status] = self.by_status.get(record.status, 0) + 1
        if record.status != "ok":
            cause = " ".join((record.error or "no cause recorded").split())[:300]
            self.causes.setdefault((record.status, cause), []).append(record.run_id)


class CampaignInterrupted(ClinbenchError):
    """Ctrl-C or SIGTERM stopped the campaign; the runs recorded so far are kept."""

    def __init__(self, summary: CampaignSummary):
        super().__init__(f"interrupted: {summary.finished} runs recorded; rerun the same command to resume")
        self.summary = summary


class Reporter:
    """Receives progress; the CLI passes a Rich one. This base class reports nothing."""

    def start(self, total: int, skipped: int) -> None:
        """Called once with the number of runs to do."""

    def finished(self, record: RunRecord) -> None:
        """Called after each run is recorded."""

    def waiting(self, message: str) -> None:
        """Called while a finished run waits to be recorded (another process holds the store)."""

    def stop(self) -> None:
        """Called once at the end."""


@contextlib.contextmanager
def campaign_lock(out: Path) -> Iterator[None]:
    try:
        out.mkdir(parents=True, exist_ok=True)
        fh = (out / LOCK_FILE).open("a")
    except OSError as exc:
        raise StorageFailure(explain(exc, out) or f"cannot use {out} as the campaign folder: {exc}") from exc
    with fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise CampaignError(f"another campaign is running in {out}; wait for it or use another --out") from exc
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


_STOPPING = False
_IN_RUN = False


def _worker_init() -> None:
    """Worker initializer: die with the campaign process (Linux), leave Ctrl-C to it, stop cleanly on SIGTERM."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _worker_stop)


def _worker_stop(signum, frame) -> None:
    global _STOPPING
    _STOPPING = True
    if not _IN_RUN:
        os._exit(1)
    raise KeyboardInterrupt  # unwinds the run: the agent's process group is killed on the way out


def _guarded(runner: Runner, spec: RunSpec, config: CampaignConfig) -> RunResult | None:
    """Run in a worker; once told to stop, exit without a traceback."""
    global _IN_RUN
    if _STOPPING:
        os._exit(1)
    _IN_RUN = True
    try:
        return runner(spec, config)
    except KeyboardInterrupt:
        os._exit(1)
    finally:
        _IN_RUN = False


@contextlib.contextmanager
def _interrupts() -> Iterator[list[bool]]:
    """Ctrl-C and SIGTERM raise KeyboardInterrupt, except while a run is being recorded (then right after)."""
    state = [False, False]  # [recording, pending]

    def handler(signum, frame):
        if state[0]:
            state[1] = True
        else:
            raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield state
        return
    old = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield state
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)


def run_campaign(specs: list[RunSpec], config: CampaignConfig, *, jobs: int = 1, executor: str = "local",
                 ray_address: str | None = None, runner: Runner = execute_run,
                 reporter: Reporter | None = None, retry_failed: bool = False, retry_agent_failed: bool = False,
                 started: Callable[[], object] | None = None, allow_mixed: bool = False) -> CampaignSummary:
    """Run every spec not yet recorded in ``config.out`` (and, with ``retry_failed``, those recorded as
    harness-error, left out of every statistic; with ``retry_agent_failed``, agent-failed ones too, which
    counted as reward 0: redoing only those re-rolls an agent's failures, so it is for a setup fault the
    user fixed); a new record replaces the old; return counts by status.

    The campaign is bound to ``config.db`` (``binding``): a store whose runs were scored against
    other data is refused before anything runs. Ctrl-C or SIGTERM stops the runs in flight and
    raises ``CampaignInterrupted``; a full disk or read-only folder raises ``StorageFailure``.
    ``started`` is called once the folder is locked and bound to the data, before any run.
    """
    out = Path(config.out)
    if jobs < 1:
        raise CampaignError("--jobs must be at least 1")
    if executor not in ("local", "ray"):
        raise CampaignError(f"unknown executor {executor!r}: use 'local' or 'ray'")
    reporter = reporter or Reporter()
    with campaign_lock(out):
        _refuse_evidence_without_store(out)
        store = Store.create(out)
        record_versions(out)  # versions.json: clinbench, DuckDB and SDK versions this campaign ran with
        evidence.clear_leftovers(out)
        from clinbench.campaign.rebuild import recover_unrecorded

        recover_unrecorded(store, out)  # published but never recorded: kept, not redone
        config = config.bound(store, specs)
        if started is not None:
            started()
        if not allow_mixed:  # one agent version per campaign, so its comparisons stay clean
            from clinbench.agents.provenance import version_changes

            changed = version_changes(store.runs(), {s.agent for s in specs}, getattr(config, "options", None))
            if changed:
                raise CampaignError(f"{out} {changed[0]}; pass --out a new folder, or --allow-mixed to add runs "
                                    "of this version (comparisons that pool both then need --allow-mixed too)")
        done = store.run_ids()
        redo = ({RunStatus.HARNESS_ERROR} if retry_failed or retry_agent_failed else set()) | (
            {RunStatus.AGENT_FAILED} if retry_agent_failed else set())
        if redo:
            done -= {r["run_id"] for r in store.runs() if r["status"] in redo}
        unique = list(dict.fromkeys(specs))
        todo = [s for s in unique if s.run_id not in done]
        summary = CampaignSummary(planned=len(unique), skipped=len(unique) - len(todo))
        # what this invocation means to run, so a viewer (`clinbench serve`) can show done / failed / left
        evidence.write_json(out / PLAN_FILE, {"planned": [s.run_id for s in unique], "started_at": time.time()})
        with _interrupts() as state:
            pool = None
            try:
                if executor == "ray":
                    results = _run_ray(todo, config, jobs, ray_address, runner)
                elif jobs == 1 or len(todo) <= 1:
                    results = (runner(spec, config) for spec in todo)
                else:  # forks its workers now, before any progress thread
                    pool, results = _run_local(todo, config, jobs, runner)
                reporter.start(len(todo), summary.skipped)
                for result in results:
                    state[0] = True
                    _record(store, out, result, reporter)
                    state[0] = False
                    summary.add(result.record)
                    reporter.finished(result.record)
                    if state[1]:
                        raise KeyboardInterrupt
            except KeyboardInterrupt:
                _stop_pool(pool)
                raise CampaignInterrupted(summary) from None
            except BaseException:
                _stop_pool(pool)
                raise
            finally:
                reporter.stop()
    return summary


def _refuse_evidence_without_store(out: Path) -> None:
    """Runs' evidence without a results store (deleted, or moved away): rerunning would redo every run
    and replace its sealed evidence, so the store must be rebuilt from it first."""
    if (out / STORE_FILE).exists():
        return
    sealed = sum(1 for _ in (out / evidence.RUNS_DIR).glob(f"*/{evidence.MANIFEST}"))
    if sealed:
        raise CampaignError(f"{out} holds the evidence of {sealed} run{'s' if sealed > 1 else ''} but no results store "
                            f"({STORE_FILE}): rebuild it with `clinbench store rebuild {out}`, then rerun; "
                            "nothing was run")


def _record(store: Store, out: Path, result: RunResult, reporter: Reporter) -> None:
    """Publish a finished run's evidence and record it; while another process holds the store
    (a reader), wait as long as it does: the runs in flight go on, and no finished run is lost."""
    try:
        evidence.publish(Path(result.partial_dir), out, result.record.run_id)
    except OSError as exc:
        raise StorageFailure(explain(exc, out) or f"cannot publish the evidence of {result.record.run_id}: {exc}") from exc
    store.record(result.record, wait_seconds=math.inf,
                 on_wait=lambda message: reporter.waiting(f"{result.record.run_id} finished; {message}"))


def _pool_context():
    """fork: workers inherit the loaded modules, so they start fast (forking before the progress display
    starts keeps its thread's locks out of the children). But where this process has loaded Ray's core
    library (a Ray campaign ran here before, as in a notebook or a test session), a forked worker inherits
    Ray's half-torn-down state and was seen to die in _raylet.so mid-run (a segfault: BrokenProcessPool);
    such a process starts clean workers instead (spawn: each imports clinbench, about a second)."""
    return get_context("spawn" if "ray._raylet" in sys.modules else "fork")


def _run_local(todo: list[RunSpec], config: CampaignConfig, jobs: int,
               runner: Runner) -> tuple[ProcessPoolExecutor, Iterator[RunResult]]:
    """Submit every run now (fork starts all workers at the first submit), then yield results as they finish.

    A DuckDB connection this process holds only through a reference cycle would be destroyed by a forked
    worker's garbage collector, in a copy of the process without DuckDB's threads: the worker dies
    (SIGSEGV, seen in a child that collected one) or hangs. Such garbage is collected here, and what is left
    frozen (``gc.freeze``: no worker's collector touches it) while the workers fork."""
    gc.collect()
    gc.freeze()
    try:
        pool = ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=_pool_context(),
                                   initializer=_worker_init)
        pending: set[Future] = {pool.submit(_guarded, runner, spec, config) for spec in todo}
    finally:
        gc.unfreeze()

    def results() -> Iterator[RunResult]:
        nonlocal pending
        while pending:
            finished, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
            for future in finished:
                yield future.result()
        pool.shutdown(wait=True)

    return pool, results()


def _stop_pool(pool: ProcessPoolExecutor | None, grace_seconds: float = 1.0) -> None:
    """Stop every worker: SIGTERM (each kills its agent's process group), then SIGKILL after ``grace_seconds``."""
    if pool is None:
        return
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for proc in processes:
        with contextlib.suppress(OSError, ValueError):
            os.kill(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_seconds
    for proc in processes:
        proc.join(max(0.0, deadline - time.monotonic()))
    for proc in processes:
        if proc.is_alive():
            with contextlib.suppress(OSError, ValueError):
                proc.kill()
    # The pool's manager thread closes its wake-up pipe once it sees the workers gone; interpreter
    # exit writes to that pipe without a lock (CPython 3.11), so exiting while the thread was still
    # closing it printed 'OSError: [Errno 9] Bad file descriptor' with a traceback. Wait for it
    # (shutdown forgets the thread, so it is taken first).
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    if manager is not None:
        manager.join(grace_seconds)


_RAY_LOST = ("WorkerCrashedError", "NodeDiedError", "LocalRayletDiedError", "ObjectLostError", "OwnerDiedError",
             "RaySystemError")


def _run_ray(todo: list[RunSpec], config: CampaignConfig, jobs: int, address: str | None,
             runner: Runner) -> Iterator[RunResult]:
    try:
        import ray
    except ImportError as exc:
        raise CampaignError("--executor ray needs Ray: pip install 'clinbench[ray]'") from exc
    started_here = not ray.is_initialized()
    if started_here:
        kwargs = {"address": address} if address else {"num_cpus": jobs}
        ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False, **kwargs)
    # A worker or node that dies takes its run with it: Ray runs it again once (max_retries counts
    # only such system failures; execute_run turns every agent or task failure into a status).
    # Lost twice, the run is recorded as a harness error and the campaign goes on.
    lost = tuple(getattr(ray.exceptions, n) for n in _RAY_LOST if hasattr(ray.exceptions, n))
    try:
        remote = ray.remote(num_cpus=1, max_retries=1, retry_exceptions=False)(runner)
        spec_of = {}
        for spec in todo:
            spec_of[remote.remote(spec, config)] = spec
        pending = list(spec_of)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                try:
                    result = ray.get(ref)
                except lost as exc:
                    result = config.lost(spec_of[ref], f"Ray worker lost twice ({type(exc).__name__}): "
                                                            f"{' '.join(str(exc).split())[:200]}")
                yield result
    finally:
        if started_here:
            ray.shutdown()

