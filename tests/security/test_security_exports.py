"""Exported formats (issue 28, items 15 and 16): what the Harbor verifier and the Inspect scorer read."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import tomllib

import pytest

from clinbench.derive.reference import export_reference

from campaign.campaign_fixtures import build_tiny_db
from hostile_campaign import TASK


@pytest.fixture
def inspect_run(tmp_path, monkeypatch):
    """Run the Inspect task on the tiny database with Inspect's mock model issuing ``command``."""
    pytest.importorskip("inspect_ai", reason="Inspect AI is not installed: pip install 'clinbench[inspect]'")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, get_model
    import inspect_ai.model._model as model_module

    from clinbench.inspect_tasks import derive

    # the mock model counts tokens with tiktoken, which downloads its encoding: count characters
    monkeypatch.setattr(model_module, "count_text_tokens", lambda text: max(1, len(text) // 4))
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    db = build_tiny_db(tmp_path / "source.duckdb")
    ref = tmp_path / "ref.csv"
    export_reference(TASK, db, ref)

    def run(command: str, **task_args):
        outputs = [ModelOutput.for_tool_call("mockllm/model", "bash", {"command": command.format(ref=ref)}),
                   ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "done"})]
        [log] = inspect_eval(derive(task=TASK, db=str(db), **task_args), display="none", log_dir=str(tmp_path / "logs"),
                             model=get_model("mockllm/model", custom_outputs=outputs))
        return log

    return run


@pytest.mark.slow
def test_an_inspect_output_over_100_mib_fails_only_its_sample(inspect_run):
    # before: Inspect's read_file refused the 150 MiB file and the whole eval ended in error
    log = inspect_run("cp {ref} output.csv && truncate -s 150M output.csv", output_cap="120m")
    assert log.status == "success", log.error
    [sample] = log.samples
    score = sample.scores["clinbench_scorer"]
    assert score.value == 0.0 and "157286400 bytes, over the 125829120-byte output cap" in score.explanation


@pytest.mark.slow
def test_an_inspect_output_is_read_in_pieces_byte_for_byte(inspect_run, monkeypatch):
    # the path a 0.5 GB answer takes (pieces under Inspect's exec limit), shown with 64-byte pieces
    from clinbench import inspect_tasks

    monkeypatch.setattr(inspect_tasks, "CHUNK_BYTES", 64)
    log = inspect_run("cp {ref} output.csv")
    assert log.status == "success", log.error
    assert log.samples[0].scores["clinbench_scorer"].value == 1.0


# item 15: Harbor
@pytest.fixture
def harbor_task(tmp_path, monkeypatch):
    from clinbench.derive.harbor import export_harbor_task

    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    db = build_tiny_db(tmp_path / "source.duckdb")
    return export_harbor_task(TASK, db, tmp_path / "harbor")


def test_the_harbor_reference_is_scored_in_a_container_of_its_own(harbor_task):
    # before: the verifier shared the agent's container, and a process the agent left running read
    # tests/reference.duckdb as soon as Harbor uploaded it (reward 1.0)
    toml = tomllib.loads((harbor_task / "task.toml").read_text())
    assert toml["verifier"]["environment_mode"] == "separate" and toml["artifacts"] == ["/app/output.csv"]
    dockerfile = (harbor_task / "tests" / "Dockerfile").read_text()
    assert "COPY . /tests" in dockerfile and "reference" not in (harbor_task / "environment" / "Dockerfile").read_text()
    agent_side = b"".join(p.read_bytes() for p in (harbor_task / "environment").rglob("*") if p.is_file())
    assert b"target_sofa_24h" not in agent_side


def test_the_harbor_verifier_refuses_a_huge_sparse_output_at_once(harbor_task, tmp_path):
    # before: a 20 GiB sparse output.csv was read and scored: still running after 120 s, no reward
    app, tests, logs = tmp_path / "app", tmp_path / "uploaded-tests", tmp_path / "logs"
    app.mkdir()
    shutil.copytree(harbor_task / "tests", tests)
    with open(app / "output.csv", "wb") as fh:
        fh.truncate(20 << 30)
    env = {**os.environ, "APP_DIR": str(app), "TESTS_DIR": str(tests), "LOGS_DIR": str(logs), "PYTHON": sys.executable}
    env.pop("PYTHONPATH", None)
    start = time.monotonic()
    proc = subprocess.run(["bash", str(tests / "test.sh")], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - start < 30
    reward = json.loads((logs / "reward.json").read_text())
    assert reward["reward"] == 0.0 and f"{20 << 30} bytes, over the {2 << 30}-byte output cap" in reward["reason"]
