"""What the demo report showed wrongly: "1. 1." in the contents, "-0.000" deltas, a label rounding its
estimate to three decimals and its interval to two, and intervals drawn from a single run."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from clinbench.stats.analysis import Analysis
from clinbench.report.build import SectionSpec, write_report
from clinbench.stats.formatting import signed

# one run per task and condition, as in the demo: sofa -0.015, meld -0.0001 (rounds to zero), kdigo 0
RUNS = [("mimic-sofa-24h", "reference", 1.0), ("mimic-sofa-24h", "variant", 0.985),
        ("mimic-meld-24h", "reference", 1.0), ("mimic-meld-24h", "variant", 0.9999),
        ("mimic-kdigo-48h", "reference", 1.0), ("mimic-kdigo-48h", "variant", 1.0)]


def _csv(path: Path) -> Path:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["task", "condition", "agent", "model", "trial", "reward", "strict", "publishable", "schema"])
        for task, agent, reward in RUNS:
            w.writerow([task, "no-skill", agent, "", 0, reward, reward == 1.0, True, "native"])
    return path


def test_signed_never_prints_minus_zero():
    assert [signed(x) for x in (-0.0001, 0.0, -0.0, 0.0004, -0.015, 0.136)] == [
        "0.000", "0.000", "0.000", "0.000", "-0.015", "+0.136"]


def test_the_demo_report_numbers_once_has_no_minus_zero_and_no_interval_from_one_run(tmp_path):
    runs = _csv(tmp_path / "runs.csv")
    sections = [SectionSpec(runs, Analysis(compare="agent:reference:variant", draws=500, permutation_draws=500), key="derive", title="1. How much a convention moves"),
                SectionSpec(runs, Analysis(compare="agent:reference:variant", draws=500, permutation_draws=500), key="again", title="2. The same, again")]
    files = write_report(sections=sections, html=tmp_path / "r.html", markdown=tmp_path / "r.md")
    html, md = files.html.read_text(), files.markdown.read_text()
    toc = re.search(r'<ol class="toc">(.*?)</ol>', html).group(1)
    assert re.findall(r'<a href="#[^"]+">([^<]+)</a>', toc) == ["How much a convention moves", "The same, again"]
    svgs = "".join(p.read_text() for p in files.figures)
    for text in (html, md, svgs):  # (data-delta attributes keep six digits for scripts)
        assert not re.search(r"-0\.000(?!\d)", text)
    labels = re.findall(r">([+-]?\d\.\d+ \[[^\]]*\]|[+-]?\d\.\d+ \(no interval: one run\))<", svgs)
    assert "-0.015 (no interval: one run)" in labels  # a task with one run a side has no interval
    for label in labels:  # every interval at the estimate's precision
        assert re.fullmatch(r"[+-]?\d\.\d{3} (\[[+-]?\d\.\d{3}, [+-]?\d\.\d{3}\]|\(no interval: one run\))", label), label
    sofa = next(line for line in md.splitlines() if line.startswith("| mimic-sofa-24h"))
    assert "-0.015" in sofa and "—" in sofa and "[" not in sofa
