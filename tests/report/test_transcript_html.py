"""Transcripts shown readably: clinbench's own events, unknown events, cut-off of long ones."""

from __future__ import annotations

import json

from clinbench.report.transcript import render_transcript


def test_events_render_as_roles_and_text(tmp_path):
    path = tmp_path / "transcript.jsonl"
    events = [
        {"type": "user", "content": "Derive <b>SOFA</b>"},
        {"type": "assistant", "step": 0, "text": "Looking", "tool_calls": [
            {"id": "c1", "name": "sql", "arguments": json.dumps({"query": "SELECT count(*) FROM icustays"})}]},
        {"type": "tool_result", "id": "c1", "name": "sql", "content": "42"},
        {"weird": [1, 2]},
    ]
    path.write_text("\n".join(json.dumps(e) for e in events) + "\nnot json at all\n")
    html = render_transcript(path)
    assert html.count('<div class="ev') == 5
    assert "Derive &lt;b&gt;SOFA&lt;/b&gt;" in html  # escaped, not interpreted
    assert '<span class="tool">sql</span><pre>SELECT count(*) FROM icustays</pre>' in html
    assert 'weird=[1, 2]' in html and "not json at all" in html


def test_long_transcript_is_cut(tmp_path):
    path = tmp_path / "transcript.jsonl"
    path.write_text("\n".join(json.dumps({"type": "assistant", "text": "x" * 100}) for _ in range(50)))
    html = render_transcript(path, max_chars=1000)
    # each line is 133 characters: after 8 lines (1,064) the 1,000-character budget is spent
    assert html.count("ev-assistant") == 8
    assert "transcript cut here" in html


def test_missing_transcript_is_empty(tmp_path):
    assert render_transcript(tmp_path / "none.jsonl") == ""
