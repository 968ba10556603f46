"""Shared test fixtures. Fixtures are made by code; real open data comes from ../shared/data."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = (REPO.parent / "shared" / "data").resolve()
MIMIC_DEMO = SHARED_DATA / "mimic-iv-demo-2.2"
EICU_DEMO = SHARED_DATA / "eicu-demo-2.0.1"

# Every Ray of the session starts with token authentication off. Left unset, ray.init() turns it on for
# itself and its children whenever ~/.ray/auth_token exists (which `ray start` writes), while a Ray
# config already loaded in the same worker (the cluster test sets "disabled") stays off: the new GCS
# then refused the driver ("InvalidAuthToken ... RAY_AUTH_MODE is currently 'disabled'"), 2 runs in 10.
os.environ.setdefault("RAY_AUTH_MODE", "disabled")


def pytest_collection_modifyitems(items):
    """Files holding a ``waits_first`` test go first: with one file per worker (--dist loadfile), a
    long sleep then overlaps the other workers' work instead of ending the session after it."""
    first = {item.path for item in items if item.get_closest_marker("waits_first")}
    items.sort(key=lambda item: item.path not in first)  # stable: the order within each part is kept


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is absent: the real open demo data lives in ../shared/data beside the repository")
    return path


@pytest.fixture
def tmpfs(tmp_path):
    """``tmpfs(name, options)``: a tmpfs mounted at ``tmp_path / name`` (e.g. ``size=1m`` for a full disk,
    ``size=1m,ro`` for a read-only one), unmounted after the test; the test is skipped where mounting needs
    root and it is not."""
    mounts = []

    def mount(name, options):
        path = tmp_path / name
        path.mkdir()
        res = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True, text=True)
        if res.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here ({res.stderr.strip() or 'mount failed'}); needs root")
        mounts.append(path)
        return path

    yield mount
    for path in mounts:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    return _need(SHARED_DATA)


@pytest.fixture(scope="session")
def mimic_demo_dir() -> Path:
    return _need(MIMIC_DEMO)


@pytest.fixture(scope="session")
def eicu_demo_dir() -> Path:
    return _need(EICU_DEMO)


@pytest.fixture(scope="session", autouse=True)
def every_stored_run_spends_no_more_model_seconds_than_it_lasted(tmp_path_factory):
    """Over every results store the test session wrote: a run's model seconds and harness seconds are
    each within its wall-clock seconds (overlapping retries once counted 768.5 model-seconds in a
    300.5 s run). Checked when the session ends; a violation is an error naming the run."""
    yield
    import duckdb

    over = []
    base = Path(tmp_path_factory.getbasetemp())
    stores = list(base.rglob("results.duckdb"))
    if os.environ.get("PYTEST_XDIST_WORKER") == "gw0":  # what made_once made for every worker, checked by one
        stores += list((base.parent / "built-once").rglob("results.duckdb"))
    for store in stores:
        try:
            con = duckdb.connect(str(store), read_only=True)
        except duckdb.Error:
            continue
        try:
            rows = con.execute("SELECT r.run_id, r.elapsed_seconds, u.model_seconds, u.harness_seconds FROM runs r "
                               "JOIN usage u USING (run_id) WHERE r.elapsed_seconds IS NOT NULL").fetchall()
        except duckdb.Error:
            rows = []
        finally:
            con.close()
        for run_id, wall, model, harness in rows:
            if (model or 0) > wall + 0.5 or (harness or 0) > wall + 0.5:
                over.append(f"{store.parent.name}/{run_id}: {model} model s + {harness} harness s in {wall:.1f} s")
    assert not over, "usage seconds past the run's wall-clock time:\n" + "\n".join(over[:20])


def _once(tmp_path_factory: pytest.TempPathFactory, name: str):
    """The session's shared folder (one for all xdist workers) and an exclusive lock on ``name`` in it."""
    import contextlib
    import fcntl
    import os

    base = Path(tmp_path_factory.getbasetemp())
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "built-once"
    shared.mkdir(exist_ok=True)

    @contextlib.contextmanager
    def locked():
        with open(shared / f"{name}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield shared
    return locked()


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build) -> Path:
    """A database built once per test session however many xdist workers want it: the first
    builds it (``build(path)``) under a lock in the session's shared temporary folder, and each
    worker gets a copy of its own (DuckDB lets one process write a file)."""
    import shutil

    with _once(tmp_path_factory, name) as shared:
        done = shared / name
        if not done.exists():
            partial = shared / f"partial-{name}"  # still ends in .duckdb, as the writers ask
            partial.unlink(missing_ok=True)
            build(partial)
            partial.rename(done)
    mine = tmp_path_factory.mktemp(name.split(".")[0]) / name
    shutil.copyfile(done, mine)
    return mine


def made_once(tmp_path_factory: pytest.TempPathFactory, name: str, make):
    """An object made once per test session however many xdist workers want it: the first calls
    ``make(folder)`` (a folder in the session's shared temporary folder, kept for the session) under a
    lock and pickles what it returns; every worker reads that pickle. For read-only results only."""
    import pickle

    with _once(tmp_path_factory, name) as shared:
        done = shared / f"{name}.pickle"
        if not done.exists():
            folder = shared / name
            folder.mkdir()  # a builder that died leaves it behind: fail loudly rather than reuse half of it
            made = make(folder)
            partial = shared / f"partial-{name}.pickle"
            partial.write_bytes(pickle.dumps(made))
            partial.rename(done)
    return pickle.loads(done.read_bytes())


def warm_dx_cache(cache: Path) -> Path:
    """``cache``, a fresh $CLINBENCH_CACHE for a test's processes, holding the ICD-10-CM caches every dx
    process reads: built once in this session's own cache, then copied (a cold cache costs each new dx
    process about 10 s; building them is tested in tests/dx/test_dx_icd_index.py)."""
    import shutil

    from clinbench.dx import icd, icd_index, specificity

    specificity._index()  # builds both caches where absent (the ICD tree first)
    icd._term_table()  # and the names' normal forms (a case without a code is looked up in them)
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "icd10cm").mkdir(exist_ok=True)
    tree, words, terms = icd_index._cache_file(), specificity.words_cache_file(), icd.terms_cache_file()
    shutil.copyfile(tree, cache / "icd10cm" / tree.name)
    shutil.copyfile(terms, cache / "icd10cm" / terms.name)
    shutil.copyfile(words, cache / words.name)
    return cache
