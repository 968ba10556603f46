"""The per-run egress proxy: the only way out of a sandbox, to one allow-listed endpoint.

The harness starts one ``EgressProxy`` per run, listening on a unix socket that the sandbox
mounts. It accepts three request forms and allows each only for the endpoint's host and port:

* origin form (``POST /v1/responses``): forwarded to the endpoint, so an agent whose base URL
  is ``http://127.0.0.1:PORT`` works unchanged when the in-sandbox bridge listens on PORT;
* absolute form (``GET http://host:port/path``) from an ``HTTP_PROXY`` client;
* ``CONNECT host:443`` from an ``HTTPS_PROXY`` client (TLS stays end to end).

Every request, allowed or refused, is appended to the run's ``egress.jsonl`` evidence.

With a ``translator`` (``agents/api_translate.py``, for an endpoint that speaks only chat
completions), origin-form requests the translator serves are answered by it instead of
being relayed; they are logged with ``translated: true``.

Whatever is sent, the proxy only ever dials the allow-listed endpoint: a smuggled second
request, an absolute URL naming another host or a forged ``Host:`` header reaches that
endpoint or nobody. Every connection ends at the run's deadline (``deadline``, a
``time.monotonic()`` value): a hung endpoint cannot keep a run alive past its timeout, and
``stop`` cuts connections still open.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import socketserver
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

from clinbench.agents.egress_bridge import pipe
from clinbench.errors import AgentError

_MAX_HEAD = 64 * 1024


def endpoint_host_port(url: str) -> tuple[str, int, str]:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise AgentError(f"endpoint URL {url!r} must look like http(s)://host[:port]/...")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.hostname, port, parts.scheme


class EgressProxy:
    """Allow-listing proxy on a unix socket; ``log_path`` receives one JSON line per request."""

    def __init__(self, endpoint_url: str, socket_path: Path, log_path: Path, translator=None, *,
                 deadline: float | None = None):
        self.host, self.port, self.scheme = endpoint_host_port(endpoint_url)
        self.translator = translator
        self.socket_path = Path(socket_path)
        self.log_path = Path(log_path)
        self.deadline = deadline
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._server: socketserver.ThreadingUnixStreamServer | None = None
        self._thread: threading.Thread | None = None

    def _log(self, **entry: object) -> None:
        with self._lock, self.log_path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"time": time.time(), **entry}) + "\n")

    def _allowed(self, host: str | None, port: int) -> bool:
        return host is not None and host.lower() == self.host.lower() and port == self.port

    def start(self) -> EgressProxy:
        if self.socket_path.exists():
            self.socket_path.unlink()
        self.socket_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_path.touch()
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                proxy._handle(self.request)

        self._server = socketserver.ThreadingUnixStreamServer(str(self.socket_path), Handler)
        # stop() waits for connections in flight, so every request is in the log when the run's evidence is sealed
        self._server.daemon_threads = False
        self._server.block_on_close = True
        os.chmod(self.socket_path, 0o666)
        self._thread = threading.Thread(target=self._server.serve_forever, name="egress-proxy", daemon=True)
        self._thread.start()
        return self

    def _remaining(self) -> float:
        return 3600.0 * 24 if self.deadline is None else self.deadline - time.monotonic()

    def _track(self, *socks: socket.socket) -> None:
        with self._lock:
            self._open.update(socks)

    def _cut(self, *socks: socket.socket) -> None:
        """Wake every blocked read or write on these sockets (the relay then ends)."""
        for sock in socks:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            with self._lock:
                still_open = list(self._open)
            self._cut(*still_open)  # connections in flight end now and are logged
            self._server.server_close()
        if self.socket_path.exists():
            self.socket_path.unlink()

    def __enter__(self) -> EgressProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- one connection ------------------------------------------------------------
    def _handle(self, client: socket.socket) -> None:
        if self._remaining() <= 0:
            self._refuse(client, "?", "?", "the run's deadline has passed", status=504)
            return
        self._track(client)
        timer = threading.Timer(max(0.0, self._remaining()), self._cut, args=(client,))
        timer.daemon = True
        timer.start()
        try:
            self._handle_until_deadline(client)
        except OSError:
            pass
        finally:
            timer.cancel()
            with self._lock:
                self._open.discard(client)

    def _handle_until_deadline(self, client: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head and len(head) < _MAX_HEAD:
            chunk = client.recv(65536)
            if not chunk:
                return
            head += chunk
        header_blob, _, rest = head.partition(b"\r\n\r\n")
        lines = header_blob.decode("latin-1").split("\r\n")
        try:
            method, target, version = lines[0].split(" ", 2)
        except ValueError:
            self._refuse(client, "?", lines[0][:200], "malformed request line")
            return
        if method.upper() == "CONNECT":
            host, _, port_text = target.rpartition(":")
            port = int(port_text) if port_text.isdigit() else 443
            if not self._allowed(host, port):
                self._refuse(client, method, target, "host not allow-listed")
                return
            upstream = self._dial()
            if upstream is None:
                self._refuse(client, method, target, "endpoint unreachable", status=502)
                return
            client.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            self._relay(client, upstream, rest, method=method, target=target)
            return
        if target.startswith(("http://", "https://")):
            parts = urlsplit(target)
            port = parts.port or (443 if parts.scheme == "https" else 80)
            if parts.scheme != "http" or not self._allowed(parts.hostname, port):
                self._refuse(client, method, target, "host not allow-listed")
                return
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        else:
            path = target
        if self.translator is not None and self.translator.api_of(method, path):
            self._translate(client, method, path, lines[1:], rest)
            return
        if self.scheme != "http":
            self._refuse(client, method, target, "an https endpoint is reached with CONNECT (set HTTPS_PROXY)")
            return
        headers = [h for h in lines[1:] if not h.lower().startswith(("connection:", "proxy-connection:", "keep-alive:"))]
        headers = [h if not h.lower().startswith("host:") else f"Host: {self.host}:{self.port}" for h in headers]
        request = "\r\n".join([f"{method} {path} {version}", *headers, "Connection: close", "", ""]).encode("latin-1")
        upstream = self._dial()
        if upstream is None:
            self._refuse(client, method, target, "endpoint unreachable", status=502)
            return
        upstream.sendall(request)
        self._relay(client, upstream, rest, method=method, target=target)

    def _translate(self, client: socket.socket, method: str, path: str, header_lines: list[str], body: bytes) -> None:
        """Read the whole request, let the translator answer it, send the answer and close."""
        started = time.monotonic()
        headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if headers.get("expect", "").lower() == "100-continue":
            client.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        length = int(headers.get("content-length", "0") or 0)
        while len(body) < length:
            chunk = client.recv(65536)
            if not chunk:
                break
            body += chunk
        if "chunked" in headers.get("transfer-encoding", "").lower():
            body = _dechunk(client, body)
        reply = self.translator.handle(method, path, headers, body)
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}.get(reply.status, "Error")
        head = f"HTTP/1.1 {reply.status} {reason}\r\nContent-Type: {reply.content_type}\r\n"
        received = len(reply.body)
        try:
            if reply.chunks is None:
                client.sendall(f"{head}Content-Length: {len(reply.body)}\r\nConnection: close\r\n\r\n".encode() + reply.body)
            else:  # streamed as the translator produces it (keep-alives while a slow model works)
                client.sendall(f"{head}Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".encode())
                for chunk in reply.chunks:
                    received += len(chunk)
                    client.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                client.sendall(b"0\r\n\r\n")
        except OSError:  # the client went away (killed at its timeout)
            pass
        self._log(method=method, target=path, allowed=True, translated=True, status=reply.status,
                  bytes_sent=len(body), bytes_received=received, seconds=round(time.monotonic() - started, 3))

    def _dial(self) -> socket.socket | None:
        try:
            upstream = socket.create_connection((self.host, self.port), timeout=max(0.1, min(30.0, self._remaining())))
        except OSError:
            return None
        self._track(upstream)
        return upstream

    def _relay(self, client: socket.socket, upstream: socket.socket, first: bytes, *, method: str, target: str) -> None:
        started = time.monotonic()
        sent, received = [len(first)], [0]
        timer = threading.Timer(max(0.0, self._remaining()), self._cut, args=(client, upstream))
        timer.daemon = True
        timer.start()
        try:
            if first:
                upstream.sendall(first)
            upstream.settimeout(None)
            up = threading.Thread(target=pipe, args=(client, upstream, sent), daemon=True)
            up.start()
            pipe(upstream, client, received)
            up.join(timeout=5)
        except OSError:
            pass
        finally:
            timer.cancel()
            upstream.close()
            with self._lock:
                self._open.discard(upstream)
        entry = {"method": method, "target": target, "allowed": True, "bytes_sent": sent[0], "bytes_received": received[0],
                 "seconds": round(time.monotonic() - started, 3)}
        if self._remaining() <= 0:
            entry["cut"] = "the run's deadline"
        self._log(**entry)

    def _refuse(self, client: socket.socket, method: str, target: str, reason: str, status: int = 403) -> None:
        body = f"clinbench egress proxy: {reason}\n".encode()
        with contextlib.suppress(OSError):
            client.sendall(
                f"HTTP/1.1 {status} Forbidden\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
        self._log(method=method, target=target, allowed=False, reason=reason)


def _dechunk(client: socket.socket, data: bytes) -> bytes:
    """The body of a chunked request whose first bytes are ``data`` (reads the rest from ``client``)."""
    out = b""
    while True:
        while b"\r\n" not in data:
            more = client.recv(65536)
            if not more:
                return out
            data += more
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            return out
        while len(data) < size + 2:
            more = client.recv(65536)
            if not more:
                return out + data[:size]
            data += more
        out += data[:size]
        data = data[size + 2:]
