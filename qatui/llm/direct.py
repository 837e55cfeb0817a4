"""Straight to an OpenAI-compatible endpoint: one shared aiohttp client where LiteLLM would only pass through.

A backbone `openai/MODEL` with an `api_base` (a local vLLM, llama.cpp or Ollama server, a proxy)
gets from LiteLLM only a pass-through: the same JSON body, posted to `{api_base}/chat/completions`.
LiteLLM's own per-call CPU (its request mapping, pydantic response objects, logging payload and a
price search for a model missing from its price map: about 3 ms a call, bench/NOTES.md note 1) was
the ceiling of a run's calls per second. So such a request is posted here, on one aiohttp session
per event loop, and read into plain objects that the same readers take (`response.answer_of`,
`usage_of`, `cost_of`, `logprobs.logprobs_of`, `stream.stream_consumer`).

It is exactly LiteLLM's request, or LiteLLM's path is taken instead:
- `takes` asks LiteLLM once per model and option values (`get_optional_params`, memoised) which
  options it would send: only when it sends each one unchanged (or drops it: `drop_params`) is the
  request posted here; a renamed or rewritten option (o-series' `max_completion_tokens`) goes
  through LiteLLM;
- errors are LiteLLM's own: an HTTP status, or a failure to connect (a 500 there), goes through
  LiteLLM's exception mapping (`litellm_error`, as its HTTP handler's errors do), a stream cut off is
  its `APIConnectionError`, a body that is not JSON its `APIError`; so `backbone.Backbone.run`
  classifies, retries, paces and masks them in its one place;
- a reply whose shape is not a plain chat completion (a choice without a message, a content that is
  not text) is converted by LiteLLM's own converter, which accepts or refuses it as it always did.
The key is sent as `Authorization: Bearer` only when there is one. `[backbones.NAME] direct_http = false`
keeps a backbone on LiteLLM's path (docs/CONFIG.md).
"""

from __future__ import annotations

import asyncio
import atexit
import json
import threading
import weakref
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aiohttp import ClientResponse, ClientSession

    from qatui.config import BackboneConfig

PROVIDERS = ("openai",)
"""The LiteLLM providers whose chat request LiteLLM passes through unchanged to an `api_base`."""

SENT_AS_IS = frozenset({"model", "messages", "api_base", "api_key", "stream", "stream_options", "drop_params",
                        "max_retries", "timeout"})
"""Request keys that are no model options: handled here (`max_retries` and `timeout` are the backbone's)."""

USER_AGENT = "qatui"


def eligible(settings: BackboneConfig) -> bool:
    """Whether a backbone's calls may go straight to its endpoint: `openai/` with an `api_base`, no deployments,
    and `direct_http` left on."""
    return (settings.direct_http and bool(settings.api_base) and not settings.deployments
            and settings.model.split("/", 1)[0] in PROVIDERS)


# -- which requests ----------------------------------------------------------------------------

_plans: dict[tuple, bool] = {}


def takes(request: dict[str, Any]) -> bool:
    """Whether LiteLLM would send `request`'s options unchanged (each as given, or dropped): memoised per model,
    api_base and option values (a response format counts by its presence)."""
    options = {k: v for k, v in request.items() if k not in SENT_AS_IS}
    key = (request["model"], request.get("api_base"),
           tuple(sorted((k, v if isinstance(v, (str, int, float, bool)) else type(v).__name__)
                        for k, v in options.items())))
    if (known := _plans.get(key)) is None:
        known = _plans[key] = _unchanged(request["model"], options)
    return known


def _unchanged(model: str, options: dict[str, Any]) -> bool:
    """LiteLLM's mapping of `options` for `model` (drop_params on) leaves each as given or drops it."""
    from qatui.llm._lazy import get_litellm

    get_litellm()
    try:
        from litellm.utils import get_optional_params

        provider, name = model.split("/", 1)
        sent = get_optional_params(model=name, custom_llm_provider=provider, drop_params=True, **options)
    except Exception:  # noqa: BLE001 - LiteLLM refuses or changed: let it send the request itself
        return False
    sent = {k: v for k, v in sent.items() if not (k == "stream" and v is False) and not (k == "extra_body" and not v)}
    return all(k in options and options[k] == v for k, v in sent.items())


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
    from qatui.llm._lazy import get_litellm

    ll = get_litellm()
    provider, name = request["model"].split("/", 1)
    body = {k: v for k, v in request.items() if k not in SENT_AS_IS or k in ("messages", "stream", "stream_options")}
    body = {"model": name, **{k: v for k, v in body.items() if v is not None}}
    headers = {"Content-Type": "application/json"}
    if api_key := request.get("api_key"):
        headers["Authorization"] = f"Bearer {api_key}"
    url = str(request["api_base"]).rstrip("/") + "/chat/completions"
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
    return _response(_json(text, request["model"], provider), request["model"], provider)


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


def _json(text: str, model: str, provider: str) -> Any:
    """The body as JSON, or LiteLLM's `APIError` for one that is not (the decoding error in its chain)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        from qatui.llm._lazy import get_litellm

        raise get_litellm().APIError(status_code=500, message=f"OpenAIException - {e}", llm_provider=provider,
                                     model=model) from e


# -- plain responses -----------------------------------------------------------------------------

class Message:
    """A reply's message, with the attributes LiteLLM's `Message` gives the readers."""

    __slots__ = ("content", "reasoning_content", "thinking_blocks", "role")

    def __init__(self, content: str | None, reasoning_content: str | None, role: str = "assistant") -> None:
        self.content = content
        self.reasoning_content = reasoning_content
        self.thinking_blocks = None
        self.role = role


class Choice:
    """One choice: its message, finish reason and log-probabilities (a plain dict, as the provider sent it)."""

    __slots__ = ("message", "finish_reason", "logprobs", "index")

    def __init__(self, message: Message, finish_reason: str, logprobs: Any = None, index: int = 0) -> None:
        self.message = message
        self.finish_reason = finish_reason
        self.logprobs = logprobs
        self.index = index


class Usage:
    """Token counts as the provider reported them (`completion_tokens_details` kept as its dict)."""

    __slots__ = ("prompt_tokens", "completion_tokens", "total_tokens", "completion_tokens_details")

    def __init__(self, raw: Any) -> None:
        raw = raw if isinstance(raw, dict) else {}
        self.prompt_tokens = raw.get("prompt_tokens") or 0
        self.completion_tokens = raw.get("completion_tokens") or 0
        self.total_tokens = raw.get("total_tokens") or 0
        self.completion_tokens_details = raw.get("completion_tokens_details")


class Response:
    """A chat completion read without LiteLLM: what `qatui.llm.response` and `logprobs` read of LiteLLM's
    `ModelResponse`. `priced` is the dict LiteLLM's `completion_cost` prices (`response.cost_of`)."""

    __slots__ = ("model", "choices", "usage", "priced")

    def __init__(self, model: str, choices: list[Choice], usage: Usage, raw_usage: Any) -> None:
        self.model = model
        self.choices = choices
        self.usage = usage
        self.priced = {"model": model, "usage": raw_usage if isinstance(raw_usage, dict) else {}}


def _plain_message(message: Any) -> bool:
    """Whether LiteLLM would read `message` as it is: a dict whose content is text or null."""
    return isinstance(message, dict) and (message.get("content") is None or isinstance(message.get("content"), str))


def _response(data: Any, model: str, provider: str) -> Any:
    """A `Response` from a plain chat completion; anything else through LiteLLM's own converter (its result,
    or its error mapped as its path maps it)."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not all(isinstance(c, dict) and _plain_message(c.get("message"))
                                                for c in choices):
        return _converted(data, model, provider)
    finish = _finish_reason_mapper()
    made = []
    for i, choice in enumerate(choices):
        message = choice["message"]
        reasoning = message.get("reasoning_content")
        if reasoning is None:
            reasoning = message.get("reasoning")
        made.append(Choice(Message(message.get("content"), reasoning, message.get("role") or "assistant"),
                           finish(choice.get("finish_reason") or "stop"), choice.get("logprobs"), i))
    return Response(str(data.get("model") or ""), made, Usage(data.get("usage")), data.get("usage"))


def _converted(data: Any, model: str, provider: str) -> Any:
    """LiteLLM's `ModelResponse` of an unusual reply, or the error its path raises for it."""
    from litellm.litellm_core_utils.exception_mapping_utils import exception_type
    from litellm.litellm_core_utils.llm_response_utils.convert_dict_to_response import (
        convert_to_model_response_object,
    )

    from qatui.llm._lazy import get_litellm

    ll = get_litellm()
    try:
        return convert_to_model_response_object(response_object=data, model_response_object=ll.ModelResponse())
    except Exception as e:  # noqa: BLE001 - mapped to LiteLLM's class for it, as its own path does
        raise exception_type(model=model, original_exception=e, custom_llm_provider=provider) from e


_mapper: Any = None


def _finish_reason_mapper() -> Any:
    """LiteLLM's `map_finish_reason` (a provider's "eos" or "max_tokens" named as OpenAI names it)."""
    global _mapper
    if _mapper is None:
        from litellm.litellm_core_utils.core_helpers import map_finish_reason

        _mapper = map_finish_reason
    return _mapper


# -- streams -------------------------------------------------------------------------------------

_SSE_FIELDS = (b":", b"event:", b"id:", b"retry:")
"""How the lines of a server-sent event stream that carry no data begin."""


class Stream:
    """A streamed reply (server-sent events): iterate it for the pieces of text as they come, then `built()`.

    `chunks` counts the events that carried JSON; `carried_answer` whether any choice had a role, a content
    or reasoning (else `built()` has no choices, as `stream.stream_consumer` makes LiteLLM's)."""

    def __init__(self, reply: ClientResponse, model: str, provider: str) -> None:
        self.reply = reply
        self.model = model
        self.provider = provider
        self.chunks = 0
        self.carried_answer = False
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._finish: str | None = None
        self._usage: Any = None
        self._served_model = ""
        self._logprobs: list[Any] = []

    def __aiter__(self) -> AsyncIterator[str]:
        return self._pieces()

    async def _pieces(self) -> AsyncIterator[str]:
        import aiohttp

        from qatui.llm._lazy import get_litellm

        try:
            async for line in self.reply.content:
                if not line.startswith(b"data:"):
                    if line.strip() and not line.startswith(_SSE_FIELDS):
                        self.chunks += 1  # a body that is no stream: a chunk with no choice, as LiteLLM reads it
                    continue
                data = line[5:].strip()
                if data == b"[DONE]":
                    break
                if not data:
                    continue
                piece = self._read(_json(data.decode("utf-8", "replace"), self.model, self.provider))
                if piece:
                    yield piece
        except (aiohttp.ClientError, OSError) as e:
            raise get_litellm().APIConnectionError(message=f"{type(e).__name__}: {e}", llm_provider=self.provider,
                                                   model=self.model) from e
        finally:
            self.reply.release()

    def _read(self, chunk: Any) -> str | None:
        """Keep what one chunk says; the piece of answer text it carries."""
        if not isinstance(chunk, dict):
            return None
        self.chunks += 1
        if chunk.get("model"):
            self._served_model = str(chunk["model"])
        if isinstance(chunk.get("usage"), dict):
            self._usage = chunk["usage"]
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return None
        choice = choices[0]
        if choice.get("finish_reason"):
            self._finish = choice["finish_reason"]
        if isinstance((found := choice.get("logprobs")), dict) and isinstance(found.get("content"), list):
            self._logprobs.extend(found["content"])
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return None
        content = delta.get("content")
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if content is not None or delta.get("role") or reasoning:
            self.carried_answer = True
        if isinstance(reasoning, str):
            self._reasoning.append(reasoning)
        if isinstance(content, str) and content:
            self._content.append(content)
            return content
        return None

    def built(self, messages: list[dict[str, Any]]) -> Response:
        """The whole reply, as a non-streamed one reads (no choices when no chunk carried an answer).

        A stream that reported no usage is counted as LiteLLM's stream builder counts it (its token
        counter over `messages` and the answer, thinking included), so both paths record the same tokens."""
        choices = []
        content = "".join(self._content) if self._content else None
        reasoning = "".join(self._reasoning) if self._reasoning else None
        if self.carried_answer:
            logprobs = {"content": self._logprobs} if self._logprobs else None
            choices.append(Choice(Message(content, reasoning), _finish_reason_mapper()(self._finish or "stop"),
                                  logprobs))
        usage = self._usage if self._usage is not None else self._counted(messages, content, reasoning if choices
                                                                          else None)
        return Response(self._served_model, choices, Usage(usage), usage)

    def _counted(self, messages: list[dict[str, Any]], content: str | None, reasoning: str | None) -> dict[str, int]:
        """Usage by LiteLLM's token counter, for a stream that reported none."""
        from qatui.llm._lazy import get_litellm

        count = get_litellm().token_counter
        model = self._served_model or self.model
        try:
            prompt = count(model=model, messages=messages)
        except Exception:  # noqa: BLE001 - as LiteLLM: a count that fails is 0
            prompt = 0
        completion = count(model=model, text=content or "", count_response_tokens=True)
        if reasoning:
            completion += count(model=model, text=reasoning, count_response_tokens=True)
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
