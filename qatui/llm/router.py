"""A backbone served by several deployments: LiteLLM's Router picks one per call, qatui stays the client.

`[backbones.NAME]` with `[[backbones.NAME.deployments]]` becomes one `litellm.Router` model
group named NAME (one Router per event loop: its HTTP clients belong to a loop). The Router
chooses a deployment (`routing_strategy`, weighted by `weight` / `rpm` / `tpm`, lower `order`
first), cools down one that answered 429 or failed (`cooldown_s`, or the 429's Retry-After),
and, under `simple-shuffle`, moves a failed call to another deployment at once. It never
retries by itself (`num_retries=0`, each deployment `max_retries=0`): when a call has failed
on every deployment, `Backbone.run` waits (backoff) and tries again, as for one endpoint.

What each deployment did for a call is collected while the Router works (`_acompletion` of a
subclass appends to the call's `hops` through a context variable): the deployment that
answered, and each one that failed on the way with its status ("fast/a 429"). Keys are read
from each deployment's `api_key_env` when the Router is built and live only in its memory.
A deployment that states an `rpm` is sent at most that many requests a minute, evenly spaced
(`Pacer`, waited for once the Router has chosen it): LiteLLM only counts rpm within a minute.
"""

from __future__ import annotations

import asyncio
import os
import time
import weakref
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from qatui.llm._lazy import get_litellm
from qatui.llm.errors import LLMCallError, is_transient, unnamed_server_error

if TYPE_CHECKING:
    from qatui.config import BackboneConfig

Hop = tuple[str, str]
"""(deployment label "BACKBONE/NAME", "ok" or what failed: "429", "500", "timeout", "connection", ...)."""

HOPS: ContextVar[list[Hop] | None] = ContextVar("qatui_router_hops", default=None)
"""Where the Router subclass notes each deployment it asked, for the call in progress."""

HOP_WORDS = {"429": "rate limited (429)", "500": "server error (500)", "502": "bad gateway (502)",
             "503": "service unavailable (503)", "timeout": "timed out", "connection": "connection failed",
             "not JSON": "the reply is not JSON"}

_router_class: type | None = None


def hop_kind(error: BaseException) -> str:
    """A failed hop in a word: its HTTP status, else "timeout" or "connection"."""
    from qatui.llm.faults import CONNECTION, NOT_JSON, wire_fault

    ll = get_litellm()
    fault = wire_fault(error)  # LiteLLM gives a dropped connection status 500
    if fault in (CONNECTION, NOT_JSON):
        return "connection" if fault == CONNECTION else "not JSON"
    status = getattr(error, "status_code", None)
    if isinstance(status, int) or (isinstance(status, str) and status.isdigit()):
        return str(status)
    if isinstance(error, (ll.Timeout, TimeoutError)):
        return "timeout"
    return "connection" if isinstance(error, ll.APIConnectionError) else type(error).__name__


def hop_text(hop: Hop) -> str:
    """'rate limited (429) at fast/a': a failed hop for an error message."""
    return f"{HOP_WORDS.get(hop[1], hop[1])} at {hop[0]}"


def _counting_router() -> type:
    """`litellm.Router` that notes every deployment attempt in `HOPS` (built once, after LiteLLM is imported)."""
    global _router_class
    if _router_class is None:
        ll = get_litellm()

        class CountingRouter(ll.Router):  # type: ignore[name-defined,misc]
            """The Router, noting which deployment each attempt went to and how it ended."""

            async def _acompletion(self, model: str, messages: list, **kwargs: Any) -> Any:
                hops = HOPS.get()
                try:
                    response = await super()._acompletion(model, messages, **kwargs)
                except BaseException as e:
                    if hops is not None and (failed := getattr(e, "failed_deployment_id", None)):
                        hops.append((str(failed), hop_kind(e)))
                    raise
                if hops is not None:
                    hops.append((str((getattr(response, "_hidden_params", None) or {}).get("model_id")), "ok"))
                return response

            async def async_routing_strategy_pre_call_checks(self, deployment: dict, *args: Any, **kwargs: Any) -> Any:
                """Called with the chosen deployment just before its request: wait for its `rpm` slot first."""
                pacer = self.qatui_pacers.get((deployment.get("model_info") or {}).get("id"))
                if pacer is not None:
                    await pacer.wait()
                return await super().async_routing_strategy_pre_call_checks(deployment, *args, **kwargs)

        _router_class = CountingRouter
    return _router_class


class Pacer:
    """Keeps requests at least `1 / rate` seconds apart, measured when each leaves (one event loop's).

    One at a time: a late wake-up (a busy loop) never lets two go out together, so a burst never
    outruns the stated limit; under load the pace falls a little short of it instead.
    """

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate
        self._last = float("-inf")
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        """Sleep until this request may leave."""
        async with self._lock:
            if (delay := self._last + self.interval - time.monotonic()) > 0:
                await asyncio.sleep(delay)
            self._last = time.monotonic()


class DeploymentRouter:
    """One backbone's deployments behind LiteLLM's Router; `acompletion` moves a failed call to the others."""

    def __init__(self, name: str, settings: BackboneConfig) -> None:
        self.name = name
        self.settings = settings
        self.labels = [f"{name}/{n}" for n in settings.deployment_names()]
        self._routers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()

    def check_keys(self) -> None:
        """Every deployment's key variable is set (a missing one is an error naming the deployment)."""
        for label, dep in zip(self.labels, self.settings.deployments, strict=True):
            if dep.api_key_env and not os.environ.get(dep.api_key_env):
                raise LLMCallError(f"{self.settings.model}: deployment {label}: the environment variable "
                                   f"{dep.api_key_env} is not set (its api_key_env): export {dep.api_key_env}=... "
                                   "and retry")

    def keys(self) -> list[str]:
        """The deployments' key values now set, so that no message can show one."""
        return [v for d in self.settings.deployments if d.api_key_env and (v := os.environ.get(d.api_key_env))]

    def model_list(self) -> list[dict[str, Any]]:
        """The Router's model_list: one entry per deployment, keys read from the environment now."""
        entries = []
        for label, dep in zip(self.labels, self.settings.deployments, strict=True):
            params: dict[str, Any] = {"model": dep.model, "max_retries": 0, "timeout": self.settings.timeout_s}
            extra = {"api_base": dep.api_base, "rpm": dep.rpm, "tpm": dep.tpm, "weight": dep.weight, "order": dep.order,
                     "api_key": os.environ.get(dep.api_key_env) if dep.api_key_env else None}
            params.update({k: v for k, v in extra.items() if v is not None})
            entries.append({"model_name": self.name, "litellm_params": params, "model_info": {"id": label}})
        return entries

    def router(self) -> Any:
        """This event loop's Router (built on first use)."""
        loop = asyncio.get_running_loop()
        if (router := self._routers.get(loop)) is None:
            self.check_keys()
            s = self.settings
            router = self._routers[loop] = _counting_router()(
                model_list=self.model_list(), routing_strategy=s.routing_strategy, num_retries=0, retry_after=0,
                cooldown_time=s.cooldown_s or None, disable_cooldowns=s.cooldown_s == 0, timeout=s.timeout_s,
                enable_weighted_failover=s.routing_strategy == "simple-shuffle", max_fallbacks=len(self.labels))
            router.qatui_pacers = {label: Pacer(d.rpm / 60.0)
                                   for label, d in zip(self.labels, s.deployments, strict=True) if d.rpm}
        return router

    def _cooldown_left(self, router: Any) -> float:
        """Seconds until the first of the deployments comes out of its cooldown."""
        try:
            active = router.cooldown_cache.get_active_cooldowns(self.labels, None)
            now = time.time()
            return max(0.0, min(v["timestamp"] + v["cooldown_time"] - now for _, v in active))
        except Exception:  # noqa: BLE001 - none active (min of nothing) or another LiteLLM: the configured time
            return self.settings.cooldown_s

    async def acompletion(self, kwargs: dict[str, Any], hops: list[Hop]) -> Any:
        """One call through the Router; a transient failure moves on at once while a deployment is left untried.

        When every deployment has failed (or all are cooling down) the last error is raised, and
        the caller's backoff applies. Raises LiteLLM's exceptions, like `litellm.acompletion`.
        """
        ll = get_litellm()
        router = self.router()
        start = len(hops)
        token = HOPS.set(hops)
        try:
            for turn in range(1, len(self.labels) + 1):  # a Router may pick a failing deployment again: bounded
                try:
                    return await router.acompletion(**dict(kwargs, model=self.name))
                except Exception as raised:  # noqa: BLE001 - another deployment when transient (the backbone's rule)
                    e = raised
                    if isinstance(raised, TypeError) and raised.__context__ is not None and unnamed_server_error(
                            raised.__context__, ll):  # the Router's retry check compares a word status with 500
                        e = raised.__context__    # and fails on its own: the deployment's error is what happened
                    if is_transient(e, ll):
                        tried = {label for label, kind in hops[start:] if kind != "ok"}
                        if turn == len(self.labels) or tried >= set(self.labels):
                            if e is raised:
                                raise
                            raise e  # noqa: B904 - its own chain (what the wire did) kept, the Router's slip left out
                        continue
                    if e is not raised:
                        raise e  # noqa: B904 - as above
                    # the Router's "no deployments available": each one is cooling down
                    if not isinstance(e, ValueError) or type(e).__name__ not in ("RouterRateLimitError",
                                                                                 "RouterRateLimitErrorBasic"):
                        raise
                    error = ll.RateLimitError(message=f"every deployment of {self.name} is cooling down after "
                                              "failures", model=self.settings.model, llm_provider="router")
                    error.litellm_response_headers = {"retry-after": f"{self._cooldown_left(router):.2f}"}
                    raise error from None  # waited out like a 429's Retry-After
            raise AssertionError("unreachable: the last turn returns or raises")
        finally:
            HOPS.reset(token)


def hop_fields(hops: list[Hop]) -> dict[str, Any]:
    """`LLMCallFinished` fields for a routed call: the deployment that answered, and each failure on the way."""
    if not hops:
        return {}
    answered = [label for label, kind in hops if kind == "ok"]
    return {"deployment": answered[-1] if answered else "",
            "hop_errors": [f"{label} {kind}" for label, kind in hops if kind != "ok"]}
