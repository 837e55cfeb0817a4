"""The Label screen on a ratings dataset under Pilot (real app, real label files): keys 1-9 rate the
selected response, `d` moves to the next dimension, enter saves, and a pass reopened resumes.

The dataset is SummEval's JSONL form (`data/loaders/summeval.py`): two documents, three systems
each, expert scores on coherence and relevance from 1 to 5, so the screen's scale is 1-5.
Snapshots at 80×24 and 120×40 are of the screen as looked at in tmux: a document half rated.
"""

from __future__ import annotations

import json

import pytest
from fakes import pressing, settle
from tui_support import freeze_time

from qatui.config import Config
from qatui.data.loaders import load_dataset
from qatui.data.presentation import permutation
from qatui.store.labels import LabelStore
from qatui.store.session import SessionStore
from qatui.tui.app import QatuiApp
from qatui.tui.screens.label import LabelScreen
from qatui.tui.screens.label_prompt import LabelRequest

SIZES = [(80, 24), (120, 40)]
DOCUMENTS = [
    ("The city council voted on Tuesday to close the old bridge over the river for repairs that will take two "
     "years. Traffic will go through the northern tunnel, which the council says can carry the extra cars.",
     {"M1": ("The council closed the old bridge for two years of repairs; cars will use the northern tunnel.",
             {"coherence": 4.67, "relevance": 5.0}),
      "M2": ("A bridge. The council voted on Tuesday. Tunnel.", {"coherence": 1.33, "relevance": 2.67}),
      "M3": ("The council will repair the bridge.", {"coherence": 4.0, "relevance": 3.0})}),
    ("A local bakery won the national bread prize for its rye loaf, baked to a recipe the owner's grandmother "
     "brought from Latvia. The owner plans to open a second shop next spring.",
     {"M1": ("A bakery's rye loaf, from a Latvian family recipe, won the national prize.",
             {"coherence": 5.0, "relevance": 4.33}),
      "M2": ("Bread prize rye Latvia spring shop.", {"coherence": 1.0, "relevance": 2.0}),
      "M3": ("The owner will open a second shop.", {"coherence": 4.33, "relevance": 2.33})}),
]


@pytest.fixture
def store(tmp_path, monkeypatch) -> SessionStore:
    """A working directory holding summeval.jsonl (two documents) and an empty sessions folder."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    freeze_time(monkeypatch)
    lines = [{"src": src, "ref_summs": [f"Reference summary {n}."],
              "sys_summs": {name: {"sys_summ": text, "scores": scores} for name, (text, scores) in systems.items()}}
             for n, (src, systems) in enumerate(DOCUMENTS, 1)]
    (tmp_path / "summeval.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return SessionStore("sessions")


def app_for(store: SessionStore) -> QatuiApp:
    return QatuiApp(Config(), store, annotate=LabelRequest("summeval.jsonl", "ana"))


def saved(store: SessionStore) -> dict:
    dataset = load_dataset("summeval.jsonl")
    return LabelStore(store.root).labels_of(dataset.content_hash).get("ana", {})


def shown_order(item_id: str) -> list[str]:
    """The systems top to bottom as the screen shows them: the seeded presentation order."""
    item = next(item for item in load_dataset("summeval.jsonl").items if item.id == item_id)
    return permutation(item, Config().general.seed)


def headings(screen: LabelScreen) -> list[str]:
    """Each response's first line (its name and ratings), top to bottom."""
    return [str(widget.render()).split("\n")[0] for widget in screen.query(".response")]


def status(screen: LabelScreen) -> str:
    return str(screen.query_one("#label-status").render())


def labelling(pilot) -> bool:
    """The label screen is up."""
    return isinstance(pilot.app.screen, LabelScreen)


async def open_screen(pilot) -> LabelScreen:
    """The label screen, at rest."""
    await settle(pilot, lambda: labelling(pilot), "the label screen")
    return pilot.app.screen


async def test_rate_with_digits_change_dimension_save_then_resume(store) -> None:
    first, second = shown_order("doc1"), shown_order("doc2")
    async with app_for(store).run_test(size=(80, 24)) as pilot:
        screen = await open_screen(pilot)
        assert screen.item.id == "doc1" and screen.draft.kind == "ratings"
        assert screen.scale == (1, 5) and screen.draft.dimensions == ["coherence", "relevance"]
        assert "rate coherence 1-5" in status(screen)
        await pilot.press("4")  # R1 coherence 4, then the cursor moves to R2
        assert screen.draft.cursor == 1
        await pilot.press("9")  # off the 1-5 scale: said, nothing rated, the cursor stays
        assert "9 is off the scale" in status(screen) and screen.draft.cursor == 1
        await pilot.press("2", "5")
        assert headings(screen) == ["R1  coherence 4, relevance ·", "R2  coherence 2, relevance ·",
                                    "R3  coherence 5, relevance ·"]
        await pilot.press("enter")  # three ratings missing: not saved
        assert "not saved" in status(screen) and "3 ratings to give" in status(screen)
        assert saved(store) == {}
        await pilot.press("d")  # relevance
        assert "rate relevance 1-5" in status(screen)
        await pilot.press("up", "up", "1", "3", "5")
        await pilot.press("enter")
        await pilot.pause()
        expected = {first[0]: {"coherence": 4.0, "relevance": 1.0}, first[1]: {"coherence": 2.0, "relevance": 3.0},
                    first[2]: {"coherence": 5.0, "relevance": 5.0}}
        assert saved(store)["doc1"].ratings == expected
        assert "saved" in status(screen) and "1 item left" in status(screen)
        assert "hidden until you save" not in str(screen.query_one("#label-judges").render())
        await pilot.press("enter")  # on to the next unlabelled document
        assert screen.item.id == "doc2" and screen.draft.ratings == {}
        await pilot.press("3")  # half a label: never saved
        await pilot.press("ctrl+q")
    assert sorted(saved(store)) == ["doc1"]
    async with app_for(store).run_test(size=(80, 24)) as pilot:
        screen = await open_screen(pilot)
        assert screen.item.id == "doc2" and screen.draft.ratings == {}  # resumed where the labels stop
        for dimension in ("coherence", "relevance"):
            await pilot.press("up", "up", "2", "2", "2")
            if dimension == "coherence":
                await pilot.press("d")
        await pilot.press("enter")
        await pilot.pause()
        assert saved(store)["doc2"].ratings == {cid: {"coherence": 2.0, "relevance": 2.0} for cid in second}
        assert "every item is labelled" in status(screen)
        await pilot.press("p")  # doc1 again: its saved ratings in the draft and the headings
        assert screen.item.id == "doc1" and screen.draft.ratings == expected
        assert headings(screen)[0] == "R1  coherence 4, relevance 1"
        assert "saved" in status(screen)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_label_screen_ratings(snap_compare, store, size) -> None:
    assert snap_compare(app_for(store), run_before=pressing("4", "2", "d", ready=labelling, what="the label screen"),
                        terminal_size=size)
