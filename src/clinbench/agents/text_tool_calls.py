"""Tool calls that a model wrote as text, because the server did not parse them into ``tool_calls``.

Small and local models often answer a tool-offering request with the call in the message
text. One parser serves the ``llm`` agent and every diagnosis role (panel, baseline,
gatekeeper, judge); it recognises, for the names of the tools offered only:

* ``hermes``: ``<tool_call>{"name": "run_sql", "arguments": {...}}</tool_call>`` (Qwen, Hermes);
* ``fenced``: the same object in a Markdown fence, ```` ```json {...} ``` ````;
* ``json``: bare objects anywhere in the text, several in a row, or a list of them, possibly
  after Mistral's ``[TOOL_CALLS]`` marker, with text before or after (models invent both);
* ``functions``: OpenAI-style ``functions.NAME:`` lines (what llama-cpp-python's
  ``chatml-function-calling`` returns as content), with or without a JSON object after.

A call object is ``{"name": N, "arguments"|"parameters"|"args"|"input": A}`` or
``{"function": {...}}``; ``A`` is an object or a JSON string holding one (arguments that
cannot be read become the call's ``error``, which goes back to the model). Every call found
is marked ``from_text`` with its style. Objects are read with ``clinbench.untrusted``'s bounds.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable, Iterator
from typing import Any

from clinbench import untrusted
from clinbench.agents.llm_clients import ToolCall

MAX_SCAN_CHARS = 256 * 1024  # a reply longer than this is not searched further
_FUNCTIONS = re.compile(r"(?m)^[ \t>*`]*functions\.([A-Za-z_][\w.-]*)\s*[:(]?")
_ARG_KEYS = ("arguments", "parameters", "args", "input")


def json_objects(text: str) -> Iterator[tuple[int, int, Any]]:
    """Every top-level JSON object or list in ``text`` as (start, end, value), left to right;
    an object that is not valid JSON is skipped, and so is one nested too deep."""
    text = text[:MAX_SCAN_CHARS]
    decoder = json.JSONDecoder()
    i = _next_open(text, 0)
    while i >= 0:
        try:
            value, end = decoder.raw_decode(text, i)
            if untrusted.too_deep(value):
                raise ValueError("too deep")
        except (ValueError, RecursionError):
            i = _next_open(text, i + 1)
            continue
        yield i, end, value
        i = _next_open(text, end)


def _next_open(text: str, start: int) -> int:
    hits = [p for p in (text.find("{", start), text.find("[", start)) if p >= 0]
    return min(hits) if hits else -1


def first_object(text: str | None) -> dict | None:
    """The first JSON object in ``text`` (a structured answer written without a function call)."""
    for _, _, value in json_objects(text or ""):
        if isinstance(value, dict):
            return value
    return None


def _call_parts(obj: Any) -> tuple[str, Any] | None:
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):  # {"type": "function", "function": {...}}
        obj = obj["function"]
    name = obj.get("name")
    if not isinstance(name, str):
        return None
    args = next((obj[k] for k in _ARG_KEYS if k in obj), {})
    return name, args


def _make_call(name: str, args: Any, style: str) -> ToolCall:
    error = None
    if isinstance(args, str):
        try:
            args = untrusted.loads(args) if args.strip() else {}
        except untrusted.UntrustedJSONError as exc:
            error, args = f"arguments of {name} are not valid JSON: {exc}", {}
        except json.JSONDecodeError:
            error, args = f"arguments of {name} are not valid JSON: {args[:120]!r}", {}
    if args is None:
        args = {}
    if not isinstance(args, dict):
        error, args = f"arguments of {name} must be a JSON object, not {type(args).__name__}", {}
    return ToolCall(f"text_{uuid.uuid4().hex[:12]}", name, args, error, from_text=style)


def _style(text: str, start: int) -> str:
    before = text[:start]
    if before.rfind("<tool_call>") > before.rfind("</tool_call>"):
        return "hermes"
    if before.count("```") % 2 == 1:
        return "fenced"
    return "json"


def find_text_tool_calls(text: str | None, tool_names: Iterable[str]) -> tuple[list[ToolCall], str | None]:
    """The tool calls written in ``text`` (offered names only) and the style of the first
    ('hermes', 'fenced', 'json' or 'functions'), or ``([], None)``."""
    if not text or not text.strip():
        return [], None
    names = set(tool_names)
    calls: list[ToolCall] = []
    for start, _, value in json_objects(text):
        for item in value if isinstance(value, list) else [value]:
            parts = _call_parts(item)
            if parts is not None and parts[0] in names:
                calls.append(_make_call(*parts, _style(text, start)))
    if calls:
        return calls, calls[0].from_text
    for m in _FUNCTIONS.finditer(text[:MAX_SCAN_CHARS]):
        name = m.group(1).rstrip(".")
        if name not in names:
            continue
        rest = text[m.end():m.end() + MAX_SCAN_CHARS]
        stripped = rest.lstrip()
        args: Any = {}
        if stripped.startswith("{"):
            found = next(json_objects(stripped), None)
            args = found[2] if found is not None and found[0] == 0 else stripped.split("\n", 1)[0]
        calls.append(_make_call(name, args, "functions"))
    return (calls, "functions") if calls else ([], None)
