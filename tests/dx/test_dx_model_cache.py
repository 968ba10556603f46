"""A cached model reply is read as the live one was (review 49c, cache item).

Before the fix a cache hit returned before the tool call written in the reply's text was read:
a judge reply given as a text tool call scored 2 live, and from the cache drew a corrective
request and failed (2 requests instead of 1).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from clinbench.dx.judge import LLMJudge
from clinbench.dx.models import ModelCache, RoleModel, RoleSpec

sys.path.insert(0, str(Path(__file__).parent))
from model_server import ModelServer, text  # noqa: E402


def test_a_text_tool_call_scores_the_same_from_the_cache(tmp_path):
    call = text(json.dumps({"name": "grade", "arguments": {"score": 2, "reason": "different disease"}}))
    cache = ModelCache(tmp_path)
    with ModelServer([call]) as server:
        spec = RoleSpec("judge", "j", base_url=server.base_url, api_key="k")
        live, cached = RoleModel(spec, cache=cache), RoleModel(spec, cache=cache)
        first = LLMJudge(live).score("Acute appendicitis", "Gastroenteritis")
        again = LLMJudge(cached).score("Acute appendicitis", "Gastroenteritis")
        requests = len(server.requests)
    assert (first.score, again.score, requests) == (2, 2, 1)
    assert (live.text_calls, cached.text_calls, cached.cache_hits, cached.repairs) == (1, 1, 1, 0)
