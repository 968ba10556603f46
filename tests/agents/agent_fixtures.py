"""Helpers for agent tests: a tiny hand-made workspace."""

from __future__ import annotations

from pathlib import Path

import duckdb


def make_workspace(root: Path, *, skills: dict[str, str] | None = None, prompt: str = "Write output.csv with stay_id and x.") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(root / "database.duckdb"))
    con.execute("CREATE SCHEMA mimiciv_icu")
    con.execute("CREATE TABLE mimiciv_icu.icustays (subject_id INTEGER, hadm_id INTEGER, stay_id INTEGER, los DOUBLE)")
    con.execute("INSERT INTO mimiciv_icu.icustays VALUES (1, 10, 100, 1.5), (2, 20, 200, 3.25), (3, 30, 300, 0.5)")
    con.close()
    (root / "prompt.md").write_text(prompt)
    for name, text in (skills or {"demo-skill": "---\nname: demo-skill\ndescription: demo\n---\nUse los.\n"}).items():
        (root / "skills" / name).mkdir(parents=True)
        (root / "skills" / name / "SKILL.md").write_text(text)
    return root
