"""Stopping the local pool leaves nothing for interpreter exit to trip over."""

from __future__ import annotations

import concurrent.futures.process as futures_process
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

from clinbench.campaign.campaign import _stop_pool, _worker_init


def _sleep() -> None:
    time.sleep(30)


def test_after_stop_pool_the_manager_thread_has_closed_its_wakeup_pipe():
    """CI once printed 'OSError: [Errno 9] Bad file descriptor' with a traceback after Ctrl-C at --jobs 2:
    exit wrote to the wake-up pipe the pool's manager thread was closing. Right after a bare
    shutdown(wait=False) the thread was still alive in 16 of 20 tries here; _stop_pool waits for it."""
    for _ in range(3):
        pool = ProcessPoolExecutor(max_workers=2, mp_context=get_context("fork"), initializer=_worker_init)
        futures = [pool.submit(_sleep) for _ in range(4)]
        time.sleep(0.1)
        manager = pool._executor_manager_thread
        started = time.monotonic()
        _stop_pool(pool)
        assert time.monotonic() - started < 3
        assert not manager.is_alive()
        assert all(wakeup._closed for wakeup in futures_process._threads_wakeups.values())
        assert all(f.done() for f in futures)
