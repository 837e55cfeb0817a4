"""The Judge Lab, driven by Pilot: open a judge file, edit a word, run it on labelled items beside the saved
version (a scripted loopback backbone), read the figures and the flipped items, save it with its history."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fakes import ScriptedLLM, is_preflight, scripted_resources, settle, wait_until
from textual.widgets import DataTable, Static, TextArea
from textual.widgets.text_area import Selection
from tui_support import freeze_time, write_sums

from qatui.config import Config, load_config
from qatui.store.judge_versions import JudgeHistory
from qatui.store.session import SessionStore
from qatui.tui.app import QatuiApp
from qatui.tui.screens.confirm import ConfirmScreen
from qatui.tui.screens.lab import JudgeLabScreen

JUDGE = '''name = "sums"
description = "Grades an answer to a sum"
kind = "score"
criteria = "Grade the answer for its style."

[scale]
min = 0
max = 10

[prompts]
system = "You grade one answer. {criteria} Reply with a score from {min} to {max} as [[score]]."
user = """Question: {question}
{answer}
Your score:"""
'''
"""A score judge; the scripted backbone grades sums well on most items once its criteria say "arithmetic"."""
N_ITEMS = 12
SIZES = [(80, 24), (120, 40)]


def score_for(system: str, prompt: str) -> int:
    """The scripted grade: the saved judge ("style") prefers the right sum on items 0, 3, 6, 9 only; the edited one
    ("arithmetic") on every other item. So the edit makes 8 items right and 4 wrong: Δ accuracy +4/12."""
    i = int(re.search(r"What is (\d+) plus", prompt)[1])
    right_sum = int(re.search(r"It is (\d+)\.", prompt)[1]) == 2 * i
    prefers_right = (i % 3 != 0) if "arithmetic" in system else (i % 3 == 0)
    return 9 if right_sum == prefers_right else 2


def scripted_reply(call) -> dict:
    """ScriptedLLM's answer to a judge-file call."""
    return {"score": f"[[{score_for(call.system, call.content)}]]"}


def server_reply(body: dict) -> str:
    """The loopback server's answer: the preflight's OK, else the grade as the score schema's JSON."""
    if is_preflight(body):
        return "OK"
    messages = body["messages"]
    return json.dumps({"score": f"[[{score_for(messages[0]['content'], messages[-1]['content'])}]]"})


@pytest.fixture
def lab_dir(tmp_path, monkeypatch) -> Path:
    """A working folder (also HOME) with sums.toml (the judge) and sums.jsonl (12 items people labelled)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    freeze_time(monkeypatch)
    (tmp_path / "sums.toml").write_text(JUDGE)
    write_sums(tmp_path / "sums.jsonl", N_ITEMS, gold=True)
    return tmp_path


def scripted_app(folder: Path) -> QatuiApp:
    """The app with the lab open on sums.toml and sums.jsonl, its backbone the scripted one."""
    config = Config()
    return QatuiApp(config, SessionStore(folder / "sessions"), lab=("sums.toml", "sums.jsonl"),
                    make_resources=lambda: scripted_resources(config, llm=ScriptedLLM(scripted_reply)))


def lab(app) -> JudgeLabScreen | None:
    """The lab, when it is the screen."""
    return app.screen if isinstance(app.screen, JudgeLabScreen) else None


def opened(app) -> bool:
    """The lab shows its judge, checked, and its dataset."""
    screen = lab(app)
    return (screen is not None and screen.opened is not None and screen.dataset is not None
            and screen.judge_name == "sums")


def status(app) -> str:
    """The lab's status line."""
    return str(lab(app).query_one("#status", Static).render())


async def replace_word(pilot, old: str, new: str) -> None:
    """Select `old` in the editor and type `new` over it, as a user does."""
    editor = lab(pilot.app).query_one("#editor", TextArea)
    row, line = next((r, line) for r, line in enumerate(editor.text.splitlines()) if old in line)
    col = line.index(old)
    editor.focus()
    editor.selection = Selection((row, col), (row, col + len(old)))
    await pilot.press(*new)


def sessions(folder: Path) -> list[str]:
    """The session folders written so far."""
    root = folder / "sessions"
    return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


async def test_an_invalid_edit_shows_the_loaders_line_and_is_neither_run_nor_saved(lab_dir) -> None:
    app = scripted_app(lab_dir)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: opened(app), "the lab to open")
        await replace_word(pilot, "{answer}", "{answr}")
        await wait_until(pilot, lambda: "answr" in status(app), "the loader's error")
        line = status(app)
        assert line.startswith("~/sums.toml:12: prompts.user: unknown placeholder {answr}"), line  # file, line, key
        assert "\n" not in line
        await pilot.press("ctrl+r")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not [w for w in app.workers if w.group in ("check", "save") and not w.is_finished])
        await settle(pilot)
        assert sessions(lab_dir) == []  # not run
        assert (lab_dir / "sums.toml").read_text() == JUDGE  # not saved
        assert JudgeHistory().records("sums") == []


async def test_save_writes_the_file_and_keeps_each_version_in_the_history(lab_dir) -> None:
    app = scripted_app(lab_dir)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: opened(app), "the lab to open")
        await replace_word(pilot, "style", "arithmetic")
        assert "modified" in lab(app).sub_title
        await pilot.press("ctrl+s")
        edited = JUDGE.replace("style", "arithmetic")
        await wait_until(pilot, lambda: (lab_dir / "sums.toml").read_text() == edited, "the file to be saved")
        await wait_until(pilot, lambda: len(JudgeHistory().records("sums")) == 1, "the version in the history")
        await replace_word(pilot, "arithmetic", "sums")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: len(JudgeHistory().records("sums")) == 2, "the second version")
        assert (lab_dir / "sums.toml").read_text() == JUDGE.replace("style", "sums")
        await wait_until(pilot, lambda: lab(app).query_one("#versions", DataTable).row_count == 2, "the history tab")
        assert "modified" not in lab(app).sub_title
    versions = {r.version for r in JudgeHistory().records("sums")}
    assert len(versions) == 2  # one word changed: another version


async def test_a_file_edited_outside_is_not_overwritten_without_asking(lab_dir) -> None:
    app = scripted_app(lab_dir)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: opened(app), "the lab to open")
        outside = JUDGE.replace("its style", "its style and length")
        (lab_dir / "sums.toml").write_text(outside)
        await replace_word(pilot, "style", "arithmetic")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("n")
        await wait_until(pilot, lambda: lab(app) is not None, "the lab again")
        assert (lab_dir / "sums.toml").read_text() == outside
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question again")
        await pilot.press("y")
        edited = JUDGE.replace("style", "arithmetic")
        await wait_until(pilot, lambda: (lab_dir / "sums.toml").read_text() == edited, "the overwrite asked for")
