"""The embedded backbone `local/smollm2`, for real: SmolLM2-135M in transformers and torch behind LiteLLM.

Short prompts and small `max_tokens` keep the whole file to a few seconds on a CPU.
"""

from __future__ import annotations

import asyncio
import threading

import pytest
from pydantic import BaseModel, Field

from qatui import extras
from qatui.config import CacheConfig, Config
from qatui.events import EVENT_SINK, LLMCallFinished, LLMToken
from qatui.llm import make_client
from qatui.llm._lazy import get_litellm
from qatui.llm.local import LocalModel, get_model

pytestmark = [
    pytest.mark.skipif(
        not extras.has("local"),
        reason=f"the embedded model is not installed: {extras.install_hint('local')}",
    ),
    pytest.mark.filterwarnings("ignore:.*ReadOnly. qualifier:UserWarning"),  # LiteLLM's types, under pytest
]

REFERENCE = "Paris is the capital of France. It has about two million inhabitants."


class KeyPoints(BaseModel):
    key_points: list[str] = Field(min_length=1, max_length=4)


def _messages() -> list[dict[str, str]]:
    return [{"role": "system", "content": "You extract key points."},
            {"role": "user", "content": f"List the key points of this text as JSON.\n\nText: {REFERENCE}"}]


@pytest.fixture
def events():
    seen: list = []
    token = EVENT_SINK.set(seen.append)
    yield seen
    EVENT_SINK.reset(token)


@pytest.fixture
def client(tmp_path):
    return make_client("local/smollm2", Config(cache=CacheConfig(dir=str(tmp_path / "cache"))))


async def test_litellm_acompletion_reaches_the_embedded_model():
    ll = get_litellm()
    response = await ll.acompletion(model="local/smollm2", messages=[
        {"role": "user", "content": "What is the capital of France? Answer in one word."}], max_tokens=8, temperature=0)
    text = response.choices[0].message.content
    assert text.strip() and "Paris" in text
    assert response.usage.prompt_tokens > 10 and 0 < response.usage.completion_tokens <= 8
    assert ll.completion_cost(completion_response=response, model="local/smollm2") == 0.0


async def test_schema_constrained_output_parses(client, events):
    result = await client.complete(_messages(), purpose="key_points", schema=KeyPoints, max_tokens=96, stream=False)
    assert isinstance(result.data, KeyPoints) and 1 <= len(result.data.key_points) <= 4
    assert all(isinstance(p, str) and p for p in result.data.key_points)
    [event] = [e for e in events if isinstance(e, LLMCallFinished)]
    assert (event.ok, event.cached, event.cost_usd, event.purpose) == (True, False, 0.0, "key_points")
    assert event.prompt_tokens > 20 and event.completion_tokens > 0


async def test_streaming_emits_tokens_and_a_rerun_is_cached(client, events, monkeypatch):
    first = await client.complete(_messages(), purpose="key_points", schema=KeyPoints, max_tokens=96)
    tokens = [e for e in events if isinstance(e, LLMToken)]
    assert len(tokens) > 5 and "".join(t.text for t in tokens) == first.text
    assert isinstance(first.data, KeyPoints)

    def no_generation(*args, **kwargs):
        raise AssertionError("a cached call reached the model")

    monkeypatch.setattr(LocalModel, "generate", no_generation)
    events.clear()
    second = await client.complete(_messages(), purpose="key_points", schema=KeyPoints, max_tokens=96)
    assert second.text == first.text and second.data == first.data
    [event] = [e for e in events if isinstance(e, LLMCallFinished)]
    assert event.cached and event.prompt_hash == first.event.prompt_hash
    assert client.cache.load(event.prompt_hash)["request"]["messages"][1]["content"].endswith(REFERENCE)


async def test_check_and_label(client):
    assert client.label == "local/smollm2 (weak, embedded)" and client.is_local
    status = await client.check()
    assert status.startswith("local/smollm2 (weak, embedded): replied in ")


def test_a_stopped_generation_ends_at_the_next_token():
    model = get_model("smollm2")
    stop = threading.Event()
    pieces: list[str] = []

    def on_text(piece: str) -> None:
        pieces.append(piece)
        if len(pieces) == 2:
            stop.set()

    result = model.generate([{"role": "user", "content": "Count from one to one hundred in words."}],
                            {"max_tokens": 400}, on_text, stop)
    assert result["finish_reason"] == "cancelled" and len(pieces) == 2
    again = model.generate([{"role": "user", "content": "Hi"}], {"max_tokens": 3})  # the lock was released
    assert again["usage"]["completion_tokens"] <= 3


class Ok(BaseModel):
    ok: bool


async def test_calls_queued_on_the_one_model_are_timed_from_when_they_generate(tmp_path):
    """Six calls at once on the embedded model, which generates one at a time: each is timed on its own generation.

    The timeout is 2.5 times one generation measured now, so a call timed from its arrival
    (waiting for five others) would time out; none may, and none may run beside another.
    """
    from time import perf_counter

    from qatui.config import BackboneConfig

    config = Config(cache=CacheConfig(dir=str(tmp_path / "cache")), backbones={"small": BackboneConfig(
        model="local/smollm2", max_concurrency=6, max_attempts=1, timeout_s=120.0)})
    client = make_client("small", config, use_cache=False)

    def ask(n: int):
        return client.complete([{"role": "user", "content": f"Is {n} a number? Answer as JSON."}], purpose="queue",
                               schema=Ok, max_tokens=16, stream=False)

    one = 0.0
    for n in range(2):  # loaded, then timed
        started = perf_counter()
        await ask(n)
        one = max(one, perf_counter() - started)
    client.backbone.timeout_s = 2.5 * one
    results = await asyncio.gather(*(ask(n) for n in range(6)), return_exceptions=True)
    assert [type(r).__name__ for r in results] == ["LLMResult"] * 6, (one, results)
    assert client.backbone.max_in_flight == 1


@pytest.mark.parametrize("value", ["abc", "0", "99999", "9" * 5000])
def test_a_thread_count_that_is_no_number_of_threads_is_refused_before_the_session(tmp_path, capsys, monkeypatch,
                                                                                     value) -> None:
    """`$QATUI_LOCAL_THREADS` out of 1..1024 is refused in one line naming it before any session (a typo was
    ignored for half the cores, 5,000 digits an int() traceback at the model's load, 99999 asked of the runtime)."""
    from qatui.cli import main

    monkeypatch.setenv("QATUI_LOCAL_THREADS", value)
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "q", "question": "?", "references": ["x"], "candidates": {"a": "x", "b": "y"}}\n')
    sessions = tmp_path / "sessions"
    code = main(["run", str(data), "--judge", "pointwise", "--backbone", "local/smollm2", "--sessions-dir",
                 str(sessions)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "$QATUI_LOCAL_THREADS is" in err, err[-500:]
    assert "from 1 to 1024" in err and len(err) < 300 and not sessions.exists()
