"""A scripted model server on loopback: the test double of a model endpoint (tests only).

It speaks the three wire formats the project's clients use: OpenAI chat completions
(``POST /v1/chat/completions``), the OpenAI Responses API (``POST /v1/responses``, what
Codex speaks) and Anthropic Messages (``POST /v1/messages``, what Claude Code speaks),
each with and without ``stream: true``.

The script is a list of steps; every request that offers tools takes the next step:

* ``{"text": "Done."}``: an assistant message.
* ``{"tool": "run_sql", "arguments": {"sql": "select 1"}}``: one tool call.
* ``{"tool_calls": [{"tool": ..., "arguments": ...}, ...]}``: several tool calls at once.
* ``{"shell": "printf 'a\\n' > output.csv"}``: a call of whichever shell tool the client
  offered (Codex ``exec_command``/``shell_command``/``shell``, Claude ``Bash``, Gemini
  ``run_shell_command``).
* ``{"status": 429, "body": {...}, "headers": {"retry-after": "0"}}``: an HTTP error.

Steps that behave like real servers misbehaving (chat completions):

* ``{"text_tool_call": "hermes" | "json", "tool": ..., "arguments": ...}``: the call written in the
  message text (Qwen's ``<tool_call>`` tags, or a bare JSON object), as a server without
  tool-call parsing returns it.
* ``{"tool": ..., "raw_arguments": "..."}``: a tool call whose arguments string is sent as given.
* ``{"html": "<html>..."}``: an HTML page with status 200 (a web UI at the wrong base URL).
* ``{"message_null": true}``: ``choices[0].message`` is null.
* ``{"hang": seconds}``: wait that long before answering the rest of the step (or "Done.").
* ``{"kill": true}``: the server dies before answering (``kill``: the port refuses, open connections are cut).
* ``{"unbounded": true}``: generation that stops only at the request's ``max_tokens``
  (``finish_reason: "length"``); without ``max_tokens`` it never ends (until the server stops).

Server options that copy real servers: ``reject_null_content`` (default on) answers HTTP 500
to a message whose ``content`` is null, as llama-cpp-python does; ``wires`` limits the
APIs served (``wires=("chat",)`` is a chat-completions-only server like llama-server:
``/v1/responses`` and ``/v1/messages`` get 404).

Any step may carry ``"usage": {"input_tokens": n, "output_tokens": m}``. After the last step
the server repeats the last text step (or "Done.").

By default every request takes a step (a plain chat call gets the next text step). With
``skip_toolless=True``, as coding-agent CLIs need, requests that offer no tools (for example
Claude Code's session-title call) get a short text instead and do not use up a step; such a
request asking for a JSON schema gets a minimal object that fits it.

The server keeps a cursor rather than counting tool results in the conversation, so that
an error step followed by the client's retry moves on to the next step.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_USAGE = {"input_tokens": 20, "output_tokens": 10}
_SHELL_TOOLS = ("exec_command", "shell_command", "shell", "Bash", "bash", "run_shell_command")


def minimal_for_schema(schema: dict[str, Any] | None) -> Any:
    """The smallest value that fits a JSON schema (objects get their required keys)."""
    if not isinstance(schema, dict):
        return {}
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return minimal_for_schema(schema[key][0])
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties", {})
        required = schema.get("required", list(props))
        return {name: minimal_for_schema(props.get(name, {})) for name in required}
    if kind == "array":
        return []
    if kind == "string":
        return "x"
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return None


def _tool_names(body: dict[str, Any]) -> list[str]:
    names = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        fn = tool.get("function")
        name = fn.get("name") if isinstance(fn, dict) else tool.get("name")
        if name:
            names.append(name)
    return names


def _requested_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    fmt = (body.get("output_config") or {}).get("format")  # Anthropic
    if isinstance(fmt, dict) and "schema" in fmt:
        return fmt["schema"]
    fmt = (body.get("text") or {}).get("format")  # Responses
    if isinstance(fmt, dict) and "schema" in fmt:
        return fmt["schema"]
    fmt = body.get("response_format")  # Chat
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        return (fmt.get("json_schema") or {}).get("schema", {})
    return None


class ScriptedServer:
    """A model server on 127.0.0.1 that answers from a script, in a background thread."""

    def __init__(self, script: list[dict[str, Any]], *, skip_toolless: bool = False,
                 host: str = "127.0.0.1", port: int = 0, wires: tuple[str, ...] = ("chat", "responses", "messages"),
                 reject_null_content: bool = True):
        self.script = list(script)
        self.skip_toolless = skip_toolless
        self.wires = wires
        self.reject_null_content = reject_null_content
        self._stopping = threading.Event()
        self.requests: list[dict[str, Any]] = []  # JSON bodies received, in order
        self.log: list[dict[str, Any]] = []  # method, path, headers, body of every request
        self._cursor = 0
        self._connections: set[socket.socket] = set()  # open client connections (cut by ``kill``)
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer((host, port), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL (``…/v1``); Anthropic clients take ``.url``."""
        return f"{self.url}/v1"

    @property
    def steps_used(self) -> int:
        return self._cursor

    def start(self) -> ScriptedServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="scripted-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # ends hanging and unbounded steps
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def kill(self) -> None:
        """Die as a killed server process does: the port refuses and open connections are cut."""
        self.stop()
        with self._lock:
            open_now = list(self._connections)
        for conn in open_now:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- script ----------------------------------------------------------------------
    def _next_step(self) -> dict[str, Any]:
        with self._lock:
            if self._cursor < len(self.script):
                step = self.script[self._cursor]
                self._cursor += 1
                return step
            last_text = next((s for s in reversed(self.script) if "text" in s), {"text": "Done."})
            return {"text": last_text["text"]}

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # keep test output quiet
                pass

            def setup(self) -> None:
                super().setup()
                with server._lock:
                    server._connections.add(self.connection)

            def finish(self) -> None:
                with server._lock:
                    server._connections.discard(self.connection)
                with contextlib.suppress(OSError):
                    super().finish()

            def do_HEAD(self) -> None:  # Claude Code's connectivity probe
                server.log.append({"method": "HEAD", "path": self.path, "headers": dict(self.headers), "body": None})
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                server.log.append({"method": "GET", "path": self.path, "headers": dict(self.headers), "body": None})
                if self.path.rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
                else:
                    self._json(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._json(400, {"error": {"message": "body is not JSON"}})
                    return
                path = self.path.split("?", 1)[0].rstrip("/")
                server.requests.append(body)
                server.log.append({"method": "POST", "path": self.path, "headers": dict(self.headers), "body": body})
                if path.endswith("/chat/completions"):
                    wire = "chat"
                elif path.endswith("/responses"):
                    wire = "responses"
                elif path.endswith("/messages"):
                    wire = "messages"
                else:
                    wire = "none"
                if wire not in server.wires:  # what llama-server answers for an API it does not serve
                    self._json(404, {"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}})
                    return
                if wire == "chat" and server.reject_null_content:
                    nulls = [i for i, m in enumerate(body.get("messages") or []) if isinstance(m, dict) and m.get("content", "") is None]
                    if nulls:  # llama-cpp-python validates content as a string and answers 500
                        self._json(500, {"error": {"message": f"messages.{nulls[0]}.content: Input should be a valid string "
                                                              "[type=string_type, input_value=None]", "type": "internal_server_error"}})
                        return
                tools = _tool_names(body)
                schema = _requested_schema(body)
                if not tools and server.skip_toolless:
                    text = json.dumps(minimal_for_schema(schema)) if schema is not None else "OK"
                    step: dict[str, Any] = {"text": text}
                else:
                    step = server._next_step()
                if step.get("kill"):
                    threading.Thread(target=server.kill, daemon=True).start()
                    server._stopping.wait(5)
                    return
                if step.get("hang"):
                    server._stopping.wait(float(step["hang"]))
                    if not any(k in step for k in ("text", "tool", "tool_calls", "shell", "status")):
                        step = {**step, "text": "Done."}
                if "html" in step:
                    self._raw(200, "text/html; charset=utf-8", str(step["html"]).encode())
                    return
                if "status" in step:
                    self._json(
                        int(step["status"]),
                        step.get("body", {"error": {"message": f"scripted status {step['status']}", "type": "scripted"}}),
                        step.get("headers", {}),
                    )
                    return
                usage = {**DEFAULT_USAGE, **step.get("usage", {})}
                # a step's served_model answers under another name, as a router or a model-slot override does
                model = step.get("served_model") or body.get("model", "scripted")
                finish = None
                if step.get("unbounded"):
                    limit = body.get("max_tokens") or body.get("max_completion_tokens") or body.get("max_output_tokens")
                    if not limit:  # generates until the client gives up or the server stops
                        server._stopping.wait(3600)
                        return
                    step = {"text": " ".join(["word"] * int(limit))}
                    usage["output_tokens"], finish = int(limit), "length"
                if "text_tool_call" in step:
                    step = {"text": _text_tool_call(step["text_tool_call"], step["tool"], step.get("arguments", {}))}
                calls = _calls_of(step, tools)
                build = {"chat": _chat_reply, "responses": _responses_reply, "messages": _messages_reply}[wire]
                reply, events = build(model, step.get("text"), calls, usage)
                if wire == "chat":
                    if finish:
                        reply["choices"][0]["finish_reason"] = finish
                    if "raw_arguments" in step:
                        reply["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = step["raw_arguments"]
                    if step.get("message_null"):
                        reply["choices"][0]["message"] = None
                if body.get("stream"):
                    self._sse(events)
                else:
                    self._json(200, reply)

            def _raw(self, status: int, kind: str, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, str(value))
                self.end_headers()
                self.wfile.write(data)

            def _sse(self, events: list[tuple[str | None, Any]]) -> None:
                chunks = []
                for name, payload in events:
                    head = f"event: {name}\n" if name else ""
                    data = payload if isinstance(payload, str) else json.dumps(payload)
                    chunks.append(f"{head}data: {data}\n\n")
                data = "".join(chunks).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def _calls_of(step: dict[str, Any], offered: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """The (tool name, arguments) pairs a step asks for, shell steps mapped to the offered tool."""
    if "shell" in step:
        cmd = step["shell"]
        name = next((t for t in _SHELL_TOOLS if t in offered), offered[0] if offered else "shell")
        if name == "exec_command":
            return [(name, {"cmd": cmd})]
        if name == "shell":
            return [(name, {"command": ["bash", "-lc", cmd]})]
        return [(name, {"command": cmd})]
    if "tool" in step:
        return [(step["tool"], step.get("arguments", {}))]
    if "tool_calls" in step:
        return [(c["tool"], c.get("arguments", {})) for c in step["tool_calls"]]
    return []


def _text_tool_call(style: str, tool: str, arguments: dict[str, Any]) -> str:
    call = json.dumps({"name": tool, "arguments": arguments})
    return f"<tool_call>\n{call}\n</tool_call>" if style == "hermes" else call


def _id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def _chat_reply(model: str, text: str | None, calls: list, usage: dict) -> tuple[dict, list]:
    tool_calls = [
        {"id": _id("call"), "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
        for n, a in calls
    ]
    message: dict[str, Any] = {"role": "assistant", "content": None if calls else (text or "")}
    if tool_calls:
        message["tool_calls"] = tool_calls
    finish = "tool_calls" if calls else "stop"
    cid, created = _id("chatcmpl"), int(time.time())
    chat_usage = {
        "prompt_tokens": usage["input_tokens"],
        "completion_tokens": usage["output_tokens"],
        "total_tokens": usage["input_tokens"] + usage["output_tokens"],
    }
    reply = {
        "id": cid,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": chat_usage,
    }
    delta: dict[str, Any] = {"role": "assistant", "content": message["content"]}
    if tool_calls:
        delta["tool_calls"] = [{"index": i, **c} for i, c in enumerate(tool_calls)]
    base = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model}
    events: list[tuple[str | None, Any]] = [
        (None, {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}),
        (None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": chat_usage}),
        (None, "[DONE]"),
    ]
    return reply, events


def _responses_reply(model: str, text: str | None, calls: list, usage: dict) -> tuple[dict, list]:
    output: list[dict[str, Any]] = []
    for name, args in calls:
        output.append(
            {
                "type": "function_call",
                "id": _id("fc"),
                "call_id": _id("call"),
                "name": name,
                "arguments": json.dumps(args),
                "status": "completed",
            }
        )
    if not calls:
        output.append(
            {
                "type": "message",
                "id": _id("msg"),
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text or "", "annotations": []}],
            }
        )
    r_usage = {
        "input_tokens": usage["input_tokens"],
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": usage["output_tokens"],
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage["input_tokens"] + usage["output_tokens"],
    }
    reply = {
        "id": _id("resp"),
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": model,
        "output": output,
        "usage": r_usage,
    }
    events: list[tuple[str | None, Any]] = [
        ("response.created", {"type": "response.created", "response": {**reply, "status": "in_progress", "output": []}})
    ]
    for index, item in enumerate(output):
        events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": index, "item": item}))
        if item["type"] == "message":
            events.append(
                (
                    "response.output_text.delta",
                    {"type": "response.output_text.delta", "item_id": item["id"], "output_index": index, "content_index": 0, "delta": text or ""},
                )
            )
        events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": index, "item": item}))
    events.append(("response.completed", {"type": "response.completed", "response": reply}))
    return reply, events


def _messages_reply(model: str, text: str | None, calls: list, usage: dict) -> tuple[dict, list]:
    content: list[dict[str, Any]] = [
        {"type": "tool_use", "id": _id("toolu"), "name": n, "input": a} for n, a in calls
    ]
    if not calls:
        content.append({"type": "text", "text": text or ""})
    stop = "tool_use" if calls else "end_turn"
    m_usage = {"input_tokens": usage["input_tokens"], "output_tokens": usage["output_tokens"]}
    reply = {
        "id": _id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": m_usage,
    }
    start = {**reply, "content": [], "stop_reason": None, "usage": {"input_tokens": usage["input_tokens"], "output_tokens": 0}}
    events: list[tuple[str | None, Any]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(content):
        if block["type"] == "text":
            events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": block["text"]}}))
        else:
            events.append(
                ("content_block_start", {"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}})
            )
            events.append(
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}},
                )
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": usage["output_tokens"]}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return reply, events
