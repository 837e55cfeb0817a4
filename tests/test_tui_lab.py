"""The Judge Lab, driven by Pilot: open a judge file, edit a word, run it on labelled items beside the saved
version (a scripted loopback backbone), read the figures and the flipped items, save it with its history."""

from __future__ import annotations

import json
import os
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


def toasts(app) -> list[str]:
    """The titles of the notifications shown."""
    return [n.title for n in app._notifications]  # noqa: SLF001 - no public list of the toasts


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
        assert line == "~/sums.toml:13: prompts.user: unknown placeholder {answr}", line  # file, line, key
        assert "\n" not in line
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: "Not run: the judge file does not load" in toasts(app), "the refusal to run")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "Not saved: the judge file does not load" in toasts(app), "the refusal to save")
        await settle(pilot, drop_toasts=False)
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


def figures_shown(app) -> bool:
    """The lab has drawn a run's figures: the saved row, the edited row and their difference."""
    screen = lab(app)
    return screen is not None and screen.query_one("#figures", DataTable).row_count == 3


async def edit_and_run(pilot, app, what: str = "the figures") -> None:
    """Wait for the lab to open, make the edit the run tests make ("style" to "arithmetic"), run it with ctrl+r, and
    wait for its figures (`what` names them in a timeout's message)."""
    await wait_until(pilot, lambda: opened(app), "the lab to open")
    await replace_word(pilot, "style", "arithmetic")
    await pilot.press("ctrl+r")
    await wait_until(pilot, lambda: figures_shown(app), what, timeout=60)


def cells(table: DataTable) -> list[list[str]]:
    """A table's rows as plain strings."""
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


async def test_an_edited_word_runs_beside_the_saved_version_with_figures_and_flipped_items(lab_dir) -> None:
    app = scripted_app(lab_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: opened(app), "the lab to open")
        await replace_word(pilot, "style", "arithmetic")
        await pilot.press("f3")
        screen = lab(app)
        screen.query_one("#n").value = "12"
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: figures_shown(app), "the figures", timeout=60)
        rows = cells(screen.query_one("#figures", DataTable))
        assert [row[0] for row in rows] == ["before", "this", "Δ paired"]
        assert rows[0][3] == f"{4 / 12:.3f}" and rows[1][3] == f"{8 / 12:.3f}"
        assert rows[2][3] == f"{4 / 12:+.3f}" and rows[2][4].startswith("[")
        flips = cells(screen.query_one("#flips", DataTable))
        assert sorted((row[0], row[1]) for row in flips) == sorted(
            [(f"q{i}", "now right") for i in range(N_ITEMS) if i % 3] + [(f"q{i}", "now wrong") for i in range(0, N_ITEMS, 3)])
        assert len(sessions(lab_dir)) == 2  # the saved version and the edited one, each a real session


async def test_a_flipped_item_opens_to_its_transcript(lab_dir) -> None:
    from qatui.tui.screens.session import SessionScreen
    from qatui.tui.widgets.item_browser import ItemBrowser

    app = scripted_app(lab_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await edit_and_run(pilot, app, "the figures")
        lab_screen = lab(app)
        flips = lab_screen.query_one("#flips", DataTable)
        assert flips.has_focus
        await pilot.press("down", "enter")  # the second flipped item
        wanted = str(flips.get_row_at(1)[0])

        def at_item() -> bool:
            screen = app.screen
            return (isinstance(screen, SessionScreen) and screen.state is not None
                    and (screen.query_one(ItemBrowser).selected() or ("",))[0] == wanted
                    and screen.query_one(ItemBrowser).watched() is not None)

        await wait_until(pilot, at_item, f"the session at {wanted} with its transcript")
        assert app.screen.session_id == lab_screen.result.edited.session_id  # the edited version's session
        transcript = app.screen.query_one("TranscriptPanel")
        await wait_until(pilot, lambda: "[[9]]" in transcript_text(transcript), "the backbone's answers")


def transcript_text(panel) -> str:
    """Every text the transcript panel draws."""
    return " ".join(str(w.render()) for w in panel.query("Static"))


async def test_a_seeded_sample_runs_over_the_loopback_server_through_the_real_client(lab_dir, llm_server,
                                                                                      monkeypatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    llm_server.script(server_reply)
    config_path = lab_dir / "c.toml"
    config_path.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{llm_server.base_url}"\n'
                           f'api_key_env = "FAKE_KEY"\n[models]\ndefault_backbone = "fake"\n'
                           f'[cache]\ndir = "{lab_dir / "cache"}"\n')
    config = load_config(config_path)
    app = QatuiApp(config, SessionStore(lab_dir / "sessions"), lab=("sums.toml", "sums.jsonl"))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: opened(app), "the lab to open")
        await replace_word(pilot, "style", "arithmetic")
        screen = lab(app)
        screen.query_one("#n").value = "6"
        screen.query_one("#seed").value = "7"
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: figures_shown(app), "the figures", timeout=90)
        result = screen.result
        assert len(result.items) == 6 and set(result.items) < {f"q{i}" for i in range(N_ITEMS)}
        assert not result.saved.failed and not result.edited.failed  # no item failed
        expected_flips = {i for i in result.items if int(i[1:]) % 3}
        assert set(result.comparison.now_right) == expected_flips
        assert set(result.comparison.now_wrong) == set(result.items) - expected_flips
        assert result.saved.version != result.edited.version
        asked = len(llm_server.requests)
        await pilot.press("ctrl+r")  # the same text on the same items: nothing is asked again
        await settle(pilot, lambda: lab(app).result is not result)
        assert len(llm_server.requests) == asked
    assert len(sessions(lab_dir)) == 2


def lab_ready(pilot) -> bool:
    """The lab opened on its judge and dataset, the text checked."""
    return opened(pilot.app) and lab(pilot.app)._checked == lab(pilot.app).query_one("#editor", TextArea).text


async def opened_lab(pilot) -> None:
    """The lab at rest over sums.toml and sums.jsonl, the editor's cursor at the start."""
    await settle(pilot, lambda: lab_ready(pilot), "the lab")


async def invalid_edit(pilot) -> None:
    """An unknown placeholder typed into the user template: the loader's line on the status line."""
    await opened_lab(pilot)
    await replace_word(pilot, "{answer}", "{answr}")
    await settle(pilot, lambda: lab_ready(pilot) and lab(pilot.app).problem, "the loader's error")


async def after_a_run(pilot) -> None:
    """One word edited and run on every item beside the saved version: the Run tab with its figures and flips."""
    await opened_lab(pilot)
    await replace_word(pilot, "style", "arithmetic")
    await pilot.press("ctrl+r")
    await settle(pilot, lambda: figures_shown(pilot.app), "the figures")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_lab_snapshot_opened(snap_compare, lab_dir, size) -> None:
    assert snap_compare(scripted_app(lab_dir), run_before=opened_lab, terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_lab_snapshot_invalid_edit(snap_compare, lab_dir, size) -> None:
    assert snap_compare(scripted_app(lab_dir), run_before=invalid_edit, terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_lab_snapshot_after_a_run(snap_compare, lab_dir, size) -> None:
    assert snap_compare(scripted_app(lab_dir), run_before=after_a_run, terminal_size=size)


async def test_from_home_l_opens_an_empty_lab_where_a_built_ins_copy_is_opened_and_saved(lab_dir) -> None:
    from fakes import run_from_palette

    from qatui.judges.files.find import user_judges_dir
    from qatui.tui.screens.home import HomeScreen

    config = Config()
    app = QatuiApp(config, SessionStore(lab_dir / "sessions"))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen), "Home")
        await pilot.press("l")
        await wait_until(pilot, lambda: lab(app) is not None, "the lab from l")
        assert app.focused is lab(app).query_one("#judge")
        assert "Open a judge file" in status(app)
        await pilot.press("ctrl+s")  # nothing to save into: said, never silent
        await wait_until(pilot, lambda: any(n.message == "Open a judge first." for n in app._notifications),
                         "the hint")
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen), "Home again")
        await run_from_palette(pilot, "Judge lab")
        await wait_until(pilot, lambda: lab(app) is not None, "the lab from the palette")
        await pilot.press(*"pointwise", "enter")
        target = user_judges_dir() / "my-pointwise.toml"
        await wait_until(pilot, lambda: lab(app).opened is not None and lab(app).judge_name == "my-pointwise",
                         "the built-in's copy")
        assert lab(app).opened.path == target and not target.exists()
        await pilot.press("ctrl+s")
        await wait_until(pilot, target.exists, "the copy saved in the user's judges folder")
        assert target.read_text() == lab(app).query_one("#editor", TextArea).text
        assert [r.note for r in JudgeHistory().records("my-pointwise")] == [str(target).replace(str(lab_dir), "~")]


def test_qatui_lab_refuses_a_missing_judge_file_or_dataset_in_one_line(lab_dir, capsys) -> None:
    from qatui.cli import main

    assert main(["lab", "missing.toml", "sums.jsonl"]) == 2
    assert main(["lab", "sums.toml", "missing.jsonl"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2 and "missing.toml" in lines[0] and "missing.jsonl" in lines[1], lines
    os.mkfifo(lab_dir / "pipe.toml")  # named as what it is ("no such judge file" before), never opened
    (lab_dir / "folder.toml").mkdir()
    assert main(["lab", "pipe.toml", "sums.jsonl"]) == 2
    assert main(["lab", "folder.toml", "sums.jsonl"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2 and "pipe.toml: is a named pipe (FIFO), not a regular file" in lines[0], lines
    assert "folder.toml: is a folder, not a regular file" in lines[1], lines


@pytest.mark.parametrize("stop", ["waiting for the calls in flight", "now, at a second esc"])
async def test_esc_cancels_a_run_in_progress_and_its_session_is_kept_as_cancelled(lab_dir, stop: str) -> None:
    """esc stops the run as the CLI's first Ctrl-C: nothing new starts, the calls held at the gate are waited for
    (their answers kept; it cancelled them, and a rerun paid for them again), and no item starts after them; esc
    again cancels it at once."""
    from fakes import Gate

    config, gate = Config(), Gate(permits=3)
    app = QatuiApp(config, SessionStore(lab_dir / "sessions"), lab=("sums.toml", "sums.jsonl"),
                   make_resources=lambda: scripted_resources(config, llm=ScriptedLLM(scripted_reply, gate=gate)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: opened(app), "the lab to open")
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: gate.taken == 3 and "evaluating" in status(app), "the run under way")
        assert "3 of 12" in status(app) or "of 12 items" in status(app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: "stopping: waiting for the model calls in flight" in status(app),
                         "the stop said")
        assert lab(app)._run_future is not None  # the call held at the gate is waited for
        if stop == "waiting for the calls in flight":
            gate.release(100)  # the items in flight finish; none starts after them
        else:
            await pilot.press("escape")
        await wait_until(pilot, lambda: lab(app)._run_future is None, "the run cancelled")
        if stop == "waiting for the calls in flight":
            assert gate.taken < 3 + 12  # not every item was judged: the stop started none after those in flight
        assert lab(app) is not None  # esc cancelled the run; it did not leave the lab
        assert lab(app).result is None
    [session] = sessions(lab_dir)
    assert SessionStore(lab_dir / "sessions").open(session).meta["status"] == "cancelled"


async def test_leaving_with_edits_not_saved_asks_first(lab_dir) -> None:
    app = scripted_app(lab_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: opened(app), "the lab to open")
        await replace_word(pilot, "style", "arithmetic")
        await pilot.press("escape")  # from inside the editor
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("n")
        await wait_until(pilot, lambda: lab(app) is not None, "the lab again")
        assert "arithmetic" in lab(app).query_one("#editor", TextArea).text
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question again")
        await pilot.press("y")
        await wait_until(pilot, lambda: lab(app) is None and not isinstance(app.screen, ConfirmScreen), "Home")
    assert (lab_dir / "sums.toml").read_text() == JUDGE


async def test_the_palette_s_home_and_compare_and_ctrl_q_ask_before_dropping_edits_not_saved(lab_dir) -> None:
    """Every way out of the lab asks first, as esc does: the palette's Home and Compare marked sessions, and
    ctrl+q (they closed it, and the edits with it, without a word); no keeps the lab and its edits."""
    from fakes import run_from_palette, settle

    from qatui.tui.screens.home import HomeScreen

    app = scripted_app(lab_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: opened(app), "the lab to open")
        await replace_word(pilot, "style", "arithmetic")
        for way_out in ("Home", "Compare marked sessions", "ctrl+q"):
            if way_out == "ctrl+q":
                await pilot.press("ctrl+q")
            else:
                await run_from_palette(pilot, way_out)
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), f"the question at {way_out}")
            await pilot.press("n")
            await wait_until(pilot, lambda: lab(app) is not None, f"the lab again after {way_out}")
            assert "arithmetic" in lab(app).query_one("#editor", TextArea).text and app.return_code is None
        await run_from_palette(pilot, "Home")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("y")
        await settle(pilot, lambda: isinstance(app.screen, HomeScreen), "Home, the edits dropped")  # loaded: l is Home's
        await pilot.press("l")  # a lab without edits: ctrl+q quits at once
        await wait_until(pilot, lambda: lab(app) is not None, f"an empty lab (the focus on {app.focused})")
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: app.return_code == 0, "the app to quit")
    assert (lab_dir / "sums.toml").read_text() == JUDGE


async def test_data_texts_are_drawn_as_text_never_as_markup(lab_dir) -> None:
    hostile = "[bold red]boom[/bold red] \x1b[31m"
    with (lab_dir / "sums.jsonl").open("w") as f:
        for i in range(4):
            f.write(json.dumps({"id": f"q{i}", "question": f"What is {i} plus {i}? {hostile}", "references": [f"{2 * i}"],
                                "candidates": {"a": f"It is {2 * i}.", "b": f"It is {2 * i + 1}."},
                                "gold": {"kind": "pairwise", "a": "a", "b": "b", "labels": ["A"]}}) + "\n")
    app = scripted_app(lab_dir)
    async with app.run_test(size=(100, 30)) as pilot:
        await edit_and_run(pilot, app, "the figures")
        await settle(pilot)
        table = lab(app).query_one("#flips", DataTable)
        drawn = "\n".join("".join(seg.text for seg in table.render_line(y)) for y in range(table.size.height))
        assert "[bold red]boom[/bold red] \\x1b[31m" in drawn, drawn  # the markup and the escape as written


async def test_the_n_most_disagreeing_items_are_those_the_saved_version_gets_wrong(lab_dir) -> None:
    from textual.widgets import Select

    app = scripted_app(lab_dir)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: opened(app), "the lab to open")
        await replace_word(pilot, "style", "arithmetic")
        screen = lab(app)
        screen.query_one("#how", Select).value = "disagreeing"
        screen.query_one("#n").value = "3"
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: figures_shown(app), "the figures", timeout=60)
        result = screen.result
        wrong_before = [f"q{i}" for i in range(N_ITEMS) if i % 3]  # where the saved version prefers the wrong sum
        assert len(result.items) == 3 and set(result.items) <= set(wrong_before)
        assert result.saved.value == 0.0 and result.edited.value == 1.0
        assert sorted(result.comparison.now_right) == sorted(result.items)


async def test_a_dataset_without_people_s_labels_is_refused_when_given(lab_dir) -> None:
    write_sums(lab_dir / "sums.jsonl", N_ITEMS, gold=False)
    app = scripted_app(lab_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: "Cannot use the dataset" in toasts(app), "the refusal")
        assert lab(app).dataset is None
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: app.focused is lab(app).query_one("#data"), "the dataset field, to fix it")
    assert sessions(lab_dir) == []


def data_info(app) -> str:
    """What the Run tab says of the dataset loaded ("N of M items labelled"; "" when none is)."""
    return str(lab(app).query_one("#data-info").render()).strip()


async def test_a_run_is_on_the_dataset_the_data_field_names_though_enter_was_not_pressed(lab_dir) -> None:
    """The Data field edited to another dataset without enter: the count of labelled items and the figures of the
    one before go at once, and ctrl+r loads the named dataset and runs on it (it ran on the one before, whose
    "12 of 12 items labelled" and figures stayed under the new name)."""
    write_sums(lab_dir / "four.jsonl", 4, gold=True)
    app = scripted_app(lab_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await edit_and_run(pilot, app, "the figures on sums.jsonl")
        assert len(lab(app).result.items) == N_ITEMS and data_info(app) == "12 of 12 items labelled"
        lab(app).query_one("#data").focus()
        await pilot.press("end", "ctrl+u", *"four.jsonl")  # no enter
        await wait_until(pilot, lambda: lab(app).query_one("#figures", DataTable).row_count == 0, "the figures gone")
        assert data_info(app) == "" and lab(app).dataset is None
        assert "is not loaded yet" in status(app), status(app)
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: figures_shown(app), "the figures on four.jsonl", timeout=60)
        assert sorted(lab(app).result.items) == ["q0", "q1", "q2", "q3"]
        assert data_info(app) == "4 of 4 items labelled"
    assert len(sessions(lab_dir)) == 4  # both versions on each dataset


async def test_the_status_line_counts_the_items_its_figure_stands_on_and_those_that_failed(lab_dir) -> None:
    """The edited version's backbone answers garbage on 4 of the 12 items: they fail, so its accuracy stands on 8
    (the figures' n); the status line says "on 8 of 12 items (4 failed)", never "on 12 items"."""
    from qatui.llm.errors import ParseError

    def reply(call):
        i = int(re.search(r"What is (\d+) plus", call.content)[1])
        if "arithmetic" in call.system and i in (1, 2, 4, 5):
            return ParseError("no score", text="garbage")
        return scripted_reply(call)

    config = Config()
    app = QatuiApp(config, SessionStore(lab_dir / "sessions"), lab=("sums.toml", "sums.jsonl"),
                   make_resources=lambda: scripted_resources(config, llm=ScriptedLLM(reply)))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: opened(app), "the lab to open")
        await replace_word(pilot, "style", "arithmetic")
        await pilot.press("f3")
        lab(app).query_one("#n").value = "12"
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: figures_shown(app), "the figures", timeout=60)
        assert lab(app).result.edited.n == 8 and len(lab(app).result.edited.failed) == 4
        assert "on 8 of 12 items (4 failed)" in " ".join(status(app).split()), status(app)


def test_a_judge_file_holding_raw_terminal_controls_is_not_opened_in_the_editor(lab_dir, capsys) -> None:
    """TOML lets a comment or a string hold a raw 8-bit CSI or a right-to-left override; the editor shows its text
    as it is, so it sent them to the terminal (`judges show` escapes them). Such a file is refused in one line,
    saying where and how to write it."""
    from qatui.cli import main

    (lab_dir / "raw.toml").write_text(JUDGE.replace('kind = "score"', 'kind = "score"  # \x9b2J \u202eevil'),
                                      encoding="utf-8")
    assert main(["lab", "raw.toml", "sums.jsonl"]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "raw.toml: holds a character the editor would send to the terminal raw (line 3, column 19: \\x9b)" in line
