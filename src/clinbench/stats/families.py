"""Task → family, from the derivation task catalogue: the one place this mapping comes from."""

from __future__ import annotations

from collections.abc import Iterable

from clinbench.stats.errors import StatsError


def task_families(tasks: Iterable[str]) -> dict[str, str]:
    """The catalogue family of every task id given; unknown ids are an error naming them."""
    from clinbench.derive.catalogue import load_catalogue

    catalogue = load_catalogue()
    wanted = sorted(set(tasks))
    unknown = [t for t in wanted if t not in catalogue]
    if unknown:
        shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise StatsError(
            f"task ids not in the task catalogue: {shown}; families come from `clinbench tasks list`, "
            "so rename the runs' tasks to catalogue ids"
        )
    return {t: catalogue[t].family for t in wanted}
