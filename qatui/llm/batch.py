"""Batch mode (`--batch`): a run's backbone calls sent through the provider's batch API, in waves.

A judge's coroutine awaits `LLMClient.complete` as in any run; beneath it, while `BATCH` is bound
(the engine binds it per item), a call that misses the cache is handed to the run's `Batcher`
instead of the backbone. The batcher gathers the requests of every item in flight until no new
one has come for `window_s`, uploads them as one JSONL file (`litellm.acreate_file`), submits
one batch (`litellm.acreate_batch`), polls it (`litellm.aretrieve_batch`) and reads its output
and error files (`litellm.afile_content`), then resolves each call's future with its line. A
judge with several steps (MinosEval routes, then extracts, then ranks) so goes in waves: the
answers of one batch let every item ask its next step, and those requests form the next batch.

What a batch line answers is read as a direct answer is (`LLMClient._call`: `read_answer`, so an
answer cut off or only thinking is never a verdict; the call cache, under the same key, so a later
run without `--batch` is free). A request that failed in its batch (a 429 or 5xx line, no line at
all because the batch expired, failed or was cancelled) is asked again, in the next batch or
directly (`[batch] retry`), up to `max_attempts` sends in all; one that failed for good (a 400)
fails its call at once. Each batch is recorded in the session the moment it exists (`record`:
`Session.record_batch`, atomic, under the session's writer lock), with the cache keys of its
requests as custom ids: a resume after Ctrl-C, a crash or a closed terminal reads the results of
a batch already submitted when its items ask again, and submits none of them twice.

A batch session resumed directly (`sessions resume --no-batch`) has a batcher that submits nothing
(`submit` False): a request one of the session's batches holds is still read from it, its batch
first cancelled if it has not ended (`litellm.acancel_batch`; what it answered before the cancel is
paid for and used) and then collected once it has ended; a request without a line there, and every
request no batch holds, is asked directly. So nothing is asked twice and no paid answer is lost.

The cost of a batch answer is the batch price of LiteLLM's price map (`input_cost_per_token_batches`)
where it has one, else half the list price, the discount OpenAI's Batch API states (`batch_cost`). Each line
is charged once, to the first call reading it, with the answers its batch billed and qatui could not use, so
the session's spend is what its batch records add up to (`Batcher.complete`).
Only OpenAI-compatible files and batches endpoints are used (OpenAI, and vLLM's OpenAI-compatible
server through `hosted_vllm/`); LiteLLM creates no Anthropic message batch in this version.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from qatui.llm._lazy import get_litellm
from qatui.llm.backbone import first_line, mask_keys
from qatui.llm.errors import LLMCallError
from qatui.llm.response import PAID_BEFORE_USD, token_count, usage_problem
from qatui.llm.trim import sent_upper_bound
from qatui.safe_read import json_lines
from qatui.text import plain

if TYPE_CHECKING:
    from qatui.config import BatchConfig

BATCH_PROVIDERS = ("openai", "hosted_vllm")
"""LiteLLM providers whose files and batches endpoints are OpenAI's (`/v1/files`, `/v1/batches`)."""
TERMINAL = ("completed", "failed", "expired", "cancelled")
"""Batch states that end it: its output and error files hold every line it will ever have."""
RETRIED_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
"""A batch line's HTTP status worth asking again (as the direct calls' retries: rate limits, server errors)."""
LIST_PRICE_SHARE = 0.5
"""What a batch answer costs of the list price where LiteLLM's price map has no batch price."""
HALF_PRICE = "half the list price (OpenAI's Batch API: 50% off)"
MAP_PRICE = "LiteLLM's batch price"
MAX_POLL_ERRORS = 10
"""Polls of one batch that may fail in a row (the provider unreachable) before its requests count as failed."""
KEPT_REASONS = 20
"""How many distinct reasons a batch's record counts its failed requests under (the rest: "other reasons")."""

SHARED_USD = "batch_shared_usd"
"""`_hidden_params` key of a response that is a batch line another call of the run read first and paid for: what the
line cost (`shared_cost`); the response itself costs nothing."""

BATCH: ContextVar[Batcher | None] = ContextVar("qatui_batch", default=None)
"""The run's batcher while an item is judged in batch mode; None otherwise (every call is direct)."""


def batch_problem(client: Any) -> str | None:
    """Why `client`'s backbone cannot be batched (one line), or None when it can."""
    if client.is_local:
        return "an embedded model has no batch API"
    if client.settings.deployments:
        return "a backbone with deployments is spread by LiteLLM's Router, which has no batch API"
    try:
        provider = get_litellm().get_llm_provider(model=client.model)[1]
    except Exception:  # noqa: BLE001 - LiteLLM cannot tell the provider: it cannot batch it either
        provider = "?"
    if provider not in BATCH_PROVIDERS:
        return (f"provider {provider!r} has no OpenAI-compatible batch API qatui can reach through LiteLLM "
                f"(batch mode knows {', '.join(BATCH_PROVIDERS)})")
    return None


def batch_cost(model: str, prompt_tokens: int, completion_tokens: int) -> tuple[float, float, str]:
    """(what a batch answer costs, what it would cost called directly, where the batch price comes from).

    LiteLLM's price map holds batch prices for some models; for the others, half the list price. A model the
    map does not price costs 0 both ways ("unpriced").
    """
    from qatui.llm.spend import price

    listed = price(model, prompt_tokens, completion_tokens)
    if listed is None:
        return 0.0, 0.0, "unpriced"
    try:
        info = get_litellm().get_model_info(model=model)
        per_in, per_out = info.get("input_cost_per_token_batches"), info.get("output_cost_per_token_batches")
    except Exception:  # noqa: BLE001 - no entry: the list price halved
        per_in = per_out = None
    if per_in is not None and per_out is not None:
        return float(per_in) * prompt_tokens + float(per_out) * completion_tokens, listed, MAP_PRICE
    return listed * LIST_PRICE_SHARE, listed, HALF_PRICE


def _line_tokens(body: dict[str, Any]) -> tuple[int, int]:
    """(prompt, completion) tokens one batch line's body reports, read as a direct reply's are (`response.token_count`:
    a missing, negative or non-numeric count is 0); a `usage` that is no object is none."""
    usage = body.get("usage")
    if not isinstance(usage, dict):
        return 0, 0
    return token_count(usage.get("prompt_tokens")), token_count(usage.get("completion_tokens"))


def _line_cost(model: str, body: dict[str, Any]) -> tuple[float, float, str]:
    """`batch_cost` of one line's body (`_line_tokens`): what its batch's record counts, and what the call it answers
    is charged, so the two always agree. A line whose usage cannot be true whatever its request sent
    (`response.usage_problem` without the request: more tokens than any model reads or writes) costs nothing known:
    (0, 0, "")."""
    tokens = _line_tokens(body)
    if usage_problem(*tokens, None) is not None:
        return 0.0, 0.0, ""
    return batch_cost(model, *tokens)


@dataclass(frozen=True)
class Outcome:
    """One request's line in a batch: the completion's body, or why there is none."""

    batch_id: str
    body: dict[str, Any] | None = None
    reason: str = ""
    retried: bool = True
    """Whether asking again may help (a 429 or 5xx line, a batch that expired or failed); False for a 400."""
    paid: tuple[dict[str, Any], ...] = ()
    """Answers the batch billed for this request and qatui does not use (two different ones for one request)."""


@dataclass
class _Waiting:
    """A request gathered for the next batch, and the future its call awaits."""

    body: dict[str, Any]
    future: asyncio.Future[Outcome]


@dataclass
class _Endpoint:
    """Where one backbone's batches go, and what gathers for its next one."""

    provider: str
    api_base: str | None
    api_key: str | None
    model: str
    waiting: dict[str, _Waiting] = field(default_factory=dict)
    first: float = 0.0
    last: float = 0.0
    gathering: asyncio.Task[None] | None = None

    def api(self) -> dict[str, Any]:
        """The endpoint's arguments for LiteLLM's files and batches calls."""
        found: dict[str, Any] = {"custom_llm_provider": self.provider}
        if self.api_base:
            found["api_base"] = self.api_base
        if self.api_key:
            found["api_key"] = self.api_key
        return found


class Batcher:
    """The batches of one run: gathers requests per backbone, submits, polls, resolves; records each batch.

    `record(doc, keys)` stores a batch's record (and, the first time, the cache keys of its requests) in the
    session. `known` and `known_keys` are the records and keys of the batches the session submitted
    before (a resume): a request whose key one of them holds is answered from it, never submitted again.
    """

    def __init__(self, settings: BatchConfig, record: Callable[[dict[str, Any], list[str] | None], None],
                 known: list[dict[str, Any]] | None = None, known_keys: dict[str, list[str]] | None = None,
                 *, submit: bool = True) -> None:
        self.settings = settings
        self.submit = submit
        """False when resumed directly (`--no-batch`): the known batches are cancelled and collected, nothing is
        submitted, every other request is asked directly."""
        self.docs: dict[str, dict[str, Any]] = {doc["id"]: dict(doc) for doc in known or [] if doc.get("id")}
        """Every batch of the session by id, as recorded (the live view reads these)."""
        self._record = record
        self._holding: dict[str, str] = {}
        """Cache key -> the batch of an earlier run (killed, interrupted) that holds its request: asked again, it waits
        for that batch's line, never submits it again (this run's batches: `_sending`)."""
        for batch_id, keys in (known_keys or {}).items():
            for key in keys:
                self._holding[key] = batch_id  # a later batch (a retry) wins
        self._endpoints: dict[tuple[str, str | None], _Endpoint] = {}
        self._collections: dict[str, asyncio.Task[tuple[dict[str, Outcome], str]]] = {}
        self._submitting: set[asyncio.Task[None]] = set()
        """Uploads and batch creations under way: let finish at the end, so a created batch is always recorded."""
        self._sending: dict[str, _Waiting] = {}
        """Requests taken into a batch and not yet answered, by cache key: the same request asked meanwhile shares
        its line."""
        self._resolving: set[asyncio.Task[None]] = set()
        """Waits on submitted batches, each resolving its requests' futures: cancelled at the end (a resume waits)."""
        self._read_lines: set[tuple[str, str]] = set()
        """(batch id, cache key) of each line a call of this run has read: the calls after the first share it, free."""

    # -- a call ---------------------------------------------------------------------------------

    async def complete(self, client: Any, kwargs: dict[str, Any], *, key: str, api_key: str | None) -> tuple[Any, int]:
        """Ask `kwargs` (the request as `LLMClient._send` would send it) through batches; (response, sends made).

        Raises `LLMCallError` when every send failed, naming each batch's reason.

        A batch line is charged to the first call that reads it (`_first_reading`): the same request asked by several
        items shares one line (`_gather`), billed once, so the calls after the first are free (`SHARED_USD`, counted
        as a cache hit is). The answers a line's batch billed and qatui could not use (two different ones for the
        request: `Outcome.paid`) are charged to the call too, on the response it ends with (`PAID_BEFORE_USD`) or on
        its error, so the session's spend and the cost cap count what its batch records say it cost.
        """
        reasons: list[str] = []
        sends = 0
        paid = 0.0
        while True:
            sends += 1
            if (batch_id := self._holding.get(key)) is not None and batch_id in self.docs:
                outcome = await self._result(batch_id, key, self._endpoint(client, api_key))
            elif not self.submit:
                response, tries = await client.backbone.run(kwargs, api_key=api_key)
                return _paid_before(response, paid), sends - 1 + tries
            else:
                outcome = await self._gather(client, kwargs, key, api_key)
            first = self._first_reading(outcome, key)
            if first:
                paid += sum(_line_cost(client.model, body)[0] for body in outcome.paid)
            if outcome.body is not None:
                return self._response(client, kwargs, outcome, key, attempts=sends, shared=not first,
                                      paid=paid), sends
            if self._holding.get(key) == outcome.batch_id:
                del self._holding[key]  # asked again in a new batch (or directly), never in this one
            reasons.append(outcome.reason)
            last = not outcome.retried or sends >= self.settings.max_attempts
            self._note_failure(outcome, key, retried=not last)
            if last:
                why = "; ".join(dict.fromkeys(reasons))
                raise LLMCallError(mask_keys(f"{client.model}: batch request failed {sends} "
                                             f"time{'s' if sends != 1 else ''}: {why}", api_key), attempts=sends,
                                   transient=outcome.retried, cost_usd=paid)
            if self.settings.retry == "direct" or not self.submit:
                response, tries = await client.backbone.run(kwargs, api_key=api_key)
                return _paid_before(response, paid), sends + tries

    def _first_reading(self, outcome: Outcome, key: str) -> bool:
        """Whether this is the first call of the run to read `key`'s line in its batch (the one it is charged to)."""
        if not outcome.batch_id:
            return True
        if (outcome.batch_id, key) in self._read_lines:
            return False
        self._read_lines.add((outcome.batch_id, key))
        return True

    def _response(self, client: Any, kwargs: dict[str, Any], outcome: Outcome, key: str, *, attempts: int,
                  shared: bool = False, paid: float = 0.0) -> Any:
        """The batch line's completion as LiteLLM's response object, priced at the batch price of the tokens it
        reports (`_line_cost`, as its batch's record counts them; 0 when `shared`: a call before this one read the
        line, and paid for it), `paid` added (`complete`); its `usage` holds those counts.

        A line whose body is no chat completion (`_unusable`, or one LiteLLM's converter refuses) fails the call in
        one line (`LLMCallError`, not asked again: the same request gets the same line), its cost on the error: the
        provider billed it, and its batch's record counts it. A line whose usage cannot be true for the request
        `kwargs` sent (`response.usage_problem`) fails the call too, its cost unknown: taken out of its batch's
        record (`_uncount`), so the record still adds up to what the session's calls cost."""
        ll = get_litellm()
        from litellm.litellm_core_utils.llm_response_utils.convert_dict_to_response import (
            convert_to_model_response_object,
        )

        line, listed, source = _line_cost(client.model, outcome.body)
        cost = 0.0 if shared else line
        unknown = source == "unpriced" and not shared  # the price map has no price for it: `cost_of` says so
        if (problem := usage_problem(*_line_tokens(outcome.body), sent_upper_bound(kwargs))) is not None:
            if not shared:
                self._uncount(outcome, key, line, listed)
            raise LLMCallError(f"{client.model}: {problem}", attempts=attempts, transient=False, cost_usd=paid,
                               cost_unknown=True)
        body = {k: v for k, v in outcome.body.items() if k != "usage"}
        if isinstance(usage := outcome.body.get("usage"), dict):
            prompt, completion = _line_tokens(outcome.body)
            body["usage"] = {**usage, "prompt_tokens": prompt, "completion_tokens": completion,
                             "total_tokens": prompt + completion}
        why = _unusable(body)
        if why is None:
            try:
                response = convert_to_model_response_object(response_object=body,
                                                             model_response_object=ll.ModelResponse())
            except Exception as e:  # noqa: BLE001 - LiteLLM's converter raises a bare Exception holding a traceback
                why = f"LiteLLM could not read it ({type(e).__name__})"
        if why is not None:
            raise LLMCallError(f"{client.model}: the answer line of batch {outcome.batch_id} is no chat completion: "
                               f"{why}", attempts=attempts, transient=False, cost_usd=cost + paid,
                               cost_unknown=unknown)
        response._hidden_params = {**(getattr(response, "_hidden_params", None) or {}),
                                   "response_cost": None if unknown else cost,
                                   "batch_id": outcome.batch_id, **({SHARED_USD: line} if shared else {})}
        return _paid_before(response, paid)

    def _uncount(self, outcome: Outcome, key: str, cost_usd: float, list_usd: float) -> None:
        """Take a line whose usage report cannot be true out of its batch's recorded cost (summed anew by each
        process that collects the batch), and count it as given up for that reason (`_note_failure`)."""
        if (doc := self.docs.get(outcome.batch_id)) is None:
            return
        doc["cost_usd"] = max(0.0, float(doc.get("cost_usd") or 0.0) - cost_usd)
        doc["list_price_usd"] = max(0.0, float(doc.get("list_price_usd") or 0.0) - list_usd)
        if not self._note_failure(Outcome(outcome.batch_id, reason="a usage report that cannot be true"), key,
                                  retried=False):
            self._save(doc)

    def _note_failure(self, outcome: Outcome, key: str, *, retried: bool) -> bool:
        """Count a failed request on its batch's record: by reason, and whether it is asked again or given up; True
        when counted. A request given up is counted once per batch: a resume that judges its item again reads the
        same line (a 400, a line whose usage cannot be true) and gave it up again, so each resume counted it anew;
        the record keeps the first 16 characters of each key it counted (`gave_up_keys`)."""
        doc = self.docs.get(outcome.batch_id)
        if doc is None:
            return False
        if not retried:
            counted = [k for k in doc.get("gave_up_keys") or [] if isinstance(k, str)]
            if key[:16] in counted:
                return False
            doc["gave_up_keys"] = [*counted, key[:16]]
        doc["retried" if retried else "gave_up"] = int(doc.get("retried" if retried else "gave_up") or 0) + 1
        reasons = dict(doc.get("reasons") or {})
        reason = outcome.reason if outcome.reason in reasons or len(reasons) < KEPT_REASONS else "other reasons"
        reasons[reason] = int(reasons.get(reason) or 0) + 1
        doc["reasons"] = reasons
        self._save(doc)
        return True

    # -- gathering and submitting ---------------------------------------------------------------

    def _endpoint(self, client: Any, api_key: str | None) -> _Endpoint:
        where = (client.model, client.settings.api_base)
        if where not in self._endpoints:
            provider = get_litellm().get_llm_provider(model=client.model)[1]
            self._endpoints[where] = _Endpoint(provider, client.settings.api_base, api_key, client.model)
        return self._endpoints[where]

    async def _gather(self, client: Any, kwargs: dict[str, Any], key: str, api_key: str | None) -> Outcome:
        """Add the request to its backbone's next batch (the same request twice shares one line); await its line."""
        endpoint = self._endpoint(client, api_key)
        now = time.monotonic()
        if (waiting := endpoint.waiting.get(key) or self._sending.get(key)) is None:
            body = {k: v for k, v in kwargs.items() if k not in _NOT_SENT}
            body["model"] = get_litellm().get_llm_provider(model=client.model)[0]
            waiting = endpoint.waiting[key] = _Waiting(body, asyncio.get_running_loop().create_future())
            if len(endpoint.waiting) == 1:
                endpoint.first = now
            endpoint.last = now
        if endpoint.gathering is None or endpoint.gathering.done():
            endpoint.gathering = asyncio.get_running_loop().create_task(self._send_when_quiet(endpoint))
        return await asyncio.shield(waiting.future)  # a cancelled item leaves the line to the others sharing it

    async def _send_when_quiet(self, endpoint: _Endpoint) -> None:
        """Wait until no request came for `window_s` (at most ten windows from the first, or a full batch); submit."""
        window = self.settings.window_s
        while endpoint.waiting:
            now = time.monotonic()
            due = min(endpoint.last + window, endpoint.first + 10 * window)
            if now < due and len(endpoint.waiting) < self.settings.max_requests:
                await asyncio.sleep(due - now)
                continue
            keys = list(endpoint.waiting)[: self.settings.max_requests]
            taken = {key: endpoint.waiting.pop(key) for key in keys}
            self._sending.update(taken)
            endpoint.first = endpoint.last = time.monotonic()
            task = asyncio.get_running_loop().create_task(self._submit(endpoint, taken))
            self._submitting.add(task)
            task.add_done_callback(self._submitting.discard)

    async def _submit(self, endpoint: _Endpoint, taken: dict[str, _Waiting]) -> None:
        """Upload the requests, create their batch, record it at once, then resolve each future from its results."""
        ll = get_litellm()
        lines = "".join(json.dumps({"custom_id": key, "method": "POST", "url": "/v1/chat/completions",
                                    "body": waiting.body}, ensure_ascii=False) + "\n" for key, waiting in taken.items())
        try:
            upload = await ll.acreate_file(file=("qatui-batch.jsonl", lines.encode("utf-8")), purpose="batch",
                                           **endpoint.api())
            batch = await ll.acreate_batch(completion_window="24h", endpoint="/v1/chat/completions",
                                           input_file_id=upload.id, metadata={"made_by": "qatui"}, **endpoint.api())
        except Exception as e:  # noqa: BLE001 - every request of it failed to go: asked again as a failed line is
            reason = mask_keys(f"the batch could not be submitted: {first_line(e, 160)}", endpoint.api_key)
            self._answer(taken, {}, Outcome("", reason=reason))
            return
        doc = {"id": batch.id, "model": endpoint.model, "status": _status(batch.status), "requests": len(taken),
               "completed": 0, "failed": 0, "input_file_id": upload.id, "submitted": time.time()}
        self.docs[batch.id] = doc
        try:
            self._save(doc, list(taken))
        except Exception as e:  # noqa: BLE001 - unrecorded, its requests' calls would otherwise wait for good
            reason = f"batch {batch.id} could not be recorded in the session: {type(e).__name__}: {first_line(e, 160)}"
            self._answer(taken, {}, Outcome(batch.id, reason=reason, retried=False))
            return
        task = asyncio.get_running_loop().create_task(self._resolve(batch.id, endpoint, taken))
        self._resolving.add(task)
        task.add_done_callback(self._resolving.discard)

    async def _resolve(self, batch_id: str, endpoint: _Endpoint, taken: dict[str, _Waiting]) -> None:
        """Once the batch ends, resolve each of its requests' futures with its line.

        Every future is resolved whatever happens while the batch is read (`_read`): a request left waiting would
        hang its item, and the run, for good."""
        outcomes, missing = await self._collection(batch_id, endpoint)
        self._answer(taken, outcomes, missing)

    def _answer(self, taken: dict[str, _Waiting], outcomes: dict[str, Outcome], missing: Outcome) -> None:
        """Resolve each taken request's future with its line (`missing` the outcome of one without a line)."""
        for key, waiting in taken.items():
            if self._sending.get(key) is waiting:
                del self._sending[key]
            if not waiting.future.done():
                waiting.future.set_result(outcomes.get(key) or missing)

    def _save(self, doc: dict[str, Any], keys: list[str] | None = None) -> None:
        self._record(dict(doc), keys)

    # -- results --------------------------------------------------------------------------------

    async def _result(self, batch_id: str, key: str, endpoint: _Endpoint) -> Outcome:
        """The line of `key` in a batch submitted earlier (by this run or one before it)."""
        outcomes, missing = await self._collection(batch_id, endpoint)
        return outcomes.get(key) or missing

    def _collection(self, batch_id: str, endpoint: _Endpoint) -> asyncio.Task[tuple[dict[str, Outcome], Outcome]]:
        """The one task reading `batch_id` to its end (shared by every request it holds)."""
        if batch_id not in self._collections:
            self._collections[batch_id] = asyncio.get_running_loop().create_task(self._read(batch_id, endpoint))
        return self._collections[batch_id]

    async def _read(self, batch_id: str, endpoint: _Endpoint) -> tuple[dict[str, Outcome], Outcome]:
        """`_collect`, which never raises: a failure of qatui's own while a batch is read (a line it cannot handle)
        fails each of the batch's requests with its one-line reason, not asked again (it would be paid again and
        read the same way), instead of leaving the calls that wait on the batch waiting for good."""
        try:
            return await self._collect(batch_id, endpoint)
        except Exception as e:  # noqa: BLE001 - any bug here would otherwise hang every request of the batch
            why = f"batch {batch_id}'s results could not be read: {type(e).__name__}: {first_line(e, 160)}"
            return {}, Outcome(batch_id, reason=mask_keys(why, endpoint.api_key), retried=False)

    async def _collect(self, batch_id: str, endpoint: _Endpoint) -> tuple[dict[str, Outcome], Outcome]:
        """Poll until the batch ends (its state and counts recorded as they change), then read its files: (custom id
        -> its outcome, the outcome of a request without a line)."""
        ll = get_litellm()
        doc = self.docs[batch_id]
        if not self.submit and not doc.get("collected") and doc.get("status") not in TERMINAL:
            await self._cancel(batch_id, endpoint)
        errors = 0
        while True:
            try:
                batch = await ll.aretrieve_batch(batch_id=batch_id, **endpoint.api())
            except Exception as e:  # noqa: BLE001 - the provider unreachable for a while: polled again
                errors += 1
                if errors >= MAX_POLL_ERRORS:
                    return {}, Outcome(batch_id, reason=mask_keys(f"batch {batch_id} could not be read: "
                                                                  f"{first_line(e, 160)}", endpoint.api_key))
                await asyncio.sleep(self.settings.poll_s)
                continue
            errors = 0
            counts = getattr(batch, "request_counts", None)
            seen = {"status": _status(batch.status), "completed": token_count(getattr(counts, "completed", 0)),
                    "failed": token_count(getattr(counts, "failed", 0))}
            if any(doc.get(k) != v for k, v in seen.items()):
                doc.update(seen)
                self._save(doc)
            if batch.status in TERMINAL:
                break
            await asyncio.sleep(self.settings.poll_s)
        outcomes: dict[str, Outcome] = {}
        try:
            for file_id in (batch.output_file_id, batch.error_file_id):
                if file_id:
                    content = await ll.afile_content(file_id=file_id, **endpoint.api())
                    for custom_id, outcome in _read_lines(batch_id, _bytes(content), _status(batch.status)).items():
                        outcomes[custom_id] = _merged(outcomes.get(custom_id), outcome)
        except Exception as e:  # noqa: BLE001 - the results cannot be read: asked again
            return {}, Outcome(batch_id, reason=mask_keys(f"batch {batch_id}'s results could not be read: "
                                                          f"{first_line(e, 160)}", endpoint.api_key))
        cost = full = 0.0
        source = ""
        for outcome in outcomes.values():
            for body in ([outcome.body] if outcome.body is not None else []) + list(outcome.paid):
                spent = _line_cost(endpoint.model, body)
                cost, full, source = cost + spent[0], full + spent[1], spent[2] or source
        doc.update(collected=True, cost_usd=cost, list_price_usd=full, **({"price": source} if source else {}))
        self._save(doc)
        return outcomes, Outcome(batch_id, reason=f"batch {doc['status']}: no line for the request")

    async def _cancel(self, batch_id: str, endpoint: _Endpoint) -> None:
        """Ask the provider to cancel a batch not yet ended (resumed with `--no-batch`), and record that it was asked;
        a refusal (it ended meanwhile, or the provider cannot) is recorded, and the batch collected as it ends."""
        doc = self.docs[batch_id]
        try:
            batch = await get_litellm().acancel_batch(batch_id=batch_id, **endpoint.api())
            doc.update(cancel_asked=True, status=_status(getattr(batch, "status", doc.get("status"))))
        except Exception as e:  # noqa: BLE001 - not cancelled: waited for, as a batch run would
            doc.update(cancel_asked=True, cancel_refused=mask_keys(first_line(e, 160), endpoint.api_key))
        self._save(doc)

    # -- the live view and the end -------------------------------------------------------------

    def line(self) -> str:
        """One line on the run's batches: those still running with their counts, and how many ended."""
        if not self.docs:
            return ""
        live = [d for d in self.docs.values() if not d.get("collected")]
        ended = len(self.docs) - len(live)
        parts = [f"batch {plain(d['status'])} {d.get('completed', 0)}/{d.get('requests', 0)}"
                 + (f" ({d['failed']} failed)" if d.get("failed") else "") for d in live[:3]]
        if len(live) > 3:
            parts.append(f"{len(live) - 3} more running")
        if ended:
            parts.append(f"{ended} batch{'es' if ended != 1 else ''} done")
        return ", ".join(parts)

    async def close(self) -> None:
        """Stop gathering and polling, never waiting for a batch to end (a resume collects it); an upload or a batch
        creation under way is let finish, so a batch the provider made is recorded (bounded by a minute)."""
        for endpoint in self._endpoints.values():
            if endpoint.gathering is not None:
                endpoint.gathering.cancel()
        if self._submitting:
            await asyncio.wait(set(self._submitting), timeout=60)
        for task in [*self._collections.values(), *self._submitting, *self._resolving]:
            task.cancel()


_NOT_SENT = frozenset({"drop_params", "api_base", "api_key", "max_retries", "timeout", "stream", "stream_options",
                       "custom_llm_provider"})
"""What `LLMClient._send` passes LiteLLM that is no part of a batch line's body."""


STATUSES = ("validating", "in_progress", "finalizing", "completed", "failed", "expired", "cancelling", "cancelled")
"""The states of an OpenAI batch; a provider's other word is recorded as "unknown" (it is shown, never obeyed)."""


def _status(value: Any) -> str:
    """A batch's state as recorded and shown: one of `STATUSES`, else "unknown"."""
    return str(value) if str(value) in STATUSES else "unknown"


def shared_cost(response: Any) -> float | None:
    """What the batch line `response` is cost when another call of the run paid for it (`SHARED_USD`), else None."""
    hidden = getattr(response, "_hidden_params", None)
    value = hidden.get(SHARED_USD) if isinstance(hidden, dict) else None
    return None if value is None else float(value)


def _paid_before(response: Any, paid: float) -> Any:
    """`response`, carrying `paid` (what the batch lines its call could not use cost) for `response.cost_of` to add."""
    if paid:
        response._hidden_params = {**(getattr(response, "_hidden_params", None) or {}), PAID_BEFORE_USD: paid}
    return response


def _unusable(body: dict[str, Any]) -> str | None:
    """Why a batch line's 200 body is no chat completion qatui can read (a few words), or None: its `choices` must be
    a list of objects, each with a `message` object (what the converter and `response.answer_of` read)."""
    choices = body.get("choices")
    if not choices:
        return "it has no choices"
    if not isinstance(choices, list):
        return "its choices are no list"
    for choice in choices:
        if not isinstance(choice, dict):
            return "a choice is no object"
        if not isinstance(choice.get("message"), dict):
            return "a choice has no message"
    return None


def _bytes(content: Any) -> bytes:
    """The bytes of what `litellm.afile_content` returned."""
    data = getattr(content, "content", content)
    return data if isinstance(data, bytes) else str(data).encode("utf-8")


def _merged(earlier: Outcome | None, later: Outcome) -> Outcome:
    """One request's outcome from two lines naming it (in one file, or its output and its error file): an answer
    wins over a failure (it was paid for, and a failure line beside it is the provider's noise: it was asked again,
    and paid twice); the same answer twice is one; two different answers are neither (which one the model gave is
    unknown: the request is asked again, and both are counted in what the batch cost; a third answer beside two
    different ones is a third paid one, never the one chosen)."""
    if earlier is None or (earlier.body is None and not earlier.paid and later.body is not None):
        return later
    if later.body is None or later.body == earlier.body or later.body in earlier.paid:
        return earlier
    return Outcome(earlier.batch_id, reason="the batch returned two different answers for this request",
                   retried=True, paid=(*earlier.paid, *((earlier.body,) if earlier.body is not None else ()),
                                       later.body, *later.paid))


def _read_lines(batch_id: str, data: bytes, status: str) -> dict[str, Outcome]:
    """custom id -> its outcome, from an output or error file (JSONL; an unreadable line is skipped; two lines naming
    one request are `_merged`)."""
    found: dict[str, Outcome] = {}
    for raw in json_lines(data.decode("utf-8", errors="replace")):  # a U+2028 in an answer is no line's end
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str):
            continue
        response = line.get("response") if isinstance(line.get("response"), dict) else {}
        code, body = response.get("status_code"), response.get("body")
        custom_id = line["custom_id"]
        if code == 200 and isinstance(body, dict) and "error" not in body:
            found[custom_id] = _merged(found.get(custom_id), Outcome(batch_id, body=body))
            continue
        error = line.get("error") if isinstance(line.get("error"), dict) else (
            body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), dict) else {})
        what = str(error.get("code") or (f"HTTP {code}" if code else status))
        message = " ".join(str(error.get("message") or "").split())[:160]
        found[custom_id] = _merged(found.get(custom_id), Outcome(
            batch_id, reason=f"{what}: {message}" if message else what,
            retried=not isinstance(code, int) or code in RETRIED_STATUS))
    return found
