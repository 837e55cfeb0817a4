"""Rate limits slow a run and never fail it: each backbone's concurrency adapts (AIMD), `Retry-After` is waited out.

The provider is the scripted OpenAI-compatible server on 127.0.0.1 (tests/llm_server.py) with its
token bucket: a fixed number of requests a second, a 429 with `Retry-After` (the wait until the
next token) past it. qatui's real client, engine and session store run a pointwise judge (one
call per item) at a concurrency well above what the rate allows.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path

import pytest
from llm_server import FakeLLMServer

from qatui.config import BackboneConfig, CacheConfig, Config, GeneralConfig, ModelsConfig
from qatui.data.model import Dataset, Item
from qatui.engine.jobs import finish_run, start_run
from qatui.events import ItemFailed, Verdict
from qatui.llm import pacing
from qatui.store import SessionStore

KEY_ENV = "QATUI_PACING_KEY"
SCORE = json.dumps({"score": "[[7.50]]"})
RATE = 10.0
"""Requests a second the server answers; past it, 429 with Retry-After."""
BURST = 2.0
"""Requests the server's bucket holds: a provider's limit is a rate over a window, never one request at a time
(with a bucket of one, every millisecond of qatui's own work between the pause and the request is lost to it)."""


def one_call_items(n: int, tag: str) -> Dataset:
    """N one-answer items: pointwise makes exactly one call each."""
    items = [Item(id=f"{tag}{i}", question=f"Question {i} ({tag}): what is the capital of country {i}?",
                  references=[f"The capital of country {i} is City {i}."], candidates={"a": f"City {i}."})
             for i in range(n)]
    return Dataset(name=f"pacing-{tag}", path=f"test://{tag}", format="jsonl", content_hash=f"pacing-{tag}-{n}",
                   items=items)


def config_for(server: FakeLLMServer, tmp_path: Path, concurrency: int, **backbone: object) -> Config:
    fake = BackboneConfig(model="openai/fake-model", api_base=server.base_url, api_key_env=KEY_ENV,
                          max_concurrency=concurrency, timeout_s=30.0, **backbone)
    return Config(general=GeneralConfig(concurrency=concurrency), cache=CacheConfig(dir=str(tmp_path / "cache")),
                  models=ModelsConfig(default_backbone="fake"), backbones={"fake": fake})


def run(dataset: Dataset, config: Config, tmp_path: Path) -> tuple[int, list[ItemFailed], float]:
    """Judge `dataset` with pointwise through the engine; (items done, failures, wall seconds of the run)."""
    job = start_run(SessionStore(tmp_path / "sessions"), dataset, ["pointwise"], config)
    done, failed = 0, []

    async def drive() -> None:
        nonlocal done
        async for event in job.engine.run():
            if isinstance(event, Verdict):
                done += 1
            elif isinstance(event, ItemFailed):
                failed.append(event)

    started = time.monotonic()
    asyncio.run(drive())
    wall = time.monotonic() - started
    finish_run(job, "completed")
    return done, failed, wall


@pytest.fixture
def limited(monkeypatch):
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv(KEY_ENV, "sk-pacing-test")
    from qatui.llm import client as client_module

    client_module._backbones.clear()  # a fresh limit for each test's backbone
    with FakeLLMServer(lambda body: SCORE, rate_per_s=RATE, burst=BURST, latency_s=0.02, max_lifetime_s=90) as server:
        yield server
    client_module._backbones.clear()


def test_a_rate_limited_provider_slows_the_run_at_its_rate_and_fails_nothing(limited, tmp_path) -> None:
    n = 60
    done, failed, wall = run(one_call_items(n, "r"), config_for(limited, tmp_path, 16), tmp_path)
    assert failed == [] and done == n
    served = limited.served_at[-n:]  # the run's answers (the preflight's probe may come first)
    throughput = (len(served) - 1) / (served[-1] - served[0])
    assert 0.8 * RATE <= throughput <= 1.2 * RATE, f"{throughput:.2f} answers/s against a limit of {RATE:g}/s"
    # the limit came down instead of flooding: about one 429 per answer at most (16 at once send six times more,
    # and a Retry-After ignored twice as many)
    rejected = limited.counts["429-rate"]
    assert rejected <= 1.5 * n, f"{rejected} 429s for {n} answers"
    from qatui.llm import client as client_module

    [backbone] = client_module._backbones.values()
    assert backbone.pace.rate_limited >= 1 and backbone.pace.cuts >= 1 and backbone.pace.allowed < 16


def test_past_its_time_budget_a_rate_limited_item_fails_saying_so(limited, tmp_path) -> None:
    limited.rate_per_s, limited.burst, limited._tokens = 0.01, 1.0, 0.0  # the next answer in 100 s: all refused
    done, failed, _ = run(one_call_items(2, "b"), config_for(limited, tmp_path, 2, rate_limit_budget_s=1.5),
                          tmp_path)
    assert done == 0 and len(failed) == 2
    for failure in failed:
        assert "rate limited (429)" in failure.reason and "rate_limit_budget_s of 1.5 s" in failure.reason


def test_a_call_waiting_behind_the_runs_own_backlog_spends_none_of_its_rate_limit_budget(limited, tmp_path) -> None:
    """One slot (`max_concurrency` 1) and 30 items asked at once: the slot queue is the run's own backlog. Each
    item's first request is refused (429, Retry-After 0.05 s); an even item's second is answered after 0.15 s, an
    odd item's is refused again, then answered. An odd item's second 429 comes after it has queued behind the
    others for seconds, while its own rate-limit waits total 0.1 s: queuing is no rate limit, so a budget of 1 s
    fails nothing (it failed most odd items when the queue counted)."""
    from collections import Counter

    from fakes import is_preflight
    from llm_server import Fault

    limited.rate_per_s = None  # the script alone refuses
    asked: Counter[str] = Counter()

    def script(index: int, body: dict) -> Fault | str:
        if is_preflight(body):
            return "ok"
        prompt = body["messages"][-1]["content"]
        asked[prompt] += 1
        odd = int(re.search(r"Question (\d+) \(", prompt)[1]) % 2
        if asked[prompt] == 1 or (odd and asked[prompt] == 2):
            return Fault("429", retry_after=0.05)
        return Fault("hang", seconds=0.15) if not odd else "ok"

    limited.script(lambda body: SCORE, faults=script)
    n = 30
    config = config_for(limited, tmp_path, 1, rate_limit_budget_s=1.0).model_copy(
        update={"general": GeneralConfig(concurrency=n)})  # every item's call waits for the one slot
    done, failed, wall = run(one_call_items(n, "q"), config, tmp_path)
    assert [f.reason for f in failed] == [] and done == n
    assert wall > 2 * 1.0  # the backlog alone took longer than the budget
    assert sorted(asked.values()) == [2] * (n // 2) + [3] * (n // 2)


def test_the_limit_halves_on_overload_once_per_round_and_grows_back_by_one_per_round() -> None:
    limit = pacing.AdaptiveLimit("m", 8)

    async def play() -> None:
        slots = [await limit.acquire() for _ in range(8)]
        for slot in slots:  # eight 429s of calls sent together: one cut, not eight
            limit.release(slot, pacing.OVERLOADED)
        assert limit.allowed == 4 and limit.cuts == 1
        slot = await limit.acquire()  # sent after the cut, still refused: the limit halves again
        limit.release(slot, pacing.OVERLOADED)
        assert limit.allowed == 2
        for _ in range(6):  # about one more slot for each round of answers
            slots = [await limit.acquire() for _ in range(limit.allowed)]
            for slot in slots:
                limit.release(slot, pacing.OK)
        assert 5 <= limit.allowed <= 8

    asyncio.run(play())


def test_a_retry_after_holds_every_new_call_until_it_has_passed() -> None:
    limit = pacing.AdaptiveLimit("m", 4)

    async def play() -> float:
        slot = await limit.acquire()
        limit.release(slot, pacing.OVERLOADED, pause_s=0.3)
        started = time.monotonic()
        await limit.acquire()
        return time.monotonic() - started

    assert asyncio.run(play()) >= 0.29
