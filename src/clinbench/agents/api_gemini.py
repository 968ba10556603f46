"""The Gemini API (``models/M:generateContent`` / ``:streamGenerateContent?alt=sse``), as the
Gemini CLI speaks it, translated to and from OpenAI chat completions.

So the Gemini CLI can run against any chat-completions endpoint (llama.cpp, vLLM, Ollama,
LiteLLM, clinbench's scripted server). Facts from the Gemini CLI 0.61 requests:

- ``contents`` alternate ``user`` / ``model`` turns of ``parts``; a part is ``text``,
  ``functionCall {id, name, args}`` (model) or ``functionResponse {id, name, response}`` (user);
  ``thought`` parts are the model's own reasoning and are not sent back;
- ``systemInstruction.parts[].text`` is the system prompt;
- ``tools[].functionDeclarations[]`` carry ``parameters`` or ``parametersJsonSchema``;
- ``generationConfig`` may set ``maxOutputTokens``, ``temperature``, ``topP``, ``stopSequences``.

The reply is one ``GenerateContentResponse``; streamed, one SSE ``data:`` event holding it.
``agents.api_translate.ChatTranslator`` serves these requests in the run's egress proxy.
"""

from __future__ import annotations

import json
import re
from typing import Any

from clinbench.agents.llm_clients import Turn

_MODEL_PATH = re.compile(r"/models/(?P<model>[^/:]+):(?P<method>generateContent|streamGenerateContent)")
_FINISH = {"stop": "STOP", "tool_calls": "STOP", "length": "MAX_TOKENS", "content_filter": "SAFETY"}


class GeminiTranslationError(ValueError):
    """A request the translation cannot express as a chat completion."""


def parse_path(path: str) -> tuple[str, bool]:
    """(model, streamed) from a Gemini request path; raises on any other path."""
    m = _MODEL_PATH.search(path)
    if not m:
        raise GeminiTranslationError(f"not a Gemini generateContent path: {path[:120]}")
    return m["model"], m["method"] == "streamGenerateContent"


def _text(parts: list[dict]) -> str:
    return "".join(p.get("text", "") for p in parts if isinstance(p, dict) and not p.get("thought"))


def to_chat_request(body: dict[str, Any], model: str) -> dict[str, Any]:
    """A chat-completions request body equivalent to a Gemini ``generateContent`` body."""
    if not isinstance(body, dict) or not isinstance(body.get("contents"), list):
        raise GeminiTranslationError("Gemini request has no contents list")
    messages: list[dict[str, Any]] = []
    system = _text(((body.get("systemInstruction") or {}).get("parts")) or [])
    if system:
        messages.append({"role": "system", "content": system})
    pending: dict[str, list[str]] = {}  # function name -> ids of calls not yet answered (in order)
    n_calls = 0
    for turn in body["contents"]:
        parts = [p for p in (turn.get("parts") or []) if isinstance(p, dict)]
        if turn.get("role") == "model":
            calls = []
            for p in parts:
                fc = p.get("functionCall")
                if isinstance(fc, dict):
                    n_calls += 1
                    cid = str(fc.get("id") or f"call_{n_calls}")
                    pending.setdefault(str(fc.get("name")), []).append(cid)
                    calls.append({"id": cid, "type": "function", "function": {
                        "name": str(fc.get("name")), "arguments": json.dumps(fc.get("args") or {})}})
            msg: dict[str, Any] = {"role": "assistant", "content": _text(parts)}
            if calls:
                msg["tool_calls"] = calls
            messages.append(msg)
            continue
        text_parts = []
        for p in parts:
            fr = p.get("functionResponse")
            if isinstance(fr, dict):
                name = str(fr.get("name"))
                ids = pending.get(name) or []
                cid = str(fr.get("id") or (ids[0] if ids else f"call_{name}"))
                if cid in ids:
                    ids.remove(cid)
                response = fr.get("response")
                if isinstance(response, dict) and set(response) <= {"output", "error"}:
                    content = str(response.get("output", response.get("error", "")))
                else:
                    content = json.dumps(response)
                messages.append({"role": "tool", "tool_call_id": cid, "content": content})
            elif "text" in p and not p.get("thought"):
                text_parts.append(p["text"])
        if text_parts:
            messages.append({"role": "user", "content": "".join(text_parts)})
    chat: dict[str, Any] = {"model": model, "messages": messages}
    tools = []
    for group in body.get("tools") or []:
        for fd in (group or {}).get("functionDeclarations") or []:
            params = fd.get("parametersJsonSchema") or fd.get("parameters") or {"type": "object", "properties": {}}
            tools.append({"type": "function", "function": {
                "name": fd["name"], "description": fd.get("description", ""), "parameters": _lower_types(params)}})
    if tools:
        chat["tools"] = tools
        chat["tool_choice"] = "auto"
    config = body.get("generationConfig") or {}
    for gemini_key, chat_key in (("maxOutputTokens", "max_tokens"), ("temperature", "temperature"),
                                 ("topP", "top_p"), ("stopSequences", "stop")):
        if config.get(gemini_key) is not None:
            chat[chat_key] = config[gemini_key]
    return chat


def _lower_types(schema: Any) -> Any:
    """Gemini's OpenAPI schemas write types in capitals (``OBJECT``); JSON Schema wants lower case."""
    if isinstance(schema, dict):
        out = {k: _lower_types(v) for k, v in schema.items()}
        if isinstance(out.get("type"), str):
            out["type"] = out["type"].lower()
        return out
    if isinstance(schema, list):
        return [_lower_types(v) for v in schema]
    return schema


def turn_to_gemini(turn: Turn, model: str) -> dict[str, Any]:
    """A Gemini ``GenerateContentResponse`` for a chat-completions turn."""
    parts: list[dict[str, Any]] = [{"text": turn.text}] if turn.text else []
    parts += [{"functionCall": {"id": c.id, "name": c.name, "args": c.arguments}} for c in turn.tool_calls]
    if not parts:
        parts.append({"text": ""})
    u = turn.usage
    meta: dict[str, Any] = {"promptTokenCount": u.input_tokens, "candidatesTokenCount": u.output_tokens,
                            "totalTokenCount": u.input_tokens + u.output_tokens}
    if u.cached_input_tokens:
        meta["cachedContentTokenCount"] = u.cached_input_tokens
    finish = _FINISH.get(str(turn.finish_reason or "stop"), "STOP")
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": 0}],
            "usageMetadata": meta, "modelVersion": model}


def sse_body(response: dict[str, Any]) -> bytes:
    """The streamed form (``alt=sse``): one event carrying the whole response."""
    return ("data: " + json.dumps(response) + "\r\n\r\n").encode()


def error_body(status: int, message: str) -> dict[str, Any]:
    """A Gemini API error object (the CLI reports ``error.message``)."""
    names = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
             429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}
    return {"error": {"code": status, "message": message, "status": names.get(status, "UNKNOWN")}}
