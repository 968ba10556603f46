"""Readable HTML of a run's ``transcript.jsonl``.

A transcript is one JSON event a line. Events written by clinbench's own agents carry a
``type`` (start, user, assistant, tool_result, step_limit, end) with ``content`` / ``text`` /
``tool_calls``; transcripts of external coding agents vary, so anything unknown is shown as
its JSON rather than dropped. Long transcripts are cut at ``max_chars`` with a note, and the
full file stays linked beside them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from clinbench import untrusted

_TEXT_KEYS = ("content", "text", "message", "output")
_ROLE_KEYS = ("type", "role", "event", "kind")


def _role(event: dict[str, Any]) -> str:
    for key in _ROLE_KEYS:
        if isinstance(event.get(key), str):
            return event[key]
    return "event"


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content blocks of chat APIs
        parts = [b.get("text", "") if isinstance(b, dict) else str(b) for b in value]
        if all(isinstance(p, str) for p in parts) and any(parts):
            return "\n".join(parts)
    return json.dumps(value, indent=1, ensure_ascii=False, default=str)


@dataclass
class EventParts:
    """One transcript event as read: who spoke, what it said (key, text), the tools it called
    (name, input as text) and its other fields as one line."""

    role: str
    texts: list[tuple[str, str]] = field(default_factory=list)
    calls: list[tuple[str, str]] = field(default_factory=list)
    meta: str = ""


def event_parts(event: dict[str, Any]) -> EventParts:
    """The one reading of an event, for the report's transcript and the web app's steps."""
    parts = EventParts(_role(event))
    used = set(_ROLE_KEYS) | {"tool_calls"}
    for key in _TEXT_KEYS:
        if event.get(key) not in (None, "", []):
            parts.texts.append((key, _as_text(event[key])))
            used.add(key)
    for call in event.get("tool_calls") or []:
        if not isinstance(call, dict):
            continue
        args = call.get("arguments")
        if isinstance(args, str):
            try:
                args = untrusted.loads(args)
            except ValueError:
                pass
        if isinstance(args, dict) and len(args) == 1:
            args = next(iter(args.values()))
        parts.calls.append((str(call.get("name", "tool")), _as_text(args)))
    rest = {k: v for k, v in event.items() if k not in used}
    parts.meta = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False, default=str)}" for k, v in rest.items())
    return parts


def _event_html(event: dict[str, Any]) -> str:
    parts = event_parts(event)
    body = [f"<pre>{escape(text)}</pre>" for _, text in parts.texts]
    body += [f'<div class="call"><span class="tool">{escape(name)}</span><pre>{escape(args)}</pre></div>'
             for name, args in parts.calls]
    if parts.meta:
        body.append(f'<div class="meta">{escape(parts.meta)}</div>')
    role = parts.role
    return f'<div class="ev ev-{escape(role.replace(" ", "-"))}"><div class="role">{escape(role)}</div>{"".join(body)}</div>'


def render_transcript(path: Path, *, max_chars: int = 60000) -> str:
    """HTML of the transcript at ``path`` (empty string when there is none)."""
    if not path.is_file():
        return ""
    out: list[str] = []
    used = 0
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            if used >= max_chars:
                out.append('<div class="ev cut">… transcript cut here; open the full file for the rest</div>')
                break
            used += len(line)
            try:
                event = untrusted.loads(line)
            except ValueError:
                event = None
            if isinstance(event, dict):
                out.append(_event_html(event))
            else:
                out.append(f'<div class="ev"><pre>{escape(line[: max_chars])}</pre></div>')
    return "\n".join(out)
