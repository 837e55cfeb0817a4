"""Oversized inputs: texts past the backbone's context window are cut by a token-counted rule, recorded and shown.

Real tokenizers throughout: LiteLLM's `token_counter` (tiktoken) for `openai/gpt-4`, whose
8,192-token window LiteLLM knows, reached over HTTP at a loopback server; and the embedded
`local/smollm2` with its own tokenizer and context window, through a real judge.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from fakes import is_preflight, settle, wait_until

from qatui.cli import main
from qatui.config import Config
from qatui.llm.fence import Fence, block_texts
from qatui.llm.trim import MARGIN_TOKENS, counter_for, fit
from qatui.store.session import SessionStore

WORDS = "Rayleigh scattering sends blue light across the whole sky while red light passes straight through. "
HUGE = WORDS * 2_500  # about 45,000 tokens in tiktoken, more than five gpt-4 windows
SHORT = "Air molecules scatter blue sunlight more than red sunlight."


def _item(path: Path, text: str, limit_items: int = 1) -> Path:
    with path.open("w") as f:
        for i in range(limit_items):
            f.write(json.dumps({"id": f"q{i}", "question": "Why is the sky blue?", "references": [SHORT],
                                "candidates": {"long": text, "short": SHORT}}) + "\n")
    return path


def _messages(fence: Fence, long: str) -> list[dict]:
    return [{"role": "system", "content": "You grade answers. Reply with [[score]]."},
            {"role": "user", "content": f"Question: why?\nAnswer A:\n{fence('Answer A', long)}\n\n"
                                        f"Answer B:\n{fence('Answer B', SHORT)}\n\nWhich is better?"}]


def test_a_prompt_that_fits_is_sent_as_it_is_and_an_oversized_one_is_cut_to_its_budget() -> None:
    counter = counter_for("openai/gpt-4", None)
    assert counter is not None and counter.window == 8192  # LiteLLM's max_input_tokens for the model
    fence = Fence(SHORT * 3, SHORT)
    small = _messages(fence, SHORT * 3)
    assert fit(small, counter, 1024) == (small, None)

    fence = Fence(HUGE, SHORT)
    messages = _messages(fence, HUGE)
    out, trimmed = fit(messages, counter, 1024)
    budget = 8192 - 1024 - MARGIN_TOKENS
    assert counter.messages(messages) > 5 * 8192
    assert trimmed is not None and trimmed.prompt_tokens == counter.messages(messages)
    assert counter.messages(out) == trimmed.kept_tokens <= budget  # room for the answer is left
    assert [t["name"] for t in trimmed.texts] == ["Answer A"]  # the short text keeps all it has
    blocks = block_texts(out[1]["content"])
    assert blocks["Answer B"] == SHORT and blocks["Answer A"].startswith(WORDS)  # still fenced; the head is kept
    assert "trimmed by qatui to fit the context window" in blocks["Answer A"]
    assert out[0] == messages[0] and out[1]["content"].startswith("Question: why?\nAnswer A:\n<<<BEGIN")
    assert out[1]["content"].endswith("\n\nWhich is better?")  # the instructions are never cut
    assert trimmed.texts[0]["kept"] < trimmed.texts[0]["tokens"] == counter.text(HUGE)


def test_two_long_texts_share_the_cut_and_an_unknown_window_sends_the_prompt_whole() -> None:
    counter = counter_for("openai/gpt-4", None)
    other = ("Clouds look white because droplets scatter every colour alike. " * 1_500)
    fence = Fence(HUGE, other)
    messages = [{"role": "user", "content": f"{fence('Answer A', HUGE)}\n{fence('Answer B', other)}"}]
    out, trimmed = fit(messages, counter, 512)
    kept = {t["name"]: t["kept"] for t in trimmed.texts}
    assert set(kept) == {"Answer A", "Answer B"} and abs(kept["Answer A"] - kept["Answer B"]) <= 1  # one common cap
    assert counter.messages(out) <= 8192 - 512 - MARGIN_TOKENS
    assert counter_for("openai/no-such-model-anywhere", None) is None  # unknown: sent whole, the provider says
    assert counter_for("openai/no-such-model-anywhere", 2048).window == 2048  # unless the config names it


def _config(tmp_path: Path, base_url: str, model: str = "openai/gpt-4", extra: str = "") -> Path:
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.fake]\nmodel = "{model}"\napi_base = "{base_url}"\napi_key_env = "FAKE_KEY"\n'
                      f'{extra}[cache]\ndir = "{tmp_path / "cache"}"\n')
    return config


def test_a_provider_judge_gets_a_prompt_within_its_window_and_the_cut_is_recorded_and_shown(
        llm_server, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    llm_server.script(lambda body: '{"score": "[[5.00]]"}')
    config = _config(tmp_path, llm_server.base_url)
    base = ["--config", str(config), "--sessions-dir", str(tmp_path / "s")]
    data = _item(tmp_path / "long.jsonl", HUGE)
    assert main([*base, "run", str(data), "--judge", "pointwise", "--backbone", "fake", "--json"]) == 0
    session = json.loads(capsys.readouterr().out)["session"]
    counter = counter_for("openai/gpt-4", None)
    sent = [b for b in llm_server.requests if not is_preflight(b)]
    assert len(sent) == 2
    for body in sent:
        assert counter.messages(body["messages"]) + body["max_tokens"] <= 8192  # prompt and answer fit
    long_prompt = next(b for b in sent if "trimmed by qatui" in b["messages"][-1]["content"])
    assert block_texts(long_prompt["messages"][-1]["content"])["Answer"].startswith(WORDS)

    assert main([*base, "sessions", "show", session, "--item", "q0", "--json"]) == 0
    entry = json.loads(capsys.readouterr().out)["judges"]["pointwise"]
    assert entry["status"] == "done"
    (cut,) = entry["trimmed"]  # one call of two was cut: the long answer's
    assert cut["purpose"] == "pointwise" and cut["window"] == 8192 and cut["texts"][0]["name"] == "Answer"
    assert cut["texts"][0]["tokens"] > 40_000 and cut["texts"][0]["kept"] < 8192
    event = next(a for a in entry["artifacts"] if a["type"] == "input_trimmed")
    assert event["trimmed"] == {k: v for k, v in cut.items() if k != "purpose"}
    assert sum(1 for c in entry["calls"] if c["trimmed"]) == 1
    assert main([*base, "sessions", "show", session, "--item", "q0"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "pointwise prompt trimmed to fit the 8,192-token context window" in shown and "Answer " in shown

    # a resume or rerun cuts the same way, so the cache answers it
    before = llm_server.n_requests
    assert main([*base, "run", str(data), "--judge", "pointwise", "--backbone", "fake", "--json"]) == 0
    capsys.readouterr()
    assert llm_server.n_requests - before <= 1  # at most the preflight probe


def test_the_config_names_the_window_of_a_model_litellm_does_not_know(llm_server, tmp_path, capsys,
                                                                      monkeypatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    llm_server.script(lambda body: '{"score": "[[5.00]]"}')
    config = _config(tmp_path, llm_server.base_url, "openai/my-vllm-model", "context_window = 3000\nmax_tokens = 200\n")
    data = _item(tmp_path / "long.jsonl", WORDS * 400)
    assert main(["--config", str(config), "--sessions-dir", str(tmp_path / "s"), "run", str(data), "--judge",
                 "pointwise", "--backbone", "fake", "--json"]) == 0
    capsys.readouterr()
    counter = counter_for("openai/my-vllm-model", 3000)
    sent = [b for b in llm_server.requests if not is_preflight(b)]
    assert any("trimmed by qatui" in b["messages"][-1]["content"] for b in sent)
    for body in sent:
        assert counter.messages(body["messages"]) + body["max_tokens"] <= 3000 - MARGIN_TOKENS


async def test_the_tui_item_view_shows_the_cut_in_the_transcript(llm_server, tmp_path, monkeypatch) -> None:
    from qatui.tui.app import QatuiApp
    from qatui.tui.screens.session import SessionScreen
    from qatui.tui.widgets.sessions_table import SessionsTable
    from qatui.tui.widgets.transcript_panel import TranscriptPanel

    monkeypatch.setenv("FAKE_KEY", "sk-test")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    llm_server.script(lambda body: '{"score": "[[5.00]]"}')
    config = _config(tmp_path, llm_server.base_url)
    data = _item(tmp_path / "long.jsonl", HUGE)
    args = ["--config", str(config), "--sessions-dir", str(tmp_path / "s"), "run", str(data), "--judge", "pointwise",
            "--backbone", "fake", "--json"]
    assert await asyncio.to_thread(main, args) == 0
    app = QatuiApp(Config(), SessionStore(tmp_path / "s"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.screen.query(SessionsTable) and app.screen.query_one(SessionsTable).row_count,
                         "Home's list")
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None, "the session")
        transcript = app.screen.query_one(TranscriptPanel)
        text = "".join(transcript.task.transcript)
        assert "!! prompt trimmed to fit the 8,192-token context window" in text and "Answer " in text


@pytest.mark.slow
def test_a_text_of_many_thousand_tokens_goes_through_the_embedded_model_trimmed(tmp_path, capsys) -> None:
    """A real judge on `local/smollm2`: the long answer is cut to the model's context and the item is judged."""
    from qatui.llm.local import get_model

    config = tmp_path / "c.toml"
    config.write_text(f'[cache]\ndir = "{tmp_path / "cache"}"\n')
    data = _item(tmp_path / "long.jsonl", HUGE, limit_items=3)
    base = ["--config", str(config), "--sessions-dir", str(tmp_path / "s")]
    code = main([*base, "run", str(data), "--judge", "pointwise", "--backbone", "local/smollm2", "--limit", "1",
                 "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["judges"]["pointwise"]["coverage"]["scored"] == 1
    model = get_model("smollm2")
    assert model.count_text(HUGE) > 20_000  # many thousand tokens, five times the context
    assert main([*base, "sessions", "show", out["session"], "--item", "q0", "--json"]) == 0
    entry = json.loads(capsys.readouterr().out)["judges"]["pointwise"]
    (cut,) = entry["trimmed"]
    assert cut["window"] == model.n_ctx and cut["texts"][0]["tokens"] == model.count_text(HUGE)
    assert cut["kept_tokens"] + cut["answer_tokens"] <= model.n_ctx  # the answer had its room
    long_call = next(c for c in entry["calls"] if c["trimmed"])
    assert long_call["ok"] and long_call["prompt_tokens"] == cut["kept_tokens"]  # what the model read


def test_a_prompt_that_cannot_be_cut_to_fit_fails_its_call_and_is_never_sent(llm_server, tmp_path, capsys,
                                                                              monkeypatch) -> None:
    """A 256-token window beside 64 for the answer: the instructions alone do not fit, and the prompt, its answer
    cut to its least and a note added, grew and was sent "trimmed to fit the 256-token window". The call fails,
    saying so, and nothing is sent (the item is failed, never scored)."""
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    llm_server.script(lambda body: '{"score": "[[5.00]]"}')
    config = _config(tmp_path, llm_server.base_url, "openai/my-vllm-model", "context_window = 256\nmax_tokens = 64\n")
    data = _item(tmp_path / "long.jsonl", WORDS * 40)
    main(["--config", str(config), "--sessions-dir", str(tmp_path / "s"), "run", str(data), "--judge", "pointwise",
          "--backbone", "fake", "--json"])
    out = json.loads(capsys.readouterr().out)
    coverage = out["judges"]["pointwise"]["coverage"]
    assert coverage["failed"] == 1 and coverage["scored"] == 0
    assert not [b for b in llm_server.requests if not is_preflight(b) and "trimmed by qatui" in json.dumps(b)]
    assert main(["--sessions-dir", str(tmp_path / "s"), "sessions", "show", out["session"], "--item", "q0"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "more than the 256-token context window holds beside the 64 kept for the answer" in shown, shown
