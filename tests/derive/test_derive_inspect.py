"""The Inspect AI task, driven by Inspect's mock model: clinbench's scorer is the one that scores."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_ai", reason="Inspect AI is not installed: pip install 'clinbench[inspect]'")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.model import ModelOutput, get_model  # noqa: E402

from clinbench.derive.reference import export_reference  # noqa: E402
from clinbench.inspect_tasks import derive  # noqa: E402

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)


@pytest.fixture(autouse=True)
def offline_token_estimate(monkeypatch):
    """Inspect's mock model counts tokens with tiktoken, which downloads its encoding on first
    use; offline, count by characters instead (the count only feeds Inspect's usage figures)."""
    import inspect_ai.model._model as model_module

    monkeypatch.setattr(model_module, "count_text_tokens", lambda text: max(1, len(text) // 4))


def _run(source_db, tmp_path, outputs):
    model = get_model("mockllm/model", custom_outputs=outputs)
    [log] = inspect_eval(derive(task="mimic-sofa-24h", db=str(source_db)), model=model,
                         log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    [sample] = log.samples
    return sample.scores["clinbench_scorer"]


def test_an_agent_that_writes_the_reference_scores_one(source_db, tmp_path):
    ref = tmp_path / "ref.csv"
    export_reference("mimic-sofa-24h", source_db, ref)
    outputs = [
        ModelOutput.for_tool_call("mockllm/model", "bash", {"command": f"ls database.duckdb && cp {ref} output.csv"}),
        ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "wrote output.csv"}),
    ]
    score = _run(source_db, tmp_path, outputs)
    assert score.value == 1.0 and score.metadata["strict"] is True


def test_no_output_and_a_symlinked_output_score_zero(source_db, tmp_path):
    give_up = [ModelOutput.from_content("mockllm/model", "I give up"),
               ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "nothing"})]
    assert _run(source_db, tmp_path / "a", give_up).value == 0.0
    ref = tmp_path / "ref.csv"
    export_reference("mimic-sofa-24h", source_db, ref)
    outputs = [ModelOutput.for_tool_call("mockllm/model", "bash", {"command": f"ln -s {ref} output.csv"}),
               ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "done"})]
    score = _run(source_db, tmp_path / "b", outputs)
    assert score.value == 0.0 and "symlink" in score.explanation


def test_scoring_out_of_memory_is_a_sample_error_never_a_score_of_zero(source_db, tmp_path, monkeypatch):
    """The scorer's DuckDB out of memory (given 1 MB and no spill directory: a real error) is this machine's
    failure: the sample errors (``inspect eval-retry`` redoes it) rather than scoring the right answer 0."""
    from tests.starved_scorer import starve_scorer

    starve_scorer(monkeypatch)
    ref = tmp_path / "ref.csv"
    export_reference("mimic-sofa-24h", source_db, ref)
    outputs = [ModelOutput.for_tool_call("mockllm/model", "bash", {"command": f"cp {ref} output.csv"}),
               ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "wrote output.csv"})]
    model = get_model("mockllm/model", custom_outputs=outputs)
    [log] = inspect_eval(derive(task="mimic-sofa-24h", db=str(source_db)), model=model, log_dir=str(tmp_path / "logs"),
                         display="none")
    assert log.status == "error" and "DuckDB ran out of memory" in log.error.message
    assert not [s for s in (log.samples or []) if s.scores]


def test_missing_database_is_a_one_line_error():
    from clinbench.errors import DataError

    with pytest.raises(DataError, match="pass -T db=PATH"):
        derive(task="mimic-sofa-24h")


def test_inspect_finds_the_task_by_its_registered_name():
    """`inspect eval clinbench/derive` resolves through the package's inspect_ai entry point
    (checked in a fresh interpreter that sees clinbench only as installed)."""
    import os
    import subprocess
    import sys

    code = ("from inspect_ai._util.entrypoints import ensure_entry_points; ensure_entry_points('clinbench'); "
            "from inspect_ai._util.registry import registry_lookup; "
            "print(registry_lookup('task', 'clinbench/derive') is not None)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, cwd="/")
    assert proc.stdout.strip() == "True", proc.stderr
