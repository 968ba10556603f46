"""`clinbench demo` runs the whole system offline and tells its story in one report; a rerun resumes."""

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "report"))
from chromium_page import file_url, find_chromium, open_page  # noqa: E402

from clinbench.campaign.demo import demo_tasks  # noqa: E402
from clinbench.report.published import M4BENCH_RUNS  # noqa: E402
from tests.conftest import warm_dx_cache  # noqa: E402

pytestmark = pytest.mark.slow  # real processes and signals (or Ray, or the whole demo): minutes, not seconds

N_TASKS = len(demo_tasks())  # the MIMIC-IV standard tasks whose reference has a variant (at most 6)

SECTION_FACTS = {
    "sections": "Array.from(document.querySelectorAll('main > section')).map(s => s.id)",
    "blocks": "Object.fromEntries(Array.from(document.querySelectorAll('script.clinbench-stats'))"
              ".map(s => [s.dataset.section, JSON.parse(s.textContent)]))",
    "cards": "Object.fromEntries(Array.from(document.querySelectorAll('section.report-section')).map(s => [s.id, "
             "Object.fromEntries(Array.from(s.querySelectorAll('[data-stat]')).map(e => [e.dataset.stat, e.textContent]))]))",
    "provenance": "Array.from(document.querySelectorAll('section.report-section')).map(s => s.querySelector('table.prov')"
                  " ? s.querySelector('table.prov').innerText : '')",
    "text": "document.body.innerText",
    "dx": "document.querySelector('section#dx') ? document.querySelector('section#dx').innerText : ''",
}


def _cli(*args: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clinbench", *args], capture_output=True, text=True, env=env, timeout=900)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "demo"
    env = {**os.environ, "CLINBENCH_CACHE": str(warm_dx_cache(out.parent / "cache"))}
    first = _cli("demo", "--out", str(out), "--patients", "40", env=env)
    assert first.returncode == 0, first.stderr[-2000:]
    return out, env, first


def test_demo_campaign_is_reference_against_variant_and_no_eicu_is_built(demo):
    out, _, _ = demo
    with duckdb.connect(str(out / "campaign" / "results.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT agent, count(*), min(reward), max(reward) FROM runs GROUP BY agent ORDER BY agent").fetchall()
        per_task = dict(con.execute("SELECT task, reward FROM runs WHERE agent = 'variant'").fetchall())
    (ref_agent, ref_n, ref_min, ref_max), (var_agent, var_n, _, var_max) = rows
    assert (ref_agent, var_agent) == ("reference", "variant") and ref_n == var_n == N_TASKS >= 4
    assert ref_min == ref_max == 1.0  # the default reference scores itself perfectly
    assert var_max <= 1.0 and min(per_task.values()) < 1.0  # at least one convention moves its task's score
    assert not list(out.glob("*eicu*"))  # every demo task is a MIMIC-IV task: no eICU database


def test_demo_report_in_chromium_matches_stats_json(demo):
    if find_chromium() is None:
        pytest.skip("chromium is not installed (Debian package `chromium`; .ci/run installs it)")
    out, _, _ = demo
    page = open_page(file_url(out / "report.html"), SECTION_FACTS)
    assert page.errors == []
    assert page.values["sections"] == ["derive", "m4bench", "dx"]
    derive = json.loads(_cli("stats", str(out / "campaign"), "--compare", "agent:reference:variant", "--json").stdout)
    m4 = json.loads(_cli("stats", str(M4BENCH_RUNS), "--compare", "no-skill:with-skill", "--by", "model", "--json").stdout)
    assert page.values["blocks"] == {"derive": derive, "m4bench": m4}
    cards = page.values["cards"]
    assert cards["derive"]["mean_a"] == f"{derive['mean_a']:.3f}" == "1.000"
    assert cards["derive"]["mean_b"] == f"{derive['mean_b']:.3f}"
    assert cards["derive"]["delta"] == f"{derive['delta']:+.3f}" and derive["delta"] < 0
    # the published M4Bench headline, reproduced from the shipped per-run table
    assert (cards["m4bench"]["mean_a"], cards["m4bench"]["mean_b"], cards["m4bench"]["delta"]) == ("0.703", "0.839", "+0.136")
    assert cards["m4bench"]["improving"] == "26/28" and m4["runs_a"] + m4["runs_b"] == 560
    derive_prov, m4_prov = page.values["provenance"]
    assert "mimic-iv-synthetic.duckdb" in derive_prov and "synthetic: yes" in derive_prov
    assert "fingerprint" in derive_prov and "clinbench 0.1.0" in derive_prov and "duckdb " + duckdb.__version__ in derive_prov
    assert "clinbench demo --out" in derive_prov and f"reference ({N_TASKS} runs), variant ({N_TASKS} runs)" in derive_prov
    assert "m4bench_v1_final_codex_runs.csv" in m4_prov and "codex/gpt-5.4-mini (280 runs)" in m4_prov
    assert "MIT License" in page.values["text"] and "Hannes Ill" in page.values["text"]
    assert "oracle" in page.values["dx"] and "ed-workup" in page.values["dx"]
    # the note-layout runs: their own section, said to be the same cases, not pooled, lab orders grounded
    notes = page.values["dx"].split("Sequential diagnosis on the same cases as MIMIC-IV-Note discharge summaries", 1)
    assert len(notes) == 2 and "not pooled with the ones above" in notes[1]
    assert "ed-workup (gatekeeper=offline+grounded)" in notes[1] and "oracle" not in notes[1]
    assert "(gatekeeper=offline+grounded)" not in notes[0]
    assert "NaN" not in page.values["text"] and " nan" not in page.values["text"].lower()


def test_demo_shows_progress_and_resumes(demo):
    out, env, first = demo
    text = first.stdout.replace("\n", " ")
    assert "variant the variant agent writes" in text and "mimic-sofa-24h" in text
    assert first.stdout.rstrip().splitlines()[-1] == f"  clinbench serve {out}"  # it ends with the viewer's command
    again = _cli("demo", "--out", str(out), "--patients", "40", env=env)
    assert again.returncode == 0, again.stderr[-2000:]
    assert f"0 runs finished, {2 * N_TASKS} already done" in again.stdout.replace("\n", " ")
    with duckdb.connect(str(out / "dx" / "results.duckdb"), read_only=True) as con:
        oracle = con.execute("SELECT count(*), avg(reward) FROM runs WHERE agent = 'oracle'").fetchone()
    assert oracle[0] >= 30 and oracle[1] == 1.0
    with duckdb.connect(str(out / "dx-notes" / "results.duckdb"), read_only=True) as con:
        notes = con.execute("SELECT agent, gatekeeper, count(*), min(CAST(task AS INT)) FROM runs GROUP BY ALL").fetchall()
    assert notes == [("ed-workup", "offline+grounded", 28, 101)]  # the demo database holds the notes' admissions
    assert "ed-workup: same verdict as in the demo layout on" in text
