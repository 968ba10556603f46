"""The clinician mode's pages: choose a case, play it turn by turn, commit a diagnosis."""

from __future__ import annotations

from urllib.parse import parse_qs, quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from clinbench.errors import ClinbenchError
from clinbench.serve.play import Play, PlayError

MAX_FORM_BYTES = 64_000


async def _form(request: Request) -> dict[str, str]:
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        raise PlayError("the form is too long")
    return {k: v[0] for k, v in parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True).items()}


def play_routes(play: Play, page, not_found, sources) -> list[Route]:
    store_index = next((s.index for s in sources if s.root == play.store_dir.resolve()), None)

    def choose(request: Request) -> Response:
        play.warm()
        split = request.query_params.get("split", "test")
        try:
            cases = play.cases(split or None)
            error = None
        except ClinbenchError as exc:
            cases, error = [], str(exc)
        return page(request, "play_index.html", split=split, cases=[c.case_id for c in cases], error=error,
                    sessions=play.sessions(), store_index=store_index, name=request.query_params.get("name", ""))

    async def start(request: Request) -> Response:
        form = await _form(request)
        try:
            session = await run_in_threadpool(play.start, form.get("name", "").strip(), int(form.get("case_id") or -1),
                                              form.get("split"))
        except (PlayError, ValueError) as exc:
            return page(request, "error.html", 400, message=str(exc) if isinstance(exc, PlayError) else "choose a case")
        return RedirectResponse(f"/play/{session['id']}", 303)

    async def session(request: Request) -> Response:
        sid = request.path_params["sid"]
        try:
            state = play.load(sid)
        except PlayError as exc:
            return not_found(request, str(exc))
        if state.get("run_id") and store_index is not None:
            return RedirectResponse(f"/c/{store_index}/r/{quote(state['run_id'], safe='')}", 303)
        if request.method == "POST":
            form = await _form(request)
            kind = form.get("kind", "")
            items = form.get("text", "").splitlines()
            try:
                state = await run_in_threadpool(play.act, sid, kind, items)
            except PlayError as exc:
                return page(request, "play.html", 400, view=await run_in_threadpool(play.view, sid), error=str(exc))
            if state.get("run_id") and store_index is not None:
                return RedirectResponse(f"/c/{store_index}/r/{quote(state['run_id'], safe='')}", 303)
            return RedirectResponse(f"/play/{sid}", 303)
        try:
            view = await run_in_threadpool(play.view, sid)
        except PlayError as exc:  # the case is no longer among --cases
            return not_found(request, str(exc))
        return page(request, "play.html", view=view, error=None)

    return [Route("/play", choose), Route("/play/start", start, methods=["POST"]),
            Route("/play/{sid}", session, methods=["GET", "POST"])]
