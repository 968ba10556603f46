"""The diagnosis part of a report: the hook point for ``clinbench.report.dx_section``.

``clinbench.report.dx_section`` (the diagnosis benchmark's own section) provides

* ``render_html(store_dir: Path, report_dir: Path) -> str``: an HTML fragment starting with
  ``<h2>``, self-contained (inline SVG, no script), or "" when the store holds no dx runs;
* ``render_markdown(store_dir: Path) -> str``: the same as Markdown, or "".

Until that module exists, the section is the per-agent accuracy table of
``clinbench.dx.stats`` (accuracy with its bootstrap CI, mean cost, mean judge score).
"""

from __future__ import annotations

import importlib
from html import escape
from pathlib import Path

from clinbench.records import STORE_FILE


def has_dx_runs(store_dir: Path) -> bool:
    import duckdb

    store = Path(store_dir) / STORE_FILE
    if not store.is_file():
        return False
    try:
        con = duckdb.connect(str(store), read_only=True)
    except duckdb.Error:
        return False
    try:
        return bool(con.execute("SELECT count(*) FROM runs WHERE benchmark = 'dx'").fetchone()[0])
    except duckdb.Error:
        return False
    finally:
        con.close()


def _section_module():
    try:
        return importlib.import_module("clinbench.report.dx_section")
    except ModuleNotFoundError as exc:
        if exc.name != "clinbench.report.dx_section":
            raise
        return None


def _basic_rows(store_dir: Path) -> list[list[str]]:
    from clinbench.dx import stats as dxstats

    return [[s.agent, str(s.runs), f"{s.accuracy:.1%}", f"{s.ci[0]:.1%}–{s.ci[1]:.1%}", f"${s.mean_cost:,.0f}",
             f"{s.mean_judge:.2f}", str(s.errors)] for s in dxstats.summarise(dxstats.dx_runs(store_dir))]


_HEADER = ["agent", "runs", "accuracy", "95% CI", "mean cost", "mean judge", "errors"]


def dx_html(store_dir: Path, report_dir: Path) -> str:
    if not has_dx_runs(store_dir):
        return ""
    module = _section_module()
    if module is not None:
        return module.render_html(Path(store_dir), Path(report_dir))
    head = "".join(f"<th>{escape(h)}</th>" for h in _HEADER)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in _basic_rows(store_dir))
    return (f'<h2>Sequential diagnosis</h2><p class="note">Store <code>{escape(str(store_dir))}</code>. Accuracy: '
            "share of cases the judge scored 4 or more, with a percentile bootstrap CI.</p>"
            f'<table class="dx"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')


def dx_markdown(store_dir: Path) -> str:
    if not has_dx_runs(store_dir):
        return ""
    module = _section_module()
    if module is not None:
        return module.render_markdown(Path(store_dir))
    lines = ["## Sequential diagnosis", "", "| " + " | ".join(_HEADER) + " |", "|" + "---|" * len(_HEADER)]
    lines += ["| " + " | ".join(r) + " |" for r in _basic_rows(store_dir)]
    return "\n".join(lines) + "\n"
