"""`clinbench serve` in a real browser (Debian's chromium driven by Playwright), on a small campaign folder
made by the demo's `reference` and `variant` agents, a hostile run, and the demo diagnosis cases.

One server and one browser serve the whole module. Screenshots go to tests/artifacts/serve/."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.serve.serve_fixtures import PAYLOADS, build_campaign, build_hostile

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "serve"
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run",
               "--host-resolver-rules=MAP clinic.test 127.0.0.1"]  # a name as on a LAN: not a trustworthy origin
TOKEN = "test-token-0123456789"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium "
                                                               "(.ci/run installs it with apt)")]
pytest.importorskip("playwright", reason="needs the test extra: pip install -c constraints.txt -e '.[test]'")


def _cli(*args: str) -> str:
    from clinbench.cli import app

    res = CliRunner().invoke(app, list(args))
    assert res.exit_code == 0, res.output
    return res.stdout


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    import uvicorn

    from clinbench.serve.app import create_app
    from clinbench.serve.launch import prepare

    root = tmp_path_factory.mktemp("serve")
    mp = pytest.MonkeyPatch()
    mp.setenv("CLINBENCH_CACHE", str(root / "cache"))  # the campaign's workspaces stay in the test's folder
    campaign = build_campaign(root)
    hostile = build_hostile(root, campaign)
    mp.undo()  # the dx parts use the cache tests/dx use (the judge's ICD-10 word index is built once there)
    before = _tree(campaign)
    sources, play = prepare([campaign, hostile], play_out=root / "clinicians")
    server = uvicorn.Server(uvicorn.Config(create_app(sources, token=TOKEN, play=play), host="127.0.0.1", port=0,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield {"root": root, "campaign": campaign, "before": before, "hostile": hostile, "play": play, "port": port,
           "base": f"http://127.0.0.1:{port}"}
    server.should_exit = True
    thread.join(5)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, world):
    """A fresh page holding the token's cookie, with its dialogs, console errors and responses recorded."""
    context = browser.new_context(viewport={"width": 1100, "height": 760})
    context.set_default_timeout(90_000)  # a first page may wait for the gatekeeper's one-time loading on a busy machine
    pg = context.new_page()
    pg.seen = {"dialogs": [], "errors": [], "responses": []}
    pg.on("dialog", lambda d: (pg.seen["dialogs"].append(d.message), d.dismiss()))
    pg.on("console", lambda m: pg.seen["errors"].append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: pg.seen["errors"].append(str(e)))
    pg.on("response", lambda r: pg.seen["responses"].append(r))
    pg.goto(f"{world['base']}/?token={TOKEN}")
    yield pg
    context.close()


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _shot(pg, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def test_campaign_and_run_pages_show_what_stats_and_explain_print(page, world):
    campaign = world["campaign"]
    cli_stats = json.loads(_cli("stats", str(campaign), "--compare", "agent:reference:variant", "--json"))
    page.goto(f"{world['base']}/c/0?compare=agent:reference:variant")
    served = page.evaluate("async () => (await fetch('/c/0/stats.json?compare=agent:reference:variant')).json()")
    assert {k: v for k, v in served.items() if k != "source"} == {k: v for k, v in cli_stats.items() if k != "source"}
    assert page.inner_text("#headline .mean-a") == f"{cli_stats['mean_a']:.3f}"
    assert page.inner_text("#headline .delta") == f"{cli_stats['delta']:+.3f}"
    assert page.inner_text("#per-task tr[data-task='mimic-sofa-24h'] .delta") == f"{cli_stats['per_task'][0]['delta']:+.3f}"
    assert page.evaluate("document.querySelector('img.figure').naturalWidth") > 0  # the report's forest plot
    _shot(page, "campaign")

    from clinbench.records.store import Store

    rewards = {r["run_id"]: r["reward"] for r in Store.open(campaign).runs()}
    shown = {tr.get_attribute("data-run"): tr.query_selector(".reward").inner_text()
             for tr in page.query_selector_all("#runs-table tbody tr")}
    assert shown == {k: f"{v:.3f}" for k, v in rewards.items()}
    page.select_option("select[name=agent]", "variant")
    page.click("form.filters button")
    filtered = [tr.get_attribute("data-run") for tr in page.query_selector_all("#runs-table tbody tr")]
    assert sorted(filtered) == sorted(k for k in rewards if ".variant." in k) and len(filtered) == 2

    run_id = "mimic-sofa-24h.with-skill.native.variant.-.t0"
    why = json.loads(_cli("explain", str(campaign / "runs" / run_id), "--json"))
    page.click(f"#runs-table tr[data-run='{run_id}'] a")
    assert page.inner_text("#reward") == f"{why['reward']:.3f}"
    rates = {tr.get_attribute("data-column"): tr.query_selector(".rate").inner_text()
             for tr in page.query_selector_all("#columns tbody tr")}
    assert rates == {c["name"]: f"{c['match_rate']:.3f}" for c in why["columns"]}
    rows = [[td.inner_text() for td in tr.query_selector_all("td")] for tr in page.query_selector_all("#mismatches tbody tr")]
    score = json.loads((campaign / "runs" / run_id / "score.json").read_text())
    expected = [[*m["key"].values(), col, agent or "∅", ref or "∅", f"{score['columns'][col]['tolerance']:g}"]
                for m in why["mismatches"] for col, (ref, agent) in m["cells"].items()]
    assert rows == expected and len(rows) == 2  # liver of stay 100 (0 vs 2), sofa of stay 200 (∅ vs 3)
    assert page.inner_text("#verify") == "every file matches its sha256 in manifest.json"
    assert "skill: sofa-score/SKILL.md" in page.inner_text("#instruction")
    page.locator("#score").scroll_into_view_if_needed()
    _shot(page, "run")
    assert page.seen["errors"] == [] and page.seen["dialogs"] == []


def test_hostile_strings_render_as_text_and_no_script_runs(page, world):
    script, img, href = PAYLOADS
    page.goto(f"{world['base']}/c/1")
    page.click("#runs-table tr[data-run='mimic-sofa-24h.no-skill.native.hostile.t0'] a")
    page.wait_for_load_state("load")
    text = page.inner_text("body")
    for payload in PAYLOADS:
        assert payload in text  # shown, as text
    assert page.inner_text("#summary .model") == f"{script}{href}"
    assert script in page.inner_text("#columns") and img in page.inner_text("#mismatches")
    assert page.evaluate("document.querySelectorAll('script').length") == 1  # app.js only
    assert page.evaluate("document.querySelectorAll('[onerror], a[href^=\"javascript:\"], img[src=x]').length") == 0
    page.goto(f"{world['base']}/c/1")  # the runs table carries the agent and model names too
    assert script in page.inner_text("#runs-table")
    _shot(page, "hostile")
    assert page.seen["dialogs"] == [] and page.seen["errors"] == []


def _raw_status(port: int, path: str, token: str | None) -> int:
    """The status of a GET sent byte for byte (no client normalises the path)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.putrequest("GET", path, skip_accept_encoding=True)
    if token:
        conn.putheader("Cookie", f"clinbench_token={token}")
    conn.endheaders()
    status = conn.getresponse().status
    conn.close()
    return status


def test_token_is_required_and_dot_dot_is_not_found(world):
    port = world["port"]
    for path in ("/", "/c/0", "/c/0/stats.json", "/static/app.js", "/play"):
        assert _raw_status(port, path, None) == 403
        assert _raw_status(port, path + "?token=wrong", None) == 403
    assert _raw_status(port, "/c/0", TOKEN) == 200
    run = "/c/0/r/mimic-sofa-24h.with-skill.native.variant.-.t0"
    assert _raw_status(port, f"{run}/file/score.json", TOKEN) == 200
    for path in (f"{run}/file/../../../results.duckdb", f"{run}/file/%2e%2e/%2E%2E/results.duckdb",
                 "/static/../app.py", "/c/0/r/..", f"/c/0/r/..%2f..%2fresults.duckdb", "/../etc/passwd"):
        assert _raw_status(port, path, TOKEN) == 404, path
    assert _raw_status(port, f"{run}/file/output.csv", TOKEN) == 200
    assert _raw_status(port, f"{run}/file/not-sealed.txt", TOKEN) == 404  # only the manifest's files
    # a store row whose evidence_dir climbs out of its campaign reaches nothing
    assert _raw_status(port, "/c/1/r/escape", TOKEN) == 200
    for name in ("etc/passwd", "etc%2Fpasswd", "manifest.json"):
        assert _raw_status(port, f"/c/1/r/escape/file/{name}", TOKEN) == 404


def test_a_running_campaign_shows_progress_live(page, world):
    import fcntl

    from playwright.sync_api import expect

    from clinbench.campaign.campaign import LOCK_FILE, PLAN_FILE
    hostile = world["hostile"]
    plan = ["mimic-sofa-24h.no-skill.native.hostile.t0", "live-1", "live-2"]
    (hostile / PLAN_FILE).write_text(json.dumps({"planned": plan}))
    with (hostile / LOCK_FILE).open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        page.goto(f"{world['base']}/c/1")
        assert page.inner_text("main > p .progress .state") == "running"
        assert page.inner_text("main > p .progress .left") == "2"
        # the campaign's process records two runs, as `clinbench run` does between the app's polls
        subprocess.run([sys.executable, "-c", (
            "import sys; from clinbench.records import RunRecord; from clinbench.records.store import Store\n"
            "s = Store.open(sys.argv[1])\n"
            "s.record(RunRecord('live-1', 'derive', 'mimic-sofa-24h', status='ok', reward=1.0))\n"
            "s.record(RunRecord('live-2', 'derive', 'mimic-sofa-24h', status='agent-failed', reward=0.0))"),
            str(hostile)], check=True, timeout=60)
        expect(page.locator("main > p .progress .left")).to_have_text("0", timeout=20_000)  # polled, no reload
        assert page.inner_text("main > p .progress .done") == "2" and page.inner_text("main > p .progress .failed") == "1"
        fcntl.flock(fh, fcntl.LOCK_UN)
    expect(page.locator("main > p .progress .state")).to_have_text("idle", timeout=20_000)
    assert page.seen["errors"] == []


def test_a_clinician_plays_a_case_recorded_like_an_agent(page, world):
    from clinbench.dx.costs import VISIT_FEE, PriceTable

    play = world["play"]
    case = play.cases("test")[0]
    questions = ["When did the pain start and where is it now?", "Any fever, nausea or vomiting?"]
    tests = ["complete blood count", "urinalysis", "CT abdomen and pelvis with contrast"]
    prices = PriceTable.bundled()

    page.goto(f"{world['base']}/play?split=test")
    page.fill("#name", "dr-test")
    page.select_option("#case", str(case.case_id))
    page.click("#begin")
    assert page.inner_text("#vignette p") == case.case_summary
    assert page.inner_text("#cost-total") == "$0"
    page.fill("#text", "\n".join(questions))
    page.click("#ask")
    assert page.inner_text("#cost-total") == f"${VISIT_FEE:,.0f}"  # one visit, however many questions
    page.fill("#text", "\n".join(tests))
    page.click("#order")
    test_cost = sum(prices.price(t).price for t in tests)
    assert page.inner_text("#cost-total") == f"${VISIT_FEE + test_cost:,.0f}"
    assert page.inner_text("#cost-tests") == f"${test_cost:,.0f}"
    _shot(page, "play")

    # paused and resumed: the session is listed and reopens where it was
    page.goto(f"{world['base']}/play")
    page.click("#sessions a:text('resume')")
    assert page.inner_text("#cost-total") == f"${VISIT_FEE + test_cost:,.0f}"
    assert len(page.query_selector_all("#steps .step")) == 2

    truth = case.final_diagnosis.lower()
    bodies = []
    for r in list(page.seen["responses"]):
        try:
            bodies.append((r.url, r.body().decode("utf-8", "replace").lower()))
        except Exception:  # a redirect has no body
            continue
    assert bodies and not [u for u, b in bodies if truth in b], "the truth reached the browser before the commit"
    assert truth not in page.content().lower()

    page.fill("#text", case.final_diagnosis)
    page.click("#commit", timeout=120_000)  # judged and recorded before the page loads
    assert page.inner_text("#truth") == case.final_diagnosis
    assert page.inner_text("#judge-score").startswith("5")
    assert page.inner_text("#total-cost") == f"${VISIT_FEE + test_cost:,.0f}"
    assert page.inner_text("#tests-ordered") == "3"
    # each reply is marked as the gatekeeper marked it in the evidence, and the running cost ends at the total
    from clinbench.records.store import Store

    (row,) = [r for r in Store.open(play.store_dir).runs() if r["agent"] == "human:dr-test"]
    events = [json.loads(x) for x in (play.store_dir / row["evidence_dir"] / "transcript.jsonl").read_text().splitlines()]
    marks = {"REAL": "record", "SYNTHETIC": "synthesized", "REFUSED": "refused"}
    shown = [(tr.query_selector("td:nth-child(2)").inner_text(), tr.query_selector("td:nth-child(5)").inner_text())
             for tr in page.query_selector_all("#turns tr.ev-question, #turns tr.ev-test")]
    assert shown == [(e["event"], marks[e["source"]]) for e in events if e["event"] in ("question", "test")]
    assert len(shown) == 5
    assert page.query_selector_all("#turns tbody tr")[-1].query_selector("td:last-child").inner_text() == \
        f"${VISIT_FEE + test_cost:,.0f}"
    _shot(page, "encounter")

    agents = {a["agent"]: a for a in json.loads(_cli("dx", "stats", str(play.store_dir), "--json"))["agents"]}
    assert (agents["human:dr-test"]["runs"], agents["human:dr-test"]["accuracy"]) == (1, 1.0)
    assert agents["human:dr-test"]["mean_cost"] == VISIT_FEE + test_cost
    assert agents["human:dr-test"]["mean_tests"] == 3.0  # compared with the agents' tests ordered per case
    assert page.seen["errors"] == [] and page.seen["dialogs"] == []


def test_a_clinician_reaching_the_server_by_a_network_name_can_start_a_case(browser, world):
    # found by a review: from a page served with Referrer-Policy no-referrer, chromium posts forms with
    # Origin null, and to an origin it does not trust (a LAN name or address, not loopback) it sends no
    # Sec-Fetch-Site: the cross-site guard refused every clinician's form there (403)
    context = browser.new_context()
    context.set_default_timeout(90_000)
    try:
        pg = context.new_page()
        pg.goto(f"http://clinic.test:{world['port']}/play?split=test&token={TOKEN}")
        case = world["play"].cases("test")[0]
        pg.fill("#name", "dr-lan")
        pg.select_option("#case", str(case.case_id))
        with pg.expect_response(lambda r: r.url.endswith("/play/start")) as started:
            pg.click("#begin")
        assert started.value.status == 303
        assert pg.inner_text("#vignette p") == case.case_summary
        # a page of another site posting the same form is still refused
        evil = context.new_page()
        port = world["port"]
        evil.set_content(f'<form method="post" action="http://clinic.test:{port}/play/start">'
                         '<input name="name" value="x"><input name="case_id" value="1"><button id="go">go</button></form>')
        with evil.expect_response(lambda r: r.url.endswith("/play/start")) as refused:
            evil.click("#go")
        assert refused.value.status == 403
    finally:
        context.close()


def test_the_app_never_wrote_to_the_derivation_store(world):
    """Run last in this module: every page above read the campaign folder; not one byte of it changed."""
    assert _tree(world["campaign"]) == world["before"]


def test_the_llm_gatekeeper_answers_a_clinician_and_replays_come_from_the_cache(world, tmp_path):
    """Clinician mode with the LLM gatekeeper (a scripted OpenAI-compatible server on loopback, through
    the real client). Each page replays the turns; the model-call cache answers the replays, so the
    server hears each request once. (In this module: it shares the gatekeeper's one-time loading.)"""
    from clinbench.dx.costs import VISIT_FEE, PriceTable
    from clinbench.dx.models import RoleSpec
    from clinbench.records.store import Store
    from clinbench.serve.play import Play

    sys.path.insert(0, str(Path(__file__).parents[1] / "dx"))
    from model_server import ModelServer, tool

    script = [tool("reply", reply="No fever, he says.", source="REAL"), tool("reply", reply="Lipase: 28 U/L.", source="REAL")]
    with ModelServer(script) as srv:
        play = Play(tmp_path / "clinicians", "demo", gatekeeper="llm", cache_dir=tmp_path / "model-cache",
                    roles={"gatekeeper": RoleSpec("gatekeeper", "gk-model", base_url=srv.base_url, api_key="k")})
        case = play.cases("test")[0]
        sid = play.start("dr-llm", case.case_id, "test")["id"]
        play.act(sid, "question", ["Any fever?"])
        assert "A: No fever, he says." in play.view(sid).steps[0].reply
        play.act(sid, "test", ["lipase"])
        view = play.view(sid)
        assert "Result: Lipase: 28 U/L." in view.steps[1].reply
        assert view.cost == VISIT_FEE + PriceTable.bundled().price("lipase").price
        play.view(sid)
        play.act(sid, "diagnosis", [case.final_diagnosis])
        assert len(srv.requests) == 2  # four replays and the recorded encounter asked nothing twice
    (row,) = Store.open(tmp_path / "clinicians").runs()
    assert (row["agent"], row["gatekeeper"], row["cost"]) == ("human:dr-llm", "llm:gk-model", view.cost)


def test_a_paused_case_resumes_after_a_restart_and_only_with_its_case_set(world, tmp_path):
    """(In this module: it shares the gatekeeper's one-time loading.)"""
    from clinbench.dx.cases import demo_cases
    from clinbench.serve.play import Play, PlayError

    store = tmp_path / "clinicians"
    first = Play(store, "demo")
    case = first.cases("test")[0]
    sid = first.start("dr-pause", case.case_id, "test")["id"]
    first.act(sid, "question", ["Any fever?"])
    before = first.view(sid)
    again = Play(store, "demo")  # a new app over the same store
    after = again.view(sid)
    assert [(s.action, s.reply, s.cost_after) for s in after.steps] == [(s.action, s.reply, s.cost_after) for s in before.steps]
    assert [s["id"] for s in again.sessions()] == [sid]

    dataset = tmp_path / "dataset.json"
    dataset.write_text(json.dumps([c.record() for c in demo_cases()[:2]]))
    other = Play(store, str(dataset))
    assert other.sessions() == []
    with pytest.raises(PlayError, match="restart `clinbench serve` with --cases demo"):
        other.view(sid)
