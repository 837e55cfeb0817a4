"""Reasoning models as judges, over real HTTP (tests/llm_server.py through LiteLLM and qatui's client).

A backbone LiteLLM knows as a reasoning model (`openai/o3-mini`, served by the loopback through
`api_base`) is sent no `temperature` and more room in `max_tokens`, and the session records what
was sent; a model that still refuses an option fails the preflight in one line naming it;
`reasoning_effort` reaches the request; the thinking of every call is stored with it, shown by
`sessions show --item` (text and JSON) and folded in the TUI transcript, and its tokens are
counted in the session's totals and priced.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from fakes import wait_until
from llm_server import FakeLLMServer, Reply, count_tokens
from tui_support import write_sums

from qatui.cli import main
from qatui.config import BackboneConfig, Config, load_config
from qatui.llm import client as client_module
from qatui.llm.fence import block_texts
from qatui.llm.preflight import preflight_backbone
from qatui.llm.reasoning import THINKING_ROOM
from qatui.store.session import SessionStore

DRAFT = 'Let me think. Answer B looks better at first: {"rationale": "B", "choice": "B"} [[B]]'
"""What the model thinks before it answers: a verdict of the wrong side, never to be read."""
ANSWER = json.dumps({"rationale": "A is right", "choice": "A"})
"""The answer when the right candidate is shown first (its mirror, with B, otherwise): as many words either way."""


@pytest.fixture(autouse=True)
def _fresh_backbones(monkeypatch):
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    client_module._backbones.clear()
    yield
    client_module._backbones.clear()


@pytest.fixture
def o3_server():
    """The loopback server answering as OpenAI's o3-mini would be named (so LiteLLM prices its answers)."""
    with FakeLLMServer(model="o3-mini", max_lifetime_s=60.0) as server:
        yield server


def _config(tmp_path: Path, server: FakeLLMServer, model: str, extra: str = "") -> Path:
    path = tmp_path / "c.toml"
    path.write_text(f'[backbones.judge]\nmodel = "{model}"\napi_base = "{server.base_url}"\napi_key_env = "FAKE_KEY"\n'
                    f'{extra}[cache]\ndir = "{tmp_path / "cache"}"\n')
    return path




def _answer(body: dict) -> str:
    """The right choice for the pair shown (the sum is right), in the judge's JSON."""
    blocks: dict[str, str] = {}
    for message in body["messages"]:
        blocks.update(block_texts(str(message["content"])))
    i = int(re.search(r"What is (\d+) plus", "\n".join(str(m["content"]) for m in body["messages"]))[1])
    return ANSWER if blocks["Answer A"] == f"It is {2 * i}." else ANSWER.replace('"A', '"B')


def _reasoning(body: dict) -> Reply:
    """A reasoning model: its draft apart (`reasoning_content`, always for B), then its answer."""
    if body.get("max_completion_tokens", body.get("max_tokens")) == 8:
        return Reply("OK", reasoning_content="The user wants OK.")
    return Reply(_answer(body), reasoning_content=DRAFT)


def _run(capsys, tmp_path: Path, config: Path, *more: str) -> tuple[int, dict | str]:
    code = main(["--config", str(config), "--sessions-dir", str(tmp_path / "s"), "run",
                 str(write_sums(tmp_path / "d.jsonl", 3, gold=True)), "--judge", "pairwise", "--backbone", "judge", "--json", *more])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else err)


# -- what is sent to a reasoning model, and what the session records --------------------------------------------------

def test_a_reasoning_model_gets_no_temperature_more_room_and_the_session_records_what_was_sent(o3_server, tmp_path,
                                                                                                capsys) -> None:
    o3_server.script(_reasoning, refuse=["temperature"])  # as o3-mini: a 400 for any temperature sent
    config = _config(tmp_path, o3_server, "openai/o3-mini")
    code, out = _run(capsys, tmp_path, config)
    assert code == 0, out
    judged = [b for b in o3_server.requests if b.get("max_completion_tokens") != 8]
    assert judged and not [b for b in o3_server.requests if "temperature" in b]
    assert {b["max_completion_tokens"] for b in judged} == {1024 + THINKING_ROOM}  # the answer's 1024 + the room
    assert o3_server.counts["unsupported"] == 0
    session = SessionStore(tmp_path / "s").open(out["session"])
    calls = [c for doc in session.results().values() for c in doc["calls"]]
    assert calls and all(c["left_out"] == ["temperature"] and "temperature" not in c["options"]
                         and c["options"]["max_tokens"] == 1024 + THINKING_ROOM and c["options"]["seed"] == 0
                         for c in calls), calls[0]
    note = session.meta["requests"]["judge"]
    assert note == ("openai/o3-mini: a reasoning model; temperature left out; max_tokens raised to 5,120 "
                    "(1,024 for the answer + 4,096 for thinking)")
    assert out["requests"] == {"judge": note}
    main(["--config", str(config), "--sessions-dir", str(tmp_path / "s"), "sessions", "show", out["session"]])
    assert f"requests {note}" in " ".join(capsys.readouterr().out.split())


def test_a_reasoning_model_gets_no_temperature_from_a_judge_that_asks_for_its_default_one(o3_server, tmp_path,
                                                                                          capsys) -> None:
    """G-Eval samples at temperature 1.0, the one value LiteLLM keeps for o-series models: its requests carried it
    while the session's note said "temperature left out", and a server that refuses the option failed every
    G-Eval item. Every request now goes without it, as the note says."""
    def answer(body: dict) -> Reply | str:
        if body.get("max_completion_tokens", body.get("max_tokens")) == 8:
            return "OK"
        text = "\n".join(str(m["content"]) for m in body["messages"])
        return "1. Read it." if "Evaluation steps (" in text else json.dumps({"score": "[[4]]"})

    o3_server.script(answer, refuse=["temperature"])
    config = _config(tmp_path, o3_server, "openai/o3-mini",
                     extra='[judges.geval]\nmethod = "samples"\nsamples = 2\ndimensions = "accuracy"\n')
    code = main(["--config", str(config), "--sessions-dir", str(tmp_path / "s"), "run",
                 str(write_sums(tmp_path / "d.jsonl", 2, gold=True)), "--judge", "geval", "--backbone", "judge",
                 "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    summary = json.loads(out)
    rated = [b for b in o3_server.requests if "Evaluation form" in "\n".join(str(m["content"]) for m in b["messages"])]
    assert rated and not [b for b in o3_server.requests if "temperature" in b]
    assert o3_server.counts["unsupported"] == 0
    session = SessionStore(tmp_path / "s").open(summary["session"])
    results = session.results().values()
    assert len(results) == 2 and all(doc["status"] == "done" for doc in results), [d.get("reason") for d in results]
    assert "temperature left out" in summary["requests"]["judge"]


def test_the_plan_and_the_preflight_say_a_backbone_is_a_reasoning_model(o3_server, tmp_path, capsys) -> None:
    o3_server.script(_reasoning, refuse=["temperature"])
    config = _config(tmp_path, o3_server, "openai/o3-mini")
    assert main(["--config", str(config), "run", str(write_sums(tmp_path / "d.jsonl", 3, gold=True)), "--judge", "pairwise",
                 "--backbone", "judge", "--plan"]) == 0
    assert "openai/o3-mini: a reasoning model; temperature left out; max_tokens raised to 5,120" in \
        " ".join(capsys.readouterr().out.split())
    status = preflight_backbone(client_module.make_client("judge", load_config(config)))
    assert status.startswith("openai/o3-mini: a reasoning model; temperature left out; max_tokens raised to 5,120 "
                             "(1,024 for the answer + 4,096 for thinking); replied in "), status
    assert "\n" not in status and o3_server.requests[-1]["max_completion_tokens"] == 8  # the check asks 8 tokens


def test_a_model_that_still_refuses_an_option_fails_the_preflight_in_one_line_naming_it(llm_server, tmp_path,
                                                                                       capsys) -> None:
    """LiteLLM does not know `openai/my-reasoner` refuses temperature; its 400 is named, with the fix, on one line."""
    llm_server.script(lambda body: ANSWER, refuse=["temperature"])
    config = _config(tmp_path, llm_server, "openai/my-reasoner")
    code = main(["--config", str(config), "--sessions-dir", str(tmp_path / "s"), "run",
                 str(write_sums(tmp_path / "d.jsonl", 3, gold=True)), "--judge", "pairwise", "--backbone", "judge"])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, err
    assert "backbone 'judge' refuses the request option 'temperature'" in lines[0], lines
    assert 'add leave_out = ["temperature"] to [backbones.judge]' in lines[0], lines
    assert len(llm_server.requests) == 1 and not list(SessionStore(tmp_path / "s").list())  # refused before any work
    code, out = _run(capsys, tmp_path, _config(tmp_path, llm_server, "openai/my-reasoner",
                                                'leave_out = ["temperature"]\n'))
    assert code == 0 and out["judges"]["pairwise"]["coverage"]["failed"] == 0, out
    assert not [b for b in llm_server.requests[1:] if "temperature" in b]


def test_reasoning_effort_reaches_the_request_and_keys_the_cache(llm_server, tmp_path, capsys) -> None:
    llm_server.script(lambda body: ANSWER)
    code, out = _run(capsys, tmp_path, _config(tmp_path, llm_server, "openai/fake-model", 'reasoning_effort = "high"\n'))
    assert code == 0, out
    assert {b.get("reasoning_effort") for b in llm_server.requests} == {"high"}
    asked = len(llm_server.requests)
    code, out = _run(capsys, tmp_path, _config(tmp_path, llm_server, "openai/fake-model", 'reasoning_effort = "low"\n'))
    assert code == 0 and out["llm"]["cached"] == 0, out["llm"]  # another effort is another answer: asked again
    assert {b.get("reasoning_effort") for b in llm_server.requests[asked:]} == {"low"}


def test_a_thinking_budget_is_sent_as_the_providers_own_and_temperature_is_left_out_with_it() -> None:
    """Anthropic takes a thinking budget (and no temperature with it): the request is shaped so, never sent here."""
    config = Config(backbones={"claude": BackboneConfig(model="anthropic/claude-sonnet-4-20250514",
                                                        thinking_budget=2048)})
    request = client_module.make_client("claude", config).build_request([{"role": "user", "content": "hi"}],
                                                                         max_tokens=300)
    assert request["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert request["temperature"] is None and request["max_tokens"] == 300 + 2048


@pytest.mark.parametrize(("key", "value"), [("reasoning_effort", '"extreme"'), ("thinking_budget", "10"),
                                            ("leave_out", '["messages"]')])
def test_a_reasoning_option_out_of_its_range_is_refused_naming_it(tmp_path, capsys, key, value) -> None:
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.judge]\nmodel = "openai/o3-mini"\n{key} = {value}\n')
    assert main(["--config", str(config), "models"]) == 2
    assert key in capsys.readouterr().err


# -- the thinking: stored, shown, counted --------------------------------------------------------------------------

def test_the_thinking_is_stored_shown_and_its_tokens_counted_and_priced(o3_server, tmp_path, capsys) -> None:
    import litellm

    o3_server.script(_reasoning)
    config = _config(tmp_path, o3_server, "openai/o3-mini")
    code, out = _run(capsys, tmp_path, config)
    assert code == 0, out
    judged = [b for b in o3_server.requests if b.get("max_completion_tokens") != 8]
    assert out["judges"]["pairwise"]["metrics"]["accuracy"] == 1.0  # the answer read, never the draft
    assert out["llm"]["reasoning_tokens"] == len(judged) * len(DRAFT.split())  # the server counts words
    price = litellm.model_cost["o3-mini"]
    prompts = sum(count_tokens("\n".join(str(m["content"]) for m in b["messages"])) for b in judged)
    completions = len(judged) * (len(ANSWER.split()) + len(DRAFT.split()))
    expected = prompts * price["input_cost_per_token"] + completions * price["output_cost_per_token"]
    assert out["llm"]["cost_usd"] == pytest.approx(expected, rel=1e-9)  # thinking priced as output
    session = SessionStore(tmp_path / "s").open(out["session"])
    stored = session.results()[("q0", "pairwise")]["calls"]
    assert [c["thinking"] for c in stored] == [DRAFT, DRAFT] and {c["reasoning_tokens"] for c in stored} == {
        len(DRAFT.split())}
    base = ["--config", str(config), "--sessions-dir", str(tmp_path / "s"), "sessions", "show", out["session"]]
    main([*base, "--item", "q0", "--json"])
    entry = json.loads(capsys.readouterr().out)["judges"]["pairwise"]
    assert [c["thinking"] for c in entry["calls"]] == [DRAFT, DRAFT]
    assert {c["response"] for c in entry["calls"]} <= {ANSWER, ANSWER.replace('"A', '"B')}
    main([*base, "--item", "q0"])
    shown = capsys.readouterr().out
    lines = [line for line in shown.splitlines() if line.strip().startswith("thinking pair")]
    assert len(lines) == 2 and all(f"({len(DRAFT)} chars, {len(DRAFT.split())} tokens)" in line for line in lines)
    assert all("Answer B looks better" in line for line in lines), shown
    main(base)
    total = out["llm"]["reasoning_tokens"]
    assert f"({total:,} thinking)" in capsys.readouterr().out


async def test_the_tui_transcript_folds_the_thinking_and_unfolds_it_on_h(o3_server, tmp_path, monkeypatch,
                                                                         capsys) -> None:
    from qatui.tui.app import QatuiApp
    from qatui.tui.screens.session import SessionScreen
    from qatui.tui.widgets.transcript_panel import TranscriptPanel

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    o3_server.script(_reasoning)
    config = _config(tmp_path, o3_server, "openai/o3-mini")
    code, out = await asyncio.to_thread(_run, capsys, tmp_path, config)
    assert code == 0, out
    app = QatuiApp(Config(), SessionStore(tmp_path / "s"))
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_until(pilot, lambda: app.screen.query("DataTable") and app.screen.query_one("DataTable").row_count == 1,
                         "Home listing the session")  # enter before the list is read opens nothing
        await pilot.press("enter")

        def thinking_shown() -> bool:
            if not (isinstance(app.screen, SessionScreen) and app.screen.state is not None):
                return False
            panel = app.screen.query_one(TranscriptPanel)
            return panel.task is not None and bool(panel.task.thinking)

        await wait_until(pilot, thinking_shown, "the session's transcript with its thinking")
        shown = str(app.screen.query_one(TranscriptPanel).query_one("Static").content)
        folded = f"▸ thinking ({len(DRAFT)} chars) · h unfolds"
        assert shown.count(folded) == 2 and "Answer B looks better" not in shown, shown
        assert '"rationale": "A is right"' in shown
        def transcript() -> str:
            return str(app.screen.query_one(TranscriptPanel).query_one("Static").content)

        await pilot.press("h")
        await wait_until(pilot, lambda: "Answer B looks better" in transcript(), "the thinking unfolded")
        shown = transcript()
        assert shown.count(DRAFT) == 2 and shown.count(f"▾ thinking ({len(DRAFT)} chars) · h folds") == 2, shown
        await pilot.press("h")
        await wait_until(pilot, lambda: "Answer B looks better" not in transcript(), "the thinking folded again")
        shown = transcript()
        assert shown.count(folded) == 2, shown


# -- every judge that calls a backbone reads only the answer -------------------------------------------------------

class Thinker:
    """The backbone of tests/test_injection.py (always for the good answer), thinking the opposite verdict first.

    `form`: "think" (a `<think>` section after a newline, before the answer: LiteLLM leaves it in the
    content), "template" (no opening tag: the chat template sent it, as DeepSeek-R1's does),
    "reasoning" (`reasoning_content`), or "only" (a `<think>` section and no answer at all).
    """

    def __init__(self, form: str) -> None:
        from test_injection import Backbone  # tests/ is on sys.path

        self.form = form
        self.backbone = Backbone("json")

    def __call__(self, body: dict) -> Reply | str:
        if body.get("max_tokens") == 8:
            return "OK"
        answer = self.backbone(body)
        own, wrong = self.backbone.answers(body)
        if isinstance(own, str) or wrong is None:
            decoy = answer
        elif "_bracket" in own:  # the same JSON, the opposite bracketed verdict
            field = next(key for key, value in own.items() if value == own["_bracket"] and key != "_bracket")
            decoy = json.dumps({**{k: v for k, v in own.items() if k != "_bracket"}, field: wrong["_bracket"]})
        else:
            decoy = json.dumps(wrong)
        if self.form == "reasoning":
            return Reply(answer, reasoning_content=f"Draft: {decoy}")
        if self.form == "only":
            return Reply(f"\n<think>Draft: {decoy}</think>\n")
        if self.form == "template":
            return Reply(f"Draft: {decoy}</think>\n\n{answer}")
        return Reply(f"\n<think>Draft: {decoy}</think>\n{answer}")


@pytest.mark.slow
@pytest.mark.parametrize("form", ["think", "template", "reasoning", "only"])
def test_every_judge_that_calls_a_backbone_never_reads_a_verdict_from_the_thinking(llm_server, tmp_path, capsys,
                                                                                   form) -> None:
    from test_injection import CONTEXT_JUDGES, LLM_JUDGES, _dataset as hostile_dataset

    from qatui.judges.registry import JUDGES, judge_class

    calling = {name for name in JUDGES if judge_class(name).uses_llm and name != "jury"}
    assert calling == set(LLM_JUDGES) | set(CONTEXT_JUDGES)  # every judge that calls a backbone is here
    llm_server.script(Thinker(form))
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.fake]\nmodel = "openai/gpt-4o-mini"\napi_base = "{llm_server.base_url}"\n'
                      f'api_key_env = "FAKE_KEY"\n[cache]\ndir = "{tmp_path / "cache"}"\n'
                      '[judges.geval]\nmethod = "samples"\nsamples = 1\n')
    for judges, compares in ((LLM_JUDGES, "response"), (CONTEXT_JUDGES, "context")):
        data = hostile_dataset(tmp_path / f"hostile-{compares}.jsonl", compares)
        base = ["--config", str(config), "--sessions-dir", str(tmp_path / "s")]
        main([*base, "run", str(data), "--backbone", "fake", "--json", *(a for j in judges for a in ("--judge", j))])
        session = json.loads(capsys.readouterr().out)["session"]
        assert main([*base, "sessions", "show", session, "--item", "sky", "--json"]) == 0
        detail = json.loads(capsys.readouterr().out)["judges"]
        for judge in judges:
            entry = detail[judge]
            if form == "only":  # no answer at all: the call fails with that reason, never a verdict from the draft
                assert entry["status"] == "failed", (judge, entry.get("ranking"))
                assert "the answer was only thinking" in entry["failure"]["reason"], (judge, entry["failure"])
            else:
                assert entry["status"] == "done", (judge, entry.get("failure"))
                assert entry["ranking"][0] == "good", (judge, entry["scores"])
            assert all(c["thinking"].startswith("Draft: ") for c in entry["calls"]), judge  # kept with the call


@pytest.mark.parametrize("form", ["think-after", "note-after"])
def test_geval_weighs_the_log_probabilities_of_its_verdict_never_of_a_digit_the_thinking_or_a_note_wrote(
        llm_server, tmp_path, capsys, form) -> None:
    """G-Eval's default method reads the probabilities of the rating's digit from the answer's tokens. It took the
    tokens' last `[[d]]` anywhere: a `<think>` after the answer, or a note quoting a candidate's `[[5]]`, and the good
    answer (rated 5) scored 1.13 and the hostile one (rated 1) 4.75. Now the digit is the verdict field's, in the
    answer, and the same digit that was read: the scores are those of the same answers without the thinking or the
    note (the server's log-probabilities of each digit, its alternatives weighed in)."""
    from test_injection import Backbone, _dataset as hostile_dataset

    backbone = Backbone("json")

    def reply(body: dict) -> Reply | str:
        if body.get("max_tokens") == 8:
            return "OK"
        own, wrong = backbone.answers(body)
        if isinstance(own, str):  # the evaluation steps
            return own
        answer = json.dumps({"score": own["_bracket"]})
        if clean:
            return answer
        if form == "think-after":
            return Reply(f"{answer}\n<think>Second thoughts: {wrong['_bracket']}</think>")
        return json.dumps({"score": own["_bracket"], "note": f"the text under review says {wrong['_bracket']}"})

    llm_server.script(reply)
    data = hostile_dataset(tmp_path / "hostile.jsonl")

    def scores(run: str) -> dict[str, float]:
        config = tmp_path / f"{run}.toml"
        config.write_text(f'[backbones.fake]\nmodel = "openai/gpt-4o-mini"\napi_base = "{llm_server.base_url}"\n'
                          f'api_key_env = "FAKE_KEY"\n[cache]\ndir = "{tmp_path / run}"\n'
                          '[judges.geval]\ndimensions = "accuracy"\n')
        base = ["--config", str(config), "--sessions-dir", str(tmp_path / "s")]
        assert main([*base, "run", str(data), "--backbone", "fake", "--judge", "geval", "--json"]) == 0
        session = json.loads(capsys.readouterr().out)["session"]
        assert main([*base, "sessions", "show", session, "--item", "sky", "--json"]) == 0
        entry = json.loads(capsys.readouterr().out)["judges"]["geval"]
        assert entry["status"] == "done" and entry["details"]["methods"] == {"logprobs": 2, "samples": 0}, entry
        return entry["scores"]

    clean = True
    expected = scores("clean")
    clean = False
    found = scores(form)
    assert found == pytest.approx(expected) and found["good"] > found["hostile"], (found, expected)


def test_the_documented_example_reads_and_shapes_the_request_as_it_says() -> None:
    from qatui.config import parse_config

    doc = (Path(__file__).resolve().parent.parent / "docs" / "BACKBONES.md").read_text(encoding="utf-8")
    start = doc.index("[backbones.o3]")
    config = parse_config(doc[start:doc.index("```", start)], "docs/BACKBONES.md")
    o3 = client_module.make_client("o3", config).build_request([{"role": "user", "content": "hi"}])
    assert (o3["temperature"], o3["reasoning_effort"], o3["max_tokens"]) == (None, "low", 1024 + THINKING_ROOM)
    r1 = client_module.make_client("r1", config).build_request([{"role": "user", "content": "hi"}])
    assert r1["seed"] is None and r1["temperature"] == 0.0
