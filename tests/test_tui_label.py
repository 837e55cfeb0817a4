"""The Label screen under Pilot (real app, real label files): rank, move, tie, pick, save, resume, blind then revealed.

Snapshots at 80×24 and 120×40 are of the screens looked at in tmux: the first item, blind,
and an item right after its label is saved, the judges revealed.
"""

from __future__ import annotations


import pytest
from fakes import pressing, settle
from tui_support import demo_workdir, run_headless

from qatui.config import Config
from qatui.data.loaders import load_dataset
from qatui.data.presentation import permutation
from qatui.engine.jobs import start_run
from qatui.store.labels import LabelStore
from qatui.store.session import SessionStore
from qatui.tui.app import QatuiApp
from qatui.tui.screens.label import LabelScreen
from qatui.tui.screens.label_prompt import LabelRequest

SIZES = [(80, 24), (120, 40)]


@pytest.fixture
def store(tmp_path, monkeypatch) -> SessionStore:
    """A fresh working directory with demo.jsonl and one finished rouge-l + bleu session of it (fixed id)."""
    dataset = demo_workdir(tmp_path, monkeypatch)
    store = SessionStore("sessions")
    run_headless(start_run(store, dataset, ["rouge-l", "bleu"], Config(), name="lexical"))
    return store


def app_for(store: SessionStore, blind: bool = True) -> QatuiApp:
    return QatuiApp(Config(), store, annotate=LabelRequest("demo.jsonl", "ana", blind=blind))


def saved(store: SessionStore) -> dict:
    dataset = load_dataset("demo.jsonl")
    return LabelStore(store.root).labels_of(dataset.content_hash).get("ana", {})


def labelling(pilot) -> bool:
    """The label screen is up."""
    return isinstance(pilot.app.screen, LabelScreen)


async def open_screen(pilot) -> LabelScreen:
    """The label screen, at rest."""
    await settle(pilot, lambda: labelling(pilot), "the label screen")
    return pilot.app.screen


def judges_text(screen: LabelScreen) -> str:
    return str(screen.query_one("#label-judges").render())


async def test_rank_move_tie_save_then_the_judges_appear(store) -> None:
    order = permutation(load_dataset("demo.jsonl").items[0], Config().general.seed)
    async with app_for(store).run_test(size=(80, 24)) as pilot:
        screen = await open_screen(pilot)
        assert screen.item.id == "en-01"
        assert "hidden until you save" in judges_text(screen) and "rouge-l" not in judges_text(screen)
        await pilot.press("shift+down")  # the first response goes second
        await pilot.press("down", "t")  # the third is tied with the one above it
        await pilot.press("enter")
        await pilot.pause()
        expected = [[order[1]], [order[0], order[2]], *([cid] for cid in order[3:])]
        assert saved(store)["en-01"].tiers == expected
        text = judges_text(screen)
        assert "rouge-l" in text and "bleu" in text and "pairs" in text
        assert "saved" in str(screen.query_one("#label-status").render())


async def test_pick_a_pair_and_change_a_label_later(store) -> None:
    async with app_for(store).run_test(size=(120, 40)) as pilot:
        screen = await open_screen(pilot)
        await pilot.press(*"nnnnn")
        assert screen.item.id == "en-06" and screen.draft.kind == "pairwise"
        await pilot.press("b")
        await pilot.pause()
        assert saved(store)["en-06"].preference == "B"
        await pilot.press("t")  # changed: a tie, saved at once
        await pilot.pause()
        assert saved(store)["en-06"].preference == "tie"
        assert "A" in screen.names.values() and "rouge-l" in judges_text(screen)


async def test_quit_mid_way_then_reopen_resumes_at_the_first_unlabelled_item(store) -> None:
    async with app_for(store).run_test(size=(80, 24)) as pilot:
        await open_screen(pilot)
        await pilot.press("enter")  # en-01 as presented
        await pilot.press("enter")  # saved: on to the next unlabelled, en-02
        await pilot.press("shift+down", "enter")
        await pilot.pause()
        await pilot.press("ctrl+q")
    assert sorted(saved(store)) == ["en-01", "en-02"]
    lock = LabelStore(store.root).path("ana", load_dataset("demo.jsonl").content_hash).read_text()
    assert '"status": "closed"' in lock  # released on quit
    async with app_for(store).run_test(size=(80, 24)) as pilot:
        screen = await open_screen(pilot)
        assert screen.item.id == "en-03"
        await pilot.press("p")  # a labelled item can be revisited: its saved ranking, judges shown
        assert screen.item.id == "en-02"
        assert screen.draft.tiers() == saved(store)["en-02"].tiers
        assert "rouge-l" in judges_text(screen)


async def test_not_blind_shows_verdicts_at_once(store) -> None:
    async with app_for(store, blind=False).run_test(size=(80, 24)) as pilot:
        screen = await open_screen(pilot)
        assert "rouge-l" in judges_text(screen) and "differs" not in judges_text(screen)
        assert saved(store) == {}


async def test_home_a_asks_a_name_then_labels(store) -> None:
    async with QatuiApp(Config(), store).run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        annotator = pilot.app.screen.query_one("#annotator")
        annotator.value = "bo"
        await pilot.press("enter")
        screen = await open_screen(pilot)
        assert screen.annotation.labels.annotator == "bo"
        assert screen.annotation.dataset.name == "demo"


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_label_screen_blind(snap_compare, store, size) -> None:
    assert snap_compare(app_for(store), run_before=open_screen, terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_label_screen_revealed(snap_compare, store, size) -> None:
    assert snap_compare(app_for(store), run_before=pressing("shift+down", "enter", ready=labelling, what="the label screen"),
                        terminal_size=size)


async def test_enter_on_the_last_item_with_every_item_labelled_says_so(store) -> None:
    """Every item labelled, `enter` on the last one (as the status line invites) and `u`: a note, never an IndexError."""
    request = LabelRequest("demo.jsonl", "ana", limit=2)
    async with QatuiApp(Config(), store, annotate=request).run_test(size=(80, 24)) as pilot:
        screen = await open_screen(pilot)
        await pilot.press("enter")  # en-01 saved as presented
        await pilot.press("enter")  # on to en-02, the last item
        assert screen.item.id == "en-02"
        await pilot.press("enter")  # en-02 saved: every item is labelled now
        await pilot.press("enter")  # on a saved last item: the next unlabelled one, which does not exist
        await pilot.press("u")
        await pilot.pause()
        assert pilot.app.is_running and isinstance(pilot.app.screen, LabelScreen)
        assert screen.item.id in ("en-01", "en-02")
        assert any("Every item is labelled" in str(n.message) for n in pilot.app._notifications)
    assert sorted(saved(store)) == ["en-01", "en-02"]
