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

Chat-completions requests themselves (``POST /v1/chat/completions``, on any path or inside a
tunnel) come here too and are passed through with the same limits and accounting, so no request
of a ``--endpoint-api chat`` run reaches the endpoint around them. Every streamed answer,
Gemini's and chat's included, gets keep-alives while a slow model works (Gemini: blank lines,
which its SDK skips before a ``data:`` line; chat: SSE comments).

The translator is also where the run's limits hold for a CLI: each upstream request gets the
time left before the run's deadline, ``max_tokens`` no larger than the configured cap, and no
request is made once the run's token budget is used up, counting the tokens requests in flight
may still use (the CLI gets an error naming the budget, and ``limit_hit`` says which limit
ended the run). It counts tokens (cached input
included), requests and model seconds from what the endpoint reported.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
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
    upstream: dict[str, Any] = field(default_factory=dict)  # what egress.jsonl records of the upstream request


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
def _carry_settings(chat: dict[str, Any], body: dict[str, Any], max_tokens_key: str, schema_holder: Any) -> None:
    """What both translations carry over the same way: the output cap (named ``max_tokens_key``
    in ``body``), a JSON-schema output format, temperature and top_p."""
    if body.get(max_tokens_key):
        chat["max_tokens"] = body[max_tokens_key]
    fmt = _schema_format(schema_holder)
    if fmt:
        chat["response_format"] = fmt
    for key in ("temperature", "top_p"):
        if key in body:
            chat[key] = body[key]


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
    _carry_settings(chat, body, "max_output_tokens", (body.get("text") or {}).get("format"))
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
    if body.get("stop_sequences"):
        chat["stop"] = body["stop_sequences"]
    _carry_settings(chat, body, "max_tokens", (body.get("output_config") or {}).get("format"))
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


# -- chat completions passed through (with the run's limits) -----------------------------
def chat_chunks(turn: Turn, model: str, reply_id: str | None = None) -> list[bytes]:
    """A streamed chat completion (``data:`` chunks, then ``[DONE]``) for a turn."""
    cid, created = reply_id or _id("chatcmpl"), int(time.time())
    delta: dict[str, Any] = {"role": "assistant", "content": turn.text}
    if turn.tool_calls:
        delta["tool_calls"] = [{"index": i, "id": c.id, "type": "function",
                                "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                               for i, c in enumerate(turn.tool_calls)]
    u = turn.usage
    usage = {"prompt_tokens": u.input_tokens, "completion_tokens": u.output_tokens, "total_tokens": u.total_tokens}
    base = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model}
    finish = turn.finish_reason or ("tool_calls" if turn.tool_calls else "stop")
    events = [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
              {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage}]
    return [f"data: {json.dumps(e)}\n\n".encode() for e in events] + [b"data: [DONE]\n\n"]


def chat_error(status: int, message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "upstream_error" if status >= 500 else "invalid_request_error",
                      "code": status}}


# -- the translator the egress proxy calls ------------------------------------------------
@dataclass
class _Call:
    """One upstream request: the turn (or the failure), and what the egress log records of it."""

    turn: Turn | None = None
    failure: tuple[int, str] | None = None
    raw: bytes = b""
    record: dict[str, Any] | None = None


class ChatTranslator:
    """Answers Responses, Messages, Gemini and chat-completions requests from a chat-completions
    endpoint, within the run's limits: every model request of a ``--endpoint-api chat`` run comes here."""

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
        self._reserved = 0  # tokens requests in flight may still use (so parallel requests cannot all pass the budget)
        self._lock = threading.Lock()
        self._http = httpx.Client(trust_env=False)

    def close(self) -> None:
        self._http.close()

    @staticmethod
    def api_of(method: str, path: str) -> str | None:
        """'responses', 'messages', 'gemini', 'chat' or 'count_tokens' for a request this translator serves, else None."""
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
        if route.endswith("/chat/completions"):
            return "chat"
        return None

    def handle(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Reply:
        """The reply to one request; a request or reply it cannot translate is an error reply, never a crash."""
        api = self.api_of(method, path)
        try:
            return self._handle(api, headers, raw, path)
        except Exception as exc:  # noqa: BLE001 - the CLI gets a one-line error and the run's record says what broke
            message = f"clinbench translator error: {type(exc).__name__}: {one_line(exc, 200)}"
            with self._lock:
                self.last_error = message
            reply = self._error(api, 500, message)
            reply.upstream = {"translator_error": message}
            return reply

    def _handle(self, api: str | None, headers: dict[str, str], raw: bytes, path: str = "") -> Reply:
        try:
            body = untrusted.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("not an object")
        except (ValueError, RecursionError):
            return self._error(api, 400, "clinbench translator: request body is not a JSON object")
        if api == "count_tokens":  # an estimate: Claude Code uses it only to plan compaction
            return Reply(200, "application/json", json.dumps({"input_tokens": len(raw) // 4}).encode())
        custom: set[str] = set()
        gemini_model, streamed = "", False
        if api == "gemini":
            gemini_model, streamed = api_gemini.parse_path(path)
            chat = api_gemini.to_chat_request(body, gemini_model)
        elif api == "responses":
            chat, custom = responses_to_chat(body)
        elif api == "messages":
            chat = messages_to_chat(body)
        else:  # chat completions, passed through with the run's limits
            chat = {k: v for k, v in body.items() if k not in ("stream", "stream_options", "n", "max_completion_tokens")}
            asked = body.get("max_completion_tokens") or body.get("max_tokens")
            chat["max_tokens"] = asked if isinstance(asked, int) and not isinstance(asked, bool) and asked > 0 else None
            streamed = bool(body.get("stream"))
        if self.max_tokens:
            chat["max_tokens"] = min(chat.get("max_tokens") or self.max_tokens, self.max_tokens)
        elif chat.get("max_tokens") is None:
            chat.pop("max_tokens", None)
        reserve = len(raw) // 4 + int(chat.get("max_tokens") or 0)
        with self._lock:
            used = self.usage.total_tokens
            if self.token_budget is not None and used + self._reserved >= self.token_budget:
                self.limit_hit = "token_budget"
                busy = f", {self._reserved} more reserved by requests in flight" if self._reserved else ""
                return self._error(api, 400, f"clinbench: the run's token budget of {self.token_budget} tokens is used up "
                                             f"({used} tokens{busy}); no further model requests are made")
            self._reserved += reserve
        key = headers.get("x-api-key") or headers.get("x-goog-api-key")
        auth = headers.get("authorization") or (f"Bearer {key}" if key else None)
        model = str(body.get("model") or gemini_model or "model")
        if api in ("responses", "messages") and body.get("stream") or api in ("gemini", "chat") and streamed:
            return self._stream(api, chat, auth, model, custom, reserve, gemini_model)
        call = self._call(chat, auth, reserve)
        return self._answer(api, call, model, custom, gemini_model, streamed)

    def _answer(self, api: str, call: _Call, model: str, custom: set[str], gemini_model: str, streamed: bool) -> Reply:
        if call.failure is not None:
            reply = self._error(api, *call.failure)
        elif api == "gemini":
            out = api_gemini.turn_to_gemini(call.turn, gemini_model)
            reply = Reply(200, "text/event-stream", api_gemini.sse_body(out)) if streamed \
                else Reply(200, "application/json", json.dumps(out).encode())
        elif api == "chat":
            reply = Reply(200, "text/event-stream", b"".join(chat_chunks(call.turn, model))) if streamed \
                else Reply(200, "application/json", call.raw)
        else:
            out, _ = self._build(api, call.turn, model, custom)
            reply = Reply(200, "application/json", json.dumps(out).encode())
        reply.upstream = call.record or {}
        return reply

    def _build(self, api: str, turn: Turn, model: str, custom: set[str], reply_id: str | None = None):
        return chat_to_responses(turn, model, custom, reply_id) if api == "responses" else chat_to_messages(turn, model, reply_id)

    def _stream(self, api: str, chat: dict[str, Any], auth: str | None, model: str, custom: set[str], reserve: int,
                gemini_model: str) -> Reply:
        """A streamed answer. A quick upstream reply (or error) is sent whole, with its own status; a slow one
        gets the stream started and a keep-alive every ``keepalive_seconds`` while the model works, so a
        CLI's stream-idle or header timeout does not fire on a slow local model (every translated API)."""
        result: dict[str, _Call] = {}
        worker = threading.Thread(target=lambda: result.update(v=self._call(chat, auth, reserve)), name="translate",
                                  daemon=True)
        worker.start()
        worker.join(self.first_byte_seconds)
        if not worker.is_alive():
            call = result["v"]
            if call.failure is not None or api in ("gemini", "chat"):
                return self._answer(api, call, model, custom, gemini_model, True)
            reply = Reply(200, "text/event-stream", sse(self._build(api, call.turn, model, custom)[1]))
            reply.upstream = call.record or {}
            return reply
        reply = Reply(200, "text/event-stream", b"")
        if api == "gemini":  # the Gemini SDK skips whitespace before a ``data:`` line; an SSE comment would stall it
            first, ping = b"\n", b"\n"
        elif api == "chat":
            first, ping = b": keep-alive\n\n", b": keep-alive\n\n"
        else:
            reply_id = _id("resp" if api == "responses" else "msg")
            placeholder = Turn("", [], Usage(0, 0, 0), None)
            opening = self._build(api, placeholder, model, custom, reply_id)[1][0]
            first = sse([opening])
            ping = sse([("response.in_progress", {"type": "response.in_progress", "response": {**opening[1]["response"]}})
                        if api == "responses" else ("ping", {"type": "ping"})])

        def chunks() -> Iterator[bytes]:
            yield first
            while worker.is_alive():
                worker.join(self.keepalive_seconds)
                if worker.is_alive():
                    yield ping
            call = result["v"]
            reply.upstream = call.record or {}
            if call.failure is not None:
                status, message = call.failure
                if api == "responses":
                    failed = {**opening[1]["response"], "status": "failed", "error": {"code": "server_error", "message": message}}
                    yield sse([("response.failed", {"type": "response.failed", "response": failed})])
                elif api == "messages":
                    yield sse([("error", messages_error(status, message))])
                elif api == "gemini":  # the SDK reads a chunk that is a JSON error object as the API's error
                    yield json.dumps(api_gemini.error_body(status, message)).encode()
                else:
                    yield f"data: {json.dumps(chat_error(status, message))}\n\n".encode()
                return
            if api == "gemini":
                yield api_gemini.sse_body(api_gemini.turn_to_gemini(call.turn, gemini_model))
            elif api == "chat":
                yield from chat_chunks(call.turn, model)
            else:
                yield sse(self._build(api, call.turn, model, custom, reply_id)[1][1:])

        reply.chunks = chunks()
        return reply

    def _call(self, chat: dict[str, Any], auth: str | None, reserve: int = 0) -> _Call:
        try:
            return self._call_once(chat, auth)
        finally:
            with self._lock:
                self._reserved -= reserve

    def _call_once(self, chat: dict[str, Any], auth: str | None) -> _Call:
        timeout = self.request_timeout
        if self.deadline is not None:
            timeout = min(timeout, self.deadline - time.monotonic())
            if timeout <= 0:
                self.limit_hit = "timeout"
                return _Call(failure=(504, "clinbench: the run's time is up; no further model requests are made"),
                             record={"model_request": False})
        t0 = time.monotonic()
        try:
            resp = self._http.post(self.chat_url, json=chat, timeout=timeout,
                                   headers={"Authorization": auth} if auth else {})
        except httpx.TimeoutException:
            if self.deadline is not None and time.monotonic() >= self.deadline - 0.05:
                self.limit_hit = "timeout"
            return self._failed(504, f"chat endpoint did not answer within {timeout:.1f} s", t0,
                                {"model_request": False, "upstream_error": f"no answer in time ({timeout:.1f} s)"})
        except httpx.HTTPError as exc:
            from clinbench.agents.egress import upstream_reason

            reason = upstream_reason(exc)
            return self._failed(502, f"chat endpoint unreachable: {reason}", t0,
                                {"model_request": False, "upstream_error": reason})
        record: dict[str, Any] = {"model_request": True, "upstream_status": resp.status_code}
        if resp.status_code >= 400:
            return self._failed(resp.status_code, f"chat endpoint answered HTTP {resp.status_code}: {error_body(resp)}", t0, record)
        try:
            turn = parse_chat_completion(json_reply(resp, "chat completion"))
        except (ModelReplyError, RecursionError) as exc:
            return self._failed(400, f"chat endpoint reply unusable: {one_line(exc, 300)}", t0, record)
        with self._lock:
            turn.usage.model_seconds = time.monotonic() - t0
            self.usage = self.usage.add(turn.usage)
            if turn.served_model:
                self.served_models.add(turn.served_model)
        record["tokens"] = turn.usage.total_tokens
        return _Call(turn=turn, raw=resp.content, record=record)

    def _failed(self, status: int, message: str, t0: float, record: dict[str, Any]) -> _Call:
        """A failed request: its seconds count; it is a model request only if the endpoint answered it
        (an unreachable endpoint's attempt is not)."""
        with self._lock:
            self.usage = self.usage.add(Usage(0, 0, int(bool(record.get("model_request"))), model_seconds=time.monotonic() - t0))
            self.last_error = message
        return _Call(failure=(status, message), record=record)

    def _error(self, api: str | None, status: int, message: str) -> Reply:
        if api == "gemini":
            payload = api_gemini.error_body(status, message)
        elif api == "chat":
            payload = chat_error(status, message)
        else:
            payload = responses_error(status, message) if api == "responses" else messages_error(status, message)
        return Reply(status, "application/json", json.dumps(payload).encode())
