"""`clinbench demo`: the whole system on built-in synthetic data, offline, in one command.

Each step calls the same library code as its own command, so a newcomer sees what
`data synth`, `concepts build`, `run`, `stats`/`report` and `dx run` do, in order.
Rerunning reuses the databases and finished runs already in the output folder.
"""

from __future__ import annotations

import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import typer
from rich.console import Console
from rich.table import Table

console = Console()


@contextmanager
def _step(title: str) -> Iterator[None]:
    console.rule(f"[bold]{title}")
    start = time.perf_counter()
    yield
    console.print(f"[dim]{title}: {time.perf_counter() - start:.1f} s[/]")


def demo_command(
    out: Path = typer.Option(Path("demo-output"), "--out", help="Folder for the databases, runs and report."),
    patients: int = typer.Option(200, "--patients", min=10, help="Synthetic patients per database."),
    seed: int = typer.Option(0, "--seed", help="Seed of the synthetic data."),
    jobs: int = typer.Option(2, "--jobs", min=1, help="Runs in parallel."),
    fresh: bool = typer.Option(False, "--fresh", help="Regenerate the databases even when present."),
) -> None:
    """Synthesise MIMIC-IV and eICU, build the concepts and task references, run a small campaign, diagnose the demo cases, write the report."""
    from clinbench.campaign.demo import run_demo_campaign
    from clinbench.campaign.progress import RichReporter
    from clinbench.concepts.build import build_concepts
    from clinbench.concepts.summary import cohort_shares
    from clinbench.derive.catalogue import load_catalogue
    from clinbench.ehr.synth import synth_eicu, synth_mimic_iv
    from clinbench.report.build import write_report

    out.mkdir(parents=True, exist_ok=True)
    mimic = out / "mimic-iv-synthetic.duckdb"
    eicu = out / "eicu-synthetic.duckdb"

    with _step(f"1. Synthetic databases ({patients} patients each, seed {seed})"):
        for path, make in ((mimic, synth_mimic_iv), (eicu, synth_eicu)):
            if fresh or not path.exists():
                make(path, patients=patients, seed=seed)
                console.print(f"wrote {path}")
            else:
                console.print(f"reusing {path} (--fresh regenerates)")

    tasks = load_catalogue()
    targets = len({spec.reference for spec in tasks.values()})
    with _step(f"2. Concepts and the task references ({targets} targets for the {len(tasks)} tasks)"):
        for path in (mimic, eicu):
            results = build_concepts(path)
            counts = Counter(r.status for r in results)
            console.print(f"{path.name}: " + ", ".join(f"{n} {status}" for status, n in sorted(counts.items())))
        shares = cohort_shares(mimic)
        table = Table("definition", "share of ICU stays", title="Synthetic MIMIC-IV cohort")
        for label, share in shares.items():
            table.add_row(label, f"{share:.1%}")
        console.print(table)

    campaign = out / "campaign"
    with _step("3. Derivation campaign: reference and empty agents"):
        summary = run_demo_campaign(mimic, campaign, jobs=jobs, reporter=RichReporter())
        console.print(f"{summary.finished} runs finished, {summary.skipped} already done; store {campaign / 'results.duckdb'}")

    dx_dir = out / "dx"
    with _step("4. Sequential diagnosis on the demo cases"):
        _run_dx(dx_dir)

    with _step("5. Report"):
        files = write_report(campaign, html=out / "report.html", markdown=out / "report.md")
        console.print(f"report: [bold]{files.html}[/]  (Markdown: {files.markdown})")


def _run_dx(dx_dir: Path) -> None:
    from clinbench.dx.demo import run_demo_dx

    for line in run_demo_dx(dx_dir):
        console.print(line)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo_command)
