"""Tables for the terminal that fit its width: columns wrap at spaces, and when even wrapped
they do not fit, the least needed columns are dropped (their names listed under the table).
A cell is never cut short: ids and numbers are not wrapped, words are not broken.

Without a terminal the width is ``$COLUMNS`` or 80, as Rich decides.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table


@dataclass(frozen=True)
class Col:
    name: str
    drop: int = 0  # 0: always shown; higher numbers are dropped first when space runs out
    wrap: bool = False  # may wrap at spaces (lists, prose); otherwise kept on one line
    numeric: bool = False


_GAP = 3  # padding either side and the rule between two columns


def _widths(cols: list[Col], rows: list[list[str]]) -> list[tuple[int, int]]:
    """(narrowest, natural) width of each column: a wrapping column needs its longest word."""
    out = []
    for i, c in enumerate(cols):
        cells = [c.name, *(r[i] for r in rows)]
        natural = max(cell_len(x) for x in cells)
        narrow = max(cell_len(w) for x in cells for w in (x.split() or [""])) if c.wrap else natural
        out.append((narrow, natural))
    return out


def _build(cols: list[Col], rows: list[list[str]], keep: list[int], widths: list[tuple[int, int]],
           title: str | None) -> Table:
    table = Table(title=title, box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False, title_justify="left",
                  show_edge=False, collapse_padding=True)
    for i in keep:
        c = cols[i]
        table.add_column(c.name, no_wrap=not c.wrap, min_width=widths[i][0],
                         justify="right" if c.numeric else "left")
    for r in rows:
        table.add_row(*(r[i] for i in keep))
    return table


def fit_table(console: Console, cols: list[Col], rows: list[list[str]], *, title: str | None = None) -> tuple[Table, list[str]]:
    """The table of ``rows`` at ``console``'s width and the names of the columns dropped."""
    widths = _widths(cols, rows)
    keep = list(range(len(cols)))
    order = sorted((i for i, c in enumerate(cols) if c.drop), key=lambda i: (-cols[i].drop, -i))
    while order and sum(widths[i][0] for i in keep) + _GAP * (len(keep) - 1) > console.width:
        keep.remove(order.pop(0))
    return _build(cols, rows, keep, widths, title), [cols[i].name for i in range(len(cols)) if i not in keep]


def print_table(console: Console, cols: list[Col], rows: list[list[str]], *, title: str | None = None) -> None:
    table, dropped = fit_table(console, cols, rows, title=title)
    console.print(table)
    if dropped:
        console.print(f"(not shown at {console.width} columns: {', '.join(dropped)}; widen the terminal or use "
                      "--json)", style="dim", highlight=False)
