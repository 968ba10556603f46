"""`clinbench concepts variants DB [NAME]`: the documented alternative targets and what they change."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from clinbench.cli._console import make_console, styled

console = make_console()


def variants(
    db: Annotated[Path, typer.Argument(help="DuckDB database (the variants and targets it lacks are built into it first)")],
    name: Annotated[Optional[str], typer.Argument(help="One variant: also print example rows that move")] = None,
    examples: Annotated[int, typer.Option("--examples", min=0, help="How many moved cells to print for NAME")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print the variants and what they move as JSON")] = False,
) -> None:
    """List reference-validity variants with the rows and values that differ from each default target."""
    from clinbench.cli._references import say_built
    from clinbench.concepts.build import build_absent
    from clinbench.concepts.variants import find_variant, list_variants, variant_diff

    chosen = [v.name for v in list_variants()] if name is None else [find_variant(name).name]
    tables = [t for v in map(find_variant, chosen) for t in (v.table, v.target_table)]
    started = time.perf_counter()
    results = build_absent(db, tables)
    say_built(make_console(stderr=True) if as_json else console, results, db, time.perf_counter() - started)
    if as_json:
        import json
        from dataclasses import asdict

        typer.echo(json.dumps([asdict(variant_diff(db, n, examples=examples)) for n in chosen], indent=1, default=str))
        return
    table = Table(title=f"Variants on {db}")
    for column in ("variant", "default target", "rows (default / variant)", "only default", "only variant", "changed",
                   "rows moved", "stays moved", "changed columns"):
        table.add_column(column)
    diffs = [variant_diff(db, n, examples=examples) for n in chosen]
    for d in diffs:
        cols = ", ".join(f"{c} {n}" for c, n in d.changed_by_column.items() if n)
        unit = "" if d.unit == "stay_id" else f" ({d.unit})"
        table.add_row(d.variant.name, d.variant.reference, f"{d.default_rows} / {d.variant_rows}",
                      str(d.only_default), str(d.only_variant), str(d.changed),
                      str(d.only_default + d.only_variant + d.changed), f"{d.moved_units}{unit}", cols or "-")
    console.print(table)
    if name is None:
        console.print("Give a variant NAME to see its clinical reason and the rows that move.")
        return
    console.print(styled("[bold]{}[/]: {}", diffs[0].variant.name, diffs[0].variant.reason), highlight=False)
    if diffs[0].examples:
        moved = Table(title=f"Rows that move ({', '.join(diffs[0].keys)})")
        for column in diffs[0].examples[0]:
            moved.add_column(column)
        for row in diffs[0].examples:
            moved.add_row(*("" if v is None else str(v) for v in row.values()))
        console.print(moved)


def register(app: typer.Typer) -> None:
    # attach to the `concepts` group defined by cli/concepts.py (imported, so it exists first)
    from clinbench.cli.concepts import concepts_app

    concepts_app.command("variants")(variants)
