"""Built-in agents that validate the benchmark itself.

- ``reference`` writes the task's reference output: it must score reward 1.0 and pass strict.
- ``variant`` writes a reference-validity variant's output (a clinically defensible
  alternative definition): it must lose exactly on the columns its definition changes.

They read the reference database directly (never the workspace), so they exercise the
workspace/prompt/scoring path without an LLM.
"""

from __future__ import annotations

from pathlib import Path

from clinbench.derive.reference import export_reference
from clinbench.errors import AgentError

BUILTINS = ("reference", "variant")


def run_builtin(name: str, workspace_dir: str | Path, task_id: str, reference_db: str | Path,
                variant: str | None = None) -> Path:
    """Run built-in agent ``name``; return the path of the ``output.csv`` it wrote."""
    if name not in BUILTINS:
        raise AgentError(f"unknown built-in agent {name!r}; use one of {', '.join(BUILTINS)}")
    if name == "variant" and not variant:
        raise AgentError("the variant agent needs a variant name (e.g. --variant no-lookback)")
    out = Path(workspace_dir) / "output.csv"
    export_reference(task_id, reference_db, out, variant=variant if name == "variant" else None)
    return out
