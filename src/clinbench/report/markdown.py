"""Markdown tables of a comparison, ready to paste into a paper or an issue."""

from __future__ import annotations

from clinbench.records import RunStatus
from clinbench.report.data import ReportData, Section
from clinbench.stats.formatting import ci_text, left_out_text, mean_ci_text, p_text, scope_text, signed, strict_text
from clinbench.untrusted import markdown


def _table(header: list[str], rows: list[list[str]]) -> str:
    """A table whose every cell is shown as text (causes and labels may hold an agent's bytes)."""
    lines = ["| " + " | ".join(map(markdown, header)) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(map(markdown, r)) + " |" for r in rows]
    return "\n".join(lines)


def _f(x: float | None) -> str:
    return "—" if x is None or x != x else f"{x:.3f}"


def render_markdown(data: ReportData, *, title: str = "") -> str:
    if not title:
        title = data.sections[0].title if len(data.sections) == 1 else "clinbench report"
    out = [f"# clinbench report: {title}", "", f"Generated {data.generated_at}."]
    for sec in data.sections:
        out += ["", f"## {sec.title}", ""]
        if sec.intro:
            out += [sec.intro, ""]
        if sec.notes:
            out += [_table(*sec.notes), ""]
        out += _comparison_md(sec) if sec.comparison is not None else _summary_md(sec)
        out += _common_md(sec)
    if data.dx_markdown:
        out += ["", data.dx_markdown.rstrip("\n")]
    return "\n".join(out) + "\n"


def _summary_md(sec: Section) -> list[str]:
    s = sec.summary
    level = f"{s.level:.0%}"
    o = s.overall
    out = [f"Source: `{s.source}`; {s.runs} runs of {scope_text(s.tasks, s.families, s.benchmark)}; task-balanced mean reward "
           f"{_f(o.mean)} ({level} CI {mean_ci_text(o.ci)}); strict passes {strict_text(o.strict)}."]
    for name, items in (("agent", s.per_agent), ("condition", s.per_condition), ("model", s.per_model),
                        ("schema variant", s.per_schema), ("family", s.per_family)):
        if items and (len(items) > 1 or name == "agent"):
            out += ["", f"### By {name}", "", _table(
                [name, "tasks", "runs", "mean", f"{level} CI", "strict"],
                [[r.value, str(r.tasks), str(r.runs), _f(r.mean), mean_ci_text(r.ci), strict_text(r.strict)] for r in items])]
    out += ["", f"### By task ({level} CI: bootstrap of each task's runs, {s.task_draws:,} draws; the others "
            f"{s.draws:,}, seed {s.seed})", "", _table(
        ["task", "family", "runs", "mean", f"{level} CI (runs)", "strict", "agent failures"],
        [[t.task, t.family, str(t.runs), _f(t.mean), mean_ci_text(t.ci), strict_text(t.strict), str(t.agent_failed)]
         for t in s.per_task])]
    return out


def _common_md(sec: Section) -> list[str]:
    st = sec.summary.status
    out = ["", f"Runs: {st['ok']} ok, {st[RunStatus.AGENT_FAILED]} agent failures (reward 0, counted), "
               f"{st[RunStatus.HARNESS_ERROR]} harness errors (left out)."]
    if sec.harness:
        out += ["", "### Harness errors", "", _table(["run", "task", "agent", "cause"],
                [[w.run_id, w.task, w.label, w.cause or "no cause recorded"] for w in sec.harness])]
    failed = [w for w in sec.why.values() if w.status not in ("ok", "")]
    if failed:
        out += ["", "### Agent failures", "", _table(["run", "task", "agent", "status", "cause"],
                [[w.run_id, w.task, w.label, w.status, w.cause or "no cause recorded"] for w in failed])]
    if sec.summary.usage:
        out += ["", "### Usage", "", _table(
            ["condition", "agent", "runs", "tokens in", "tokens out", "cost $", "mean s", "all attempts",
             "tokens in, all", "tokens out, all", "cost $, all"],
            [[u.condition, u.agent, str(u.runs), f"{u.input_tokens:,}" if u.runs_with_tokens else "—",
              f"{u.output_tokens:,}" if u.runs_with_tokens else "—", f"{u.cost:.2f}" if u.runs_with_cost else "—",
              "—" if u.mean_seconds is None else f"{u.mean_seconds:.1f}", str(u.all_attempts),
              f"{u.all_input_tokens:,}", f"{u.all_output_tokens:,}", f"{u.all_cost:.2f}"] for u in sec.summary.usage]),
            "", "The analysed runs, then every attempt: harness errors, flagged runs left out and the tokens of "
            "attempts a --retry-* replaced (their dollars are not recorded)."]
    p = sec.provenance
    if p is not None:
        out += ["", "### Provenance", "", f"- source: `{p.source}`"]
        for d in p.data:
            out.append(f"- database: `{d.path}`{'' if d.exists else ' (absent now)'}; fingerprint "
                       f"`{d.fingerprint[:16] or 'none'}` ({d.fingerprint_kind or '—'}); synthetic: {d.synthetic}")
        out += [f"- reference profile: `{name}`: {source}" for name, source in p.profiles.items()]
        out.append("- software: " + ", ".join(f"{k} {v}" for k, v in p.versions.items()))
        out.append("- agents · models: " + (", ".join(f"{markdown(k)} ({n} runs)" for k, n in p.agents.items()) or "—"))
        out.append(f"- command: `{p.command}`" if p.command else "- command: not recorded")
    return out


def _comparison_md(sec: Section) -> list[str]:
    c = sec.comparison
    a, b = c.condition_a, c.condition_b
    level = f"{c.level:.0%}"
    out = [
        f"Compared: {c.dimension} {b} against {a}. Source: `{c.source}`; {scope_text(c.tasks, c.families, c.benchmark)}; "
        f"{c.runs_a} runs ({a}) and {c.runs_b} runs ({b}); {c.flagged_excluded} flagged runs excluded; "
        f"{c.flagged_charged} flagged for their agent's conduct counted as 0; "
        f"{c.harness_errors} harness errors left out; {left_out_text(c)}.",
        "",
        "### Headline (task-balanced)",
        "",
        _table(["figure", "value"], _headline_rows(c)),
        "",
        f"Bootstraps: percentile, {c.draws:,} draws, seed {c.seed}. Sign-flip: {c.permutation_draws:,} draws, "
        "p = (hits + 1)/(draws + 1).",
    ]
    if c.groups:
        out += ["", f"### By {c.groups[0].by}", "", _table(
            [c.groups[0].by, "tasks", a, b, "delta", f"{level} CI (task)", "improving", "p", f"strict {a}", f"strict {b}"],
            [[g.value, str(g.tasks), f"{g.mean_a:.3f}", f"{g.mean_b:.3f}", f"{signed(g.delta)}", ci_text(g.ci_task),
              f"{g.improving}/{g.tasks}", p_text(g.sign_flip_p), strict_text(g.strict_a), strict_text(g.strict_b)] for g in c.groups],
        )]
    if c.per_family:
        out += ["", "### By family", "", _table(
            ["family", "tasks", a, b, "delta", "improving"],
            [[f.family, str(f.tasks), f"{f.mean_a:.3f}", f"{f.mean_b:.3f}", f"{signed(f.delta)}", f"{f.improving}/{f.tasks}"]
             for f in c.per_family],
        )]
    out += ["", f"### By task ({level} CI: bootstrap of trials within each cell, {c.task_draws:,} draws)", "", _table(
        ["task", "family", f"runs {a}", f"runs {b}", a, b, "delta", "CI", f"strict {a}", f"strict {b}"],
        [[t.task, t.family, str(t.runs_a), str(t.runs_b), f"{t.mean_a:.3f}", f"{t.mean_b:.3f}", f"{signed(t.delta)}",
          ci_text(t.ci), strict_text(t.strict_a), strict_text(t.strict_b)] for t in c.per_task],
    )]
    if sec.columns:
        out += ["", "### Per-column diagnostics (mean match rate; nMAE)", "", _table(
            ["task", "column", f"match {a}", f"match {b}", f"nMAE {a}", f"nMAE {b}"],
            [[r.task, r.column, _f(r.match_a), _f(r.match_b), _f(r.nmae_a), _f(r.nmae_b)] for r in sec.columns],
        )]
    if c.unpaired_tasks:
        out += ["", f"Unpaired tasks (in one group only, left out): {', '.join(c.unpaired_tasks)}"]
    return out


def _headline_rows(c) -> list[list[str]]:
    a, b = c.condition_a, c.condition_b
    level = f"{c.level:.0%}"
    rows = [
        [f"mean reward, {a}", f"{c.mean_a:.3f}"],
        [f"mean reward, {b}", f"{c.mean_b:.3f}"],
        ["delta", f"{signed(c.delta)}"],
        [f"{level} CI, task-cluster bootstrap", ci_text(c.ci_task)],
        [f"{level} CI, family-cluster bootstrap", ci_text(c.ci_family)],
        ["family-balanced delta", "—" if c.ci_family_balanced is None else f"{signed(c.family_balanced_delta)}"],
        [f"{level} CI, family-balanced bootstrap", ci_text(c.ci_family_balanced)],
        ["tasks improving", f"{c.improving}/{c.tasks}"],
        ["sign-flip p (two-sided)", p_text(c.sign_flip_p)],
        [f"strict passes, {a}", strict_text(c.strict_a)],
        [f"strict passes, {b}", strict_text(c.strict_b)],
    ]
    for name, m in (("key F1", c.key_f1), ("ordered nMAE (lower is better)", c.ordered_value_nmae)):
        if m is not None:
            rows.append([f"{name}: {m.mean_a:.3f} → {m.mean_b:.3f} ({m.n_tasks} tasks)", f"{signed(m.delta)} {ci_text(m.ci_task)}"])
    return rows
