"""Corrupted or foreign files in the sessions dir: a clear error naming the file, the file untouched, the rest usable.

Beside two real finished sessions, one damaged or foreign folder per case: a truncated
session.json, an edited one (its meta table emptied), a JSON file that is no session at all,
a truncated results shard, a shard and a session.json written by a newer qatui (schema 2), a
session.json nested 100,000 deep (a RecursionError traceback) and a shard that is a FIFO (it hung).
In the CLI (`sessions list`, `sessions show`) and in the TUI (Home, opening each one) the bad
one is named with its file, the good ones stay listed and open, and no byte of any file changes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from fakes import wait_until
from tui_support import freeze_time, lexical_sessions

from qatui.cli import main
from qatui.config import Config
from qatui.store.files import SCHEMA
from qatui.store.session import SessionStore


def _newer_shard(folder: Path) -> None:
    path = folder / "results-0000.json"
    data = json.loads(path.read_text())
    data["format"] = {"1": {"schema": SCHEMA + 1}}
    data["results"]["1"]["verdict"]["field_from_the_future"] = {"kind": "unknown to this qatui"}
    path.write_text(json.dumps(data))


def _newer_session(folder: Path) -> None:
    path = folder / "session.json"
    data = json.loads(path.read_text())
    data["meta"]["1"]["schema"] = SCHEMA + 1
    path.write_text(json.dumps(data))


def _fifo_shard(folder: Path) -> None:
    (folder / "results-0000.json").unlink()
    os.mkfifo(folder / "results-0000.json")


DAMAGE = {
    "truncated-session": ("session.json", lambda f: (f / "session.json").write_bytes(
        (f / "session.json").read_bytes()[:200])),
    "edited-session": ("session.json", lambda f: (f / "session.json").write_text('{"meta": {}, "summary": {}}')),
    "foreign-json": ("session.json", lambda f: (f / "session.json").write_text('{"title": "my notes", "tags": [1]}')),
    "truncated-shard": ("results-0000.json", lambda f: (f / "results-0000.json").write_bytes(
        (f / "results-0000.json").read_bytes()[:300])),
    "newer-shard": ("results-0000.json", _newer_shard),
    "newer-session": ("session.json", _newer_session),
    "deep-session": ("session.json", lambda f: (f / "session.json").write_text(
        '{"meta": {"1": ' + "[" * 100_000 + "]" * 100_000 + "}}")),
    "fifo-shard": ("results-0000.json", _fifo_shard),
}
"""case -> (the file named in the error, how the folder is damaged)."""
LISTED_DAMAGED = {"truncated-session", "edited-session", "foreign-json", "newer-session", "deep-session"}
"""Cases whose session.json cannot be read: listed as damaged (the others list fine and fail on open)."""


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "not a file"
            for p in sorted(folder.iterdir())}


@pytest.fixture
def sessions(tmp_path, monkeypatch) -> tuple[SessionStore, list[str], dict[str, str]]:
    """Two good sessions, one bad folder per case (case -> its id), and a stray JSON file in the root."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    freeze_time(monkeypatch)
    store = SessionStore(tmp_path / "sessions")
    good = lexical_sessions(store, Config())
    bad = {}
    for k, (case, (_, damage)) in enumerate(DAMAGE.items()):
        folder = store.root / f"20261122-093000-b{k:03d}"
        shutil.copytree(store.root / good[1], folder)
        damage(folder)
        bad[case] = folder.name
    (store.root / "notes.json").write_text('{"not": "a session"}')
    return store, good, bad


def test_the_cli_names_each_bad_file_leaves_it_untouched_and_lists_and_opens_the_others(sessions, capsys) -> None:
    store, good, bad = sessions
    before = {sid: _digest(store.root / sid) for sid in bad.values()}
    base = ["--sessions-dir", str(store.root)]
    assert main([*base, "sessions", "list", "--json"]) == 0
    listed = {e["id"]: e for e in json.loads(capsys.readouterr().out)}
    assert set(listed) == set(good) | set(bad.values())  # the stray notes.json is no session, and no error
    for case, sid in bad.items():
        filename = DAMAGE[case][0]
        if case in LISTED_DAMAGED:
            assert listed[sid]["status"] == "damaged" and filename in listed[sid]["error"]
        code = main([*base, "sessions", "show", sid])
        out, err = capsys.readouterr()
        assert code == 2, (case, out, err)
        assert str(store.root / sid / filename) in err and "Traceback" not in err + out
        if case.startswith("newer"):
            assert "newer qatui" in err and "left as it is" in err
        code = main([*base, "sessions", "show", sid, "--json"])
        out, _ = capsys.readouterr()
        assert code == 2 and filename in json.loads(out)["error"]
    for sid in good:
        assert main([*base, "sessions", "show", sid, "--item", "en-01", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["judges"]["bleu"]["status"] == "done"
    assert main([*base, "sessions", "list"]) == 0
    shown = capsys.readouterr().out
    assert all(sid in shown for sid in [*good, *bad.values()])
    assert {sid: _digest(store.root / sid) for sid in bad.values()} == before  # not a byte changed


async def test_the_tui_names_each_bad_file_leaves_it_untouched_and_opens_the_others(sessions) -> None:
    from qatui.tui.app import QatuiApp
    from qatui.tui.screens.home import HomeScreen
    from qatui.tui.screens.session import SessionScreen
    from qatui.tui.widgets.sessions_table import SessionsTable

    store, good, bad = sessions
    before = {sid: _digest(store.root / sid) for sid in bad.values()}
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.screen.query_one(SessionsTable)
        await wait_until(pilot, lambda: table.row_count == len(good) + len(bad))

        async def open_row(sid: str) -> None:
            table.move_cursor(row=[m["id"] for m in table.shown].index(sid))
            await pilot.press("enter")

        for case, sid in bad.items():
            filename = str(store.root / sid / DAMAGE[case][0])
            await open_row(sid)
            await wait_until(pilot, lambda name=filename: any(name in n.message for n in app._notifications), case)
            await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen), case)  # back on Home, nothing opened
            app.clear_notifications()
        for sid in good:
            await open_row(sid)
            await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None)
            assert app.screen.state.count("done") > 0
            await pilot.press("escape")
            await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
    assert {sid: _digest(store.root / sid) for sid in bad.values()} == before


