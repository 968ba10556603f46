"""Run a campaign: the matrix minus the runs already recorded, in parallel, recorded as they finish.

Only this process writes the store and publishes evidence, one finished run at a time
(``evidence.publish`` then ``Store.record``): a campaign killed at any moment loses only
the runs in flight, and a rerun of the same command skips every recorded run. A lock
file keeps two campaigns from sharing one folder.

Executors: ``local`` (worker processes, ``--jobs``) and ``ray`` (one Ray task per run, for
many machines on a shared folder; ``pip install 'clinbench[ray]'``).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import signal
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

from clinbench.campaign import evidence
from clinbench.campaign.execute import CampaignConfig, RunResult, execute_run
from clinbench.campaign.matrix import RunSpec
from clinbench.campaign.store import RunRecord, Store
from clinbench.errors import ClinbenchError
from clinbench.versions import record_versions

Runner = Callable[[RunSpec, CampaignConfig], RunResult]
LOCK_FILE = ".campaign.lock"


class CampaignError(ClinbenchError):
    """The campaign cannot start or its executor failed."""


@dataclass
class CampaignSummary:
    planned: int
    skipped: int
    finished: int = 0
    by_status: dict[str, int] = field(default_factory=dict)
    timings: list[dict[str, float]] = field(default_factory=list)


class Reporter:
    """Receives progress; the CLI passes a Rich one. This base class reports nothing."""

    def start(self, total: int, skipped: int) -> None:
        """Called once with the number of runs to do."""

    def finished(self, record: RunRecord) -> None:
        """Called after each run is recorded."""

    def stop(self) -> None:
        """Called once at the end."""


@contextlib.contextmanager
def campaign_lock(out: Path) -> Iterator[None]:
    out.mkdir(parents=True, exist_ok=True)
    with (out / LOCK_FILE).open("a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise CampaignError(f"another campaign is running in {out}; wait for it or use another --out") from exc
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _die_with_parent() -> None:
    """Worker initializer: the kernel kills this worker when the campaign process dies (Linux)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def run_campaign(specs: list[RunSpec], config: CampaignConfig, *, jobs: int = 1, executor: str = "local",
                 ray_address: str | None = None, runner: Runner = execute_run,
                 reporter: Reporter | None = None, retry_failed: bool = False) -> CampaignSummary:
    """Run every spec not yet recorded in ``config.out`` (and, with ``retry_failed``, those recorded
    as error or timeout: their new record replaces the old); return counts by status."""
    out = Path(config.out)
    if jobs < 1:
        raise CampaignError("--jobs must be at least 1")
    if executor not in ("local", "ray"):
        raise CampaignError(f"unknown executor {executor!r}: use 'local' or 'ray'")
    reporter = reporter or Reporter()
    with campaign_lock(out):
        store = Store.create(out)
        record_versions(out)  # versions.json: clinbench, DuckDB and SDK versions this campaign ran with
        evidence.clear_leftovers(out)
        done = store.run_ids()
        if retry_failed:
            done -= {r["run_id"] for r in store.runs() if r["status"] != "ok"}
        unique = list(dict.fromkeys(specs))
        todo = [s for s in unique if s.run_id not in done]
        summary = CampaignSummary(planned=len(unique), skipped=len(unique) - len(todo))
        if executor == "ray":
            results = _run_ray(todo, config, jobs, ray_address, runner)
        elif jobs == 1 or len(todo) <= 1:
            results = (runner(spec, config) for spec in todo)
        else:
            results = _run_local(todo, config, jobs, runner)  # forks its workers now, before any progress thread
        reporter.start(len(todo), summary.skipped)
        try:
            for result in results:
                _record(store, out, result)
                summary.finished += 1
                summary.by_status[result.record.status] = summary.by_status.get(result.record.status, 0) + 1
                summary.timings.append(result.timings)
                reporter.finished(result.record)
        finally:
            reporter.stop()
    return summary


def _record(store: Store, out: Path, result: RunResult) -> None:
    evidence.publish(Path(result.partial_dir), out, result.record.run_id)
    store.record(result.record)


def _run_local(todo: list[RunSpec], config: CampaignConfig, jobs: int, runner: Runner) -> Iterator[RunResult]:
    """Submit every run now (fork starts all workers at the first submit), then yield results as they finish."""
    # fork: workers inherit the loaded modules, so they start fast; forking before the
    # progress display starts keeps its thread's locks out of the children.
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=get_context("fork"),
                               initializer=_die_with_parent)
    pending: set[Future] = {pool.submit(runner, spec, config) for spec in todo}

    def results() -> Iterator[RunResult]:
        nonlocal pending
        with pool:
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    yield future.result()

    return results()


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
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(runner)
        pending = [remote.remote(spec, config) for spec in todo]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                yield ray.get(ref)
    finally:
        if started_here:
            ray.shutdown()

