"""The self-contained HTML report: inline CSS and SVG, no script, nothing fetched.

Each derivation section is a ``<section class="report-section" id=KEY>``; its headline
figures carry ``data-stat`` attributes and its whole result is embedded as a JSON data
block (``<script type="application/json" class="clinbench-stats" data-section=KEY>``, never
executed; the first section's has ``id="clinbench-stats"``), equal to what ``clinbench stats --json``
prints for the same source and options. The diagnosis section is inserted at the hook
point below (``clinbench.report.dx_section``), inside ``<section id="dx">``.
"""

from __future__ import annotations

import re

import json
import os
from html import escape
from pathlib import Path
from urllib.parse import quote

from clinbench.records import RunStatus
from clinbench.report.data import EVIDENCE_FILES, TRANSCRIPT_CANDIDATES, ReportData, Section
from clinbench.report.explain import RunWhy
from clinbench.report.provenance import Provenance
from clinbench.report.transcript import render_transcript
from clinbench.stats.formatting import ci_text, left_out_text, mean_ci_text, p_text, scope_text, signed, strict_text

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
section.report-section, section#dx { margin-top: 34px; padding-top: 6px; border-top: 3px solid var(--ink); }
.prov td:first-child { color: var(--muted); white-space: nowrap; } .prov code { word-break: break-all; }
.why td.miss { color: var(--down); }
"""


def _signed(x: float) -> str:
    text = signed(x)
    cls = "up" if text.startswith("+") else ("down" if text.startswith("-") else "")
    return f'<span class="{cls}">{text}</span>'


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




def _num(x: float | None, fmt: str = ".3f") -> str:
    """A figure, or a dash when it does not exist (never 'nan')."""
    return "—" if x is None or x != x else format(x, fmt)


def _provenance(p: Provenance | None) -> str:
    if p is None:
        return ""
    rows = [["source", f"<code>{escape(p.source)}</code>"]]
    for d in p.data:
        size = f", {d.bytes / 1e6:,.1f} MB" if d.bytes else ""
        fp = f"<code>{escape(d.fingerprint[:16])}…</code> ({escape(d.fingerprint_kind)})" if d.fingerprint else "none"
        state = "" if d.exists else ' <span class="flag">(absent now)</span>'
        rows.append(["database", f"<code>{escape(d.path)}</code>{state}{size}; fingerprint {fp}; "
                                 f"synthetic: {escape(d.synthetic)}"])
    if not p.data:
        rows.append(["database", "not recorded (a per-run table names none)"])
    for name, source in p.profiles.items():
        rows.append(["reference profile", f"<code>{escape(name)}</code>: {escape(source)}"])
    rows.append(["software", escape(", ".join(f"{k} {v}" for k, v in p.versions.items()))])
    rows.append(["agents · models", escape(", ".join(f"{k} ({n} runs)" for k, n in p.agents.items())) or "—"])
    if p.agent_versions:
        rows.append(["agent versions", escape(", ".join(f"{k}: {v}" for k, v in p.agent_versions.items()))])
    if p.served_models:
        rows.append(["served models", escape(", ".join(f"{k} → {v}" for k, v in p.served_models.items()))])
    rows.append(["command", f"<code>{escape(p.command)}</code>" if p.command else "not recorded"])
    return "<h3>Provenance</h3>" + _table(["", ""], rows, numeric_from=9, cls="prov")


def _status_html(sec: Section) -> str:
    st = sec.summary.status
    parts = [f'<p class="note" data-status="{st["ok"]},{st[RunStatus.AGENT_FAILED]},{st[RunStatus.HARNESS_ERROR]}">'
             f"Runs: {st['ok']} ok, {st[RunStatus.AGENT_FAILED]} agent failures (no or bad output: reward 0, counted), "
             f"{st[RunStatus.HARNESS_ERROR]} harness errors (the harness failed, not the agent: in no figure).</p>"]
    failed = [w for w in sec.why.values() if w.status not in ("ok", "")]
    if sec.harness:
        parts += ["<h3>Harness errors (left out of every figure)</h3>", _table(
            ["run", "task", "agent", "cause"],
            [[escape(w.run_id), escape(w.task), escape(w.label), escape(w.cause or "no cause recorded")]
             for w in sec.harness], numeric_from=9, cls="harness")]
    if failed:
        parts += ["<h3>Agent failures</h3>", _table(
            ["run", "task", "agent", "status", "cause"],
            [[escape(w.run_id), escape(w.task), escape(w.label), escape(w.status), escape(w.cause or "no cause recorded")]
             for w in failed], numeric_from=9, cls="failures")]
    return "\n".join(parts)


def _usage_html(sec: Section) -> str:
    if not sec.summary.usage:
        return ""
    rows = [[escape(u.condition), escape(u.agent), str(u.runs),
             f"{u.input_tokens:,}" if u.runs_with_tokens else "—", f"{u.output_tokens:,}" if u.runs_with_tokens else "—",
             f"${u.cost:,.2f}" if u.runs_with_cost else "—", _num(u.seconds, ",.1f"), _num(u.mean_seconds, ".1f"),
             str(u.all_attempts), f"{u.all_input_tokens:,}", f"{u.all_output_tokens:,}", f"${u.all_cost:,.2f}"]
            for u in sec.summary.usage]
    return ("<h3>Usage: tokens, cost and time</h3>"
            + _table(["condition", "agent", "runs", "tokens in", "tokens out", "cost", "seconds", "mean s / run",
                      "all attempts", "tokens in, all", "tokens out, all", "cost, all"], rows,
                     numeric_from=2, cls="usage")
            + '<p class="note">Sums over the runs that recorded each figure; "—" where none did (built-in agents '
              "use no model). The last four columns are what every attempt spent: the analysed runs, harness "
              "errors, flagged runs left out, and the tokens of attempts a --retry-* replaced (their dollars are "
              "not recorded).</p>")


def _mean_table(items, level: str) -> str:
    return _table([items[0].by, "tasks", "runs", "mean reward", f"{level} CI (tasks)", "strict"],
                  [[escape(r.value), str(r.tasks), str(r.runs), _num(r.mean), mean_ci_text(r.ci), strict_text(r.strict)]
                   for r in items])


def _summary_body(sec: Section) -> list[str]:
    s = sec.summary
    level = f"{s.level:.0%}"
    o = s.overall
    cards = "".join([
        _card("mean reward (task-balanced)", _num(o.mean), f"{level} CI {mean_ci_text(o.ci)}", "mean", hero=True),
        _card("runs", str(s.runs), scope_text(s.tasks, s.families, s.benchmark), "runs"),
        _card("strict passes", strict_text(o.strict), "every strict check met", "strict"),
        _card("agent failures", str(s.status[RunStatus.AGENT_FAILED]), "reward 0, counted", "agent_failed"),
        _card("harness errors", str(s.status[RunStatus.HARNESS_ERROR]), "left out", "harness_errors"),
    ])
    body = [f'<div class="cards">{cards}</div>', sec.figures.get("forest", "")]
    for title, items in (("By agent", s.per_agent), ("By condition", s.per_condition), ("By model", s.per_model),
                         ("By schema variant", s.per_schema), ("By family", s.per_family)):
        if items and (len(items) > 1 or title == "By agent"):
            body += [f"<h3>{title}</h3>", _mean_table(items, level)]
    body += ["<h3>Per task</h3>", f'<p class="note">Each task row\'s interval is a percentile bootstrap over '
             f"that task's runs ({s.task_draws:,} draws); the other intervals {s.draws:,} draws, seed {s.seed}.</p>",
             _table(
        ["task", "family", "runs", "mean reward", f"{level} CI (runs)", "strict", "agent failures"],
        [[escape(t.task), escape(t.family), str(t.runs), _num(t.mean), mean_ci_text(t.ci), strict_text(t.strict),
          str(t.agent_failed)] for t in s.per_task], numeric_from=2)]
    if sec.columns:
        body += ["<h3>Per-column match rates</h3>", _table(
            ["task", "column", "mean match rate", "mean nMAE"],
            [[escape(r.task), escape(r.column), _num(r.match_a), _num(r.nmae_a)] for r in sec.columns], numeric_from=2)]
    return body


def _comparison_body(sec: Section) -> list[str]:
    c = sec.comparison
    a, b = c.condition_a, c.condition_b
    level = f"{c.level:.0%}"
    cards = "".join([
        _card(f"mean reward · {a}", _num(c.mean_a), f"{c.runs_a} runs, {c.tasks} tasks", "mean_a"),
        _card(f"mean reward · {b}", _num(c.mean_b), f"{c.runs_b} runs, {c.tasks} tasks", "mean_b"),
        _card("delta (task-balanced)", f"{signed(c.delta)}", f"{level} CI {ci_text(c.ci_task)} (task-cluster)", "delta", hero=True),
        _card("tasks improving", f"{c.improving}/{c.tasks}", f"sign-flip p = {p_text(c.sign_flip_p)}", "improving"),
        _card(f"strict passes · {a}", strict_text(c.strict_a), "every strict check met", "strict_a"),
        _card(f"strict passes · {b}", strict_text(c.strict_b), "every strict check met", "strict_b"),
    ])
    rows = [
        ["task-cluster bootstrap (resample task deltas)", f"{signed(c.delta)}", ci_text(c.ci_task)],
        ["family-cluster bootstrap (resample families, pool their tasks)", f"{signed(c.delta)}", ci_text(c.ci_family)],
        ["family-balanced bootstrap (resample per-family mean deltas)",
         "—" if c.ci_family_balanced is None else f"{signed(c.family_balanced_delta)}", ci_text(c.ci_family_balanced)],
    ]
    for name, m in (("key F1 (task-cluster)", c.key_f1), ("ordered nMAE, lower is better (task-cluster)", c.ordered_value_nmae)):
        if m is not None:
            rows.append([f"{name}: {m.mean_a:.3f} → {m.mean_b:.3f}, {m.n_tasks} tasks", f"{signed(m.delta)}", ci_text(m.ci_task)])
    body = [
        f'<div class="cards">{cards}</div>',
        "<h3>Intervals</h3>",
        _table(["estimate", "delta", f"{level} CI"], [[escape(r[0]), r[1], r[2]] for r in rows]),
        f'<p class="note">Compared: {escape(c.dimension)} {escape(b)} against {escape(a)}. Task-balanced: each task\'s mean '
        f"reward over its cells (agent, model, condition, schema) run under both (each cell's mean over its trials), then the mean over tasks; "
        f"delta = {escape(b)} − {escape(a)} per task. Percentile bootstraps with {c.draws:,} draws, seed {c.seed}; "
        f"sign-flip test with {c.permutation_draws:,} draws, p = (hits + 1)/(draws + 1). "
        f"{c.missing_reward} agent failures without a reward count as 0; {c.harness_errors} harness errors are left out; "
        f"{escape(left_out_text(c))}.</p>",
    ]
    if c.unpaired_tasks:
        body.append(f'<p class="note flag">Unpaired tasks (in one group only), left out: {escape(", ".join(c.unpaired_tasks))}</p>')
    body += [
        "<h3>Per-task deltas</h3>",
        sec.figures["forest"],
        f'<p class="note">Each task row\'s interval is a percentile bootstrap over that task\'s runs ({c.task_draws:,} draws, '
        "resampling each group's runs separately; a task with a single run in either group has none); the diamond is "
        "the headline mean with its task-cluster interval.</p>",
    ]
    if c.per_family:
        body += [
            "<h3>Families</h3>",
            sec.figures["families"],
            _table(
                ["family", "tasks", a, b, "delta", "improving"],
                [[escape(f.family), str(f.tasks), f"{f.mean_a:.3f}", f"{f.mean_b:.3f}", _signed(f.delta), f"{f.improving}/{f.tasks}"]
                 for f in c.per_family],
            ),
        ]
    if c.groups:
        body += [
            f"<h3>By {escape(c.groups[0].by)}</h3>",
            _table(
                [c.groups[0].by, "tasks", a, b, "delta", f"{level} CI (task)", "improving", "sign-flip p", f"strict {a}", f"strict {b}"],
                [[escape(g.value), str(g.tasks), f"{g.mean_a:.3f}", f"{g.mean_b:.3f}", _signed(g.delta), ci_text(g.ci_task),
                  f"{g.improving}/{g.tasks}", p_text(g.sign_flip_p), strict_text(g.strict_a), strict_text(g.strict_b)] for g in c.groups],
            ),
        ]
    body += [
        "<h3>Strict passes</h3>",
        '<p class="note">A strict pass: output present and non-empty, every required column, row coverage and every scored '
        "column's match rate at or above the task's thresholds.</p>",
        _table(
            ["task", "family", f"strict {a}", f"strict {b}"],
            [[escape(t.task), escape(t.family), strict_text(t.strict_a), strict_text(t.strict_b)] for t in c.per_task]
            + [["<b>all tasks</b>", "", f"<b>{strict_text(c.strict_a)}</b>", f"<b>{strict_text(c.strict_b)}</b>"]],
            numeric_from=2,
        ),
        "<h3>Per task</h3>",
        _table(
            ["task", "family", f"runs {a}", f"runs {b}", a, b, "delta", f"{level} CI (runs)"],
            [[escape(t.task), escape(t.family), str(t.runs_a), str(t.runs_b), f"{t.mean_a:.3f}", f"{t.mean_b:.3f}",
              _signed(t.delta), ci_text(t.ci)] for t in c.per_task],
            numeric_from=2,
        ),
    ]
    if sec.columns:
        body += [
            "<h3>Per-column diagnostics</h3>",
            '<p class="note">Mean match rate of each scored column in each group, over the cells both groups ran (each '
            "cell's mean over its trials), as the task means are (a run the scorer gave no column scores, e.g. no "
            "output, counts 0, as in its reward), and its normalised mean absolute error where numeric.</p>",
            _table(
                ["task", "column", f"match {a}", f"match {b}", "delta", f"nMAE {a}", f"nMAE {b}"],
                [[escape(r.task), escape(r.column), _num(r.match_a), _num(r.match_b),
                  _signed(r.match_b - r.match_a) if r.match_a is not None and r.match_b is not None else "—",
                  _num(r.nmae_a), _num(r.nmae_b)] for r in sec.columns],
                numeric_from=2,
            ),
        ]
    return body


def _why_html(w: RunWhy | None) -> str:
    """Per-column match rates and the first mismatching rows beside the reference."""
    if w is None:
        return ""
    parts = []
    if w.cause:
        parts.append(f'<p class="note flag">cause: {escape(w.cause)}</p>')
    if w.columns:
        parts.append(_table(["column", "match rate", "matched", "of", "nMAE"],
                            [[escape(c.name), _num(c.match_rate), "—" if c.matched is None else str(c.matched),
                              "—" if c.denominator is None else str(c.denominator), _num(c.nmae)] for c in w.columns],
                            cls="why-columns"))
    if w.mismatches:
        keys = list(w.mismatches[0].key)
        cols = [c.name for c in w.columns if any(c.name in m.cells for m in w.mismatches)]
        head = [*keys, *(f"{c}: reference → agent" for c in cols)]
        rows = [[escape(m.key.get(k, "")) for k in keys]
                + [f'<span class="miss">{escape(m.cells[c][0] or "∅")} → {escape(m.cells[c][1] or "∅")}</span>'
                   if c in m.cells else "" for c in cols] for m in w.mismatches]
        parts.append(f'<p class="note">First mismatching reference rows (∅: empty):</p>'
                     + _table(head, rows, numeric_from=99, cls="why"))
    return "".join(parts)


def _evidence_section(sec: Section, report_dir: Path) -> str:
    runs = sec.runs
    have = [i for i in range(len(runs)) if runs.evidence_dir[i] and Path(runs.evidence_dir[i]).is_dir()]
    if not have:
        return ""
    budget = TRANSCRIPT_CHARS_TOTAL
    order = sorted(have, key=lambda i: (runs.task[i], runs.condition[i], runs.label(i), int(runs.trial[i])))
    parts = [
        "<h3>Runs and evidence</h3>",
        f'<p class="note">{len(order)} runs with evidence folders, each labelled with its agent and model. Open one for '
        "why it scored what it did (per-column match rates, the first mismatching rows beside the reference), its "
        f"files and its transcript (cut after {TRANSCRIPT_CHARS_PER_RUN:,} characters; the linked file is complete). "
        "The same view in a terminal: <code>clinbench explain RUN_DIR</code>.</p>",
    ]
    current = None
    for i in order:
        if runs.task[i] != current:
            current = runs.task[i]
            parts.append(f"<h4>{escape(current)}</h4>")
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
        why = sec.why.get(runs.run_id[i])
        title = (f"<b>{escape(runs.label(i))}</b> · {escape(runs.condition[i])} · trial {int(runs.trial[i])} · "
                 f"reward {runs.reward[i]:.3f} · {strict_s} · {escape(runs.status[i])}"
                 f"{' · run ' + escape(runs.run_id[i]) if runs.run_id[i] else ''}")
        if why is not None and why.cause:
            title += f' · <span class="flag">{escape(why.cause)}</span>'
        parts.append(
            f'<details class="run" data-run="{escape(runs.run_id[i], quote=True)}" '
            f'data-agent="{escape(runs.label(i), quote=True)}"><summary>{title}</summary>'
            f'{_why_html(why)}<div class="links">{links}</div>{transcript or "<p class=note>no transcript</p>"}</details>'
        )
    return "\n".join(parts)


def _section_html(sec: Section, report_dir: Path, first: bool) -> str:
    stats_json = json.dumps(sec.stats, indent=None, allow_nan=False).replace("</", "<\\/")
    body = [f'<section class="report-section" id="{escape(sec.key, quote=True)}">', f"<h2>{escape(sec.title)}</h2>"]
    if sec.intro:
        body.append(f'<p class="note">{escape(sec.intro)}</p>')
    if sec.notes:
        header, rows = sec.notes
        body.append(_table(header, [[escape(c) for c in r] for r in rows], numeric_from=99, cls="notes"))
    body += _comparison_body(sec) if sec.comparison is not None else _summary_body(sec)
    body += [_status_html(sec), _usage_html(sec), _provenance(sec.provenance), _evidence_section(sec, report_dir)]
    block_id = "clinbench-stats" if first else f"clinbench-stats-{sec.key}"
    body.append(f'<script type="application/json" id="{block_id}" class="clinbench-stats" '
                f'data-section="{escape(sec.key, quote=True)}">{stats_json}</script>')
    body.append("</section>")
    return "\n".join(p for p in body if p)


def render_html(data: ReportData, report_path: Path, *, title: str = "") -> str:
    report_dir = Path(report_path).resolve().parent
    if not title:
        title = data.sections[0].title if len(data.sections) == 1 else "clinbench report"
    body = [f"<h1>{escape(title)}</h1>", f'<div class="sub">generated {escape(data.generated_at)}</div>']
    if len(data.sections) + bool(data.dx_html) > 1:
        # the list numbers its items: a title's own "1. " is not repeated ("1. 1. How much…")
        items = [f'<li><a href="#{escape(s.key, quote=True)}">{escape(re.sub(r"^[0-9]+[.)] +", "", s.title))}</a></li>'
                 for s in data.sections]
        if data.dx_html:
            items.append('<li><a href="#dx">Sequential diagnosis</a></li>')
        body.append(f'<ol class="toc">{"".join(items)}</ol>')
    body += [_section_html(s, report_dir, i == 0) for i, s in enumerate(data.sections)]
    if data.dx_html:  # the diagnosis section (clinbench.report.dx_section)
        body.append(f'<section id="dx">{data.dx_html}</section>')
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>clinbench report: {escape(title)}</title>"
        "<link rel=\"icon\" href=\"data:,\">"
        f"<style>{CSS}</style></head>\n<body><main>\n"
        + "\n".join(body)
        + "\n</main></body></html>\n"
    )
