"""Old option spellings, still accepted (hidden from --help): the one table of them.

The naming scheme is documented once, in the README ("Options: one name for one thing").
Each entry maps a command path to {old spelling: current spelling}; the root group rewrites
the arguments of that command before parsing, so ``--tasks a,b`` keeps working as
``--task a,b`` in scripts written before the rename.
"""

from __future__ import annotations

OLD_SPELLINGS: dict[str, dict[str, str]] = {
    "run": {"--tasks": "--task", "--conditions": "--condition", "--schema": "--schema-variant"},
    "workspace": {"--schema": "--schema-variant"},
    "export-tasks": {"--tasks": "--task", "--schema": "--schema-variant"},
    "stats": {"--schema": "--schema-variant"},
    "report": {"--schema": "--schema-variant"},
    "concepts build": {"--schema": "--derived-schema"},
    "data fetch": {"--dest": "--out"},
    "tasks verify": {"--tasks": "--task"},
    # in `run`, --limit is a sandbox limit and --prices the model price table (TOML)
    "dx run": {"--limit": "--max-cases", "--prices": "--test-prices"},
}
GROUPS = ("concepts", "data", "dx", "tasks")


def current_spellings(command: str, args: list[str]) -> list[str]:
    """``args`` of top-level ``command`` with every old option spelling replaced by the current one."""
    path = command
    if command in GROUPS:
        sub = next((a for a in args if not a.startswith("-")), None)
        path = f"{command} {sub}" if sub else command
    table = OLD_SPELLINGS.get(path)
    if not table:
        return args
    out = []
    for arg in args:
        if arg == "--":
            out.extend(args[len(out):])
            break
        name, eq, value = arg.partition("=")
        out.append(table[name] + eq + value if name in table else arg)
    return out
