"""Render docs/performance.json (the figures store) into the table of docs/performance.md.

The table sits between ``<!-- figures:start -->`` and ``<!-- figures:end -->``; the prose around
it is left as it is. The render depends on the JSON alone (rows in its order), so it is the same
on every machine. ``--check`` writes nothing and exits 1 with one line when the markdown's table
is not the render (a hand-edited figure, or a ``--record`` whose table was not rendered).

    .venv/bin/python benchmarks/performance_table.py [--check]

Record a script's rows first with its ``--record`` (see each script's docstring), then run this.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from figures import FIGURES, ROOT, Figure, read  # noqa: E402

from clinbench.atomic import write_text_atomic  # noqa: E402

MARKDOWN = ROOT / "docs" / "performance.md"
START, END = "<!-- figures:start -->", "<!-- figures:end -->"
HEADER = ("| what | clinbench | anchor (same run) | ratio | goal | measured (date, commit, load, command) |\n"
          "|---|---|---|---|---|---|\n")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _goal(row: Figure) -> str:
    if row.goal is None:
        return ""
    return f"{row.goal}: {'not judged (no anchor figure)' if row.met is None else 'met' if row.met else 'not met'}"


def render(rows: list[Figure]) -> str:
    """The table, header included, one line per row."""
    lines = [f"| {_cell(r.what)} | {_cell(r.clinbench)} | {_cell(r.anchor)} | {_cell(r.ratio)} | {_cell(_goal(r))} | "
             f"{_cell(f'{r.date}, {r.commit}, load {r.load}: `{r.command}`')} |\n" for r in rows]
    return HEADER + "".join(lines)


def with_table(markdown: str, table: str, name: str = "docs/performance.md") -> str:
    """``markdown`` with the text between the markers replaced by ``table``."""
    head, start, rest = markdown.partition(START)
    body, end, tail = rest.partition(END)
    if not start or not end:
        raise SystemExit(f"{name} has no {START} ... {END} markers around the figures table")
    return f"{head}{START}\n{table}{END}{tail}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the markdown's table differs from the render")
    ap.add_argument("--figures", type=Path, default=FIGURES, help=argparse.SUPPRESS)
    ap.add_argument("--markdown", type=Path, default=MARKDOWN, help=argparse.SUPPRESS)
    a = ap.parse_args()
    text = a.markdown.read_text(encoding="utf-8")
    new = with_table(text, render(read(a.figures)), a.markdown.name)
    if a.check:
        if new != text:
            raise SystemExit(f"{a.markdown.name}: the figures table differs from {a.figures.name}; "
                             "render it with benchmarks/performance_table.py (figures are recorded, not typed)")
        return
    if new != text:
        write_text_atomic(a.markdown, new)
    print(f"{a.markdown}: {len(read(a.figures))} rows from {a.figures}")


if __name__ == "__main__":
    main()
