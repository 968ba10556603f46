"""Another website cannot drive `clinbench serve`: a page elsewhere can make the browser POST to the
server (a form needs no script), and with DNS rebinding read its pages under the site's own name.

Found by a review: under ``--no-token``, a cross-origin POST to /play/start with ``Host: evil.example``
wrote a clinician session."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from clinbench.serve.app import create_app
from clinbench.serve.launch import prepare

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)

HOST = "127.0.0.1:8765"


@pytest.fixture()
def served(tmp_path):
    sources, play = prepare([tmp_path], play_out=tmp_path / "clinicians")
    case_id = play.cases("test")[0].case_id
    return play, case_id, sources


def _client(sources, play, token):
    return TestClient(create_app(sources, token=token, play=play), base_url=f"http://{HOST}",
                      raise_server_exceptions=False, follow_redirects=False)


def test_without_a_token_only_loopback_names_are_answered(served):
    play, _, sources = served
    client = _client(sources, play, None)
    assert client.get("/").status_code == 200
    assert client.get("/", headers={"host": "localhost:8765"}).status_code == 200
    for host in ("[::1]:8765", "localhost.:8765", "[::ffff:127.0.0.1]:8765", "app.localhost:8765"):
        assert client.get("/", headers={"host": host}).status_code == 200, host
    for host in ("evil.example", "evil.example:8765", "127.0.0.1.evil.example", "", "[::1", "[::ffff:10.0.0.1]",
                 "localhost.evil.example"):
        res = client.get("/", headers={"host": host})
        assert res.status_code == 403 and "is not this machine" in res.text, host


def test_a_post_from_another_site_changes_nothing(served):
    play, case_id, sources = served
    form = {"name": "dr-lee", "case_id": str(case_id), "split": "test"}
    for token, cookies in ((None, {}), ("t", {"clinbench_token": "t"})):
        client = _client(sources, play, token)
        client.cookies.update(cookies)
        for headers in ({"origin": "http://evil.example"}, {"origin": "null"},
                        {"origin": "http://127.0.0.1:9999"},  # another server on this machine
                        {"sec-fetch-site": "cross-site", "origin": "null"},
                        {"sec-fetch-site": "same-site", "origin": f"http://{HOST}"}):
            res = client.post("/play/start", data=form, headers=headers)
            assert res.status_code == 403 and "this server's own pages" in res.text, (token, headers)
        assert len(play.sessions()) == (0 if token is None else 1)
        # the server's own page posting its form is served
        # (chromium sent Origin "null" from the server's own pages while they were served with Referrer-Policy
        # no-referrer; the browser tests post the real forms, by a loopback address and by a network name)
        res = client.post("/play/start", data=form, headers={"origin": "null", "sec-fetch-site": "same-origin"})
        assert res.status_code == 303 and res.headers["location"].startswith("/play/")
        assert len(play.sessions()) == (1 if token is None else 2)
