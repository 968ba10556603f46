"""`data fetch`: real HTTP on 127.0.0.1 serving copies of demo files, through the real download code."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys

import duckdb
import pytest

from clinbench.ehr.fetch import BASE_URL_ENV, FetchEvent, fetch_demo
from clinbench.ehr.load import load_mimic_iv, read_checksums
from clinbench.errors import DataError

SMALL_MIMIC_FILES = ("LICENSE.txt", "hosp/patients.csv.gz", "hosp/admissions.csv.gz", "icu/icustays.csv.gz")


@pytest.fixture
def mimic_server(file_server, mimic_demo_dir, monkeypatch):
    """A PhysioNet-like tree holding four demo files and their official checksum lines."""
    root, url, server = file_server
    demo = root / "mimic-iv-demo" / "2.2"
    official = read_checksums(mimic_demo_dir / "SHA256SUMS.txt")
    lines = []
    for rel in SMALL_MIMIC_FILES:
        (demo / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(mimic_demo_dir / rel, demo / rel)
        lines.append(f"{official[rel]}  {rel}")
    (demo / "SHA256SUMS.txt").write_text("\n".join(lines) + "\n")
    monkeypatch.setenv(BASE_URL_ENV, url)
    return demo, url, server


def test_fetch_downloads_verifies_and_the_result_loads(mimic_server, mimic_demo_dir, tmp_path):
    demo, _, _ = mimic_server
    report = fetch_demo("mimic-iv-demo", tmp_path / "data")
    assert report.path == tmp_path / "data" / "mimic-iv-demo-2.2"
    assert sorted(report.downloaded) == sorted(SMALL_MIMIC_FILES)
    assert report.unavailable == [] and report.resumed == []
    for rel in SMALL_MIMIC_FILES:
        assert (report.path / rel).read_bytes() == (mimic_demo_dir / rel).read_bytes()
    assert not list(report.path.rglob("*.part"))
    out = load_mimic_iv(report.path, tmp_path / "fetched.duckdb", partial=True, verify=True)
    con = duckdb.connect(str(out), read_only=True)
    assert con.execute("SELECT count(*) FROM mimiciv_hosp.admissions").fetchone()[0] == 275
    con.close()


def test_fetch_resumes_a_partial_file_with_a_range_request(mimic_server, mimic_demo_dir, tmp_path):
    demo, _, server = mimic_server
    requests = server.requests
    whole = (mimic_demo_dir / "hosp" / "admissions.csv.gz").read_bytes()
    half = len(whole) // 2
    target = tmp_path / "data" / "mimic-iv-demo-2.2" / "hosp" / "admissions.csv.gz.part"
    target.parent.mkdir(parents=True)
    target.write_bytes(whole[:half])
    events: list[FetchEvent] = []
    report = fetch_demo("mimic-iv-demo", tmp_path / "data", progress=events.append)
    assert report.resumed == ["hosp/admissions.csv.gz"]
    assert ("/mimic-iv-demo/2.2/hosp/admissions.csv.gz", f"bytes={half}-") in requests
    start = next(e for e in events if e.kind == "start" and e.file == "hosp/admissions.csv.gz")
    assert (start.resumed_from, start.bytes) == (half, len(whole))
    received = sum(e.bytes for e in events if e.kind == "advance" and e.file == "hosp/admissions.csv.gz")
    assert received == len(whole) - half
    assert (report.path / "hosp" / "admissions.csv.gz").read_bytes() == whole


def test_second_fetch_downloads_nothing(mimic_server, tmp_path):
    _, _, server = mimic_server
    requests = server.requests
    fetch_demo("mimic-iv-demo", tmp_path / "data")
    requests.clear()
    report = fetch_demo("mimic-iv-demo", tmp_path / "data")
    assert report.downloaded == [] and sorted(report.already_present) == sorted(SMALL_MIMIC_FILES)
    assert [path for path, _ in requests] == ["/mimic-iv-demo/2.2/SHA256SUMS.txt"]


def test_an_interrupted_fetch_resumes_on_the_next_run(mimic_server, mimic_demo_dir, tmp_path):
    _, _, server = mimic_server
    path = "/mimic-iv-demo/2.2/hosp/admissions.csv.gz"
    server.cut_once[path] = 4000  # the connection drops after 4000 bytes
    with pytest.raises(DataError, match="run the fetch again to resume"):
        fetch_demo("mimic-iv-demo", tmp_path / "data")
    part = tmp_path / "data" / "mimic-iv-demo-2.2" / "hosp" / "admissions.csv.gz.part"
    assert part.stat().st_size == 4000
    report = fetch_demo("mimic-iv-demo", tmp_path / "data")
    assert report.resumed == ["hosp/admissions.csv.gz"]
    assert (path, "bytes=4000-") in server.requests
    assert (report.path / "hosp" / "admissions.csv.gz").read_bytes() == (mimic_demo_dir / "hosp" / "admissions.csv.gz").read_bytes()


def test_a_server_ignoring_ranges_gets_a_fresh_download(mimic_server, mimic_demo_dir, tmp_path):
    _, _, server = mimic_server
    server.honour_ranges = False
    whole = (mimic_demo_dir / "hosp" / "admissions.csv.gz").read_bytes()
    part = tmp_path / "data" / "mimic-iv-demo-2.2" / "hosp" / "admissions.csv.gz.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(whole[:3000])
    report = fetch_demo("mimic-iv-demo", tmp_path / "data")
    assert report.resumed == []  # a 200 answer to a Range request restarts the file
    assert (report.path / "hosp" / "admissions.csv.gz").read_bytes() == whole


def test_checksum_failure_names_the_file_and_deletes_it(mimic_server, tmp_path):
    demo, _, _ = mimic_server
    served = demo / "hosp" / "patients.csv.gz"
    data = bytearray(served.read_bytes())
    data[-10] ^= 0xFF  # one flipped byte near the end
    served.write_bytes(bytes(data))
    with pytest.raises(DataError) as err:
        fetch_demo("mimic-iv-demo", tmp_path / "data")
    message = str(err.value)
    assert message.startswith("checksum mismatch for hosp/patients.csv.gz downloaded from http://127.0.0.1:")
    assert "\n" not in message
    folder = tmp_path / "data" / "mimic-iv-demo-2.2" / "hosp"
    assert not (folder / "patients.csv.gz").exists() and not (folder / "patients.csv.gz.part").exists()


def test_files_the_server_lacks_are_reported_and_skipped(file_server, eicu_demo_dir, tmp_path, monkeypatch):
    # The official eICU listing (31 tables, LICENSE, the SQLite bundle) with only three files served,
    # as with the shared copy that lacks nurseCharting, vitalPeriodic, intakeOutput and lab.
    root, url, _ = file_server
    demo = root / "eicu-crd-demo" / "2.0.1"
    demo.mkdir(parents=True)
    for name in ("SHA256SUMS.txt", "LICENSE.txt", "patient.csv.gz", "hospital.csv.gz"):
        shutil.copy(eicu_demo_dir / name, demo / name)
    monkeypatch.setenv(BASE_URL_ENV, url)
    warnings: list[str] = []
    report = fetch_demo("eicu-demo", tmp_path, progress=lambda e: warnings.append(e.message) if e.kind == "warning" else None)
    listed = read_checksums(eicu_demo_dir / "SHA256SUMS.txt")
    assert sorted(report.downloaded) == ["LICENSE.txt", "hospital.csv.gz", "patient.csv.gz"]
    assert sorted(report.unavailable) == sorted(set(listed) - set(report.downloaded))
    assert "nurseCharting.csv.gz" in report.unavailable and "sqlite/eicu_v2_0_1.sqlite3.gz" in report.unavailable
    assert "nurseCharting.csv.gz is listed in SHA256SUMS.txt but not on the server: skipped" in warnings
    assert sorted(p.name for p in report.path.iterdir()) == [
        "LICENSE.txt", "SHA256SUMS.txt", "hospital.csv.gz", "patient.csv.gz"]


def test_unreachable_server_and_unknown_demo(tmp_path, monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv(BASE_URL_ENV, f"http://127.0.0.1:{port}")
    with pytest.raises(DataError, match=rf"^cannot reach http://127.0.0.1:{port}/mimic-iv-demo/2.2/SHA256SUMS.txt"):
        fetch_demo("mimic-iv-demo", tmp_path)
    with pytest.raises(DataError, match="unknown demo 'mimic-iii-demo': choose one of mimic-iv-demo, eicu-demo"):
        fetch_demo("mimic-iii-demo", tmp_path)


def test_unsafe_paths_in_the_listing_are_refused(file_server, tmp_path, monkeypatch):
    root, url, _ = file_server
    demo = root / "mimic-iv-demo" / "2.2"
    demo.mkdir(parents=True)
    (demo / "SHA256SUMS.txt").write_text("a" * 64 + "  ../../outside.txt\n")
    monkeypatch.setenv(BASE_URL_ENV, url)
    with pytest.raises(DataError, match="lists an unsafe path '../../outside.txt'"):
        fetch_demo("mimic-iv-demo", tmp_path / "data")


@pytest.mark.slow
def test_cli_fetch_prints_licence_and_attribution(mimic_server, tmp_path):
    _, url, _ = mimic_server
    env = {**os.environ, BASE_URL_ENV: url}
    run = subprocess.run([sys.executable, "-m", "clinbench", "data", "fetch", "mimic-iv-demo", "--dest", str(tmp_path)],
                         capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "4 downloaded, 0 already present, all verified" in out
    assert "Open Data Commons Open Database License v1.0" in out
    assert "https://doi.org/10.13026/dp1f-ex47" in out and "PhysioBank, PhysioToolkit, and PhysioNet" in out
    assert f"next: clinbench data load mimic-iv {tmp_path / 'mimic-iv-demo-2.2'} --out mimic-iv-demo.duckdb" in out


@pytest.mark.slow
def test_a_dest_that_cannot_be_created_is_a_one_line_error(tmp_path):
    blocker = tmp_path / "data"
    blocker.write_text("a file where the folder should go")
    done = subprocess.run([sys.executable, "-m", "clinbench", "data", "fetch", "mimic-iv-demo", "--dest", str(blocker)],
                          capture_output=True, text=True, env={**os.environ, BASE_URL_ENV: "http://127.0.0.1:9"})
    assert done.returncode == 2
    assert done.stderr.strip() == (f"error: cannot create {blocker / 'mimic-iv-demo-2.2'} (Not a directory): "
                                   "choose another --out")


def test_a_failed_fetch_leaves_no_empty_folder_behind(file_server, tmp_path, monkeypatch):
    """An unreachable server or a listing with nothing on the server left `--out data/` holding an empty
    demo folder (or the listing alone): now nothing is left, and the error is one line."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv(BASE_URL_ENV, f"http://127.0.0.1:{port}")
    with pytest.raises(DataError) as err:
        fetch_demo("mimic-iv-demo", tmp_path / "data")
    assert "\n" not in str(err.value) and not (tmp_path / "data").exists()
    root, url, _ = file_server
    demo = root / "mimic-iv-demo" / "2.2"
    demo.mkdir(parents=True)
    (demo / "SHA256SUMS.txt").write_text("a" * 64 + "  hosp/patients.csv.gz\n")  # listed, not served
    monkeypatch.setenv(BASE_URL_ENV, url)
    (tmp_path / "kept").mkdir()
    with pytest.raises(DataError, match="none of the 1 files listed"):
        fetch_demo("mimic-iv-demo", tmp_path / "kept")
    assert list((tmp_path / "kept").iterdir()) == []  # a folder the user made stays, empty as it was
