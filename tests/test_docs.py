"""The rules a user needs ship in docs/: every named document exists, every link in the README and
docs resolves (file and heading), the store's document names every column the store has, and no
source points at the unshipped spec files any more."""

from __future__ import annotations

import re
from pathlib import Path

from clinbench.records import BINDING_COLUMNS, COLUMN_SCORE_COLUMNS, RUN_COLUMNS, USAGE_COLUMNS

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("tasks.md", "scoring.md", "conventions.md", "diagnosis.md", "agents.md", "store.md", "performance.md",
        "tasks/README.md")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", path.read_text(encoding="utf-8"), re.M)}


def broken_links(files: list[Path]) -> list[str]:
    bad = []
    for doc in files:
        for target in LINK.findall(doc.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):  # http(s), mailto: not checked offline
                continue
            name, _, anchor = target.partition("#")
            dest = (doc.parent / name).resolve() if name else doc
            if not dest.exists():
                bad.append(f"{doc.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                bad.append(f"{doc.relative_to(ROOT)}: {target} (no such heading)")
    return bad


def test_every_named_document_exists():
    assert [d for d in DOCS if not (ROOT / "docs" / d).is_file()] == []


def test_every_link_in_the_readme_and_docs_resolves():
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    assert len(files) > len(DOCS) and broken_links(files) == []


def test_the_link_check_finds_a_broken_link_and_a_missing_heading(tmp_path, monkeypatch):
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    (tmp_path / "a.md").write_text("# Title here\n[ok](#title-here) [gone](b.md) [bad](#nowhere) [web](https://x.org)\n")
    assert broken_links([tmp_path / "a.md"]) == ["a.md: b.md (no such file)", "a.md: #nowhere (no such heading)"]


def test_the_store_document_names_every_column():
    text = (ROOT / "docs" / "store.md").read_text(encoding="utf-8")
    columns = {*RUN_COLUMNS, *USAGE_COLUMNS, *COLUMN_SCORE_COLUMNS, *BINDING_COLUMNS}
    assert sorted(c for c in columns if f"`{c}`" not in text) == []


def test_nothing_points_at_the_unshipped_spec_files():
    pattern = re.compile(r"\b(TASKS|AGENT_CLIS|CONVENTIONS|SDBENCH)\.md\b")
    files = [p for d in ("src", "tests", "docs", "benchmarks") for p in (ROOT / d).rglob("*")
             if p.suffix in (".py", ".md", ".sql", ".toml") and p != Path(__file__)] + [ROOT / "README.md"]
    assert sorted(str(p.relative_to(ROOT)) for p in files if pattern.search(p.read_text(encoding="utf-8"))) == []
