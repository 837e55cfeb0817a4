"""The one call site over `litellm.acompletion`: adaptive concurrency, hard timeout, our own retries.

Why our own (docs/LIBRARIES.md#litellm-calls): the OpenAI SDK retries by itself unless `max_retries=0`;
LiteLLM's `num_retries` is a silent no-op without `tenacity` and retries 400s with it; a
custom provider ignores `timeout=`. So every call goes out with `max_retries=0` under
`asyncio.timeout`, and only transient failures (429, timeouts, connection errors, 500,
502, 503) are retried here, with exponential backoff and jitter, sleeping outside the
concurrency slot, bounded by `max_attempts` and by a total time budget. Rate limits slow a run
and do not fail it: a 429 spends no attempt, its `Retry-After` is waited out, and only
`rate_limit_budget_s` bounds them (the time a call spends on its own 429s, never its waits for a slot
behind the run's other calls); the backbone's concurrency adapts to them (`qatui.llm.pacing`).
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import re
import time
import urllib.parse
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from qatui.llm._lazy import get_litellm
from qatui.llm.deferred import check_not_stopping
from qatui.llm.errors import LLMCallError, is_transient, unnamed_server_error
from qatui.llm.faults import CONNECTION, MALFORMED, NOT_JSON, malformed_reason, not_json_reason, root_text, wire_fault
from qatui.llm.pacing import MAX_PAUSE_S, OK, OTHER, OVERLOADED, AdaptiveLimit
from qatui.llm.router import Hop, hop_kind, hop_text
from qatui.text import plain

if TYPE_CHECKING:
    from qatui.llm.router import DeploymentRouter

T = TypeVar("T")

Sleep = Callable[[float], Awaitable[Any]]


def first_line(error: BaseException, limit: int = 300) -> str:
    """The provider's message without LiteLLM's 'litellm.XError: ' prefix, on one short line."""
    text = " ".join(str(error).split())
    text = re.sub(r" ?ssl:<[^>]*>| object at 0x[0-9a-f]+", "", text)  # aiohttp's repr noise, no help to a reader
    if text.startswith("litellm.") and ": " in text:
        text = text.split(": ", 1)[1]
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Backbone:
    """Bounded, retried access to one backbone model; shared by every client of that backbone.

    `total_timeout_s` (default: `timeout_s * (max_attempts + 1)`, room for every attempt
    plus the waits between them) bounds the retries: no wait starts that would end past
    it, counted from the first attempt, time spent on rate limits and waiting for a slot left out.
    Rate limits spend `rate_limit_budget_s` instead (see `run`). How many calls are in flight at once adapts
    (`pace`, `qatui.llm.pacing`): up to `max_concurrency`, halved on 429s and timeouts.
    """

    def __init__(
        self,
        model: str,
        *,
        max_concurrency: int = 4,
        timeout_s: float = 120.0,
        max_attempts: int = 3,
        total_timeout_s: float | None = None,
        rate_limit_budget_s: float = 600.0,
        base_delay_s: float = 1.0,
        max_delay_s: float = 30.0,
        api_key_env: str | None = None,
        sleep: Sleep | None = None,
        router: DeploymentRouter | None = None,
    ) -> None:
        self.model = model
        self.max_concurrency = max_concurrency
        self.timeout_s = timeout_s
        self.max_attempts = max_attempts
        self.total_timeout_s = total_timeout_s if total_timeout_s is not None else timeout_s * (max_attempts + 1)
        self.rate_limit_budget_s = rate_limit_budget_s
        self.base_delay_s = base_delay_s
        self.max_delay_s = max_delay_s
        self.api_key_env = api_key_env
        self.router = router
        self.sleep: Sleep = sleep or asyncio.sleep
        self.in_flight = 0
        self.max_in_flight = 0
        self._pace: AdaptiveLimit | None = None

    def backoff(self, attempt: int, error: BaseException | None = None) -> float:
        """Seconds to wait after failed attempt `attempt` (1-based): exponential, jittered, capped.

        A 429 that says `Retry-After` is waited out (up to the cap).
        """
        delay = min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1)) * random.uniform(0.5, 1.0)
        if (after := _retry_after(error)) is not None:
            delay = max(delay, min(after, self.max_delay_s))
        return delay

    @property
    def pace(self) -> AdaptiveLimit:
        """This backbone's concurrency limit (`qatui.llm.pacing`), made on first use; an embedded model's one slot.

        An embedded (`local/`) model generates one answer at a time, so it gets one slot, shared
        by every Backbone of it, whatever `max_concurrency` says: a call waits for it outside its
        timeout, and is timed from when it starts generating, never while it queues behind the others.
        """
        if self._pace is None:
            if self.model.startswith("local/"):
                self._pace = _LOCAL_SLOTS.setdefault(self.model, AdaptiveLimit(self.model, 1))
            else:
                self._pace = AdaptiveLimit(self.model, self.max_concurrency)
        return self._pace

    async def run(
        self,
        request: dict[str, Any],
        *,
        api_key: str | None = None,
        consume: Callable[[Any], Awaitable[T]] | None = None,
        hops: list[Hop] | None = None,
        send: Callable[..., Awaitable[Any]] | None = None,
    ) -> tuple[T, int]:
        """Call `litellm.acompletion(**request)` (or `send`, which takes the same arguments and raises LiteLLM's
        exceptions: `llm.direct.acompletion`); returns (result, tries made).

        `consume` turns the raw response into the result *inside* the slot and the
        timeout (a stream must be read while the slot is held). Raises `LLMCallError`. With deployments
        (`router`), `hops` collects which ones were asked and how each ended. A try that was rate limited
        (429, at every deployment asked) spends no attempt: it waits (`Retry-After` when the provider says)
        and asks again until it has spent `rate_limit_budget_s` on rate limits (`Limited`): a slot waited for
        behind a backlog of the run's own calls spends none of it, so a big run is slowed, never failed, by it.
        """
        ll: Any = None  # LiteLLM, imported only when it sends the request or a failure must be read
        failures: list[str] = []
        started: float | None = None
        last_error: BaseException | None = None
        hops = [] if hops is None else hops
        tries = attempts = 0
        limited = Limited()
        queued = 0.0  # seconds waited for a slot since the first try: an attempt's budget is not spent queuing
        while True:
            tries += 1
            start = len(hops)
            asked = time.monotonic()
            taken = await self.pace.acquire()
            if started is not None:  # a retry's wait for a slot: the run's backlog, charged to no budget
                queued += (slot_wait := time.monotonic() - asked)
                limited.queued(slot_wait)
            outcome, pause, rate_limited = OTHER, None, False
            try:
                if started is None:
                    # A call that waited for its slot behind a backlog is sent only if the run is not stopping: a
                    # first Ctrl-C (or the TUI's stop) while it queued sent it once the slot freed, a new call
                    # after the stop. Its slot goes back with no outcome (`RunStopping` is an `LLMCallError`).
                    check_not_stopping(self.model)
                    started = time.monotonic()
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
                try:
                    async with asyncio.timeout(self.timeout_s * (len(self.router.labels) if self.router else 1)):
                        kwargs = dict(request, max_retries=0, timeout=self.timeout_s)
                        if api_key is not None:
                            kwargs["api_key"] = api_key
                        if send is None or self.router is not None:
                            ll = get_litellm()
                        response = await ((send or ll.acompletion)(**kwargs) if self.router is None
                                          else self.router.acompletion(kwargs, hops))
                        result = await consume(response) if consume is not None else response
                finally:
                    self.in_flight -= 1
                outcome = OK
                return result, tries
            except LLMCallError:
                raise
            except Exception as e:  # noqa: BLE001 - read with LiteLLM's classes: retried, or permanent
                ll = get_litellm()
                if not is_transient(e, ll):  # anything else is not worth retrying
                    raise LLMCallError(self._describe_permanent(e, ll, api_key), attempts=tries) from e
                last_error = _unwrap(e)
                if not is_transient(last_error, ll) or wire_fault(last_error) == MALFORMED:  # permanent
                    raise LLMCallError(self._describe_permanent(last_error, ll, api_key), attempts=tries) from e
                failures.extend(self._transient_failures(last_error, ll, hops, start))
                rate_limited = self._rate_limited(last_error, ll, hops, start)
                if rate_limited or isinstance(last_error, (ll.Timeout, TimeoutError)):
                    outcome, pause = OVERLOADED, _retry_after(last_error) if rate_limited else None
                    self.pace.count(rate_limited)
            finally:
                self.pace.release(taken, outcome, pause)
            if rate_limited:
                delay = min(pause, MAX_PAUSE_S) if pause is not None else self.backoff(tries)
                if limited.spent(delay) >= self.rate_limit_budget_s:
                    failures.append(f"stopped: rate limited for {limited.elapsed():.1f} s, and the next try would "
                                    f"pass the rate_limit_budget_s of {self.rate_limit_budget_s:g} s")
                    break
                limited.wait(delay)
            else:
                attempts += 1
                elapsed = time.monotonic() - (started or time.monotonic()) - queued - limited.elapsed()
                if attempts >= self.max_attempts:
                    break
                delay = self.backoff(tries, last_error)
                if elapsed + delay >= self.total_timeout_s:
                    failures.append(f"stopped: the next try would pass the {self.total_timeout_s:g} s budget")
                    break
            await self.sleep(delay)  # outside the slot: a waiting call holds none
        elapsed = time.monotonic() - (started or time.monotonic())
        raise LLMCallError(self._summary(failures, elapsed, api_key, last_error), attempts=len(
            [f for f in failures if not f.startswith("stopped:")]), transient=True) from last_error

    def _rate_limited(self, error: BaseException, ll: Any, hops: list[Hop], start: int) -> bool:
        """Whether a try failed only on rate limits: a 429, or, with deployments, a 429 from each one asked."""
        asked = [kind for _, kind in hops[start:]]
        if asked:
            return all(kind == "429" for kind in asked)
        return isinstance(error, ll.RateLimitError)

    # -- messages -------------------------------------------------------------------------------

    def _transient_failures(self, error: BaseException, ll: Any, hops: list[Hop], start: int) -> list[str]:
        """What went wrong in one attempt: each deployment that failed, or the one error."""
        if hops[start:] and hops[-1][1] == "ok":  # the answer broke off after it began (a stream)
            hops[-1] = (hops[-1][0], hop_kind(error))
        failed = [hop_text(hop) for hop in hops[start:] if hop[1] != "ok"]
        return failed or [self._describe_transient(error, ll)]

    def _describe_transient(self, error: BaseException, ll: Any) -> str:
        fault = wire_fault(error)  # LiteLLM calls these 500s: the chain says what they were
        if fault == CONNECTION:
            return "connection failed"
        if fault == NOT_JSON:
            return "the reply is not JSON"
        if isinstance(error, ll.RateLimitError):
            return "rate limited (429)"
        if isinstance(error, (ll.Timeout, TimeoutError)):
            return f"timed out after {self.timeout_s:g} s"
        if isinstance(error, ll.ServiceUnavailableError):
            return "service unavailable (503)"
        if isinstance(error, ll.BadGatewayError):
            return "bad gateway (502)"
        if isinstance(error, ll.InternalServerError):
            return "server error (500)"
        if unnamed_server_error(error, ll):
            status = getattr(error, "status_code", None)
            return f"server error ({plain(str(status))[:40]})" if status is not None else "server error"
        return "connection failed"

    def _summary(self, failures: list[str], elapsed: float, api_key: str | None,
                 last_error: BaseException | None) -> str:
        kinds = [f for f in failures if not f.startswith("stopped:")]
        notes = [f for f in failures if f.startswith("stopped:")]
        n = len(kinds)
        if len(set(kinds)) == 1:
            what = f"{kinds[0]} {n} time{'s' if n != 1 else ''}"
        else:
            counts: dict[str, int] = {}
            for kind in kinds:
                counts[kind] = counts.get(kind, 0) + 1
            what = f"failed {n} times (" + ", ".join(f"{k} ×{c}" for k, c in counts.items()) + ")"
        message = f"{self.model}: {what}, gave up after {elapsed:.1f} s"
        if notes:
            message += f" ({notes[0][len('stopped: '):]})"
        timed_out = isinstance(last_error, TimeoutError)  # asyncio's: no message to add
        if last_error is not None and not timed_out:
            if wire_fault(last_error) in (CONNECTION, NOT_JSON):  # LiteLLM's wrapping would say "InternalServerError"
                last_error = ConnectionError(root_text(last_error))
            if detail := first_line(last_error, 160):
                message += f"; last error: {detail}"
        return mask_keys(message, api_key, *(self.router.keys() if self.router else ()))

    def _describe_permanent(self, error: BaseException, ll: Any, api_key: str | None) -> str:
        if (fault := wire_fault(error)) in (MALFORMED, NOT_JSON):  # LiteLLM's message is a traceback, a "500"
            why = malformed_reason(error) if fault == MALFORMED else not_json_reason(error)
            return mask_keys(f"{self.model}: {why}", api_key, *(self.router.keys() if self.router else ()))
        detail = first_line(error)
        if isinstance(error, ll.AuthenticationError):
            if self.api_key_env:
                why = f"authentication failed (401): the API key in ${self.api_key_env} was rejected"
            else:
                why = ("authentication failed (401): set the provider's key variable (e.g. OPENAI_API_KEY), or "
                       "name one with api_key_env in a [backbones.NAME] table")
            return f"{self.model}: {why}"  # the provider's text may quote part of the key: left out
        if isinstance(error, ll.ContextWindowExceededError):
            why = "the prompt is too long for the model's context window"
        elif isinstance(error, ll.ContentPolicyViolationError):
            why = "refused by the provider's content policy"
        elif isinstance(error, ll.UnsupportedParamsError):
            why = "a parameter is not supported by this model"
        elif isinstance(error, ll.BadRequestError):
            why = "request rejected (400)"
        elif isinstance(error, ll.PermissionDeniedError):
            why = "permission denied (403)"
        elif isinstance(error, ll.NotFoundError):
            why = "model or endpoint not found (404)"
        elif type(error).__name__ == "BudgetExceededError":
            why = "budget exceeded"
        else:
            why = type(error).__name__
        return mask_keys(f"{self.model}: {why}: {detail}", api_key, *(self.router.keys() if self.router else ()))


_LOCAL_SLOTS: dict[str, AdaptiveLimit] = {}
"""The one generation slot of each embedded model, shared by every Backbone of it (see `Backbone.pace`)."""


class Limited:
    """The time one call has spent on rate limits: since its first 429, less the time it then waited for a slot
    (`queued`), or the waits it made after its 429s, whichever is more (a test's sleep does not pass time).

    A slot is waited for behind the run's other calls (FIFO, `qatui.llm.pacing`): with a backlog of hundreds, that
    wait is the run's own size, not the provider refusing, and charging it failed items of a big run on a budget its
    429s had barely touched. A provider that keeps refusing is still bounded: each refused try and the wait after it
    are charged.
    """

    def __init__(self) -> None:
        self.since: float | None = None
        self.waited = 0.0
        self.slots = 0.0

    def elapsed(self) -> float:
        """Seconds spent on rate limits so far."""
        if self.since is None:
            return 0.0
        return max(time.monotonic() - self.since - self.slots, self.waited)

    def queued(self, seconds: float) -> None:
        """Count `seconds` waited for a slot: once the call has been rate limited, they are left out of `elapsed`."""
        if self.since is not None:
            self.slots += seconds

    def spent(self, delay: float) -> float:
        """The seconds spent once a wait of `delay` more is done (marks the first 429)."""
        if self.since is None:
            self.since = time.monotonic()
        return self.elapsed() + delay

    def wait(self, delay: float) -> None:
        """Count one more wait after a rate limit."""
        self.waited += delay


def _unwrap(error: BaseException) -> BaseException:
    """The error a stream failed with: LiteLLM wraps any mid-stream error in MidStreamFallbackError (a 503)."""
    while type(error).__name__ == "MidStreamFallbackError" and isinstance(
            getattr(error, "original_exception", None), BaseException):
        error = error.original_exception  # type: ignore[attr-defined]
    return error


def _retry_after(error: BaseException | None) -> float | None:
    """Seconds from a `retry-after-ms` or `Retry-After` header on the error's response, if any (a finite number
    of seconds; an HTTP date is not read)."""
    if error is None:
        return None
    headers = getattr(error, "litellm_response_headers", None)
    if headers is None:
        headers = getattr(getattr(error, "response", None), "headers", None)
    try:
        if headers is not None and (value := headers.get("retry-after-ms")) is not None:
            seconds = float(value) / 1000
        else:
            value = headers.get("retry-after") if headers is not None else None
            seconds = float(value) if value is not None else None
    except (TypeError, ValueError, AttributeError):
        return None
    return seconds if seconds is not None and math.isfinite(seconds) and seconds >= 0 else None


KEY_FRAGMENT = 6
"""The shortest run of a key's characters that is masked on its own (a provider echoing `sk-abc…xyz`)."""


def mask_keys(text: str, *keys: str | None) -> str:
    """`text` with every trace of each key's value replaced by "***": the one masking of secrets in messages.

    Not only the key whole: any run of KEY_FRAGMENT or more of its consecutive characters (a
    provider echoing a long prefix or suffix, `sk-proj-abc…wxyz`), and the same in the key's
    escaped forms (JSON, `\\/`, URL-quoted, every character as `\\uXXXX`, and each once more
    JSON-escaped), as an error body may quote it. A key shorter than 4 characters is left alone
    (it would mask ordinary words).
    """
    hidden = [False] * len(text)
    for key in keys:
        if not key or len(key) < 4:
            continue
        forms = {(form, 1) for form in (key, json.dumps(key)[1:-1], key.replace("/", "\\/"),
                                        urllib.parse.quote(key, safe=""))}
        forms |= {(json.dumps(form)[1:-1], 1) for form, _ in forms}  # a JSON body quoted inside another
        escaped = "".join(f"\\u{ord(c):04x}" for c in key)
        forms |= {(escaped, 6), (escaped.replace("\\", "\\\\"), 7)}  # six (seven) characters stand for one
        for form, width in forms:
            n = min(KEY_FRAGMENT * width, len(form))
            grams = {form[i:i + n] for i in range(len(form) - n + 1)}
            for i in range(len(text) - n + 1):
                if text[i:i + n] in grams:
                    hidden[i:i + n] = [True] * n
    if not any(hidden):
        return text
    out, i = [], 0
    while i < len(text):
        if hidden[i]:
            out.append("***")
            while i < len(text) and hidden[i]:
                i += 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)
