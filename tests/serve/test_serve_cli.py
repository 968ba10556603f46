"""`clinbench serve` from the command line: one URL with a token, refusals in one line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)


def _serve(*args: str, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "clinbench", "serve", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


@pytest.fixture
def env(tmp_path):
    return {**os.environ, "CLINBENCH_CACHE": str(tmp_path / "cache")}


def test_prints_one_url_whose_token_opens_it_and_nothing_else_does(tmp_path, env):
    proc = _serve(str(tmp_path), "--port", "0", env=env)
    try:
        lines = [proc.stdout.readline() for _ in range(2)]
        urls = re.findall(r"http://127\.0\.0\.1:\d+/\?token=[\w-]+", "".join(lines))
        assert len(urls) == 1, lines
        with urllib.request.urlopen(urls[0], timeout=20) as res:
            assert res.status == 200 and "Campaigns" in res.read().decode()
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(urls[0].split("?")[0], timeout=20)
        assert err.value.code == 403
    finally:
        proc.terminate()
        proc.wait(10)
    # the clinicians' store is the folder's play/ (no dx store was given): a dx store, created empty
    assert (tmp_path / "play" / "results.duckdb").is_file()


def test_refuses_to_drop_the_token_off_loopback_and_names_a_missing_folder(tmp_path, env, monkeypatch):
    monkeypatch.setenv("CLINBENCH_CACHE", env["CLINBENCH_CACHE"])
    res = subprocess.run([sys.executable, "-m", "clinbench", "serve", str(tmp_path), "--host", "0.0.0.0",
                          "--no-token"], capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 2 and "--host 0.0.0.0 is reachable from other machines: it needs the access token" in res.stderr
    assert "Traceback" not in res.stderr
    from clinbench.errors import ClinbenchError
    from clinbench.serve.launch import prepare

    with pytest.raises(ClinbenchError, match="no such folder: .*nope; pass campaign folders"):
        prepare([tmp_path / "nope"])  # what `clinbench serve` prints in one line, exit 2
