"""Before a run exists: is its backbone usable at all? Refuse it now, with the reason and the fix.

A run whose backbone cannot answer would make a session in which every item fails. So
`run`, `run --plan`, resume, the TUI's New run and Spot check first check, in order: the
provider is one LiteLLM knows; its API key is set; and one tiny real request (8 tokens, no
cache, one attempt, a timeout of 10 to 20 s: `PROBE_FLOOR_S`) is answered. A 429 passes: the endpoint is there and
the key works, the run's own retries will wait. The embedded `local/...` models are only
checked for their files (loading one takes seconds; it cannot be unreachable). A backbone
with deployments has each deployment checked so, and a refusal names the deployment.

The check's request is shaped as the run's are (`llm.reasoning`: options the model refuses
left out, the reasoning effort sent), and its line says first when the backbone is a
reasoning model ("openai/o3-mini: a reasoning model; temperature left out; max_tokens raised
to 5,120 ..."). A model that still refuses an option with a 400 is refused in one line naming
the option and how to stop sending it (`leave_out`).

The checks before the request ask no LiteLLM: whether the provider is known, and which of its key
variables are missing (for a backbone naming neither `api_key_env` nor `api_base`: `llm.keys`), are
facts kept beside the call cache (`llm.facts`), like everything that shapes the request. Only sending the
request may import it (the backbone's transport).

`run --plan --offline` makes only the checks that need no network and no key (`offline_check`): the provider is
known and the model file of an embedded model is there; a key not set is said, not refused, so a run can be priced
before its key exists; nothing is sent.

A run may defer the request (`defer_live`: `qatui run` and resume, not in batch mode) when the call
cache holds answers of this backbone (`CallCache.holds_answers_of`: same model and api_base): a rerun
answered from the cache then needs no backbone, and makes no request at all. The request is made at the
run's first call the cache cannot answer, before that call (`llm.deferred`; the calls behind it wait for
it). A backbone that fails it then stops the run: the failing call's item, and every item not started, are
left pending, never failed (`llm.deferred.RUN_STOP`, as a cost cap leaves them), the items answered from the cache are
saved, and the run ends "stopped" with the reason (exit status 4). A backbone whose answers the cache does
not hold (a first run, a typo in its model name or api_base) is still checked before any session exists.
"""

from __future__ import annotations

import asyncio
import copy
from typing import TYPE_CHECKING, Any

from qatui.config import LEAVABLE
from qatui.errors import QatuiError
from qatui.llm.backbone import first_line, mask_keys
from qatui.llm.deferred import DeferredCheck
from qatui.llm.errors import LLMCallError
from qatui.llm.reasoning import refused_option

if TYPE_CHECKING:
    from qatui.llm.client import LLMClient

PROBE_TIMEOUT_S = 20.0
"""The longest the live request may take; a backbone slower than this for 8 tokens is not usable."""
PROBE_FLOOR_S = 10.0
"""The shortest wait for it, whatever the backbone's `timeout_s`: it is the process's first request to the
provider, which pays for LiteLLM loading that provider's code and opening a connection (over 1.5 s seen on
a busy 2-core machine). A backbone's short timeout is for its answers; a cold start is not an unusable backbone."""


class BackboneUnusable(QatuiError):
    """The run's backbone cannot answer: unknown provider, key not set, endpoint down, key rejected."""


def preflight_backbone(client: Any, defer_live: bool = False) -> str:
    """Check `client` (an `LLMClient`) from synchronous code; returns what was checked, or raises `BackboneUnusable`.

    `defer_live`: put the live request off until the run's first call the cache cannot answer, when the cache
    holds answers of this backbone (see the module). Safe to call from a thread with no event loop (the CLI, the
    TUI's workers). Anything that is not an `LLMClient` is a test double answering by construction, and passes.
    """
    from qatui.llm.client import LLMClient

    if not isinstance(client, LLMClient):
        return "scripted backbone"
    return asyncio.run(apreflight_backbone(client, defer_live))


async def apreflight_backbone(client: LLMClient, defer_live: bool = False) -> str:
    """The checks of `preflight_backbone`, on the running loop; a backbone with deployments checks each one (and
    is never deferred)."""
    if client.settings.deployments:
        return "; ".join([await _check_deployment(client, i) for i in range(len(client.settings.deployments))])
    fix = _fix(client)
    try:
        if client.is_local:
            client.precheck()  # the model file and its runtime (the `local` extra)
            return f"{client.label}: embedded, model file present"
        _known_provider(client)
        client.api_key()
        client.precheck()
    except LLMCallError as e:
        raise BackboneUnusable(f"backbone {client.name!r} cannot be used: {_without_model(e, client)}{fix}") from None
    if defer_live and client.use_cache and client.cache.holds_answers_of(client.model, client.settings.api_base):
        client.deferred_check = DeferredCheck(lambda: _live(client))
        return (f"{client.label}: its answers are in the call cache; checked live at the run's first call the "
                "cache cannot answer")
    client.deferred_check = None
    return await _live(client)


def offline_check(client: Any) -> str:
    """What `run --plan --offline` can know of `client` (an `LLMClient`) with no network and no key, as one line.

    Refused (`BackboneUnusable`) only for what neither a key nor a network would fix: a provider LiteLLM does not
    know, an embedded model's missing file. A key not set is said in the line (a run is refused until it is set);
    no request is sent, so whether the endpoint answers is not known and the line says so."""
    from qatui.llm.client import LLMClient

    if not isinstance(client, LLMClient):
        return "scripted backbone"
    if client.is_local:
        try:
            client.precheck()
        except LLMCallError as e:
            raise BackboneUnusable(f"backbone {client.name!r} cannot be used: {_without_model(e, client)}") from None
        return f"{client.label}: embedded, model file present"
    parts = ([_single(client, i) for i in range(len(client.settings.deployments))] if client.settings.deployments
             else [client])
    missing = []
    for part in parts:
        try:
            _known_provider(part)
        except LLMCallError as e:
            raise BackboneUnusable(f"backbone {part.name!r} cannot be used: {_without_model(e, part)}") from None
        try:
            part.api_key()
            part.precheck()
        except LLMCallError as e:
            missing.append(f"{part.name}: {_without_model(e, part)}" if part is not client else _without_model(e, part))
    key = ("; ".join(missing) + ": a run is refused until it is set") if missing else "its key is set"
    return f"{client.label}: provider known, {key}; not checked live (--offline: nothing sent)"


async def _live(client: LLMClient) -> str:
    """The live request of the preflight (one attempt, 8 tokens, no cache): its line, or `BackboneUnusable`."""
    fix = _fix(client)
    probe = _probe_client(client)
    try:
        return await probe.check()
    except LLMCallError as e:
        if _cause_is(e, "RateLimitError"):
            return f"{client.label}: reachable (rate limited now; the run's retries will wait)"
        if (_cause_is(e, "BadRequestError") or _cause_is(e, "UnsupportedParamsError")) and (
                option := refused_option(str(e))):
            raise BackboneUnusable(_refused(client, option)) from None
        if _cause_is(e, "APIConnectionError"):
            detail = mask_keys(first_line(e.__cause__), client.api_key()) if e.__cause__ else str(e)
            raise BackboneUnusable(f"backbone {client.name!r} cannot be reached: {detail}. Start its server or fix "
                                   "its api_base, or run on the embedded model with --backbone local/smollm2") from None
        if e.cost_unknown:  # it answered, but its server miscounts: no call of the run could be priced
            raise BackboneUnusable(f"backbone {client.name!r} answered a one-line test request, but "
                                   f"{_without_model(e, client)}. Its server or a proxy before it miscounts tokens: "
                                   "fix it, or run on the embedded model with --backbone local/smollm2") from None
        raise BackboneUnusable(f"backbone {client.name!r} did not answer a one-line test request: "
                               f"{_without_model(e, client)}{fix}") from None


async def _check_deployment(client: LLMClient, index: int) -> str:
    """One deployment checked as a backbone of its own (key set, one 8-token request); a refusal names it."""
    single = _single(client, index)
    label = single.name
    try:
        return await apreflight_backbone(single)
    except BackboneUnusable as e:
        raise BackboneUnusable(str(e).replace(f"backbone {label!r}", f"backbone {client.name!r}: deployment "
                                              f"{label!r}", 1)) from None


def _single(client: LLMClient, index: int) -> LLMClient:
    """Deployment `index` of `client` as a backbone of its own, named BACKBONE/DEPLOYMENT."""
    from qatui.config import BackboneConfig
    from qatui.llm.backbone import Backbone

    dep = client.settings.deployments[index]
    single = copy.copy(client)
    single.name, single.model = f"{client.name}/{client.settings.deployment_names()[index]}", dep.model
    single.backbone = Backbone(dep.model, api_key_env=dep.api_key_env)
    single.settings = BackboneConfig(model=dep.model, api_base=dep.api_base, api_key_env=dep.api_key_env,
                                     timeout_s=client.settings.timeout_s, max_tokens=client.settings.max_tokens,
                                     **client.settings.model_dump(include={"temperature", "reasoning_effort",
                                                                           "thinking_budget", "leave_out", "direct_http"}))
    return single


def _refused(client: LLMClient, option: str) -> str:
    """One line for a backbone whose model refused a request option: which one, and how to stop sending it."""
    table = f"[backbones.{client.name}]" if client.name != client.model else (
        f"a [backbones.NAME] table with model = \"{client.model}\"")
    if option in LEAVABLE:
        fix = f"add leave_out = [\"{option}\"] to {table}"
    elif option in ("reasoning_effort", "thinking"):
        fix = f"remove reasoning_effort and thinking_budget from {table}"
    else:
        fix = "qatui sends it on every call; choose another model"
    return f"backbone {client.name!r} refuses the request option {option!r} (400 from {client.model}): {fix}"


def _probe_client(client: LLMClient) -> LLMClient:
    """The client with a private one-attempt, short-timeout backbone: a check must not wait out the run's retries."""
    from qatui.llm.backbone import Backbone

    probe = copy.copy(client)
    probe.deferred_check = None  # the probe is the check: never one put off
    probe.backbone = Backbone(client.model, max_concurrency=1, max_attempts=1, rate_limit_budget_s=0,
                              timeout_s=min(max(client.settings.timeout_s, PROBE_FLOOR_S), PROBE_TIMEOUT_S),
                              api_key_env=client.settings.api_key_env)
    return probe


def _known_provider(client: LLMClient) -> None:
    """LiteLLM must know the provider of the model string (`openai/...`, `ollama/...`), else no call can work.

    A fact (`llm.facts`): LiteLLM is asked once per model, api_base and LiteLLM version."""
    from qatui.llm.facts import is_bool

    inputs = {"model": client.model, "api_base": client.settings.api_base}
    if not client.facts.get("provider", inputs, lambda: _provider_known(client.model, client.settings.api_base), is_bool):
        raise LLMCallError(f"{client.model}: LiteLLM knows no provider for this model string; write it as "
                           "PROVIDER/MODEL, e.g. openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest, "
                           "ollama/qwen2.5, hosted_vllm/NAME with api_base") from None


def _provider_known(model: str, api_base: str | None) -> bool:
    """Whether LiteLLM finds a provider for `model` (at `api_base`)."""
    from qatui.llm._lazy import get_litellm

    try:
        get_litellm().get_llm_provider(model=model, api_base=api_base)
    except Exception:  # noqa: BLE001 - LiteLLM raises its own BadRequestError here
        return False
    return True


def _cause_is(error: LLMCallError, kind: str) -> bool:
    """Whether the probe failed with LiteLLM's exception class `kind` (RateLimitError, APIConnectionError)."""
    cause = error.__cause__
    return cause is not None and any(cls.__name__ == kind for cls in type(cause).__mro__)


def _without_model(error: LLMCallError, client: LLMClient) -> str:
    """The error's message without the leading "MODEL: " (the refusal names the backbone already)."""
    text = str(error)
    prefix = f"{client.model}: "
    return text[len(prefix):] if text.startswith(prefix) else text


def _fix(client: LLMClient) -> str:
    """What to try, appended to a refusal."""
    if client.is_local:
        return ""
    where = f" (api_base {client.settings.api_base})" if client.settings.api_base else ""
    return (f". Check the model name, its key and that the endpoint{where} is up with `qatui models --check`, "
            "or run on the embedded model with --backbone local/smollm2")
