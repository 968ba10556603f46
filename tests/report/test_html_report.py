"""The HTML report: opens offline in headless Chromium without errors and shows the numbers
`clinbench stats --json` computes."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from chromium_page import file_url, open_page
from stats_fixtures import write_hand_csv, write_hand_store

from clinbench.stats.analysis import Analysis
from clinbench.report.build import write_report
from clinbench.stats.errors import StatsError

PAGE_FACTS = {
    "forest_rows": "Array.from(document.querySelectorAll('svg.forest g.forest-row')).map(g => g.dataset.task)",
    "forest_overall": "document.querySelectorAll('svg.forest g.forest-overall').length",
    "stats": "Object.fromEntries(Array.from(document.querySelectorAll('[data-stat]')).map(e => [e.dataset.stat, e.textContent]))",
    "json": "JSON.parse(document.getElementById('clinbench-stats').textContent)",
    "family_bars": "document.querySelectorAll('svg.family-bars g.bar-group').length",
    "runs": "document.querySelectorAll('details.run').length",
    "links": "Array.from(document.querySelectorAll('.links a')).map(a => a.href)",
    "transcript_text": "Array.from(document.querySelectorAll('details.run .ev pre')).map(p => p.textContent).join('\\n')",
    "scripts": "Array.from(document.querySelectorAll('script')).map(s => s.type)",
    "external": "Array.from(document.querySelectorAll('[src], link[href]')).map(e => e.getAttribute('src') || e.getAttribute('href'))",
}


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clinbench", *args], capture_output=True, text=True)


@pytest.mark.slow
def test_m4bench_report_in_chromium(m4bench_runs, chromium, tmp_path):
    html = tmp_path / "report.html"
    out = _cli("report", str(m4bench_runs), "--html", str(html), "--md", str(tmp_path / "report.md"))
    assert out.returncode == 0, out.stderr
    # the report adds the per-model rows whenever runs hold more than one model
    stats = json.loads(_cli("stats", str(m4bench_runs), "--compare", "no-skill:with-skill", "--by", "model", "--json").stdout)

    page = open_page(file_url(html), PAGE_FACTS)
    assert page.errors == []
    # one forest row per task, in the task table's order, plus the overall diamond
    assert page.values["forest_rows"] == [t["task"] for t in stats["per_task"]]
    assert len(page.values["forest_rows"]) == stats["tasks"] == 28
    assert page.values["forest_overall"] == 1
    assert page.values["family_bars"] == 15
    shown = page.values["stats"]
    assert shown["mean_a"] == f"{stats['mean_a']:.3f}" == "0.703"
    assert shown["mean_b"] == f"{stats['mean_b']:.3f}" == "0.839"
    assert shown["delta"] == f"{stats['delta']:+.3f}" == "+0.136"
    assert shown["improving"] == f"{stats['improving']}/{stats['tasks']}" == "26/28"
    assert shown["strict_a"] == "13/280" and shown["strict_b"] == "25/280"
    assert page.values["json"] == stats  # the embedded data block is exactly `stats --json`
    # self-contained: the only script is the inert JSON block; nothing is loaded from elsewhere
    assert page.values["scripts"] == ["application/json"]
    assert all(src.startswith("data:") for src in page.values["external"])


@pytest.mark.slow
def test_campaign_report_links_evidence_and_reads_transcripts(chromium, tmp_path):
    campaign = write_hand_store(tmp_path / "campaign", evidence=True)
    html = tmp_path / "out" / "report.html"
    write_report(campaign, html=html)
    page = open_page(file_url(html), PAGE_FACTS)
    assert page.errors == []
    assert page.values["runs"] == 12  # the hand example's 12 publishable runs; the flagged one is left out
    files = [Path(unquote(urlparse(h).path)) for h in page.values["links"]]
    assert files and all(f.exists() for f in files)
    assert sum(f.name == "transcript.jsonl" for f in files) == 12
    # transcript text reads as written: markup in it is shown, not interpreted
    assert "Compute <SOFA> for each stay" in page.values["transcript_text"]
    assert "SELECT 1; -- done & dusted" in page.values["transcript_text"]
    text = html.read_text()
    assert "Per-column diagnostics" in text


def test_figures_are_valid_svg_with_one_row_per_task(tmp_path):
    files = write_report(write_hand_csv(tmp_path / "runs.csv"), html=tmp_path / "r.html")
    names = sorted(p.name for p in files.figures)
    assert names == ["families.svg", "forest.svg"]
    ns = {"s": "http://www.w3.org/2000/svg"}
    forest = ET.parse(tmp_path / "r-figures" / "forest.svg").getroot()
    rows = forest.findall(".//s:g[@class='forest-row']", ns)
    assert [r.get("data-task") for r in rows] == ["mimic-meld-24h", "mimic-sofa-24h", "mimic-sofa-24h-raw"]
    assert [round(float(r.get("data-delta")), 6) for r in rows] == [-0.1, 0.3, 0.1]
    bars = ET.parse(tmp_path / "r-figures" / "families.svg").getroot().findall(".//s:g[@class='bar-group']", ns)
    assert [b.get("data-label") for b in bars] == ["meld (1)", "sofa (2)"]


def test_markdown_tables(tmp_path):
    md = tmp_path / "r.md"
    write_report(write_hand_csv(tmp_path / "runs.csv"), markdown=md)
    text = md.read_text()
    assert "| delta | +0.100 |" in text
    assert "| tasks improving | 2/3 |" in text
    assert "| strict passes, no-skill | 1/6 |" in text
    assert "| sofa | 2 | 0.550 | 0.750 | +0.200 | 2/2 |" in text
    assert "| mimic-meld-24h | meld | 2 | 2 | 0.800 | 0.700 | -0.100 |" in text
    assert (tmp_path / "r-figures" / "forest.svg").exists()


def test_failure_writes_nothing(tmp_path):
    html = tmp_path / "r.html"
    html.write_text("previous report")
    with pytest.raises(StatsError, match="no runs under condition 'nope'"):
        write_report(write_hand_csv(tmp_path / "runs.csv"), Analysis(compare="no-skill:nope"), html=html)
    assert html.read_text() == "previous report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html", "runs.csv"]


@pytest.mark.slow
def test_report_cli_error_is_one_line(tmp_path):
    out = _cli("report", str(tmp_path / "missing.csv"), "--html", str(tmp_path / "r.html"))
    assert out.returncode == 2
    assert out.stderr.strip().startswith("error: ") and len(out.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "r.html").exists()


@pytest.mark.slow
def test_png_figures_at_twice_the_svg_size(chromium, tmp_path):
    import struct

    from clinbench.report.png import svg_size

    files = write_report(write_hand_csv(tmp_path / "runs.csv"), html=tmp_path / "r.html", png=True)
    pngs = [p for p in files.figures if p.suffix == ".png"]
    assert sorted(p.name for p in pngs) == ["families.png", "forest.png"]
    for png in pngs:
        head = png.read_bytes()[:24]
        assert head[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = struct.unpack(">II", head[16:24])
        svg_w, svg_h = svg_size(png.with_suffix(".svg").read_text())
        assert (width, height) == (2 * svg_w, 2 * svg_h)
