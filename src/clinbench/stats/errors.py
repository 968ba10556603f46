"""The error statistics code raises: bad input to an analysis, said in one actionable line."""

from clinbench.errors import ClinbenchError


class StatsError(ClinbenchError):
    """An analysis cannot be computed from the input given (empty, unpaired, unknown task …)."""
