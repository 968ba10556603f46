"""Task → family for the statistics, from a mapping the caller passes (the task catalogue's,
``clinbench.derive.catalogue.task_families``): statistics import nothing of derive."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from clinbench.stats.errors import StatsError


def families_of(tasks: Iterable[str], families: Mapping[str, str] | None, benchmark: str) -> dict[str, str]:
    """The family of every derive task given; ``{}`` (no family figures) for dx runs or when no
    mapping is passed; a task the mapping lacks is an error naming it."""
    if families is None or benchmark != "derive":
        return {}
    wanted = sorted(set(tasks))
    unknown = [t for t in wanted if t not in families]
    if unknown:
        shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise StatsError(
            f"task ids not in the task catalogue: {shown}; families come from `clinbench tasks list`, "
            "so rename the runs' tasks to catalogue ids"
        )
    return {t: families[t] for t in wanted}
