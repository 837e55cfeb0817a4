"""New run's dataset preview is worked out in a thread, never on the screen's event loop.

The preview counts the items, reads their languages and compares every candidate with its references
(`data.leaks`): seconds on a large dataset, and, while the comparison was difflib's, seconds on six items of
long copies (0.5 s a pair), in which the screen drew nothing and took no key. Pilot drives the real app;
the real preview is computed, watched (not replaced) for the thread it runs in.
"""

from __future__ import annotations

import json
import threading

from fakes import wait_until
from textual.widgets import Input

from qatui.config import Config
from qatui.store.session import SessionStore
from qatui.tui.app import QatuiApp
from qatui.tui.screens import new_run
from qatui.tui.screens.new_run import NewRunScreen

WORDS = 1500
ITEMS = 6


def preview(screen) -> str:
    """What New run's preview shows now ('' while the screen is still composing)."""
    found = screen.query("#preview")
    return str(found.first().content) if found else ""


def long_copies(path) -> None:
    """`ITEMS` items whose two candidates are each their reference with one word changed."""
    with path.open("w") as f:
        for i in range(ITEMS):
            words = [f"w{(i * 7919 + k * 104729) % 997}" for k in range(WORDS)]
            candidates = {name: " ".join(words[:at] + ["changed"] + words[at + 1:])
                          for name, at in (("a", 10), ("b", WORDS - 10))}
            f.write(json.dumps({"id": f"q{i}", "question": f"Question {i}?", "references": [" ".join(words)],
                                "candidates": candidates}) + "\n")


async def preview_of(tmp_path, path, shown: str, size: tuple[int, int]) -> tuple[str, NewRunScreen]:
    """New run's preview of the dataset at `path` once it shows `shown` (after the demo set's), and the screen."""
    app = QatuiApp(Config(), SessionStore(tmp_path / "sessions"))
    async with app.run_test(size=size) as pilot:
        app.open_new_run()
        await wait_until(pilot, lambda: isinstance(app.screen, NewRunScreen) and "71 responses" in preview(app.screen))
        screen = app.screen
        screen.query_one("#path", Input).value = str(path)
        await wait_until(pilot, lambda: shown in preview(screen), f"the preview of {path.name}")
        return preview(screen), screen


async def test_the_preview_is_worked_out_off_the_screen_s_loop(tmp_path, monkeypatch) -> None:
    path = tmp_path / "copies.jsonl"
    long_copies(path)
    threads: list[threading.Thread] = []
    real = new_run.dataset_summary

    def watched(dataset):
        threads.append(threading.current_thread())
        return real(dataset)

    monkeypatch.setattr(new_run, "dataset_summary", watched)
    shown, screen = await preview_of(tmp_path, path, "copy a reference", (100, 30))
    assert screen.dataset is not None and screen.dataset.name == "copies"
    assert "12 candidates in 6 items copy a reference" in shown
    assert len(threads) == 2 and threading.main_thread() not in threads  # the demo's preview, then this one


async def test_the_preview_names_candidates_the_copy_check_could_not_compare(tmp_path) -> None:
    """Texts too long to compare within the copy check's bound (`data.leaks.PAIR_STEPS`): the preview says so, at
    80x24 (the comparison, which would hold Python's lock for about a second, is not made)."""
    from fakes import texts_alike_in_length

    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps({"id": "long", "question": "Q?", "references": [texts_alike_in_length(66_000, 1)],
                                "candidates": {"a": texts_alike_in_length(66_000, 2), "b": "x"}}) + "\n")
    shown, _ = await preview_of(tmp_path, path, "not compared", (80, 24))
    assert "1 candidate in 1 item was not compared with every reference (long/a)" in " ".join(shown.split())
