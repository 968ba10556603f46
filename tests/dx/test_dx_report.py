"""The diagnosis section of the report: agent table, Pareto plot, judge agreement, per-case links."""

import os
import re
import subprocess
import sys

import pytest

from clinbench.dx.rejudge import rejudge
from clinbench.dx.run import DxConfig, run_dx
from clinbench.report import dx_section
from clinbench.stats import accuracy


@pytest.fixture(scope="module")
def store(tmp_path_factory, cases):
    out = tmp_path_factory.mktemp("dx-report")
    script = out / "guess.txt"
    script.write_text("<question>Any fever?</question>\n<test>CBC</test>\n<diagnosis>Appendicitis</diagnosis>\n")
    run_dx(cases[:4], DxConfig(agent="oracle"), out)
    run_dx(cases[:4], DxConfig(agent=f"scripted:{script}"), out)
    rejudge(out, "offline")  # the same encounters scored again: judge agreement becomes measurable
    return out


def test_section_has_the_agent_table_plot_and_judge_agreement(store, tmp_path):
    part = dx_section.build_dx(store, tmp_path)
    page, md = part.html, part.markdown
    assert page.startswith("<h2>Sequential diagnosis on synthetic cases</h2>")  # the demo cases are synthetic
    assert "The cases are synthetic" in page and "<td>1 (synthetic)</td>" in page
    assert md.startswith("## Sequential diagnosis on synthetic cases") and "| 1 (synthetic) |" in md
    # oracle: 4/4; the guess: right only on case 1 (appendicitis), $330 each (one visit + CBC)
    assert re.search(r"<td>oracle</td><td>4</td><td>100.0%</td><td>100.0%–100.0%</td><td>\$0</td>", page)
    assert re.search(r"<td>scripted-guess</td><td>4</td><td>25.0%</td><td>[^<]+</td><td>\$330</td>", page)
    assert "<svg" in page and "oracle: 100% [100%, 100%], $0 (Pareto front)" in page
    assert part.figures["accuracy-cost"] in page  # the figure written beside the report is the one shown
    agreement = dx_section.judge_agreement(accuracy.dx_runs(store))
    assert agreement and agreement[0]["pairs"] == 8 and agreement[0]["kappa"] == 1.0  # same judge, same verdicts
    assert "Cohen&#x27;s kappa" in page or "Cohen's kappa" in page


def test_per_case_rows_link_to_existing_transcripts(store, tmp_path):
    page = dx_section.build_dx(store, tmp_path).html
    links = re.findall(r'<a href="([^"]+)">', page)
    assert len(links) == 4 * 4  # 4 cases x (oracle, guess, each also re-judged)
    for link in links:
        assert (tmp_path / link).resolve().is_file() and link.endswith("transcript.jsonl")
    assert "Acute appendicitis — 5, $0" in page


@pytest.mark.slow
def test_report_benchmark_dx_on_a_dx_store_alone(store, tmp_path):
    out = subprocess.run([sys.executable, "-m", "clinbench", "report", str(store), "--benchmark", "dx",
                          "--html", str(tmp_path / "r.html")], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "COLUMNS": "200"})
    assert out.returncode == 0, out.stderr
    html = (tmp_path / "r.html").read_text()
    assert "Sequential diagnosis" in html and "scripted-guess" in html and "nan" not in html.lower().split("<svg")[0]
    assert (tmp_path / "r-figures" / "dx-accuracy-cost.svg").read_text().rstrip("\n") in html


def test_dx_cases_labels_the_demo_cases_synthetic():
    """The bundled cases are written for clinbench: `dx cases` says so in its title, each row and its JSON."""
    import json

    from typer.testing import CliRunner

    from clinbench.cli import app

    text = CliRunner().invoke(app, ["dx", "cases"], env={"COLUMNS": "200"}).output
    assert "32 cases (synthetic: written for clinbench, no patient's record)" in text and "1 (synthetic)" in text
    rows = json.loads(CliRunner().invoke(app, ["dx", "cases", "--json"]).output)
    assert len(rows) == 32 and all(r["synthetic"] is True for r in rows)
