"""What a run page shows, read from the run's evidence folder and its store row.

* a derivation run: the instruction (prompt.md), condition, the skill files the agent was
  given, limits, timings, tokens and cost, the transcript step by step, the score explained
  (``report.explain.explain_run``, the code `clinbench explain` prints), the audit verdict and
  skill use, and each evidence file's hash with whether it still verifies;
* a diagnosis encounter: each turn (question or test, the gatekeeper's reply and where it came
  from, the cost so far, the differential when the agent gave one), the final diagnosis, the
  judge's score and reason, the total cost.

Everything here is plain data: the templates escape every string of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clinbench import untrusted
from clinbench.campaign import evidence
from clinbench.serve.sources import inside

PREVIEW_CHARS = 1500  # a longer text shows this much, the rest behind "show all"
MAX_STEPS = 400  # a longer transcript shows this many steps unless the page asks for all
SOURCE_NAMES = {"REAL": "record", "SYNTHETIC": "synthesized", "REFUSED": "refused"}


@dataclass
class Text:
    """A text cut for display: ``head`` always shown, ``rest`` behind "show all"."""

    head: str
    rest: str = ""

    @classmethod
    def of(cls, text: str, limit: int = PREVIEW_CHARS) -> Text:
        return cls(text) if len(text) <= limit else cls(text[:limit], text[limit:])


@dataclass
class Step:
    role: str
    texts: list[tuple[str, Text]] = field(default_factory=list)  # (label, text)
    calls: list[tuple[str, Text]] = field(default_factory=list)  # (tool name, its argument: command, SQL, …)
    meta: str = ""


def read_json(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        data = untrusted.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def read_text(path: Path | None, limit: int = 2_000_000) -> str | None:
    if path is None or not path.is_file():
        return None
    with path.open(encoding="utf-8", errors="replace") as fh:
        return fh.read(limit)


def _events(path: Path | None, limit: int | None) -> tuple[list[dict[str, Any]], int]:
    """The transcript's events (a line that is not a JSON object becomes ``{"text": line}``) and how many there are."""
    out: list[dict[str, Any]] = []
    total = 0
    if path is None or not path.is_file():
        return out, 0
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            total += 1
            if limit is not None and len(out) >= limit:
                continue
            try:
                event = untrusted.loads(line)
            except ValueError:
                event = None
            out.append(event if isinstance(event, dict) else {"type": "text", "text": line})
    return out, total


def _text(value: Any) -> Text:
    from clinbench.report.transcript import _as_text

    return Text.of(_as_text(value))


def _cli_step(event: dict[str, Any]) -> Step | None:
    """A step of a coding-agent CLI's own JSON events (Codex, Claude Code, Gemini CLI, the command agent),
    or None for any other event (shown generically)."""
    kind = event.get("type")
    if kind == "item.completed" and isinstance(event.get("item"), dict):  # Codex
        item = event["item"]
        if item.get("type") == "command_execution":
            step = Step("command", calls=[("shell", _text(item.get("command", "")))])
            step.texts.append((f"output (exit {item.get('exit_code')})", _text(item.get("aggregated_output") or "")))
            return step
        if item.get("type") in ("agent_message", "reasoning"):
            return Step(str(item["type"]), texts=[("text", _text(item.get("text") or ""))])
        return None
    if kind == "item.started" and isinstance(event.get("item"), dict) \
            and event["item"].get("type") == "command_execution":
        return Step("command started", calls=[("shell", _text(event["item"].get("command", "")))])
    message = event.get("message")
    if kind in ("assistant", "user") and isinstance(message, dict) and isinstance(message.get("content"), list):
        step = Step(kind)  # Claude Code: text, tool_use and tool_result blocks
        for block in message["content"]:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                step.texts.append(("text", _text(block.get("text") or "")))
            elif block.get("type") == "tool_use":
                args = block.get("input")
                if isinstance(args, dict) and len(args) == 1:
                    args = next(iter(args.values()))
                step.calls.append((str(block.get("name", "tool")), _text(args)))
            elif block.get("type") == "tool_result":
                step.texts.append(("tool result", _text(block.get("content") or "")))
        return step
    if kind == "tool_use" and "parameters" in event:  # Gemini CLI
        args = event.get("parameters")
        if isinstance(args, dict) and len(args) == 1:
            args = next(iter(args.values()))
        return Step("tool_use", calls=[(str(event.get("tool_name", "tool")), _text(args))])
    if kind == "tool_result" and "output" in event:
        return Step("tool_result", texts=[(f"output ({event.get('status', '')})", _text(event.get("output") or ""))])
    if kind == "stdout" and "line" in event:  # the command agent
        return Step("stdout", texts=[("line", _text(event.get("line") or ""))])
    return None


def derive_steps(path: Path | None, *, limit: int | None = MAX_STEPS) -> tuple[list[Step], int]:
    """A derivation transcript as steps: who spoke, what it said, the tools it called with their input
    (clinbench's own agents, the coding-agent CLIs' JSON events, anything else as its fields)."""
    from clinbench.report.transcript import event_parts

    events, total = _events(path, limit)
    steps = []
    for event in events:
        known = _cli_step(event)
        if known is not None:
            steps.append(known)
            continue
        parts = event_parts(event)
        step = Step(parts.role, texts=[(key, Text.of(text)) for key, text in parts.texts],
                    calls=[(name, Text.of(args)) for name, args in parts.calls], meta=parts.meta[:2000])
        steps.append(step)
    return steps, total


@dataclass
class EvidenceFile:
    name: str
    sha256: str
    bytes: int | None
    ok: bool


def evidence_files(folder: Path) -> tuple[list[EvidenceFile], list[str], str | None]:
    """Each file the manifest seals, whether it verifies, the problems found, and why there is no check."""
    manifest = read_json(folder / evidence.MANIFEST)
    files = manifest.get("files")
    if not isinstance(files, dict):
        return [], [], "no manifest: the evidence cannot be checked"
    try:
        bad = evidence.verify_manifest(folder)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [], [], f"the manifest cannot be read ({exc})"
    listed = [EvidenceFile(str(n), str((e or {}).get("sha256", "")), (e or {}).get("bytes"), n not in bad)
              for n, e in sorted(files.items()) if isinstance(e, dict)]
    return listed, bad, None


def skill_files(folder: Path) -> list[tuple[str, str]]:
    """(name, text) of each skill file the agent was given (kept under ``skills/`` of its evidence)."""
    root = inside(folder, "skills")
    if root is None or not root.is_dir():
        return []
    out = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink() and inside(folder, str(path.relative_to(folder))):
            out.append((str(path.relative_to(root)), read_text(path, 200_000) or ""))
    return out


def skill_use_of(folder: Path) -> Any:
    from clinbench.campaign.audit import agent_authored_text
    from clinbench.campaign.skill_use import skill_use

    transcript = folder / "transcript.jsonl"
    try:
        return skill_use(folder, agent_authored_text(transcript) if transcript.is_file() else "")
    except (OSError, ValueError):
        return None


# -- a diagnosis encounter -------------------------------------------------------------

@dataclass
class Turn:
    turn: int
    kind: str  # question | test | visit | agent | diagnosis | format_error | limit | error | panel | vignette | …
    content: str = ""
    reply: str = ""
    source: str = ""  # record | synthesized | refused (as the gatekeeper marked the reply)
    cost: float = 0.0
    cost_so_far: float = 0.0
    differential: list[tuple[str, str]] = field(default_factory=list)  # (diagnosis, probability)
    priced_as: str = ""


def encounter_turns(path: Path | None) -> list[Turn]:
    """A dx transcript as turns, with the cost so far after each charged event."""
    events, _ = _events(path, None)
    total = 0.0
    out = []
    for e in events:
        kind = str(e.get("event") or e.get("type") or "event")
        cost = e.get("cost") if isinstance(e.get("cost"), (int, float)) and not isinstance(e.get("cost"), bool) else 0.0
        total += float(cost)
        diff = []
        for item in e.get("differential") or []:
            if isinstance(item, dict):
                p = item.get("probability")
                diff.append((str(item.get("diagnosis", "")), "" if p is None else str(p)))
        source = str(e.get("source") or "")
        out.append(Turn(
            turn=e.get("turn") if isinstance(e.get("turn"), int) else 0, kind=kind,
            content=str(e.get("content") if e.get("content") is not None else e.get("text") or ""),
            reply=str(e.get("reply") or ""), source=SOURCE_NAMES.get(source, source.lower()),
            cost=float(cost), cost_so_far=total, differential=diff, priced_as=str(e.get("priced_as") or "")))
    return out
