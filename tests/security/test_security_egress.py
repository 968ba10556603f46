"""The egress proxy reaches only the allow-listed endpoint, and never outlives the run's deadline."""

from __future__ import annotations

import pytest
import json
import socket
import threading
import time

from clinbench.agents.egress import EgressProxy
from clinbench.agents.factory import AgentOptions
from clinbench.campaign.campaign import run_campaign
from clinbench.campaign.execute import CampaignConfig
from clinbench.campaign.matrix import RunSpec
from clinbench.records.store import Store

from campaign.campaign_fixtures import build_tiny_db
from hostile_campaign import LIMITS, TASK, Listener, needs_bwrap
from hostile_agent import write_hostile_agent


@pytest.mark.slow
def test_proxy_smuggling_reaches_no_other_host(hostile):
    seen = hostile.seen("proxy-smuggling")
    assert hostile.listeners["evil"].connections == 0
    assert seen["absolute"].startswith("HTTP/1.1 403") and seen["connect"].startswith("HTTP/1.1 403")
    assert seen["userinfo"].startswith("HTTP/1.1 400")  # no Host header: malformed HTTP/1.1, refused by h11
    # a forged Host: header went to the allowed endpoint only, Host rewritten
    assert b"Host: 127.0.0.1:%d" % hostile.listeners["evil"].address[1] not in hostile.listeners["endpoint"].received.split(b"\r\n\r\n")[0]
    log = [json.loads(line) for line in (hostile.folder("proxy-smuggling") / "egress.jsonl").read_text().splitlines()]
    # refused: absolute, connect, userinfo and the pipelined second request (parsed and logged on its own)
    assert sum(not e["allowed"] for e in log) == 4
    assert [e["target"] for e in log if not e["allowed"] and e["method"] == "GET"] == [
        f"http://127.0.0.1:{hostile.listeners['evil'].address[1]}/steal"] * 2
    assert any("refused egress" in r for r in hostile.reasons["proxy-smuggling"])
    assert hostile.rows["proxy-smuggling"]["publishable"] is False


@needs_bwrap
@pytest.mark.slow
def test_a_hung_model_endpoint_cannot_keep_a_run_past_its_timeout(tmp_path, monkeypatch):
    # before: a hung endpoint kept a 15 s-timeout run alive 6 min 41 s
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    hung = Listener(socket.AF_INET, ("127.0.0.1", 0))  # accepts, reads, never answers
    hung._talk = lambda conn: (conn.recv(65536), time.sleep(600))
    program = write_hostile_agent(tmp_path / "tools", {})
    options = AgentOptions(agent_command=f"{program} {{model}} {{workspace}}", sandbox="bwrap", sandbox_limits=LIMITS,
                           base_url=f"http://127.0.0.1:{hung.address[1]}/v1")
    out = tmp_path / "camp"
    start = time.monotonic()
    run_campaign([RunSpec(TASK, "no-skill", "native", "command", "hung-endpoint", 0)],
                 CampaignConfig(db=str(build_tiny_db(tmp_path / "db.duckdb")), out=str(out), options=options,
                                timeout_seconds=3))
    elapsed = time.monotonic() - start
    hung.close()
    row = Store.open(out).runs()[0]
    manifest = json.loads((out / row["evidence_dir"] / "manifest.json").read_text())
    assert row["status"] == "agent-failed" and manifest["limit_hit"] == "timeout" and row["reward"] == 0.0
    assert elapsed < 20, f"the campaign took {elapsed:.0f} s for a 3 s timeout"
    log = [json.loads(line) for line in (out / row["evidence_dir"] / "egress.jsonl").read_text().splitlines()]
    assert log and log[0]["allowed"] is True and log[0]["target"] == "/v1/responses" and log[0]["cut"] == "the run's deadline"


def test_the_proxy_cuts_a_relay_at_the_deadline_and_on_stop(tmp_path):
    upstream = socket.socket()
    upstream.bind(("127.0.0.1", 0))
    upstream.listen(4)
    held = []
    threading.Thread(target=lambda: held.extend(upstream.accept() for _ in range(2)), daemon=True).start()
    port = upstream.getsockname()[1]
    proxy = EgressProxy(f"http://127.0.0.1:{port}/v1", tmp_path / "p.sock", tmp_path / "egress.jsonl").start()
    c = socket.socket(socket.AF_UNIX)
    c.connect(str(tmp_path / "p.sock"))
    proxy.deadline = deadline = time.monotonic() + 1.5
    c.sendall(b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
    c.settimeout(10)
    assert c.recv(100) == b""  # the endpoint never answered; the proxy closed at the deadline
    assert time.monotonic() - deadline < 3
    late = socket.socket(socket.AF_UNIX)
    late.connect(str(tmp_path / "p.sock"))
    late.settimeout(10)  # past the deadline the proxy answers at once, before any request
    assert late.recv(100).startswith(b"HTTP/1.1 504")  # past the deadline nothing is relayed
    start = time.monotonic()
    proxy.stop()
    assert time.monotonic() - start < 3
    entries = [json.loads(line) for line in (tmp_path / "egress.jsonl").read_text().splitlines()]
    relayed = [e for e in entries if e["allowed"]]
    assert len(relayed) == 1 and relayed[0]["cut"] == "the run's deadline" and relayed[0]["target"] == "/v1/responses"
    assert [e["reason"] for e in entries if not e["allowed"]] == ["the run's deadline has passed"]
    upstream.close()
