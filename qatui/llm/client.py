"""`LLMClient`: what judges call. Cache, structured output, streaming, events, cost.

One logical call (`complete`) = cache lookup, else one `Backbone.run` (with its retries),
then parsing. Exactly one `LLMCallFinished` is emitted per call, hit or miss, success or
failure; a call the cost cap refuses (`llm.spend.CapReached`), or one whose backbone failed its put-off
live check (`llm.deferred.BackboneDown`), is never made and emits none. A schema answer that does not
parse is re-asked once (a second call, purpose
`<purpose>:repair`) before `ParseError` is raised. Defaults follow the papers: temperature
0 and a fixed seed, overridable per call.

Streaming (only when a run's sink watches tokens: the TUI, not the CLI) emits an `LLMToken`
per chunk as it arrives; if an attempt fails mid-stream and is retried, the tokens of the
failed attempt were already sent (same `call_id`): a live pane should show the final `LLMCallFinished.response`, which holds only the answer kept.
A cache hit emits no tokens, only its `LLMCallFinished` (cached=True, attempts=0).
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from qatui.errors import ConfigError
from qatui.events import InputTrimmed, LLMCallFinished, emit, tokens_watched
from qatui.llm.backbone import Backbone
from qatui.llm import direct
from qatui.llm.batch import BATCH, shared_cost
from qatui.llm.cache import ANSWERS_USED, CallCache, cache_key
from qatui.llm.deferred import RunStopping, check_not_stopping
from qatui.llm.errors import LLMCallError, ParseError, snippet
from qatui.llm.facts import Facts, facts_at, is_bool
from qatui.llm.keys import missing_keys
from qatui.llm.logprobs import TokenLogprobs, backbone_gives_logprobs, logprobs_of
from qatui.llm.parse import append_to_last_user, json_schema_of, json_schema_text, parse_within, schema_name
from qatui.llm.repeat import LOCAL_FIELDS, repeat_fields
from qatui.llm.reasoning import SENT_OPTIONS, Shape, request_extra, shape_of
from qatui.llm.response import Answer, paid_before, read_answer, reply_usage_problem, spent_on, usage_of
from qatui.llm.spend import hold, planning, within_cap
from qatui.llm.trim import Counter, Trimmed, counter_for, fit, fits_uncounted, window_of
from qatui.llm.router import DeploymentRouter, Hop, hop_fields
from qatui.llm.stream import stream_consumer
from qatui.store.credentials import key_from_env
from qatui.text import did_you_mean

if TYPE_CHECKING:
    from qatui.config import BackboneConfig, Config
    from qatui.llm.deferred import DeferredCheck

RESPONSE_CHARS = 4000
"""How much of an answer an `LLMCallFinished` carries (the cache keeps all of it)."""

CHECK_PROMPT = "Reply with the single word OK."
"""The whole prompt of `check` (the preflight's one tiny request): a server or a test tells that request by it."""

REPAIR_MESSAGE = (
    "Your previous answer could not be used: {reason}\n"
    "Answer again with only a JSON value that matches this JSON schema, with no other text:\n{schema}"
)
JSON_INSTRUCTION = "\n\nAnswer with only a JSON value that matches this JSON schema, with no other text:\n{schema}"


@dataclass(frozen=True)
class LLMResult:
    """A finished call: the answer's text, the validated data (with a schema), and its event."""

    text: str
    data: Any
    event: LLMCallFinished
    logprobs: TokenLogprobs | None = None  # when asked for (`logprobs=k`) and the backbone gave them


def _call_id() -> str:
    """Twelve random hex characters naming one call in events (48 bits, as uuid4's first twelve were, at a fifth
    of uuid4's cost: 0.3 against 1.7 µs)."""
    return os.urandom(6).hex()


class LLMClient:
    """One backbone as judges see it. Build with `make_client`."""

    def __init__(
        self,
        *,
        model: str,
        name: str,
        settings: BackboneConfig,
        backbone: Backbone,
        cache: CallCache,
        use_cache: bool = True,
        seed: int = 0,
    ) -> None:
        self.model = model
        self.name = name
        self.settings = settings
        self.backbone = backbone
        self.cache = cache
        self.use_cache = use_cache
        self.seed = seed
        self._supports_schema: bool | None = None
        self._counter: Counter | None | bool = False  # False: not looked up yet
        self._direct = direct.eligible(settings)
        self.facts: Facts = facts_at(getattr(cache, "root", None))
        """What LiteLLM knows of the model, kept beside the call cache (`llm.facts`): a cached rerun needs no LiteLLM."""
        self.deferred_check: DeferredCheck | None = None
        """The preflight's live request when a run put it off (`llm.preflight`): made before the first call the
        cache cannot answer."""

    # -- description ---------------------------------------------------------------------------

    @property
    def is_local(self) -> bool:
        """True for an embedded model (`local/...`), run in this process."""
        return self.model.startswith("local/")

    @property
    def label(self) -> str:
        """How the UI names this backbone, e.g. "local/smollm2 (weak, embedded)"."""
        from qatui.llm.local import LABELS, model_name

        head = self.model if self.name == self.model else f"{self.name} ({self.model})"
        if self.is_local and (note := LABELS.get(model_name(self.model))):
            return f"{head} ({note})"
        return head

    def supports_schema(self) -> bool:
        """Whether the model takes a JSON schema as response_format (else it is put in the prompt)."""
        if self._supports_schema is None:
            if self.is_local:
                self._supports_schema = True
            else:
                models = [d.model for d in self.settings.deployments] or [self.model]
                self._supports_schema = all(self.facts.get("schema", {"model": m, "api_base": self.settings.api_base},
                                                           lambda m=m: _takes_schema(m), is_bool) for m in models)
        return self._supports_schema

    def shape(self, temperature: float | None = None) -> Shape:
        """What this backbone's requests look like at `temperature` (default: the backbone's): see `llm.reasoning`."""
        return shape_of(self.settings, self.settings.temperature if temperature is None else temperature, self.facts)

    def request_note(self) -> str:
        """One line when the backbone is a reasoning model or leaves options out, else "" (`Shape.note`)."""
        return self.shape().note(self.model, self.settings.max_tokens)

    def supports_logprobs(self) -> bool:
        """Whether `logprobs=k` (top k log-probabilities per token) is sent: the provider takes it, never `local/`."""
        return backbone_gives_logprobs(self.model, self.facts, self.settings.api_base)

    # -- the call ------------------------------------------------------------------------------

    def build_request(
        self,
        messages: list[dict[str, Any]],
        *,
        schema: type[BaseModel] | dict[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        logprobs: int | None = None,
        sample: int = 0,
        thinking_room: bool = True,
    ) -> dict[str, Any]:
        """The request as sent (and keyed in the cache), without secrets or stream flags; `sample` k: seed + k.

        Within a repeat past the first (`llm.repeat`) the seed moves and `repeat` joins the request: it is
        part of the cache key and never sent.
        Shaped for the model (`qatui.llm.reasoning`): the options it refuses left out, the
        backbone's reasoning effort or thinking budget added, and on a reasoning model
        `max_tokens` raised by the room for thinking (unless `thinking_room` is False: the
        preflight's 8 tokens ask only whether it answers).
        """
        messages = [dict(m) for m in messages]
        request: dict[str, Any] = {
            "model": self.model,
            "api_base": self.settings.api_base,
            "messages": messages,
            "temperature": self.settings.temperature if temperature is None else temperature,
            "max_tokens": self.settings.max_tokens if max_tokens is None else max_tokens,
            "response_format": None,
            **repeat_fields(self.seed, sample),
        }
        shape = self.shape(request["temperature"])
        request.update(request_extra(shape))
        request.update(dict.fromkeys(shape.left_out))  # None: not sent, and keyed as absent
        if thinking_room:
            request["max_tokens"] += shape.room
        if logprobs and self.supports_logprobs():
            request.update(logprobs=True, top_logprobs=logprobs)
        if schema is not None:
            if self.supports_schema():
                request["response_format"] = {"type": "json_schema", "json_schema": {
                    "name": schema_name(schema), "schema": json_schema_of(schema), "strict": True}}
            else:
                append_to_last_user(messages, JSON_INSTRUCTION.format(schema=json_schema_text(schema)))
        return request

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        purpose: str,
        schema: type[BaseModel] | dict[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        stream: bool = True,
        logprobs: int | None = None,
        sample: int = 0,
        cut_text_ok: bool = False,
    ) -> LLMResult:
        """Ask the backbone; with `schema`, `.data` is the validated answer (one repair re-ask).

        An answer cut off at `max_tokens`, or only thinking, fails the call (`LLMCallError`);
        `cut_text_ok` keeps an answer cut off after its thinking, for a text that is no verdict.

        Raises `LLMCallError` (the call failed) or `ParseError` (the answer, re-asked once,
        still does not match the schema). Either way the events were emitted first. `stream` is
        honoured only when someone watches the tokens (`events.tokens_watched`); a call asking
        for log-probabilities is not streamed (the chunks would not carry them back whole).
        """
        request = self.build_request(messages, schema=schema, temperature=temperature, max_tokens=max_tokens,
                                     logprobs=logprobs, sample=sample)
        if self.is_local and planning():  # `run --plan` never loads the embedded model: its request as built
            trimmed = None
        elif self.is_local:  # counting takes the model's lock, held while it generates: never on the event loop
            request["messages"], trimmed = await asyncio.to_thread(self.fit, request["messages"], request["max_tokens"])
        else:
            request["messages"], trimmed = self.fit(request["messages"], request["max_tokens"])
        await hold(self, request, purpose)  # `run --plan` counts the request and sends nothing
        if trimmed is not None and not trimmed.fits():
            raise LLMCallError(f"{self.label}: the {purpose} prompt is {trimmed.kept_tokens:,} tokens with its texts "
                               f"cut to the least, more than the {trimmed.window:,}-token context window holds beside "
                               f"the {trimmed.answer_tokens:,} kept for the answer; raise the backbone's context_window "
                               "or lower its max_tokens", transient=False)
        stream = stream and not request.get("logprobs") and tokens_watched()
        answer, event, found = await self._call(request, purpose=purpose, stream=stream, trimmed=trimmed,
                                                accept_cut_text=cut_text_ok and schema is None)
        text = answer.text
        if schema is None:
            return LLMResult(text=text, data=None, event=event, logprobs=found)
        try:
            return LLMResult(text=text, data=await parse_within(text, schema, self.backbone.timeout_s, self.model), event=event, logprobs=found)
        except ParseError as first:
            repair_messages = list(request["messages"]) + [
                {"role": "assistant", "content": text},
                {"role": "user", "content": REPAIR_MESSAGE.format(
                    reason=first.reason, schema=json_schema_text(schema))},
            ]
            repair = dict(request, messages=repair_messages)
            answer2, event2, found2 = await self._call(repair, purpose=f"{purpose}:repair", stream=stream)
            text2 = answer2.text
            try:
                return LLMResult(text=text2, data=await parse_within(text2, schema, self.backbone.timeout_s, self.model), event=event2, logprobs=found2)
            except ParseError as second:
                raise ParseError(f"{self.model} ({purpose}): {second} (after one repair re-ask; first answer "
                                 f"was {snippet(text)})", text=text2, reason=second.reason,
                                 ambiguous=second.ambiguous) from None

    def fit(self, messages: list[dict[str, Any]], answer_tokens: int) -> tuple[list[dict[str, Any]], Trimmed | None]:
        """`messages` trimmed to the context window with room for the answer (`qatui.llm.trim`), and what was cut.

        A remote model's tokenizer is built only for messages that may not fit (`trim.fits_uncounted`): the
        window is a fact (`llm.facts`), so a prompt that fits by its bytes needs no LiteLLM."""
        if self._counter is False:
            if self.is_local:
                self._counter = counter_for(self.model, self.settings.context_window)
            else:
                window = window_of(self.model, self.settings.context_window, self.facts)
                if not window or fits_uncounted(messages, window, answer_tokens):
                    return messages, None
                self._counter = counter_for(self.model, window)
        return (messages, None) if self._counter is None else fit(messages, self._counter, answer_tokens)

    async def check(self) -> str:
        """One tiny real call, no cache: a one-line status, or LLMCallError with the reason.

        It shows the endpoint answers (and how fast), not that the answers are any good: an
        answer cut off at its 8 tokens (a reasoning model is still thinking by then) passes,
        and says so. A reply with no answer at all (no choices, no message) fails. The line
        starts with `request_note` when there is one ("openai/o3-mini: a reasoning model; …").
        """
        request = self.build_request([{"role": "user", "content": CHECK_PROMPT}], max_tokens=8,
                                     thinking_room=False)
        started = time.perf_counter()
        answer, event, _ = await self._call(request, purpose="check", stream=False, read=False, write=False,
                                            accept_cut=True)
        cut = f" ({answer.cut_off}: only an answer is checked)" if answer.cut_off else ""
        head = note if (note := self.request_note()) else f"{self.label}:"  # a reasoning model says so first
        return (f"{head}{';' if note else ''} replied in {time.perf_counter() - started:.1f} s "
                f"({event.prompt_tokens}+{event.completion_tokens} tokens): "
                f"{snippet(answer.text or answer.thinking, 40, 0)}{cut}")

    async def _call(
        self, request: dict[str, Any], *, purpose: str, stream: bool, read: bool | None = None, write: bool = True,
        trimmed: Trimmed | None = None, accept_cut: bool = False, accept_cut_text: bool = False,
    ) -> tuple[Answer, LLMCallFinished, TokenLogprobs | None]:
        """One logical call: cache hit, or the backbone (with retries). Emits one LLMCallFinished (and InputTrimmed).

        A reply with no usable answer (`response.read_answer`: cut off, only thinking) fails the
        call, its tokens counted, unless `accept_cut`; it is never cached, so a resume asks again,
        and not retried now: at temperature 0 with a fixed seed it would be cut the same way.
        """
        read = self.use_cache if read is None else read
        key = cache_key(request)
        call_id = _call_id()
        started = time.perf_counter()
        base = {"call_id": call_id, "model": self.model, "purpose": purpose, "prompt_hash": key,
                "trimmed": trimmed.record() if trimmed else {}, **self._sent(request)}
        if trimmed is not None:
            emit(InputTrimmed(call_id=call_id, purpose=purpose, model=self.model, trimmed=trimmed.record()))
        if read and (hit := self.cache.get(key)) is not None:
            usage = hit.get("usage") or {}
            event = LLMCallFinished(**base, prompt_tokens=int(usage.get("prompt_tokens", 0)),
                                    completion_tokens=int(usage.get("completion_tokens", 0)),
                                    reasoning_tokens=int(usage.get("reasoning_tokens", 0)), cost_usd=0.0,
                                    cached_cost_usd=float(hit.get("cost_usd") or 0.0),
                                    unpriced=hit.get("unpriced") is True,
                                    latency_s=time.perf_counter() - started, cached=True, attempts=0,
                                    response=hit["text"][:RESPONSE_CHARS],
                                    thinking=str(hit.get("thinking") or "")[:RESPONSE_CHARS])
            emit(event)
            if (used := ANSWERS_USED.get()) is not None:
                used.entries.append((self.cache, key))
            return Answer(text=hit["text"], thinking=str(hit.get("thinking") or ""),
                          finish_reason=str(hit.get("finish_reason") or "")), event, hit.get("logprobs")
        check_not_stopping(self.model)  # the run's first Ctrl-C: nothing new is sent, the calls in flight return
        if self.deferred_check is not None:  # a backbone that fails it: the call is not made, as a capped one is not
            await self.deferred_check.before_call()
        hops: list[Hop] = []
        response: Any = None
        try:
            api_key = self.api_key()
            self.precheck()
            response, attempts = await within_cap(self, request, self._send(
                request, api_key=api_key, call_id=call_id, purpose=purpose, stream=stream, hops=hops, key=key))
            answer = read_answer(response, self.model, request, attempts=attempts, accept_cut=accept_cut,
                                 accept_cut_text=accept_cut_text)
        except RunStopping:  # it waited for a slot and the run stopped meanwhile: never sent, nothing to record
            raise
        except LLMCallError as e:
            if write:
                self._store(key, request, None)
            spent = ({"cost_usd": e.cost_usd} if e.cost_usd else {}) if response is None else spent_on(
                response, self.model, free=self.is_local, facts=self.facts)
            if e.cost_unknown and not self.is_local:
                spent["unpriced"] = True
            emit(LLMCallFinished(**base, latency_s=time.perf_counter() - started, attempts=e.attempts, ok=False,
                                 error=str(e), thinking=e.thinking[:RESPONSE_CHARS], **spent, **hop_fields(hops)))
            raise
        spent = spent_on(response, self.model, free=self.is_local, facts=self.facts)
        shared = shared_cost(response)  # a batch line an earlier call of the run paid for: free, as a cache hit is
        found = logprobs_of(response) if request.get("logprobs") else None
        if write:
            self._store(key, request, {"text": answer.text, "usage": usage_of(response),
                                       "cost_usd": spent["cost_usd"] if shared is None else shared,
                                       **({"unpriced": True} if spent.get("unpriced") else {}),
                                       "purpose": purpose,
                                       "model": str(getattr(response, "model", "") or self.model),
                                       "finish_reason": answer.finish_reason,
                                       **({"thinking": answer.thinking} if answer.thinking else {}),
                                       **({"logprobs": found} if found else {})})
        if write and (used := ANSWERS_USED.get()) is not None:
            used.entries.append((self.cache, key))
        event = LLMCallFinished(**base, **spent, latency_s=time.perf_counter() - started, attempts=attempts,
                                response=answer.text[:RESPONSE_CHARS], thinking=answer.thinking[:RESPONSE_CHARS],
                                **hop_fields(hops), **({} if shared is None else {"cached": True,
                                                                                   "cached_cost_usd": shared}))
        emit(event)
        return answer, event, found

    async def _send(self, request: dict[str, Any], *, api_key: str | None, call_id: str, purpose: str,
                    stream: bool, hops: list[Hop], key: str) -> tuple[Any, int]:
        """Send one request: to the backbone (streamed or not), or, in batch mode, into the run's next batch
        (`llm.batch`: never streamed, the answer read the same way). Returns (response, tries made).

        A request LiteLLM would only pass through to an OpenAI-compatible endpoint is posted straight to it
        (`llm.direct`: same body, errors and readers, without LiteLLM's per-call CPU).

        A reply whose usage report cannot be true (`response.usage_problem`: more prompt tokens than the request's
        bytes allow, say) fails the call, not asked again (a broken server's count comes back the same), its cost
        unknown: 0 is recorded (plus what earlier sends of it were billed), and the cap keeps its worst case
        (`spend.within_cap`)."""
        from qatui.llm._lazy import get_litellm

        kwargs = {k: v for k, v in request.items() if v is not None and k not in LOCAL_FIELDS}
        kwargs["drop_params"] = True  # a provider without `seed` (say) still answers
        if (batcher := BATCH.get()) is not None and not self.is_local:
            response, attempts = await batcher.complete(self, kwargs, key=key, api_key=api_key)
        else:
            send = direct.acompletion if self._direct and direct.takes(kwargs, self.facts) else None
            consume = None
            if stream:
                kwargs.update(stream=True, stream_options={"include_usage": True})
                consume = stream_consumer(get_litellm(), self.model, purpose=purpose, call_id=call_id,
                                          messages=request["messages"])
            response, attempts = await self.backbone.run(kwargs, api_key=api_key, consume=consume, hops=hops,
                                                         send=send)
        if (problem := reply_usage_problem(response, request)) is not None:
            raise LLMCallError(f"{self.model}: {problem}", attempts=attempts, cost_usd=paid_before(response),
                               cost_unknown=True)
        return response, attempts

    # -- helpers -------------------------------------------------------------------------------

    def api_key(self) -> str | None:
        """The key from `$api_key_env`, read now and never kept; a missing variable is an error."""
        return key_from_env(self.settings.api_key_env, self.model, f"backbone '{self.name}'", LLMCallError)

    def precheck(self) -> None:
        """Fail before any attempt when retrying could not help (missing model file, missing key)."""
        if self.is_local:
            from qatui.llm.local import check_available

            check_available(self.model)
            return
        if self.backbone.router is not None:
            return self.backbone.router.check_keys()
        if self.settings.api_key_env or self.settings.api_base:
            return
        if keys := missing_keys(self.model, self.facts):  # LiteLLM's answer, kept as a fact (`llm.keys`)
            raise LLMCallError(f"{self.model}: no API key: set {' or '.join(keys)} (or name the variable "
                               "with api_key_env in a [backbones.NAME] table)")

    def _sent(self, request: dict[str, Any]) -> dict[str, Any]:
        """The call record's `options` (as sent) and `left_out` (set for the call or the backbone, never sent)."""
        wanted = ("temperature", "seed", *(name for name, _ in self.shape().extra))
        return {"options": {k: request[k] for k in SENT_OPTIONS if request.get(k) is not None},
                "left_out": [k for k in wanted if request.get(k) is None]}

    def _store(self, key: str, request: dict[str, Any], response: dict[str, Any] | None) -> None:
        try:
            self.cache.put(key, request, response)
        except OSError:
            pass  # a read-only or full cache folder must not fail a call that succeeded


def _takes_schema(model: str) -> bool:
    """Whether LiteLLM says `model` takes a JSON schema as response_format (an unknown model: no)."""
    from qatui.llm._lazy import get_litellm

    try:
        return bool(get_litellm().supports_response_schema(model=model))
    except Exception:  # noqa: BLE001 - an unknown model: ask in the prompt instead
        return False


# -- construction ----------------------------------------------------------------------------------

_backbones: dict[tuple, Backbone] = {}


def _shared_backbone(name: str, settings: BackboneConfig) -> Backbone:
    """One Backbone (one concurrency limit) per distinct backbone settings in this process."""
    routed = settings.model_dump_json(include={"deployments", "routing_strategy", "cooldown_s"})
    key = (name if settings.deployments else None, routed, settings.model, settings.api_base, settings.api_key_env,
           settings.max_concurrency, settings.timeout_s, settings.max_attempts, settings.rate_limit_budget_s)
    if key not in _backbones:
        _backbones[key] = Backbone(settings.model, max_concurrency=settings.max_concurrency,
                                   timeout_s=settings.timeout_s, max_attempts=settings.max_attempts,
                                   rate_limit_budget_s=settings.rate_limit_budget_s, api_key_env=settings.api_key_env,
                                   router=DeploymentRouter(name, settings) if settings.deployments else None)
    return _backbones[key]


def backbone_settings(backbone: str, config: Config) -> BackboneConfig:
    """What `backbone` names: its `[backbones.NAME]` table, else the defaults for a LiteLLM model string.

    Refuses (`ConfigError`, one line) a name that is neither, and an embedded model qatui does not ship.
    Reads no file and calls nothing, so a form can check what is typed on each key, the same way
    `--backbone` is checked.
    """
    from qatui.config import BackboneConfig

    if backbone in config.backbones:
        settings = config.backbones[backbone]
    elif "/" in backbone:
        settings = BackboneConfig(model=backbone)
    else:
        where = config.source or "the config"
        raise ConfigError(f"unknown backbone '{backbone}'{did_you_mean(backbone, config.backbones)}: not a "
                          f"[backbones.{backbone}] table in {where}, and not "
                          "a LiteLLM model string such as openai/gpt-4o-mini, ollama/qwen2.5 or local/smollm2")
    if settings.model.startswith("local/"):
        from qatui.llm.local import PACKAGES, model_name

        if model_name(settings.model) not in PACKAGES:
            known = ", ".join(f"local/{n}" for n in PACKAGES)
            raise ConfigError(f"unknown embedded model '{settings.model}' (known: {known})")
    return settings


def make_client(backbone: str, config: Config, *, use_cache: bool | None = None) -> LLMClient:
    """A client for `backbone`: a `[backbones.NAME]` key of the config, or a LiteLLM model string.

    Raw strings ("openai/gpt-4o-mini", "ollama/qwen2.5", "local/smollm2") get the
    `BackboneConfig` defaults. `use_cache=None` follows the config's `[cache] enabled`;
    False skips cache *reads* only: every answer is still written, so a call's prompt
    can always be read back by its `prompt_hash`.
    """
    settings = backbone_settings(backbone, config)
    return LLMClient(
        model=settings.model,
        name=backbone,
        settings=settings,
        backbone=_shared_backbone(backbone, settings),
        cache=CallCache(config.cache_dir()),
        use_cache=config.cache.enabled if use_cache is None else use_cache,
        seed=config.general.seed,
    )
