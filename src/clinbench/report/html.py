"""The self-contained HTML report: inline CSS and SVG, no script, nothing fetched.

Headline figures carry ``data-stat`` attributes and the whole comparison is embedded as a
JSON data block (``<script type="application/json" id="clinbench-stats">``, never executed),
so the page can be checked against ``clinbench stats --json``.
"""

from __future__ import annotations

import json
import os
from html import escape
from pathlib import Path
from urllib.parse import quote

from clinbench.report.data import EVIDENCE_FILES, TRANSCRIPT_CANDIDATES, ReportData
from clinbench.report.transcript import render_transcript
from clinbench.stats.formatting import ci_text, p_text, strict_text

# Transcripts are inlined so the report reads offline; these caps keep a large campaign's
# report openable (the full files stay linked).
TRANSCRIPT_CHARS_PER_RUN = 60_000
TRANSCRIPT_CHARS_TOTAL = 8_000_000

CSS = """
:root { --ink:#1d2329; --muted:#5b6570; --line:#e3e6ea; --a:#8c96a6; --b:#1f6fb2; --up:#1f6fb2; --down:#c0392b; }
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif; color: var(--ink);
       margin: 0; background: #fafbfc; line-height: 1.45; }
main { max-width: 1100px; margin: 0 auto; padding: 28px 24px 60px; }
h1 { font-size: 26px; margin: 0 0 4px; } h2 { font-size: 19px; margin: 36px 0 10px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
.sub { color: var(--muted); font-size: 14px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 12px; margin: 18px 0; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; }
.card .k { color: var(--muted); font-size: 12.5px; } .card .v { font-size: 24px; font-weight: 600; font-variant-numeric: tabular-nums; }
.card .n { color: var(--muted); font-size: 12.5px; font-variant-numeric: tabular-nums; }
.card.hero { border-color: var(--b); }
table { border-collapse: collapse; background: #fff; font-size: 13.5px; font-variant-numeric: tabular-nums; margin: 6px 0 8px; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 10px; text-align: left; vertical-align: top; }
th { background: #f2f4f6; font-weight: 600; position: sticky; top: 0; }
td.num, th.num { text-align: right; }
.up { color: var(--up); } .down { color: var(--down); }
.figure { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 6px; background: #fff; }
.note { color: var(--muted); font-size: 13px; max-width: 900px; }
details { background: #fff; border: 1px solid var(--line); border-radius: 6px; margin: 6px 0; padding: 4px 10px; }
summary { cursor: pointer; font-size: 13.5px; }
.ev { border-left: 3px solid var(--line); margin: 8px 0; padding: 2px 10px; }
.ev .role { font-size: 11.5px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
.ev-user { border-color: #7a8a99; } .ev-assistant { border-color: var(--b); } .ev-tool_result { border-color: #9bbf85; }
.ev-end, .ev-start { border-color: #d5d9de; }
.ev pre { white-space: pre-wrap; word-break: break-word; margin: 4px 0; font-size: 12.5px; background: #f6f7f9; padding: 6px 8px; border-radius: 4px; }
.ev .call .tool { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; color: var(--b); }
.ev .meta { color: var(--muted); font-size: 11.5px; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; word-break: break-all; }
.links a { margin-right: 10px; font-size: 12.5px; }
.flag { color: var(--down); font-size: 12px; }
"""


def _signed(x: float) -> str:
    cls = "up" if x > 0 else ("down" if x < 0 else "")
    return f'<span class="{cls}">{x:+.3f}</span>'


def _table(header: list[str], rows: list[list[str]], numeric_from: int = 1, cls: str = "") -> str:
    """Rows are pre-escaped HTML cells."""
    c = f' class="{cls}"' if cls else ""
    head = "".join(f'<th{" class=num" if i >= numeric_from else ""}>{escape(h)}</th>' for i, h in enumerate(header))
    body = "".join(
        "<tr>" + "".join(f'<td{" class=num" if i >= numeric_from else ""}>{cell}</td>' for i, cell in enumerate(r)) + "</tr>"
        for r in rows
    )
    return f"<table{c}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _card(key: str, value: str, note: str = "", stat: str = "", hero: bool = False) -> str:
    attr = f' data-stat="{stat}"' if stat else ""
    return (f'<div class="card{" hero" if hero else ""}"><div class="k">{escape(key)}</div>'
            f'<div class="v"{attr}>{value}</div><div class="n">{note}</div></div>')


def _href(target: Path, report_dir: Path) -> str:
    try:
        rel = os.path.relpath(target, report_dir)
    except ValueError:  # another drive on Windows
        rel = target.as_uri()
    return quote(Path(rel).as_posix())


def _score_reason(path: Path) -> str:
    """The scorer's one-line reason (e.g. "no output.csv was written"), when it gave one."""
    try:
        score = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    reason = score.get("reason") if isinstance(score, dict) else None
    return str(reason)[:200] if reason else ""


def _evidence_section(data: ReportData, report_dir: Path) -> str:
    runs = data.runs
    have = [i for i in range(len(runs)) if runs.evidence_dir[i] and Path(runs.evidence_dir[i]).is_dir()]
    if not have:
        return ""
    c = data.comparison
    budget = TRANSCRIPT_CHARS_TOTAL
    order = sorted(have, key=lambda i: (runs.task[i], runs.condition[i] != c.condition_a, runs.model[i], int(runs.trial[i])))
    parts = [
        "<h2>Runs and evidence</h2>",
        f'<p class="note">{len(order)} runs with evidence folders. Each links its files; the transcript is shown inline '
        f"(cut after {TRANSCRIPT_CHARS_PER_RUN:,} characters; the linked file is complete).</p>",
    ]
    current = None
    for i in order:
        if runs.task[i] != current:
            current = runs.task[i]
            parts.append(f"<h3>{escape(current)}</h3>")
        folder = Path(runs.evidence_dir[i])
        strict = runs.strict[i]
        strict_s = "—" if strict != strict else ("strict pass" if strict == 1.0 else "not strict")
        entries = sorted(folder.iterdir(), key=lambda e: (EVIDENCE_FILES.index(e.name) if e.name in EVIDENCE_FILES
                                                          else len(EVIDENCE_FILES), e.name))
        links = " ".join(
            f'<a href="{_href(e, report_dir)}{"/" if e.is_dir() else ""}">{escape(e.name)}{"/" if e.is_dir() else ""}</a>'
            for e in entries if not e.name.startswith(".")
        )
        transcript = ""
        source = next((folder / n for n in TRANSCRIPT_CANDIDATES if (folder / n).is_file()), None)
        if budget > 0 and source is not None:
            transcript = render_transcript(source, max_chars=min(TRANSCRIPT_CHARS_PER_RUN, budget))
            budget -= len(transcript)
        title = (f"{escape(runs.condition[i])} · {escape(runs.model[i] or runs.agent[i] or 'agent')} · trial {int(runs.trial[i])} · "
                 f"reward {runs.reward[i]:.3f} · {strict_s} · {escape(runs.status[i])}"
                 f"{' · run ' + escape(runs.run_id[i]) if runs.run_id[i] else ''}")
        reason = _score_reason(folder / "score.json")
        if reason:
            title += f' · <span class="flag">{escape(reason)}</span>'
        parts.append(
            f'<details class="run" data-run="{escape(runs.run_id[i], quote=True)}"><summary>{title}</summary>'
            f'<div class="links">{links}</div>{transcript or "<p class=note>no transcript</p>"}</details>'
        )
    return "\n".join(parts)


def render_html(data: ReportData, report_path: Path) -> str:
    c = data.comparison
    a, b = c.condition_a, c.condition_b
    level = f"{c.level:.0%}"
    report_dir = Path(report_path).resolve().parent
    stats_json = json.dumps(c.to_dict(), indent=None, allow_nan=False).replace("</", "<\\/")

    cards = "".join([
        _card(f"mean reward · {a}", f"{c.mean_a:.3f}", f"{c.runs_a} runs, {c.tasks} tasks", "mean_a"),
        _card(f"mean reward · {b}", f"{c.mean_b:.3f}", f"{c.runs_b} runs, {c.tasks} tasks", "mean_b"),
        _card("delta (task-balanced)", f"{c.delta:+.3f}", f"{level} CI {ci_text(c.ci_task)} (task-cluster)", "delta", hero=True),
        _card("tasks improving", f"{c.improving}/{c.tasks}", f"sign-flip p = {p_text(c.sign_flip_p)}", "improving"),
        _card(f"strict passes · {a}", strict_text(c.strict_a), "every strict check met", "strict_a"),
        _card(f"strict passes · {b}", strict_text(c.strict_b), "every strict check met", "strict_b"),
    ])
    rows = [
        ["task-cluster bootstrap (resample task deltas)", f"{c.delta:+.3f}", ci_text(c.ci_task)],
        ["family-cluster bootstrap (resample families, pool their tasks)", f"{c.delta:+.3f}", ci_text(c.ci_family)],
        ["family-balanced bootstrap (resample per-family mean deltas)",
         "—" if c.ci_family_balanced is None else f"{c.family_balanced_delta:+.3f}", ci_text(c.ci_family_balanced)],
    ]
    for name, m in (("key F1 (task-cluster)", c.key_f1), ("ordered nMAE, lower is better (task-cluster)", c.ordered_value_nmae)):
        if m is not None:
            rows.append([f"{name}: {m.mean_a:.3f} → {m.mean_b:.3f}, {m.n_tasks} tasks", f"{m.delta:+.3f}", ci_text(m.ci_task)])
    intervals = _table(["estimate", "delta", f"{level} CI"], [[escape(r[0]), r[1], r[2]] for r in rows])

    body = [
        f"<h1>{escape(a)} → {escape(b)}</h1>",
        f'<div class="sub">Source <code>{escape(c.source)}</code> · {c.tasks} tasks in {c.families} families · '
        f"{c.flagged_excluded} flagged runs excluded · generated {escape(data.generated_at)}</div>",
        f'<div class="cards">{cards}</div>',
        "<h2>Intervals</h2>",
        intervals,
        f'<p class="note">Task-balanced: each task\'s mean reward over its runs (all models and trials), then the mean over '
        f"tasks; delta = {escape(b)} − {escape(a)} per task. Percentile bootstraps with {c.draws:,} draws, seed {c.seed}; "
        f"sign-flip test with {c.permutation_draws:,} draws, p = (hits + 1)/(draws + 1). "
        f"{c.missing_reward} runs without a reward count as 0.</p>",
    ]
    if c.unpaired_tasks:
        body.append(f'<p class="note flag">Unpaired tasks (run under one condition only), left out: {escape(", ".join(c.unpaired_tasks))}</p>')
    body += [
        "<h2>Per-task deltas</h2>",
        data.figures["forest"],
        f'<p class="note">Each task row\'s interval is a percentile bootstrap over that task\'s runs ({c.task_draws:,} draws, '
        "resampling each condition's runs separately); the diamond is the headline mean with its task-cluster interval.</p>",
    ]
    if c.per_family:
        body += [
            "<h2>Families</h2>",
            data.figures["families"],
            _table(
                ["family", "tasks", a, b, "delta", "improving"],
                [[escape(f.family), str(f.tasks), f"{f.mean_a:.3f}", f"{f.mean_b:.3f}", _signed(f.delta), f"{f.improving}/{f.tasks}"]
                 for f in c.per_family],
            ),
        ]
    if c.groups:
        body += [
            f"<h2>By {escape(c.groups[0].by)}</h2>",
            _table(
                [c.groups[0].by, "tasks", a, b, "delta", f"{level} CI (task)", "improving", "sign-flip p", f"strict {a}", f"strict {b}"],
                [[escape(g.value), str(g.tasks), f"{g.mean_a:.3f}", f"{g.mean_b:.3f}", _signed(g.delta), ci_text(g.ci_task),
                  f"{g.improving}/{g.tasks}", p_text(g.sign_flip_p), strict_text(g.strict_a), strict_text(g.strict_b)] for g in c.groups],
            ),
        ]
    body += [
        "<h2>Strict passes</h2>",
        '<p class="note">A strict pass: output present and non-empty, every required column, row coverage and every scored '
        "column's match rate at or above the task's thresholds.</p>",
        _table(
            ["task", "family", f"strict {a}", f"strict {b}"],
            [[escape(t.task), escape(t.family), strict_text(t.strict_a), strict_text(t.strict_b)] for t in c.per_task]
            + [["<b>all tasks</b>", "", f"<b>{strict_text(c.strict_a)}</b>", f"<b>{strict_text(c.strict_b)}</b>"]],
            numeric_from=2,
        ),
        "<h2>Per task</h2>",
        _table(
            ["task", "family", f"runs {a}", f"runs {b}", a, b, "delta", f"{level} CI (runs)"],
            [[escape(t.task), escape(t.family), str(t.runs_a), str(t.runs_b), f"{t.mean_a:.3f}", f"{t.mean_b:.3f}",
              _signed(t.delta), ci_text(t.ci)] for t in c.per_task],
            numeric_from=2,
        ),
    ]
    if data.columns:
        def f(x: float | None) -> str:
            return "—" if x is None else f"{x:.3f}"

        body += [
            "<h2>Per-column diagnostics</h2>",
            '<p class="note">Mean match rate of each scored column over the runs of each condition (and its normalised '
            "mean absolute error where numeric): where the agents lose points.</p>",
            _table(
                ["task", "column", f"match {a}", f"match {b}", "delta", f"nMAE {a}", f"nMAE {b}"],
                [[escape(r.task), escape(r.column), f(r.match_a), f(r.match_b),
                  _signed(r.match_b - r.match_a) if r.match_a is not None and r.match_b is not None else "—",
                  f(r.nmae_a), f(r.nmae_b)] for r in data.columns],
                numeric_from=2,
            ),
        ]
    body.append(_evidence_section(data, report_dir))
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>clinbench report: {escape(a)} → {escape(b)}</title>"
        "<link rel=\"icon\" href=\"data:,\">"
        f"<style>{CSS}</style></head>\n<body><main>\n"
        + "\n".join(p for p in body if p)
        + f'\n<script type="application/json" id="clinbench-stats">{stats_json}</script>\n'
        "</main></body></html>\n"
    )
