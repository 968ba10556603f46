"""Readable HTML of a run's ``transcript.jsonl``.

A transcript is one JSON event a line. Events written by clinbench's own agents carry a
``type`` (start, user, assistant, tool_result, step_limit, end) with ``content`` / ``text`` /
``tool_calls``; transcripts of external coding agents vary, so anything unknown is shown as
its JSON rather than dropped. Long transcripts are cut at ``max_chars`` with a note, and the
full file stays linked beside them.
"""

from __future__ import annotations

import json
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


def _event_html(event: dict[str, Any]) -> str:
    role = _role(event)
    body: list[str] = []
    used = set(_ROLE_KEYS)
    for key in _TEXT_KEYS:
        if event.get(key) not in (None, "", []):
            body.append(f"<pre>{escape(_as_text(event[key]))}</pre>")
            used.add(key)
    for call in event.get("tool_calls") or []:
        if isinstance(call, dict):
            args = call.get("arguments")
            if isinstance(args, str):
                try:
                    args = untrusted.loads(args)
                except ValueError:
                    pass
            if isinstance(args, dict) and len(args) == 1:
                args = next(iter(args.values()))
            body.append(
                f'<div class="call"><span class="tool">{escape(str(call.get("name", "tool")))}</span>'
                f"<pre>{escape(_as_text(args))}</pre></div>"
            )
    used.add("tool_calls")
    rest = {k: v for k, v in event.items() if k not in used}
    if rest:
        summary = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False, default=str)}" for k, v in rest.items())
        body.append(f'<div class="meta">{escape(summary)}</div>')
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
