"""The two ways an LLM call fails for the user: the call itself, or the answer's shape."""

from __future__ import annotations

import re
from typing import Any

from qatui.errors import QatuiError
from qatui.llm.faults import wire_fault

_GAVE_UP = re.compile(r", gave up after (\d+(?:\.\d+)?) s")


class LLMCallError(QatuiError):
    """A backbone call failed for good: after its retries, or at once for a non-transient error.

    The message names the model and says why ("openai/gpt-4o-mini: rate limited (429) 3
    times, gave up after 7.2 s"); it never contains an API key. `thinking` keeps what a
    reasoning model wrote before its answer was cut off, for the call's record (never read as an answer).
    `cost_usd` is what the provider billed for the failed call all the same (a batch line it answered that qatui
    cannot use): recorded with the call, and settled against the cost cap. `cost_unknown`: the provider answered,
    but what it billed cannot be known (its usage report cannot be true), so `cost_usd` is a floor.
    """

    def __init__(self, message: str, *, attempts: int = 0, transient: bool = False, thinking: str = "",
                 cost_usd: float = 0.0, cost_unknown: bool = False) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.transient = transient
        self.thinking = thinking
        self.cost_usd = cost_usd
        self.cost_unknown = cost_unknown


class ParseError(QatuiError):
    """A model's answer could not be read as the JSON the caller asked for.

    `text` is the whole answer; `reason` says what is wrong with it, in a few words; the
    message carries both (the text as a snippet). `ambiguous`: the answer gives two different answers (two JSON
    values that each fit, or one key with two values), so no reading of its raw text may pick one: a judge that reads
    a prose answer's `[[...]]` reads none from such an answer.
    """

    def __init__(self, message: str, *, text: str = "", reason: str = "", ambiguous: bool = False) -> None:
        super().__init__(message)
        self.text = text
        self.reason = reason or message
        self.ambiguous = ambiguous


def snippet(text: str, head: int = 160, tail: int = 60) -> str:
    """A one-line excerpt of model output for error messages."""
    flat = " ".join(text.split())
    if len(flat) <= head + tail + 5:
        return repr(flat)
    return repr(f"{flat[:head]} … {flat[-tail:]}")


def failure_cause(reason: str) -> str:
    """A failure's reason without the seconds its retries took, so that failures of one cause group together."""
    return _GAVE_UP.sub(", gave up", reason)


def grouped_reason(reasons: list[str]) -> str:
    """One line for failures of one cause (`failure_cause`): the reason, with the range of seconds when they differ."""
    times = [float(found[1]) for reason in reasons if (found := _GAVE_UP.search(reason))]
    if len(set(reasons)) == 1 or not times:
        return reasons[0]
    return _GAVE_UP.sub(f", gave up after {min(times):.1f}–{max(times):.1f} s", reasons[0], count=1)


def transient_classes(ll: Any) -> tuple[type[BaseException], ...]:
    """LiteLLM's (`ll`, the imported module) error classes worth asking again."""
    # litellm.Timeout is not an APIConnectionError (docs/LIBRARIES.md#litellm-calls): both are listed.
    return (ll.RateLimitError, ll.Timeout, TimeoutError, ll.APIConnectionError, ll.ServiceUnavailableError,
            ll.InternalServerError, ll.BadGatewayError)


def unnamed_server_error(error: BaseException, ll: Any) -> bool:
    """LiteLLM's bare `APIError` without a 4xx status: a failure it could not name, e.g. a 200 whose body is an error
    object with a word for its code (`"overloaded"`, kept as the status), which it names a 500 when streamed; asked
    again as a 500 is. The classes deriving from `APIError` (a 400, a 401, ...), a bare 4xx, and a reply that is not
    JSON or no chat completion (`llm.faults`: the same request gets the same body back, never retried) are not this."""
    status = getattr(error, "status_code", None)
    return (type(error) is ll.APIError and not (isinstance(status, int) and 400 <= status <= 499)
            and wire_fault(error) is None)  # a body that is not JSON (a proxy's page) is LiteLLM's APIError too


def is_transient(error: BaseException, ll: Any) -> bool:
    """Whether a failed call is worth asking again: 429s, timeouts, dropped connections, 5xx (named or not)."""
    return isinstance(error, transient_classes(ll)) or unnamed_server_error(error, ll)
