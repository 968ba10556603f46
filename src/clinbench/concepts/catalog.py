"""The concept files: where they live, what table each becomes, and what its header says.

Layout (names are conventions shared with every concept author):
  mimic_iv/<domain>/<stem>.sql   -> mimiciv_derived.<stem>
  eicu/<stem>.sql                -> eicu_derived.<stem>
  targets/<stem>.sql             -> mimiciv_derived.target_<stem, '-' -> '_'>  (eicu_derived for 'eicu-*')
  variants/<stem>.sql            -> mimiciv_derived.variant_<stem, '-' -> '_'> (eicu_derived for 'eicu-*')
  profiles/<profile>/...         -> a reference profile's own files, in the same layout, laid over
                                    the base tree (``clinbench.concepts.profiles``)

Every file opens with a ``--`` comment block holding ``-- Concept:``, ``-- Definition:``,
``-- Source:``, ``-- Grain:`` and ``-- Deviations:`` lines; a line starting ``--   `` continues
the field above it. A concept no anchor builds (clinbench's own intermediate, shared by the
concepts and references that read it) also has a ``-- Helper:`` line saying who reads it: a
helper is no table: it is part of the statement of each table that reads it (``clinbench.concepts.helpers``),
so it is never in an agent's database (an M4Bench agent never saw one, and some hold most of an answer).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from clinbench.concepts.profiles import get_profile, lineage
from clinbench.errors import ConceptError

CONCEPTS_DIR = Path(__file__).resolve().parent
MIMIC_DERIVED = "mimiciv_derived"
EICU_DERIVED = "eicu_derived"
DERIVED_SCHEMAS = (MIMIC_DERIVED, EICU_DERIVED)
HEADER_FIELDS = ("concept", "definition", "source", "grain", "deviations", "helper")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Concept:
    name: str  # file stem, as users type it
    kind: str  # 'concept' | 'target' | 'variant'
    domain: str  # folder: 'measurement', 'score', ..., 'eicu', 'targets', 'variants'
    path: Path
    schema: str  # derived schema the table is written to (before any --schema rename)
    table: str
    header: dict[str, str] = field(compare=False)

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.table}"

    @property
    def sql(self) -> str:
        return self.path.read_text(encoding="utf-8")

    @property
    def helper(self) -> bool:
        """clinbench's own intermediate, which no anchor builds (a ``-- Helper:`` line)."""
        return bool(self.header.get("helper"))

    @property
    def in_layer(self) -> bool:
        """Part of the concept layer: a concept, not a helper (``concepts build DB`` builds these, and a
        standard task's agent sees them, less its drops)."""
        return self.kind == "concept" and not self.helper

    @property
    def grain_text(self) -> str:
        return self.header.get("grain", "")

    def grain_columns(self, columns: list[str]) -> list[str]:
        """The declared grain as column names, keeping only words that are columns of the table."""
        present = set(columns)
        seen: list[str] = []
        for word in _IDENT.findall(self.grain_text):
            if word in present and word not in seen:
                seen.append(word)
        return seen


def parse_header(text: str) -> dict[str, str]:
    """Fields of the leading ``--`` block: {'concept': ..., 'definition': ..., ...}."""
    fields: dict[str, str] = {}
    current: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("--"):
            break
        body = stripped[2:]
        match = re.match(r"\s*([A-Za-z][A-Za-z ]*?):\s?(.*)$", body)
        if match and match.group(1).lower() in HEADER_FIELDS and not body.startswith("   "):
            current = match.group(1).lower()
            fields[current] = match.group(2).strip()
        elif current is not None and body.startswith("  ") and body.strip():
            fields[current] = (fields[current] + " " + body.strip()).strip()
        else:
            current = None
    return fields


def rewrite_schema(sql: str, schema: str) -> str:
    """Point every ``mimiciv_derived.`` reference at ``schema`` instead."""
    if schema == MIMIC_DERIVED:
        return sql
    return re.sub(rf"\b{MIMIC_DERIVED}\.", f"{schema}.", sql)


def _target_schema(stem: str) -> str:
    return EICU_DERIVED if stem.startswith("eicu-") else MIMIC_DERIVED


def _discover(root: Path) -> list[Concept]:
    found: list[Concept] = []
    for path in sorted((root / "mimic_iv").glob("*/*.sql")):
        found.append(Concept(path.stem, "concept", path.parent.name, path, MIMIC_DERIVED, path.stem, parse_header(path.read_text(encoding="utf-8"))))
    for path in sorted((root / "eicu").rglob("*.sql")):
        found.append(Concept(path.stem, "concept", "eicu", path, EICU_DERIVED, path.stem, parse_header(path.read_text(encoding="utf-8"))))
    for folder, kind, prefix in (("targets", "target", "target_"), ("variants", "variant", "variant_")):
        for path in sorted((root / folder).glob("*.sql")):
            table = prefix + path.stem.replace("-", "_")
            found.append(Concept(path.stem, kind, folder, path, _target_schema(path.stem), table, parse_header(path.read_text(encoding="utf-8"))))
    return found


def _tree(root: Path) -> dict[str, Concept]:
    concepts: dict[str, Concept] = {}
    for concept in _discover(root):
        if concept.qualified in concepts:
            other = concepts[concept.qualified]
            raise ConceptError(f"{concept.path} and {other.path} both define {concept.qualified}: rename one file")
        concepts[concept.qualified] = concept
    return concepts


@lru_cache(maxsize=8)
def _load(root: Path, profile: str, stamp: tuple[tuple[str, float], ...]) -> dict[str, Concept]:
    """The base tree with each profile of ``profile``'s lineage laid over it, base first."""
    concepts: dict[str, Concept] = {}
    for layer in lineage(profile):
        if layer.base is None:
            concepts = _tree(root)
            continue
        own = _tree(root / "profiles" / layer.folder_name)
        for name in layer.omit:
            concepts.pop(name, None)
        concepts.update(own)
    return concepts


def load_concepts(root: Path | None = None, profile: str | None = None) -> dict[str, Concept]:
    """Every concept, target and variant file of reference profile ``profile`` (default: the default
    profile), keyed by its qualified table name."""
    root = (root or CONCEPTS_DIR).resolve()
    stamp = tuple(sorted((str(p), p.stat().st_mtime) for p in root.rglob("*.sql")))
    return dict(_load(root, get_profile(profile).name, stamp))


# Helper tables an earlier clinbench built and this one does not (the ventilation rules now live in
# ventilation.sql itself): a database built before may still hold them, and ventilation_episodes holds
# the ventilation answer. A build drops them (``build._drop_omitted``); a workspace never shows them.
RETIRED_HELPERS = frozenset({f"{MIMIC_DERIVED}.ventilation_status", f"{MIMIC_DERIVED}.ventilation_episodes"})


@lru_cache(maxsize=4)
def helper_tables(profile: str | None = None) -> frozenset[str]:
    """The qualified tables of ``profile``'s helper concepts (``Concept.helper``) and the retired helpers
    (``RETIRED_HELPERS``), read once a process: every workspace asks (``load_concepts`` stats each concept
    file, 2 ms a call), and a file's helper line changes only with the code."""
    return frozenset(q for q, c in load_concepts(profile=profile).items() if c.helper) | RETIRED_HELPERS


def layer_tables(profile: str | None = None) -> list[str]:
    """The MIMIC-IV concept layer of ``profile``: the qualified tables of its ``in_layer`` concepts."""
    return sorted(q for q, c in load_concepts(profile=profile).items() if c.in_layer and c.schema == MIMIC_DERIVED)


def find_concept(name: str, concepts: dict[str, Concept] | None = None) -> Concept:
    """Look a concept up by qualified table name, table name or file stem (concepts first, then targets)."""
    concepts = concepts if concepts is not None else load_concepts()
    if name in concepts:
        return concepts[name]
    matches = [c for c in concepts.values() if name in (c.name, c.table)]
    # a bare stem names the concept before a target or variant of the same stem ('ventilation')
    for kind in ("concept", "target", "variant"):
        if len(matches) > 1 and any(c.kind == kind for c in matches):
            matches = [c for c in matches if c.kind == kind]
            break
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        options = ", ".join(sorted(c.qualified for c in matches))
        raise ConceptError(f"{name!r} is ambiguous ({options}): give the qualified table name")
    known = sorted({c.name for c in concepts.values()})
    close = difflib.get_close_matches(name, known, n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    raise ConceptError(f"no concept named {name!r}{hint}: run `clinbench concepts list` to see them")
