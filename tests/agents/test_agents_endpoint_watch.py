"""A run whose model endpoint is down is stopped early, as the endpoint's failure, and an agent
cannot get its own run called the endpoint's failure by making the endpoint refuse its requests.

The agent here is a program in the sandbox that POSTs through the run's egress proxy, as a CLI
does; the endpoint is a closed port (down) or a real HTTP server that refuses the agent's bodies
with HTTP 500 but answers the harness's own check (up)."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from clinbench.agents.attribution import EndpointWatch
from clinbench.agents.base import RunContext, Workspace
from clinbench.agents.command import CommandAgent
from clinbench.agents.sandbox import BwrapSandbox, bwrap_available

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)

needs_bwrap = pytest.mark.skipif(not bwrap_available(), reason="bubblewrap cannot create namespaces here")

AGENT = """
import os, time, urllib.request
url = os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions"
end = time.monotonic() + float(os.environ.get("SECONDS_TO_TRY", "{seconds}"))
while time.monotonic() < end:
    try:
        urllib.request.urlopen(urllib.request.Request(url, data=b'{{"bogus": true}}',
                               headers={{"Content-Type": "application/json"}}), timeout=5).read()
    except Exception as exc:
        print("request failed:", type(exc).__name__, flush=True)
    time.sleep(0.2)
open("output.csv", "w").write("stay_id,x\\n1,2\\n")
print("wrote output.csv")
"""


def _agent(workspace, base_url, seconds):
    (workspace / "agent.py").write_text(AGENT.format(seconds=seconds))
    return CommandAgent("python3 {workspace}/agent.py", sandbox=BwrapSandbox(), base_url=base_url,
                        endpoint_down_seconds=2)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@needs_bwrap
def test_a_run_whose_endpoint_is_down_stops_after_the_wait_not_at_its_timeout(workspace, tmp_path):
    agent = _agent(workspace, f"http://127.0.0.1:{_closed_port()}/v1", seconds=120)
    ctx = RunContext(evidence_dir=tmp_path / "ev", task_id="t", timeout_seconds=120)
    started = time.monotonic()
    outcome = agent.run(Workspace.from_dir(workspace), ctx)
    elapsed = time.monotonic() - started
    assert outcome.status == "harness-error", outcome.error
    assert outcome.error.startswith("model endpoint failed: POST /v1/chat/completions: connection refused")
    assert "stopped after 2 s in which the model endpoint answered no request" in outcome.error
    assert elapsed < 60 and outcome.output_csv is None  # not the 120 s the agent would have gone on


class _RefusesBogusBodies(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        if b"bogus" in body:
            status, reply = 500, {"error": {"message": "cannot parse the request"}}
        else:  # a well-formed request
            status, reply = 200, {"id": "c", "object": "chat.completion", "model": "m", "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}
        data = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802  (the harness's check of a native endpoint: GET base_url, 404 as vLLM says)
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@needs_bwrap
def test_an_agent_that_makes_the_endpoint_refuse_it_is_not_stopped_and_its_failures_stay_its_own(workspace, tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _RefusesBogusBodies)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        agent = _agent(workspace, f"http://127.0.0.1:{server.server_port}/v1", seconds=6)
        ctx = RunContext(evidence_dir=tmp_path / "ev", task_id="t", timeout_seconds=60)
        started = time.monotonic()
        outcome = agent.run(Workspace.from_dir(workspace), ctx)
    finally:
        server.shutdown()
    log = [json.loads(line) for line in (ctx.evidence_dir / "egress.jsonl").read_text().splitlines()]
    refused = [e for e in log if e.get("status") == 500]
    assert len(refused) >= 10  # 6 s of refused requests, three times the 2 s wait
    assert outcome.status == "ok" and outcome.output_csv is not None, outcome.error
    assert time.monotonic() - started >= 6  # it ran as long as it wanted


def test_the_watch_asks_the_endpoint_only_after_the_wait_and_again_a_wait_later():
    down, asked = [0.0], []

    def check():
        asked.append(down[0])
        return None if down[0] < 5 else "connection refused (ConnectError)"

    watch = EndpointWatch(lambda: down[0], check, seconds=2)
    for t in (0.0, 1.9, 2.0, 3.9, 4.0, 4.5, 6.0):
        down[0] = t
        verdict = watch()
    assert asked == [2.0, 4.0, 6.0]  # up at 2 s and 4 s: looked at again 2 s later each time
    assert verdict.startswith("stopped after 6 s in which the model endpoint answered no request")
    down[0] = 0.0  # an answer resets the wait
    assert watch() is None and asked == [2.0, 4.0, 6.0]
