"""The per-run egress proxy: the only way out of a sandbox, to one allow-listed endpoint.

The harness starts one ``EgressProxy`` per run, listening on a unix socket that the sandbox
mounts. HTTP is parsed by h11 (a maintained HTTP/1.1 parser), one request at a time, and each
request is handled and logged on its own, whatever form it comes in:

* origin form (``POST /v1/responses``): an agent whose base URL is ``http://127.0.0.1:PORT``
  works unchanged when the in-sandbox bridge listens on PORT;
* absolute form (``GET http://host:port/path``) from an ``HTTP_PROXY`` client;
* ``CONNECT host:port`` from an ``HTTPS_PROXY`` client. For an ``http://`` endpoint the tunnel
  carries plain HTTP, so the requests inside it are parsed and handled like any other (logged
  with ``tunnel``); for an ``https://`` endpoint TLS stays end to end and the tunnel is relayed
  as it is, one log line with its byte counts (``tunnel: "tls"``): the proxy cannot see inside.

Every request, allowed or refused, is one line of the run's ``egress.jsonl`` evidence; a request
h11 cannot parse is answered 400, logged and ends its connection (nothing after it is read).
A request the proxy answers itself because the endpoint failed (refused, reset, DNS, TLS, or
no answer) is logged with ``upstream_error``; an endpoint's own HTTP error with its ``status``.
That is the evidence ``agents/attribution.py`` reads to tell an endpoint's failure from an agent's.

With a ``translator`` (``agents/api_translate.py``, ``--endpoint-api chat``) every model request
goes through it, chat completions included, so its token limits and accounting hold for every
path and tunnel; other POSTs are refused, and only GET/HEAD without a body are relayed.

Whatever is sent, the proxy only ever dials the allow-listed endpoint: a smuggled second
request, an absolute URL naming another host or a forged ``Host:`` header reaches that
endpoint or nobody. Every connection ends at the run's deadline (``deadline``, a
``time.monotonic()`` value) and ``stop`` cuts connections still open.

The harness's own resources stay bounded whatever the agent does: at most ``connections``
connections at once (one thread each, and one more while a translated answer is streamed
with keep-alives; more connections are answered 503), at most ``log`` bytes of
``egress.jsonl`` (past it every request is refused, so none passes unlogged), request heads of
64 KiB and bodies of 64 MiB. ``limit_hit`` names the limit an agent ran into, as ``--limit``
spells it.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import selectors
import socket
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import h11
import httpx

from clinbench.agents.attribution import endpoint_verdict
from clinbench.agents.limits import Limits
from clinbench.errors import AgentError

_MAX_HEAD = 64 * 1024
_MAX_BODY = 64 * 1024 * 1024
_HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate", "te",
               "trailer", "transfer-encoding", "upgrade", "host", "content-length", "expect"}
_REASONS = {200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 413: "Payload Too Large",
            429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
            504: "Gateway Timeout"}


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is this machine only: localhost (``localhost.`` too) or a
    loopback address, an IPv4 one written as IPv6 included (``::ffff:127.0.0.1``)."""
    if host.rstrip(".") == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


def endpoint_host_port(url: str) -> tuple[str, int, str]:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise AgentError(f"endpoint URL {url!r} must look like http(s)://host[:port]/...")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.hostname, port, parts.scheme


def upstream_reason(exc: BaseException) -> str:
    """A short, stable name for why the endpoint could not be reached, then the error itself."""
    text = " ".join(str(exc).split())[:200] or type(exc).__name__
    low = text.lower()
    if "refused" in low:
        kind = "connection refused"
    elif "name or service not known" in low or "nodename nor servname" in low or "temporary failure in name" in low \
            or "no address associated" in low:
        kind = "DNS lookup failed"
    elif "ssl" in low or "certificate" in low or "tls" in low:
        kind = "TLS failed"
    elif isinstance(exc, (httpx.TimeoutException, TimeoutError, socket.timeout)):
        kind = "no answer in time"
    elif "reset" in low or "disconnected" in low or "closed" in low or "broken pipe" in low \
            or isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError, ConnectionError)):
        kind = "connection reset"
    else:
        kind = "unreachable"
    return f"{kind} ({text})"


class EgressLog:
    """``egress.jsonl``, at most ``cap`` bytes. Each request reserves room for its line before it is
    handled (``reserve``), so a request the proxy lets through is always logged; once the room is
    gone, requests are refused and only counted (``dropped``)."""

    ENTRY_MAX = 2048  # bytes of one line at most (long fields are cut)

    def __init__(self, path: Path, cap: int):
        self.path, self.cap = Path(path), cap
        self.size = 0
        self.reserved = 0
        self.full = False
        self.dropped = 0
        self._lock = threading.Lock()

    def reserve(self) -> bool:
        with self._lock:
            if self.size + self.reserved + self.ENTRY_MAX > self.cap:
                self.full = True
                self.dropped += 1
                return False
            self.reserved += self.ENTRY_MAX
            return True

    def write(self, entry: dict, *, reserved: bool) -> bool:
        entry = {k: (v[:500] + "...") if isinstance(v, str) and len(v) > 500 else v for k, v in entry.items()}
        line = (json.dumps(entry) + "\n").encode()[: self.ENTRY_MAX]
        with self._lock:
            if reserved:
                self.reserved -= self.ENTRY_MAX
            elif self.size + self.reserved + len(line) > self.cap:
                self.full = True
                self.dropped += 1
                return False
            with self.path.open("ab") as fh:
                fh.write(line if line.endswith(b"\n") else line[:-1] + b"\n")
            self.size += len(line)
            return True


class _Closed(Exception):
    """The client went away (or the run's time is up) before a whole request arrived."""


class EgressProxy:
    """Allow-listing proxy on a unix socket; ``log_path`` receives one JSON line per request."""

    def __init__(self, endpoint_url: str, socket_path: Path, log_path: Path, translator=None, *,
                 deadline: float | None = None, limits: Limits | None = None):
        self.host, self.port, self.scheme = endpoint_host_port(endpoint_url)
        self.translator = translator
        self.socket_path = Path(socket_path)
        self.log_path = Path(log_path)
        self.deadline = deadline
        self.limits = limits or Limits()
        self.log = EgressLog(self.log_path, self.limits.log_bytes)
        self.limit_hit: str | None = None  # 'connections' | 'log'
        self.threads_peak = 0  # connection threads alive at once, at most
        self._failing_since: float | None = None  # first endpoint failure with no answer after it
        self._open: set[socket.socket] = set()
        self._handlers: set[threading.Thread] = set()
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._http = httpx.Client(timeout=30.0, follow_redirects=False, trust_env=False)

    # -- evidence --------------------------------------------------------------------
    def _log(self, reserved: bool = True, **entry: object) -> None:
        """One line of evidence; a request's line uses the room reserved when its head arrived."""
        verdict = endpoint_verdict(entry)
        if verdict is True:
            self._failing_since = None
        elif verdict is not None and self._failing_since is None:
            self._failing_since = time.monotonic()
        if not self.log.write({"time": time.time(), **entry}, reserved=reserved) and self.limit_hit is None:
            self.limit_hit = "log"

    def failing_for(self) -> float:
        """Seconds since the endpoint failed a model request with none answered since (0 when it answers)."""
        since = self._failing_since
        return 0.0 if since is None else time.monotonic() - since

    def _allowed(self, host: str | None, port: int) -> bool:
        return host is not None and host.lower().strip("[]") == self.host.lower().strip("[]") and port == self.port

    # -- lifecycle -------------------------------------------------------------------
    def start(self) -> EgressProxy:
        if self.socket_path.exists():
            self.socket_path.unlink()
        self.socket_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_path.touch()
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(self.socket_path))
        self._listener.listen(128)
        os.chmod(self.socket_path, 0o666)
        self._thread = threading.Thread(target=self._accept_loop, name="egress-proxy", daemon=True)
        self._thread.start()
        return self

    def _accept_loop(self) -> None:
        while not self._stopping.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self._stopping.is_set():
                client.close()
                return
            with self._lock:
                busy = len(self._handlers) >= self.limits.connections
            if busy:  # answered here, without a thread of its own
                self.limit_hit = self.limit_hit or "connections"
                self._answer_raw(client, 503, f"more than {self.limits.connections} connections at once "
                                              f"(limit connections={self.limits.connections})")
                self._log(False, method="?", target="?", allowed=False,
                          reason=f"limit exceeded: connections ({self.limits.connections} at once)")
                client.close()
                continue
            thread = threading.Thread(target=self._serve, args=(client,), name="egress-conn", daemon=True)
            with self._lock:
                self._handlers.add(thread)
                self._open.add(client)
                self.threads_peak = max(self.threads_peak, len(self._handlers))
            thread.start()

    def _remaining(self) -> float:
        return 3600.0 * 24 if self.deadline is None else self.deadline - time.monotonic()

    def stop(self) -> None:
        """Stop accepting, cut every connection still open and wait until each is logged."""
        self._stopping.set()
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)
            self._listener.close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._lock:
            still_open, handlers = list(self._open), list(self._handlers)
        for sock in still_open:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for thread in handlers:
            thread.join(timeout=10)
        self._http.close()
        if self.socket_path.exists():
            self.socket_path.unlink()

    def __enter__(self) -> EgressProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- one connection ----------------------------------------------------------------
    def _serve(self, client: socket.socket) -> None:
        try:
            if self._remaining() <= 0:
                self._answer_raw(client, 504, "the run's deadline has passed")
                self._log(False, method="?", target="?", allowed=False, reason="the run's deadline has passed")
                return
            self._session(client, b"", tunnel=None)
        except Exception as exc:  # noqa: BLE001 - agent bytes never crash the harness nor reach its console
            self._log(False, method="?", target="?", allowed=False,
                      reason=f"egress proxy error: {type(exc).__name__}: {str(exc)[:200]}")
        finally:
            with contextlib.suppress(OSError):
                client.close()
            with self._lock:
                self._open.discard(client)
                self._handlers.discard(threading.current_thread())

    def _recv(self, sock: socket.socket) -> bytes:
        remaining = self._remaining()
        if remaining <= 0 or self._stopping.is_set():
            raise _Closed
        sock.settimeout(min(remaining, 3600.0))
        try:
            return sock.recv(65536)
        except (TimeoutError, socket.timeout) as exc:
            raise _Closed from exc
        except OSError as exc:
            raise _Closed from exc

    def _next_event(self, conn: h11.Connection, sock: socket.socket):
        while True:
            event = conn.next_event()
            if event is not h11.NEED_DATA:
                return event
            conn.receive_data(self._recv(sock))

    def _session(self, sock: socket.socket, initial: bytes, tunnel: str | None) -> None:
        """Serve the HTTP requests arriving on ``sock`` (a connection, or a plain-HTTP tunnel) one by one."""
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=_MAX_HEAD)
        if initial:
            conn.receive_data(initial)
        while True:
            try:
                event = self._next_event(conn, sock)
            except _Closed:
                return
            except h11.RemoteProtocolError as exc:
                self._answer_raw(sock, 400, f"malformed HTTP request: {exc}")
                self._log(False, method="?", target="?", allowed=False, reason=f"malformed HTTP request: {exc}",
                          **({"tunnel": tunnel} if tunnel else {}))
                return
            if isinstance(event, h11.ConnectionClosed):
                return
            if not isinstance(event, h11.Request):
                return
            method, target = event.method.decode("latin-1"), event.target.decode("latin-1")
            headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in event.headers}
            started, wall = time.monotonic(), time.time()
            if not self.log.reserve():  # nothing more is let through once nothing more can be logged
                self.limit_hit = self.limit_hit or "log"
                self._answer(conn, sock, 429, f"the egress log is full (limit log={self.limits.log_bytes} bytes)")
                return
            if conn.they_are_waiting_for_100_continue:
                self._send(conn, sock, h11.InformationalResponse(status_code=100, headers=[]))
            try:
                body = self._body(conn, sock)
            except _Closed:
                self._log(method=method, target=target, allowed=False, reason="the client went away mid-request",
                          started=wall, seconds=round(time.monotonic() - started, 3), **({"tunnel": tunnel} if tunnel else {}))
                return
            except h11.RemoteProtocolError as exc:
                self._answer_raw(sock, 400, f"malformed HTTP request: {exc}")
                self._log(method=method, target=target, allowed=False, reason=f"malformed HTTP request body: {exc}",
                          **({"tunnel": tunnel} if tunnel else {}))
                return
            if body is None:
                self._answer(conn, sock, 413, f"request body over {_MAX_BODY} bytes")
                self._log(method=method, target=target, allowed=False, reason=f"request body over {_MAX_BODY} bytes",
                          **({"tunnel": tunnel} if tunnel else {}))
                return
            entry = {"method": method, "target": target, "started": wall, **({"tunnel": tunnel} if tunnel else {})}
            if method.upper() == "CONNECT":
                if tunnel is None:
                    self._connect(conn, sock, target, entry, started)
                else:
                    self._refuse(conn, sock, entry, "a tunnel inside a tunnel")
                return
            self._request(conn, sock, method, target, headers, body, entry, started)
            if conn.our_state is h11.MUST_CLOSE or conn.their_state is h11.MUST_CLOSE or conn.our_state is not h11.DONE:
                return
            try:
                conn.start_next_cycle()
            except h11.LocalProtocolError:
                return

    def _body(self, conn: h11.Connection, sock: socket.socket) -> bytes | None:
        parts, size = [], 0
        while True:
            event = self._next_event(conn, sock)
            if isinstance(event, h11.Data):
                size += len(event.data)
                if size > _MAX_BODY:
                    return None
                parts.append(event.data)
            elif isinstance(event, h11.EndOfMessage):
                return b"".join(parts)
            else:
                raise _Closed

    # -- sending -----------------------------------------------------------------------
    def _send(self, conn: h11.Connection, sock: socket.socket, event) -> None:
        data = conn.send(event)
        if data:
            sock.settimeout(max(0.1, min(self._remaining(), 60.0)))
            sock.sendall(data)

    def _answer(self, conn: h11.Connection, sock: socket.socket, status: int, reason: str) -> None:
        body = f"clinbench egress proxy: {reason}\n".encode()
        with contextlib.suppress(OSError, h11.LocalProtocolError):
            self._send(conn, sock, h11.Response(status_code=status, reason=_REASONS.get(status, "Error"), headers=[
                ("Content-Type", "text/plain"), ("Content-Length", str(len(body))), ("Connection", "close")]))
            self._send(conn, sock, h11.Data(data=body))
            self._send(conn, sock, h11.EndOfMessage())

    @staticmethod
    def _answer_raw(sock: socket.socket, status: int, reason: str) -> None:
        body = f"clinbench egress proxy: {reason}\n".encode()
        with contextlib.suppress(OSError):
            sock.settimeout(2)
            sock.sendall(f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\nContent-Type: text/plain\r\n"
                         f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)

    def _refuse(self, conn, sock, entry: dict, reason: str, status: int = 403) -> None:
        self._log(**entry, allowed=False, reason=reason)  # logged before the agent hears of it
        self._answer(conn, sock, status, reason)

    # -- CONNECT -----------------------------------------------------------------------
    def _connect(self, conn: h11.Connection, sock: socket.socket, target: str, entry: dict, started: float) -> None:
        host, _, port_text = target.rpartition(":")
        port = int(port_text) if port_text.isdigit() else 443
        if not self._allowed(host, port):
            self._refuse(conn, sock, entry, "host not allow-listed")
            return
        if self.scheme == "https" and self.translator is not None:
            self._refuse(conn, sock, entry, "with --endpoint-api chat the agent reaches the translator over http; "
                                            "a TLS tunnel would pass it by")
            return
        if self.scheme == "https":
            try:
                upstream = socket.create_connection((self.host, self.port), timeout=max(0.1, min(30.0, self._remaining())))
            except OSError as exc:
                reason = upstream_reason(exc)
                self._answer(conn, sock, 502, f"endpoint unreachable: {reason}")
                self._log(**entry, allowed=True, status=502, upstream_error=reason,
                          seconds=round(time.monotonic() - started, 3))
                return
        self._send(conn, sock, h11.Response(status_code=200, reason="Connection Established", headers=[]))
        rest = conn.trailing_data[0]
        if self.scheme == "http":  # plain HTTP inside: every request in it is parsed, handled and logged
            self._log(**entry, allowed=True, status=200, tunnel_opened=True)
            self._session(sock, rest, tunnel=target)
            return
        with self._lock:
            self._open.add(upstream)
        sent, received, cut = self._splice(sock, upstream, rest)
        with self._lock:
            self._open.discard(upstream)
        upstream.close()
        done = {**entry, "allowed": True, "tunnel": "tls", "bytes_sent": sent, "bytes_received": received,
                "seconds": round(time.monotonic() - started, 3)}
        if cut:
            done["cut"] = cut
        self._log(**done)

    def _splice(self, client: socket.socket, upstream: socket.socket, first: bytes) -> tuple[int, int, str | None]:
        """Copy both ways in this thread until both sides end (or the deadline); bytes each way."""
        sent = received = 0
        if first:
            upstream.sendall(first)
            sent += len(first)
        client.setblocking(True)
        upstream.setblocking(True)
        sel = selectors.DefaultSelector()
        sel.register(client, selectors.EVENT_READ, upstream)
        sel.register(upstream, selectors.EVENT_READ, client)
        open_sides = 2
        try:
            while open_sides:
                remaining = self._remaining()
                if remaining <= 0:
                    return sent, received, "the run's deadline"
                if self._stopping.is_set():
                    return sent, received, "the run ended"
                for key, _ in sel.select(timeout=min(remaining, 1.0)):
                    src, dst = key.fileobj, key.data
                    try:
                        data = src.recv(65536)
                    except OSError:
                        data = b""
                    if not data:
                        sel.unregister(src)
                        open_sides -= 1
                        with contextlib.suppress(OSError):
                            dst.shutdown(socket.SHUT_WR)
                        continue
                    try:
                        dst.settimeout(max(0.1, min(self._remaining(), 60.0)))
                        dst.sendall(data)
                    except OSError:
                        return sent, received, None
                    if src is client:
                        sent += len(data)
                    else:
                        received += len(data)
        finally:
            sel.close()
        return sent, received, None

    # -- one request -------------------------------------------------------------------
    def _request(self, conn, sock, method: str, target: str, headers: dict[str, str], body: bytes,
                 entry: dict, started: float) -> None:
        if target.startswith(("http://", "https://")):
            parts = urlsplit(target)
            try:
                port = parts.port or (443 if parts.scheme == "https" else 80)
            except ValueError:
                port = -1
            if parts.scheme != "http" or not self._allowed(parts.hostname, port):
                self._refuse(conn, sock, entry, "host not allow-listed")
                return
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        elif target.startswith("/"):
            path = target
        else:
            self._refuse(conn, sock, entry, "request target is neither a path nor an http URL")
            return
        if self.translator is not None:
            if self.translator.api_of(method, path):
                self._translate(conn, sock, method, path, headers, body, entry, started)
                return
            if method.upper() not in ("GET", "HEAD") or body:
                self._refuse(conn, sock, entry, "with --endpoint-api chat only the model APIs the translator serves "
                                                "are reached (and GET/HEAD without a body)")
                return
        if self.scheme != "http":
            self._refuse(conn, sock, entry, "an https endpoint is reached with CONNECT (set HTTPS_PROXY)")
            return
        self._relay(conn, sock, method, path, headers, body, entry, started)

    def _relay(self, conn, sock, method, path, headers, body, entry, started) -> None:
        """Forward one request to the endpoint and stream its answer back."""
        remaining = self._remaining()
        forwarded = [(k, v) for k, v in headers.items() if k not in _HOP_BY_HOP]
        url = f"{self.scheme}://{self.host}:{self.port}{path}"
        received, status, cut = 0, None, None
        try:
            request = self._http.build_request(method, url, headers=forwarded, content=body,
                                               timeout=httpx.Timeout(max(0.1, min(remaining, 3600.0))))
            response = self._http.send(request, stream=True)
        except httpx.HTTPError as exc:
            if self._remaining() <= 0:  # the run is over: the connection just ends
                self._log(**entry, allowed=True, bytes_sent=len(body), bytes_received=0,
                          seconds=round(time.monotonic() - started, 3), cut="the run's deadline")
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                return
            reason = upstream_reason(exc)
            self._answer(conn, sock, 502, f"endpoint unreachable: {reason}")
            self._log(**entry, allowed=True, status=502, upstream_error=reason, bytes_sent=len(body),
                      seconds=round(time.monotonic() - started, 3))
            return
        upstream_error = None
        try:
            status = response.status_code
            out = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _HOP_BY_HOP - {"content-length"}]
            if not any(k.lower() == "content-length" for k, _ in out) or "transfer-encoding" in response.headers:
                out = [(k, v) for k, v in out if k.lower() != "content-length"]
            self._send(conn, sock, h11.Response(status_code=status, reason=response.reason_phrase or "", headers=out))
            if method.upper() != "HEAD":
                for chunk in response.iter_raw():
                    if self._remaining() <= 0:
                        cut = "the run's deadline"
                        break
                    received += len(chunk)
                    self._send(conn, sock, h11.Data(data=chunk))
            if cut is None:
                self._send(conn, sock, h11.EndOfMessage())
        except httpx.HTTPError as exc:
            if self._remaining() <= 0:
                cut = "the run's deadline"
            else:
                upstream_error = upstream_reason(exc)
        except (OSError, h11.LocalProtocolError):
            cut = cut or ("the run's deadline" if self._remaining() <= 0 else "the client went away")
        finally:
            response.close()
        done = {**entry, "allowed": True, "status": status, "bytes_sent": len(body), "bytes_received": received,
                "seconds": round(time.monotonic() - started, 3)}
        if upstream_error:
            done["upstream_error"] = upstream_error
        if cut:
            done["cut"] = cut
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self._log(**done)

    def _translate(self, conn, sock, method, path, headers, body, entry, started) -> None:
        """Let the translator answer the request; the answer is streamed as the translator produces it."""
        reply = self.translator.handle(method, path, headers, body)
        received, cut = len(reply.body), None
        try:
            base = [("Content-Type", reply.content_type)]
            if reply.chunks is None:
                self._send(conn, sock, h11.Response(status_code=reply.status, reason=_REASONS.get(reply.status, "Error"),
                                                    headers=base + [("Content-Length", str(len(reply.body)))]))
                self._send(conn, sock, h11.Data(data=reply.body))
            else:  # keep-alives while a slow model works, then the answer
                self._send(conn, sock, h11.Response(status_code=reply.status, reason="OK",
                                                    headers=base + [("Cache-Control", "no-cache")]))
                for chunk in reply.chunks:
                    received += len(chunk)
                    self._send(conn, sock, h11.Data(data=chunk))
            self._send(conn, sock, h11.EndOfMessage())
        except (OSError, h11.LocalProtocolError):  # the client went away (killed at its timeout)
            cut = "the run's deadline" if self._remaining() <= 0 else "the client went away"
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        done = {**entry, "allowed": True, "translated": True, "status": reply.status, "bytes_sent": len(body),
                "bytes_received": received, "seconds": round(time.monotonic() - started, 3), **reply.upstream}
        if cut:
            done["cut"] = cut
        self._log(**done)
