"""How many times each statistic resamples, in one place: `clinbench stats`, `report` and `dx stats`
give the same interval of the same runs (a dx agent's accuracy CI is one figure whichever prints it).

Plain numbers, importable by the command line without numpy.
"""

BOOTSTRAP_DRAWS = 20_000  # every percentile bootstrap of means over tasks, families or cases (--draws)
TASK_DRAWS = 5_000  # one task's interval over its runs or cells (the forest plot's rows)
SIGN_FLIP_DRAWS = 200_000  # `stats`' two-sided sign-flip test of task deltas (--permutation-draws)
PAPER_PERMUTATION_DRAWS = 10_000  # `dx stats --compare`: SDBench's one-sided paired permutation test, as published


def task_draws(draws: int) -> int:
    """The draws of one task's interval, in `stats --summary` and `--compare` alike: ``draws`` (--draws),
    at most ``TASK_DRAWS`` (a task's handful of runs or cells has few distinct resamples: more draws only
    cost time, 28 tasks at a time)."""
    return min(draws, TASK_DRAWS)
