"""ICD-10-CM lookups (``simple-icd-10-cm``'s classification, through dx/icd_index.py): descriptions, inclusion terms, text search.

``terms(code)`` gives every name the classification has for a code and its category
(description, inclusion terms, the parent's description), which the leak guard treats as
synonyms of a diagnosis (and the offline baselines as extra names of their candidates).
"""

from __future__ import annotations

import contextlib
import functools
import json
from pathlib import Path

from clinbench.dx.text import normal_form


def _icd():
    from clinbench.dx.icd_index import classification

    return classification()


def is_code(code: str | None) -> bool:
    return bool(code) and _icd().is_valid_item(code)


def description(code: str) -> str:
    return _icd().get_description(code)


def terms(code: str | None) -> list[str]:
    """Names of the code: description, inclusion terms, and the same for its parent category."""
    if not is_code(code):
        return []
    cm = _icd()
    out: list[str] = []
    node: str | None = code
    while node and not cm.is_chapter_or_block(node):
        out.append(cm.get_description(node))
        out.extend(cm.get_inclusion_term(node))
        if cm.is_category(node):
            break
        node = cm.get_parent(node)
    seen: set[str] = set()
    return [t for t in out if not (t.lower() in seen or seen.add(t.lower()))]


def relation(a: str, b: str) -> str:
    """How two codes relate: same, ancestor (a is broader), descendant, sibling (same
    category), block (same block), chapter (same chapter) or unrelated."""
    cm = _icd()
    if a == b:
        return "same"
    if cm.is_ancestor(a, b):
        return "ancestor"
    if cm.is_descendant(a, b):
        return "descendant"
    anc_a, anc_b = cm.get_ancestors(a), cm.get_ancestors(b)
    cat = lambda code, anc: code if cm.is_category(code) else next((x for x in anc if cm.is_category(x)), None)
    if cat(a, anc_a) and cat(a, anc_a) == cat(b, anc_b):
        return "sibling"
    blk = lambda anc: next((x for x in anc if cm.is_block(x)), None)
    if blk(anc_a) and blk(anc_a) == blk(anc_b):
        return "block"
    if anc_a and anc_b and anc_a[-1] == anc_b[-1]:
        return "chapter"
    return "unrelated"


def terms_cache_file():
    """Where the normal forms of every ICD-10-CM name are kept (a Path), named by the classification's
    version and dx/text.py's own bytes (its rules make the forms), so a change to either is never read stale."""
    import hashlib

    from clinbench.dx import text
    from clinbench.dx.icd_index import _cache_file

    rules = hashlib.sha256(Path(text.__file__).read_bytes()).hexdigest()[:12]
    tree = _cache_file()
    return tree.with_name(f"{tree.stem}-terms-{rules}.json")


@functools.lru_cache(maxsize=1)
def _term_table() -> tuple[list[str], list[str]]:
    """(normal form of every description and inclusion term, its code) over all codes; kept in
    $CLINBENCH_CACHE: normalising 110,000 names took each dx worker process 3-4 s of CPU, for a
    case without a code (every case of SDBench's dataset.json)."""
    path = terms_cache_file()
    with contextlib.suppress(OSError, ValueError, TypeError):
        forms, owners = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(forms, list) and isinstance(owners, list) and len(forms) == len(owners) and forms:
            return forms, owners
    cm = _icd()
    forms = []
    owners = []
    for c in cm.get_all_codes(True):
        if cm.is_chapter_or_block(c):
            continue
        for t in [cm.get_description(c), *cm.get_inclusion_term(c)]:
            forms.append(normal_form(t))
            owners.append(c)
    with contextlib.suppress(OSError):  # a read-only or full cache: normalise again next time
        from clinbench.atomic import write_text_atomic

        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps([forms, owners], separators=(",", ":")))
    return forms, owners


def lookup(text: str, *, min_score: float = 88.0) -> str | None:
    """The code whose description or inclusion term best matches ``text`` (fuzzy), if any."""
    from rapidfuzz import fuzz, process

    forms, owners = _term_table()
    hit = process.extractOne(normal_form(text), forms, scorer=fuzz.token_sort_ratio, score_cutoff=min_score)
    return owners[hit[2]] if hit else None
