"""A damaged store is its one-line error on the page (the `store rebuild` hint), never a traceback or a 200."""

from __future__ import annotations

from starlette.testclient import TestClient

from clinbench.serve.app import create_app
from clinbench.serve.sources import find_stores
import pytest

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)


def test_a_corrupt_store_says_how_to_rebuild_it(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "results.duckdb").write_text("not a database")
    client = TestClient(create_app(find_stores([tmp_path]), token="t"), raise_server_exceptions=False,
                        cookies={"clinbench_token": "t"})
    assert client.get("/").status_code == 200  # the list still opens, the store's card says why
    for path in ("/c/0", "/c/0/r/any-run", "/c/0/progress.json"):
        res = client.get(path)
        assert res.status_code == 500 and "is corrupt" in res.text and "clinbench store rebuild" in res.text, path
        assert "Traceback" not in res.text
    assert "clinbench store rebuild" in client.get("/c/0/stats.json").json()["error"]
