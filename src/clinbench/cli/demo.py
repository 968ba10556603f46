"""`clinbench demo`: the whole system on built-in synthetic data, offline, in one command.

Each step calls the same library code as its own command, so a newcomer sees what
`data synth`, `concepts build`, `run`, `stats`/`report` and `dx run` do, in order, and one
report tells the story: how much a clinical convention moves a score (the `reference`
agent against the `variant` agent), the M4Bench paper's published Codex campaign
reproduced from its per-run table, and the diagnosis baselines. Only MIMIC-IV is
synthesised: every demo task is a MIMIC-IV task, so an eICU database would go unused.
Rerunning reuses the database and the finished runs already in the output folder.
"""

from __future__ import annotations

import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import typer

from clinbench.cli._console import make_console, plain_column, styled
from clinbench.concepts.profiles import PROFILE_HELP
from clinbench.records import STORE_FILE

console = make_console()
MIMIC_DB = "mimic-iv-synthetic.duckdb"


@contextmanager
def _step(title: str, out: Path) -> Iterator[None]:
    """One step of the demo; Ctrl-C in it says what the output folder keeps and how to resume."""
    from clinbench.campaign.campaign import CampaignInterrupted
    from clinbench.cli._interrupt import is_interrupt, stopped

    console.rule(styled("[bold]{}", title))
    start = time.perf_counter()
    try:
        yield
    except BaseException as exc:
        if isinstance(exc, CampaignInterrupted) or is_interrupt(exc):
            stopped(console, f"in step {title.split('.')[0]}; {_kept(out)}; rerun `clinbench demo --out {out}` with "
                             "the same options to resume (it reuses the database and every finished run)")
        raise
    console.print(f"{title}: {time.perf_counter() - start:.1f} s", style="dim")


def _check_mimic_iv(db: Path) -> None:
    from clinbench.campaign.matrix import datasets_in
    from clinbench.errors import DataError

    if "mimic-iv" not in datasets_in(db):
        raise DataError(f"{db} holds no MIMIC-IV tables (mimiciv_hosp, mimiciv_icu): load one with "
                        "`clinbench data load mimic-iv DIR --out DB`, or leave out --db to synthesise one")


def _kept(out: Path) -> str:
    """What an interrupted demo leaves in ``out`` that a rerun reuses."""
    kept = []
    if (out / MIMIC_DB).is_file():
        kept.append(f"the database {out / MIMIC_DB}")
    for folder, what in (("campaign", "derivation run(s)"), ("dx", "diagnosis encounter(s)"),
                         ("dx-notes", "diagnosis encounter(s)")):
        runs = out / folder / "runs"
        n = sum(1 for p in runs.iterdir() if p.is_dir()) if runs.is_dir() else 0
        if n:
            kept.append(f"{n} finished {what} in {out / folder}")
    return ("kept " + ", ".join(kept)) if kept else f"nothing finished is kept in {out} yet"


def demo_command(
    out: Path = typer.Option(Path("demo-output"), "--out", help="Folder for the database, runs and report."),
    patients: int = typer.Option(200, "--patients", min=10, help="Synthetic patients."),
    seed: int = typer.Option(0, "--seed", help="Seed of the synthetic data."),
    jobs: int = typer.Option(2, "--jobs", min=1, help="Runs in parallel."),
    fresh: bool = typer.Option(False, "--fresh", help="Regenerate the database even when present."),
    db: Path | None = typer.Option(None, "--db", help="Run on this MIMIC-IV database instead of a synthetic one "
                                                      "(e.g. the MIMIC-IV demo from `clinbench data load`); its "
                                                      "concepts and references the demo's tasks need are built into it."),
    profile: str = typer.Option(None, "--profile", help=PROFILE_HELP),
) -> None:
    """Synthesise MIMIC-IV (or take --db), build what its tasks need (references, variants, their concepts),
    compare the reference and variant agents, reproduce M4Bench's campaign, diagnose the demo cases, write one report."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from clinbench.campaign.demo import DEMO_COMPARE, demo_tasks, run_demo_campaign, variant_notes
    from clinbench.campaign.progress import PlainLines, RichReporter
    from clinbench.concepts.build import build_concepts
    from clinbench.concepts.summary import cohort_shares, summary_tables
    from clinbench.derive.catalogue import get_task
    from clinbench.derive.reference import variant_table
    from clinbench.derive.scorable import describe, unscorable_tasks
    from clinbench.derive import raw_layer
    from clinbench.dx.note_admissions import with_note_admissions
    from clinbench.ehr.synth import synth_mimic_iv
    from clinbench.report.build import SectionSpec, write_report
    from clinbench.stats.analysis import Analysis
    from clinbench.report.provenance import record_command
    from clinbench.report.terminal import Col, print_table

    if db is not None:
        _check_mimic_iv(db)
    out.mkdir(parents=True, exist_ok=True)
    mimic = out / MIMIC_DB if db is None else db
    kind = "synthetic database" if db is None else "database"

    with _step(f"1. Synthetic MIMIC-IV ({patients} patients, seed {seed})" if db is None else
               f"1. MIMIC-IV database {db}", out):
        if db is not None:
            console.print(f"using {db} (nothing is synthesised)")
        elif fresh or not mimic.exists():
            with console.status("synthesising…"):
                # with the demo-notes cases' admissions, so step 4 answers their lab orders from labevents
                synth_mimic_iv(mimic, patients=patients, seed=seed, after_raw=with_note_admissions(raw_layer.keep))
            console.print(f"wrote {mimic}")
        else:
            console.print(f"reusing {mimic} (--fresh regenerates)")

    chosen = demo_tasks()
    # what the demo reads, and only that: the references and variants of its tasks, and the cohort shares'
    tables = sorted({get_task(t).target_table for t in chosen} | {variant_table(get_task(t), v) for t, v in chosen.items()}
                    | set(summary_tables()))
    with _step(f"2. The concepts of the demo's {len(chosen)} tasks, their references and variants", out):
        if not console.is_terminal:  # a log or a pipe: plain lines, not a bar drawn only at the end
            plain = PlainLines(console, "concepts")
            results = build_concepts(mimic, only=tables, progress=lambda name, index, total, result: plain.update(
                index + (result is not None), total, name, final=result is not None and index + 1 == total),
                profile=profile)
        else:
            with Progress(plain_column("{task.description}", style="bold"), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), console=console, transient=True) as bar:
                job = bar.add_task("concepts", total=None)

                def report(name, index, total, result):
                    bar.update(job, total=total, completed=index + (result is not None), description=name)

                results = build_concepts(mimic, only=tables, progress=report, profile=profile)
        counts = Counter(r.status for r in results)
        console.print(f"{mimic.name}: " + ", ".join(f"{n} {status}" for status, n in sorted(counts.items())))
        print_table(console, [Col("definition"), Col("share of ICU stays", numeric=True)],
                    [[label, f"{share:.1%}"] for label, share in cohort_shares(mimic).items()],
                    title=f"{'Synthetic MIMIC-IV' if db is None else 'MIMIC-IV'} cohort")

    campaign = out / "campaign"
    unscorable = unscorable_tasks(mimic, list(chosen))
    if unscorable:  # an empty reference would score both agents 0 and read as a convention's effect
        console.print(f"skipped, this database cannot score them: {describe(unscorable)}", highlight=False)
        chosen = {t: v for t, v in chosen.items() if t not in unscorable}
    with _step("3. Derivation campaign: the reference agent against the variant agent", out):
        print_table(console, [Col("task"), Col("variant the variant agent writes")], [[t, v] for t, v in chosen.items()])
        record_command(campaign, ["clinbench", "demo", "--out", str(out), "--patients", str(patients), "--seed",
                                  str(seed), "--jobs", str(jobs), *(["--db", str(db)] if db is not None else [])])
        summary = run_demo_campaign(mimic, campaign, tasks=list(chosen), jobs=jobs, reporter=RichReporter(console))
        console.print(f"{summary.finished} runs finished, {summary.skipped} already done; store {campaign / STORE_FILE}")

    dx_dir, notes_dir = out / "dx", out / "dx-notes"
    with _step("4. Sequential diagnosis on the synthetic demo cases, then on them as discharge notes (offline "
               "baselines)", out):
        _run_dx(dx_dir, notes_dir, mimic)

    with _step("5. One report: convention effect, M4Bench reproduced, diagnosis", out):
        from clinbench.report.published import M4BENCH_RUNS, M4BENCH_INTRO

        sections = [
            SectionSpec(campaign, Analysis(compare=DEMO_COMPARE), key="derive", notes=variant_notes(chosen, mimic),
                        title="1. How much a clinical convention moves the score (reference vs variant agent)",
                        intro="Both built-in agents answer every task exactly; the variant agent follows a documented "
                              "alternative convention (a reference-validity variant) and is scored against the default "
                              f"reference. The delta is what that convention alone costs on this {kind}"
                              + (" (generated by `data synth`, no patient's record)." if db is None else ".")),
            SectionSpec(M4BENCH_RUNS, Analysis(compare="no-skill:with-skill"), key="m4bench",
                        title="2. M4Bench v1: the published Codex campaign, reproduced", intro=M4BENCH_INTRO),
        ]
        with console.status("computing the statistics and writing the report…"):
            files = write_report(sections=sections, dx_store=[dx_dir, _notes_store(notes_dir, mimic)],
                                 html=out / "report.html", markdown=out / "report.md",
                                 title="clinbench demo")
        console.print(styled("report: [bold]{}[/]  (Markdown: {})", files.html, files.markdown))
    console.print("browse every run and play the diagnosis cases as a clinician:")
    typer.echo(f"  clinbench serve {out}")  # plain, so a narrow terminal does not wrap the command


def _run_dx(dx_dir: Path, notes_dir: Path, mimic: Path) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from clinbench.campaign.progress import PlainLines
    from clinbench.dx.cases import demo_cases, load_cases
    from clinbench.dx.demo import DEMO_AGENTS, NOTE_AGENTS, run_demo_dx, run_demo_notes_dx
    from clinbench.report.dx_section import write_dx_plot
    from clinbench.stats.accuracy import dx_runs, summarise

    total = len(demo_cases()) * len(DEMO_AGENTS) + len(load_cases("demo-notes")) * len(NOTE_AGENTS)

    def both(progress) -> list[str]:
        lines = run_demo_dx(dx_dir, progress=progress)
        svg = write_dx_plot(summarise(dx_runs(dx_dir)), dx_dir / "dx_accuracy_cost.svg",
                            title="Demo cases: accuracy vs cost")
        notes = run_demo_notes_dx(notes_dir, mimic, demo_dir=dx_dir, progress=progress)
        svg_notes = write_dx_plot(summarise(dx_runs(notes_dir)), notes_dir / "dx_accuracy_cost.svg",
                                  title="Demo cases as discharge notes: accuracy vs cost")
        return [*lines, f"accuracy-cost plot: {svg}", "", *notes, f"accuracy-cost plot: {svg_notes}"]

    if not console.is_terminal:
        plain, done = PlainLines(console, "encounters"), []

        def tick(rec) -> None:
            done.append(rec)
            plain.update(len(done), total, rec.agent, final=len(done) == total)

        lines = both(tick)
    else:
        with Progress(TextColumn("[bold]encounters"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      plain_column("{task.fields[agent]}"), console=console, transient=True) as bar:
            job = bar.add_task("dx", total=total, agent="")
            lines = both(lambda rec: bar.update(job, advance=1, agent=rec.agent))
    for line in lines:
        console.print(line, highlight=False)


def _notes_store(notes_dir: Path, mimic: Path):
    """The report's section on the demo-notes runs: what those cases are and where their lab results came from."""
    from clinbench.dx.demo import demo_notes_grounded, same_verdicts
    from clinbench.report.dx_section import DxStore

    grounded = demo_notes_grounded(mimic)
    same = "; ".join(same_verdicts(notes_dir.parent / "dx", notes_dir)) if (notes_dir / "runs").is_dir() else ""
    where = (f", its laboratory orders from the admission each case carries in {mimic.name} (written by "
             "`data synth mimic-iv --notes`: labevents equal to the note's lab strings)" if grounded
             else f" ({mimic.name} holds none of these cases' admissions)")
    return DxStore(notes_dir, key="dx-notes",
                   heading="Sequential diagnosis on the same cases as MIMIC-IV-Note discharge summaries",
                   intro="The demo cases above that have lab results, rewritten in the layout of MIMIC-IV-Note "
                         "discharge summaries (___ placeholders, BLOOD lab strings, dated studies, culture lines): the "
                         "same vignettes, results and diagnoses, so these runs are not further cases and are not "
                         "pooled with the ones above. Only ed-workup runs here: the other agents read nothing but the "
                         f"vignette, which is the demo case's. Its orders are answered from the note{where}."
                         + (f" Against the demo layout, {same}." if same else ""))


def register(app: typer.Typer) -> None:
    app.command("demo")(demo_command)
