"""The web app of `clinbench serve`: Starlette routes rendering Jinja2 templates.

Safety rules (transcripts, column names and model names are written by hostile agents):

* every page is a template with autoescape on: no agent- or record-controlled string is ever
  marked safe; figures are served as SVG images (``<img>``: a script in one cannot run);
* every response carries a Content-Security-Policy allowing scripts and styles from the app's
  own static files only (no inline script, no inline style, nothing from elsewhere);
* every request needs the access token (the ``token`` query parameter of the URL the command
  printed, then its cookie): without it, 403; a path with a ``..`` segment is 404;
* a request that changes state (any method but GET and HEAD) sent from another site (its
  ``Origin`` is not this server's, or ``Sec-Fetch-Site`` says cross-site) is 403; without the
  token (``--no-token``, loopback only), so is a request whose ``Host`` is not a loopback name
  (a page of another site reaching the server through DNS rebinding);
* stores are addressed by their position in the list the command line gave, runs by the id the
  store holds, evidence files by the name the run's manifest seals, each resolved inside its
  store's folder (``sources.inside``);
* derivation stores are opened read-only; the only writes are the clinician mode's, to its own
  dx store.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit

import jinja2
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp, Receive, Scope, Send

from clinbench.agents.egress import is_loopback
from clinbench.errors import ClinbenchError
from clinbench.serve import campaigns, evidence_view
from clinbench.serve.sources import Source, inside

HERE = Path(__file__).parent
COOKIE = "clinbench_token"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
HEADERS = {"content-security-policy": CSP, "x-content-type-options": "nosniff", "referrer-policy": "same-origin",
           "x-frame-options": "DENY", "cache-control": "no-store"}


SAFE_METHODS = ("GET", "HEAD")


def _split(url: str) -> tuple[str, str]:
    """(host:port as written, host name) of a URL or of ``//`` + a Host header; ("", "") if unreadable."""
    try:
        parts = urlsplit(url)
        return parts.netloc.lower(), parts.hostname or ""
    except ValueError:
        return "", ""


def _foreign(method: str, headers: dict[str, str], token: str | None) -> str | None:
    """Why a request must be refused as coming from another site, or None."""
    host = headers.get("host", "")
    name = _split(f"//{host}")[1]
    # a browser resolves every *.localhost name to this machine
    if token is None and not (is_loopback(name) or name.rstrip(".").endswith(".localhost")):
        return f"forbidden: Host {host[:80]!r} is not this machine (serve without a token answers loopback names only)"
    if method in SAFE_METHODS:
        return None
    # the browser says where a request comes from: Sec-Fetch-Site (sent to trustworthy origins: loopback), else
    # Origin (the pages are served with Referrer-Policy same-origin: no-referrer made chromium send Origin "null"
    # from the server's own forms, and no Sec-Fetch-Site to a LAN address)
    site, origin = headers.get("sec-fetch-site"), headers.get("origin")
    if site is not None:
        foreign = site not in ("same-origin", "none")
    else:
        foreign = origin is not None and not (host and _split(origin)[0] == host.lower())
    return "forbidden: a request that changes state must come from this server's own pages" if foreign else None


class Guard:
    """ASGI middleware: 404 for ``..`` in the path, 403 without the token, security headers on every response."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token

    def _authorised(self, scope: Scope, headers: dict[str, str]) -> tuple[bool, bool]:
        """(allowed, came in the query string)."""
        if self.token is None:
            return True, False
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        given = (query.get("token") or [""])[0]
        if given and secrets.compare_digest(given.encode(), self.token.encode()):
            return True, True
        for part in headers.get("cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == COOKIE and secrets.compare_digest(value.encode(), self.token.encode()):
                return True, False
        auth = headers.get("authorization", "")
        if auth.startswith("token ") and secrets.compare_digest(auth[6:].encode(), self.token.encode()):
            return True, False
        return False, False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw = scope.get("raw_path") or scope["path"].encode()
        texts = (scope["path"], raw.decode("latin-1").lower().replace("%2e", "."))
        if any(".." in t.replace("\\", "/").split("/") for t in texts):
            await self._plain(404, "not found", send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        refused = _foreign(scope.get("method", "GET"), headers, self.token)
        if refused:
            await self._plain(403, refused, send)
            return
        allowed, from_query = self._authorised(scope, headers)
        if not allowed:
            await self._plain(403, "forbidden: open the URL `clinbench serve` printed (it carries the access token)", send)
            return

        async def with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.decode().lower() not in HEADERS]
                headers += [(k.encode(), v.encode()) for k, v in HEADERS.items()]
                if from_query:
                    headers.append((b"set-cookie", f"{COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/".encode()))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)

    async def _plain(self, status: int, text: str, send: Send) -> None:
        body = text.encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"content-length", str(len(body)).encode()),
                                *((k.encode(), v.encode()) for k, v in HEADERS.items())]})
        await send({"type": "http.response.body", "body": body})


def _fmt(x: Any, spec: str = ".3f") -> str:
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, (int, float)):
        return format(x, spec)
    return str(x)


def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                             undefined=jinja2.ChainableUndefined)
    env.filters["num"] = _fmt
    env.filters["usd"] = lambda x: "—" if x is None else f"${x:,.0f}"
    env.filters["q"] = lambda s: quote(str(s), safe="")
    env.filters["source"] = lambda s: evidence_view.SOURCE_NAMES.get(str(s), str(s).lower())
    env.globals["urlencode"] = urlencode
    return env


def create_app(sources: list[Source], *, token: str | None, play=None) -> Starlette:
    """The app over ``sources``; ``play`` is the clinician mode (``serve.play.Play``) or None.

    Handlers are plain functions, which Starlette runs in its thread pool (the event loop never
    blocks on a store or a bootstrap); every store access holds ``sources.STORE_LOCK``."""
    templates = Jinja2Templates(env=_env())

    def page(request: Request, template: str, status: int = 200, **context: Any) -> Response:
        return templates.TemplateResponse(request, template, {"sources": sources, "play": play, **context},
                                          status_code=status)

    def not_found(request: Request, what: str) -> Response:
        return page(request, "error.html", 404, message=what)

    def source_of(request: Request) -> Source | None:
        i = request.path_params["cid"]
        return sources[i] if 0 <= i < len(sources) else None

    def row_of(source: Source, run_id: str) -> dict[str, Any] | None:
        return next((r for r in campaigns.runs_of(source) if r["run_id"] == run_id), None)

    def index(request: Request) -> Response:
        cards = []
        for s in sources:
            try:
                cards.append((s, campaigns.benchmarks(s), campaigns.progress(s), None))
            except ClinbenchError as exc:
                cards.append((s, {}, None, str(exc)))
        return page(request, "index.html", cards=cards)

    def campaign(request: Request) -> Response:
        source = source_of(request)
        if source is None:
            return not_found(request, "no such campaign")
        runs = campaigns.runs_of(source)
        query = {k: v for k, v in request.query_params.items() if k != "token"}
        compare = query.get("compare") or None
        derive = [r for r in runs if r["benchmark"] == "derive"]
        stats = campaigns.derive_stats(source, compare) if derive else None
        shown = campaigns.filter_runs(runs, query)
        return page(request, "campaign.html", source=source, stats=stats, compare=compare or "",
                    comparisons=campaigns.comparisons(runs), options=campaigns.filter_options(runs),
                    query=query, runs=shown, total=len(runs), progress=campaigns.progress(source),
                    dx=campaigns.dx_summaries(source), filters=campaigns.FILTERS)

    def stats_json(request: Request) -> Response:
        source = source_of(request)
        if source is None:
            return JSONResponse({"error": "no such campaign"}, 404)
        stats = campaigns.derive_stats(source, request.query_params.get("compare") or None)
        return JSONResponse(stats.data if stats.data is not None else {"error": stats.error},
                            200 if stats.data is not None else 400)

    def figure(request: Request) -> Response:
        source = source_of(request)
        stats = campaigns.derive_stats(source, request.query_params.get("compare") or None) if source else None
        if stats is None or not stats.figure:
            return PlainTextResponse("no figure", 404)
        return Response(stats.figure, media_type="image/svg+xml")

    def progress(request: Request) -> Response:
        source = source_of(request)
        if source is None:
            return JSONResponse({"error": "no such campaign"}, 404)
        return JSONResponse(campaigns.progress(source))

    def run(request: Request) -> Response:
        source = source_of(request)
        if source is None:
            return not_found(request, "no such campaign")
        row = row_of(source, request.path_params["run_id"])
        if row is None:
            return not_found(request, "no such run in this campaign")
        folder = inside(source.root, row.get("evidence_dir"))
        folder = folder if folder is not None and folder.is_dir() else None
        full = request.query_params.get("all") == "1"
        files, bad, unchecked = evidence_view.evidence_files(folder) if folder else ([], [], "no evidence folder")
        common = dict(source=source, row=row, folder=folder, files=files, bad=bad, unchecked=unchecked,
                      manifest=evidence_view.read_json(folder / "manifest.json") if folder else {},
                      score=evidence_view.read_json(folder / "score.json") if folder else {})
        if row["benchmark"] == "dx":
            return page(request, "encounter.html", **common,
                        turns=evidence_view.encounter_turns(folder / "transcript.jsonl" if folder else None),
                        ledger=evidence_view.read_json(folder / "ledger.json") if folder else {})
        why = None
        if folder:
            from clinbench.report.explain import explain_run

            try:
                why = explain_run(folder)
            except ClinbenchError:
                why = None
        score = common["score"]
        missing = None
        if isinstance(score.get("reference_rows"), int) and isinstance(score.get("key_recall"), (int, float)):
            missing = score["reference_rows"] - round(score["key_recall"] * score["reference_rows"])
        steps, total = evidence_view.derive_steps(folder / "transcript.jsonl" if folder else None,
                                                  limit=None if full else evidence_view.MAX_STEPS)
        return page(request, "run.html", **common, why=why, missing_keys=missing, steps=steps, steps_total=total, full=full,
                    prompt=evidence_view.read_text(folder / "prompt.md") if folder else None,
                    skills=evidence_view.skill_files(folder) if folder else [],
                    skill_use=evidence_view.skill_use_of(folder) if folder else None)

    def evidence_file(request: Request) -> Response:
        source = source_of(request)
        row = row_of(source, request.path_params["run_id"]) if source else None
        folder = inside(source.root, row.get("evidence_dir")) if row else None
        name = request.path_params["name"]
        sealed = evidence_view.read_json(folder / "manifest.json").get("files") if folder else None
        path = inside(folder, name) if folder and isinstance(sealed, dict) and name in sealed else None
        if path is None or not path.is_file():
            return PlainTextResponse("not found", 404)
        return FileResponse(path, media_type="text/plain; charset=utf-8", content_disposition_type="inline")

    routes = [
        Route("/", index),
        Route("/c/{cid:int}", campaign),
        Route("/c/{cid:int}/stats.json", stats_json),
        Route("/c/{cid:int}/figure.svg", figure),
        Route("/c/{cid:int}/progress.json", progress),
        Route("/c/{cid:int}/r/{run_id}", run),
        Route("/c/{cid:int}/r/{run_id}/file/{name:path}", evidence_file),
        Route("/favicon.ico", lambda request: Response(status_code=204)),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    if play is not None:
        from clinbench.serve.play_routes import play_routes

        routes[1:1] = play_routes(play, page, not_found, sources)
    def failed(request: Request, exc: Exception) -> Response:  # a damaged store or evidence: its one line
        return page(request, "error.html", 500, message=str(exc))

    return Starlette(routes=routes, middleware=[Middleware(Guard, token=token)],
                     exception_handlers={ClinbenchError: failed})
