"""The ICD-10-CM classification of ``simple-icd-10-cm``, without its 2.3 s start.

Importing ``simple_icd_10_cm`` parses its 2026 tabular XML every time (2.3 s of CPU), which every
`dx run`, every Ray worker and every gatekeeper paid before answering one order. The first use
writes the tree it parses (each node's name, type, parent, description, includes and inclusion
terms, in the package's own order) as JSON under ``$CLINBENCH_CACHE/icd10cm/``, keyed by the
package's version; later uses read that (about 0.2 s). ``Classification`` answers the package's
functions that clinbench calls, with the package's own semantics (tests/dx/test_dx_icd_index.py
compares them on every code).
"""

from __future__ import annotations

import contextlib
import json
from functools import lru_cache
from importlib import metadata
from pathlib import Path

FORMAT = 1  # bump when the cached layout changes


class Classification:
    def __init__(self, data: dict):
        self._names: list[str] = [n[0] for n in data["nodes"]]
        self._types: list[str] = [n[1] for n in data["nodes"]]
        self._parents: list[int] = [n[2] for n in data["nodes"]]
        self._descriptions: list[str] = [n[3] for n in data["nodes"]]
        self._includes: list[list[str]] = [n[4] for n in data["nodes"]]
        self._inclusion: list[list[str]] = [n[5] for n in data["nodes"]]
        self._node: dict[str, int] = data["index"]
        self._children: list[list[int]] = [[] for _ in self._names]
        for i, parent in enumerate(self._parents):
            if parent >= 0:
                self._children[parent].append(i)

    # -- the package's lookups, same names and meaning ---------------------------------
    def _dotted(self, code: str) -> str:
        if len(code) < 4 or code[3] == ".":
            return code
        dotted = code[:3] + "." + code[3:]
        return dotted if dotted in self._node else code

    def _at(self, code: str) -> int:
        if not self.is_valid_item(code):
            raise ValueError(f'The code "{code}" does not exist.')
        return self._node[self._dotted(code)]

    def is_valid_item(self, code: str) -> bool:
        return code in self._node or len(code) >= 4 and code[:3] + "." + code[3:] in self._node

    def _type(self, code: str) -> str | None:
        i = self._node.get(self._dotted(code))
        return None if i is None else self._types[i]

    def is_chapter(self, code: str) -> bool:
        return self._type(code) == "chapter"

    def is_block(self, code: str) -> bool:
        code = self._dotted(code)
        i = self._node.get(code)
        if i is None:
            return False  # a section, or a category that is its section's only one
        return self._types[i] == "section" or self._parents[i] >= 0 and self._names[self._parents[i]] == code

    def is_category(self, code: str) -> bool:
        return self._type(code) == "category"

    def is_chapter_or_block(self, code: str) -> bool:
        return self.is_block(code) or self.is_chapter(code)

    def get_description(self, code: str) -> str:
        return self._descriptions[self._at(code)]

    def get_includes(self, code: str) -> list[str]:
        return list(self._includes[self._at(code)])

    def get_inclusion_term(self, code: str) -> list[str]:
        return list(self._inclusion[self._at(code)])

    def get_parent(self, code: str) -> str:
        parent = self._parents[self._at(code)]
        return self._names[parent] if parent >= 0 else ""

    def get_children(self, code: str) -> list[str]:
        return [self._names[c] for c in self._children[self._at(code)]]

    def get_ancestors(self, code: str) -> list[str]:
        out, i = [], self._parents[self._at(code)]
        while i >= 0:
            out.append(self._names[i])
            i = self._parents[i]
        return out

    def is_ancestor(self, a: str, b: str) -> bool:
        self._at(a)
        return a in self.get_ancestors(b) and a != b

    def is_descendant(self, a: str, b: str) -> bool:
        return self.is_ancestor(b, a)

    def get_all_codes(self, with_dots: bool = True) -> list[str]:
        if with_dots:
            return list(self._names)
        return [n[:3] + n[4:] if len(n) > 4 and n[3] == "." else n for n in self._names]


def _from_package() -> dict:
    """The package's parsed tree, as the cached JSON holds it."""
    from simple_icd_10_cm import simple_icd_10_cm as cm  # the module: its parsed tree is private there

    nodes: list[list] = []
    index_of: dict[int, int] = {}
    stack = [(chapter, -1) for chapter in reversed(cm._chapter_list)]
    while stack:  # depth first, children in order: the package's get_all_codes order
        node, parent = stack.pop()
        index_of[id(node)] = len(nodes)
        nodes.append([node.name, node.type, parent, node.description, list(node.includes), list(node.inclusion_term)])
        stack.extend((child, index_of[id(node)]) for child in reversed(node.children))
    index = {name: index_of[id(node)] for name, node in cm._code_to_node.items()}
    return {"format": FORMAT, "nodes": nodes, "index": index}


def _cache_file() -> Path:
    from clinbench.cache import cache_root

    return cache_root() / "icd10cm" / f"simple-icd-10-cm-{metadata.version('simple-icd-10-cm')}-{FORMAT}.json"


@lru_cache(maxsize=1)
def classification() -> Classification:
    path = _cache_file()
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError, IndexError):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") == FORMAT:
            return Classification(data)
    data = _from_package()
    with contextlib.suppress(OSError):  # a read-only or full cache: parse again next time
        from clinbench.atomic import write_text_atomic

        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps(data, separators=(",", ":")))
    return Classification(data)
