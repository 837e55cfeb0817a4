"""Straight to an OpenAI-compatible endpoint: one shared aiohttp client where LiteLLM would only pass through.

A backbone `openai/MODEL` or `hosted_vllm/MODEL` with an `api_base` (a local vLLM, llama.cpp or Ollama
server, a proxy; or the provider's variable naming one, `$OPENAI_BASE_URL`) gets from LiteLLM only a
pass-through: the same JSON body, posted to `{api_base}/chat/completions` (`endpoint`).
LiteLLM's own per-call CPU (its request mapping, pydantic response objects, logging payload and a
price search for a model missing from its price map: about 3 ms a call, bench/NOTES.md note 1) was
the ceiling of a run's calls per second. So such a request is posted here, on one aiohttp session
per event loop, and read into plain objects (`llm.replies`) that the same readers take
(`response.answer_of`, `usage_of`, `cost_of`, `logprobs.logprobs_of`, `stream.stream_consumer`).

It is exactly LiteLLM's request, or LiteLLM's path is taken instead:
- `takes` asks LiteLLM once per model and option values (`get_optional_params`, memoised) which
  options it would send: only when it sends each one unchanged is the request posted here (one it
  drops, `drop_params`, would be posted here, so it goes through LiteLLM); a renamed or rewritten
  option (o-series' `max_completion_tokens`, `hosted_vllm`'s `thinking` sent as `reasoning_effort`), or a
  message that is not plain text (content parts, or keys beside role and content, which LiteLLM may
  rewrite), goes through LiteLLM;
- errors are LiteLLM's own: an HTTP status, or a failure to connect (a 500 there), goes through
  LiteLLM's exception mapping (`litellm_error`, as its HTTP handler's errors do), a stream cut off is
  its `APIConnectionError`, a body that is not JSON its `APIError`, a stream chunk carrying an error object (a
  server failing after its 200) its chunk parser's error (`replies.stream_error`); so `backbone.Backbone.run`
  classifies, retries, paces and masks them in its one place;
- a reply whose shape is not a plain chat completion (a choice without a message, a content that is
  not text) is converted by LiteLLM's own converter, which accepts or refuses it as it always did.
The key is sent as `Authorization: Bearer` as LiteLLM sends it: the backbone's, else the provider's variable
(`$OPENAI_API_KEY`, `$HOSTED_VLLM_API_KEY`), else none for `openai/` and "fake-api-key" for `hosted_vllm/`.
`[backbones.NAME] direct_http = false` keeps a backbone on LiteLLM's path (docs/BACKBONES.md).
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import threading
import weakref
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from qatui.llm.replies import Stream, json_of, reply_of

if TYPE_CHECKING:
    from aiohttp import ClientResponse, ClientSession

    from qatui.config import BackboneConfig

PROVIDERS = ("openai", "hosted_vllm")
"""The LiteLLM providers whose chat request LiteLLM passes through unchanged to an `api_base` (both through
its OpenAI chat config: `hosted_vllm`'s only adds option mappings, which `takes` asks of it, and rewrites
assistant messages that are not plain text, which never come here)."""

KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "hosted_vllm": "HOSTED_VLLM_API_KEY"}
"""The variable LiteLLM reads a provider's key from when the call names none (and it sends it then)."""

BASE_VARIABLES = {"openai": ("OPENAI_BASE_URL", "OPENAI_API_BASE"), "hosted_vllm": ("HOSTED_VLLM_API_BASE",)}
"""Where LiteLLM finds a provider's endpoint when the backbone names no `api_base`, first set first."""

NO_KEY = {"hosted_vllm": "fake-api-key"}
"""The key LiteLLM sends for a provider when there is none at all (a vLLM server started without `--api-key`
ignores it)."""

SENT_AS_IS = frozenset({"model", "messages", "api_base", "api_key", "stream", "stream_options", "drop_params",
                        "max_retries", "timeout"})
"""Request keys that are no model options: handled here (`max_retries` and `timeout` are the backbone's)."""

PLAIN_MESSAGE = frozenset({"role", "content"})
"""The keys of a message LiteLLM sends as it is (with text content); `hosted_vllm` drops an assistant's thinking."""

USER_AGENT = "qatui"


def eligible(settings: BackboneConfig) -> bool:
    """Whether a backbone's calls may go straight to its endpoint: `openai/` or `hosted_vllm/` (`PROVIDERS`) with an
    endpoint named (`api_base_of`), no deployments, and `direct_http` left on."""
    return (settings.direct_http and not settings.deployments and settings.model.split("/", 1)[0] in PROVIDERS
            and api_base_of(settings.model, settings.api_base) is not None)


def api_base_of(model: str, api_base: str | None) -> str | None:
    """The endpoint LiteLLM posts `model`'s requests to: `api_base`, else the provider's variable (`BASE_VARIABLES`:
    `$OPENAI_BASE_URL`, a proxy or a vLLM server say), read now; None when neither names one (LiteLLM's default,
    the provider's own service, is left to LiteLLM)."""
    if api_base:
        return api_base
    for name in BASE_VARIABLES.get(model.split("/", 1)[0], ()):
        if value := os.environ.get(name):
            return value
    return None


# -- which requests ----------------------------------------------------------------------------

_plans: dict[tuple, bool] = {}

FACT = "sent-as-given"
"""The fact `takes` keeps (renamed from "sent-unchanged" when a dropped option stopped counting as unchanged, so
no row of the looser rule is read back)."""


def takes(request: dict[str, Any], facts: Any = None) -> bool:
    """Whether LiteLLM would send `request` unchanged: messages of plain text, and each option as given
    (memoised per model, api_base and option values; a seed and a response format count by their presence), in
    this process and, given `facts` (`llm.facts.Facts`), beside the call cache: a new process asks LiteLLM no more."""
    if not all(isinstance(message.get("content"), str) and message.keys() <= PLAIN_MESSAGE
               for message in request["messages"]):
        return False  # parts, images, cache marks or an assistant's thinking: LiteLLM's own message transform applies
    options = {k: v for k, v in request.items() if k not in SENT_AS_IS}
    shape = tuple(sorted((k, v if isinstance(v, (str, int, float, bool)) and k != "seed" else type(v).__name__)
                         for k, v in options.items()))
    key = (request["model"], request.get("api_base"), shape)
    if (known := _plans.get(key)) is None:
        if facts is None:
            known = _unchanged(request["model"], options)
        else:
            from qatui.llm.facts import is_bool

            inputs = {"model": key[0], "api_base": key[1], "options": [list(o) for o in shape]}
            known = facts.get(FACT, inputs, lambda: _unchanged(request["model"], options), is_bool)
        _plans[key] = known
    return known


def _unchanged(model: str, options: dict[str, Any]) -> bool:
    """LiteLLM's mapping of `options` for `model` (drop_params on) sends each as given: none renamed, rewritten,
    added or dropped (a dropped one would be posted here, so such a request is LiteLLM's to send)."""
    from qatui.llm._lazy import get_litellm

    get_litellm()
    try:
        from litellm.utils import get_optional_params

        provider, name = model.split("/", 1)
        sent = get_optional_params(model=name, custom_llm_provider=provider, drop_params=True, **options)
    except Exception:  # noqa: BLE001 - LiteLLM refuses or changed: let it send the request itself
        return False
    sent = {k: v for k, v in sent.items() if not (k == "stream" and v is False) and not (k == "extra_body" and not v)}
    return sent.keys() == options.keys() and all(options[k] == v for k, v in sent.items())


# -- one session per event loop ----------------------------------------------------------------

_sessions: dict[int, tuple[weakref.ref[asyncio.AbstractEventLoop], ClientSession, Any]] = {}
_lock = threading.Lock()


async def _closer(session: ClientSession) -> AsyncIterator[None]:
    """An async generator held for the loop's life: `asyncio.run` closes it at the loop's end
    (`shutdown_asyncgens`), and it closes the session then, while the loop still runs."""
    try:
        yield
    finally:
        await session.close()


def _forget_closed() -> None:
    """Drop the sessions of loops that are gone or closed. One closed without shutting down its generators
    (not `asyncio.run`) left its session open: it is marked closed and its pool dropped, so that neither
    warns "Unclosed" when collected (the sockets close with their transports)."""
    with _lock:
        for key, (ref, made, _) in list(_sessions.items()):
            if (old := ref()) is None or old.is_closed():
                del _sessions[key]
                connector = made.connector
                made.detach()
                try:
                    getattr(connector, "_close", lambda: None)()  # aiohttp's own close, which skips a closed loop
                except Exception:  # noqa: BLE001 - best effort for a loop that is gone
                    pass


atexit.register(_forget_closed)


async def session() -> ClientSession:
    """This event loop's shared session (made on first use; closed with the loop)."""
    loop = asyncio.get_running_loop()
    entry = _sessions.get(id(loop))
    if entry is not None and entry[0]() is loop and not entry[1].closed:
        return entry[1]
    import aiohttp

    _forget_closed()
    made = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
                                 headers={"User-Agent": USER_AGENT}, skip_auto_headers=("Content-Type",))
    closer = _closer(made)
    await closer.asend(None)
    with _lock:
        _sessions[id(loop)] = (weakref.ref(loop), made, closer)
    return made


# -- the call ----------------------------------------------------------------------------------

async def acompletion(**request: Any) -> Any:
    """Post `request` (as `litellm.acompletion` takes it) to its `api_base`: a `Response`, or a `Stream` when
    `stream` is set. Raises LiteLLM's exception classes, as its own path does."""
    provider, name = request["model"].split("/", 1)
    body = {k: v for k, v in request.items() if k not in SENT_AS_IS or k in ("messages", "stream", "stream_options")}
    body = {"model": name, **{k: v for k, v in body.items() if v is not None}}
    headers = {"Content-Type": "application/json"}
    if api_key := request.get("api_key") or os.environ.get(KEY_VARIABLES[provider]) or NO_KEY.get(provider):
        headers["Authorization"] = f"Bearer {api_key}"  # LiteLLM's fallbacks too
    if (base := api_base_of(request["model"], request.get("api_base"))) is None:  # its variable unset since
        from qatui.llm._lazy import get_litellm

        return await get_litellm().acompletion(**request)
    url = endpoint(base)
    import aiohttp

    client = await session()
    try:
        reply = await client.post(url, data=json.dumps(body), headers=headers)
    except (aiohttp.ClientError, OSError) as e:
        raise litellm_error(500, str(e), request["model"], provider, cause=e)  # noqa: B904 - its cause is set
    if reply.status >= 400:
        await _raise_status(reply, request["model"], provider)
    if request.get("stream"):
        return Stream(reply, request["model"], provider)
    try:
        text = await reply.text()
    except (aiohttp.ClientError, OSError) as e:
        raise litellm_error(500, str(e), request["model"], provider, cause=e)  # noqa: B904 - its cause is set
    finally:
        reply.release()
    return reply_of(json_of(text, request["model"], provider), request["model"], provider)


def endpoint(api_base: str) -> str:
    """Where LiteLLM's OpenAI chat config posts for `api_base`: `{api_base}/chat/completions`, or the api_base as it
    is when it names that endpoint already."""
    base = api_base.rstrip("/")
    return base if "chat/completions" in base else f"{base}/chat/completions"


async def _raise_status(reply: ClientResponse, model: str, provider: str) -> None:
    """LiteLLM's exception for an HTTP error status, with the provider's body and headers."""
    import aiohttp
    import httpx

    try:
        text = await reply.text()
    except (aiohttp.ClientError, OSError, UnicodeDecodeError):
        text = ""
    finally:
        reply.release()
    raise litellm_error(reply.status, text, model, provider, headers=httpx.Headers(list(reply.headers.items())))


def litellm_error(status: int, message: str, model: str, provider: str, *, headers: Any = None,
                  cause: BaseException | None = None) -> BaseException:
    """The exception LiteLLM's HTTP handler ends with: its `OpenAIError(status)` mapped by its `exception_type`
    (a failure without a status is a 500 there: a refused connection is its `InternalServerError`), caused by
    `cause` so that `faults.wire_fault` reads the chain as it reads LiteLLM's."""
    from qatui.llm._lazy import get_litellm

    get_litellm()
    from litellm.litellm_core_utils.exception_mapping_utils import exception_type
    from litellm.llms.openai.common_utils import OpenAIError

    error = OpenAIError(status_code=status, message=message, headers=headers)
    error.__cause__ = cause
    try:
        mapped = exception_type(model=model, original_exception=error, custom_llm_provider=provider)
    except Exception as raised:  # noqa: BLE001 - exception_type raises the mapped class
        mapped = raised
    mapped.__cause__ = error
    return mapped
