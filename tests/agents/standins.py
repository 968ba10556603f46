"""Stand-in ``codex`` and ``claude`` executables, faithful to the real CLIs' flags and output
(docs/agents.md): they parse the same options, refuse what the real ones refuse,
talk to the model endpoint over HTTP (Responses API / Anthropic Messages, streamed),
run the shell tool calls, and print the same JSON event shapes.

Each also writes what it saw (argv, env, cwd, skills found) to ``.standin/<name>.json`` in
its working folder, so tests can check the command line and the skill placement.
They are standard-library python3 scripts, so they run inside the sandbox too.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

COMMON = r'''
import json, os, subprocess, sys, urllib.request, uuid

def sse_events(resp):
    event, data = None, []
    for raw in resp:
        line = raw.decode().rstrip("\n").rstrip("\r")
        if not line:
            if data:
                yield event, "\n".join(data)
            event, data = None, []
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
    if data:
        yield event, "\n".join(data)

def post(url, body, headers):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json", **headers}, method="POST")
    return urllib.request.urlopen(req, timeout=30)

def record(name, extra):
    os.makedirs(".standin", exist_ok=True)
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("LS_", "TERM"))}
    with open(os.path.join(".standin", name + ".json"), "w") as fh:
        json.dump({"argv": sys.argv, "env": keep, "cwd": os.getcwd(), **extra}, fh)

def skills_in(*roots):
    found = []
    for root in roots:
        if root and os.path.isdir(root):
            for name in sorted(os.listdir(root)):
                if os.path.isfile(os.path.join(root, name, "SKILL.md")):
                    found.append(os.path.join(root, name))
    return found

def shell(cmd):
    p = subprocess.run(["/bin/bash", "-lc", cmd], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr

def emit(obj):
    print(json.dumps(obj), flush=True)
'''

CODEX = r'''
def toml_value(text):
    text = text.strip()
    if text.startswith('"'):
        return json.loads(text)
    if text in ("true", "false"):
        return text == "true"
    return text

def main():
    args = sys.argv[1:]
    if args == ["--version"]:
        print("codex-cli 0.171.0"); return 0
    if not args or args[0] != "exec":
        print("error: this stand-in only implements `codex exec`", file=sys.stderr); return 2
    args = args[1:]
    flags, config, prompt = {}, {}, None
    with_value = {"--color", "-m", "--model", "-c", "--config", "--disable", "--enable", "-s", "--sandbox", "-C", "--cd", "-o", "--output-last-message", "--output-schema"}
    boolean = {"--json", "--skip-git-repo-check", "--ephemeral", "--dangerously-bypass-approvals-and-sandbox", "--ignore-user-config", "--full-auto"}
    i = 0
    while i < len(args):
        a = args[i]
        if a in with_value:
            if i + 1 >= len(args):
                print(f"error: a value is required for '{a}'", file=sys.stderr); return 2
            v = args[i + 1]
            if a in ("-c", "--config"):
                key, _, val = v.partition("=")
                config[key] = toml_value(val)
            else:
                flags.setdefault(a, []).append(v)
            i += 2
        elif a in boolean:
            flags[a] = True; i += 1
        elif a.startswith("-"):
            print(f"error: unexpected argument '{a}' found", file=sys.stderr); return 2
        else:
            if prompt is not None:
                print(f"error: unexpected argument '{a}' found", file=sys.stderr); return 2
            prompt = a; i += 1
    if prompt is None:
        print("Reading prompt from stdin...", file=sys.stderr); prompt = sys.stdin.read()
    if "-C" in flags:
        os.chdir(flags["-C"][-1])
    home = os.environ.get("CODEX_HOME")
    if not home or not os.path.isdir(home):
        print(f"Error: CODEX_HOME points to {home!r}, but that path does not exist", file=sys.stderr); return 1
    provider = config.get("model_provider", "openai")
    prefix = f"model_providers.{provider}."
    if config.get(prefix + "wire_api") == "chat":
        print('Error: `wire_api = "chat"` is no longer supported', file=sys.stderr); return 1
    base_url = config.get(prefix + "base_url", "https://api.openai.com/v1")
    key = os.environ.get(config.get(prefix + "env_key", "OPENAI_API_KEY"), "")
    model = (flags.get("-m") or flags.get("--model") or ["gpt-5.5"])[-1]
    skills = skills_in(".codex/skills", ".agents/skills", os.path.join(home, "skills"))
    record("codex", {"config": config, "flags": {k: v for k, v in flags.items()}, "prompt": prompt, "skills": skills, "base_url": base_url})
    if not flags.get("--json"):
        print("error: this stand-in only implements --json output", file=sys.stderr); return 2
    emit({"type": "thread.started", "thread_id": uuid.uuid4().hex})
    emit({"type": "turn.started"})
    developer = "Skill roots:\n" + "\n".join(skills)
    items = [{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": developer}]},
             {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}]
    tools = [{"type": "function", "name": "exec_command", "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}]
    usage = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0}
    n = 0
    for _ in range(50):
        body = {"model": model, "input": items, "tools": tools, "stream": True, "instructions": "You are Codex."}
        try:
            resp = post(base_url.rstrip("/") + "/responses", body, {"Authorization": f"Bearer {key}"})
        except Exception as exc:
            emit({"type": "turn.failed", "error": {"message": f"stream error: {exc}"}}); return 1
        final = None
        for event, data in sse_events(resp):
            if event == "response.completed":
                final = json.loads(data)["response"]
        for k in ("input_tokens", "output_tokens"):
            usage[k] += final.get("usage", {}).get(k, 0)
        calls = [o for o in final["output"] if o["type"] == "function_call"]
        if not calls:
            text = "".join(c.get("text", "") for o in final["output"] if o["type"] == "message" for c in o["content"])
            emit({"type": "item.completed", "item": {"id": f"item_{n}", "type": "agent_message", "text": text}})
            break
        for call in calls:
            cmd = json.loads(call["arguments"]).get("cmd", "")
            shown = "/bin/bash -lc " + json.dumps(cmd)
            emit({"type": "item.started", "item": {"id": f"item_{n}", "type": "command_execution", "command": shown, "aggregated_output": "", "exit_code": None, "status": "in_progress"}})
            code, out = shell(cmd)
            emit({"type": "item.completed", "item": {"id": f"item_{n}", "type": "command_execution", "command": shown, "aggregated_output": out, "exit_code": code, "status": "completed" if code == 0 else "failed"}})
            n += 1
            items += [{"type": "function_call", "call_id": call["call_id"], "name": call["name"], "arguments": call["arguments"]},
                      {"type": "function_call_output", "call_id": call["call_id"], "output": out}]
    emit({"type": "turn.completed", "usage": usage})
    return 0

sys.exit(main())
'''

CLAUDE = r'''
def main():
    args = sys.argv[1:]
    if args == ["--version"]:
        print("2.1.197 (Claude Code)"); return 0
    with_value = {"--output-format", "--model", "--allowedTools", "--allowed-tools", "--disallowedTools", "--settings", "--setting-sources", "--permission-mode", "--max-turns", "--append-system-prompt"}
    boolean = {"-p", "--print", "--verbose", "--no-session-persistence", "--dangerously-skip-permissions"}
    flags, prompt, i = {}, None, 0
    while i < len(args):
        a = args[i]
        if a in with_value:
            flags[a] = args[i + 1]; i += 2
        elif a in boolean:
            flags[a] = True; i += 1
        elif a.startswith("-"):
            print(f"error: unknown option '{a}'", file=sys.stderr); return 1
        else:
            prompt = a; i += 1
    if not (flags.get("-p") or flags.get("--print")):
        print("error: this stand-in only implements print mode (-p)", file=sys.stderr); return 1
    fmt = flags.get("--output-format", "text")
    if fmt == "stream-json" and not flags.get("--verbose"):
        print("Error: When using --print, --output-format=stream-json requires --verbose", file=sys.stderr); return 1
    if flags.get("--dangerously-skip-permissions") and os.geteuid() == 0 and os.environ.get("IS_SANDBOX") != "1":
        print("--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons", file=sys.stderr); return 1
    allowed = (flags.get("--allowedTools") or flags.get("--allowed-tools") or "").replace(",", " ").split()
    mode = "bypassPermissions" if flags.get("--dangerously-skip-permissions") else "default"
    base = os.environ.get("ANTHROPIC_BASE_URL", "https://api.anthropic.com").rstrip("/")
    key = os.environ.get("ANTHROPIC_API_KEY", "")
    model = flags.get("--model", "claude-sonnet-4-5")
    skills = skills_in(".claude/skills", os.path.join(os.environ.get("HOME", "/nonexistent"), ".claude", "skills"))
    record("claude", {"flags": flags, "prompt": prompt, "skills": skills, "base_url": base})
    session = str(uuid.uuid4())
    try:
        urllib.request.urlopen(urllib.request.Request(base + "/", method="HEAD"), timeout=10)
    except Exception:
        pass
    emit({"type": "system", "subtype": "init", "cwd": os.getcwd(), "session_id": session, "tools": ["Task", "Bash", "Read", "Write"],
          "model": model, "permissionMode": mode, "skills": [os.path.basename(s) for s in skills], "slash_commands": [os.path.basename(s) for s in skills]})
    messages = [{"role": "user", "content": prompt}]
    tools = [{"name": t, "input_schema": {"type": "object"}} for t in ("Task", "Bash", "Read", "Write")]
    usage = {"input_tokens": 0, "output_tokens": 0}
    turns, result_text = 0, ""
    for _ in range(50):
        turns += 1
        body = {"model": model, "max_tokens": 32000, "messages": messages, "tools": tools, "stream": True}
        try:
            resp = post(base + "/v1/messages?beta=true", body, {"x-api-key": key, "anthropic-version": "2023-06-01"})
        except Exception as exc:
            emit({"type": "result", "subtype": "error_during_execution", "is_error": True, "num_turns": turns, "result": str(exc), "session_id": session}); return 1
        blocks, msg = {}, None
        for event, data in sse_events(resp):
            d = json.loads(data)
            if event == "message_start":
                msg = d["message"]
            elif event == "content_block_start":
                blocks[d["index"]] = dict(d["content_block"], _json="")
            elif event == "content_block_delta":
                delta = d["delta"]
                if delta["type"] == "text_delta":
                    blocks[d["index"]]["text"] = blocks[d["index"]].get("text", "") + delta["text"]
                else:
                    blocks[d["index"]]["_json"] += delta["partial_json"]
            elif event == "message_delta":
                msg["usage"]["output_tokens"] = d["usage"]["output_tokens"]
        content = []
        for idx in sorted(blocks):
            b = blocks[idx]
            js = b.pop("_json")
            if b["type"] == "tool_use":
                b["input"] = json.loads(js or "{}")
            content.append(b)
        usage["input_tokens"] += msg["usage"]["input_tokens"]; usage["output_tokens"] += msg["usage"]["output_tokens"]
        emit({"type": "assistant", "message": {"role": "assistant", "model": model, "content": content, "usage": msg["usage"]}, "session_id": session})
        uses = [b for b in content if b["type"] == "tool_use"]
        if not uses:
            result_text = "".join(b.get("text", "") for b in content)
            break
        results = []
        for u in uses:
            if u["name"] != "Bash" or (mode == "default" and "Bash" not in allowed):
                results.append({"type": "tool_result", "tool_use_id": u["id"], "content": "permission denied", "is_error": True})
                continue
            code, out = shell(u["input"].get("command", ""))
            results.append({"type": "tool_result", "tool_use_id": u["id"], "content": out or "(Bash completed with no output)", "is_error": code != 0})
        emit({"type": "user", "message": {"role": "user", "content": results}, "session_id": session})
        messages += [{"role": "assistant", "content": content}, {"role": "user", "content": results}]
    cost = round(usage["input_tokens"] * 3e-6 + usage["output_tokens"] * 15e-6, 6)
    emit({"type": "result", "subtype": "success", "is_error": False, "num_turns": turns, "result": result_text, "stop_reason": "end_turn",
          "session_id": session, "total_cost_usd": cost, "usage": usage})
    return 0

sys.exit(main())
'''


def install_standins(bin_dir: Path) -> Path:
    """Write ``codex`` and ``claude`` stand-ins into ``bin_dir``; return it (put it first on PATH)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name, body in (("codex", CODEX), ("claude", CLAUDE)):
        path = bin_dir / name
        path.write_text("#!/usr/bin/env python3\n" + COMMON + body)
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return bin_dir


def with_path(bin_dir: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}"}
