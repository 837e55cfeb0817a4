"""A chat completion read without LiteLLM: plain objects with the attributes the readers take of LiteLLM's.

`qatui.llm.direct` posts a request LiteLLM would only pass through; its reply is read here into
`Response` (`choices[0].message.content`, `reasoning_content`, `finish_reason`, `logprobs`, `usage`,
`model`), which `response.answer_of`, `usage_of`, `cost_of` and `logprobs.logprobs_of` read as they read
LiteLLM's `ModelResponse`; a stream (`Stream`) gives its pieces of text as they come, then the same
`Response`. Where a reply is not a plain chat completion, LiteLLM's own converter reads it (its result, or
its error), so both paths accept and refuse the same replies.

Log-probabilities are kept as LiteLLM keeps them: a reply's `choices[].logprobs` as sent (LiteLLM's
`ChoiceLogprobs` holds the same values, and `logprobs.logprobs_of` reads either alike), one whose shape
LiteLLM's types would refuse or coerce (a token that is no string, a missing `top_logprobs`, a number
written as text) read by its converter; a stream's chunks carry them but LiteLLM's stream builder drops
them, so a streamed reply has none here either (a call asking for them is never streamed: `client.complete`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aiohttp import ClientResponse


def json_of(text: str, model: str, provider: str) -> Any:
    """The body as JSON, or LiteLLM's `APIError` for one that is not (the decoding error in its chain)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        from qatui.llm._lazy import get_litellm

        raise get_litellm().APIError(status_code=500, message=f"OpenAIException - {e}", llm_provider=provider,
                                     model=model) from e


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


def _number(value: Any) -> bool:
    """A log-probability LiteLLM's float field keeps as it is (a bool or a numeric string it would coerce)."""
    return isinstance(value, float) or (isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**53)


def _plain_token(entry: Any, alternatives: bool) -> bool:
    """An entry of `logprobs.content` (`alternatives`) or of its `top_logprobs` as LiteLLM's types take it unchanged."""
    if not (isinstance(entry, dict) and isinstance(entry.get("token"), str) and _number(entry.get("logprob"))):
        return False
    raw = entry.get("bytes")
    if raw is not None and not (isinstance(raw, list) and all(type(b) is int for b in raw)):
        return False
    if not alternatives:
        return True
    top = entry.get("top_logprobs", False)  # required (null is read as []); missing is LiteLLM's error
    return top is None or (isinstance(top, list) and all(_plain_token(alt, False) for alt in top))


def plain_logprobs(value: Any) -> bool:
    """Whether LiteLLM keeps a choice's `logprobs` as sent: not a dict (kept as it is), or a dict whose `content`
    is null or a list of plain entries. Anything else LiteLLM's `ChoiceLogprobs` coerces or refuses."""
    if not isinstance(value, dict):
        return True
    content = value.get("content")
    return content is None or (isinstance(content, list) and all(_plain_token(e, True) for e in content))


def reply_of(data: Any, model: str, provider: str) -> Any:
    """A `Response` from a plain chat completion; anything else through LiteLLM's own converter (its result,
    or its error mapped as its path maps it)."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not all(isinstance(c, dict) and _plain_message(c.get("message"))
                                                and plain_logprobs(c.get("logprobs")) for c in choices):
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


OPENAI_FINISH_REASONS = frozenset({"stop", "length", "content_filter", "tool_calls", "function_call"})
"""OpenAI's own names, each of which LiteLLM's map keeps as it is: read without asking LiteLLM."""


def _finish_reason_mapper() -> Any:
    """LiteLLM's `map_finish_reason` (a provider's "eos" or "max_tokens" named as OpenAI names it); an OpenAI
    name is its own mapping, so LiteLLM is imported only for another (a cached run's preflight imports none)."""
    return _finish_reason


def _finish_reason(reason: str) -> Any:
    global _mapper
    if reason in OPENAI_FINISH_REASONS:
        return reason
    if _mapper is None:
        from qatui.llm._lazy import get_litellm

        get_litellm()
        from litellm.litellm_core_utils.core_helpers import map_finish_reason

        _mapper = map_finish_reason
    return _mapper(reason)


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
        self._done = False  # the server's `data: [DONE]` came
        self._usage: Any = None
        self._served_model = ""

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
                    self._done = True
                    break
                if not data:
                    continue
                text = data.decode("utf-8", "replace")
                chunk = json_of(text, self.model, self.provider)
                if isinstance(chunk, dict) and chunk.get("error"):  # the server failed after its 200
                    raise stream_error(chunk, self.model, self.provider, "".join(self._content),
                                       first=not self.chunks)
                if isinstance(chunk, dict) and not all(plain_logprobs(c.get("logprobs")) for c in
                                                       chunk.get("choices") or () if isinstance(c, dict)):
                    _check_chunk(chunk, line.decode("utf-8", "replace").rstrip("\r\n"), self.model, self.provider)
                piece = self._read(chunk)
                if piece:
                    yield piece
        except (aiohttp.ClientError, OSError) as e:
            raise get_litellm().APIConnectionError(message=f"{type(e).__name__}: {e}", llm_provider=self.provider,
                                                   model=self.model) from e
        finally:
            self.reply.release()

    @property
    def unfinished(self) -> bool:
        """Whether the body ended mid-answer: an answer came, but neither a finish_reason nor `[DONE]` (a proxy or
        server that gave up and closed in order). What came is a draft, never an answer (`stream.stream_consumer`)."""
        return self.carried_answer and self._finish is None and not self._done

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
        if self.carried_answer:  # no log-probabilities: LiteLLM's stream builder drops them
            choices.append(Choice(Message(content, reasoning), _finish_reason_mapper()(self._finish or "stop")))
        usage = self._usage if self._usage is not None else self._counted(messages, content, reasoning if choices
                                                                          else None)
        return Response(self._served_model, choices, Usage(usage), usage)

    def _counted(self, messages: list[dict[str, Any]], content: str | None, reasoning: str | None) -> dict[str, int]:
        """Usage by LiteLLM's token counter, for a stream that reported none."""
        from qatui.llm.tokens import count_messages, count_text

        model = self._served_model or self.model
        try:
            prompt = count_messages(model, messages)
        except Exception:  # noqa: BLE001 - as LiteLLM: a count that fails is 0
            prompt = 0
        completion = count_text(model, content or "", answer=True)
        if reasoning:
            completion += count_text(model, reasoning, answer=True)
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def stream_error(chunk: dict[str, Any], model: str, provider: str, generated: str, *, first: bool) -> BaseException:
    """The error LiteLLM's stream raises for a chunk carrying an error object (`{"error": {...}}`, as vLLM or a
    proxy sends when it fails after answering 200): its chunk parser's `OpenAIError` (the object's `code` as the
    status when it is one, else 500) mapped by `exception_type`; a client error (4xx but 429) as it is, anything
    else wrapped as its stream wrapper wraps it (`MidStreamFallbackError`, which `backbone` unwraps). `generated`
    is the answer's text so far, and `first` whether no chunk came before."""
    from qatui.llm._lazy import get_litellm

    get_litellm()
    from litellm.exceptions import MidStreamFallbackError
    from litellm.litellm_core_utils.exception_mapping_utils import exception_type
    from litellm.llms.openai.chat.gpt_transformation import OpenAIChatCompletionStreamingHandler
    from litellm.llms.openai.common_utils import OpenAIError

    message, status = OpenAIChatCompletionStreamingHandler._extract_error_from_chunk(chunk) or ("", 500)
    error = OpenAIError(status_code=status, message=message)
    try:
        mapped = exception_type(model=model, custom_llm_provider=provider, original_exception=error,
                                completion_kwargs={}, extra_kwargs={})
    except Exception as raised:  # noqa: BLE001 - exception_type raises the mapped class
        mapped = raised
    mapped.__cause__ = error
    code = getattr(mapped, "status_code", None)
    if (isinstance(code, int) and 400 <= code < 500 and code != 429) or (400 <= status < 500 and status != 429):
        return mapped  # LiteLLM raises a client error as it is: no fallback
    wrapped = MidStreamFallbackError(message=str(mapped), model=model, llm_provider=provider,
                                     original_exception=mapped, generated_content=generated, is_pre_first_chunk=first)
    wrapped.__cause__ = mapped
    return wrapped


def _check_chunk(chunk: dict[str, Any], line: str, model: str, provider: str) -> None:
    """A chunk whose log-probabilities are not plain, read by LiteLLM's own chunk parser: the error its stream
    raises for one it refuses (a chunk it cannot parse), nothing for one it takes."""
    import copy

    from qatui.llm._lazy import get_litellm

    get_litellm()
    from litellm.litellm_core_utils.exception_mapping_utils import exception_type
    from litellm.llms.openai.chat.gpt_transformation import OpenAIChatCompletionStreamingHandler

    try:
        OpenAIChatCompletionStreamingHandler(streaming_response=None, sync_stream=False).chunk_parser(
            copy.deepcopy(chunk))
    except ValueError as e:
        error = RuntimeError(f"Error parsing chunk: {e},\nReceived chunk: {line}")
        try:
            mapped = exception_type(model=model, custom_llm_provider=provider, original_exception=error,
                                    completion_kwargs={}, extra_kwargs={})
        except Exception as raised:  # noqa: BLE001 - exception_type raises the mapped class
            mapped = raised
        raise mapped from error
