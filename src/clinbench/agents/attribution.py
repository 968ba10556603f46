"""Whose failure a sandboxed run was: the model endpoint's, or the agent's.

A run that failed is the endpoint's (``harness-error``: left out of statistics, redone by
``--retry-failed``) only on evidence no agent can forge or cause:

1. the run's ``egress.jsonl`` (written by the harness's proxy, never by the agent) shows the
   endpoint failing on the run's last model request: connection refused or reset, DNS, TLS, or
   an HTTP 5xx/429 from the endpoint itself, with no model request answered after it;
2. and after the run the harness checks the endpoint with a request of its own (no agent or
   model bytes in it), which fails too.

A rate limit (HTTP 429) is an endpoint that answered: it is never the endpoint's failure. The agent's own
requests use the key's quota (an agent could flood it until the harness's check is refused too, and so
turn its failure into a harness error, whatever the limit's window), as its tokens and time are its own;
a run is not stopped for one while it runs either. A quota used up by another user of the key is the
user's setup, like a wrong key: the runs fail as the agent's, and a new ``--out`` redoes them.

A slow or silent endpoint is never evidence: an agent can keep a model busy past any timeout
(a huge prompt on a one-slot server), so a request or check that timed out proves nothing and
such a run stays the agent's (it ends at its own timeout).

The proxy dials only the allow-listed endpoint, so an agent cannot make it fail by asking for
another host; and an endpoint that answers the harness's own check was up: whatever the agent
sent that the endpoint refused (a bogus body, a huge prompt) stays the agent's failure.
"""

from __future__ import annotations

import json
from pathlib import Path

CHECK_TIMEOUT_SECONDS = 5.0
RATE_LIMITED = "HTTP 429"  # the check's reason for a rate limit: the endpoint answered
# A run whose model endpoint has answered nothing for this long (and fails the harness's own check)
# is stopped as the endpoint's failure instead of waiting out its timeout (--endpoint-down).
ENDPOINT_DOWN_SECONDS = 60.0
NO_ANSWER = "no answer in time"  # how egress.upstream_reason names a timeout


def log_entries(egress_log: Path) -> list[dict]:
    entries = []
    if egress_log.is_file():
        for line in egress_log.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                continue
            if isinstance(entry, dict):
                entries.append(entry)
    return entries


def _endpoint_status(entry: dict) -> int | None:
    """The HTTP status the endpoint itself answered (not one the proxy or translator made up)."""
    if entry.get("translated"):
        status = entry.get("upstream_status")
    elif entry.get("upstream_error") or entry.get("tunnel") == "tls":
        return None
    else:
        status = entry.get("status")
    return status if isinstance(status, int) else None


def endpoint_verdict(entry: dict) -> str | bool | None:
    """One egress entry's word on the endpoint: the failure it shows (a reason), True when the
    endpoint answered a model request, None when it says nothing (not a model request, a timeout)."""
    if not entry.get("allowed") or entry.get("method") not in ("POST", "CONNECT"):
        return None
    status = _endpoint_status(entry)
    if entry.get("upstream_error"):
        if str(entry["upstream_error"]).startswith(NO_ANSWER):
            return None
        return f"{entry.get('method')} {entry.get('target')}: {entry['upstream_error']}"
    if status is not None and (status >= 500 or status == 429):
        return f"{entry.get('method')} {entry.get('target')}: the endpoint answered HTTP {status}"
    if status is not None and status < 400:
        return True
    return None


def failed_on_endpoint(entries: list[dict]) -> str | None:
    """The endpoint's failure the run's model requests ended on, or None."""
    last = None
    for entry in entries:
        verdict = endpoint_verdict(entry)
        if isinstance(verdict, str):
            last = verdict
        elif verdict is True:
            last = None
    return last


class EndpointWatch:
    """Whether to stop a run now because its endpoint is down, as ``run_process(stop_if=...)`` asks.

    Down means: every model request of the last ``seconds`` failed on the endpoint (the proxy's
    evidence, ``failing_for``) and the harness's own check fails now (``check``). The CLIs retry a
    dead endpoint for minutes (Claude Code and Gemini past 90 s), so without this a campaign against
    a server that died spends each run's whole timeout. An endpoint that answers the check is up
    (whatever failed was the agent's doing): it is looked at again after another ``seconds``."""

    def __init__(self, failing_for, check, seconds: float):
        self.failing_for, self.check, self.seconds = failing_for, check, seconds
        self._next = seconds

    def __call__(self) -> str | None:
        down = self.failing_for()
        if down < self.seconds:
            self._next = self.seconds
            return None
        if down < self._next:
            return None
        reason = self.check()
        if reason is None or reason == RATE_LIMITED:  # a limit the agent's own requests may hold: not down
            self._next = down + self.seconds
            return None
        return (f"stopped after {down:.0f} s in which the model endpoint answered no request "
                f"(the harness's own check: {reason}; change the wait with --endpoint-down)")


def check_endpoint(base_url: str, *, chat: bool, model: str | None, api_key: str | None) -> str | None:
    """Why the endpoint fails the harness's own request now, or None when it answers."""
    import httpx

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        with httpx.Client(timeout=CHECK_TIMEOUT_SECONDS, trust_env=False) as client:
            if chat:
                resp = client.post(base_url.rstrip("/") + "/chat/completions", headers=headers, json={
                    "model": model or "model", "messages": [{"role": "user", "content": "Reply with the word ok."}],
                    "max_tokens": 1})
            else:
                resp = client.get(base_url, headers=headers)
    except httpx.TimeoutException:
        return None  # busy is not down (the agent's own request may hold the model)
    except httpx.HTTPError as exc:
        from clinbench.agents.egress import upstream_reason

        return upstream_reason(exc)
    if resp.status_code == 429:
        return RATE_LIMITED
    if resp.status_code >= 500:
        return f"HTTP {resp.status_code}"
    return None


def endpoint_failure(egress_log: Path, base_url: str, *, chat: bool, model: str | None, api_key: str | None) -> str | None:
    """The reason to record a failed run as the endpoint's (harness-error), or None when it is the agent's."""
    seen = failed_on_endpoint(log_entries(egress_log))
    if seen is None:
        return None
    now = check_endpoint(base_url, chat=chat, model=model, api_key=api_key)
    if now is None or now == RATE_LIMITED:  # it answered: a rate limit is the quota the run used, not an outage
        return None
    return f"model endpoint failed: {seen}; the harness's own check after the run failed too ({now})"
