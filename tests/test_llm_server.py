"""The scripted OpenAI-compatible server (tests/llm_server.py), driven through qatui's real client.

Every call here goes LLMClient -> Backbone -> litellm.acompletion -> the OpenAI SDK -> HTTP
on 127.0.0.1, so the server's faults exercise the same paths a real provider's would.
Retries stay fast as in test_llm.py: the backbone's sleep is replaced by one that records
the delay it was asked for and does not wait.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from llm_server import MALFORMED_TEXT, Fault, FakeLLMServer, count_tokens
from pydantic import BaseModel

from qatui.config import BackboneConfig, CacheConfig, Config
from qatui.events import EVENT_SINK, LLMToken
from qatui.llm import LLMCallError, make_client
from qatui.llm import client as client_module

pytestmark = [pytest.mark.filterwarnings("ignore:.*ReadOnly. qualifier:UserWarning"),  # LiteLLM's types
              pytest.mark.usefixtures("litellm_imported")]  # imported once, outside the tests' own time

KEY_ENV = "QATUI_FAKE_LLM_KEY"
KEY = "sk-fake-0123456789"
ASK = [{"role": "user", "content": "What is the capital of France?"}]


class Answer(BaseModel):
    answer: str



@pytest.fixture(autouse=True)
def _fresh_backbones(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    client_module._backbones.clear()
    yield
    client_module._backbones.clear()


def _client(server: FakeLLMServer, tmp_path: Path, **settings: Any):
    settings = {"model": "openai/fake-model", "api_base": server.base_url, "api_key_env": KEY_ENV,
                "max_attempts": 3, "timeout_s": 5.0, **settings}
    config = Config(cache=CacheConfig(dir=str(tmp_path / "cache")), backbones={"fake": BackboneConfig(**settings)})
    client = make_client("fake", config, use_cache=False)
    delays: list[float] = []

    async def record(delay: float) -> None:
        delays.append(delay)
        await asyncio.sleep(0)

    client.backbone.sleep = record
    client.backbone.base_delay_s = 0.01
    return client, delays


def _ask(client, **kwargs: Any):
    return asyncio.run(client.complete(ASK, purpose="test", **kwargs))


def test_a_call_through_the_client_returns_the_scripted_text(llm_server, tmp_path):
    llm_server.script(lambda body: f"Paris, said to {body['model']}")
    client, delays = _client(llm_server, tmp_path)
    result = _ask(client, stream=False)
    assert result.text == "Paris, said to fake-model"
    assert result.event.ok and result.event.attempts == 1 and delays == []
    assert result.event.prompt_tokens == count_tokens(ASK[0]["content"]) == 6  # the server's usage, read back
    assert result.event.completion_tokens == 4
    [body] = llm_server.requests
    assert body["messages"] == ASK and not body.get("stream")
    assert llm_server.headers[0]["Authorization"] == f"Bearer {KEY}"
    # LiteLLM's own HTTP client, not the OpenAI SDK (its x-stainless-* headers): 40% less CPU a call
    assert not [h for h in llm_server.headers[0] if h.lower().startswith("x-stainless")]
    assert llm_server.counts == {"ok": 1} and llm_server.n_streamed == 0


def test_a_streaming_call_sends_tokens_and_usage(llm_server, tmp_path):
    text = "The capital of France is Paris, on the Seine."
    llm_server.script(lambda body: text)
    client, _ = _client(llm_server, tmp_path)
    seen: list = []
    token = EVENT_SINK.set(seen.append)
    try:
        result = _ask(client, stream=True)
    finally:
        EVENT_SINK.reset(token)
    pieces = [e.text for e in seen if isinstance(e, LLMToken)]
    assert result.text == text and "".join(pieces) == text and len(pieces) > 1  # 8-character chunks
    assert result.event.completion_tokens == count_tokens(text)
    assert result.event.prompt_tokens == 6
    [body] = llm_server.requests
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert llm_server.n_streamed == 1


def test_a_429_then_ok_is_retried_by_the_backbone(llm_server, tmp_path):
    llm_server.script(faults=["429", "ok"])
    client, delays = _client(llm_server, tmp_path)
    result = _ask(client, stream=False)
    assert result.text == "OK" and result.event.attempts == 2
    assert len(llm_server.requests) == 2 and llm_server.counts == {"429": 1, "ok": 1}
    assert len(delays) == 1 and delays[0] < 0.05  # base_delay_s 0.01: no Retry-After to honour


def test_retry_after_reaches_the_backoff(llm_server, tmp_path):
    llm_server.script(faults=[Fault("429-retry-after", retry_after=7), "ok"])
    client, delays = _client(llm_server, tmp_path)
    assert _ask(client, stream=True).text == "OK"
    assert delays and delays[0] == 7.0  # waited out (the recorder does not really sleep)
    assert llm_server.counts == {"429-retry-after": 1, "ok": 1}


def test_a_hang_past_the_timeout_is_an_llm_call_error(llm_server, tmp_path):
    llm_server.script(faults=lambda index, body: Fault("hang", seconds=20))
    client, _ = _client(llm_server, tmp_path, timeout_s=0.4, max_attempts=2)
    started = time.monotonic()
    with pytest.raises(LLMCallError, match=r"timed out after 0.4 s 2 times") as caught:
        _ask(client, stream=False)
    assert time.monotonic() - started < 3.0
    assert caught.value.transient and caught.value.attempts == 2
    assert len(llm_server.requests) == 2


def test_server_errors_and_drops_are_retried_then_reported(llm_server, tmp_path):
    llm_server.script(faults=["500", "503", "drop", "ok"])
    client, delays = _client(llm_server, tmp_path, max_attempts=4)
    result = _ask(client, stream=True)  # the drop comes mid-stream, after the first chunks
    assert result.text == "OK" and result.event.attempts == 4 and len(delays) == 3
    llm_server.script(faults=["503", "500", "drop", "drop"])
    with pytest.raises(LLMCallError, match=r"failed 4 times \(service unavailable \(503\) ×1, server error "
                                           r"\(500\) ×1, connection failed ×2\)") as caught:  # LiteLLM says 500
        _ask(client, stream=False)
    assert caught.value.transient and caught.value.attempts == 4
    assert llm_server.counts == {"500": 2, "503": 2, "drop": 3, "ok": 1}


def test_a_malformed_answer_is_repaired_by_the_reask(llm_server, tmp_path):
    llm_server.script(lambda body: json.dumps({"answer": "Paris"}), faults=["malformed"])
    client, _ = _client(llm_server, tmp_path)
    result = _ask(client, schema=Answer, stream=False)
    assert result.data == Answer(answer="Paris")
    first, repair = llm_server.requests
    assert repair["messages"][-2] == {"role": "assistant", "content": MALFORMED_TEXT}


async def test_async_callers_and_content_faults(llm_server, tmp_path):
    llm_server.script(faults=["empty", Fault("long", chars=50_000), "ok"], latency_s=0.05)
    client, _ = _client(llm_server, tmp_path)
    empty = await client.complete(ASK, purpose="test", stream=True)
    long = await client.complete(ASK, purpose="test", stream=False)  # streamed, 6,250 chunks take LiteLLM 4 s
    ok = await client.complete(ASK, purpose="test")
    assert (empty.text, len(long.text), ok.text) == ("", 50_000, "OK")
    assert empty.event.completion_tokens == 0 and long.event.completion_tokens > 5_000


def _post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_seeded_fault_rates_limits_and_lifetime():
    def kinds(server: FakeLLMServer) -> list[str]:
        return [_post(f"{server.base_url}/chat/completions", {"messages": ASK})[0] for _ in range(30)]

    with FakeLLMServer(fault_rates={"429": 0.3, "500": 0.2}, seed=7, max_requests=35) as server:
        first = kinds(server)
        server.script(fault_rates={"429": 0.3, "500": 0.2}, seed=7)
        assert kinds(server)[:5] == first[:5]  # same seed, same draws (the limit refuses from the 36th on)
        assert {200, 429, 500} == set(first) and server.counts["refused"] == 25
        assert len(server.requests) == 35
        with urllib.request.urlopen(f"{server.base_url}/models", timeout=5) as response:
            assert json.loads(response.read())["data"][0]["id"] == "fake-model"
        server.script(lambda body: 1 / 0)
        server.max_requests = 100
        assert _post(f"{server.base_url}/chat/completions", {"messages": ASK})[0] == 500
        assert [type(e) for e in server.errors] == [ZeroDivisionError]
    assert server.stopped_because == "stop()"

    with FakeLLMServer(max_lifetime_s=0.3) as server:
        assert _post(f"{server.base_url}/chat/completions", {"messages": ASK})[1]["choices"][0]["message"][
            "content"] == "OK"
        time.sleep(0.6)
        assert server.stopped_because == "lifetime"
        with pytest.raises(urllib.error.URLError):
            _post(f"{server.base_url}/chat/completions", {"messages": ASK})


@pytest.mark.parametrize("watch_tokens", [False, True])
def test_a_run_streams_only_when_its_tokens_are_watched(llm_server, tmp_path, watch_tokens):
    """The CLI's engine (nobody watching) sends one plain request; the TUI's streams. Both emit and cache."""
    from qatui.data.model import Item
    from qatui.engine.runner import Engine
    from qatui.events import Judgement, LLMCallFinished
    from qatui.judges.base import Judge

    text = "The capital of France is Paris, on the Seine."
    llm_server.script(lambda body: text)
    client, _ = _client(llm_server, tmp_path)

    class Asking(Judge):
        """Asks the backbone once (stream=True, as every judge's default), scores every response 1."""

        name, summary = "asking", "one backbone call"

        async def judge(self, view):
            await client.complete(ASK, purpose="test")
            yield Judgement(scores={r.label: 1.0 for r in view.responses})

    async def run() -> list:
        item = Item(id="q0", question="question", candidates={"a": "x", "b": "y"})
        return [e async for e in Engine([item], [Asking()], seed=0, watch_tokens=watch_tokens).run()]

    events = asyncio.run(run())
    [call] = [e for e in events if isinstance(e, LLMCallFinished)]
    tokens = [e.text for e in events if isinstance(e, LLMToken)]
    assert call.ok and call.response == text and call.item_id == "q0" and not call.cached
    assert client.cache.get(call.prompt_hash)["text"] == text  # cached as a streamed answer would be
    assert llm_server.n_streamed == int(watch_tokens) and bool(llm_server.requests[0].get("stream")) is watch_tokens
    assert ("".join(tokens) == text and len(tokens) > 1) if watch_tokens else tokens == []
    assert call.completion_tokens == count_tokens(text) and call.prompt_tokens == 6  # usage either way
