"""The sequential-diagnosis part of ``clinbench demo``: offline agents on the demo cases, then on
the same cases as MIMIC-IV-Note discharge summaries.

``run_demo_dx`` runs ``oracle`` (harness sanity: must be 100%), ``ed-instant`` (the
candidate-list baseline from the vignette alone, no cost) and ``ed-workup`` (the same baseline
after one visit of questions and the confirmatory tests of its leading candidates) on every
bundled demo case with the offline gatekeeper and judge, into ``out_dir`` (its own campaign
store), and returns printable summary lines (the baseline's accuracy first); the caller draws
the accuracy-cost plot with the report's figures (``clinbench.report.dx_section.write_dx_plot``).

``run_demo_notes_dx`` runs ``ed-workup`` on the ``demo-notes`` cases into a store of their own:
the same cases, not new ones (same vignettes, results and diagnoses), so they are reported beside
the demo's, never pooled with them; the other agents read only the vignette, which is the demo
case's. With ``mimic_db`` holding the cases' admissions (``data synth mimic-iv --notes``), lab
orders are answered from those admissions' labevents (the grounded gatekeeper); otherwise from
the note. Rerunning skips finished runs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from clinbench.dx.cases import Case, demo_cases, load_cases
from clinbench.dx.note_admissions import linked_admissions
from clinbench.dx.run import DxConfig, run_dx_campaign
from clinbench.records import STORE_FILE, RunRecord
from clinbench.stats import accuracy

DEMO_AGENTS = ("oracle", "ed-instant", "ed-workup")
NOTE_AGENTS = ("ed-workup",)  # the one baseline that orders tests: the others read only the vignette


def run_demo_dx(out_dir: str | Path, *, agents: tuple[str, ...] = DEMO_AGENTS,
                progress: Callable[[RunRecord], None] | None = None) -> list[str]:
    out_dir = Path(out_dir)
    cases = demo_cases()
    run_dx_campaign(cases, [DxConfig(agent=agent) for agent in agents], out_dir, progress=progress)
    return _summary(out_dir, f"{len(cases)} synthetic demo cases; offline gatekeeper and judge; store "
                             f"{out_dir / STORE_FILE}")


def demo_notes_grounded(mimic_db: str | Path | None) -> bool:
    """Whether ``mimic_db`` holds the admission of every demo-notes case (then lab orders are grounded)."""
    if mimic_db is None or not Path(mimic_db).is_file():
        return False
    notes = load_cases("demo-notes")
    return linked_admissions(mimic_db, notes) == len(notes)


def run_demo_notes_dx(out_dir: str | Path, mimic_db: str | Path | None = None, *,
                      agents: tuple[str, ...] = NOTE_AGENTS, demo_dir: str | Path | None = None,
                      progress: Callable[[RunRecord], None] | None = None) -> list[str]:
    """The baseline on the demo-notes cases into ``out_dir``; grounded in ``mimic_db`` when it holds
    their admissions. ``demo_dir``: the demo cases' store, to say how many verdicts the layout changed."""
    out_dir = Path(out_dir)
    notes = load_cases("demo-notes")
    grounded = demo_notes_grounded(mimic_db)
    db = Path(mimic_db).resolve() if grounded else None
    run_dx_campaign(notes, [DxConfig(agent=agent, mimic_db=db) for agent in agents], out_dir, progress=progress)
    head = (f"{len(notes)} of the demo cases as MIMIC-IV-Note discharge summaries; offline judge; lab orders from "
            + (f"the cases' admissions in {Path(mimic_db).name} (labevents = the notes' lab strings)" if grounded
               else "the notes" + (f" ({Path(mimic_db).name} holds none of their admissions)" if mimic_db else ""))
            + f"; store {out_dir / STORE_FILE}")
    lines = _summary(out_dir, head)
    if demo_dir is not None:
        lines[1:1] = same_verdicts(Path(demo_dir), out_dir, notes)
    return lines


def same_verdicts(demo_dir: Path, notes_dir: Path, notes: list[Case] | None = None) -> list[str]:
    """Per agent: on how many note cases the verdict equals the same case's in the demo layout."""
    from clinbench.dx.note_layout import NOTE_ID_OFFSET

    notes = load_cases("demo-notes") if notes is None else notes

    def verdicts(store: Path) -> dict[tuple[str, int], float | None]:
        return {(r["agent"], int(r["task"])): r["reward"] for r in accuracy.dx_runs(store)}

    demo, note = verdicts(demo_dir), verdicts(notes_dir)
    lines = []
    for agent in sorted({a for a, _ in note}):
        pairs = [(demo.get((agent, c.case_id - NOTE_ID_OFFSET)), note.get((agent, c.case_id))) for c in notes]
        pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
        if pairs:
            lines.append(f"{agent}: same verdict as in the demo layout on {sum(a == b for a, b in pairs)}/{len(pairs)} cases")
    return lines


def _summary(out_dir: Path, head: str) -> list[str]:
    runs = accuracy.dx_runs(out_dir)
    summaries = accuracy.summarise(runs)
    lines = [head]
    # an agent's key carries a non-default gatekeeper: "ed-workup (gatekeeper=offline+grounded)"
    key = {name: next((s.agent for s in summaries if s.agent.split(" (")[0] == name), None)
           for name in ("ed-workup", "ed-instant", "oracle")}
    for name in ("ed-workup", "ed-instant"):
        s = next((s for s in summaries if s.agent == key[name]), None)
        if s is not None and s.accuracy is not None:  # a count of runs; the accuracy (case-balanced) follows
            correct = sum(r["reward"] == 1.0 for r in runs if accuracy.run_key(r) == s.agent)
            lines.append(f"offline baseline {s.agent}: {correct}/{s.scored} correct")
    lines += [s.describe() for s in summaries]
    for a, b in ((key["ed-instant"], key["ed-workup"]), (key["ed-workup"], key["oracle"])):  # base, new
        if a is None or b is None:
            continue
        t = accuracy.compare(runs, a, b)
        lines.append(f"{a} → {b}: {t.delta * 100:+.1f} accuracy points, one-sided paired permutation "
                     f"p = {t.p_value:.2g} ({t.pairs} pairs)")
    return lines
