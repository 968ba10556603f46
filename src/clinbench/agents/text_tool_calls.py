"""Tool calls that a model wrote as text, because the server did not parse them into ``tool_calls``.

Small local models often answer a tool-offering request with the call in the message text.
Two styles are recognised, each only for the names of tools that were offered:

* ``hermes``: ``<tool_call>{"name": "run_sql", "arguments": {...}}</tool_call>`` (Qwen, Hermes);
* ``json``: the whole reply is one JSON object or list of them, ``{"name": ..., "arguments"|"parameters": ...}``,
  possibly in a ```json fence or after Mistral's ``[TOOL_CALLS]`` marker.

``find_text_tool_calls`` returns the calls and the style; the agent uses them only when the
user asked for it (``--text-tool-calls``) and records that it did.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable
from typing import Any

from clinbench.agents.llm_clients import ToolCall

_HERMES = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.S)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


def _as_call(obj: Any, names: set[str]) -> ToolCall | None:
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):  # {"type": "function", "function": {...}}
        obj = obj["function"]
    name = obj.get("name")
    if not isinstance(name, str) or name not in names:
        return None
    args = obj.get("arguments", obj.get("parameters", {}))
    error = None
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            error = f"arguments of {name} are not valid JSON: {args[:120]!r}"
            args = {}
    if not isinstance(args, dict):
        error, args = f"arguments of {name} must be a JSON object, not {type(args).__name__}", {}
    return ToolCall(f"text_{uuid.uuid4().hex[:12]}", name, args, error)


def _json_values(text: str) -> list[Any]:
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    body = body.removeprefix("[TOOL_CALLS]").strip()
    try:
        value = json.loads(body)
    except json.JSONDecodeError:
        return []
    return value if isinstance(value, list) else [value]


def find_text_tool_calls(text: str | None, tool_names: Iterable[str]) -> tuple[list[ToolCall], str | None]:
    """The tool calls written in ``text`` and their style ('hermes' or 'json'), or ``([], None)``."""
    if not text or not text.strip():
        return [], None
    names = set(tool_names)
    blocks = _HERMES.findall(text)
    if blocks:
        calls = []
        for block in blocks:
            try:
                call = _as_call(json.loads(block), names)
            except json.JSONDecodeError:
                call = None
            if call is not None:
                calls.append(call)
        return (calls, "hermes") if calls else ([], None)
    values = _json_values(text)
    calls = [c for c in (_as_call(v, names) for v in values) if c is not None]
    if calls and len(calls) == len(values):
        return calls, "json"
    return [], None
