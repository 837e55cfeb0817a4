"""Data never drives a screen: a hostile dataset is shown as text on every screen and by every command.

Every field of the dataset (ids, question, references, context, candidate ids and texts, meta),
the sessions' names and what the scripted backbone writes (its rationales and its stream) hold
Rich/Textual markup (`[@click=app.quit]`, `[@click=app.screenshot(...)]`, `[bold red]`, an
unbalanced `[/]` and `[`) and terminal escapes (an OSC 52 that would put `rm -rf ~/*` on the
clipboard, an OSC 0 window title, `ESC[2J`, the 8-bit CSI 0x9b, a right-to-left override).

The real Textual app (Pilot) opens them on Home, Session, Compare, Label, New run's preview and
Spot check. On each screen the raw strings are read back as literal text, no span of the screen
carries a click action, a click on the text quits nothing and writes no screenshot, the
clipboard is never written, and the bytes the screen would send to the terminal hold no escape
but Textual's own colours and cursor moves. The CLI's views run as real `qatui` processes.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from textual.app import App
from fakes import ScriptedLLM, answer_from_prompt, scripted_resources, settle, wait_until
from tui_support import freeze_time, panel_host, run_headless

from qatui.config import Config
from qatui.data.loaders import load_dataset
from qatui.engine.jobs import start_run
from qatui.store.session import SessionStore
from qatui.tui.app import QatuiApp
from qatui.tui.screens.compare import CompareScreen, SideBySideScreen
from qatui.tui.screens.home import HomeScreen
from qatui.tui.screens.label import LabelScreen
from qatui.tui.screens.label_prompt import LabelRequest
from qatui.tui.screens.new_run import NewRunScreen
from qatui.tui.screens.session import SessionScreen
from qatui.tui.screens.spot_check import SpotCheckScreen

ESCAPES = "\x1b]52;c;cm0gLXJmIH4vKg==\x07\x1b]0;pwned\x07\x1b[2J\x9b2J\u202e"
"""OSC 52 (`rm -rf ~/*` to the clipboard), OSC 0 (the window title), erase display, 8-bit CSI, RLO."""
SHOWN_ESCAPES = "\\x1b]52;c;cm0gLXJmIH4vKg==\\x07\\x1b]0;pwned\\x07\\x1b[2J\\x9b2J\\u202e"
"""The same characters as `qatui.text.plain` shows them."""
CLICK = "[@click=app.quit]"


def hostile(tag: str, shots: Path) -> str:
    """A text tagged `tag` holding every kind of markup and escape; a screenshot click would write into `shots`."""
    return (f"{tag} {CLICK}QUIT[/] [@click=app.screenshot('x','{shots}')]SHOT[/] [bold red]RED[/] [/] [ "
            f"{ESCAPES} end")


def _dataset(path: Path, shots: Path) -> Path:
    """Two items, every field hostile: a factoid question (MinosEval's key points) and an open one (its instances)."""
    records = []
    for i, start in enumerate(("What is", "Explain")):
        h = hostile(f"T{i}", shots)
        a, b = f"A{i} {CLICK}\x1b[2J", f"B{i} [bold]\x9b"
        longer = " and the sea is deep and wide and cold" * i  # the second item: length and rouge-l disagree
        records.append({
            "id": f"{CLICK}\x1b]0;pwned\x07 id{i}", "question": f"{start} {h} sky blue?",
            "references": [f"The sky scatters blue light {h}; short waves scatter more. Air is thin."],
            "context": [f"context {h}"], "meta": {"note": h},
            "candidates": {a: f"The sky scatters blue light {h}.", b: f"Grass is green{longer} {h}."},
            "gold": {"kind": "ranking", "tiers": [[a], [b]]},
        })
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


class HostileLLM(ScriptedLLM):
    """The scripted backbone, its rationales and its stream carrying the hostile text too."""

    def __init__(self, text: str) -> None:
        super().__init__(model="scripted/tui", stream=True)
        self.text = text

    def answer(self, call):
        """The scripted answer with the hostile text in its rationale and after its JSON (the transcript shows both)."""
        answer = answer_from_prompt(call)
        for key in ("reason", "rationale"):
            if isinstance(answer, dict) and key in answer:
                answer[key] += f" {self.text}"
        return f"{json.dumps(answer)}\n{self.text}" if isinstance(answer, dict) else answer


@pytest.fixture
def hostile_store(tmp_path, monkeypatch) -> dict:
    """In a fresh working directory: the hostile dataset; a MinosEval session (scripted models) and a
    rouge-l + length session on it, both with hostile names; where a screenshot would land."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    freeze_time(monkeypatch)
    shots = tmp_path / "shots"
    shots.mkdir()
    path = _dataset(tmp_path / "hostile.jsonl", shots)
    dataset, store, config = load_dataset(path), SessionStore("sessions"), Config()
    resources = scripted_resources(config, llm=HostileLLM(hostile("LLM", shots)))
    run_headless(start_run(store, dataset, ["minos"], config, concurrency=1, resources=resources,
                           name=hostile("N1", shots)))
    run_headless(start_run(store, dataset, ["rouge-l", "length"], config, name=hostile("N2", shots)))
    return {"store": store, "path": path, "shots": shots, "ids": [m["id"] for m in store.list()]}


# -- what a screen shows and sends -----------------------------------------------------------------

TEXTUAL_OWN = re.compile(r"\x1b\[[0-9;:]*[mH]")
"""What Textual itself writes in a frame: colours (SGR) and cursor moves."""


def screen_text(app: App) -> str:
    """The screen as its lines of text, as drawn now."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def sent_to_terminal(app: App) -> str:
    """The characters a full repaint of the screen writes to the terminal."""
    return app.screen._compositor.render_full_update().render_segments(app.console)


def click_actions(app: App) -> list[str]:
    """Every `@click` action a span on screen carries."""
    found = []
    for strip in app.screen._compositor.render_strips():
        for segment in strip:
            meta = segment.style.meta if segment.style is not None else {}
            if "@click" in meta:
                found.append(str(meta["@click"]))
    return found


def spots(app: App, needle: str) -> list[tuple[int, int]]:
    """Where `needle` starts on screen, (x, y) per line holding it."""
    lines = screen_text(app).split("\n")
    return [(line.index(needle), y) for y, line in enumerate(lines) if needle in line]


async def check_screen(pilot, shots: Path, *, escapes_shown: bool = True) -> None:
    """The screen shows the markup as text and the escapes in view, obeys neither, and survives clicks on them."""
    app = pilot.app
    await pilot.pause()
    text = screen_text(app)
    if os.environ.get("DUMP_SCREENS"):
        print(text)
    assert CLICK in text, f"{type(app.screen).__name__}: the markup is not shown as text:\n{text}"
    if escapes_shown:
        assert "\\x1b]52;c;cm0gLXJmIH4vKg==\\x07" in text or "\\x1b]0;pwned\\x07" in text, \
            f"{type(app.screen).__name__}: the escapes are not shown:\n{text}"
    actions = [a for a in click_actions(app) if "quit" in a or "screenshot" in a]
    assert not actions, f"{type(app.screen).__name__}: data became click actions {actions}"
    leftover = TEXTUAL_OWN.sub("", sent_to_terminal(app))
    for char in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert char not in leftover, f"{type(app.screen).__name__}: {char!r} reaches the terminal"
    screen = app.screen
    for x, y in spots(app, CLICK)[:3]:  # on the text a click action would have been drawn from
        await pilot.click(offset=(x + 3, y))
        await pilot.pause()
        assert app.is_running
        while app.screen is not screen and screen in app.screen_stack:  # a click on a row may open it
            app.pop_screen()
            await pilot.pause()
    assert list(shots.iterdir()) == []


async def leave(pilot) -> None:
    """Back to the screen below, once this one is at rest (a screen popped mid-mount errs), and that one at rest."""
    await settle(pilot, drop_toasts=False)
    pilot.app.pop_screen()
    await settle(pilot, drop_toasts=False)


@pytest.fixture
def clipboard(monkeypatch) -> list[str]:
    """Every text the app puts on the clipboard."""
    copied: list[str] = []
    monkeypatch.setattr(App, "copy_to_clipboard", lambda self, text: copied.append(text))
    return copied


async def test_home_and_session_screens_show_hostile_data_as_text(hostile_store, clipboard) -> None:
    store, shots = hostile_store["store"], hostile_store["shots"]
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot, lambda: isinstance(app.screen, HomeScreen)
                     and len(app.screen.query_one("SessionsTable").sessions) == 2, "Home's list", drop_toasts=False)
        title = app.title
        await check_screen(pilot, shots)
        for row in range(2):  # the MinosEval session, then rouge-l + length
            app.open_session(hostile_store["ids"][row])
            await settle(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None,
                         "the session", drop_toasts=False)
            for _ in range(4):  # each item of each judge: the question, ranking, key points or instances, transcript
                await check_screen(pilot, shots)
                await pilot.press("j")  # the next row, where the list has focus (a click above may have moved it)
                await settle(pilot, drop_toasts=False)
            await leave(pilot)
        assert app.title == title
    assert clipboard == []


async def test_compare_label_new_run_and_spot_check_show_hostile_data_as_text(hostile_store, clipboard) -> None:
    store, shots, path = hostile_store["store"], hostile_store["shots"], hostile_store["path"]
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        app.compare_sessions(hostile_store["ids"])
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen) and "rouge-l" in screen_text(app)
                    and "length" in screen_text(app))
        await check_screen(pilot, shots)
        app.screen.query_one("#disagreements").focus()
        await pilot.press("enter")  # the item where length and rouge-l disagree, side by side
        await wait_until(pilot, lambda: isinstance(app.screen, SideBySideScreen) and "Ranking" in screen_text(app))
        await check_screen(pilot, shots)
        await leave(pilot)
        await leave(pilot)
        app.open_labels(LabelRequest(str(path), "ana", blind=False))
        await settle(pilot, lambda: isinstance(app.screen, LabelScreen), "the label screen", drop_toasts=False)
        await check_screen(pilot, shots)
        await leave(pilot)
        app.open_new_run()
        await wait_until(pilot, lambda: isinstance(app.screen, NewRunScreen) and app.screen.query("#path"))
        app.screen.query_one("#path").value = str(path)
        await wait_until(pilot, lambda: "T0" in screen_text(app))
        await check_screen(pilot, shots)
        await leave(pilot)
        app.open_spot_check()
        await wait_until(pilot, lambda: isinstance(app.screen, SpotCheckScreen) and app.screen.query("#load"))
        app.screen.query_one("#load").value = str(path)
        app.screen.load()
        await wait_until(pilot, lambda: "T0" in screen_text(app))
        await check_screen(pilot, shots)  # the text areas hold the escapes in view
    assert clipboard == []


# -- the CLI ------------------------------------------------------------------------------------------

def _qatui(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1]), "COLUMNS": "200",
           "XDG_CONFIG_HOME": str(cwd / "xdg-config"), "XDG_CACHE_HOME": str(cwd / "xdg-cache")}
    return subprocess.run([sys.executable, "-m", "qatui", *args], cwd=cwd, env=env, capture_output=True,
                          timeout=120)


def test_cli_views_and_errors_show_hostile_data_in_view_and_send_no_escape(hostile_store, tmp_path) -> None:
    path, first = hostile_store["path"], hostile_store["ids"][0]
    item = load_dataset(path).items[0].id
    base = ("--sessions-dir", "sessions")
    runs = {  # what ran: (the process, what of the hostile text it must show, in view)
        "datasets inspect": (_qatui("datasets", "inspect", str(path), cwd=tmp_path), b"\\x1b]0;pwned"),
        "sessions list": (_qatui("sessions", "list", *base, cwd=tmp_path), b"[@click=app."),  # names are clipped
        "sessions show": (_qatui("sessions", "show", first, *base, cwd=tmp_path), b"\\x1b]52;c;cm0gLXJmIH4vKg=="),
        "sessions show --item": (_qatui("sessions", "show", first, "--item", item, *base, cwd=tmp_path),
                                 b"\\x07\\x1b[2J\\x9b2J\\u202e"),  # the BEL too, which Rich alone drops unseen
        "an error quoting an id": (_qatui("sessions", "show", first, "--item", item + "!", *base, cwd=tmp_path),
                                   b"\\x1b]0;pwned"),
        "an error quoting a session": (_qatui("sessions", "show", hostile("X", tmp_path), *base, cwd=tmp_path),
                                       b"\\x1b]52;c;cm0gLXJmIH4vKg=="),
    }
    for what, (run, shown) in runs.items():
        out = run.stdout + run.stderr
        assert run.returncode in (0, 2), (what, out.decode(errors="replace"))
        for byte in (b"\x1b", b"\x07", b"\x9b", "\u202e".encode()):
            assert byte not in out, f"{what}: {byte!r} reaches the terminal"
        assert shown in out and b"[@click=app." in out, f"{what}: not shown as text:\n{out.decode(errors='replace')}"


def test_json_output_escapes_every_control_character(hostile_store, tmp_path) -> None:
    path, first = hostile_store["path"], hostile_store["ids"][0]
    for args in (("datasets", "inspect", str(path), "--json"),
                 ("sessions", "show", first, "--json", "--sessions-dir", "sessions"),
                 ("sessions", "list", "--json", "--sessions-dir", "sessions")):
        run = _qatui(*args, cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        for byte in (b"\x1b", b"\x07", b"\x9b", "\u202e".encode()):
            assert byte not in run.stdout, (args, byte)
        assert ESCAPES[:6] in json.dumps(json.loads(run.stdout)) or "pwned" in run.stdout.decode()


def _rendered_markdown(text: str) -> str:
    """The text a Markdown viewer shows of `text` (CommonMark with tables, by markdown-it-py), tags taken off."""
    from markdown_it import MarkdownIt

    html_text = MarkdownIt("commonmark").enable("table").render(text)
    return html.unescape(re.sub(r"<[^>]+>", "", html_text))


def _shows_no_escape(what: str, out: bytes) -> None:
    """`out` holds no control character a terminal would obey: ESC, BEL, 8-bit CSI, RLO, CR or backspace."""
    for byte in (b"\x1b", b"\x07", "\x9b".encode(), "\u202e".encode(), b"\r", b"\x08"):
        assert byte not in out, f"{what}: {byte!r} reaches the terminal"


def test_exports_and_tables_printed_to_the_terminal_show_escapes_in_view(hostile_store, tmp_path) -> None:
    """`sessions export` and `table --to` without -o print to the terminal: the dataset's escapes (in its texts, its
    ids, its file's name) are shown there, never obeyed; the JSONL export stays JSON that reads back the same texts."""
    path, first = hostile_store["path"], hostile_store["ids"][0]
    for fmt in ("csv", "md", "jsonl"):
        run = _qatui("sessions", "export", first, "--format", fmt, "--sessions-dir", "sessions", cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        _shows_no_escape(f"sessions export --format {fmt}", run.stdout)
        if fmt == "jsonl":
            rows = [json.loads(line) for line in run.stdout.decode().splitlines()]
            assert {row["item_id"] for row in rows} == {f"{CLICK}\x1b]0;pwned\x07 id{i}" for i in range(2)}
        elif fmt == "md":  # as a Markdown viewer shows it: the escapes as text
            assert "\\x1b]0;pwned\\x07 id0" in _rendered_markdown(run.stdout.decode()), run.stdout.decode()
        else:
            assert b"\\x1b]0;pwned\\x07 id0" in run.stdout, run.stdout.decode(errors="replace")
    named = tmp_path / "set \x1b]0;pwned\x07 \x9b2J.jsonl"  # the dataset's name, in the table's note, is its file's
    named.write_bytes(path.read_bytes())
    for to in ("md", "csv", "latex"):
        run = _qatui("table", str(named), "--judge", "length", "--to", to, "--sessions-dir", "sessions", cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        _shows_no_escape(f"table --to {to}", run.stdout + run.stderr)
        shown = _rendered_markdown(run.stdout.decode()) if to == "md" else run.stdout.decode()
        if to != "csv":  # the csv is the rows alone
            assert "set \\x1b]0;pwned\\x07 \\x9b2J" in shown, run.stdout.decode(errors="replace")
    written = tmp_path / "table.txt"  # the terminal's table, written to a file as the terminal would show it
    run = _qatui("table", str(named), "--judge", "length", "-o", str(written), "--sessions-dir", "sessions", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    _shows_no_escape("table -o FILE", written.read_bytes())
    assert b"set \\x1b]0;pwned\\x07 \\x9b2J" in written.read_bytes(), written.read_text(errors="replace")


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal is POSIX")
def test_a_run_s_live_limits_line_shows_a_model_string_s_escapes_in_view(llm_server, tmp_path) -> None:
    """In a terminal, `qatui run` draws each backbone's pace under its bar, naming the model string the config gives
    (which may hold any character): its OSC (a window title) and CSI are shown there as text, never sent."""
    import pty

    llm_server.script(lambda body: json.dumps({"rank": ["Response 1", "Response 2"]}), latency_s=0.3)
    config = tmp_path / "config.toml"
    config.write_text(f'[models]\ndefault_backbone = "bk"\n[backbones.bk]\n'
                      f'model = "openai/fake\\u001b]0;pwned\\u0007\\u009b2J"\napi_base = "{llm_server.base_url}"\n')
    data = tmp_path / "set.jsonl"
    data.write_text(json.dumps({"id": "q1", "question": "Why is the sky blue?", "references": ["Scattering."],
                                "candidates": {"a": "Scattering of light.", "b": "No idea."}}) + "\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1]), "COLUMNS": "200", "TERM": "xterm-256color",
           "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"), "XDG_CACHE_HOME": str(tmp_path / "xdg-cache")}
    leader, follower = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "qatui", "--config", str(config), "run", str(data),
                                "--judge", "listwise", "--sessions-dir", "sessions"],
                               cwd=tmp_path, env=env, stdin=follower, stdout=follower, stderr=follower)
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the process closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(leader)
    assert process.wait(timeout=120) == 0, out.decode(errors="replace")
    assert b"openai/fake\\x1b]0;pwned" in out and b"at once" in out, out.decode(errors="replace")
    own = re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b\]8;[^\x1b\x07]*\x1b\\", b"", out)  # Rich's colours and cursor moves
    _shows_no_escape("the live limits line", own.replace(b"\r", b""))  # a terminal's line ends are \r\n


async def test_the_agreement_screen_shows_a_dataset_file_s_name_as_text(hostile_store, clipboard, tmp_path) -> None:
    """The label screen's agreement (g) names the dataset, whose name is its file's: in its title and in the
    message saying nobody has labelled it, as text (its markup shown, its escapes in view, neither obeyed)."""
    from qatui.tui.screens.label_agreement import AgreementScreen

    named = tmp_path / f"set {CLICK}QUIT [bold red]RED \x1b]52;c;cm0gLXJmIH4vKg==\x07\x9b2J.jsonl"
    named.write_bytes(hostile_store["path"].read_bytes())
    app = QatuiApp(Config(), hostile_store["store"])
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        app.push_screen(AgreementScreen(load_dataset(named), hostile_store["store"]))
        await wait_until(pilot, lambda: "nobody has labelled" in screen_text(app))
        assert f"Agreement with people: set {CLICK}QUIT [bold red]RED" in screen_text(app)
        await check_screen(pilot, hostile_store["shots"])
    assert clipboard == []


async def test_a_run_s_limits_line_shows_a_model_string_s_escapes_in_view(hostile_store) -> None:
    """The run screen's limits line names each backbone's model string as the config gives it (any character):
    shown as text, its escapes in view and never sent to the terminal."""
    from textual.app import ComposeResult

    from qatui.tui.widgets.run_header import RunHeader

    class Header(App):
        def compose(self) -> ComposeResult:
            yield RunHeader()

    app = Header()
    async with app.run_test(size=(160, 10)) as pilot:
        app.query_one(RunHeader).limits = f"openai/{CLICK}fake{ESCAPES} 1/4 at once"
        await pilot.pause()
        await check_screen(pilot, hostile_store["shots"])


def test_emoji_codes_in_data_and_names_are_shown_as_typed(tmp_path) -> None:
    """Rich reads `:warning:` as an emoji: an item id `q:warning:1` was shown as `q⚠1`, which no one can type back
    to `sessions show --item`, and a session named `run :fire:` as `run 🔥`. Every command shows them as typed."""
    data = tmp_path / "codes.jsonl"
    data.write_text(json.dumps({"id": "q:warning:1", "question": "Is :thumbs_up: right?", "references": ["ref :fire:"],
                                "candidates": {"a:fire:": "yes :fire:", "b": "no"},
                                "gold": {"kind": "ranking", "tiers": [["a:fire:"], ["b"]]}}) + "\n")
    base = ("--sessions-dir", "sessions")
    run = _qatui("run", str(data), "--judge", "length", "--session", "run :fire:", *base, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    session = json.loads(_qatui("sessions", "list", "--json", *base, cwd=tmp_path).stdout)[0]["id"]
    for args, shown in ((("datasets", "inspect", str(data)), ("q:warning:1", "Is :thumbs_up: right?", "a:fire:")),
                        (("sessions", "list", *base), ("run :fire:",)),
                        (("sessions", "show", session, *base), ("run :fire:",)),
                        (("sessions", "show", session, "--item", "q:warning:1", *base),
                         ("q:warning:1", "Is :thumbs_up: right?", "ref :fire:", "a:fire:"))):
        out = _qatui(*args, cwd=tmp_path)
        text = (out.stdout + out.stderr).decode()
        assert out.returncode == 0 and all(s in text for s in shown), (args, text)
        assert not {"⚠", "🔥", "👍"} & set(text), (args, text)


def test_help_names_the_config_and_sessions_folders_as_text(tmp_path) -> None:
    """`--help` names the config file and the sessions folder this machine uses, from $XDG_CONFIG_HOME and
    $XDG_DATA_HOME: argparse printed an escape in them to the terminal, and a `%` crashed it with a traceback."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1]), "COLUMNS": "200",
           "XDG_CONFIG_HOME": str(tmp_path / "conf \x1b]0;pwned\x07 100%s"),
           "XDG_DATA_HOME": str(tmp_path / "data \x1b[2J\x9b2J 100%done")}
    for args in (("--help",), ("sessions", "list", "--help")):
        run = subprocess.run([sys.executable, "-m", "qatui", *args], cwd=tmp_path, env=env, capture_output=True,
                             timeout=120)
        assert run.returncode == 0, run.stderr.decode(errors="replace")
        _shows_no_escape(f"qatui {' '.join(args)}", run.stdout + run.stderr)
        shown = " ".join(run.stdout.decode().split())
        assert "conf \\x1b]0;pwned\\x07 100%s/qatui/config.toml" in shown, shown
        assert "data \\x1b[2J\\x9b2J 100%done/qatui/sessions" in shown, shown


def test_a_line_laid_out_around_escapes_is_folded_never_cropped() -> None:
    """Rich lays a control character out as no width; shown as its escape it is wider, and the console would crop
    the line's end: the words after it went missing (a warning naming a hostile id lost "ck's bound"). The console
    makes every string plain before layout (`PlainConsole`); a `Text` a view built from raw data is laid out by Rich
    as it is, and the render hook folds its widened lines: every character reaches the reader, in order, in a line
    and in a table's cell."""
    import io

    from rich.table import Table
    from rich.text import Text

    from qatui.cli.common import make_console
    from qatui.text import plain

    escapes = "\x1b]52;c;cm0gLXJmIH4vKg==\x1b\\\x1b]0;pwned\x1b\\\x1b[2J\x9b2J\u202e"  # BEL left out: Text drops it
    text = ("lead \u202e" + " ".join(f"w{k}" for k in range(30)) + f" \x1b[2J\x9b2J {escapes} "
            + " ".join(f"v{k}" for k in range(30)))
    table = Table(show_header=False, box=None)
    table.add_column(overflow="fold")
    table.add_row(Text(text))
    for renderable in (Text(text), table, text):
        console = make_console()
        console.file = io.StringIO()
        console.width = 40
        console.print(renderable)
        out = console.file.getvalue()
        assert all(len(line) <= 40 for line in out.splitlines()), out
        assert "".join(out.split()) == "".join(plain(text).split()), out  # every character, in order
    assert "".join(out.split()) != "".join(text.split())  # and as its escapes, not as itself


def test_datasets_inspect_shows_a_warning_naming_hostile_ids_whole(tmp_path, capsys) -> None:
    """The copy warning names the item and candidate ids: with escapes in them (a BEL among them, which Rich itself
    would drop unseen), every character of the sentence is printed, as its escapes."""
    from qatui.cli import main
    from qatui.data.leaks import leak_warnings
    from qatui.text import plain

    path = tmp_path / "ids.jsonl"
    reference = "The capital of France is Paris, a city on the river Seine."
    record = {"id": "[bold]q\x07\u202e\x1b[2J", "question": "Where is Paris?", "references": [reference],
              "candidates": {"[/]c\x9b2J\x1b]0;t\x07": reference[:-1] + "!", "b": "Spain."}}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    assert main(["datasets", "inspect", str(path)]) == 0
    out = capsys.readouterr().out
    (warning,) = leak_warnings(load_dataset(str(path)).items)
    assert " ".join(plain(warning).split()) in " ".join(out.split()), out
    assert "\\x07" in out and "\x07" not in out


def test_a_run_s_leak_note_naming_hostile_ids_is_shown_whole(tmp_path, capsys) -> None:
    """`qatui run` prints its leak line as a plain string (`markup=False`): the console makes it plain before it lays
    it out, so the BEL in the item's id is shown and every word reaches the reader."""
    from qatui.cli import main
    from qatui.report.leak_figures import leak_note
    from qatui.text import plain

    path = tmp_path / "ids.jsonl"
    reference = "The capital of France is Paris, a city on the river Seine."
    item_id = "[bold]q\x07\u202e\x1b[2J"
    path.write_text(json.dumps({"id": item_id, "question": "Where is Paris?", "references": [reference],
                                "candidates": {"a": reference[:-1] + "!", "b": "Spain."}}) + "\n", encoding="utf-8")
    assert main(["run", str(path), "--judge", "length", "--sessions-dir", str(tmp_path / "s")]) == 0
    out = capsys.readouterr().out
    note = leak_note([item_id], 1, chosen=False)
    assert note is not None and " ".join(plain(note).split()) in " ".join(out.split()), out
    assert "\\x07" in out and "\x07" not in out


def test_an_error_quoting_data_shows_its_bell(tmp_path, capsys) -> None:
    """An error is one line of text (`qatui.cli`'s handler): a BEL in the dataset's file name it quotes is shown as
    its escape, not dropped unseen by Rich."""
    from qatui.cli import main

    missing = tmp_path / "no\x07such.jsonl"
    assert main(["datasets", "inspect", str(missing)]) == 2
    err = capsys.readouterr().err
    assert "no\\x07such.jsonl" in "".join(err.split()) and "\x07" not in err, err


async def test_the_checklist_panel_shows_a_checklist_s_dimension_and_questions_as_text(tmp_path) -> None:
    """A checklist file (or a generated one) names its dimensions and questions: the grid's title and rows
    show them as text (a Rich table's string title is read as markup) and send no escape."""
    from qatui.data.loaders import demo_dataset
    from qatui.events import ChecklistAnswered
    from qatui.tui.state import RunState
    from qatui.tui.widgets.checklist_panel import ChecklistPanel

    shots = tmp_path / "shots"
    shots.mkdir()
    item = demo_dataset().items[0]
    state = RunState([item], ["checkeval"], seed=0)
    for response in (1, 2):
        state.fold(ChecklistAnswered(item_id=item.id, judge="checkeval", dimension=hostile("DIM", shots),
                                     sub_dimension=hostile("SUB", shots), question=hostile("Q", shots),
                                     question_id="q1", response=f"Response {response}", answer="yes"))

    app = panel_host(ChecklistPanel)
    async with app.run_test(size=(160, 30)) as pilot:
        app.query_one(ChecklistPanel).show(state.tasks[(item.id, "checkeval")])
        await pilot.pause()
        text = screen_text(app)
        assert "DIM [@click" in text and "Q [@click" in text, text
        await check_screen(pilot, shots)


@pytest.mark.parametrize("view", ["checklist grid", "dimension scores"])
def test_sessions_show_item_prints_a_checklist_s_dimension_names_as_text(view, tmp_path) -> None:
    """`sessions show --item` prints CheckEval's grid and each dimension's score with the dimension as a heading:
    a dimension named with markup is shown as typed (a Rich column header is read as markup) and sends no escape."""
    import io

    from rich.console import Console

    from qatui.report.artifact_views import print_checklist_grid, print_dimension_scores

    name = hostile("DIM", tmp_path)
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=400, color_system="truecolor")
    if view == "checklist grid":
        answers = [{"dimension": name, "sub_dimension": name, "question": name, "question_id": "q1",
                    "response": "Response 1", "answer": "yes", "position": 0}]
        print_checklist_grid(console, answers, {"Response 1": name})
    else:
        print_dimension_scores(console, {"Response 1": {name: 0.5}}, ["Response 1"])
    sent = out.getvalue()
    shown = TEXTUAL_OWN.sub("", sent)
    assert CLICK in shown and "[bold red]RED[/]" in shown and SHOWN_ESCAPES in shown, shown
    for char in ("\x07", "\x9b", "\u202e"):
        assert char not in shown, f"{char!r} reaches the terminal"
    assert "\x1b]" not in shown and "\x1b[2J" not in shown


async def test_the_ragas_panel_shows_candidate_ids_and_context_sentences_as_text(tmp_path) -> None:
    """RAGAS's panel heads each response with its candidate id and lists the context's sentences: both are the
    dataset's, and reached the terminal raw (ESC[2J, OSC 52) while the panels beside them showed them escaped."""
    from qatui.data.model import Item
    from qatui.events import ContextSentencesSelected, StatementsExtracted
    from qatui.tui.state import RunState
    from qatui.tui.widgets.ragas_panel import RagasPanel

    shots = tmp_path / "shots"
    shots.mkdir()
    cid = hostile("CID", shots)
    item = Item(id="i1", question="Why?", candidates={cid: "The sky is blue.", "b": "Grass."},
                context=[hostile("CTX", shots)])
    state = RunState([item], ["ragas"], seed=0)
    label = state.tasks[("i1", "ragas")].label(cid)
    state.fold(StatementsExtracted(item_id="i1", judge="ragas", response=label, statements=["The sky is blue."]))
    state.fold(ContextSentencesSelected(item_id="i1", judge="ragas", response=label,
                                        sentences=[hostile("CTX", shots)], relevant=[0]))

    app = panel_host(RagasPanel)
    async with app.run_test(size=(200, 30)) as pilot:
        app.query_one(RagasPanel).show(state.tasks[("i1", "ragas")])
        await pilot.pause()
        text = screen_text(app)
        assert "CID [@click" in text and "CTX [@click" in text, text
        await check_screen(pilot, shots)


async def test_new_run_shows_a_judge_file_s_description_as_text(tmp_path, monkeypatch) -> None:
    """A judge file's description is the file's words: New run's about line showed its escapes raw (`qatui judges`
    printed them in view)."""
    from textual.widgets import SelectionList

    from qatui.tui.screens.new_run import NewRunScreen

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    shots = tmp_path / "shots"
    shots.mkdir()
    folder = tmp_path / "xdg-config" / "qatui" / "judges"
    folder.mkdir(parents=True)
    description = json.dumps(hostile("DESC", shots))  # a TOML basic string reads JSON's escapes
    (folder / "hdesc.toml").write_text(f'''name = "hdesc"
description = {description}
kind = "score"
criteria = "Grade it."

[scale]
min = 0
max = 10

[prompts]
system = "Grade one answer. {{criteria}} Reply with a score from {{min}} to {{max}} as [[score]]."
user = "Question: {{question}}\\n{{answer}}"
''', encoding="utf-8")
    app = QatuiApp(Config(), SessionStore(tmp_path / "sessions"))
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        app.open_new_run()
        await wait_until(pilot, lambda: isinstance(app.screen, NewRunScreen) and app.screen.query("#judges"))
        listing = app.screen.query_one("#judges", SelectionList)
        await wait_until(pilot, lambda: listing.option_count > 0 and "hdesc" in app.screen.judge_classes, "the judges")
        listing.highlighted = listing.get_option_index("hdesc")
        await pilot.press("f3")  # the Judges step
        await wait_until(pilot, lambda: "DESC" in screen_text(app), "the judge's description")
        await check_screen(pilot, shots)


async def test_new_run_does_not_put_a_file_name_holding_escapes_into_its_path_field(tmp_path, monkeypatch) -> None:
    """The dataset tree shows a file's name escaped, but the path field beside it showed it as it is: picking a
    file named with an OSC 0 and an 8-bit CSI sent them to the terminal. Such a pick is refused with a toast."""
    from textual.widgets import DirectoryTree, Input

    from qatui.tui.screens.new_run import NewRunScreen

    monkeypatch.chdir(tmp_path)
    named = tmp_path / "data \x1b]0;pwned\x07\x9b2J.jsonl"
    named.write_text('{"id": "q", "question": "?", "candidates": {"a": "x", "b": "y"}}\n', encoding="utf-8")
    toasts: list[str] = []
    app = QatuiApp(Config(), SessionStore(tmp_path / "sessions"))
    monkeypatch.setattr(app, "notify", lambda message, **kw: toasts.append(message))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        app.open_new_run()
        await wait_until(pilot, lambda: isinstance(app.screen, NewRunScreen) and app.screen.query(DirectoryTree))
        tree = app.screen.query_one(DirectoryTree)
        await wait_until(pilot, lambda: any(getattr(n.data, "path", None) == named for n in tree.root.children),
                         "the tree's files")
        node = next(n for n in tree.root.children if getattr(n.data, "path", None) == named)
        tree.select_node(node)
        await wait_until(pilot, lambda: toasts, "the refusal")
        assert app.screen.query_one("#path", Input).value == ""
        assert "its name holds a character a text field would send to the terminal raw (\\x1b)" in toasts[0]
