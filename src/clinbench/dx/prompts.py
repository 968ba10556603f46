"""The model roles' prompts: one versioned file each under ``prompts/`` (``version: NAME-N``
on the first line, a blank line, then the text). The version is recorded with every reply
or verdict the prompt produced."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources


@dataclass(frozen=True)
class Prompt:
    version: str
    text: str


@functools.lru_cache(maxsize=None)
def prompt(name: str) -> Prompt:
    raw = (resources.files("clinbench.dx") / "prompts" / f"{name}.md").read_text(encoding="utf-8")
    head, _, body = raw.partition("\n\n")
    if not head.startswith("version:"):
        raise ValueError(f"prompts/{name}.md must start with a 'version:' line")
    return Prompt(head.split(":", 1)[1].strip(), body.strip())
