"""`clinbench run`: a campaign of derive runs (tasks × conditions × schema variants × agents × models × trials)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from clinbench.agents.attribution import ENDPOINT_DOWN_SECONDS
from clinbench.campaign.matrix import (MatrixError, expand, resolve_conditions, resolve_tasks,
                                      scorable_tasks, split_list, supported_pairs)
from clinbench.cli._campaign import finished, interrupted
from clinbench.cli._console import make_console
from clinbench.cli._interrupt import says_on_interrupt
from clinbench.concepts.profiles import PROFILE_HELP
from clinbench.records import STORE_FILE

if TYPE_CHECKING:  # the agents and the campaign runner import DuckDB: loaded when a campaign runs
    from clinbench.agents.factory import AgentOptions


def run_command(
    db: Path = typer.Option(..., "--db", help="MIMIC-IV or eICU database; the task references it lacks are built into it first."),
    out: Path = typer.Option(..., "--out", help="Campaign folder: results.duckdb and runs/<run_id>/ evidence."),
    tasks: list[str] = typer.Option(["all"], "--task", help="Task ids (comma-separated or repeated) or 'all'."),
    conditions: list[str] = typer.Option(["no-skill"], "--condition", help="Conditions (comma-separated or repeated), e.g. no-skill,with-skill, or 'all' (every control)."),
    schema: list[str] = typer.Option(["native"], "--schema-variant", help="Schema variants (comma-separated or repeated): native, obfuscated, restructured."),
    agent: list[str] = typer.Option(..., "--agent", help="Agents (comma-separated or repeated): codex, claude, gemini, command, llm, reference, variant, empty, replay."),
    model: list[str] = typer.Option([], "--model", help="Models (comma-separated or repeated; each agent runs with each model)."),
    trials: int = typer.Option(1, "--trials", min=1, help="Runs of each task × condition × schema × agent × model."),
    jobs: int = typer.Option(1, "--jobs", min=1, help="Runs in parallel."),
    timeout: float = typer.Option(30.0, "--timeout", min=0.01, help="Per-run timeout in minutes."),
    executor: str = typer.Option("local", "--executor", help="local or ray."),
    ray_address: str | None = typer.Option(None, "--ray-address", help="Address of a running Ray cluster."),
    base_url: str | None = typer.Option(None, "--base-url", help="Model endpoint (OpenAI-compatible or Anthropic)."),
    api_key_env: str | None = typer.Option(None, "--api-key-env", help="Environment variable holding the API key."),
    provider: str = typer.Option("openai", "--provider", help="For --agent llm: openai (any compatible server) or anthropic."),
    reasoning_effort: str | None = typer.Option(None, "--reasoning-effort", help="codex/llm reasoning effort."),
    allowed_tools: str | None = typer.Option(None, "--allowed-tools", help="claude: tools to allow, e.g. Bash,Read,Write."),
    agent_command: str | None = typer.Option(None, "--agent-command", help="command agent template ({workspace}, {prompt_file}, {model}, {task}, {trial})."),
    max_steps: int = typer.Option(40, "--max-steps", help="llm agent step limit."),
    max_tokens: int = typer.Option(4096, "--max-tokens", min=1, help="Output tokens asked for per model request (llm; codex/claude/gemini with --endpoint-api chat)."),
    token_budget: int | None = typer.Option(None, "--token-budget", min=1, help="Input + output tokens per run; a run that uses them up stops as an error saying so."),
    text_tool_calls: bool = typer.Option(True, "--text-tool-calls/--no-text-tool-calls", help="llm agent: use tool calls a model wrote as text (fenced or bare JSON, hermes <tool_call>, functions.NAME) when the server did not parse them; each is marked parsed_from_text in the transcript."),
    endpoint_api: str = typer.Option("native", "--endpoint-api", help="codex/claude/gemini: chat when --base-url speaks only chat completions (llama-server, vLLM, Ollama); native otherwise."),
    prices: Path | None = typer.Option(None, "--prices", help="Price table (TOML, USD per million tokens) for the runs' cost; default: the shipped agents/prices.toml."),
    replay_from: Path | None = typer.Option(None, "--replay-from", help="replay agent: an earlier campaign folder."),
    replay_agent: str | None = typer.Option(None, "--replay-agent", help="replay agent: which of that campaign's agents to replay (agent, or agent:model); needed when it ran several."),
    variant: str | None = typer.Option(None, "--variant", help="variant agent: which variant of the reference."),
    profile: str | None = typer.Option(None, "--profile", help=PROFILE_HELP),
    scored_columns: str = typer.Option("value", "--scored-columns", help="Columns that count towards the reward: value (the task's value columns, as the paper) or required (also every required non-id column, as M4Bench >= 0.5.3)."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Also redo runs recorded as harness-error (left out of every statistic)."),
    retry_agent_failed: bool = typer.Option(False, "--retry-agent-failed", help="Also redo runs recorded as agent-failed (reward 0), after fixing a setup fault of yours (a wrong key, a broken model server): this re-rolls only the failed attempts, which favours the agent; a new --out redoes the whole sample."),
    sandbox: str | None = typer.Option(None, "--sandbox", help="Force a sandbox for external agents: bwrap or docker (default: the strongest available)."),
    allow_mixed: bool = typer.Option(False, "--allow-mixed", help="Add runs to a campaign whose runs of an agent were made by another version of it."),
    unsafe_no_isolation: bool = typer.Option(False, "--unsafe-no-isolation", help="Run external agents without a sandbox (runs marked not isolated and not publishable)."),
    limit: list[str] = typer.Option([], "--limit", help="Sandbox limit KEY=VALUE (repeatable): memory, processes, file-size, disk, tmp, output, log, inodes, connections; e.g. memory=4g."),
    agent_mount: list[Path] = typer.Option([], "--agent-mount", help="A host file or folder an external agent may read (read-only; repeatable)."),
    endpoint_down_seconds: float = typer.Option(ENDPOINT_DOWN_SECONDS, "--endpoint-down", min=1.0, help="Seconds: codex/claude/gemini/command: stop a run (as a harness error, redone by --retry-failed) once its model endpoint has answered no request for this many seconds and fails the harness's own check, instead of waiting out --timeout."),
) -> None:
    """Run a campaign; rerunning the same command resumes it."""
    from clinbench.agents.factory import AgentOptions
    from clinbench.agents.limits import parse_limits
    from clinbench.campaign.campaign import run_campaign
    from clinbench.campaign.execute import CampaignConfig
    from clinbench.campaign.progress import RichReporter

    from clinbench.campaign.campaign import CampaignInterrupted
    from clinbench.campaign.preflight import check_endpoints
    from clinbench.errors import TaskError

    if scored_columns not in ("value", "required"):
        raise typer.BadParameter(f"must be value or required, not {scored_columns!r}", param_hint="--scored-columns")
    task_ids = resolve_tasks(split_list(tasks), db)
    conditions = resolve_conditions(split_list(conditions))
    _check_writable(out)  # before anything is built on demand into --db
    console = make_console(stderr=True)
    from clinbench.cli._references import prepare_matrix

    profile = prepare_matrix(db, task_ids, conditions, split_list(schema), profile=profile,
                             variants=[variant] if "variant" in split_list(agent) else [], out=console)
    from clinbench.derive.scorable import describe

    task_ids, unscorable = scorable_tasks(task_ids, db)
    pairs, unsupported = supported_pairs(task_ids, conditions)
    if unsupported and not pairs:
        raise TaskError(f"no task offers the condition asked for: {', '.join(unsupported)} cannot run "
                        "(see `clinbench tasks list`, column op. spec); pick another condition or task")
    _verify_references(task_ids, db, profile)
    specs = [s for s in expand(task_ids, conditions, split_list(schema), split_list(agent),
                               split_list(model), trials) if (s.task, s.condition) in pairs]
    options = AgentOptions(base_url=base_url, api_key_env=api_key_env, provider=provider,
                           reasoning_effort=reasoning_effort, allowed_tools=allowed_tools,
                           agent_command=agent_command, max_steps=max_steps, max_tokens=max_tokens,
                           token_budget=token_budget, text_tool_calls=text_tool_calls, endpoint_api=endpoint_api,
                           prices=str(prices.resolve()) if prices else None,
                           replay_from=str(replay_from) if replay_from else None, replay_agent=replay_agent, variant=variant,
                           unsafe_no_isolation=unsafe_no_isolation, sandbox=sandbox, sandbox_limits=parse_limits(limit),
                           mounts=tuple(str(m.absolute()) for m in agent_mount), endpoint_down_seconds=endpoint_down_seconds)
    _check_agents(split_list(agent), split_list(model), options)
    check_endpoints(split_list(agent), split_list(model), options)
    config = CampaignConfig(db=str(db.resolve()), out=str(out.resolve()), options=options, timeout_seconds=timeout * 60,
                            scored_columns=scored_columns)
    from clinbench.report.provenance import record_command

    if unscorable:
        console.print(f"skipped {len(unscorable)} task(s) this database cannot score (every answer would score 0): "
                      f"{describe(unscorable)}", highlight=False, soft_wrap=True)
    if unsupported:
        console.print(f"skipped {len(unsupported)} unsupported task × condition pair(s): {', '.join(unsupported)}",
                      highlight=False, soft_wrap=True)
    try:  # campaign.json (the command, for the report's provenance) once the campaign is bound to its data
        summary = run_campaign(specs, config, jobs=jobs, executor=executor, ray_address=ray_address,
                               reporter=RichReporter(console), retry_failed=retry_failed,
                               retry_agent_failed=retry_agent_failed, allow_mixed=allow_mixed,
                               started=lambda: record_command(out))
    except CampaignInterrupted as exc:
        interrupted(exc)
    finished(summary, out)


def _check_writable(out: Path) -> None:
    """Refuse an --out that cannot be written (read-only, or not the user's) before any work, leaving no trace."""
    import errno
    import os

    from clinbench.write_errors import WriteError, explain

    place = out
    while not place.exists() and place.parent != place:
        place = place.parent
    if place.is_dir() and not os.access(place, os.W_OK | os.X_OK):
        raise WriteError(explain(OSError(errno.EACCES, "not writable"), out))


def _verify_references(task_ids: list[str], db: Path, profile: str | None = None) -> None:
    """`clinbench tasks verify` for the campaign's tasks: a stale or unrecorded reference, or one of
    another reference profile, stops the campaign."""
    from clinbench.concepts.manifest import verify
    from clinbench.concepts.profiles import DEFAULT_PROFILE
    from clinbench.derive.catalogue import get_task
    from clinbench.errors import TaskError

    problems = verify(db, sorted({get_task(t).target_table for t in task_ids}), profile)
    if problems:
        option = f" --profile {profile}" if profile != DEFAULT_PROFILE else ""
        more = f" (and {len(problems) - 1} more: `clinbench tasks verify --db {db}{option}`)" if len(problems) > 1 else ""
        raise TaskError(f"reference {problems[0]}{more}; nothing was run")


def _check_agents(agents: list[str], models: list[str], options: AgentOptions) -> None:
    """Fail before any run when an agent cannot start at all (no sandbox and no unsafe flag, no model, no key)."""
    import os

    from clinbench.agents.factory import make_agent
    from clinbench.errors import AgentError

    if "llm" in agents and not models:
        raise AgentError("the llm agent needs a model: pass --model NAME (and --base-url for a local server)")
    if options.api_key_env and not os.environ.get(options.api_key_env):
        raise AgentError(f"--api-key-env {options.api_key_env}: that environment variable is not set")
    from clinbench.agents.prices import load_prices
    from clinbench.agents.toolbox import preflight

    load_prices(options.prices)  # a broken price table fails now, not in every run
    checked = set()
    for name in agents:
        agent = make_agent(name, options)
        sandbox = getattr(agent, "sandbox", None)
        if sandbox is not None and sandbox.kind not in checked:  # the toolbox works in this sandbox
            preflight(sandbox)
            checked.add(sandbox.kind)


def register(app: typer.Typer) -> None:
    # Ctrl-C before the first run (checking references and endpoints, binding the data, starting
    # workers); an interrupt once runs have started is CampaignInterrupted, said by run_command
    app.command("run")(says_on_interrupt("before any run started: no run was recorded; rerun the same "
                                         "command to start the campaign")(run_command))


__all__ = ["register", "run_command", "MatrixError"]
