"""Whose failure it was when a model request fails (#30 item 1, #28's rule): a dead endpoint is the
harness's (harness-error, redone by --retry-failed), on the proxy's own evidence; nothing an
agent sends can turn its failure into a harness error."""

from __future__ import annotations

import pytest
import json
import time
import textwrap

from clinbench.agents.factory import AgentOptions
from clinbench.campaign.campaign import run_campaign
from clinbench.campaign.execute import CampaignConfig
from clinbench.campaign.matrix import RunSpec
from clinbench.records.store import Store
from tests.agents.rate_limited_server import RateLimitedServer
from tests.agents.scripted_server import ScriptedServer

from campaign.campaign_fixtures import build_tiny_db
from hostile_campaign import LIMITS, TASK, needs_bwrap

# the agent: one chat request as told by its model name; exit 1 (the CLI's own error) when it fails
PROGRAM = textwrap.dedent('''\
    #!/usr/bin/python3
    import json, os, sys, urllib.request
    mode, base = sys.argv[1], os.environ["OPENAI_BASE_URL"]
    url = "http://bogus.invalid/v1/chat/completions" if mode == "bogus-host" else base + "/chat/completions"
    content = None if mode == "null-content" else "go"  # null content: the server answers 500 to these bytes
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": content}]}).encode()
    proxy = {"http": base.rsplit("/v1", 1)[0]} if mode == "bogus-host" else {}
    opener = urllib.request.build_opener(urllib.request.ProxyHandler(proxy))
    for _ in range(50 if mode == "flood" else 1):  # flood: ask until the endpoint refuses, then fail
        try:
            opener.open(urllib.request.Request(url, body, {"Content-Type": "application/json"}), timeout=20).read()
        except Exception as exc:
            print("agent: request failed:", exc, file=sys.stderr)
            sys.exit(1)
    if mode == "flood":
        sys.exit(1)
    open(os.path.join(sys.argv[2], "output.csv"), "w").write("stay_id\\n1\\n")
''')


def _campaign(tmp_path, port: int, modes: list[str], *, retry: bool = False) -> dict[str, dict]:
    program = tmp_path / "tools" / "agent.py"
    program.parent.mkdir(parents=True, exist_ok=True)
    program.write_text(PROGRAM)
    program.chmod(0o755)
    options = AgentOptions(agent_command=f"{program} {{model}} {{workspace}}", sandbox="bwrap", sandbox_limits=LIMITS,
                           base_url=f"http://127.0.0.1:{port}/v1")
    db = tmp_path / "db.duckdb"
    if not db.exists():
        build_tiny_db(db)
    out = tmp_path / "camp"
    run_campaign([RunSpec(TASK, "no-skill", "native", "command", mode, 0) for mode in modes],
                 CampaignConfig(db=str(db), out=str(out), options=options, timeout_seconds=30), retry_failed=retry, jobs=2)
    return {row["model"]: row for row in Store.open(out).runs()}


def _egress(tmp_path, row) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "camp" / row["evidence_dir"] / "egress.jsonl").read_text().splitlines()]


@needs_bwrap
@pytest.mark.slow
def test_a_dead_endpoint_is_a_harness_error_and_nothing_an_agent_sends_is(tmp_path, monkeypatch):
    # before: "agent exited 1 ... 502 Bad Gateway: connection refused" was agent-failed, reward 0, in every statistic
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    server = ScriptedServer([{"text": "ok"}]).start()
    port = server.port
    server.stop()  # the model server died
    # beside it, an agent asking for another host: refused by the proxy, never dialled, whatever the endpoint's state
    rows = _campaign(tmp_path, port, ["dead-endpoint", "bogus-host"])
    row = rows["dead-endpoint"]
    assert row["status"] == "harness-error" and row["reward"] is None, row["error"]
    assert "model endpoint failed: POST /v1/chat/completions: connection refused" in row["error"]
    assert "the harness's own check after the run failed too (connection refused" in row["error"]
    assert "exited with status 1: agent: request failed: HTTP Error 502" in row["error"]  # what the agent saw, kept
    [entry] = _egress(tmp_path, row)
    assert entry["status"] == 502 and entry["upstream_error"].startswith("connection refused")  # the evidence
    assert rows["bogus-host"]["status"] == "agent-failed" and rows["bogus-host"]["reward"] == 0.0
    assert [e["reason"] for e in _egress(tmp_path, rows["bogus-host"])] == ["host not allow-listed"]
    # the server is back: --retry-failed redoes the endpoint's failure; a body the live endpoint answers 500
    # (null content, as llama-cpp-python does) is the agent's doing
    with ScriptedServer([{"text": "ok"}] * 4, port=port):
        rows = _campaign(tmp_path, port, ["dead-endpoint", "bogus-host", "null-content"], retry=True)
    assert rows["dead-endpoint"]["status"] == "ok" and rows["dead-endpoint"]["reward"] is not None
    for mode in ("bogus-host", "null-content"):
        assert rows[mode]["status"] == "agent-failed" and rows[mode]["reward"] == 0.0, (mode, rows[mode]["error"])
        assert "model endpoint failed" not in rows[mode]["error"]
    [entry] = _egress(tmp_path, rows["null-content"])
    assert entry["status"] == 500 and "upstream_error" not in entry


def test_a_slow_endpoint_is_never_evidence_against_it(tmp_path, monkeypatch):
    # an agent can keep a one-slot model busy past any timeout (a huge prompt): a timed-out request or
    # check proves nothing, so such a run stays the agent's (it ends at its own timeout)
    from clinbench.agents import attribution

    monkeypatch.setattr(attribution, "CHECK_TIMEOUT_SECONDS", 0.5)
    log = tmp_path / "egress.jsonl"
    log.write_text(json.dumps({"method": "POST", "target": "/v1/responses", "allowed": True, "translated": True,
                               "status": 504, "model_request": False, "upstream_error": "no answer in time (30.0 s)"}) + "\n")
    assert attribution.failed_on_endpoint(attribution.log_entries(log)) is None
    with ScriptedServer([{"hang": 5}], wires=("chat",)) as busy:
        assert attribution.check_endpoint(busy.base_url, chat=True, model="m", api_key=None) is None
    log.write_text(json.dumps({"method": "POST", "target": "/v1/responses", "allowed": True, "translated": True,
                               "status": 502, "model_request": False, "upstream_error": "connection refused (x)"}) + "\n")
    assert attribution.failed_on_endpoint(attribution.log_entries(log)) == "POST /v1/responses: connection refused (x)"


@needs_bwrap
@pytest.mark.slow
def test_a_rate_limit_is_never_the_endpoints_failure_whatever_its_window(tmp_path, monkeypatch):
    # an agent that floods a shared key's quota until HTTP 429, then fails: the harness's check after it met the
    # same limit, so the run was a harness error, left out of the statistics and redone by --retry-failed (found by
    # a hostile review). A wait of the limit's Retry-After (at most 120 s) fixed short windows only: a longer
    # window still did it (a later review). A 429 is an endpoint that answered: the run is the agent's failure
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    for name, limit, window in (("short", 3, 2.0), ("hour", 1, 3600.0)):
        with RateLimitedServer(limit=limit, window=window) as srv:  # the agent's next request is refused, and the check
            started = time.monotonic()
            row = _campaign(tmp_path / name, srv.port, ["flood"])["flood"]
        assert (row["status"], row["reward"]) == ("agent-failed", 0.0), (name, row["error"])
        assert [e["status"] for e in _egress(tmp_path / name, row)][-1] == 429  # the evidence it failed on
        assert time.monotonic() - started < 60  # no wait for a limit to pass


def test_a_rate_limit_never_stops_a_run_as_the_endpoint_down():
    # while it runs, the agent may be the one holding the limit (flooding): the run goes on to its own end, and
    # whose failure it was is decided after it, once its requests have stopped
    from clinbench.agents.attribution import EndpointWatch

    assert EndpointWatch(failing_for=lambda: 120.0, check=lambda: "HTTP 429", seconds=60.0)() is None
    stopped = EndpointWatch(failing_for=lambda: 120.0, check=lambda: "connection refused (x)", seconds=60.0)()
    assert stopped.startswith("stopped after 120 s in which the model endpoint answered no request")
