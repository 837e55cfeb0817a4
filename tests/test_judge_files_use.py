"""Judge files where qatui finds them: the config's `[judges.NAME] file`, the user folder, `qatui judges`, New run
and Spot check, `qatui table`; and G-Eval weighting of a score judge's scale by log-probabilities."""

from __future__ import annotations

import json
import re
import math

import pytest
from fakes import ScriptedLLM, is_preflight, wait_until
from test_judge_files import CHECKLIST, SCORE, _config, _data, _run, _session, responder

from qatui.cli import main
from qatui.config import Config, load_config
from qatui.store.session import SessionStore


@pytest.fixture
def user_folder(tmp_path, monkeypatch):
    """`$XDG_CONFIG_HOME/qatui/judges`, the user's judge files, in this test's own folder."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    folder = tmp_path / "xdg-config" / "qatui" / "judges"
    folder.mkdir(parents=True)
    return folder


def test_a_config_entry_names_a_file_relative_to_the_config_and_its_options_override_the_files(
        tmp_path, capsys, monkeypatch, llm_server, user_folder) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    llm_server.script(responder())
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "concise.toml").write_text(SCORE + "\n[options]\ntemperature = 0.3\n")
    config = _config(tmp_path, llm_server, '[judges.concise]\nfile = "mine/concise.toml"\ntemperature = 0.7\n')
    monkeypatch.chdir(user_folder)  # a path relative to the config file, not to the working directory
    done = _run(capsys, config, tmp_path, "run", str(_data(tmp_path)), "--judge", "concise")
    assert done["judges"]["concise"]["coverage"]["scored"] == 2
    asked = [b for b in llm_server.requests if not is_preflight(b)]
    assert asked and {b["temperature"] for b in asked} == {0.7}
    assert _session(tmp_path, done["session"]).meta["judges"]["concise"]["temperature"] == 0.7


def test_the_user_folder_s_files_are_judges_by_their_stem_and_qatui_judges_lists_each_with_its_file(
        tmp_path, capsys, monkeypatch, llm_server, user_folder) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    monkeypatch.setenv("COLUMNS", "400")
    llm_server.script(responder())
    (user_folder / "concise.toml").write_text(SCORE)
    (user_folder / "broken.toml").write_text('name = "broken"\nkind = "grade"\n')
    (user_folder / "misnamed.toml").write_text(CHECKLIST)  # its name is "checks"
    assert main(["judges"]) == 0
    listed = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert str(user_folder / "concise.toml") in listed["concise"] and "score:" in listed["concise"]
    assert "minoseval:pointwise" in listed["pointwise"]  # the built-ins' table as before
    assert "not usable" in listed["broken"] and "unknown kind 'grade'" in listed["broken"]
    done = _run(capsys, _config(tmp_path, llm_server), tmp_path, "run", str(_data(tmp_path)), "--judge", "concise")
    assert done["judges"]["concise"]["coverage"]["scored"] == 2
    code = main(["--config", str(tmp_path / "c.toml"), "run", str(_data(tmp_path)), "--judge", "misnamed"])
    said = capsys.readouterr().err
    assert code == 2 and f"{user_folder / 'misnamed.toml'}:1: name: the file defines 'checks'" in said


async def test_new_run_and_spot_check_offer_the_user_s_judge_files_and_leave_a_broken_one_out(
        tmp_path, user_folder) -> None:
    from qatui.tui.app import QatuiApp
    from qatui.tui.screens.new_run import NewRunScreen
    from qatui.tui.screens.spot_check import SpotCheckScreen
    from qatui.tui.widgets.judge_list import JudgeList

    (user_folder / "concise.toml").write_text(SCORE)
    (user_folder / "broken.toml").write_text('name = "broken"\nkind = "grade"\n')
    app = QatuiApp(Config(), SessionStore(tmp_path / "sessions"))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("n", "f3")
        await wait_until(pilot, lambda: isinstance(app.screen, NewRunScreen) and app.screen.judge_classes)
        screen = app.screen
        names = [screen.query_one(JudgeList).get_option_at_index(i).value
                 for i in range(screen.query_one(JudgeList).option_count)]
        assert "concise" in names and "broken" not in names and "pointwise" in names
        assert screen.judges["concise"].file.text == SCORE
        await pilot.press("escape")
        app.open_spot_check()
        await wait_until(pilot, lambda: isinstance(app.screen, SpotCheckScreen) and bool(app.screen.judges))
        assert "concise" in app.screen.judges and "broken" not in app.screen.judges


def test_table_takes_a_judge_file_and_reuses_its_run_only_for_the_same_text(
        tmp_path, capsys, monkeypatch, llm_server) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    llm_server.script(responder())
    judge = tmp_path / "concise.toml"
    judge.write_text(SCORE)
    config = _config(tmp_path, llm_server)
    argv = ["table", str(_data(tmp_path)), "--judge", str(judge)]
    _run(capsys, config, tmp_path, *argv)
    first = len(SessionStore(tmp_path / "s").list())
    _run(capsys, config, tmp_path, *argv)
    assert first == 1 and len(SessionStore(tmp_path / "s").list()) == 1  # the same file: its session reused
    judge.write_text(SCORE.replace("for concision", "for directness"))
    _run(capsys, config, tmp_path, *argv)
    assert len(SessionStore(tmp_path / "s").list()) == 2  # one word changed: run again, never the old verdicts


def _tokens(text: str, top: dict[str, float]) -> list[dict]:
    """Fake log-probabilities: one token per character; the digit's alternatives are `top` (probabilities)."""
    digit = text.index("[[") + 2
    return [{"token": ch, "logprob": 0.0, "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in top.items()]
             if i == digit else []} for i, ch in enumerate(text)]


async def test_a_scale_with_logprobs_weighs_the_score_by_the_digits_probabilities() -> None:
    from qatui.data.model import Item
    from qatui.engine.runner import Engine
    from qatui.judges.files import parse_judge_text
    from qatui.judges.registry import make_judge
    from qatui.judges.resources import Resources

    def reply(call):
        assert call.logprobs == 5
        text = '{"score": "[[4]]"}'
        if "Sugar" in call.content:
            return text, None  # this provider gave none for this call: the digit written stands
        return text, _tokens(text, {"4": 0.4, " 5": 0.4, "3": 0.2, "x": 0.1})  # "x" is no score: left out

    llm = ScriptedLLM(reply, model="scripted/logprobs")
    file = parse_judge_text(SCORE.replace("max = 5", "max = 5\nlogprobs = true"), "weighted.toml")
    judge = make_judge("concise", {}, Resources(Config(), llm=llm), file=file)
    item = Item(id="q", question="What is salt?", references=["NaCl"],
                candidates={"good": "It is NaCl.", "bad": "Sugar."})
    events = [e async for e in Engine([item], [judge], seed=0, concurrency=1).run()]
    (verdict,) = [e for e in events if e.type == "verdict"]
    assert verdict.scores == pytest.approx({"good": 4 * 0.4 + 5 * 0.4 + 3 * 0.2, "bad": 4.0})
    assert verdict.details["weighted"]["Response 1" if verdict.order[0] == "good" else "Response 2"] is not None
    assert len(llm.requests) == 2


def test_a_judge_file_named_as_another_judge_asked_is_refused_before_any_work(
        tmp_path, capsys, monkeypatch, llm_server, user_folder) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    (user_folder / "concise.toml").write_text(SCORE)
    copy = tmp_path / "copy.toml"
    copy.write_text(SCORE)
    code = main(["--config", str(_config(tmp_path, llm_server)), "--sessions-dir", str(tmp_path / "s"), "run",
                 str(_data(tmp_path)), "--judge", "concise", "--judge", str(copy)])
    said = capsys.readouterr().err
    assert code == 2 and "both called 'concise'" in " ".join(said.split())
    assert llm_server.n_requests == 0 and not (tmp_path / "s").exists()


@pytest.mark.parametrize("form", ["think", "only", "cut"])
def test_a_judge_file_never_reads_its_verdict_from_the_thinking_or_a_cut_off_answer(
        tmp_path, capsys, monkeypatch, llm_server, form) -> None:
    from llm_server import Reply

    monkeypatch.setenv("FAKE_KEY", "sk-test")
    draft, answer = json.dumps({"score": "[[1]]"}), json.dumps({"score": "[[5]]"})

    def reply(body: dict):
        if is_preflight(body):
            return "OK"
        if form == "cut":
            return Reply(answer, finish_reason="length")
        return Reply(f"\n<think>Draft: {draft}</think>\n" + ("" if form == "only" else answer))

    llm_server.script(reply)
    judge = tmp_path / "concise.toml"
    judge.write_text(SCORE)
    code = main(["--config", str(_config(tmp_path, llm_server)), "--sessions-dir", str(tmp_path / "s"), "run",
                 str(_data(tmp_path)), "--judge", str(judge), "--json"])
    done = json.loads(capsys.readouterr().out)
    session = _session(tmp_path, done["session"])
    if form == "think":
        assert code == 0 and {s for v in session.verdicts("concise").values() for s in v.scores.values()} == {5.0}
    else:  # no verdict at all: every item fails with the reason, never a score from the draft or the cut answer
        assert done["judges"]["concise"]["coverage"]["failed"] == 2 and session.verdicts("concise") == {}


async def test_few_shot_examples_are_earlier_turns_fenced_like_the_real_one_and_a_language_variant_replaces_keys(
        ) -> None:
    from qatui.data.model import Item
    from qatui.engine.runner import Engine
    from qatui.judges.files import JudgeFileError, parse_judge_text
    from qatui.judges.registry import make_judge
    from qatui.judges.resources import Resources
    from qatui.llm.fence import block_texts

    text = SCORE + '''
[[prompts.examples]]
question = "What is 1 plus 1?"
answer = "2."
score = "[[5]]"

[prompts.zh]
system = "为一个回答打分：{criteria} 从 {min} 到 {max}，写成 [[3]]。"
'''
    llm = ScriptedLLM(lambda call: {"score": "[[3]]"}, model="scripted/shots")
    judge = make_judge("concise", {}, Resources(Config(), llm=llm), file=parse_judge_text(text, "shots.toml"))
    items = [Item(id="en", question="What is salt?", references=["NaCl"], candidates={"a": "NaCl."}),
             Item(id="zh", question="盐是什么？", references=["氯化钠"], candidates={"a": "氯化钠。"})]
    events = [e async for e in Engine(items, [judge], seed=0, concurrency=1).run()]
    assert len([e for e in events if e.type == "verdict"]) == 2
    by_question = {call.messages[-1]["content"].split("\n")[0]: call.messages for call in llm.requests}
    english, chinese = by_question["Question: What is salt?"], by_question["Question: 盐是什么？"]
    assert [m["role"] for m in english] == ["system", "user", "assistant", "user"]
    assert json.loads(english[2]["content"]) == {"score": "[[5]]"}
    assert block_texts(english[1]["content"]) == {"Answer": "2."}  # the example's answer fenced as the real one
    assert english[0]["content"].startswith("Grade one answer for concision.")
    assert chinese[0]["content"].startswith("为一个回答打分：A direct, correct answer is best. 从 1 到 5")
    assert chinese[-1]["content"].startswith("Question: 盐是什么？")  # the variant set no user: the default's
    with pytest.raises(JudgeFileError, match=r"shots\.toml:\d+: prompts\.examples: an example needs score"):
        parse_judge_text(text.replace('score = "[[5]]"\n', ""), "shots.toml")
    # an example's verdict is read as a real answer's: one the judge could not read teaches the model to write it
    for shown, why in (('"[[9]]"', "outside 1.00-5.00"), ('"five"', "no [[...]] verdict")):
        with pytest.raises(JudgeFileError, match=r"shots\.toml:\d+: prompts\.examples.*score: the example's verdict "
                                                 rf"cannot be read as this judge reads one: .*{re.escape(why)}"):
            parse_judge_text(text.replace('score = "[[5]]"', f"score = {shown}"), "shots.toml")


async def test_a_reask_with_literal_braces_is_sent_as_written_with_the_reason() -> None:
    from qatui.data.model import Item
    from qatui.engine.runner import Engine
    from qatui.judges.files import parse_judge_text
    from qatui.judges.registry import make_judge
    from qatui.judges.resources import Resources

    text = SCORE.replace('reference = """Reference', 'reask = """Unreadable ({reason}); reply {{"score": "[[{max}]]"}}."""\n'
                                                     'reference = """Reference')
    answers = iter(['{"score": "[[9]]"}', '{"score": "[[3]]"}'])
    llm = ScriptedLLM(lambda call: next(answers), model="scripted/reask", parse_text=False)
    judge = make_judge("concise", {}, Resources(Config(), llm=llm), file=parse_judge_text(text, "reask.toml"))
    item = Item(id="q", question="What is salt?", references=["NaCl"], candidates={"a": "NaCl."})
    events = [e async for e in Engine([item], [judge], seed=0, concurrency=1).run()]
    (verdict,) = [e for e in events if e.type == "verdict"]
    assert verdict.scores == {"a": 3.0}
    assert llm.requests[1].messages[-1]["content"] == \
        'Unreadable ([[9]] is outside 1.00-5.00); reply {"score": "[[5]]"}.'
