"""Task cards: one per family, each naming its target's definition and every task's thresholds,
and the shipped docs/tasks/ is exactly what the generator writes."""

from __future__ import annotations

from pathlib import Path

from clinbench.derive.cards import INDEX, task_cards
from clinbench.derive.catalogue import load_catalogue

SHIPPED = Path(__file__).resolve().parents[2] / "docs" / "tasks"


def test_a_card_covers_every_family_and_every_task():
    cards = task_cards()
    catalogue = load_catalogue().values()
    assert sorted(cards) == sorted({f"{t.family}.md" for t in catalogue} | {INDEX}) and len(cards) == 16
    for t in catalogue:
        card = cards[f"{t.family}.md"]
        assert f"| `{t.id}` | {t.database} | {t.mode} |" in card and f"[{t.family}]({t.family}.md)" in cards[INDEX]
    sofa = cards["sofa.md"]
    assert "**Target.** reference output of task mimic-sofa-24h" in sofa and "`sofa-24h__missing_as_null`" in sofa
    assert "| `mimic-sofa-24h-raw` | mimic-iv | raw | stay_id | sofa, respiration" in sofa and "| 1 | 0.9 |" in sofa


def test_the_shipped_cards_are_the_generated_ones():
    shipped = {p.name: p.read_text(encoding="utf-8") for p in SHIPPED.glob("*.md")}
    stale = sorted(name for name, text in task_cards().items() if shipped.get(name) != text)
    assert stale == [], f"docs/tasks is stale ({', '.join(stale)}): run `clinbench tasks cards --out docs/tasks`"
