"""What a served embedder's requests cost, recorded as a backbone's calls are: on the item's result, in the
session's total (`sessions show --json`), and counted by `--max-cost`.

Against the loopback server (tests/llm_server.py), whose `/v1/embeddings` answers `usage.prompt_tokens`, with an
embedding model LiteLLM's price map holds (`openai/text-embedding-3-small`, sent to loopback by `api_base`). The
expected cost is LiteLLM's own price for the tokens the server reported, never a formula of ours.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from llm_server import FakeLLMServer, count_tokens

from qatui import extras
from qatui.config import parse_config
from qatui.embed.remote import PROBE_TEXT
from qatui.judges import resources as resources_module
from qatui.judges.resources import Resources
from qatui.llm._lazy import get_litellm
from qatui.llm.spend import SPEND, CapReached, SpendCap, TaskSpend
from qatui.store.session import SessionStore

pytestmark = pytest.mark.timeout(300)

MODEL = "openai/text-embedding-3-small"
QUESTION = "Where was the old observatory built?"
ITEM = {"id": "obs", "question": QUESTION, "references": ["The old observatory was built in 1890 on the hill."],
        "candidates": {"echo": "The old observatory was built on the hill.", "off": "Bananas taste sweet."}}
QUESTIONS = {"echo": [QUESTION, QUESTION], "off": ["Bananas taste good?", "Bananas grow fast?"]}


@pytest.fixture(autouse=True)
def _no_served_models_kept() -> None:
    """Each test probes its own server: no served model of an earlier test is reused in this process."""
    resources_module._SERVED.clear()
    yield
    resources_module._SERVED.clear()


def _config(server: FakeLLMServer, tmp_path: Path, chat: str = "fake-model", embedder: str = "priced",
            model: str = MODEL) -> Path:
    """A config whose backbone `fake` (`openai/{chat}`) and embedder `embedder` (`model`) are the loopback server."""
    path = tmp_path / "config.toml"
    path.write_text(f'[backbones.fake]\nmodel = "openai/{chat}"\napi_base = "{server.base_url}"\n'
                    'api_key_env = "FAKE_KEY"\n'
                    f'[embedders.{embedder}]\nmodel = "{model}"\napi_base = "{server.base_url}"\n'
                    f'api_key_env = "FAKE_KEY"\n[cache]\ndir = "{tmp_path / "cache"}"\n[models]\nembedder = "{embedder}"\n')
    return path


def _questions(body: dict) -> str:
    text = body["messages"][-1]["content"]
    return json.dumps({"questions": QUESTIONS["echo" if ITEM["candidates"]["echo"] in text else "off"]})


def _qatui(config: Path, tmp_path: Path, *args: str) -> dict:
    command = [sys.executable, "-m", "qatui", "--config", str(config), "--sessions-dir", str(tmp_path / "sessions"),
               *args, "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180,
                          env={**os.environ, "FAKE_KEY": "sk-test", "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _embed_calls(tmp_path: Path, session_id: str) -> list[dict]:
    """The stored "embed" calls of the session's results, read from disk as another process would."""
    results = SessionStore(tmp_path / "sessions").open(session_id).results()
    return [call for doc in results.values() for call in doc.get("calls") or [] if call["purpose"] == "embed"]


def _litellm_price(tokens: int) -> float:
    prompt_usd, completion_usd = get_litellm().cost_per_token(model=MODEL, prompt_tokens=tokens, call_type="embedding")
    return float(prompt_usd) + float(completion_usd)


def test_embedding_requests_are_recorded_with_litellm_s_cost_and_a_cached_rerun_costs_nothing(tmp_path) -> None:
    with FakeLLMServer(_questions, max_lifetime_s=300.0) as server:
        config = _config(server, tmp_path)
        dataset = tmp_path / "items.jsonl"
        dataset.write_text(json.dumps(ITEM) + "\n")
        first = _qatui(config, tmp_path, "run", str(dataset), "--backbone", "fake", "--judge", "ragas-answer-relevance")
        asked = [body for body in server.embedding_requests if body["input"] != [PROBE_TEXT]]
        assert asked  # the item's texts went to the server
        calls = _embed_calls(tmp_path, first["session"])
        made = [c for c in calls if not c["cached"]]
        # One recorded call per request the server saw (the probe is a check before the run, not a call of it),
        # with the tokens the server counted and the price LiteLLM gives them.
        assert len(made) == len(asked) and all(c["ok"] and c["model"] == MODEL for c in made)
        assert sorted(c["prompt_tokens"] for c in made) == sorted(
            sum(count_tokens(t) for t in body["input"]) for body in asked)
        expected = sum(_litellm_price(sum(count_tokens(t) for t in body["input"])) for body in asked)
        assert expected > 0
        assert sum(c["cost_usd"] for c in made) == pytest.approx(expected, rel=1e-9)
        shown = _qatui(config, tmp_path, "sessions", "show", first["session"])
        assert shown["llm"]["cost_usd"] == pytest.approx(expected, rel=1e-9)  # the fake backbone has no price
        text = subprocess.run([sys.executable, "-m", "qatui", "--config", str(config), "--sessions-dir",
                               str(tmp_path / "sessions"), "sessions", "show", first["session"]], capture_output=True,
                              text=True, timeout=180, env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}).stdout
        written = re.search(r"cost at least \$([0-9.]+) \(([0-9,]+) calls? not priced\)", " ".join(text.split()))
        assert written and float(written[1]) == pytest.approx(expected, rel=0.05), text  # not $0.0000: it cost something
        chat = [c for doc in SessionStore(tmp_path / "sessions").open(first["session"]).results().values()
                for c in doc["calls"] if c["purpose"] != "embed" and not c["cached"]]
        assert chat and int(written[2]) == len(chat), text  # the chat backbone's calls have no price: a floor

        before = len(server.embedding_requests)
        again = _qatui(config, tmp_path, "run", str(dataset), "--backbone", "fake", "--judge", "ragas-answer-relevance")
        assert server.embedding_requests[before:] == []  # the store answers every text: no probe either
        rerun = _embed_calls(tmp_path, again["session"])
        assert rerun and all(c["cached"] and c["cost_usd"] == 0 for c in rerun)
        assert _qatui(config, tmp_path, "sessions", "show", again["session"])["llm"]["cost_usd"] == 0


def test_a_capped_task_reserves_before_asking_and_the_cap_counts_what_the_request_cost(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    texts = ["alpha beta gamma", "delta epsilon"]
    with FakeLLMServer() as server:
        config = parse_config(_config(server, tmp_path).read_text(), "test")
        embedder = Resources(config).embedder
        probed = len(server.embedding_requests)

        async def ask(cap: SpendCap) -> None:
            SPEND.set(TaskSpend(cap))
            await embedder.aembed(texts)

        refused = SpendCap(1e-12)
        with pytest.raises(CapReached):
            asyncio.run(ask(refused))
        assert len(server.embedding_requests) == probed  # refused before any request
        cap = SpendCap(1.0)
        asyncio.run(ask(cap))
        (body,) = server.embedding_requests[probed:]
        assert cap.reserved_usd == 0
        assert cap.spent_usd == pytest.approx(_litellm_price(sum(count_tokens(t) for t in body["input"])), rel=1e-9)


def test_the_plan_names_the_served_embedder_with_litellm_s_price(tmp_path) -> None:
    with FakeLLMServer(_questions, max_lifetime_s=300.0) as server:
        dataset = tmp_path / "items.jsonl"
        dataset.write_text(json.dumps(ITEM) + "\n")
        plan = _qatui(_config(server, tmp_path), tmp_path, "run", str(dataset), "--backbone", "fake", "--judge",
                      "ragas-answer-relevance", "--plan")
    assert plan["embeddings"]["embedder"] == "priced" and plan["embeddings"]["model"] == MODEL
    assert plan["embeddings"]["usd_per_million_tokens"] == pytest.approx(_litellm_price(1_000_000), rel=1e-9)
    assert not (tmp_path / "sessions").exists() or not any((tmp_path / "sessions").iterdir())


CHAT = "gpt-4o-mini"


def _observatories(n: int) -> list[dict]:
    """N items, each with two answers naming its observatory (what the scripted questions are written from)."""
    return [{"id": f"obs{i}", "question": f"Where and when was observatory number {i} of the old town built?",
             "references": [f"Observatory {i} was built in {1800 + i} on the hill."],
             "candidates": {"a": f"Observatory {i} was built on the north hill in {1800 + i}.",
                            "b": f"Observatory {i} stands near the river and the market square."}} for i in range(n)]


def _written_questions(body: dict) -> str:
    """Three questions written back from the answer in the prompt: distinct per answer, their length varying by item."""
    found = re.search(r"Observatory (\d+) (was built|stands)", body["messages"][-1]["content"])
    i, which = (found[1], "one" if found[2] == "stands" else "two") if found else ("0", "none")
    return json.dumps({"questions": [f"Where was observatory {i} built, as answer {which} says{' so' * (int(i) % 3)}?",
                                     f"When was observatory {i} finished according to answer {which}?",
                                     f"Who designed observatory {i} in answer {which}?"]})


def _tiktoken_usage(body: dict, text: str) -> tuple[int, int]:
    """A chat call's tokens as the provider bills them: the chat and its response format's schema, and the answer."""
    ll = get_litellm()
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
    prompt = ll.token_counter(model=CHAT, messages=body["messages"])
    prompt += ll.token_counter(model=CHAT, text=json.dumps(schema)) if schema else 0
    return prompt, ll.token_counter(model=CHAT, text=text)


def _embedding_tokens(text: str) -> int:
    """An embedding text's tokens as the provider bills them (the embedding model's tokenizer)."""
    return get_litellm().token_counter(model=MODEL, text=text)


def test_the_plan_counts_and_estimates_the_embedder_s_tokens_within_ten_percent_of_what_the_run_records(
        tmp_path) -> None:
    with FakeLLMServer(_written_questions, model=CHAT, usage=_tiktoken_usage, embed_usage=_embedding_tokens,
                       max_lifetime_s=300.0) as server:
        config = _config(server, tmp_path, chat=CHAT)
        dataset = tmp_path / "items.jsonl"
        dataset.write_text("".join(json.dumps(item) + "\n" for item in _observatories(8)))
        run = ("run", str(dataset), "--backbone", "fake", "--judge", "ragas-answer-relevance")
        # Two items judged first: their answers are in the call cache and their vectors in the store.
        _qatui(config, tmp_path, *run, "--limit", "2")
        plan = _qatui(config, tmp_path, *run, "--plan")
        done = _qatui(config, tmp_path, *run)

    planned = plan["cost"]["ragas-answer-relevance"]
    embed = planned["embeddings"]
    # Known before the run: 8 questions; in cached answers: 2 items x 2 answers x 3 questions (all embedded already,
    # as are the first 2 questions); the other 12 answers are written in the run: estimated at the cache's mean.
    assert (embed["texts_counted"], embed["texts_cached"]) == (8 + 12, 2 + 12)
    assert (embed["answers_estimated"], embed["answers_measured"]) == (12, 12)
    assert embed["tokens_counted"] == sum(_embedding_tokens(item["question"]) for item in _observatories(8)[2:])
    calls = _embed_calls(tmp_path, done["session"])
    recorded = sum(c["cost_usd"] for c in calls if not c["cached"])
    assert recorded > 0 and embed["usd"] is not None and embed["usd_most"] >= embed["usd"]
    assert abs(embed["usd"] - recorded) <= 0.10 * recorded, (embed, recorded)
    assert plan["embeddings"]["usd"] == embed["usd"] and plan["embeddings"]["tokens_counted"] == embed["tokens_counted"]
    whole = done["llm"]["cost_usd"]  # the backbone's calls and the embedder's
    assert abs(planned["usd"] - whole) <= 0.10 * whole
    print(f"\nembedder planned ${embed['usd']:.9f} ({embed['tokens_counted']} counted + {embed['tokens_estimated']} "
          f"estimated tokens), recorded ${recorded:.9f}; judge planned ${planned['usd']:.9f}, recorded ${whole:.9f}")


def test_an_unpriced_embedder_leaves_the_judge_without_a_price_and_is_named(tmp_path) -> None:
    with FakeLLMServer(_written_questions, model=CHAT, usage=_tiktoken_usage, max_lifetime_s=300.0) as server:
        config = _config(server, tmp_path, chat=CHAT, embedder="mine", model="openai/qatui-unpriced-embedder")
        dataset = tmp_path / "items.jsonl"
        dataset.write_text("".join(json.dumps(item) + "\n" for item in _observatories(2)))
        run = ("run", str(dataset), "--backbone", "fake", "--judge", "ragas-answer-relevance", "--plan")
        plan = _qatui(config, tmp_path, *run)
        text = subprocess.run([sys.executable, "-m", "qatui", "--config", str(config), *run], capture_output=True,
                              text=True, timeout=180, env={**os.environ, "FAKE_KEY": "sk-test",
                                                           "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    planned = plan["cost"]["ragas-answer-relevance"]
    assert planned["usd"] is None and planned["embeddings"]["unpriced"] == "not in LiteLLM's price map"
    assert planned["embeddings"]["tokens_counted"] > 0 and planned["prompt_tokens"] > 0  # still counted
    assert text.returncode == 0, text.stderr
    assert ("no price for ragas-answer-relevance's embedder mine (openai/qatui-unpriced-embedder): not in LiteLLM's "
            "price map") in " ".join(text.stdout.split())


LOCAL = "local/smollm2"


@pytest.mark.skipif(not extras.has("local"), reason=f"the embedded model is not installed: {extras.install_hint('local')}")
def test_on_an_embedded_backbone_the_plan_prices_the_served_embedder_as_the_run_then_records_it(tmp_path) -> None:
    """The backbone is free, its embedder is not: the plan's row and total are the embedder's cost, and the plan
    never loads the embedded model (nor torch)."""
    with FakeLLMServer(embed_usage=_embedding_tokens, max_lifetime_s=300.0) as server:
        config = _config(server, tmp_path)
        dataset = tmp_path / "items.jsonl"
        dataset.write_text("".join(json.dumps(item) + "\n" for item in _observatories(2)))
        run = ("run", str(dataset), "--backbone", LOCAL, "--judge", "ragas-answer-relevance")
        # Before any run: the questions the model will write are estimated (at the call's max_tokens: no cache).
        cold = _qatui(config, tmp_path, *run, "--judge", "ragas", "--plan")
        script = ("import sys\nfrom qatui.cli import main\ncode = main(sys.argv[1:])\n"
                  "print('torch imported' if 'torch' in sys.modules else 'torch not imported')\nsys.exit(code)")
        text = subprocess.run([sys.executable, "-c", script, "--config", str(config), *run, "--plan"],
                              capture_output=True, text=True, timeout=180,
                              env={**os.environ, "FAKE_KEY": "sk-test", "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
        _qatui(config, tmp_path, *run)  # the embedded model writes its questions: the call cache holds them
        (tmp_path / "cache" / "models.sqlite3").unlink()  # their vectors forgotten: the run asks the embedder again
        plan = _qatui(config, tmp_path, *run, "--plan")
        done = _qatui(config, tmp_path, *run)

    row = cold["cost"]["ragas-answer-relevance"]
    assert row["backbone_free"] == "embedded model" and row["prompt_tokens"] == 0 and "unpriced" not in row
    assert (row["embeddings"]["answers_estimated"], row["embeddings"]["answers_measured"]) == (4, 0)
    assert row["usd"] == row["embeddings"]["usd"] > 0 and row["usd_most"] >= row["usd"]
    assert cold["cost"]["total"]["usd"] == pytest.approx(row["usd"] + cold["cost"]["ragas"]["usd"], rel=1e-9)
    assert cold["embeddings"]["usd"] == pytest.approx(cold["cost"]["total"]["usd"], rel=1e-9)
    assert text.returncode == 0, text.stderr
    shown = " ".join(text.stdout.split())
    assert "backbone $0 (embedded model: free) + embedder priced:" in shown, shown
    assert shown.endswith("torch not imported"), shown

    # Every written question is in the cache's answers now: counted, none estimated; the run pays for them all.
    planned = plan["cost"]["ragas-answer-relevance"]
    assert planned["embeddings"]["answers_estimated"] == 0 and planned["embeddings"]["texts_counted"] > 2
    recorded = sum(c["cost_usd"] for c in _embed_calls(tmp_path, done["session"]) if not c["cached"])
    assert recorded > 0 and done["llm"]["cost_usd"] == pytest.approx(recorded, rel=1e-9)  # the backbone: $0
    assert planned["usd"] == planned["embeddings"]["usd"] == plan["embeddings"]["usd"]
    assert abs(planned["usd"] - recorded) <= 0.10 * recorded, (planned, recorded)
    print(f"\nembedded backbone: planned ${planned['usd']:.9f} ({planned['embeddings']['tokens_counted']} tokens "
          f"counted), recorded ${recorded:.9f}; before any run ${row['usd']:.9f} (answers at max_tokens)")


@pytest.mark.skipif(not extras.has("local"), reason=f"the embedded model is not installed: {extras.install_hint('local')}")
def test_on_an_embedded_backbone_an_unpriced_embedder_leaves_the_judge_without_a_price_and_is_named(tmp_path) -> None:
    with FakeLLMServer(max_lifetime_s=300.0) as server:
        config = _config(server, tmp_path, embedder="mine", model="openai/qatui-unpriced-embedder")
        dataset = tmp_path / "items.jsonl"
        dataset.write_text("".join(json.dumps(item) + "\n" for item in _observatories(2)))
        run = ("run", str(dataset), "--backbone", LOCAL, "--judge", "ragas-answer-relevance", "--plan")
        plan = _qatui(config, tmp_path, *run)
        text = subprocess.run([sys.executable, "-m", "qatui", "--config", str(config), *run], capture_output=True,
                              text=True, timeout=180, env={**os.environ, "FAKE_KEY": "sk-test",
                                                           "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    planned = plan["cost"]["ragas-answer-relevance"]
    assert planned["usd"] is None and planned["backbone_free"] == "embedded model"
    assert planned["embeddings"]["unpriced"] == "not in LiteLLM's price map" and planned["embeddings"]["tokens"] > 0
    assert text.returncode == 0, text.stderr
    shown = " ".join(text.stdout.split())
    assert "backbone $0 (embedded model: free) + embedder mine:" in shown and "no price (not in LiteLLM's price map)" \
        in shown, shown
    assert ("no price for ragas-answer-relevance's embedder mine (openai/qatui-unpriced-embedder): not in LiteLLM's "
            "price map") in shown


def test_a_cost_cap_refuses_an_unpriced_served_embedder_before_any_work(tmp_path) -> None:
    """`--max-cost` cannot count what an unpriced embedder's requests cost, so a cap could be passed without a sign:
    the run is refused in one line naming the embedder, as an unpriced backbone is, and no session is made."""
    with FakeLLMServer(_written_questions, model=CHAT, usage=_tiktoken_usage, max_lifetime_s=300.0) as server:
        config = _config(server, tmp_path, chat=CHAT, embedder="mine", model="openai/qatui-unpriced-embedder")
        dataset = tmp_path / "items.jsonl"
        dataset.write_text("".join(json.dumps(item) + "\n" for item in _observatories(2)))
        done = subprocess.run([sys.executable, "-m", "qatui", "--config", str(config), "--sessions-dir",
                               str(tmp_path / "sessions"), "run", str(dataset), "--backbone", "fake", "--judge",
                               "ragas-answer-relevance", "--max-cost", "1"], capture_output=True, text=True,
                              timeout=180, env={**os.environ, "FAKE_KEY": "sk-test",
                                                "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
        asked = server.n_requests
    error = done.stderr.strip()
    assert done.returncode == 2 and len(error.splitlines()) == 1, done.stderr
    assert ("--max-cost: embedder 'mine' (openai/qatui-unpriced-embedder) is not in LiteLLM's price map" in error
            and "run it without --max-cost" in error)
    assert asked == 1  # the backbone's check alone: no item was asked
    assert not (tmp_path / "sessions").exists() or not SessionStore(tmp_path / "sessions").list()


def test_an_embedding_reply_whose_usage_no_text_could_produce_fails_and_costs_nothing(tmp_path) -> None:
    """A server reporting a trillion tokens for a few short texts: the request was priced as reported (one call the
    run's whole cost). Now it fails with the reason, recorded at 0 USD, and the item that needed it fails."""
    def usage(text: str) -> int:
        return count_tokens(text) if text == PROBE_TEXT else 10 ** 12

    with FakeLLMServer(_questions, embed_usage=usage, max_lifetime_s=300.0) as server:
        config = _config(server, tmp_path)
        dataset = tmp_path / "items.jsonl"
        dataset.write_text(json.dumps(ITEM) + "\n")
        done = subprocess.run([sys.executable, "-m", "qatui", "--config", str(config), "--sessions-dir",
                               str(tmp_path / "sessions"), "run", str(dataset), "--backbone", "fake", "--judge",
                               "ragas-answer-relevance", "--json"], capture_output=True, text=True, timeout=180,
                              env={**os.environ, "FAKE_KEY": "sk-test", "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
        assert done.returncode == 1, done.stderr  # the item failed
        run = json.loads(done.stdout)
        assert any(body["input"] != [PROBE_TEXT] for body in server.embedding_requests)
        calls = [c for c in _embed_calls(tmp_path, run["session"]) if not c["cached"]]
        assert calls and all(not c["ok"] and c["cost_usd"] == 0 and c["prompt_tokens"] == 0 for c in calls)
        assert all(re.search(r"reported [0-9,]{17,} prompt tokens .*cannot be true", c["error"]) for c in calls), calls
        assert run["llm"]["cost_usd"] == 0 and run["judges"]["ragas-answer-relevance"]["coverage"]["failed"] == 1
