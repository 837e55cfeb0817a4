"""Where qatui keeps its files.

Sessions default to the user's data folder, so a run saved from one directory is found from any other, and
every place that names the folder names it whole; `--sessions-dir`, `$QATUI_SESSIONS_DIR` and the config
choose another; a `./sessions` that already holds qatui's files (the default before) is used, with one note
per command saying where and how to move it. And every user folder is computed in `qatui/paths.py` alone.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from qatui.cli import main
from qatui.config import Config
from qatui.paths import holds_qatui_files
from qatui.store.session import SessionStore

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "qatui"
RUN = ["run", "demo", "--judge", "length", "--limit", "1", "--json"]


def _env(tmp_path: Path) -> dict[str, str]:
    """This process's environment with HOME in `tmp_path` and no XDG variable nor sessions choice of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_") and k != "QATUI_SESSIONS_DIR"}
    return {**env, "HOME": str(tmp_path / "home"), "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))}


def _qatui(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cwd.mkdir(parents=True, exist_ok=True)
    return subprocess.run([sys.executable, "-m", "qatui", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=240, check=False)


@pytest.mark.parametrize("xdg", [True, False], ids=["XDG_DATA_HOME", "HOME-only"])
def test_a_run_is_saved_in_the_data_folder_and_listed_from_another_directory(tmp_path, xdg) -> None:
    env = _env(tmp_path)
    if xdg:
        env["XDG_DATA_HOME"] = str(tmp_path / "data")
        default = tmp_path / "data" / "qatui" / "sessions"
    else:  # the XDG default
        default = tmp_path / "home" / ".local" / "share" / "qatui" / "sessions"
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    ran = _qatui(env, here, "run", "demo", "--judge", "length", "--limit", "2")
    assert ran.returncode == 0, ran.stderr
    [session] = [p.name for p in default.iterdir()]
    assert (default / session / "session.json").is_file()
    assert f"saved in {default / session}" in ran.stdout
    assert not (here / "sessions").exists()  # nothing left in the working directory
    listed = _qatui(env, elsewhere, "sessions", "list")
    assert listed.returncode == 0, listed.stderr
    assert f"sessions in {default}" in listed.stdout and session in listed.stdout
    assert "note" not in listed.stderr


def _notes(err: str) -> list[str]:
    """The note lines of a command's stderr (the rest is the progress bar)."""
    return [line for line in err.splitlines() if line.startswith("note:")]


def _run_into(capsys) -> tuple[Path, str]:
    """`qatui run` with no sessions option given here: where the session went, and what stderr said."""
    assert main(RUN) == 0
    captured = capsys.readouterr()
    path = Path(json.loads(captured.out)["path"])
    assert (path / "session.json").is_file()
    return path.parent, captured.err


def test_the_flag_then_the_variable_then_the_config_win_over_any_default(tmp_path, monkeypatch, capsys,
                                                                          own_data_folder) -> None:
    monkeypatch.chdir(tmp_path)
    assert main([*RUN, "--sessions-dir", "sessions"]) == 0  # a ./sessions of the old default, holding a session
    capsys.readouterr()
    config = tmp_path / "c.toml"
    config.write_text(f"[general]\nsessions_dir = '{tmp_path / 'from-config'}'\n")
    assert main([*RUN, "--config", str(config)]) == 0
    out, err = capsys.readouterr()
    assert Path(json.loads(out)["path"]).parent == tmp_path / "from-config" and "note" not in err
    monkeypatch.setenv("QATUI_SESSIONS_DIR", str(tmp_path / "from-env"))
    assert main([*RUN, "--config", str(config)]) == 0
    out, err = capsys.readouterr()
    assert Path(json.loads(out)["path"]).parent == tmp_path / "from-env" and "note" not in err
    assert main([*RUN, "--config", str(config), "--sessions-dir", "from-flag"]) == 0
    out, err = capsys.readouterr()
    assert Path(json.loads(out)["path"]).parent == tmp_path / "from-flag" and "note" not in err
    assert main(["sessions", "show", "nope", "--sessions-dir", "from-flag"]) == 2
    assert f"no session 'nope' in {tmp_path / 'from-flag'};" in capsys.readouterr().err  # a relative choice, made whole
    assert not (own_data_folder / "qatui").exists()


def test_an_existing_sessions_folder_is_used_with_a_note_saying_how_to_move_it(tmp_path, monkeypatch, capsys,
                                                                               own_data_folder) -> None:
    monkeypatch.chdir(tmp_path)
    assert main([*RUN, "--sessions-dir", "sessions"]) == 0
    first = json.loads(capsys.readouterr().out)["session"]
    legacy, default = tmp_path / "sessions", own_data_folder / "qatui" / "sessions"

    folder, err = _run_into(capsys)
    assert folder == legacy
    [note] = _notes(err)
    assert str(legacy) in note and str(default) in note
    assert f"mv {legacy}/* {default}/" in note

    assert main(["sessions", "list"]) == 0
    out, err = capsys.readouterr()
    assert f"sessions in {legacy}" in out and first in out
    assert len(_notes(err)) == 1 and str(legacy) in err


def test_the_note_is_printed_once_by_a_command_that_opens_the_folder_twice(tmp_path, monkeypatch, capsys) -> None:
    from qatui.tui.app import QatuiApp

    monkeypatch.chdir(tmp_path)
    assert main([*RUN, "--sessions-dir", "sessions"]) == 0
    session = json.loads(capsys.readouterr().out)["session"]
    opened: list[Path] = []
    monkeypatch.setattr(QatuiApp, "run", lambda app, *a, **k: opened.append(app.store.root))
    assert main(["open", session]) == 0  # finds the session, then starts the TUI on the same folder
    assert opened == [tmp_path / "sessions"]
    assert len(_notes(capsys.readouterr().err)) == 1


def test_a_sessions_folder_without_qatui_files_is_not_taken_for_one(tmp_path, monkeypatch, capsys,
                                                                    own_data_folder) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sessions" / "notes").mkdir(parents=True)
    (tmp_path / "sessions" / ".gitkeep").write_text("")
    (tmp_path / "sessions" / "notes" / "todo.json").write_text("{}")
    folder, err = _run_into(capsys)
    assert folder == own_data_folder / "qatui" / "sessions" and "note" not in err
    labels = tmp_path / "labelled" / "labels"
    labels.mkdir(parents=True)
    assert not holds_qatui_files(labels.parent)  # an empty labels folder is nothing of anyone's
    (labels / "ana").mkdir()
    assert holds_qatui_files(labels.parent)  # a person's labels are kept like sessions


async def test_home_names_the_sessions_folder_whole(tmp_path, monkeypatch) -> None:
    from qatui.tui.app import QatuiApp
    from qatui.tui.screens.home import HomeScreen
    from fakes import wait_until

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    app = QatuiApp(Config(), SessionStore("sessions"))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen) and bool(app.screen.sub_title))
        assert app.screen.sub_title == str(tmp_path / "sessions")


FORBIDDEN_CALLS = {"home", "user_config_dir", "user_data_dir", "user_cache_dir", "user_state_dir",
                   "user_config_path", "user_data_path", "user_cache_path", "user_state_path"}


def _user_folder_code(path: Path) -> list[str]:
    """Where a module computes a user folder itself: an XDG variable's name, platformdirs, `Path.home()`,
    or a literal `.config`, `.cache` or `.local` folder."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                node.value.startswith("XDG_") or node.value in (".config", ".cache", ".local")):
            found.append(f"{node.lineno}: {node.value!r}")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            found += [f"{node.lineno}: import {n}" for n in names if n.split(".")[0] == "platformdirs"]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in FORBIDDEN_CALLS:
            found.append(f"{node.lineno}: .{node.func.attr}()")
    return found


def test_every_user_folder_is_computed_in_the_paths_module_alone() -> None:
    found = {str(p.relative_to(REPO)): hits for p in PACKAGE.rglob("*.py")
             if p != PACKAGE / "paths.py" and (hits := _user_folder_code(p))}
    assert found == {}
    assert _user_folder_code(PACKAGE / "paths.py")  # the scan sees what it looks for
