"""A model endpoint with a per-window request limit, as hosted APIs have: HTTP 429 and Retry-After past it."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class RateLimitedServer:
    """``limit`` requests (any method) per ``window`` seconds on loopback; a POST within the limit gets a
    one-word chat completion, a GET a model list. ``with RateLimitedServer(3, 2.0) as srv: srv.base_url``."""

    def __init__(self, limit: int, window: float):
        self.limit, self.window, self.stamps, self.lock = limit, window, [], threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _send(self, code: int, obj: dict) -> None:
                body = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                if code == 429:
                    self.send_header("Retry-After", str(server.window))
                self.end_headers()
                self.wfile.write(body)

            def _answer(self, ok: dict) -> None:
                if server.limited():
                    self._send(429, {"error": {"message": "Rate limit reached", "type": "rate_limit_error"}})
                else:
                    self._send(200, ok)

            def do_GET(self) -> None:
                self._answer({"object": "list", "data": [{"id": "m", "object": "model"}]})

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self._answer({"id": "c1", "object": "chat.completion", "model": "m", "created": 0,
                              "choices": [{"index": 0, "finish_reason": "stop",
                                           "message": {"role": "assistant", "content": "ok"}}],
                              "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def limited(self) -> bool:
        now = time.monotonic()
        with self.lock:
            self.stamps[:] = [t for t in self.stamps if now - t < self.window]
            if len(self.stamps) >= self.limit:
                return True
            self.stamps.append(now)
            return False

    def __enter__(self) -> RateLimitedServer:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
