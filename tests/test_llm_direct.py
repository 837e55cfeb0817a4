"""Straight to the endpoint (`qatui.llm.direct`) and through LiteLLM: the same requests, answers, errors and records.

Each case asks the scripted loopback server (tests/llm_server.py) the same question twice, once on each
path (`direct_http` true and false), with the same script, and compares what the server received, what
the call returned or how it failed, its `LLMCallFinished` and its cache entry. The server's `User-Agent`
shows which path each request took.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from llm_server import Fault, FakeLLMServer, Reply
from pydantic import BaseModel

from qatui.config import BackboneConfig, CacheConfig, Config
from qatui.events import EVENT_SINK, TOKENS_WATCHED, LLMCallFinished, LLMToken
from qatui.llm import LLMCallError, make_client
from qatui.llm import client as client_module

pytestmark = [pytest.mark.filterwarnings("ignore:.*ReadOnly. qualifier:UserWarning"),
              pytest.mark.filterwarnings("ignore:Accessing the .model_:DeprecationWarning"),  # LiteLLM's stream builder
              pytest.mark.usefixtures("litellm_imported")]  # imported once, outside the tests' own time

KEY_ENV = "QATUI_DIRECT_KEY"
KEY = "sk-direct-0123456789abcdef"
ASK = [{"role": "user", "content": "What is the capital of France?"}]
PARIS = "Paris is the capital of France."
PARIS_SCRIPT = {"responder": lambda body: "Paris."}
"""A server answering every request "Paris." (`FakeLLMServer.script`'s arguments)."""


class Capital(BaseModel):
    city: str



@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    client_module._backbones.clear()
    yield
    client_module._backbones.clear()


def _client(server: FakeLLMServer, folder: Path, direct: bool, model: str = "openai/fake-model", **settings: Any):
    settings = {"model": model, "api_base": server.base_url, "api_key_env": KEY_ENV, "max_attempts": 3,
                "timeout_s": 5.0, "direct_http": direct, **settings}
    config = Config(cache=CacheConfig(dir=str(folder)), backbones={"b": BackboneConfig(**settings)})
    client = make_client("b", config, use_cache=False)

    async def no_wait(delay: float) -> None:
        await asyncio.sleep(0)

    client.backbone.sleep = no_wait
    return client


def _watched(stream: bool, ask: Callable[[], Awaitable[Any]]) -> tuple[Any, list]:
    """(what `ask()` returned, or the LLMCallError it raised; the events emitted), the tokens watched when `stream`."""
    seen: list = []

    async def run():
        token, watched = EVENT_SINK.set(seen.append), TOKENS_WATCHED.set(stream)
        try:
            return await ask()
        except LLMCallError as e:
            return e
        finally:
            TOKENS_WATCHED.reset(watched)
            EVENT_SINK.reset(token)

    return asyncio.run(run()), seen


def _ask(client, stream: bool, **kwargs: Any) -> tuple[Any, list]:
    """(the result or the LLMCallError, the events emitted), the tokens watched when `stream`."""
    return _watched(stream, lambda: client.complete(ASK, purpose="test", stream=stream, **kwargs))


def _record(event: LLMCallFinished) -> dict[str, Any]:
    """An event without what differs between any two calls (its id and how long it took)."""
    fields = event.model_dump() if hasattr(event, "model_dump") else dict(vars(event))
    fields.pop("call_id", None)
    fields.pop("latency_s", None)
    fields.pop("ts", None)
    fields.pop("timestamp", None)
    fields.pop("at", None)
    if fields.get("error"):
        fields["error"] = re.sub(r"gave up after [\d.]+ s", "gave up after T s", fields["error"])
    return fields


def _both(server: FakeLLMServer, tmp_path: Path, script: dict[str, Any], stream: bool,
          model: str = "openai/fake-model", settings: dict[str, Any] | None = None, **kwargs: Any):
    """The same call on each path, each backbone with `settings`: [(result or error, events, server bodies, user
    agents, client)] for direct, then LiteLLM."""
    out = []
    for direct in (True, False):
        server.script(**script)
        client_module._backbones.clear()  # each path its own backbone, so each its own adaptive limit
        before = len(server.requests)
        client = _client(server, tmp_path / ("direct" if direct else "litellm"), direct, model=model,
                         **(settings or {}))
        result, events = _ask(client, stream, **kwargs)
        agents = {h.get("User-Agent", "") for h in server.headers[before:]}
        out.append((result, events, server.requests[before:], agents, client))
    return out


CASES = {
    "ok": {"responder": lambda body: "Paris is the capital of France."},
    "thinking": {"responder": lambda body: Reply("Paris.", reasoning_content="The capital is Paris.")},
    "think-tags": {"responder": lambda body: "<think>It is Paris.</think>\n\nParis."},
    "cut": {"responder": lambda body: Reply("Par", finish_reason="length")},
    "cut-named-otherwise": {"responder": lambda body: Reply("Par", finish_reason="max_tokens")},  # LiteLLM maps it
    "ended-named-otherwise": {"responder": lambda body: Reply("Paris.", finish_reason="eos")},
    "empty": {"faults": ["empty"]},
    "no-choices": {"faults": ["no-choices"]},
    "no-message": {"faults": ["no-message"]},
    "content-number": {"faults": ["content-number"]},
    "content-object": {"faults": ["content-object"]},
    "garbage": {"faults": ["garbage"] * 4},
    "401": {"faults": ["401"]},
    "400-echo": {"faults": ["400-echo"]},
    "400-echo-part": {"faults": ["400-echo-part"]},
    "429-then-ok": {"faults": ["429", Fault("429-retry-after", retry_after=0.01), "ok"]},
    "5xx-and-drops": {"faults": ["500", "503", "drop", "drop"]},
    "refused-option": {"refuse": ["seed"]},
    # HTTP 200, then an error object (a body without choices; a stream's first chunk, or one after some text)
    "error-in-200": {"responder": lambda body: PARIS, "faults": ["error-200"] * 3},
    "error-in-200-then-ok": {"responder": lambda body: PARIS, "faults": ["error-200"]},
    "error-as-text": {"faults": [Fault("error-200", error="upstream failed")] * 3},
    "error-mid-stream": {"responder": lambda body: PARIS, "faults": ["error-mid-stream"] * 3},
    # a stream that ends in order, mid-answer, with no finish_reason and no [DONE]: not an answer, asked again
    "ended-mid-stream": {"responder": lambda body: PARIS, "faults": ["end-mid-stream"] * 3},
    "ended-mid-stream-then-ok": {"responder": lambda body: PARIS, "faults": ["end-mid-stream"]},
    "error-mid-stream-then-ok": {"responder": lambda body: PARIS, "faults": ["error-mid-stream"]},
    "error-after-thinking": {"responder": lambda body: Reply(PARIS, reasoning_content="The capital is Paris."),
                             "faults": ["error-mid-stream"] * 3},
    "error-mid-stream-client": {"responder": lambda body: PARIS, "faults": [Fault("error-mid-stream", error={
        "message": "prompt too long (fake LLM server)", "type": "BadRequestError", "code": 400})]},
    "error-mid-stream-429-then-ok": {"responder": lambda body: PARIS, "faults": [Fault("error-mid-stream", error={
        "message": "slow down (fake LLM server)", "type": "rate_limit_exceeded", "code": 429}), "ok"]},
    "error-mid-stream-code-text": {"responder": lambda body: PARIS, "faults": [Fault("error-mid-stream", error={
        "message": "overloaded (fake LLM server)", "type": "server_error", "code": "overloaded"})] * 3},
}


PROVIDERS = ["openai", "hosted_vllm"]
"""The providers posted straight to an `api_base` (`direct.PROVIDERS`), each compared with LiteLLM's path."""


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("provider", PROVIDERS)
def test_both_paths_send_the_same_request_and_end_the_same_way(llm_server, tmp_path, provider, case, stream):
    (mine, my_events, my_bodies, my_agents, my_client), (theirs, their_events, their_bodies, their_agents,
                                                         their_client) = _both(
        llm_server, tmp_path, CASES[case], stream, model=f"{provider}/fake-model")
    assert my_agents == {"qatui"} and all(a.startswith("litellm/") for a in their_agents)  # each took its path
    assert my_bodies == their_bodies  # the same requests, retries included
    assert type(mine) is type(theirs)
    if isinstance(mine, LLMCallError):
        same = lambda text: re.sub(r"gave up after [\d.]+ s", "gave up after T s", text)  # noqa: E731
        assert same(str(mine)) == same(str(theirs))
        assert (mine.attempts, mine.transient, mine.thinking) == (theirs.attempts, theirs.transient, theirs.thinking)
        assert KEY not in str(mine) and KEY[:12] not in str(mine)
    else:
        assert (mine.text, mine.data, mine.logprobs) == (theirs.text, theirs.data, theirs.logprobs)
        kept = lambda client, result: client.cache.get(result.event.prompt_hash)  # noqa: E731
        assert kept(my_client, mine) == kept(their_client, theirs)  # finish reason as LiteLLM names it, usage, cost
    finished = lambda events: [_record(e) for e in events if isinstance(e, LLMCallFinished)]  # noqa: E731
    assert finished(my_events) == finished(their_events)
    tokens = lambda events: [e.text for e in events if isinstance(e, LLMToken)]  # noqa: E731
    assert tokens(my_events) == tokens(their_events)
    assert stream or not tokens(my_events)
    paced = lambda client: (lambda p: (p.limit, p.rate_limited, p.timeouts))(client.backbone.pace.pace())  # noqa: E731
    assert paced(my_client) == paced(their_client)  # the adaptive limit saw the same 429s and timeouts


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_a_200_whose_error_object_has_a_word_for_its_code_is_asked_again_then_failed(llm_server, tmp_path, stream):
    """`{"error": {"code": "overloaded"}}` in a 200: LiteLLM names it a 500 when streamed, a bare APIError with the word
    as its status when not; either way a server-side failure, asked again up to the attempts, then failed (never an
    answer), on both paths alike."""
    for result, _events, bodies, _agents, _client_used in _both(llm_server, tmp_path, CASES["error-mid-stream-code-text"],
                                                               stream):
        assert isinstance(result, LLMCallError) and result.transient, result
        assert result.attempts == 3 and len(bodies) == 3, (result.attempts, len(bodies))
        assert "overloaded" in str(result)


def test_a_schema_answer_gives_the_same_cache_entry_and_a_litellm_cache_is_a_full_hit(llm_server, tmp_path):
    llm_server.script(lambda body: json.dumps({"city": "Paris"}))
    folder = tmp_path / "cache"
    old = _client(llm_server, folder, direct=False)
    first, _ = _ask(old, False, schema=Capital)
    entry = old.cache.get(first.event.prompt_hash)
    client_module._backbones.clear()
    new = _client(llm_server, folder, direct=True)
    new.use_cache = True
    before = llm_server.n_requests
    again, _ = _ask(new, False, schema=Capital)
    assert again.event.cached and llm_server.n_requests == before  # the entry LiteLLM's path wrote answers it
    assert again.data == first.data == Capital(city="Paris")
    assert again.event.prompt_hash == first.event.prompt_hash
    fresh = _client(llm_server, tmp_path / "other", direct=True)
    mine, _ = _ask(fresh, False, schema=Capital)
    assert not mine.event.cached and mine.event.prompt_hash == first.event.prompt_hash
    assert fresh.cache.get(mine.event.prompt_hash) == entry  # stored alike


def test_the_off_switch_keeps_litellm_and_a_wrong_value_is_refused(llm_server, tmp_path, capsys):
    llm_server.script(lambda body: "OK")
    for direct, agent in ((True, "qatui"), (False, "litellm/")):
        before = len(llm_server.headers)
        _ask(_client(llm_server, tmp_path / str(direct), direct), False)
        assert llm_server.headers[before]["User-Agent"].startswith(agent)
    from qatui.cli import main

    config = tmp_path / "c.toml"
    config.write_text('[backbones.b]\nmodel = "openai/fake-model"\napi_base = "http://127.0.0.1:9/v1"\n'
                      'direct_http = "no"\n')
    assert main(["--config", str(config), "models"]) == 2
    err = capsys.readouterr().err
    assert "direct_http" in err and "Traceback" not in err and len(err.strip().splitlines()) <= 2


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_message_that_is_not_plain_text_goes_through_litellm(llm_server, tmp_path, provider):
    """LiteLLM may rewrite content parts, or an assistant message's thinking (`hosted_vllm` drops it); such a
    request is left to it."""
    llm_server.script(lambda body: "OK")
    client = _client(llm_server, tmp_path, True, model=f"{provider}/fake-model")
    parts = [{"role": "user", "content": [{"type": "text", "text": "What is the capital of France?"}]}]
    thought = [*ASK, {"role": "assistant", "content": "Lyon.", "reasoning_content": None}, *ASK]
    for messages, agent in ((ASK, "qatui"), (parts, "litellm/"), (thought, "litellm/")):
        before = len(llm_server.headers)
        assert asyncio.run(client.complete(messages, purpose="test", stream=False)).text == "OK"
        assert llm_server.headers[before]["User-Agent"].startswith(agent)


@pytest.mark.parametrize(("provider", "variable", "otherwise"), [
    ("openai", "OPENAI_API_KEY", None), ("hosted_vllm", "HOSTED_VLLM_API_KEY", "fake-api-key")])
def test_without_a_key_variable_both_paths_send_the_providers_key_or_its_default(llm_server, tmp_path, monkeypatch,
                                                                                  provider, variable, otherwise):
    llm_server.script(lambda body: "OK")
    for name in ("OPENAI_API_KEY", "HOSTED_VLLM_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY" if provider != "openai" else "HOSTED_VLLM_API_KEY", "sk-another-providers")
    for value in ("sk-from-the-environment-42", None):
        if value is None:
            monkeypatch.delenv(variable, raising=False)
        else:
            monkeypatch.setenv(variable, value)
        sent = []
        for direct in (True, False):
            before = len(llm_server.headers)
            _ask(_client(llm_server, tmp_path / f"{direct}{value}", direct, model=f"{provider}/fake-model",
                         api_key_env=None), False)
            sent.append((llm_server.headers[before].get("Authorization"), llm_server.headers[before]["User-Agent"][:5]))
        expected = value or otherwise
        assert sent == [(f"Bearer {expected}" if expected else None, "qatui"), (sent[1][0], "litel")]
        assert sent[0][0] == sent[1][0]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_priced_model_costs_what_litellm_prices_its_usage(tmp_path, monkeypatch, provider):
    from qatui.llm._lazy import get_litellm

    with FakeLLMServer(lambda body: "Paris is the capital.", model="gpt-4o-mini",
                       usage=lambda body, text: (1200, 37), max_lifetime_s=60) as server:
        costs = []
        for direct in (True, False):
            client = _client(server, tmp_path / str(direct), direct, model=f"{provider}/gpt-4o-mini")
            result, _ = _ask(client, False)
            costs.append(result.event.cost_usd)
        streamed, _ = _ask(_client(server, tmp_path / "s", True, model=f"{provider}/gpt-4o-mini"), True)
    ll = get_litellm()
    assert costs[0] == costs[1] == streamed.event.cost_usd
    if provider == "hosted_vllm":  # LiteLLM's map prices no hosted_vllm/ model: a server's own model costs nothing
        assert costs[0] == 0.0
        return
    prompt_cost, completion_cost = ll.cost_per_token(model="gpt-4o-mini", prompt_tokens=1200, completion_tokens=37)
    assert costs[0] > 0 and costs[0] == pytest.approx(prompt_cost + completion_cost, rel=1e-12)


def test_a_refused_connection_fails_alike_on_both_paths(llm_server, tmp_path):
    import socket

    with socket.socket() as probe:  # a port nothing listens on: bound, then closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    errors = []
    for direct in (True, False):
        client = _client(llm_server, tmp_path / str(direct), direct, api_base=f"http://127.0.0.1:{port}/v1",
                         max_attempts=2)
        error, _ = _ask(client, False)
        assert isinstance(error, LLMCallError) and error.transient
        errors.append((re.sub(r"gave up after [\d.]+ s", "", str(error)), error.attempts, type(error.__cause__)))
    assert errors[0] == errors[1] and "connection failed 2 times" in errors[0][0] and "111" in errors[0][0]


# -- log-probabilities (G-Eval's rating call) ----------------------------------------------------

RATING = '{"score": "[[4]]"}'
LOGPROB_CASES = {
    "generated": Reply(RATING),  # the server's own: a token per digit, 5 alternatives each
    "top-null": Reply(RATING, logprobs={"content": [{"token": t, "logprob": -0.1, "top_logprobs": None}
                                                    for t in ('{"score": "[[', "4", ']]"}')]}),
    "none-returned": Reply(RATING, logprobs=None),  # a provider that ignores the option
    "infinite": Reply(RATING, logprobs={"content": [
        {"token": '{"score": "[[', "logprob": 0, "top_logprobs": []},
        {"token": "4", "logprob": float("-inf"), "top_logprobs": [{"token": "4", "logprob": float("-inf")},
                                                                   {"token": "5", "logprob": -2}]},
        {"token": ']]"}', "logprob": -0.5, "top_logprobs": []}]}),
    "number-as-text": Reply(RATING, logprobs={"content": [  # LiteLLM's types coerce it
        {"token": '{"score": "[[', "logprob": "-0.25", "top_logprobs": []},
        {"token": "4", "logprob": True, "top_logprobs": [{"token": "3", "logprob": "-1.5"}]},
        {"token": ']]"}', "logprob": -0.5, "top_logprobs": [], "bytes": [93, 93, 34, 125]}]}),
    "token-not-text": Reply(RATING, logprobs={"content": [{"token": 4, "logprob": -0.1, "top_logprobs": []}]}),
    "no-alternatives-key": Reply(RATING, logprobs={"content": [{"token": "4", "logprob": -0.1}]}),
    "content-not-a-list": Reply(RATING, logprobs={"content": "4"}),
}


def _rate(client, stream: bool) -> tuple[Any, list]:
    """G-Eval's rating call (`geval._rate`'s `ask_bracketed`, asking top-5 log-probabilities): (the Bracketed or
    the LLMCallError, the events), the tokens watched when `stream`."""
    from qatui.judges.baselines.geval import RATING_TOKENS, TOP_LOGPROBS, Rating
    from qatui.judges.brackets import ask_bracketed, read_whole
    from qatui.judges.prompts import load_prompts

    reask = load_prompts("geval", "en")["rate"]["reask"]
    return _watched(stream, lambda: ask_bracketed(
        client, ASK, lambda text: read_whole(text, 1, 5), purpose="geval:rate", schema=Rating, reask=reask,
        temperature=1.0, max_tokens=RATING_TOKENS, logprobs=TOP_LOGPROBS, sample=0))


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("case", list(LOGPROB_CASES))
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_rating_weighed_by_logprobs_is_the_same_on_both_paths(llm_server, tmp_path, provider, case, stream):
    from qatui.judges.baselines.geval_scoring import digit_probabilities

    outcomes = []
    for direct in (True, False):
        llm_server.script(lambda body: LOGPROB_CASES[case])
        client_module._backbones.clear()
        before = len(llm_server.requests)
        client = _client(llm_server, tmp_path / str(direct), direct, model=f"{provider}/fake-model")
        assert client.supports_logprobs()
        rated, events = _rate(client, stream)
        agents = {h.get("User-Agent", "") for h in llm_server.headers[before:]}
        outcomes.append((rated, events, llm_server.requests[before:], agents, client))
    (mine, my_events, my_bodies, my_agents, my_client), (theirs, their_events, their_bodies, their_agents,
                                                         their_client) = outcomes
    assert my_agents == {"qatui"} and all(a.startswith("litellm/") for a in their_agents)
    assert my_bodies == their_bodies and my_bodies[0]["logprobs"] is True and my_bodies[0]["top_logprobs"] == 5
    assert not any(body.get("stream") for body in my_bodies)  # a call asking for logprobs is never streamed
    assert type(mine) is type(theirs)
    if isinstance(mine, LLMCallError):
        assert str(mine) == str(theirs) and case in ("token-not-text", "no-alternatives-key", "content-not-a-list")
    else:
        assert (mine.raw, mine.value, mine.reasked) == (theirs.raw, theirs.value, theirs.reasked) == (RATING, 4, False)
        assert mine.result.logprobs == theirs.result.logprobs
        weights = digit_probabilities(mine.result.logprobs)
        assert weights == digit_probabilities(theirs.result.logprobs)
        assert (weights is None) == (case == "none-returned")
        kept = lambda client, got: client.cache.get(got.result.event.prompt_hash)  # noqa: E731
        assert kept(my_client, mine) == kept(their_client, theirs)
        assert ("logprobs" in kept(my_client, mine)) == (case != "none-returned")
    finished = lambda events: [_record(e) for e in events if isinstance(e, LLMCallFinished)]  # noqa: E731
    assert finished(my_events) == finished(their_events)
    assert not [e for e in my_events + their_events if isinstance(e, LLMToken)]


def test_the_generated_logprobs_weigh_the_rating_digit(llm_server, tmp_path):
    """The server's log-probabilities reach G-Eval's reader: the digit's own token, its neighbours as alternatives."""
    from qatui.judges.baselines.geval_scoring import digit_probabilities

    llm_server.script(lambda body: LOGPROB_CASES["generated"])
    rated, _ = _rate(_client(llm_server, tmp_path, True), False)
    weights = digit_probabilities(rated.result.logprobs)
    assert set(weights) == {"2", "3", "4", "5"} and max(weights, key=weights.get) == "4"
    assert weights["3"] > weights["5"] > weights["2"]  # the server ranks nearer digits first, lower first on a tie


@pytest.mark.parametrize("case", ["generated", "number-as-text", "token-not-text"])
def test_a_stream_carrying_logprobs_ends_alike_on_both_paths(llm_server, tmp_path, case):
    """A streamed call whose chunks carry log-probabilities (the server sends them, one token a chunk): LiteLLM's
    stream builder drops them and refuses a chunk its types cannot read; the direct path does the same."""
    outcomes = []
    for direct in (True, False):
        llm_server.script(lambda body: LOGPROB_CASES[case])
        client_module._backbones.clear()
        client = _client(llm_server, tmp_path / str(direct), direct, max_attempts=1)
        request = client.build_request(ASK, logprobs=5)
        seen: list = []

        async def run(client=client, request=request, seen=seen):
            token, watched = EVENT_SINK.set(seen.append), TOKENS_WATCHED.set(True)
            try:
                answer, event, found = await client._call(request, purpose="test", stream=True)
                return answer, found, client.cache.get(event.prompt_hash)
            except LLMCallError as e:
                return re.sub(r"gave up after [\d.]+ s", "", str(e))
            finally:
                TOKENS_WATCHED.reset(watched)
                EVENT_SINK.reset(token)

        got = asyncio.run(run())
        outcomes.append((got, [_record(e) for e in seen if isinstance(e, LLMCallFinished)],
                         [e.text for e in seen if isinstance(e, LLMToken)], llm_server.requests[-1]))
    assert outcomes[0] == outcomes[1]
    got, _, tokens, body = outcomes[0]
    assert body["stream"] is True and body["logprobs"] is True
    if case == "token-not-text":
        assert "Error parsing chunk" in got
    else:
        assert got[1] is None and "logprobs" not in got[2] and "".join(tokens) == RATING


@pytest.mark.parametrize(("provider", "settings", "path"), [
    ("hosted_vllm", {"reasoning_effort": "low"}, "qatui"),  # sent as it is
    ("hosted_vllm", {"thinking_budget": 2048}, "litellm/"),  # LiteLLM sends a reasoning_effort for it
    ("openai", {"reasoning_effort": "low"}, "qatui"),
    ("openai", {}, "qatui"),
])
def test_an_option_litellm_rewrites_keeps_the_request_on_litellms_path(llm_server, tmp_path, provider, settings, path):
    """Which path a request takes is LiteLLM's own mapping of its options (`direct.takes`): the same request reaches
    the server either way."""
    (mine, _, my_bodies, my_agents, _), (theirs, _, their_bodies, _, _) = _both(
        llm_server, tmp_path, PARIS_SCRIPT, False, model=f"{provider}/fake-model", settings=settings)
    assert mine.text == theirs.text == "Paris." and my_bodies == their_bodies
    assert my_agents and all(agent.startswith(path) for agent in my_agents)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_api_base_naming_the_endpoint_is_posted_to_as_it_is(llm_server, tmp_path, provider):
    """LiteLLM posts to an api_base that already ends in chat/completions as it is; so does the direct path."""
    for result, _, bodies, _, _ in _both(llm_server, tmp_path, PARIS_SCRIPT, False, model=f"{provider}/fake-model",
                                         settings={"api_base": f"{llm_server.base_url}/chat/completions"}):
        assert not isinstance(result, LLMCallError), result
        assert result.text == "Paris." and len(bodies) == 1


def test_an_option_litellm_drops_is_left_to_litellm(llm_server, tmp_path):
    """`openai/` drops `thinking` (drop_params): the direct path would post it, so such a request goes through
    LiteLLM and the server gets the same body either way (qatui's own requests leave it out beforehand)."""
    llm_server.script(lambda body: "Paris.")
    bodies = []
    for direct in (True, False):
        client = _client(llm_server, tmp_path / str(direct), direct)
        request = {**client.build_request(ASK), "thinking": {"type": "enabled", "budget_tokens": 1024}}
        before = len(llm_server.requests)
        answer, _, _ = asyncio.run(client._call(request, purpose="test", stream=False))
        assert answer.text == "Paris." and llm_server.headers[before]["User-Agent"].startswith("litellm/")
        bodies.append(llm_server.requests[before:])
    assert bodies[0] == bodies[1] and "thinking" not in bodies[0][0]


@pytest.mark.parametrize(("provider", "variables"), [
    ("openai", {"OPENAI_BASE_URL": "{base}", "OPENAI_API_BASE": "http://127.0.0.1:9/v1"}),  # the first set wins
    ("openai", {"OPENAI_API_BASE": "{base}"}),
    ("hosted_vllm", {"HOSTED_VLLM_API_BASE": "{base}"}),
])
def test_an_endpoint_named_by_the_providers_variable_is_asked_directly_alike(llm_server, tmp_path, monkeypatch,
                                                                              provider, variables):
    """A backbone without `api_base` whose provider's variable names an endpoint: posted straight to it, as LiteLLM
    would post it; with the variable unset, the call is LiteLLM's (its default endpoint, not asked here)."""
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "HOSTED_VLLM_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value.format(base=llm_server.base_url))
    (mine, my_events, my_bodies, my_agents, _), (theirs, their_events, their_bodies, their_agents, _) = _both(
        llm_server, tmp_path, PARIS_SCRIPT, False, model=f"{provider}/fake-model", settings={"api_base": None})
    assert not isinstance(mine, LLMCallError) and not isinstance(theirs, LLMCallError), (mine, theirs)
    assert my_agents == {"qatui"} and their_agents and all(a.startswith("litellm/") for a in their_agents)
    assert (mine.text, my_bodies, [_record(e) for e in my_events]) == (
        theirs.text, their_bodies, [_record(e) for e in their_events])
    for name in variables:
        monkeypatch.delenv(name)
    from qatui.llm.direct import eligible

    assert not eligible(_client(llm_server, tmp_path / "none", True, model=f"{provider}/fake-model",
                                api_base=None).settings)


# -- a server that fails after answering 200 -----------------------------------------------------

VERDICT = json.dumps({"rationale": "Both checked.", "choice": "A"})


@pytest.mark.parametrize("direct", [True, False], ids=["direct", "litellm"])
def test_a_verdict_streamed_before_the_servers_error_chunk_is_never_scored(llm_server, tmp_path, direct):
    """The TUI's streamed run: for one item the server streams a whole verdict, then an error chunk (a 200 stream
    that fails while generating). Its calls are retried, recorded as failed, kept out of the cache, and the item is
    failed, never scored; the other item is scored."""
    from qatui.data.model import Item
    from qatui.engine.runner import Engine
    from qatui.events import ItemFailed, Verdict
    from qatui.judges.registry import make_judge
    from qatui.judges.resources import Resources

    failing = "Why is the sea salty?"
    poisoned = lambda body: failing in json.dumps(body["messages"])  # noqa: E731
    llm_server.script(lambda body: VERDICT + " And a long afterthought." * 6 if poisoned(body) else VERDICT,
                      faults=lambda index, body: "error-mid-stream" if poisoned(body) else "ok")
    client = _client(llm_server, tmp_path, direct, max_attempts=2)
    judge = make_judge("pairwise", {}, Resources(Config(), llm=client))
    items = [Item(id="sky", question="Why is the sky blue?", candidates={"a": "Scattering.", "b": "The sea."}),
             Item(id="sea", question=failing, candidates={"a": "Dissolved minerals.", "b": "Fish."})]

    async def run() -> list:
        return [e async for e in Engine(items, [judge], seed=0, concurrency=1, watch_tokens=True).run()]

    events = asyncio.run(run())
    assert {e.item_id for e in events if isinstance(e, Verdict)} == {"sky"}
    [failed] = [e for e in events if isinstance(e, ItemFailed)]
    assert failed.item_id == "sea" and "server error (500) 2 times" in failed.reason
    sea_calls = [e for e in events if isinstance(e, LLMCallFinished) and e.item_id == "sea"]
    assert sea_calls and not any(call.ok for call in sea_calls) and all(call.attempts == 2 for call in sea_calls)
    assert all(client.cache.get(call.prompt_hash) is None for call in sea_calls)  # no answer kept to be read later
    assert any(VERDICT[:8] in e.text for e in events if isinstance(e, LLMToken) and e.item_id == "sea")  # it streamed
    assert all(body.get("stream") for body in llm_server.requests)
    assert {h["User-Agent"][:5] for h in llm_server.headers} == {"qatui" if direct else "litel"}
