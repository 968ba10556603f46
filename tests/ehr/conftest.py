"""Fixtures for the ehr tests: the real demos loaded once per session, small hand-made
PhysioNet folders, and a Range-capable HTTP server on loopback for the fetch tests."""

from __future__ import annotations

import threading
from functools import partial
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from clinbench.ehr.load import load_eicu, load_mimic_iv
from ehr_helpers import PATIENTS_CSV, RangeHandler, write_gz


@pytest.fixture(scope="session")
def mimic_demo_db(mimic_demo_dir, tmp_path_factory) -> Path:
    """The MIMIC-IV demo 2.2 loaded once (about 3 s); tests must only read it."""
    return load_mimic_iv(mimic_demo_dir, tmp_path_factory.mktemp("mimic") / "mimic-demo.duckdb")


@pytest.fixture(scope="session")
def eicu_demo_db(eicu_demo_dir, tmp_path_factory) -> Path:
    """The eICU demo 2.0.1 copy loaded once with partial=True (it lacks 4 official tables)."""
    return load_eicu(eicu_demo_dir, tmp_path_factory.mktemp("eicu") / "eicu-demo.duckdb", partial=True)


@pytest.fixture
def small_mimic(tmp_path) -> Path:
    """A MIMIC-IV folder holding only hosp/patients (3 rows): loads with partial=True."""
    root = tmp_path / "mimic"
    write_gz(root / "hosp" / "patients.csv.gz", PATIENTS_CSV)
    (root / "icu").mkdir()
    return root


@pytest.fixture
def file_server(tmp_path):
    """Serve a folder on 127.0.0.1; yields (root folder, base_url, server) — see RangeHandler's knobs."""
    root = tmp_path / "served"
    root.mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(RangeHandler, directory=str(root)))
    server.requests = []
    server.honour_ranges = True
    server.cut_once = {}
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}", server
    finally:
        server.shutdown()
        server.server_close()
