"""A loopback OpenAI-compatible chat server for the diagnosis tests, answering from a script.

Unlike the agents' scripted server it can send malformed replies: each step is a reply body
(a dict sent as JSON, or a string sent as-is) with an optional HTTP status. Helpers build
the ordinary replies: ``tool(name, **args)`` (one function call) and ``text(s)``. When the
script runs out the server answers ``text("Done.")``. Every request body is kept in
``requests``.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

USAGE = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}


def _reply(message: dict) -> dict:
    return {"id": "c1", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}], "usage": USAGE}


def tool(name: str, **args: Any) -> dict:
    return {"body": _reply({"role": "assistant", "content": None, "tool_calls": [
        {"id": f"call_{name}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]})}


def text(s: str) -> dict:
    return {"body": _reply({"role": "assistant", "content": s})}


NOT_JSON = {"body": "<html>502 upstream</html>"}
NO_CHOICES = {"body": {"id": "c", "object": "chat.completion", "created": 0, "model": "m", "choices": [],
                       "usage": USAGE}}
NULL_MESSAGE = {"body": {"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                         "choices": [{"index": 0, "message": None, "finish_reason": "stop"}], "usage": USAGE}}


class ModelServer:
    def __init__(self, script: list[dict]):
        self.script = list(script)
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with server._lock:
                    server.requests.append(json.loads(raw or b"{}"))
                    step = server.script.pop(0) if server.script else text("Done.")
                body = step["body"]
                data = (body if isinstance(body, str) else json.dumps(body)).encode()
                self.send_response(step.get("status", 200))
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> "ModelServer":
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
