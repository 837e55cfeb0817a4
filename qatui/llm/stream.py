"""A streamed answer: each piece emitted as an `LLMToken` as it arrives, then the chunks built into one response
(LiteLLM's stream, or `llm.replies.Stream` for a request posted straight to its endpoint)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from qatui.events import LLMToken, emit
from qatui.llm.direct import PROVIDERS as OPENAI_STYLE
from qatui.llm.replies import Stream


def stream_consumer(ll: Any, model: str, *, purpose: str, call_id: str,
                    messages: list[dict[str, Any]]) -> Callable[[Any], Awaitable[Any]]:
    """The `consume` of `Backbone.run` for a stream: read it whole (inside the call's slot and timeout).

    `ll` is LiteLLM; a stream that ends without any chunk is a connection failure (retried). A
    stream of which no chunk had a choice with a role or a content (`choices: []`, or a body
    that is no stream at all) is built with no choices, which `response.answer_of` refuses:
    LiteLLM would make up an empty answer that ended with "stop". So would it for an OpenAI-style
    stream that ended mid-answer, in order, with no finish_reason and no `[DONE]` (a proxy that
    gave up): what came is a draft, so that too is a connection failure (`_unfinished`), asked again.
    """

    async def consume(response: Any) -> Any:
        if isinstance(response, Stream):  # straight from the endpoint (`llm.direct`): text pieces, then the whole
            async for piece in response:
                emit(LLMToken(call_id=call_id, model=model, purpose=purpose, text=piece))
            if not response.chunks:
                raise _no_chunks(ll, model)
            if response.unfinished:
                raise _unfinished(ll, model)
            return response.built(messages)
        chunks = []
        async for chunk in response:
            chunks.append(chunk)
            piece = chunk.choices[0].delta.content if chunk.choices else None
            if piece:
                emit(LLMToken(call_id=call_id, model=model, purpose=purpose, text=piece))
        built = ll.stream_chunk_builder(chunks, messages=messages)
        if built is None:  # no chunks at all
            raise _no_chunks(ll, model)
        answered = any(_carries_answer(chunk) for chunk in chunks)
        if answered and not _provider_finished(ll, response):
            raise _unfinished(ll, model)
        if not answered:
            built.choices = []  # LiteLLM made up an empty "stop" choice: say there was none
        return built

    return consume


def _no_chunks(ll: Any, model: str) -> BaseException:
    """The error of a stream that ended without any chunk: a connection failure (retried)."""
    return _dropped(ll, model, "the stream ended without any chunk")


def _unfinished(ll: Any, model: str) -> BaseException:
    """The error of a stream that ended mid-answer with no finish_reason and no `[DONE]`: a connection failure."""
    return _dropped(ll, model, "the stream ended before its answer finished (no finish_reason, no [DONE]): what came "
                               "is a draft")


def _dropped(ll: Any, model: str, what: str) -> BaseException:
    """LiteLLM's connection error saying `what`, caused by a `ConnectionError`: the chain names the fault a dropped
    connection (`llm.faults.wire_fault`), as a pool's hops and the retry messages read it."""
    error = ll.APIConnectionError(message=what, model=model, llm_provider=model.split("/", 1)[0])
    error.__cause__ = ConnectionError(what)
    return error


def _provider_finished(ll: Any, response: Any) -> bool:
    """Whether an OpenAI-style stream read through LiteLLM ended with the provider's own finish_reason.

    OpenAI's protocol ends every answer with one. LiteLLM's wrapper yields a made-up "stop" when none came, but
    keeps in its `chunks` the final chunk only when the provider sent one. A pool's stream is a Router's subclass
    of that wrapper sharing its first deployment's `chunks`; when the Router moved the stream to another
    deployment mid-way (`fallback_headers_adopted`), the chunks that served are not readable, so its end is not
    known and it is taken as unfinished (asked again). Other providers' streams end as LiteLLM reads their own
    protocols.
    """
    if not isinstance(response, ll.CustomStreamWrapper) or response.custom_llm_provider not in OPENAI_STYLE:
        return True
    if getattr(response, "fallback_headers_adopted", False):
        return False
    return any(_finish_reason(chunk) for chunk in getattr(response, "chunks", None) or ())


def _finish_reason(chunk: Any) -> str | None:
    """A chunk's first choice's finish_reason, if it has one."""
    choices = getattr(chunk, "choices", None)
    return getattr(choices[0], "finish_reason", None) if choices else None


def _carries_answer(chunk: Any) -> bool:
    """Whether a chunk holds a choice that the provider sent: with a role, a content or reasoning."""
    delta = chunk.choices[0].delta if getattr(chunk, "choices", None) else None
    return delta is not None and (getattr(delta, "content", None) is not None or bool(getattr(delta, "role", None))
                                  or bool(getattr(delta, "reasoning_content", None)))
