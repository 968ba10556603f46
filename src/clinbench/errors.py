"""Typed errors. Library code raises these with a message a user can act on; only the CLI prints."""


class ClinbenchError(Exception):
    """Base class: the message is one line that says what went wrong and what to do."""


class DataError(ClinbenchError):
    """Input data is missing, malformed or fails verification."""


class ConceptError(ClinbenchError):
    """A concept cannot be built or found."""


class TaskError(ClinbenchError):
    """A task definition or task file is invalid."""


class AgentError(ClinbenchError):
    """An agent cannot be started or failed outside the task itself."""


class EndpointError(AgentError):
    """The model endpoint is unreachable or refuses the model or key: a harness failure, not the agent's."""


class SandboxError(AgentError):
    """No isolation is available, or the sandbox refused to start."""


class ResourceError(ClinbenchError):
    """This machine ran out of memory for the work, or of disk for DuckDB's spill files: not the input's, the
    SQL's or the agent's doing (a run whose scoring raises it is a harness error, never a score of 0)."""
