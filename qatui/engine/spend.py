"""What a session spent: every call it recorded, and those of items it left pending, tallied.

The runner counts calls as they finish (`engine.runner.RunCounts`, per deployment by `tally_deployments`); a
task a cost cap, a backbone that failed its put-off check or a stop left pending keeps no result, so its calls are
kept apart in the session (`add_deferred`); `llm_totals` adds up a session's stored calls and those
(`deferred_spend`) into the figure `sessions show`, the table and the cost cap read.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

DEPLOYMENT_COUNTS = ("calls", "rate_limited", "failures", "tokens")
"""What is counted per deployment: calls it answered, 429s it gave, other failures, tokens of its answers."""


def tally_deployments(tally: dict[str, dict[str, int]], deployment: str, hop_errors: list[str], tokens: int) -> None:
    """Add one call to per-deployment counts: the deployment that answered it, and each that failed on the way."""
    if deployment:
        row = tally.setdefault(deployment, dict.fromkeys(DEPLOYMENT_COUNTS, 0))
        row["calls"] += 1
        row["tokens"] += tokens
    for hop in hop_errors:
        label, _, kind = hop.rpartition(" ")
        tally.setdefault(label, dict.fromkeys(DEPLOYMENT_COUNTS, 0))["rate_limited" if kind == "429" else "failures"] += 1


DEFERRED_TALLIES = ("calls", "prompt_tokens", "completion_tokens", "reasoning_tokens", "cost_usd", "unpriced_calls")
"""What a session keeps, per judge, of the calls of items left pending (`deferred_calls`: `add_deferred`)."""


def add_deferred(kept: Any, judge: str, calls: Iterable[Any]) -> dict[str, dict[str, float]]:
    """The session's `deferred_calls` ({judge: {DEFERRED_TALLIES}}) with `calls` (`LLMCallFinished`) of a task of
    `judge` that was left pending added: their results are not kept, yet they were paid for."""
    tallies = {name: dict(tally) for name, tally in kept.items() if isinstance(tally, dict)} \
        if isinstance(kept, dict) else {}
    tally = tallies.setdefault(judge, {})
    for call in calls:
        for key, value in (("calls", 1), ("prompt_tokens", call.prompt_tokens),
                           ("completion_tokens", call.completion_tokens),
                           ("reasoning_tokens", call.reasoning_tokens), ("cost_usd", call.cost_usd),
                           ("unpriced_calls", int(call.unpriced and not call.cached))):
            tally[key] = kept_tally(tally.get(key)) + value
    return tallies


def kept_tally(value: Any) -> float:
    """A kept tally read back: a finite number at least 0, else 0 (a session file is data)."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and \
        math.isfinite(value) and value >= 0 else 0


CALL_TALLIES = ("prompt_tokens", "completion_tokens", "reasoning_tokens", "cached", "cost_usd", "cached_cost_usd",
                "unpriced", "deployment", "hop_errors")
"""What `llm_totals` reads of each stored call."""


def deferred_spend(meta: dict, judge: str | None = None) -> dict[str, float]:
    """The calls, tokens and cost of the items a session left pending (`deferred_calls`), of `judge` or of all; a
    session stored before they were kept has their cost alone (`deferred_cost_usd`), for the whole session (a judge's
    row counts it only when it is the session's one judge)."""
    kept = meta.get("deferred_calls")
    if isinstance(kept, dict):
        tallies = [t for name, t in kept.items() if isinstance(t, dict) and judge in (None, name)]
        return {key: sum(kept_tally(t.get(key)) for t in tallies) for key in DEFERRED_TALLIES}
    alone = judge is None or list(meta.get("judges") or ()) == [judge]  # an older session's cost is not per judge
    return {"cost_usd": kept_tally(meta.get("deferred_cost_usd"))} if alone else {}


def llm_totals(docs: Iterable[dict], deferred: dict[str, float] | None = None) -> dict[str, Any]:
    """Calls, cache hits, tokens (reasoning tokens among the completion tokens) and cost over result docs; per
    deployment when any. A session's spend reads every doc it recorded (`Session.every_result`): a failed attempt's
    calls were paid for, and read from its latest results alone, a resume that judged the item again dropped them
    (a session said half what the provider billed, and each resume's cost cap started that much lower). `cost_usd`
    is what the docs' calls cost, and `deferred` (`deferred_spend`), the calls, tokens and cost of items a cost
    cap or a stop left pending, whose results are not kept (a resume then meets those answers in the cache): added
    in, their cost also as `deferred_cost_usd`; without it a capped session said half what the provider billed,
    and with their cost alone its calls and tokens were fewer than it paid for. `cached_cost_usd` is what the
    answers the cache gave it had cost when they were bought. `unpriced_calls` counts the calls made (not cache
    hits) whose cost is unknown (`LLMCallFinished.unpriced`): `cost_usd` is then a floor, and every figure of it says
    so (`qatui.text.spent`); `cached_unpriced` the cache hits whose answers' cost was unknown when they were bought
    (`cached_cost_usd` a floor then).

    `deployments` ({"BACKBONE/NAME": {"calls", "rate_limited", "failures", "tokens"}}) is there only when
    a backbone with deployments was called.
    """
    totals: dict[str, Any] = {"calls": 0, "cached": 0, "prompt_tokens": 0, "completion_tokens": 0,
                              "reasoning_tokens": 0, "cost_usd": 0.0, "cached_cost_usd": 0.0, "unpriced_calls": 0,
                              "cached_unpriced": 0}
    deployments: dict[str, dict[str, int]] = {}
    for doc in docs:
        for call in doc.get("calls") or []:
            tokens = (int(call.get("prompt_tokens") or 0), int(call.get("completion_tokens") or 0))
            totals["calls"] += 1
            totals["cached"] += int(bool(call.get("cached")))
            totals["prompt_tokens"] += tokens[0]
            totals["completion_tokens"] += tokens[1]
            totals["reasoning_tokens"] += int(call.get("reasoning_tokens") or 0)
            totals["cost_usd"] += float(call.get("cost_usd") or 0.0)
            totals["cached_cost_usd"] += float(call.get("cached_cost_usd") or 0.0)
            if call.get("unpriced") is True:
                totals["cached_unpriced" if call.get("cached") else "unpriced_calls"] += 1
            tally_deployments(deployments, call.get("deployment") or "", call.get("hop_errors") or [], sum(tokens))
    for key in ("calls", "prompt_tokens", "completion_tokens", "reasoning_tokens", "unpriced_calls"):
        totals[key] += int((deferred or {}).get(key) or 0)
    if deferred_cost_usd := float((deferred or {}).get("cost_usd") or 0.0):
        totals["cost_usd"] += deferred_cost_usd
        totals["deferred_cost_usd"] = deferred_cost_usd
    return {**totals, "deployments": deployments} if deployments else totals
