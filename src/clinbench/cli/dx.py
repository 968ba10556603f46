"""`clinbench dx`: the sequential-diagnosis benchmark (run, rejudge, stats, judge, judge-check, cases)."""

from __future__ import annotations

import functools
import inspect
import json
import os
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from clinbench.cli._console import make_console, styled
from clinbench.records import RunStatus

console = make_console()


ROLE_PARAMS = ("temperature", "max_tokens", "price_in", "price_out")
_ROLE_MODEL_HELP = {"agent": "model of the baseline/dxo agent", "gatekeeper": "model of the llm gatekeeper",
                    "judge": "model of the llm judge (--judge llm)"}


def _role_parameters(role: str) -> list[inspect.Parameter]:
    """The five options of one model role: --ROLE-model, -provider, -base-url, -api-key-env, hidden -api-key."""
    def option(name: str, annotation: Any, default: Any, **kw: Any) -> inspect.Parameter:
        return inspect.Parameter(f"{role}_{name.replace('-', '_')}", inspect.Parameter.KEYWORD_ONLY,
                                 default=typer.Option(default, f"--{role}-{name}", rich_help_panel=f"The {role}'s model",
                                                      **kw), annotation=annotation)

    return [
        option("model", Optional[str], None, help=_ROLE_MODEL_HELP[role]),
        option("provider", str, "openai", help="openai (any compatible server) | anthropic"),
        option("base-url", Optional[str], None, help=f"{role} endpoint (default OPENAI_BASE_URL / ANTHROPIC_BASE_URL)"),
        option("api-key-env", Optional[str], None,
               help=f"environment variable holding the {role}'s API key (default OPENAI_API_KEY / ANTHROPIC_API_KEY)"),
        option("api-key", Optional[str], None, hidden=True, help=f"the {role}'s API key itself (prefer --{role}-api-key-env)"),
    ]


def with_roles(*roles: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command the five options of each model role, declared once here; the command gets them
    as ``models={role: (model, provider, base_url, api_key)}`` (the key given, else its variable's)."""
    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        signature = inspect.signature(command)
        own = [p for name, p in signature.parameters.items() if name != "models"]

        @functools.wraps(command)
        def with_models(**kw: Any) -> None:
            models = {}
            for role in roles:
                model, provider, base_url, key_env, key = (kw.pop(f"{role}_{n}") for n in
                                                           ("model", "provider", "base_url", "api_key_env", "api_key"))
                models[role] = (model, provider, base_url, _key(key, key_env))
            return command(models=models, **kw)

        with_models.__signature__ = signature.replace(
            parameters=own + [p for role in roles for p in _role_parameters(role)])
        return with_models

    return decorate


def _key(api_key: Optional[str], api_key_env: Optional[str]) -> Optional[str]:
    """The key given (hidden --ROLE-api-key), else the one in --ROLE-api-key-env's variable (else the client's default)."""
    import os

    return api_key or (os.environ.get(api_key_env) if api_key_env else None)


def role_specs(models: dict[str, tuple], params: list[str]) -> dict:
    """RoleSpecs from the per-role options and ``--param ROLE.KEY=VALUE`` settings."""
    from clinbench.dx.models import ROLES, RoleSpec
    from clinbench.errors import ClinbenchError

    extra: dict[str, dict] = {r: {} for r in ROLES}
    for item in params:
        key, eq, value = item.partition("=")
        role, dot, name = key.partition(".")
        if not (eq and dot) or role not in ROLES or name not in ROLE_PARAMS:
            raise ClinbenchError(f"--param {item!r}: use ROLE.KEY=VALUE with ROLE one of {', '.join(ROLES)} "
                                 f"and KEY one of {', '.join(ROLE_PARAMS)}")
        try:
            extra[role][name] = int(value) if name == "max_tokens" else float(value)
        except ValueError:
            raise ClinbenchError(f"--param {item!r}: {value!r} is not a number") from None
    out = {}
    for role, (model, provider, base_url, api_key) in models.items():
        if model:
            out[role] = RoleSpec(role, model, provider, base_url, api_key, **extra[role])
        elif extra[role]:
            raise ClinbenchError(f"--param {role}.…: the {role} has no model (pass --{role}-model)")
    return out


def _scored_line(records) -> str:
    """Each agent's accuracy and mean cost over ``records``, case-balanced and by the audit's rule as `dx stats`
    gives them (runs of two agents never pooled into one figure; a flagged run left out, a charged one wrong),
    never 'nan'."""
    from clinbench.stats import accuracy
    from clinbench.stats.formatting import usd_text

    runs = accuracy.audited([r.to_json() for r in records])
    failed = sum(r.status == RunStatus.AGENT_FAILED for r in records)
    harness = sum(r.status == RunStatus.HARNESS_ERROR for r in records)
    notes = ", ".join(x for x in (f"{failed} agent-failed (counted wrong)" if failed else "",
                                  f"{harness} harness-error (left out; see error)" if harness else "",
                                  f"{runs.flagged_excluded} flagged by the audit (left out)" if runs.flagged_excluded else "",
                                  f"{runs.flagged_charged} charged by the audit (counted wrong)" if runs.flagged_charged else "")
                      if x)
    summaries = [s for s in accuracy.summarise(runs) if s.accuracy is not None]
    if not summaries:
        return f"no run was scored ({notes or 'no runs'})"
    return "; ".join(f"{s.agent}: accuracy {s.accuracy:.1%} of {s.scored} scored, mean cost {usd_text(s.mean_cost)}"
                     for s in summaries) + (f"; {notes}" if notes else "")


def _judge_model(models: dict[str, tuple]):
    from clinbench.dx.models import RoleModel

    spec = role_specs(models, []).get("judge")
    return RoleModel(spec) if spec else None


def register(app: typer.Typer) -> None:
    dx = typer.Typer(no_args_is_help=True, help="Sequential diagnosis: encounters, gatekeeper, judge, costs.")
    app.add_typer(dx, name="dx")

    @dx.command("run")
    @with_roles("agent", "gatekeeper", "judge")
    def run(
        cases: str = typer.Option("demo", help="'demo', 'demo-notes' (the demo cases as MIMIC-IV-Note discharge summaries) or the path of a dataset.json of MIMIC-IV-Ext-SDBench"),
        split: Optional[str] = typer.Option(None, help="train, validation or test"),
        agents: str = typer.Option(..., "--agent", help="one or several (comma-separated): oracle | ed-workup | ed-instant | scripted:FILE | baseline | dxo"),
        mode: str = typer.Option("no-budget", help="dxo mode: no-budget | budgeted | question-only | instant | ensemble"),
        budget: Optional[float] = typer.Option(None, help="USD budget of the dxo budgeted mode"),
        panels: int = typer.Option(3, min=2, help="panels of the dxo ensemble mode"),
        gatekeeper: str = typer.Option("offline", help="offline | llm"),
        judge: str = typer.Option("offline", help="offline | llm"),
        out: Path = typer.Option(..., help="campaign folder (results.duckdb + runs/)"),
        trials: int = typer.Option(1, min=1, help="encounters per case and agent"),
        max_turns: int = typer.Option(20, min=1, help="turns before a forced diagnosis"),
        prices: Optional[Path] = typer.Option(None, "--test-prices", help="your price CSV of tests (code, description, price[, source])"),
        param: list[str] = typer.Option([], help="ROLE.KEY=VALUE: temperature, max_tokens, price_in or price_out (USD per 1M tokens)"),
        allow_self_judge: bool = typer.Option(False, "--allow-self-judge", help="let the agent's own model judge it (marked in reports)"),
        cache: Optional[Path] = typer.Option(None, help="model-call cache folder (off by default)"),
        jobs: int = typer.Option(os.cpu_count() or 1, min=1, show_default=False,
                                 help="encounters run at once, in worker processes (default: the machine's cores)"),
        executor: str = typer.Option("local", "--executor", help="local or ray"),
        ray_address: Optional[str] = typer.Option(None, "--ray-address", help="address of a running Ray cluster"),
        retry_failed: bool = typer.Option(False, "--retry-failed", help="redo runs recorded as harness-error"),
        retry_agent_failed: bool = typer.Option(False, "--retry-agent-failed",
                                                help="redo agent-failed runs too, after fixing a setup fault (a wrong "
                                                     "key): re-rolls only the failed attempts; a new --out redoes all"),
        mimic_db: Optional[Path] = typer.Option(None, help="MIMIC-IV DuckDB: lab orders of cases with a hadm_id get the admission's real labevents"),
        max_cases: Optional[int] = typer.Option(None, "--max-cases", min=1, help="run only the first N cases"),
        *, models: dict[str, tuple],
    ) -> None:
        """Play encounters and record them in the campaign store."""
        from clinbench.campaign.progress import RichReporter
        from clinbench.dx.cases import load_cases
        from clinbench.dx.costs import DEFAULT_UNMATCHED_PRICE, PriceTable
        from clinbench.dx.orchestrator import DxoSettings
        from clinbench.campaign.campaign import CampaignInterrupted
        from clinbench.cli._campaign import finished, interrupted
        from clinbench.dx.run import DxConfig, check_configs, preflight, run_dx_campaign
        from clinbench.report.provenance import record_command

        roles = role_specs(models, param)
        selected = load_cases(cases, split=split)[:max_cases]
        configs = [DxConfig(agent=a.strip(), gatekeeper=gatekeeper, judge=judge, trials=trials, max_turns=max_turns,
                            roles=roles, dxo=DxoSettings(mode, budget, panels), allow_self_judge=allow_self_judge,
                            cache_dir=cache, mimic_db=mimic_db)
                   for a in agents.split(",") if a.strip()]
        check_configs(selected, configs)  # every name and role is checked before anything runs
        preflight(configs)  # every model role's endpoint answers, or nothing is recorded
        if roles and any(not c.synthetic for c in selected):
            console.print(styled("[yellow]note:[/] these are credentialed MIMIC cases: PhysioNet's guidance on using "
                                 "MIMIC with language models asks for a local model or a provider that does not "
                                 "retain or train on the data (the gatekeeper and judge see the whole note)."))
        if mimic_db is not None:
            from clinbench.dx.note_admissions import linked_admissions

            carried = [c for c in selected if c.hadm_id is not None]
            missing = len(carried) - linked_admissions(mimic_db, carried) if carried else 0
            if missing:
                console.print(styled("[yellow]note:[/] {} holds no admission for {} of {} cases' hadm_id: their lab "
                                     "orders are answered from the record{}", mimic_db, missing, len(carried),
                                     " (write the demo-notes admissions with `clinbench data synth mimic-iv --notes`)"
                                     if cases == "demo-notes" else ""))
        if any(cfg.self_judge for cfg in configs):
            console.print(styled("[yellow]note:[/] the judge is the agent's own model (--allow-self-judge); "
                                 "rows are marked +self-judge"))
        table = PriceTable.load(prices)
        try:
            summary = run_dx_campaign(selected, configs, out, prices=table, reporter=RichReporter(console), jobs=jobs,
                                      executor=executor, ray_address=ray_address, retry_failed=retry_failed,
                                      retry_agent_failed=retry_agent_failed,
                                      started=lambda: record_command(out))
        except CampaignInterrupted as exc:
            interrupted(exc)
        new = summary.records
        finished(summary, out)
        ordered = unmatched = 0
        for r in new:
            ledger = Path(out) / (r.evidence_dir or "") / "ledger.json"
            if ledger.is_file():
                data = json.loads(ledger.read_text())
                ordered += data["tests_ordered"]
                unmatched += data["tests_unmatched"]
        console.print(f"{len(new)} new run(s) in {out}: {_scored_line(new)}; prices: {table.label}, "
                      f"{ordered - unmatched}/{ordered} orders matched a price "
                      f"(others charged ${DEFAULT_UNMATCHED_PRICE:,.0f})")

    @dx.command("rejudge")
    @with_roles("judge")
    def rejudge_cmd(
        directory: Path = typer.Argument(..., help="campaign folder with stored encounters"),
        judge: str = typer.Option("llm", help="offline | llm"),
        param: list[str] = typer.Option([], help="judge.KEY=VALUE: temperature, max_tokens, price_in, price_out"),
        allow_self_judge: bool = typer.Option(False, "--allow-self-judge", help="let an agent's own model judge it (marked)"),
        cache: Optional[Path] = typer.Option(None, help="model-call cache folder"),
        *, models: dict[str, tuple],
    ) -> None:
        """Score stored encounters again with another judge (new rows; sealed evidence untouched)."""
        from clinbench.campaign.progress import RichReporter
        from clinbench.dx.rejudge import rejudge

        spec = role_specs(models, param).get("judge")
        new = rejudge(directory, judge, spec, allow_self_judge=allow_self_judge, cache_dir=cache,
                      reporter=RichReporter(console))
        console.print(f"{len(new)} encounter(s) re-judged in {directory}: {_scored_line(new)}")

    @dx.command("stats")
    def stats(
        directory: Path = typer.Argument(..., help="campaign folder"),
        compare: Optional[str] = typer.Option(None, help="BASE:NEW agents, as in `clinbench stats`: delta = NEW − BASE, one-sided paired permutation test (NEW more accurate than BASE)"),
        plot: Optional[Path] = typer.Option(None, help="accuracy-cost SVG (default DIR/dx_accuracy_cost.svg)"),
        as_json: bool = typer.Option(False, "--json", help="print JSON"),
        include_flagged: bool = typer.Option(False, "--include-flagged",
                                             help="keep runs the audit marked unpublishable, as recorded"),
    ) -> None:
        """Accuracy (judge >= 4) with 95% bootstrap CI, mean cost, plot, paired test."""
        from clinbench.report.dx_section import write_dx_plot
        from clinbench.stats import accuracy
        from clinbench.stats.formatting import pct_text, usd_text

        runs = accuracy.dx_runs(directory, include_flagged=include_flagged)
        summaries = accuracy.summarise(runs)
        svg = write_dx_plot(summaries, plot or Path(directory) / "dx_accuracy_cost.svg")
        test = accuracy.compare(runs, *accuracy.parse_pair(compare, runs)) if compare else None
        if as_json:
            print(json.dumps({"agents": [asdict(s) for s in summaries], "plot": str(svg) if svg else None,
                              "comparison": asdict(test) if test else None, "flagged_excluded": runs.flagged_excluded,
                              "flagged_charged": runs.flagged_charged}, indent=1))
            return
        t = Table(title=f"dx runs in {directory}")
        for col in ("agent", "runs", "accuracy", "95% CI", "mean cost", "tests/case", "mean judge", "errors"):
            t.add_column(col)
        for s in summaries:
            t.add_row(s.agent, str(s.runs), pct_text(s.accuracy),
                      f"[{s.ci[0]:.1%}, {s.ci[1]:.1%}]" if s.ci else "n/a", usd_text(s.mean_cost),
                      "n/a" if s.mean_tests is None else f"{s.mean_tests:.1f}",
                      "n/a" if s.mean_judge is None else f"{s.mean_judge:.2f}", str(s.errors))
        console.print(t)
        if test:
            console.print(f"{test.agent_a} → {test.agent_b}: {test.pairs} paired cases (trials averaged), accuracy "
                          f"{test.accuracy_a:.1%} → {test.accuracy_b:.1%}, delta {test.delta * 100:+.1f} points; "
                          f"one-sided p ({test.agent_b} more accurate) = {test.p_value:.4g}")
        console.print(f"{runs.audit_text()}; CIs resample whole cases")
        console.print(f"plot: {svg}" if svg else "no plot: no run was scored")

    @dx.command("judge")
    @with_roles("judge")
    def judge_cmd(
        reference: Optional[str] = typer.Option(None, help="reference diagnosis"),
        candidate: Optional[str] = typer.Option(None, help="candidate diagnosis"),
        pairs: Optional[Path] = typer.Option(None, help="CSV with columns reference, candidate"),
        judge: str = typer.Option("offline", help="offline | llm"),
        as_json: bool = typer.Option(False, "--json", help="print JSON"),
        *, models: dict[str, tuple],
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
        j = make_judge(judge, _judge_model(models))
        rows = []
        for ref, cand in items:
            v = j.score(ref, cand)
            rows.append({"reference": ref, "candidate": cand, "score": v.score, "correct": v.correct, "reason": v.reason})
        if as_json:
            print(json.dumps(rows if pairs is not None else rows[0], indent=1))
            return
        for r in rows:
            console.print(styled("[bold]{}[/] {}: {!r} vs {!r} ({})", r["score"],
                                 "correct" if r["correct"] else "not correct", r["candidate"], r["reference"],
                                 r["reason"]), highlight=False)

    @with_roles("judge")
    def judge_check(
        judge: str = typer.Option("offline", help="offline | llm"),
        pairs: Optional[Path] = typer.Option(None, help="CSV reference,candidate,expected (default: the three bundled sets)"),
        as_json: bool = typer.Option(False, "--json", help="print JSON"),
        show: int = typer.Option(0, help="print up to N pairs where judge and expectation disagree on correctness"),
        *, models: dict[str, tuple],
    ) -> None:
        """Agreement of a judge with labelled pairs: Cohen's kappa on correct (score >= 4), exact agreement.

        Without --pairs: the held-out check set (61 pairs), the specificity set (40 pairs on
        ICD-10-CM hypernyms and siblings) and the calibration set (261 pairs)."""
        from clinbench.dx.judge import LABELLED_SETS, calibrate, calibration_pairs, make_judge

        sets = {str(pairs): calibration_pairs(pairs)} if pairs is not None else {
            name: calibration_pairs(path) for name, path in LABELLED_SETS.items()}
        j = make_judge(judge, _judge_model(models))
        results = {}
        for name, items in sets.items():
            with console.status(f"judging {len(items)} pairs of {name}"):
                results[name] = calibrate(j, items)
        if as_json:
            out = {name: {"pairs": cal.pairs, "exact_agreement": cal.exact_agreement, "within_one": cal.within_one,
                          "kappa_correct": cal.kappa_correct, "confusion": cal.confusion}
                   for name, cal in results.items()}
            print(json.dumps(out[str(pairs)] if pairs is not None else out, indent=1))
            return
        for name, cal in results.items():
            console.print(f"{name}: {cal.pairs} pairs, Cohen's kappa (correct = score >= 4) {cal.kappa_correct:.3f}, "
                          f"exact agreement {cal.exact_agreement:.1%}, within one point {cal.within_one:.1%}",
                          highlight=False)
            for p, v in cal.disagreements[:show]:
                console.print(f"  expected {p.expected}, judged {v.score}: {p.candidate!r} vs {p.reference!r}",
                              highlight=False)

    dx.command("judge-check")(judge_check)
    dx.command("judge-calibrate", hidden=True)(judge_check)  # the former name

    @dx.command("cases")
    def cases_cmd(
        cases: str = typer.Option("demo", help="'demo', 'demo-notes' or a path to dataset.json"),
        split: Optional[str] = typer.Option(None, help="train, validation or test"),
        as_json: bool = typer.Option(False, "--json", help="print the cases as JSON"),
    ) -> None:
        """List cases (id, split, number of tests, vignette)."""
        from clinbench.dx.cases import load_cases

        chosen = load_cases(cases, split=split)
        if as_json:
            print(json.dumps([{"case": str(c.case_id), "splits": list(c.case_sets), "tests": len(c.tests),
                               "vignette": c.case_summary, "synthetic": c.synthetic} for c in chosen], indent=1))
            return
        synthetic = sum(c.synthetic for c in chosen)
        t = Table(title=f"{len(chosen)} cases" + (" (synthetic: written for clinbench, no patient's record)"
                                                  if synthetic == len(chosen) and chosen else
                                                  f" ({synthetic} synthetic)" if synthetic else ""))
        for col in ("case", "split", "tests", "vignette"):
            t.add_column(col)
        for c in chosen:
            t.add_row(str(c.case_id) + (" (synthetic)" if c.synthetic else ""), ",".join(c.case_sets),
                      str(len(c.tests)), c.case_summary[:90])
        console.print(t)
