"""The diagnosis section of the HTML and Markdown reports, and its figure.

From a campaign store holding dx runs (alone, or beside a derivation campaign), computed once
(``build_dx``) and shown in both formats:

* a table per agent/mode (and gatekeeper/judge when not offline): runs, accuracy with its
  95% percentile-bootstrap CI, mean cost with its interval, mean judge score, agent
  failures and harness errors, and a mark when the judge is the agent's own model;
* the accuracy-cost plot (``clinbench.report.svg.accuracy_cost_plot``, the figure code path of
  every report figure: inline in the page, and written as ``dx-accuracy-cost.svg`` beside the
  derivation figures);
* judge agreement: when the same encounters were scored by more than one judge
  (``clinbench dx rejudge``), the share of agreement on correct/incorrect and Cohen's kappa
  for each pair of judges;
* a per-case table: each case's reference and, per agent, the diagnosis, judge score and
  cost, linked to the run's transcript.

A report may hold several diagnosis stores (``DxStore``: a folder with its section's heading
and intro), one section each, in order: the demo's cases and the same cases as discharge notes
are shown apart, never pooled.
"""

from __future__ import annotations

import os
from html import escape
from itertools import combinations
from pathlib import Path

from dataclasses import dataclass, field

from clinbench import untrusted
from clinbench.dx.judge import cohen_kappa
from clinbench.records import RunStatus
from clinbench.report.svg import accuracy_cost_plot, write_figure
from clinbench.stats import accuracy
from clinbench.stats.formatting import pct_text, usd_text
from clinbench.stats.runs import AGENT_FAILED
from clinbench.untrusted import markdown

MAX_CASE_ROWS = 400


def _evidence_json(store_dir: Path, run: dict, name: str) -> dict:
    """A JSON object of the run's evidence, read as untrusted ({} when it cannot be read)."""
    try:
        data = untrusted.read_json(store_dir / (run["evidence_dir"] or "") / name)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _score(store_dir: Path, run: dict) -> dict:
    return _evidence_json(store_dir, run, "score.json")


def _agent_rows(runs: list[dict], summaries: list[accuracy.AgentSummary]) -> list[list[str]]:
    rows = []
    for s in summaries:
        sub = [r for r in runs if accuracy.run_key(r) == s.agent]
        failed = sum(r["status"] in AGENT_FAILED for r in sub)  # older stores' error and timeout too, as stats counts
        harness = sum(r["status"] == RunStatus.HARNESS_ERROR for r in sub)
        rows.append([s.agent + (" [self-judge]" if any("+self-judge" in (r["judge"] or "") for r in sub) else ""),
                     str(s.runs), pct_text(s.accuracy),
                     f"{s.ci[0]:.1%}–{s.ci[1]:.1%}" if s.ci else "n/a", usd_text(s.mean_cost),
                     f"${s.cost_ci[0]:,.0f}–${s.cost_ci[1]:,.0f}" if s.cost_ci else "n/a",
                     "n/a" if s.mean_tests is None else f"{s.mean_tests:.1f}",
                     "n/a" if s.mean_judge is None else f"{s.mean_judge:.2f}", str(failed), str(harness)])
    return rows


_AGENT_HEADER = ["agent (mode, settings)", "runs", "accuracy", "95% CI", "mean cost", "cost 95% CI",
                 "tests per case", "mean judge", "agent failed", "harness errors"]


def judge_agreement(runs: list[dict]) -> list[dict]:
    """Per pair of judges that scored the same encounters: pairs, agreement, Cohen's kappa."""
    verdicts: dict[str, dict[str, bool]] = {}
    for r in runs:
        if r["reward"] is None or r["status"] != "ok":
            continue
        encounter = r["run_id"].split("~judge-", 1)[0]
        verdicts.setdefault(r["judge"] or "offline", {})[encounter] = r["reward"] >= 1.0
    out = []
    for a, b in combinations(sorted(verdicts), 2):
        shared = sorted(set(verdicts[a]) & set(verdicts[b]))
        if len(shared) < 2:
            continue
        x, y = [verdicts[a][k] for k in shared], [verdicts[b][k] for k in shared]
        out.append({"judge_a": a, "judge_b": b, "pairs": len(shared),
                    "agreement": sum(p == q for p, q in zip(x, y)) / len(shared), "kappa": cohen_kappa(x, y)})
    return out


def _synthetic_cases(store_dir: Path, runs: list[dict]) -> set[str]:
    """The cases whose runs' manifests say their data is synthetic (``dx run`` records it per run)."""
    out = set()
    for r in runs:
        if _evidence_json(store_dir, r, "manifest.json").get("data") == "SYNTHETIC":
            out.add(r["task"])
    return out


def _cases_label(store_dir: Path, runs: list[dict]) -> str:
    """'synthetic cases', 'real cases' or 'cases (N synthetic)': said in the heading and the case table."""
    synthetic = _synthetic_cases(store_dir, runs)
    cases = {r["task"] for r in runs}
    if cases and synthetic >= cases:
        return "synthetic cases"
    return f"cases ({len(synthetic)} of {len(cases)} synthetic)" if synthetic else "cases"


_SYNTHETIC_NOTE = ("The cases are synthetic: written for clinbench, no patient's record; "
                   "their scores show the harness works, not how an agent does on real encounters.")


def _case_rows(store_dir: Path, runs: list[dict], report_dir: Path | None) -> tuple[list[str], list[list[tuple[str, str]]]]:
    agents = sorted({accuracy.run_key(r) for r in runs})
    by_case: dict[str, dict[str, dict]] = {}
    for r in runs:
        by_case.setdefault(r["task"], {})[accuracy.run_key(r)] = r
    rows = []
    synthetic = _synthetic_cases(store_dir, runs)
    for task in sorted(by_case, key=lambda t: (len(t), t))[:MAX_CASE_ROWS]:
        cells = by_case[task]
        reference = next((_score(store_dir, r).get("reference", "") for r in cells.values()), "")
        row = [(f"{task} (synthetic)" if task in synthetic else task, ""), (reference, "")]
        for agent in agents:
            r = cells.get(agent)
            if r is None:
                row.append(("", ""))
                continue
            sc = _score(store_dir, r)
            orig = sc.get("original_evidence") or r["evidence_dir"] or ""
            link = ""
            if report_dir is not None:
                link = os.path.relpath(store_dir / orig / "transcript.jsonl", report_dir)
            text = (f"{sc.get('diagnosis') or '(none)'} — {r['judge_score'] if r['judge_score'] is not None else r['status']}"
                    f", {usd_text(r['cost'])}")
            row.append((text, link))
        rows.append(row)
    return ["case", "reference", *agents], rows


@dataclass
class DxPart:
    """The diagnosis section as the report shows it: HTML fragment, Markdown, figures (stem -> SVG)."""

    html: str
    markdown: str
    figures: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class DxStore:
    """A diagnosis campaign folder for a report: its section's key (figure names), heading and intro
    ("" for the defaults: "Sequential diagnosis on <cases>", no intro)."""

    path: Path
    key: str = "dx"
    heading: str = ""
    intro: str = ""


def dx_stores(given) -> list[DxStore]:
    """``given`` (a folder, a ``DxStore``, a list of either, or None) as DxStores."""
    if not given:
        return []
    items = given if isinstance(given, (list, tuple)) else [given]
    return [g if isinstance(g, DxStore) else DxStore(Path(g)) for g in items]


def build_dx(store_dir: Path, report_dir: Path | None = None, *, title: str = "Accuracy vs cost",
             heading: str = "", intro: str = "", include_flagged: bool = False) -> DxPart:
    """The diagnosis section of ``store_dir``'s dx runs (those the audit lets in, as ``dx stats``),
    transcripts linked relative to ``report_dir``; ``heading``/``intro`` replace the default heading and
    add a paragraph under it."""
    store_dir = Path(store_dir)
    runs = accuracy.dx_runs(store_dir, include_flagged=include_flagged)
    summaries = accuracy.summarise(runs)
    figures = {"accuracy-cost": accuracy_cost_plot(summaries, title=title)} if any(s.plottable for s in summaries) else {}
    label = _cases_label(store_dir, runs)
    agent_rows = _agent_rows(runs, summaries)
    agreement = judge_agreement(runs)
    html = _html(store_dir, runs, label, agent_rows, agreement, figures, report_dir, heading, intro)
    md = _markdown(store_dir, runs, label, agent_rows, agreement, heading, intro)
    return DxPart(html, md, figures)


def write_dx_plot(summaries: list[accuracy.AgentSummary], path: str | Path, *,
                  title: str = "Accuracy vs cost") -> Path | None:
    """The accuracy-cost figure written to ``path`` (``dx stats``, the demo), or None when no agent
    has a scored, costed run to plot."""
    if not any(s.plottable for s in summaries):
        return None
    return write_figure(path, accuracy_cost_plot(summaries, title=title))


def _html(store_dir: Path, runs: list[dict], label: str, agent_rows: list[list[str]], agreement: list[dict],
          figures: dict[str, str], report_dir: Path | None, heading: str = "", intro: str = "") -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in _AGENT_HEADER)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in agent_rows)
    parts = [f"<h2>{escape(heading or 'Sequential diagnosis on ' + label)}</h2>"
             + (f'<p class="note flag">{escape(_SYNTHETIC_NOTE)}</p>' if label == "synthetic cases" else "")
             + (f'<p class="note">{escape(intro)}</p>' if intro else "")
             + f'<p class="note">Store <code>{escape(str(store_dir))}</code>: '
             f"{len(runs)} runs; {escape(runs.audit_text())}. Accuracy is the share of scored runs the judge gave 4 "
             "or more (agent failures count as wrong; harness errors are left out), with a 95% case-cluster "
             "percentile-bootstrap CI (whole cases resampled); cost is $300 per physician visit plus each test's "
             "price.</p>",
             f'<table class="dx"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>']
    if "accuracy-cost" in figures:
        parts.append('<figure class="dx-plot">' + figures["accuracy-cost"] +
                     "<figcaption>Accuracy against mean cost per case; green: the Pareto front.</figcaption></figure>")
    if agreement:
        rows = "".join(f"<tr><td>{escape(a['judge_a'])}</td><td>{escape(a['judge_b'])}</td><td>{a['pairs']}</td>"
                       f"<td>{a['agreement']:.1%}</td><td>{a['kappa']:.2f}</td></tr>" for a in agreement)
        parts.append("<h3>Judge agreement</h3><table class=\"dx\"><thead><tr><th>judge</th><th>judge</th>"
                     f"<th>encounters</th><th>agree on correct</th><th>Cohen's kappa</th></tr></thead><tbody>{rows}"
                     "</tbody></table>")
    else:
        parts.append('<p class="note">Judge agreement: one judge scored these runs; re-score them with another '
                     "(<code>clinbench dx rejudge DIR --judge-model …</code>) to measure it. The paper's judge agreed "
                     "with physicians at kappa 0.70.</p>")
    header, rows = _case_rows(store_dir, runs, report_dir)
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(
        f'<td><a href="{escape(link)}">{escape(text)}</a></td>' if link else f"<td>{escape(text)}</td>"
        for text, link in row) + "</tr>" for row in rows)
    parts.append(f'<h3>Per case</h3><table class="dx dx-cases"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')
    return "\n".join(parts)


def _md_row(cells: list[str]) -> str:
    """One table row, each cell shown as text (diagnoses and labels are a model's bytes)."""
    return "| " + " | ".join(markdown(c) for c in cells) + " |"


def _markdown(store_dir: Path, runs: list[dict], label: str, agent_rows: list[list[str]], agreement: list[dict],
              heading: str = "", intro: str = "") -> str:
    lines = [f"## {heading or 'Sequential diagnosis on ' + label}", ""]
    if label == "synthetic cases":
        lines += [f"**{_SYNTHETIC_NOTE}**", ""]
    if intro:
        lines += [markdown(intro), ""]
    lines += [f"{len(runs)} runs in `{store_dir}`; {runs.audit_text()}; accuracy = judge ≥ 4, "
              "95% case-cluster bootstrap CI.",
              "", _md_row(_AGENT_HEADER), "|" + "---|" * len(_AGENT_HEADER)]
    lines += [_md_row(r) for r in agent_rows]
    if agreement:
        lines += ["", "| judge | judge | encounters | agree | kappa |", "|---|---|---|---|---|"]
        lines += [_md_row([a["judge_a"], a["judge_b"], str(a["pairs"]), f"{a['agreement']:.1%}", f"{a['kappa']:.2f}"])
                  for a in agreement]
    header, rows = _case_rows(store_dir, runs, None)
    lines += ["", _md_row(header), "|" + "---|" * len(header)]
    lines += [_md_row([text for text, _ in row]) for row in rows]
    return "\n".join(lines) + "\n"
