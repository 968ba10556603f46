"""The diagnosis stack at the scale of MIMIC-IV-Ext-SDBench: 488 note-layout cases, --jobs 4, kill -9.

    .venv/bin/python benchmarks/dx_scale.py [--cases 488] [--jobs 4] [--agent ed-workup] [--kills 3] [--out DIR]

Makes N synthetic cases in the MIMIC-IV-Note layout from the ``demo-notes`` cases round-robin
(case ids 1001, 1002, ...; the dataset has 488 cases), each round a jittered copy so that no two
notes are the same text (``_jitter``; the figure is throughput, not accuracy), and writes them as
a dataset.json. Then, each stage a real
``clinbench dx run --cases dataset.json`` process (the campaign engine: offline gatekeeper and
judge, the store and evidence, ``--jobs`` worker processes):

1. anchor: the first 28 cases with ``--jobs 1`` (same machine, same run);
2. throughput: all N cases with ``--jobs J``, uninterrupted: wall time, cases per minute, and its
   ratio to the anchor's;
3. resume: the same N cases into a fresh folder, the process killed with SIGKILL when it has
   recorded 15%, 45% and 75% of them (``--kills``), rerun after each kill, then run to the end;
   checked: every encounter recorded exactly once (store rows = distinct run ids = evidence
   folders = N), no partial folder left;
4. model-call cache: the ``baseline`` agent on a loopback OpenAI-compatible stub (one call per
   encounter), with ``--cache``, killed once and resumed: model requests the stub received;
   then the same campaign into a new folder with the same cache: calls again (0 expected; the
   endpoint check each run makes is counted apart).

Every figure is printed; the process exits 1 when a check fails. ``--record`` writes the row it
measured, ``dx_scale:throughput`` (stage 2 against stage 1, with stages 3 and 4), into
docs/performance.json (``benchmarks/figures.py``) when every check passed; then render the table
with ``benchmarks/performance_table.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import duckdb

from clinbench.dx.cases import Case, demo_cases, load_cases
from clinbench.dx.note_layout import NOTE_ID_OFFSET, note_case
from clinbench.records import STORE_FILE

sys.path.insert(0, str(Path(__file__).resolve().parent))
import figures  # noqa: E402  (benchmarks/figures.py: the figures store)

ANCHOR_CASES = 28


def _jitter(case: Case, k: int) -> Case:
    """Copy ``k`` of a demo case, its text distinct from every other copy's: the vignette's age
    k years older (a third of that under 18), every number under its results headings k x 0.4%
    larger at the same decimals (the note's ``*`` flags are recomputed from the new values). A
    worker embeds a text it has seen once only, so identical copies would time less work than
    488 distinct notes are."""
    if k == 0:
        return case

    def older(m: re.Match) -> str:
        age = int(m.group(1))
        return f"{age + (k if age >= 18 else k // 3)}-year-old"

    def scaled(m: re.Match) -> str:
        text = m.group(0)
        decimals = len(text.split(".")[1]) if "." in text else 0
        return f"{float(text.replace(',', '')) * (1 + 0.004 * k):.{decimals}f}"

    summary = re.sub(r"(\d{1,3})-year-old", older, case.case_summary, count=1)
    body, results = [], False
    for line in case.full_text[len(case.case_summary):].splitlines():
        if re.fullmatch(r"[A-Z][a-z ]+:", line.strip()):
            results = line.strip().lower() in ("pertinent results:", "imaging:")
        elif results and ": " in line:
            name, value = line.split(": ", 1)
            line = f"{name}: " + re.sub(r"(?<![\w.])\d[\d,]*(?:\.\d+)?", scaled, value)
        body.append(line)
    return case.model_copy(update={"case_summary": summary, "full_text": summary + "\n".join(body)})


def note_cases(n: int) -> list[dict]:
    """N distinct note-layout cases: the demo-notes cases round-robin, each round a jittered copy."""
    demo = {c.case_id: c for c in demo_cases()}
    base = [c.case_id - NOTE_ID_OFFSET for c in load_cases("demo-notes")]
    return [note_case(_jitter(demo[base[i % len(base)]], i // len(base))).model_copy(
        update={"case_id": 1001 + i, "hadm_id": None}).model_dump() for i in range(n)]


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "clinbench", "dx", "run", *args]


def recorded(out: Path) -> int:
    store = out / STORE_FILE
    if not store.is_file():
        return 0
    try:
        with duckdb.connect(str(store), read_only=True) as con:
            return con.execute("SELECT count(*) FROM runs").fetchone()[0]
    except duckdb.Error:  # the campaign holds the write lock: count the published evidence instead
        runs = out / "runs"
        return sum(1 for _ in runs.iterdir()) if runs.is_dir() else 0


def _child_cpu() -> float:
    """CPU seconds of the finished child processes (a `dx run` and the workers it waited for)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def run(cmd: list[str], env: dict) -> tuple[float, float]:
    """(wall, CPU) seconds of ``cmd`` run to its end."""
    start, cpu = time.perf_counter(), _child_cpu()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-2000:]}")
    return time.perf_counter() - start, _child_cpu() - cpu


def kill_at(cmd: list[str], env: dict, out: Path, n: int) -> int:
    """Start ``cmd``, SIGKILL it once ``out`` holds ``n`` runs; the runs recorded then."""
    # stderr to a file: a pipe nobody reads fills at 64 KiB of progress lines and stalls the campaign
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=log)
        runs = out / "runs"
        while proc.poll() is None and (not runs.is_dir() or sum(1 for _ in runs.iterdir()) < n):
            time.sleep(0.05)
        if proc.poll() is not None:
            log.seek(0)
            sys.exit(f"the campaign ended before {n} runs: {log.read().decode(errors='replace')[-2000:]}")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    time.sleep(1.0)  # orphaned workers see their parent gone and stop
    return recorded(out)


def check_once(out: Path, n: int) -> list[str]:
    with duckdb.connect(str(out / STORE_FILE), read_only=True) as con:
        rows, distinct = con.execute("SELECT count(*), count(DISTINCT run_id) FROM runs").fetchone()
    folders = sorted(p.name for p in (out / "runs").iterdir())
    partial = list((out / ".partial").glob("*")) if (out / ".partial").is_dir() else []
    problems = []
    if not rows == distinct == len(folders) == n:
        problems.append(f"store rows {rows}, distinct run ids {distinct}, evidence folders {len(folders)}; expected {n}")
    if partial:
        problems.append(f"{len(partial)} partial folder(s) left")
    return problems


class _Stub(BaseHTTPRequestHandler):
    requests = 0  # the agent's calls
    checks = 0  # the endpoint check each `dx run` makes before it runs anything
    lock = threading.Lock()

    def do_POST(self):  # noqa: N802 - the http.server name
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        check = "Reply with the word ok." in json.dumps(body.get("messages", []))
        with _Stub.lock:
            _Stub.checks += check
            _Stub.requests += not check
        reply = {"id": "c", "object": "chat.completion", "created": 0, "model": body.get("model", "stub"),
                 "choices": [{"index": 0, "finish_reason": "stop", "message": {
                     "role": "assistant", "content": "<diagnosis>Community-acquired pneumonia</diagnosis>"}}],
                 "usage": {"prompt_tokens": 200, "completion_tokens": 10, "total_tokens": 210}}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=488)
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--agent", default="ed-workup")
    ap.add_argument("--kills", type=int, default=3, help="SIGKILLs in the resume stage (at 15%%, 45%%, 75%%, ...)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--record", action="store_true", help="write the measured row into docs/performance.json")
    args = ap.parse_args()
    load_at_start = figures.load_average()
    out = args.out or Path(tempfile.mkdtemp(prefix="dx-scale-"))
    out.mkdir(parents=True, exist_ok=True)
    dataset = out / "dataset.json"
    dataset.write_text(json.dumps(note_cases(args.cases)), encoding="utf-8")
    env = {**os.environ, "CLINBENCH_CACHE": os.environ.get("CLINBENCH_CACHE", str(out / "cache"))}
    common = ["--cases", str(dataset), "--agent", args.agent]
    failures: list[str] = []

    run(_cli(*common, "--max-cases", "1", "--jobs", "1", "--out", str(out / "warm")), env)  # caches built once
    anchor = min(ANCHOR_CASES, args.cases)
    t1, c1 = run(_cli(*common, "--max-cases", str(anchor), "--jobs", "1", "--out", str(out / "anchor")), env)
    rate1 = anchor / (t1 / 60)
    print(f"anchor: {anchor} note-layout cases, {args.agent}, --jobs 1: {t1:.1f} s wall, {c1:.1f} s CPU "
          f"({c1 / anchor:.2f} CPU s per case), {rate1:.1f} cases/minute")

    tj, cj = run(_cli(*common, "--jobs", str(args.jobs), "--out", str(out / "throughput")), env)
    rate = args.cases / (tj / 60)
    print(f"throughput: {args.cases} note-layout cases, {args.agent}, --jobs {args.jobs}: {tj:.1f} s wall, "
          f"{cj:.1f} s CPU ({cj / args.cases:.2f} CPU s per case), {rate:.1f} cases/minute "
          f"({rate / rate1:.2f}x the --jobs 1 anchor; {os.cpu_count()} cores; load average "
          f"{os.getloadavg()[0]:.1f})")
    failures += check_once(out / "throughput", args.cases)

    resumed = out / "resume"
    cmd = _cli(*common, "--jobs", str(args.jobs), "--out", str(resumed))
    start = time.perf_counter()
    points = [0.15 + 0.30 * i for i in range(args.kills)]
    kept = []
    for share in points:
        kept.append(kill_at(cmd, env, resumed, max(1, int(share * args.cases))))
    run(cmd, env)
    total = time.perf_counter() - start
    print(f"resume: SIGKILL at {', '.join(f'{p:.0%}' for p in points)} of {args.cases} cases kept "
          f"{', '.join(map(str, kept))} recorded runs; reruns finished the rest in {total:.1f} s in all")
    problems = check_once(resumed, args.cases)
    print("resume: every encounter recorded exactly once" if not problems else "resume: " + "; ".join(problems))
    failures += problems

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    small = min(args.cases, 120)
    model = ["--agent", "baseline", "--agent-model", "stub", "--agent-base-url", url, "--agent-api-key-env", "PATH",
             "--cache", str(out / "model-cache"), "--cases", str(dataset), "--max-cases", str(small),
             "--jobs", str(args.jobs)]
    first = _cli(*model, "--out", str(out / "cached-a"))
    kill_at(first, env, out / "cached-a", small // 2)
    run(first, env)
    calls_first = _Stub.requests
    failures += check_once(out / "cached-a", small)
    run(_cli(*model, "--out", str(out / "cached-b")), env)
    calls_again = _Stub.requests - calls_first
    server.shutdown()
    distinct = len({c["case_summary"] for c in note_cases(small)})
    print(f"model-call cache: {small} baseline encounters (one call each, {distinct} distinct vignettes), killed once "
          f"and resumed: {calls_first} model calls reached the stub; the same campaign again into a new folder with "
          f"the same cache: {calls_again} ({_Stub.checks} endpoint checks besides)")
    if calls_again:
        failures.append(f"{calls_again} calls were not served from the cache")
    print(f"folder: {out}")
    if failures:
        print("FAILED: " + "; ".join(failures) + ("; nothing recorded" if args.record else ""))
        sys.exit(1)
    if args.record:
        figures.record([{
            "id": "dx_scale:throughput",
            "what": f"diagnosis at the dataset's scale: {args.cases} distinct note-layout cases, offline `{args.agent}`, "
                    f"`dx run --jobs {args.jobs}`",
            "clinbench": f"{tj:.1f} s wall, {cj:.1f} s CPU ({cj / args.cases:.2f} CPU s per case): {rate:.1f} cases/minute; "
                         f"SIGKILL at {'/'.join(f'{p * 100:.0f}' for p in points)}% kept {'/'.join(map(str, kept))} runs, "
                         f"every encounter recorded once after the reruns; model-call cache: {calls_first} calls for "
                         f"{small} encounters across a kill, {calls_again} on a rerun",
            "anchor": f"the first {anchor} cases with `--jobs 1`, same run: {t1:.1f} s wall, {c1:.1f} s CPU, "
                      f"{rate1:.1f} cases/minute",
            "ratio": f"{rate / rate1:.2f}x cases/minute", "goal": None, "met": None}], figures.this_run(load_at_start))
        print(f"recorded in {figures.FIGURES}")


if __name__ == "__main__":
    main()
