"""`clinbench dx`: the sequential-diagnosis benchmark (run, stats, judge, judge-calibrate, cases)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

console = Console()


def _key(api_key: Optional[str], api_key_env: Optional[str]) -> Optional[str]:
    """The key given (hidden --api-key), else the one in --api-key-env's variable (else the client's default)."""
    import os

    return api_key or (os.environ.get(api_key_env) if api_key_env else None)


def _chat(model: Optional[str], base_url: Optional[str], api_key: Optional[str]):
    from clinbench.dx.llm import JsonChat

    return JsonChat.from_env(model, base_url, api_key)


def register(app: typer.Typer) -> None:
    dx = typer.Typer(no_args_is_help=True, help="Sequential diagnosis: encounters, gatekeeper, judge, costs.")
    app.add_typer(dx, name="dx")

    @dx.command("run")
    def run(
        cases: str = typer.Option("demo", help="'demo' or a path to MIMIC-IV-Ext-SDBench dataset.json"),
        split: Optional[str] = typer.Option(None, help="train, validation or test"),
        agents: str = typer.Option(..., "--agent", help="one or several (comma-separated): oracle | instant-embed | order-all | scripted:FILE | llm | dxo"),
        gatekeeper: str = typer.Option("offline", help="offline | llm"),
        judge: str = typer.Option("offline", help="offline | llm"),
        out: Path = typer.Option(..., help="campaign folder (results.duckdb + runs/)"),
        trials: int = typer.Option(1, min=1, help="encounters per case and agent"),
        max_turns: int = typer.Option(20, min=1, help="turns before a forced diagnosis"),
        prices: Optional[Path] = typer.Option(None, help="your price CSV (code, description, price[, source])"),
        model: Optional[str] = typer.Option(None, help="model for llm agent/gatekeeper/judge"),
        base_url: Optional[str] = typer.Option(None, help="OpenAI-compatible base URL (default OPENAI_BASE_URL)"),
        api_key_env: Optional[str] = typer.Option(None, "--api-key-env", help="environment variable holding the API key (default OPENAI_API_KEY)"),
        api_key: Optional[str] = typer.Option(None, hidden=True, help="the API key itself (prefer --api-key-env)"),
        limit: Optional[int] = typer.Option(None, min=1, help="run only the first N cases"),
    ) -> None:
        """Play encounters and record them in the campaign store."""
        from clinbench.dx.cases import load_cases
        from clinbench.dx.costs import DEFAULT_UNMATCHED_PRICE, PriceTable
        from clinbench.dx.run import DxConfig, run_campaign

        selected = load_cases(cases, split=split)[:limit]
        names = [a.strip() for a in agents.split(",") if a.strip()]
        uses_model = any(a in ("llm", "dxo") for a in names) or "llm" in (gatekeeper, judge)
        if uses_model and any(not c.synthetic for c in selected):
            console.print("[yellow]note:[/] these are credentialed MIMIC cases: PhysioNet's guidance on using "
                          "MIMIC with language models asks for a local model or a provider that does not "
                          "retain or train on the data (the gatekeeper and judge see the whole note).")
        table = PriceTable.load(prices)

        def run_agent(agent: str) -> None:
            cfg = DxConfig(agent=agent, gatekeeper=gatekeeper, judge=judge, trials=trials, max_turns=max_turns,
                           model=model or "", base_url=base_url, api_key=_key(api_key, api_key_env))
            with console.status(f"running {agent} on {len(selected)} case(s)") as status:
                done = [0]

                def tick(rec) -> None:
                    done[0] += 1
                    status.update(f"{agent}: {done[0]}/{len(selected) * trials} runs (last: case {rec.task}, "
                                  f"judge {rec.judge_score}, ${rec.cost or 0:,.0f})")

                new = run_campaign(selected, cfg, out, prices=table, progress=tick)
            scored = [r for r in new if r.reward is not None]
            ordered = unmatched = 0
            for r in new:
                ledger = Path(out) / (r.evidence_dir or "") / "ledger.json"
                if ledger.is_file():
                    data = json.loads(ledger.read_text())
                    ordered += data["tests_ordered"]
                    unmatched += data["tests_unmatched"]
            acc = sum(r.reward for r in scored) / len(scored) if scored else float("nan")
            cost = sum(r.cost for r in scored) / len(scored) if scored else float("nan")
            console.print(f"{len(new)} new run(s) in {out} (skipped {len(selected) * trials - len(new)} already done); "
                          f"accuracy {acc:.1%}, mean cost ${cost:,.0f}; prices: {table.label}, "
                          f"{ordered - unmatched}/{ordered} orders matched a price "
                          f"(others charged ${DEFAULT_UNMATCHED_PRICE:,.0f})")

        for agent in names:
            run_agent(agent)

    @dx.command("stats")
    def stats(
        directory: Path = typer.Argument(..., help="campaign folder"),
        compare: Optional[str] = typer.Option(None, help="A:B, one-sided paired permutation test (A better than B)"),
        plot: Optional[Path] = typer.Option(None, help="accuracy-cost SVG (default DIR/dx_accuracy_cost.svg)"),
        as_json: bool = typer.Option(False, "--json", help="print JSON"),
    ) -> None:
        """Accuracy (judge >= 4) with 95% bootstrap CI, mean cost, plot, paired test."""
        from clinbench.dx import stats as dxstats

        runs = dxstats.dx_runs(directory)
        summaries = dxstats.summarise(runs)
        svg = dxstats.accuracy_cost_svg(summaries, plot or Path(directory) / "dx_accuracy_cost.svg")
        test = None
        if compare:
            a, sep, b = compare.partition(":")
            if not sep:
                from clinbench.errors import ClinbenchError

                raise ClinbenchError("--compare needs two agents as A:B")
            test = dxstats.compare(runs, a, b)
        if as_json:
            print(json.dumps({"agents": [asdict(s) for s in summaries], "plot": str(svg),
                              "comparison": asdict(test) if test else None}, indent=1))
            return
        t = Table(title=f"dx runs in {directory}")
        for col in ("agent", "runs", "accuracy", "95% CI", "mean cost", "mean judge", "errors"):
            t.add_column(col)
        for s in summaries:
            t.add_row(s.agent, str(s.runs), f"{s.accuracy:.1%}", f"[{s.ci[0]:.1%}, {s.ci[1]:.1%}]",
                      f"${s.mean_cost:,.0f}", f"{s.mean_judge:.2f}", str(s.errors))
        console.print(t)
        if test:
            console.print(f"{test.agent_a} vs {test.agent_b}: {test.pairs} paired runs, accuracy "
                          f"{test.accuracy_a:.1%} vs {test.accuracy_b:.1%}, one-sided p = {test.p_value:.4g}")
        console.print(f"plot: {svg}")

    @dx.command("judge")
    def judge_cmd(
        reference: Optional[str] = typer.Option(None, help="reference diagnosis"),
        candidate: Optional[str] = typer.Option(None, help="candidate diagnosis"),
        pairs: Optional[Path] = typer.Option(None, help="CSV with columns reference, candidate"),
        judge: str = typer.Option("offline", help="offline | llm"),
        as_json: bool = typer.Option(False, "--json", help="print JSON"),
        model: Optional[str] = typer.Option(None, help="model for --judge llm"),
        base_url: Optional[str] = typer.Option(None, help="OpenAI-compatible base URL (default OPENAI_BASE_URL)"),
        api_key_env: Optional[str] = typer.Option(None, "--api-key-env", help="environment variable holding the API key (default OPENAI_API_KEY)"),
        api_key: Optional[str] = typer.Option(None, hidden=True, help="the API key itself (prefer --api-key-env)"),
    ) -> None:
        """Score one (reference, candidate) pair, or every row of --pairs, on the 1-5 rubric."""
        from clinbench.dx.judge import make_judge, read_pairs
        from clinbench.errors import ClinbenchError

        if pairs is not None:
            items = read_pairs(pairs)
        elif reference is not None and candidate is not None:
            items = [(reference, candidate)]
        else:
            raise ClinbenchError("give --reference and --candidate, or --pairs FILE.csv")
        j = make_judge(judge, chat=_chat(model, base_url, _key(api_key, api_key_env)) if judge == "llm" else None)
        rows = []
        for ref, cand in items:
            v = j.score(ref, cand)
            rows.append({"reference": ref, "candidate": cand, "score": v.score, "correct": v.correct, "reason": v.reason})
        if as_json:
            print(json.dumps(rows if pairs is not None else rows[0], indent=1))
            return
        for r in rows:
            console.print(f"[bold]{r['score']}[/] {'correct' if r['correct'] else 'not correct'}: "
                          f"{r['candidate']!r} vs {r['reference']!r} ({r['reason']})", highlight=False)

    @dx.command("judge-calibrate")
    def judge_calibrate(
        judge: str = typer.Option("offline", help="offline | llm"),
        pairs: Optional[Path] = typer.Option(None, help="CSV reference,candidate,expected (default: bundled set)"),
        as_json: bool = typer.Option(False, "--json", help="print JSON"),
        show: int = typer.Option(0, help="print up to N pairs where judge and expectation disagree on correctness"),
        model: Optional[str] = typer.Option(None, help="model for --judge llm"),
        base_url: Optional[str] = typer.Option(None, help="OpenAI-compatible base URL (default OPENAI_BASE_URL)"),
        api_key_env: Optional[str] = typer.Option(None, "--api-key-env", help="environment variable holding the API key (default OPENAI_API_KEY)"),
        api_key: Optional[str] = typer.Option(None, hidden=True, help="the API key itself (prefer --api-key-env)"),
    ) -> None:
        """Agreement of a judge with the calibration set: exact agreement, Cohen's kappa on >= 4."""
        from clinbench.dx.judge import calibrate, calibration_pairs, make_judge

        items = calibration_pairs(pairs)
        j = make_judge(judge, chat=_chat(model, base_url, _key(api_key, api_key_env)) if judge == "llm" else None)
        with console.status(f"judging {len(items)} pairs"):
            cal = calibrate(j, items)
        if as_json:
            print(json.dumps({"pairs": cal.pairs, "exact_agreement": cal.exact_agreement,
                              "within_one": cal.within_one, "kappa_correct": cal.kappa_correct,
                              "confusion": cal.confusion}, indent=1))
            return
        console.print(f"{cal.pairs} pairs: exact agreement {cal.exact_agreement:.1%}, within one point "
                      f"{cal.within_one:.1%}, Cohen's kappa (correct = score >= 4) {cal.kappa_correct:.3f}")
        for p, v in cal.disagreements[:show]:
            console.print(f"  expected {p.expected}, judged {v.score}: {p.candidate!r} vs {p.reference!r}", highlight=False)

    @dx.command("cases")
    def cases_cmd(
        cases: str = typer.Option("demo", help="'demo' or a path to dataset.json"),
        split: Optional[str] = typer.Option(None, help="train, validation or test"),
        as_json: bool = typer.Option(False, "--json", help="print the cases as JSON"),
    ) -> None:
        """List cases (id, split, number of tests, vignette)."""
        from clinbench.dx.cases import load_cases

        if as_json:
            print(json.dumps([{"case": str(c.case_id), "splits": list(c.case_sets), "tests": len(c.tests),
                               "vignette": c.case_summary} for c in load_cases(cases, split=split)], indent=1))
            return
        t = Table()
        for col in ("case", "split", "tests", "vignette"):
            t.add_column(col)
        for c in load_cases(cases, split=split):
            t.add_row(str(c.case_id), ",".join(c.case_sets), str(len(c.tests)), c.case_summary[:90])
        console.print(t)
