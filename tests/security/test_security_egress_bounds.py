"""The egress proxy enforces every model request and logs every request, within bounded harness
resources (hardening round 3, items 2-4): each test is an attack that worked before."""

from __future__ import annotations

import pytest
import json
import socket
import threading
import time
import tracemalloc

import duckdb

from clinbench.agents.api_translate import ChatTranslator
from clinbench.agents.egress import EgressProxy
from clinbench.agents.limits import Limits
from clinbench.agents.sql_tools import WorkspaceTools
from tests.agents.scripted_server import ScriptedServer

from hostile_campaign import LIMITS


def _exchange(sock_path, raw: bytes, *, replies: int = 1) -> list[bytes]:
    """Send raw bytes on one connection; read until the proxy closes it or ``replies`` answers came."""
    c = socket.socket(socket.AF_UNIX)
    c.connect(str(sock_path))
    c.settimeout(10)
    c.sendall(raw)
    got = b""
    try:
        while got.count(b"HTTP/1.1 ") < replies or not _complete(got):
            chunk = c.recv(65536)
            if not chunk:
                break
            got += chunk
    finally:
        c.close()
    return [b"HTTP/1.1 " + part for part in got.split(b"HTTP/1.1 ")[1:]]


def _complete(data: bytes) -> bool:
    last = data.rsplit(b"HTTP/1.1 ", 1)[-1]
    head, sep, body = last.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(body) >= int(line.split(b":")[1])
    return body.endswith(b"0\r\n\r\n")


def _log(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _chat(max_tokens: int, host: str = "x") -> bytes:
    body = json.dumps({"model": "m", "max_tokens": max_tokens, "messages": [{"role": "user", "content": "go"}]}).encode()
    return (f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


# -- item 2: the token budget holds on every path ------------------------------------------------
def test_every_chat_request_is_capped_and_counted_whatever_its_path_or_tunnel(tmp_path):
    # before: direct chat completions and requests in a CONNECT tunnel skipped the translator: budget 3,000
    # and max-tokens 50 were served 12 requests asking 100,000 tokens (~24,000 used, 4,000 recorded)
    steps = [{"unbounded": True, "usage": {"input_tokens": 400}}] * 12  # each generates up to the max_tokens it is sent
    with ScriptedServer(steps, wires=("chat",)) as srv:
        tr = ChatTranslator(srv.base_url, max_tokens=50, token_budget=3000)
        host = f"127.0.0.1:{srv.port}"
        with EgressProxy(srv.base_url, tmp_path / "p.sock", tmp_path / "egress.jsonl", translator=tr):
            answers = []
            for _ in range(4):  # origin form
                answers += _exchange(tmp_path / "p.sock", _chat(100_000))
            absolute = _chat(100_000).replace(b"POST /v1/", f"POST http://{host}/v1/".encode(), 1)
            for _ in range(4):
                answers += _exchange(tmp_path / "p.sock", absolute)
            tunnel = f"CONNECT {host} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode() + _chat(100_000, host) * 4
            answers += _exchange(tmp_path / "p.sock", tunnel, replies=5)[1:]  # after "200 Connection Established"
        tr.close()
    assert len(answers) == 12
    served = [r for r in srv.requests]
    assert served and all(r["max_tokens"] == 50 for r in served)  # never the 100,000 asked
    server_tokens = sum(400 + r["max_tokens"] for r in served)
    assert (len(served), server_tokens) == (7, 3150)  # 7 x 450 tokens: the 7th crossed the budget, the rest refused
    assert tr.usage.total_tokens == server_tokens  # recorded = what the endpoint served
    refused = [a for a in answers if a.startswith(b"HTTP/1.1 400")]
    assert len(refused) == 5 and all(b"token budget of 3000 tokens is used up" in a for a in refused)
    log = [e for e in _log(tmp_path / "egress.jsonl") if not e.get("tunnel_opened")]
    assert len(log) == 12 and all(e["translated"] for e in log)
    assert sum(1 for e in log if e.get("tunnel")) == 4


# -- item 3: every request is logged ------------------------------------------------------------
def _counting_endpoint():
    """A plain HTTP endpoint that counts the requests it answers (keep-alive)."""
    received = []
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)

    def talk(conn):
        buf = b""
        conn.settimeout(5)
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    buf += chunk
                head, _, buf = buf.partition(b"\r\n\r\n")
                received.append(head.split(b"\r\n")[0])
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
        except OSError:
            return

    def serve():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=talk, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return listener, received


def test_a_request_after_a_malformed_header_is_refused_and_logged_not_relayed(tmp_path):
    # before: after "Connection : keep-alive" (a space before the colon) a second request passed unlogged
    listener, received = _counting_endpoint()
    port = listener.getsockname()[1]
    raw = (f"GET /v1/models HTTP/1.1\r\nHost: a\r\nConnection : keep-alive\r\n\r\n"
           f"GET /v1/secret HTTP/1.1\r\nHost: a\r\n\r\n").encode()
    with EgressProxy(f"http://127.0.0.1:{port}/v1", tmp_path / "p.sock", tmp_path / "egress.jsonl"):
        answers = _exchange(tmp_path / "p.sock", raw, replies=2)
    listener.close()
    log = _log(tmp_path / "egress.jsonl")
    assert answers[0].startswith(b"HTTP/1.1 400") and len(answers) == 1
    assert received == []  # nothing reached the endpoint
    assert len(log) == 1 and log[0]["allowed"] is False and log[0]["reason"].startswith("malformed HTTP request")


def test_each_request_inside_a_connect_tunnel_is_its_own_log_line(tmp_path):
    # before: a CONNECT tunnel was one log line however many requests it carried
    listener, received = _counting_endpoint()
    port = listener.getsockname()[1]
    inner = b"".join(f"GET /v1/models?n={i} HTTP/1.1\r\nHost: a\r\n\r\n".encode() for i in range(3))
    raw = f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode() + inner
    with EgressProxy(f"http://127.0.0.1:{port}/v1", tmp_path / "p.sock", tmp_path / "egress.jsonl"):
        answers = _exchange(tmp_path / "p.sock", raw, replies=4)
    listener.close()
    assert len(answers) == 4 and all(a.startswith(b"HTTP/1.1 200") for a in answers)
    requests = [e for e in _log(tmp_path / "egress.jsonl") if not e.get("tunnel_opened")]
    assert [e["target"] for e in requests] == [f"/v1/models?n={i}" for i in range(3)] == \
        [line.split(b" ")[1].decode() for line in received]
    assert all(e["tunnel"] == f"127.0.0.1:{port}" and e["status"] == 200 for e in requests)


def test_a_malformed_translated_request_is_logged_without_a_traceback(tmp_path, capfd):
    # before: a bad Content-Length on a translated path printed a traceback on the operator's console, unlogged
    with ScriptedServer([{"text": "hi"}], wires=("chat",)) as srv:
        tr = ChatTranslator(srv.base_url)
        with EgressProxy(srv.base_url, tmp_path / "p.sock", tmp_path / "egress.jsonl", translator=tr):
            bad_length = _exchange(tmp_path / "p.sock", b"POST /v1/responses HTTP/1.1\r\nHost: a\r\nContent-Length: abc\r\n\r\n{}")
            bad_chunks = _exchange(tmp_path / "p.sock", b"POST /v1/messages HTTP/1.1\r\nHost: a\r\n"
                                                        b"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n")
            nested = b"[" * 100_000
            deep = _exchange(tmp_path / "p.sock", b"POST /v1/responses HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n%s"
                             % (len(nested), nested))
        tr.close()
    assert bad_length[0].startswith(b"HTTP/1.1 400") and bad_chunks[0].startswith(b"HTTP/1.1 400")
    assert deep[0].startswith(b"HTTP/1.1 400") and b"not a JSON object" in deep[0]
    assert srv.requests == []
    log = _log(tmp_path / "egress.jsonl")
    # each entry is written when its exchange ends, after its answer: the three can land in another order
    assert sorted((e["allowed"], e["target"]) for e in log) == [(False, "/v1/messages"), (False, "?"),
                                                                (True, "/v1/responses")]
    assert "Traceback" not in capfd.readouterr().err


# -- item 4: the harness's own resources are bounded ---------------------------------------------
def test_held_connections_take_a_bounded_number_of_harness_threads(tmp_path):
    # before: two harness threads per egress connection (1,500 connections -> 3,003 harness threads)
    listener, _ = _counting_endpoint()
    port = listener.getsockname()[1]
    before = threading.active_count()
    proxy = EgressProxy(f"http://127.0.0.1:{port}/v1", tmp_path / "p.sock", tmp_path / "egress.jsonl",
                        limits=Limits(connections=16)).start()
    held = []
    for _ in range(200):
        c = socket.socket(socket.AF_UNIX)
        c.connect(str(tmp_path / "p.sock"))
        try:
            c.sendall(b"POST /v1/x HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n")  # the body never comes
        except BrokenPipeError:
            pass  # already answered 503 and closed by the accept loop: the answer is still there to read
        held.append(c)
    time.sleep(0.5)
    peak = threading.active_count() - before
    refused = 0
    for c in held:
        c.settimeout(0.05)
        try:
            refused += c.recv(12).startswith(b"HTTP/1.1 503")
        except OSError:
            pass
    proxy.stop()
    for c in held:
        c.close()
    listener.close()
    assert peak <= 16 + 1 and proxy.threads_peak == 16  # the connections' threads and the accept loop
    assert refused == 200 - 16 and proxy.limit_hit == "connections"


@pytest.mark.slow
def test_a_connection_flood_in_the_sandbox_is_stopped_by_the_connection_limit(hostile):
    row, score = hostile.rows["connection-flood"], hostile.score("connection-flood")
    codes = hostile.seen("connection-flood")["codes"]
    assert codes.get("503", 0) >= 24 - LIMITS.connections and codes.get("held", 0) <= LIMITS.connections
    assert row["status"] == "agent-failed" and "limit exceeded: connections (16;" in score["run_error"]


@pytest.mark.slow
def test_an_egress_flood_stops_at_the_log_limit_and_names_it(hostile):
    # before: egress.jsonl grew to 64 MB in 3.8 s under --limit log=1m
    log = hostile.folder("egress-flood") / "egress.jsonl"
    assert log.stat().st_size <= LIMITS.log_bytes
    statuses = hostile.seen("egress-flood")["statuses"]
    assert statuses.get("403", 0) == len(log.read_text().splitlines())  # every request let through is logged
    assert statuses.get("429", 0) + statuses.get("403", 0) == 1500  # the rest refused, none relayed unlogged
    assert hostile.listeners["evil"].connections == 0
    assert "limit exceeded: log (64 KiB;" in hostile.score("egress-flood")["run_error"]
    assert hostile.sandbox_record("egress-flood")["egress_lines_dropped"] == statuses["429"]


@pytest.mark.slow
def test_empty_files_are_stopped_by_the_inode_limit(hostile):
    # before: 300,000 empty files in 23 s under --limit disk=64m (inodes unlimited)
    for attack in ("inode-fill", "tmp-inode-fill"):
        row, record = hostile.rows[attack], hostile.sandbox_record(attack)
        assert row["status"] == "agent-failed" and record["limit_exceeded"] == "inodes", (attack, record)
        assert "limit exceeded: inodes (5000;" in hostile.score(attack)["run_error"]
        assert "made" not in hostile.seen(attack)  # stopped before its 20,000 files


@pytest.mark.slow
def test_run_sql_fetches_no_more_rows_than_it_shows(tmp_path):
    # before: run_sql fetched every row before its 100-row cap (the harness at 1.8-3.2 GB)
    db = tmp_path / "w.duckdb"
    duckdb.connect(str(db)).close()
    tools = WorkspaceTools(db, tmp_path / "output.csv", [])
    tracemalloc.start()
    answer = tools.call("run_sql", {"sql": "SELECT range AS n, 'some text ' || range AS label FROM range(50000)"})
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    tools.close()
    assert answer.splitlines()[-2:] == ["... 49900 more rows not shown (row cap 100)", "(50000 rows)"]
    assert peak < 2 << 20, f"{peak / 2**20:.1f} MiB held for 100 shown rows"  # fetchall held every row
