"""Codex and Claude Code on an endpoint that speaks only chat completions.

Codex speaks the OpenAI Responses API (``POST /v1/responses``), Claude Code the Anthropic
Messages API (``POST /v1/messages``) and the Gemini CLI the Gemini API
(``POST /v1beta/models/M:streamGenerateContent``, ``agents/api_gemini.py``); llama.cpp's ``llama-server``, many vLLM and Ollama setups
and LiteLLM serve only ``POST /v1/chat/completions``. With ``--endpoint-api chat`` the run's
egress proxy hands those two requests to a ``ChatTranslator``, which rewrites the request as
a chat completion, calls the endpoint (never streaming), and answers in the client's own
API: JSON, or server-sent events when the client asked for ``stream: true`` (the CLIs do). A
streamed answer that takes the model more than ``first_byte_seconds`` starts at once and carries
keep-alive events (Responses ``response.in_progress``, Messages ``ping``) until the answer is
ready, so a CLI's stream-idle timeout does not drop a slow local model's reply.

The translator is also where the run's limits hold for a CLI: each upstream request gets the
time left before the run's deadline, ``max_tokens`` no larger than the configured cap, and no
request is made once the run's token budget is used up (the CLI gets an error naming the
budget, and ``limit_hit`` says which limit ended the run). It counts tokens (cached input
included), requests and model seconds from what the endpoint reported.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from clinbench import untrusted
from clinbench.agents import api_gemini
from clinbench.agents.llm_clients import ModelReplyError, Turn, error_body, json_reply, one_line, parse_chat_completion
from clinbench.records import Usage


@dataclass
class Reply:
    status: int
    content_type: str
    body: bytes
    chunks: Iterator[bytes] | None = None  # a stream sent as it comes (then ``body`` is empty)


def _id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def _text_of(content: Any) -> str:
    """Text of a content value: a string, or a list of text-bearing blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                if isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif block.get("type") in ("image", "input_image", "image_url"):
                    parts.append("[image omitted]")
        return "\n".join(p for p in parts if p)
    return str(content)


def _schema_format(schema_holder: Any) -> dict[str, Any] | None:
    if isinstance(schema_holder, dict) and isinstance(schema_holder.get("schema"), dict):
        return {"type": "json_schema", "json_schema": {"name": schema_holder.get("name") or "answer",
                                                       "schema": schema_holder["schema"]}}
    return None


class _Conversation:
    """Builds chat messages; system text is merged into one leading system message (many chat
    templates accept a system message only first)."""

    def __init__(self) -> None:
        self.system: list[str] = []
        self.messages: list[dict[str, Any]] = []

    def add_system(self, text: str) -> None:
        if text:
            self.system.append(text)

    def add(self, role: str, text: str) -> None:
        if role == "assistant" and self.messages and self.messages[-1]["role"] == "assistant" \
                and not self.messages[-1].get("tool_calls"):
            self.messages[-1]["content"] += ("\n" if self.messages[-1]["content"] else "") + text
            return
        self.messages.append({"role": role, "content": text})

    def add_call(self, call_id: str, name: str, arguments: str) -> None:
        last = self.messages[-1] if self.messages else None
        if last is None or last["role"] != "assistant":
            last = {"role": "assistant", "content": ""}
            self.messages.append(last)
        last.setdefault("tool_calls", []).append(
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments or "{}"}})

    def add_result(self, call_id: str, text: str) -> None:
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": text})

    def wire(self) -> list[dict[str, Any]]:
        head = [{"role": "system", "content": "\n\n".join(self.system)}] if self.system else []
        return head + self.messages


# -- Responses API (Codex) ----------------------------------------------------------------
def responses_to_chat(body: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """A chat-completions request for a Responses request, and the names of its custom (freeform) tools."""
    conv = _Conversation()
    conv.add_system(_text_of(body.get("instructions")))
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    for item in items or []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role", "user")
            text = _text_of(item.get("content"))
            if role in ("system", "developer"):
                conv.add_system(text)
            elif text:
                conv.add("assistant" if role == "assistant" else "user", text)
        elif kind in ("function_call", "custom_tool_call"):
            args = item.get("arguments") if kind == "function_call" else json.dumps({"input": item.get("input", "")})
            conv.add_call(str(item.get("call_id") or item.get("id")), str(item.get("name")), args if isinstance(args, str) else json.dumps(args))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            conv.add_result(str(item.get("call_id")), _text_of(item.get("output")))
    tools, custom = [], set()
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "function":
            tools.append({"type": "function", "function": {"name": tool.get("name"), "description": tool.get("description", ""),
                                                           "parameters": tool.get("parameters") or {"type": "object", "properties": {}}}})
        elif tool.get("type") == "custom":
            custom.add(tool.get("name"))
            tools.append({"type": "function", "function": {
                "name": tool.get("name"), "description": tool.get("description", ""),
                "parameters": {"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]}}})
    chat: dict[str, Any] = {"model": body.get("model"), "messages": conv.wire()}
    if tools:
        chat["tools"] = tools
        choice = body.get("tool_choice", "auto")
        chat["tool_choice"] = choice if isinstance(choice, str) else "auto"
        if isinstance(body.get("parallel_tool_calls"), bool):
            chat["parallel_tool_calls"] = body["parallel_tool_calls"]
    if body.get("max_output_tokens"):
        chat["max_tokens"] = body["max_output_tokens"]
    fmt = _schema_format((body.get("text") or {}).get("format"))
    if fmt:
        chat["response_format"] = fmt
    for key in ("temperature", "top_p"):
        if key in body:
            chat[key] = body[key]
    return chat, custom


def chat_to_responses(turn: Turn, model: str, custom: set[str], reply_id: str | None = None) -> tuple[dict[str, Any], list[tuple[str, dict]]]:
    """A Responses reply (JSON) and its server-sent events for a chat turn."""
    output: list[dict[str, Any]] = []
    if turn.text:
        output.append({"type": "message", "id": _id("msg"), "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": turn.text, "annotations": []}]})
    for call in turn.tool_calls:
        if call.name in custom:
            output.append({"type": "custom_tool_call", "id": _id("ctc"), "call_id": call.id, "name": call.name,
                           "input": str(call.arguments.get("input", "")), "status": "completed"})
        else:
            output.append({"type": "function_call", "id": _id("fc"), "call_id": call.id, "name": call.name,
                           "arguments": json.dumps(call.arguments), "status": "completed"})
    u = turn.usage
    usage = {"input_tokens": u.input_tokens, "input_tokens_details": {"cached_tokens": u.cached_input_tokens},
             "output_tokens": u.output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": u.input_tokens + u.output_tokens}
    status = "incomplete" if turn.finish_reason == "length" and not turn.tool_calls else "completed"
    reply = {"id": reply_id or _id("resp"), "object": "response", "created_at": int(time.time()), "status": status,
             "model": model, "output": output, "usage": usage}
    if status == "incomplete":
        reply["incomplete_details"] = {"reason": "max_output_tokens"}
    events: list[tuple[str, dict]] = [
        ("response.created", {"type": "response.created", "response": {**reply, "status": "in_progress", "output": []}})]
    for index, item in enumerate(output):
        events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": index, "item": item}))
        if item["type"] == "message":
            events.append(("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"],
                                                          "output_index": index, "content_index": 0, "delta": turn.text}))
        events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": index, "item": item}))
    events.append((f"response.{status}", {"type": f"response.{status}", "response": reply}))
    return reply, events


def responses_error(status: int, message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "upstream_error" if status >= 500 else "invalid_request_error",
                      "code": str(status)}}


# -- Messages API (Claude Code) -----------------------------------------------------------
def messages_to_chat(body: dict[str, Any]) -> dict[str, Any]:
    """A chat-completions request for an Anthropic Messages request."""
    conv = _Conversation()
    conv.add_system(_text_of(body.get("system")))
    for msg in body.get("messages") or []:
        if not isinstance(msg, dict):
            continue
        role, content = msg.get("role", "user"), msg.get("content")
        if isinstance(content, str):
            conv.add("assistant" if role == "assistant" else "user", content)
            continue
        texts = []
        for block in content or []:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                texts.append(str(block.get("text", "")))
            elif kind == "tool_use" and role == "assistant":
                if texts:
                    conv.add("assistant", "\n".join(texts))
                    texts = []
                conv.add_call(str(block.get("id")), str(block.get("name")), json.dumps(block.get("input") or {}))
            elif kind == "tool_result":
                result = _text_of(block.get("content"))
                conv.add_result(str(block.get("tool_use_id")), ("error: " + result) if block.get("is_error") else result)
            elif kind == "image":
                texts.append("[image omitted]")
        if texts:
            conv.add("assistant" if role == "assistant" else "user", "\n".join(texts))
    chat: dict[str, Any] = {"model": body.get("model"), "messages": conv.wire()}
    tools = [{"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                               "parameters": t.get("input_schema") or {"type": "object", "properties": {}}}}
             for t in body.get("tools") or [] if isinstance(t, dict) and t.get("name") and "input_schema" in t]
    if tools:
        chat["tools"] = tools
        choice = body.get("tool_choice") or {"type": "auto"}
        kind = choice.get("type") if isinstance(choice, dict) else "auto"
        chat["tool_choice"] = {"any": "required", "none": "none"}.get(kind, "auto")
        if kind == "tool" and choice.get("name"):
            chat["tool_choice"] = {"type": "function", "function": {"name": choice["name"]}}
    if body.get("max_tokens"):
        chat["max_tokens"] = body["max_tokens"]
    if body.get("stop_sequences"):
        chat["stop"] = body["stop_sequences"]
    fmt = _schema_format((body.get("output_config") or {}).get("format"))
    if fmt:
        chat["response_format"] = fmt
    for key in ("temperature", "top_p"):
        if key in body:
            chat[key] = body[key]
    return chat


def chat_to_messages(turn: Turn, model: str, reply_id: str | None = None) -> tuple[dict[str, Any], list[tuple[str, dict]]]:
    """A Messages reply (JSON) and its server-sent events for a chat turn."""
    content: list[dict[str, Any]] = [{"type": "text", "text": turn.text}] if turn.text else []
    content += [{"type": "tool_use", "id": c.id if c.id.startswith("toolu_") else f"toolu_{c.id}", "name": c.name,
                 "input": c.arguments} for c in turn.tool_calls]
    stop = "tool_use" if turn.tool_calls else "max_tokens" if turn.finish_reason == "length" else "end_turn"
    u = turn.usage
    usage = {"input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
             "cache_read_input_tokens": u.cached_input_tokens, "cache_creation_input_tokens": 0}
    reply = {"id": reply_id or _id("msg"), "type": "message", "role": "assistant", "model": model, "content": content,
             "stop_reason": stop, "stop_sequence": None, "usage": usage}
    start = {**reply, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 0}}
    events: list[tuple[str, dict]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(content):
        if block["type"] == "text":
            events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {"type": "text", "text": ""}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                   "delta": {"type": "text_delta", "text": block["text"]}}))
        else:
            events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {**block, "input": {}}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                   "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                     "usage": usage}))
    events.append(("message_stop", {"type": "message_stop"}))
    return reply, events


def messages_error(status: int, message: str) -> dict[str, Any]:
    kind = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
            429: "rate_limit_error"}.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


def sse(events: list[tuple[str, dict]]) -> bytes:
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


# -- the translator the egress proxy calls ------------------------------------------------
class ChatTranslator:
    """Answers Responses and Messages requests from a chat-completions endpoint, within the run's limits."""

    first_byte_seconds = 2.0  # a streamed answer starts (with keep-alives) once the model takes longer
    keepalive_seconds = 10.0

    def __init__(self, upstream_base_url: str, *, deadline: float | None = None, max_tokens: int | None = None,
                 token_budget: int | None = None, request_timeout: float = 600.0):
        self.chat_url = upstream_base_url.rstrip("/") + "/chat/completions"
        self.deadline = deadline
        self.max_tokens = max_tokens
        self.token_budget = token_budget
        self.request_timeout = request_timeout
        self.usage = Usage()
        self.limit_hit: str | None = None  # 'token_budget' | 'timeout'
        self.last_error: str | None = None
        self.served_models: set[str] = set()  # the "model" field of the endpoint's replies
        self._lock = threading.Lock()
        self._http = httpx.Client()

    def close(self) -> None:
        self._http.close()

    @staticmethod
    def api_of(method: str, path: str) -> str | None:
        """'responses', 'messages', 'gemini' or 'count_tokens' for a request this translator serves, else None."""
        route = urlsplit(path).path.rstrip("/")
        if method.upper() != "POST":
            return None
        if route.endswith((":generateContent", ":streamGenerateContent")):
            return "gemini"
        if route.endswith("/messages/count_tokens"):
            return "count_tokens"
        if route.endswith("/responses"):
            return "responses"
        if route.endswith("/messages"):
            return "messages"
        return None

    def handle(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Reply:
        """The reply to one request; a request or reply it cannot translate is an error reply, never a crash."""
        api = self.api_of(method, path)
        try:
            return self._handle(api, headers, raw, path)
        except Exception as exc:  # the CLI gets a one-line error and the run's record says what broke
            message = f"clinbench translator error: {type(exc).__name__}: {one_line(exc, 200)}"
            with self._lock:
                self.last_error = message
            return self._error(api, 500, message)

    def _handle(self, api: str | None, headers: dict[str, str], raw: bytes, path: str = "") -> Reply:
        try:
            body = untrusted.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("not an object")
        except ValueError:
            return self._error(api, 400, "clinbench translator: request body is not a JSON object")
        if api == "count_tokens":  # an estimate: Claude Code uses it only to plan compaction
            return Reply(200, "application/json", json.dumps({"input_tokens": len(raw) // 4}).encode())
        custom: set[str] = set()
        if api == "gemini":
            gemini_model, streamed = api_gemini.parse_path(path)
            chat = api_gemini.to_chat_request(body, gemini_model)
        elif api == "responses":
            chat, custom = responses_to_chat(body)
        else:
            chat = messages_to_chat(body)
        if self.max_tokens:
            chat["max_tokens"] = min(chat.get("max_tokens") or self.max_tokens, self.max_tokens)
        with self._lock:
            used = self.usage.total_tokens
        if self.token_budget is not None and used >= self.token_budget:
            self.limit_hit = "token_budget"
            return self._error(api, 400, f"clinbench: the run's token budget of {self.token_budget} tokens is used up "
                                         f"({used} tokens); no further model requests are made")
        key = headers.get("x-api-key") or headers.get("x-goog-api-key")
        auth = headers.get("authorization") or (f"Bearer {key}" if key else None)
        model = str(body.get("model") or "model")
        if body.get("stream") and api != "gemini":
            return self._stream(api, chat, auth, model, custom)
        turn, failure = self._call(chat, auth)
        if failure is not None:
            return self._error(api, *failure)
        if api == "gemini":
            reply = api_gemini.turn_to_gemini(turn, gemini_model)
            if streamed:
                return Reply(200, "text/event-stream", api_gemini.sse_body(reply))
            return Reply(200, "application/json", json.dumps(reply).encode())
        reply, _ = chat_to_responses(turn, model, custom) if api == "responses" else chat_to_messages(turn, model)
        return Reply(200, "application/json", json.dumps(reply).encode())

    def _build(self, api: str, turn: Turn, model: str, custom: set[str], reply_id: str | None = None):
        return chat_to_responses(turn, model, custom, reply_id) if api == "responses" else chat_to_messages(turn, model, reply_id)

    def _stream(self, api: str, chat: dict[str, Any], auth: str | None, model: str, custom: set[str]) -> Reply:
        """An SSE answer. A quick upstream reply (or error) is sent whole, with its own status; a slow one
        gets the stream started and a keep-alive event every ``keepalive_seconds`` while the model works,
        so a CLI's stream-idle timeout does not fire on a slow local model."""
        result: dict[str, Any] = {}
        worker = threading.Thread(target=lambda: result.update(v=self._call(chat, auth)), name="translate", daemon=True)
        worker.start()
        worker.join(self.first_byte_seconds)
        if not worker.is_alive():
            turn, failure = result["v"]
            if failure is not None:
                return self._error(api, *failure)
            return Reply(200, "text/event-stream", sse(self._build(api, turn, model, custom)[1]))
        reply_id = _id("resp" if api == "responses" else "msg")
        placeholder = Turn("", [], Usage(0, 0, 0), None)
        first = self._build(api, placeholder, model, custom, reply_id)[1][0]
        ping = (("response.in_progress", {"type": "response.in_progress", "response": {**first[1]["response"]}})
                if api == "responses" else ("ping", {"type": "ping"}))

        def chunks() -> Iterator[bytes]:
            yield sse([first])
            while worker.is_alive():
                worker.join(self.keepalive_seconds)
                if worker.is_alive():
                    yield sse([ping])
            turn, failure = result["v"]
            if failure is not None:
                if api == "responses":
                    failed = {**first[1]["response"], "status": "failed", "error": {"code": "server_error", "message": failure[1]}}
                    yield sse([("response.failed", {"type": "response.failed", "response": failed})])
                else:
                    yield sse([("error", messages_error(failure[0], failure[1]))])
                return
            yield sse(self._build(api, turn, model, custom, reply_id)[1][1:])

        return Reply(200, "text/event-stream", b"", chunks())

    def _call(self, chat: dict[str, Any], auth: str | None) -> tuple[Turn | None, tuple[int, str] | None]:
        timeout = self.request_timeout
        if self.deadline is not None:
            timeout = min(timeout, self.deadline - time.monotonic())
            if timeout <= 0:
                self.limit_hit = "timeout"
                return None, (504, "clinbench: the run's time is up; no further model requests are made")
        t0 = time.monotonic()
        try:
            resp = self._http.post(self.chat_url, json=chat, timeout=timeout,
                                   headers={"Authorization": auth} if auth else {})
        except httpx.TimeoutException:
            if self.deadline is not None and time.monotonic() >= self.deadline - 0.05:
                self.limit_hit = "timeout"
            return None, self._failed(504, f"chat endpoint did not answer within {timeout:.1f} s", t0)
        except httpx.HTTPError as exc:
            return None, self._failed(502, f"chat endpoint unreachable: {one_line(exc, 160)}", t0)
        if resp.status_code >= 400:
            return None, self._failed(resp.status_code, f"chat endpoint answered HTTP {resp.status_code}: {error_body(resp)}", t0)
        try:
            turn = parse_chat_completion(json_reply(resp, "chat completion"))
        except ModelReplyError as exc:
            return None, self._failed(400, f"chat endpoint reply unusable: {exc}", t0)
        with self._lock:
            turn.usage.model_seconds = time.monotonic() - t0
            self.usage = self.usage.add(turn.usage)
            if turn.served_model:
                self.served_models.add(turn.served_model)
        return turn, None

    def _failed(self, status: int, message: str, t0: float) -> tuple[int, str]:
        with self._lock:
            self.usage = self.usage.add(Usage(0, 0, 1, model_seconds=time.monotonic() - t0))
            self.last_error = message
        return status, message

    def _error(self, api: str | None, status: int, message: str) -> Reply:
        if api == "gemini":
            payload = api_gemini.error_body(status, message)
        else:
            payload = responses_error(status, message) if api == "responses" else messages_error(status, message)
        return Reply(status, "application/json", json.dumps(payload).encode())
