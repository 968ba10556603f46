"""`clinbench data synth`: write a synthetic MIMIC-IV or eICU database (no network, no credentials)."""

from __future__ import annotations

import time
from enum import Enum
from pathlib import Path

import typer
from clinbench.cli._console import make_console
from clinbench.cli._interrupt import says_on_interrupt
from clinbench.ehr.synth.knobs import Knobs

console = make_console(soft_wrap=True)
_DEFAULTS = Knobs()


class SynthDataset(str, Enum):
    mimic_iv = "mimic-iv"
    eicu = "eicu"


def synth(
    dataset: SynthDataset = typer.Argument(..., help="mimic-iv or eicu"),
    out: Path = typer.Option(..., "--out", help="DuckDB file to write (appears only when complete)"),
    force: bool = typer.Option(False, "--force", help="replace --out if it exists"),
    patients: int = typer.Option(200, "--patients", min=1, help="number of patients"),
    seed: int = typer.Option(0, "--seed", min=0, help="random seed: the same seed gives identical tables"),
    septic: float = typer.Option(_DEFAULTS.septic, help="share of ICU stays with suspected infection "
                                 "(cultures and antibiotics)"),
    ventilated: float = typer.Option(_DEFAULTS.ventilated, help="share of ICU stays invasively ventilated"),
    pressors: float = typer.Option(_DEFAULTS.pressors, help="share of ICU stays on vasopressor infusions"),
    aki: float = typer.Option(_DEFAULTS.aki, help="share of ICU stays with acute kidney injury "
                              "(creatinine rise, oliguria)"),
    crrt: float = typer.Option(_DEFAULTS.crrt, help="share of ICU stays on CRRT (at most --aki)"),
    liver: float = typer.Option(_DEFAULTS.liver, help="share of patients with liver disease "
                                "(bilirubin, INR, platelets)"),
    quirks: float = typer.Option(_DEFAULTS.quirks, help="rate of real-data quirks: duplicates, error values "
                                 "such as 999999, charting outside the stay (0 for none)"),
    notes: bool = typer.Option(False, "--notes", help="mimic-iv: also write the admissions of the demo-notes "
                               "diagnosis cases (their lab strings as labevents), for `dx run --cases demo-notes "
                               "--mimic-db`"),
) -> None:
    """Write a synthetic database with the same schemas, tables, columns and types as `data load`."""
    from clinbench.derive import raw_layer
    from clinbench.ehr.load import check_out
    from clinbench.ehr.synth import synth_eicu, synth_mimic_iv

    if notes and dataset is not SynthDataset.mimic_iv:
        raise typer.BadParameter("the demo-notes admissions are MIMIC-IV admissions: use --notes with mimic-iv",
                                 param_hint="--notes")
    check_out(out, force=force)
    build = synth_mimic_iv if dataset is SynthDataset.mimic_iv else synth_eicu
    after_raw = raw_layer.keep
    if notes:
        from clinbench.dx.note_admissions import with_note_admissions

        after_raw = with_note_admissions(raw_layer.keep)
    started = time.perf_counter()
    with console.status(f"generating {patients:,} synthetic {dataset.value} patients"):
        path = build(out, patients=patients, seed=seed, after_raw=after_raw, septic=septic, ventilated=ventilated,
                     pressors=pressors, aki=aki, crrt=crrt, liver=liver, quirks=quirks)
    extra = " and the demo-notes admissions" if notes else ""
    console.print(f"wrote {path} ({patients:,} patients{extra}, seed {seed}) in {time.perf_counter() - started:.1f} s",
                  highlight=False)


def register(app: typer.Typer) -> None:
    from clinbench.cli.data import data_app

    data_app.command("synth")(says_on_interrupt(
        "nothing was written: the database appears at --out only when complete; rerun the same command")(synth))
