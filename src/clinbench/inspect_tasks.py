"""Inspect AI tasks: ``inspect eval clinbench/derive -T task=mimic-sofa-24h -T db=mimic.duckdb``.

Each sample is one derivation task: the prompt clinbench gives under the condition, the
masked workspace database (and skills) copied into the sample's sandbox, a ``bash`` tool, and
clinbench's scorer over the hidden reference in ``db`` (which never enters the sandbox).

Isolation is Inspect's: the default ``sandbox=local`` runs the agent's commands on this
machine with no isolation (like ``clinbench run --unsafe-no-isolation``: fine for trying an
agent, not for publishable numbers); ``-T sandbox=docker`` uses Inspect's Docker sandbox.
Registered through the ``inspect_ai`` entry point in pyproject.toml; needs
``pip install 'clinbench[inspect]'``.
"""

from __future__ import annotations

import atexit
import base64
import shutil
import tempfile
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import TaskState, basic_agent
from inspect_ai.tool import bash
from inspect_ai.util import sandbox as sandbox_env

from clinbench.agents.limits import Limits
from clinbench.errors import DataError

DEFAULT_OUTPUT_BYTES = Limits().output_bytes  # as `clinbench run --limit output` (2g)

OUTPUT = "output.csv"


def _samples(task_ids: list[str], db: Path, condition: str, schema: str) -> list[Sample]:
    from clinbench.derive.workspace import prepare_workspace

    root = Path(tempfile.mkdtemp(prefix="clinbench-inspect-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    samples = []
    for task_id in task_ids:
        ws = prepare_workspace(task_id, condition, schema, db, root / task_id, output_path=OUTPUT)
        files = {str(p.relative_to(ws)): str(p) for p in ws.rglob("*") if p.is_file() and p.name != "prompt.md"}
        samples.append(Sample(id=task_id, input=(ws / "prompt.md").read_text(encoding="utf-8"), files=files,
                              metadata={"task_id": task_id, "condition": condition, "schema": schema}))
    return samples


CHUNK_BYTES = 6 << 20  # read through exec in pieces: base64 of one stays under Inspect's 10 MiB exec output limit


async def _copy_out(box, size: int, dest: Path) -> None:
    """Copy the sandbox's ``output.csv`` (``size`` bytes) to ``dest`` in pieces: ``read_file``
    refuses any file over 100 MiB, and an honest full-MIMIC answer is about 0.5 GB."""
    with dest.open("wb") as fh:
        for offset in range(0, size, CHUNK_BYTES):
            part = await box.exec(["sh", "-c", f"dd if={OUTPUT} bs={CHUNK_BYTES} skip={offset // CHUNK_BYTES} count=1 "
                                               "2>/dev/null | base64 -w0"])
            if not part.success:
                raise OSError(f"reading {OUTPUT} at byte {offset} failed: {part.stderr.strip()[:200]}")
            fh.write(base64.b64decode(part.stdout))


@scorer(metrics=[mean()])
def clinbench_scorer(db: str, output_cap: int = DEFAULT_OUTPUT_BYTES):
    """clinbench's scorer on the sandbox's ``output.csv``; a missing or non-regular file, one over
    ``output_cap`` bytes, or one that cannot be read scores 0 for that sample alone."""
    from clinbench.derive.score import score_output
    from clinbench.errors import ResourceError

    async def score(state: TaskState, target: Target) -> Score:
        task_id = state.metadata["task_id"]
        box = sandbox_env()
        check = await box.exec(["sh", "-c", f"test -f {OUTPUT} && test ! -L {OUTPUT} && wc -c < {OUTPUT}"])
        if not check.success:
            return Score(value=0.0, explanation=f"no regular {OUTPUT} was written (missing, symlink, FIFO or folder)")
        size = int(check.stdout.strip() or 0)
        if size > output_cap:
            return Score(value=0.0, explanation=f"{OUTPUT} refused: {size} bytes, over the {output_cap}-byte output cap "
                                                "(-T output_cap=...)")
        with tempfile.TemporaryDirectory(prefix="clinbench-inspect-score-") as tmp:
            path = Path(tmp) / OUTPUT
            try:
                await _copy_out(box, size, path)
                result = score_output(task_id, path, db)
            except ResourceError:  # this machine ran out of memory or spill disk: a sample error Inspect retries, never a 0
                raise
            except Exception as exc:  # this sample's output alone: never the whole eval
                return Score(value=0.0, explanation=f"{OUTPUT} could not be scored: {type(exc).__name__}: "
                                                    f"{' '.join(str(exc).split())[:300]}")
        return Score(value=result.reward, answer=f"strict={'pass' if result.strict else 'fail'}",
                     explanation=result.reason or f"key F1 {result.key_f1:.4f}",
                     metadata={"strict": result.strict, "columns": result.column_match_rates})

    return score


@task
def derive(task: str = "all", db: str = "", condition: str = "no-skill", schema: str = "native",
           sandbox: str = "local", message_limit: int = 60, output_cap: str = "2g") -> Task:
    """clinbench derivation tasks; ``task`` is a task id, a comma-separated list or 'all';
    ``output_cap``: the largest output.csv scored (a size like ``--limit output``)."""
    from clinbench.agents.limits import parse_limits

    from clinbench.campaign.matrix import split_list
    from clinbench.campaign.matrix import check_matrix, resolve_tasks

    if not db:
        raise DataError("pass -T db=PATH: the database with the task references built (clinbench concepts build)")
    path = Path(db)
    if not path.is_file():
        raise DataError(f"database {path} not found; pass -T db= the database the references were built in")
    task_ids = resolve_tasks(split_list(task), path)
    check_matrix(task_ids, [condition], [schema], path)
    return Task(
        dataset=_samples(task_ids, path, condition, schema),
        solver=basic_agent(tools=[bash(timeout=600)], message_limit=message_limit),
        scorer=clinbench_scorer(str(path.resolve()), parse_limits([f"output={output_cap}"]).output_bytes),
        sandbox=sandbox,
    )
