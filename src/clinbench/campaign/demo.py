"""The small campaign `clinbench demo` runs: the reference and empty built-ins on a few tasks.

They bracket every real agent (reward 1.0 and 0.0) and exercise the whole path a real
campaign takes (workspaces, scoring, evidence, store) without a model or network.
"""

from __future__ import annotations

from pathlib import Path

from clinbench.campaign.campaign import Reporter, CampaignSummary, run_campaign
from clinbench.campaign.execute import CampaignConfig
from clinbench.campaign.matrix import expand

DEMO_TASKS = ("mimic-sofa-24h", "mimic-kdigo-48h", "mimic-meld-24h", "mimic-oasis-24h")
DEMO_CONDITIONS = ("no-skill", "with-skill")
DEMO_AGENTS = ("reference", "empty")


def run_demo_campaign(db_path: str | Path, out_dir: str | Path, *, tasks: tuple[str, ...] = DEMO_TASKS,
                      jobs: int = 2, reporter: Reporter | None = None) -> CampaignSummary:
    """Run reference + empty on ``tasks`` × no-skill/with-skill, one trial, into ``out_dir`` (resumable)."""
    specs = expand(list(tasks), list(DEMO_CONDITIONS), ["native"], list(DEMO_AGENTS), [], 1)
    config = CampaignConfig(db=str(Path(db_path).resolve()), out=str(Path(out_dir).resolve()))
    return run_campaign(specs, config, jobs=jobs, reporter=reporter)
