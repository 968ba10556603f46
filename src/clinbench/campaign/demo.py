"""The derivation campaign `clinbench demo` runs: the `reference` agent against the `variant` agent.

The `reference` built-in writes each task's default reference (reward 1.0 by construction:
it checks the harness). The `variant` built-in writes a reference-validity variant of the
same target (a clinically defensible alternative convention, e.g. a missing SOFA component
scored as unknown instead of normal) and is scored against the default reference like any
agent. The comparison `agent:reference:variant` therefore measures, on real scoring, how
much a convention alone moves a task's score: what an agent that followed the other
convention would lose. Nothing is staged: the rows differ exactly where the two
definitions differ on the database.

The tasks are the MIMIC-IV standard-mode tasks whose reference has at least one variant,
each run with its first variant (sorted by name), one trial, condition no-skill.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from clinbench.campaign.campaign import CampaignSummary, Reporter, run_campaign
from clinbench.campaign.execute import CampaignConfig, RunResult, execute_run
from clinbench.campaign.matrix import RunSpec, expand

DEMO_CONDITION = "no-skill"
DEMO_AGENTS = ("reference", "variant")
DEMO_COMPARE = "agent:reference:variant"
MAX_TASKS = 6


def task_variant(task_id: str) -> str | None:
    """The variant the demo's `variant` agent writes for ``task_id``: its reference's first (by name)."""
    from clinbench.concepts.variants import list_variants
    from clinbench.derive.catalogue import get_task

    reference = get_task(task_id).reference
    labels = sorted(v.label for v in list_variants() if v.reference == reference)
    return labels[0] if labels else None


def demo_tasks(max_tasks: int = MAX_TASKS) -> dict[str, str]:
    """Task id -> variant label, for the standard MIMIC-IV tasks whose reference has a variant."""
    from clinbench.derive.catalogue import load_catalogue

    chosen = {}
    for task_id, spec in load_catalogue().items():
        if spec.database == "mimic-iv" and spec.mode == "standard":
            label = task_variant(task_id)
            if label:
                chosen[task_id] = label
    return dict(list(chosen.items())[:max_tasks])


def variant_notes(tasks: dict[str, str], db_path: str | Path | None = None) -> tuple[list[str], list[list[str]]]:
    """A table for the report: each task, the variant its `variant` run writes and what that variant is;
    with ``db_path``, also how many reference rows it moves there (a convention that moves none says so,
    so its zero delta is not read as "the convention does not matter")."""
    from clinbench.concepts.variants import list_variants, variant_diff

    from clinbench.derive.catalogue import get_task

    by_key = {(v.reference, v.label): v for v in list_variants()}
    rows = []
    for task_id, label in tasks.items():
        v = by_key.get((get_task(task_id).reference, label))
        row = [task_id, label, v.definition if v is not None else ""]
        if db_path is not None:
            row.append(_rows_moved(variant_diff(db_path, v.name, examples=0)) if v is not None else "")
        rows.append(row)
    header = ["task", "variant the variant agent writes", "its definition"]
    return (header + ["rows it moves on this database"] if db_path is not None else header), rows


def _rows_moved(diff) -> str:
    moved = diff.only_default + diff.only_variant + diff.changed
    if not moved:
        return "none: this convention changes nothing on this database"
    return f"{moved:,} of {diff.default_rows:,}"


def execute_demo_run(spec: RunSpec, config: CampaignConfig) -> RunResult:
    """``execute_run`` with the task's own variant for the `variant` agent (a campaign sets one)."""
    if spec.agent == "variant":
        config = replace(config, options=replace(config.options, variant=task_variant(spec.task)))
    return execute_run(spec, config)


def run_demo_campaign(db_path: str | Path, out_dir: str | Path, *, tasks: list[str] | None = None,
                      jobs: int = 2, reporter: Reporter | None = None) -> CampaignSummary:
    """Run `reference` and `variant` on ``tasks`` (default: ``demo_tasks()``) into ``out_dir`` (resumable)."""
    tasks = list(demo_tasks()) if tasks is None else list(tasks)
    specs = expand(tasks, [DEMO_CONDITION], ["native"], list(DEMO_AGENTS), [], 1)
    config = CampaignConfig(db=str(Path(db_path).resolve()), out=str(Path(out_dir).resolve()))
    return run_campaign(specs, config, jobs=jobs, reporter=reporter, runner=execute_demo_run)
