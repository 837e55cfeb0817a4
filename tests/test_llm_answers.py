"""A reply is read as an answer only when it is one: never its thinking, never a cut-off text, never a broken reply.

Over real HTTP (tests/llm_server.py through LiteLLM and qatui's client): a reasoning draft
(`<think>…</think>` anywhere, an unclosed one cut off at max_tokens, `reasoning_content`) is
kept apart as thinking and never read as the verdict; an answer cut off (`finish_reason`
"length") or only thinking fails its call with the reason, and its item is failed, never
scored. Replies that are no chat completion (no choices, no message, a content that is a
number or an object) and dropped connections are named for what they are.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path

import pytest
from fakes import is_preflight
from llm_server import FakeLLMServer, Reply
from tui_support import write_sums

from qatui.cli import main
from qatui.config import BackboneConfig, CacheConfig, Config
from qatui.events import EVENT_SINK, TOKENS_WATCHED, LLMCallFinished
from qatui.llm import client as client_module
from qatui.llm.client import make_client
from qatui.llm.errors import LLMCallError
from qatui.llm.fence import block_texts
from qatui.llm.preflight import apreflight_backbone
from qatui.store.session import SessionStore

ASK = [{"role": "user", "content": "Which is right?"}]
DRAFT = 'Draft: maybe the second one. {"choice": "B"} [[B]] [[0.00]]'
"""What a draft thinks before it settles: a verdict of the wrong side in every form a judge reads."""
QUOTING = '{"choice": "A", "note": "the answer says </think> {\\"choice\\": \\"B\\"}"}'
"""An answer whose own verdict comes first, then quotes a candidate holding a closing tag and a verdict."""


@pytest.fixture(autouse=True)
def _fresh_backbones():
    client_module._backbones.clear()
    yield
    client_module._backbones.clear()


def _client(server: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **settings):
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    config = Config(cache=CacheConfig(dir=str(tmp_path / "cache")), backbones={"fake": BackboneConfig(
        model="openai/fake-model", api_base=server.base_url, api_key_env="FAKE_KEY", max_attempts=2, **settings)})
    client = make_client("fake", config)
    client.backbone.base_delay_s = 0.01
    return client


async def _ask(client, *, stream: bool) -> tuple[object, list[LLMCallFinished]]:
    """One call (streamed or not); (its result or the LLMCallError raised, the calls it recorded)."""
    calls: list = []
    sink, watched = EVENT_SINK.set(calls.append), TOKENS_WATCHED.set(stream)
    try:
        return await client.complete(ASK, purpose="test"), calls
    except LLMCallError as e:
        return e, calls
    finally:
        EVENT_SINK.reset(sink)
        TOKENS_WATCHED.reset(watched)


READ = [  # (what the model sent, the answer read, the thinking kept)
    (Reply(f"\n<think>{DRAFT}</think>\nA"), "A", DRAFT),
    (Reply(f"A first. <think>{DRAFT}</think> Then: A"), "A first.  Then: A", DRAFT),
    (Reply(f"<thinking>{DRAFT}</thinking><think>more</think>A"), "A", f"{DRAFT}\n\nmore"),
    (Reply("Maybe the second one.</think>\nA"), "A", "Maybe the second one."),  # the opening tag: the template's
    (Reply("A", reasoning_content=DRAFT), "A", DRAFT),
    (Reply(QUOTING), QUOTING, ""),  # a closing tag quoted inside the answer cuts nothing
]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(("sent", "answer", "thinking"), READ, ids=["after-newline", "middle", "two-tags", "stray-close",
                                                                     "reasoning-content", "quoted-close"])
async def test_thinking_is_kept_apart_and_never_the_answer(llm_server, tmp_path, monkeypatch, stream, sent, answer,
                                                           thinking) -> None:
    llm_server.script(lambda body: sent)
    result, calls = await _ask(_client(llm_server, tmp_path, monkeypatch), stream=stream)
    assert not isinstance(result, LLMCallError), result
    assert (result.text, calls[-1].response, calls[-1].thinking) == (answer, answer, thinking)
    cached = client_module.CallCache(tmp_path / "cache").get(calls[-1].prompt_hash)
    assert (cached["text"], cached.get("thinking", "")) == (answer, thinking)  # the call record keeps both


UNUSABLE = [  # (what the model sent, the reason the call fails with)
    (Reply(f"<think>{DRAFT} and so", finish_reason="length"), "cut off at max_tokens (1024) while thinking"),
    (Reply(f"\n<think>{DRAFT}</think>\n"), "the answer was only thinking"),
    (Reply("", reasoning_content=DRAFT), "the answer was only thinking"),
    (Reply('{"rationale": "the second is right", "choice": "B', finish_reason="length"),
     "answer cut off at max_tokens (1024)"),
    (Reply(f"<think>{DRAFT}"), "the answer ended inside its thinking"),
]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(("sent", "reason"), UNUSABLE, ids=["cut-thinking", "think-only", "reasoning-only",
                                                             "cut-answer", "unclosed"])
async def test_a_cut_off_or_thinking_only_reply_fails_its_call_with_the_reason(llm_server, tmp_path, monkeypatch,
                                                                               stream, sent, reason) -> None:
    llm_server.script(lambda body: sent)
    client = _client(llm_server, tmp_path, monkeypatch)
    result, calls = await _ask(client, stream=stream)
    assert isinstance(result, LLMCallError) and reason in str(result), result
    assert len(llm_server.requests) == 1  # not retried: the same request would be cut the same way
    assert not calls[-1].ok and reason in calls[-1].error and calls[-1].completion_tokens > 0  # counted, paid for
    if "<think>" in sent.text or sent.reasoning_content:
        assert DRAFT in calls[-1].thinking  # the draft is kept on the call's record, as thinking
    assert client.cache.get(calls[-1].prompt_hash) is None  # never a cached answer: a resume asks again


BROKEN = [  # (fault, streamed?, the reason)
    ("no-choices", False, "the provider returned no choices"),
    ("no-choices", True, "the provider returned no choices"),
    ("no-message", False, "the provider's reply is no chat completion"),
    ("content-number", False, "message content: input should be a valid string, got int"),
    ("content-object", False, "message content: input should be a valid string, got dict"),
    ("garbage", False, "the provider's reply is not JSON: '<html>this is not JSON</html>'"),
]


@pytest.mark.parametrize(("fault", "stream", "reason"), BROKEN, ids=[f"{f}-{'stream' if s else 'whole'}"
                                                                     for f, s, _ in BROKEN])
async def test_a_reply_that_is_no_chat_completion_is_named_counted_and_not_retried(llm_server, tmp_path, monkeypatch,
                                                                                    fault, stream, reason) -> None:
    llm_server.script(faults=[fault] * 3)
    result, calls = await _ask(_client(llm_server, tmp_path, monkeypatch), stream=stream)
    assert isinstance(result, LLMCallError) and reason in str(result), result
    assert "Traceback" not in str(result) and "connection" not in str(result) and "500" not in str(result)
    assert len(calls) == 1 and not calls[0].ok and calls[0].error == str(result)  # one call, counted as failed
    assert len(llm_server.requests) == 1


async def test_a_dropped_connection_is_a_connection_failure_not_a_server_error(llm_server, tmp_path,
                                                                               monkeypatch) -> None:
    llm_server.script(faults=["drop"] * 2)
    result, _ = await _ask(_client(llm_server, tmp_path, monkeypatch), stream=False)
    assert isinstance(result, LLMCallError) and "connection failed 2 times" in str(result), result
    assert "500" not in str(result) and "InternalServerError" not in str(result)


@pytest.mark.parametrize("direct", [True, False], ids=["direct", "litellm"])
async def test_a_stream_that_ends_before_its_answer_finished_is_never_an_answer(llm_server, tmp_path, monkeypatch,
                                                                               direct) -> None:
    """A stream whose body ends in order mid-answer, with no finish_reason and no [DONE] (a proxy that gave up), held
    the start of a draft: it is asked again like a dropped connection, and fails when every attempt ends so. Both
    LiteLLM's stream builder and a plain reading would have called it finished ("stop")."""
    if not direct:
        monkeypatch.setattr(client_module.direct, "takes", lambda *args: False)
    answer = "The better answer is [[A]], although on reflection B is more complete, so [[B]]."
    llm_server.script(lambda body: answer, faults=["end-mid-stream"] * 2)
    result, calls = await _ask(_client(llm_server, tmp_path, monkeypatch), stream=True)
    assert isinstance(result, LLMCallError) and "the stream ended before its answer finished" in str(result), result
    finished = [c for c in calls if isinstance(c, LLMCallFinished)]
    assert len(finished) == 1 and not finished[0].ok and len(llm_server.requests) == 2
    llm_server.script(lambda body: answer, faults=["end-mid-stream"])
    result, calls = await _ask(_client(llm_server, tmp_path / "again", monkeypatch), stream=True)
    assert not isinstance(result, LLMCallError) and result.text == answer, result


async def test_the_preflight_takes_a_cut_off_answer_as_alive_and_refuses_no_choices(llm_server, tmp_path,
                                                                                     monkeypatch) -> None:
    """The 8-token check only asks whether the backbone answers: a reasoning model still thinking at 8 tokens does."""
    client = _client(llm_server, tmp_path, monkeypatch)
    llm_server.script(lambda body: Reply("<think>The user wants", finish_reason="length"))
    status = await apreflight_backbone(client)
    assert "cut off at max_tokens while thinking" in status, status
    llm_server.script(faults=["no-choices"])
    with pytest.raises(Exception, match="did not answer a one-line test request: the provider returned no choices"):
        await apreflight_backbone(client)


# -- end to end: pairwise and pointwise over HTTP, 30% of the answers cut mid-thought or only thinking -------------

N_ITEMS = 40




def _poisoned(i: int) -> str | None:
    """How item `i` is answered: 3 items in 10 never with a usable answer, each way in turn."""
    return ("cut-thinking", "think-only", "cut-answer")[i % 3] if i % 10 < 3 else None


def _reasoning_backbone(body: dict) -> Reply:
    """Drafts the wrong verdict in its thinking, then (for a healthy item) answers the right one."""
    text = "\n".join(str(m["content"]) for m in body["messages"])
    i = int(re.search(r"What is (\d+) plus", text)[1])
    blocks: dict[str, str] = {}
    for message in body["messages"]:
        blocks.update(block_texts(str(message["content"])))
    right = f"It is {2 * i}."
    if "Answer A" in blocks:
        good, bad = ("A", "B") if blocks["Answer A"] == right else ("B", "A")
        answer, wrong = json.dumps({"rationale": "sum checked", "choice": good}), {"choice": bad}
    else:
        good_score = "[[8.00]]" if blocks["Answer"] == right else "[[2.00]]"
        answer = json.dumps({"score": good_score})
        wrong = {"score": "[[2.00]]" if good_score == "[[8.00]]" else "[[9.00]]"}
    draft = f"Let me think. Perhaps {json.dumps(wrong)} — {wrong}"
    kind = _poisoned(i)
    if kind == "cut-thinking":
        return Reply(f"<think>{draft}", finish_reason="length")
    if kind == "think-only":
        return Reply(f"\n<think>{draft}</think>\n")
    if kind == "cut-answer":
        return Reply(f"\n<think>{draft}</think>\n{json.dumps(wrong)[:-2]}", finish_reason="length")
    return Reply(f"\n<think>{draft}</think>\n{answer}")


def test_pairwise_and_pointwise_never_score_a_draft_or_a_cut_answer(llm_server, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    llm_server.script(lambda body: Reply("OK") if is_preflight(body) else _reasoning_backbone(body))
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{llm_server.base_url}"\n'
                      f'api_key_env = "FAKE_KEY"\nmax_concurrency = 8\n[cache]\ndir = "{tmp_path / "cache"}"\n'
                      '[general]\nconcurrency = 8\n')
    sessions = tmp_path / "s"
    code = main(["--config", str(config), "--sessions-dir", str(sessions), "run", str(write_sums(tmp_path / "d.jsonl", N_ITEMS, gold=True)),
                 "--judge", "pairwise", "--judge", "pointwise", "--backbone", "fake", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and "judges" in out, out
    poisoned = {f"q{i}" for i in range(N_ITEMS) if _poisoned(i)}
    session = SessionStore(sessions).open(out["session"])
    results = session.results()
    for judge in ("pairwise", "pointwise"):
        coverage = out["judges"][judge]["coverage"]
        assert (coverage["scored"], coverage["failed"]) == (N_ITEMS - len(poisoned), len(poisoned)), (judge, coverage)
        assert not poisoned & set(session.verdicts(judge))  # never scored
        for item in poisoned:
            reason = results[(item, judge)]["failure"]["reason"]
            assert re.search(r"cut off at max_tokens \(\d+\)|only thinking", reason), (item, judge, reason)
    assert out["judges"]["pairwise"]["metrics"]["accuracy"] == 1.0  # the scored ones read the answer, not the draft
    assert out["judges"]["pointwise"]["metrics"]["accuracy"] == 1.0


# -- a key echoed in part or escaped is masked ---------------------------------------------------------------------

SLASHED_KEY = "sk-test/7f3a9c1e5b2d+4a6f8e0c"


def test_a_key_quoted_in_part_or_escaped_never_reaches_a_failure_reason(llm_server, tmp_path, capsys,
                                                                        monkeypatch) -> None:
    monkeypatch.setenv("FAKE_KEY", SLASHED_KEY)
    llm_server.script(lambda body: "{}", faults=lambda index, body: "ok" if is_preflight(body)
                      else "400-echo-part")
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{llm_server.base_url}"\n'
                      f'api_key_env = "FAKE_KEY"\n[cache]\ndir = "{tmp_path / "cache"}"\n')
    main(["--config", str(config), "--sessions-dir", str(tmp_path / "s"), "run", str(write_sums(tmp_path / "d.jsonl", N_ITEMS, gold=True)),
          "--judge", "pairwise", "--backbone", "fake", "--limit", "2", "--json"])
    out = capsys.readouterr().out
    reasons = [doc["failure"]["reason"] for doc in SessionStore(tmp_path / "s").open(
        json.loads(out)["session"]).results().values()]
    assert reasons and all("request rejected (400)" in r and "Invalid key ***" in r for r in reasons), reasons
    fragments = {SLASHED_KEY[i:i + 6] for i in range(len(SLASHED_KEY) - 5)}
    escaped = "".join(f"\\u{ord(c):04x}" for c in SLASHED_KEY)
    for text in [*reasons, out]:
        assert not any(f in text for f in fragments), text  # no 6 characters of the key in a row
        assert escaped[:36] not in text and escaped[:36].replace("\\", "\\\\") not in text, text


# -- failures of one cause are one line, whatever each took ----------------------------------------------------------

def test_failures_of_one_cause_group_into_one_line_whatever_each_took(llm_server, tmp_path, capsys,
                                                                      monkeypatch) -> None:
    """Every call answered 503: each item gives up after its own jittered backoff, and one line says it."""
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    llm_server.script(faults=lambda index, body: "ok" if is_preflight(body) else "503")
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{llm_server.base_url}"\n'
                      f'api_key_env = "FAKE_KEY"\nmax_attempts = 2\nmax_concurrency = 8\n'
                      f'[cache]\ndir = "{tmp_path / "cache"}"\n[general]\nconcurrency = 8\n')
    base = ["--config", str(config), "--sessions-dir", str(tmp_path / "s")]
    main([*base, "run", str(write_sums(tmp_path / "d.jsonl", N_ITEMS, gold=True)), "--judge", "pairwise", "--backbone", "fake", "--limit",
          "12", "--json"])
    session = json.loads(capsys.readouterr().out)["session"]
    reasons = {doc["failure"]["reason"] for doc in SessionStore(tmp_path / "s").open(session).results().values()}
    assert len(reasons) > 1, reasons  # the seconds differ from item to item (jittered backoff)
    monkeypatch.setenv("COLUMNS", "400")  # one failure line on one line
    main([*base, "sessions", "show", session])
    shown = [line for line in capsys.readouterr().out.splitlines() if line.startswith("failed ")]
    assert len(shown) == 1 and shown[0].startswith("failed 12 items of pairwise"), shown
    assert "service unavailable (503) 2 times, gave up after" in shown[0], shown


# -- the call's timeout holds for reading the answer too -------------------------------------------------------------

async def test_a_huge_answer_is_read_within_the_calls_timeout_without_stalling_the_loop(llm_server, tmp_path,
                                                                                        monkeypatch) -> None:
    """Two million characters of brackets: read off the event loop, in linear time, within the call's timeout."""
    from qatui.judges.pairwise.judge import PairChoice

    brackets, good = "[{" * 1_000_000, json.dumps({"rationale": "checked", "choice": "A"})
    answers = iter([good, brackets, good, brackets])
    llm_server.script(lambda body: next(answers))
    client = _client(llm_server, tmp_path, monkeypatch, timeout_s=5.0)
    TOKENS_WATCHED.set(False)
    await client.complete(ASK, purpose="warm-up")  # LiteLLM imported, the connection open
    loop = asyncio.get_running_loop()
    gaps: list[float] = []
    done = asyncio.Event()

    async def tick() -> None:
        last = loop.time()
        while not done.is_set():
            await asyncio.sleep(0.02)
            gaps.append(loop.time() - last)
            last = loop.time()

    ticker = asyncio.create_task(tick())
    started = time.perf_counter()
    try:
        result = await client.complete(ASK, purpose="pair", schema=PairChoice)  # unreadable, then re-asked
    finally:
        done.set()
        await ticker
    assert result.data == PairChoice(rationale="checked", choice="A")
    took = time.perf_counter() - started
    assert took < 2 * 5.0, took  # two calls, each in its timeout
    assert max(gaps) < 1.0, max(gaps)  # the loop was never held by the parse
    # now far too short to fetch and read it (a twentieth of what this machine just took for it and the
    # re-ask, so a fast machine and a loaded one alike): the call fails in time, with the reason
    timeout = client.backbone.timeout_s = round(max(0.005, took / 20), 3)
    started = time.perf_counter()
    with pytest.raises(LLMCallError, match=rf"took longer than the call's timeout \({timeout:g} s\)|"
                                            rf"timed out after {timeout:g} s"):
        await client.complete(ASK, purpose="pair", schema=PairChoice)
    assert time.perf_counter() - started < 3.0


async def test_a_text_that_is_no_verdict_may_be_kept_cut_off_but_never_a_cut_thought(llm_server, tmp_path,
                                                                                    monkeypatch) -> None:
    """G-Eval's evaluation steps (`cut_text_ok`): a list cut at max_tokens is kept; a thought cut off is not."""
    from qatui.judges.pairwise.judge import PairChoice

    client = _client(llm_server, tmp_path, monkeypatch)
    llm_server.script(lambda body: Reply("<think>planning</think>\n1. Read the answer.\n2. Compare it with",
                                         finish_reason="length"))
    steps = await client.complete(ASK, purpose="steps", cut_text_ok=True, stream=False)
    assert steps.text == "1. Read the answer.\n2. Compare it with" and steps.event.thinking == "planning"
    with pytest.raises(LLMCallError, match=r"answer cut off at max_tokens \(1024\)"):  # a verdict: never
        await client.complete(ASK, purpose="pair", schema=PairChoice, cut_text_ok=True, stream=False)
    llm_server.script(lambda body: Reply("<think>1. Read the answer. 2. Compare", finish_reason="length"))
    with pytest.raises(LLMCallError, match="cut off at max_tokens \\(1024\\) while thinking"):
        await client.complete([{"role": "user", "content": "Write the steps."}], purpose="steps", cut_text_ok=True,
                              stream=False)


async def test_a_verdict_giving_its_choice_twice_is_asked_again_and_never_read(llm_server, tmp_path,
                                                                              monkeypatch) -> None:
    """Over HTTP, a pairwise answer `{"choice": "A", "choice": "B"}` was read as B (JSON keeps the last value). The
    client re-asks once, telling the model why; the answer it then gives is the verdict, and a second such answer
    fails the call, never scored."""
    from qatui.judges.pairwise.judge import PairChoice
    from qatui.llm.errors import ParseError

    twice = '{"rationale": "Both state the fact.", "choice": "A", "choice": "B"}'
    answers = iter([twice, '{"rationale": "A states the fact.", "choice": "A"}'])
    llm_server.script(lambda body: next(answers))
    client = _client(llm_server, tmp_path, monkeypatch)
    EVENT_SINK.set(lambda event: None)
    result = await client.complete(ASK, purpose="test", schema=PairChoice)
    assert result.data.choice == "A" and len(llm_server.requests) == 2
    assert "two different values" in json.dumps(llm_server.requests[1]["messages"])  # why it was asked again
    llm_server.script(lambda body: twice)
    with pytest.raises(ParseError, match="the key 'choice' two different values"):
        await client.complete([{"role": "user", "content": "And this pair?"}], purpose="test", schema=PairChoice)
