"""A saved session too big to read before painting: the Session screen draws its first rows, then fills in.

A real `length` run on 450 generated items, stored in shards of 50 results, is opened in the
real app. Reading the result pages after the first, or the dataset's items after the first
rows', is held on a gate, so the test sees the screen as a user does while a 10,000-item
session loads, then lets it finish.
"""

from __future__ import annotations

import gc
import json
import threading
from pathlib import Path

import pytest

from fakes import wait_until
from tui_support import run_headless

from qatui.config import Config
from qatui.data.loaders import jsonl, load_dataset
from qatui.engine.jobs import start_run
from qatui.store.session import SessionStore
from qatui.tui import saved
from qatui.tui.app import QatuiApp
from qatui.tui.screens import session as session_screen
from qatui.tui.screens.session import SessionScreen
from qatui.tui.widgets.item_browser import ItemBrowser
from qatui.tui.widgets.item_list import STATUS_MARKS, ItemList
from qatui.tui.widgets.session_header import SessionHeader

N_ITEMS = 450
SHARD = 50


@pytest.fixture
def big(tmp_path) -> tuple[SessionStore, str, list[str]]:
    """A finished `length` session of 450 items in 9 shards; item q120 failed first (shard 0), was judged later (shard 2)."""
    path = tmp_path / "big.jsonl"
    with path.open("w") as out:
        for i in range(N_ITEMS):
            out.write(json.dumps({"id": f"q{i}", "question": f"Question {i}?", "references": ["A reference."],
                                  "candidates": {"a": "short", "b": "a longer answer " * (1 + i % 3)},
                                  "gold": {"kind": "ranking", "tiers": [["b"], ["a"]]}}) + "\n")
    store = SessionStore(tmp_path / "sessions", shard_size=SHARD)
    job = start_run(store, load_dataset(str(path)), ["length"], Config())
    job.session.record_failure("q120", "length", "the backbone timed out", "TimeoutError", [])
    job.session.flush()
    run_headless(job)  # judges every item, q120 included: its verdict supersedes the failure
    return store, job.session.id, [f"q{i}" for i in range(N_ITEMS)]


def row_ids(items: ItemList) -> list[str]:
    """The item ids of the list's rows, top to bottom."""
    return [items.get_row_at(i)[-1].plain for i in range(items.row_count)]


def statuses(items: ItemList) -> list[str]:
    """The status the list's rows show, in words (a narrow list draws each as its mark)."""
    words = {mark: status for status, mark in STATUS_MARKS.items()}
    return [words.get(cell := items.get_row_at(i)[0].plain, cell) for i in range(items.row_count)]


async def test_first_rows_paint_before_the_rest_is_read(big, monkeypatch) -> None:
    store, session_id, ids = big
    gate, held = threading.Event(), threading.Event()
    pages_read = []

    collector_on: list[bool] = []

    def gated(pages, *digits):
        if pages_read:  # the first page is read at once; later ones wait for the gate
            held.set()
            assert gate.wait(20), "the test never opened the gate"
        pages_read.append(1)
        collector_on.append(gc.isenabled())
        return saved.page_events(pages, *digits)

    monkeypatch.setattr(session_screen, "page_events", gated)
    monkeypatch.setattr(ItemList, "FIRST_ROWS", 60)
    app = QatuiApp(Config(), store, open_id=session_id)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
        await pilot.press("j", "g")  # keys before anything is drawn break nothing
        await wait_until(pilot, lambda: app.screen.query_one(ItemList).row_count)
        screen = app.screen
        items = screen.query_one(ItemList)
        # the reader waits for the second page; what it read before is drawn
        await wait_until(pilot, lambda: held.is_set() and "done" in statuses(items), "the first page drawn")
        assert items.row_count == 60  # the first rows, not 450, while the other pages wait
        assert row_ids(items) == ids[:60]
        first = statuses(items)  # page 0: q120's failure and the verdicts on q0-q48
        assert first[:49] == ["done"] * 49 and set(first[49:]) == {"reading"}
        assert screen.state.tasks[("q120", "length")].status == "failed"  # so far
        assert "reading results… " in str(screen.query_one("#about").render())
        await pilot.press("j", "j")  # the screen answers keys while loading
        assert items.cursor_row == 2
        await pilot.press("G")  # the last item: the rows held back are drawn for it
        assert items.selected() == ("q449", "length") and items.row_count == N_ITEMS
        await pilot.press("g")
        gate.set()
        await wait_until(pilot, lambda: items.row_count == N_ITEMS and screen._worst)
        await pilot.press("G")
        assert items.selected() == ("q449", "length")
        assert row_ids(items) == ids
        assert set(statuses(items)) == {"done"}
        q120 = screen.state.tasks[("q120", "length")]
        assert q120.status == "done" and q120.failure == ""  # superseded, as `Session.results()` has it
        about = str(screen.query_one("#about").render())
        assert f"{N_ITEMS}/{N_ITEMS} done · 0 failed" in about and "reading" not in about
        assert screen.query_one(SessionHeader).query("Sparkline")  # drawn once every tau is known
        await pilot.press("w")  # the worst item, wherever its row is
        worst = screen.query_one(ItemList).selected()
        assert screen.state.tasks[worst].tau == min(t.tau for t in screen.state.tasks.values() if t.tau is not None)
    # the cyclic collector is off while the session is read (it re-walked the growing state) and on again after
    assert collector_on and not any(collector_on) and gc.isenabled()


async def test_a_damaged_later_shard_is_named_and_the_rest_still_shows(big) -> None:
    store, session_id, ids = big
    damaged = Path(store.root) / session_id / "results-0004.json"
    damaged.write_bytes(b'{"results": {"1": {"seq": 0')
    app = QatuiApp(Config(), store, open_id=session_id)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None
                    and app.screen.query_one(ItemList).row_count == N_ITEMS)
        screen = app.screen
        messages = [n.message for n in app._notifications]
        assert any("results-0004.json" in m and "not judged" in m for m in messages)
        shown = dict(zip(row_ids(screen.query_one(ItemList)), statuses(screen.query_one(ItemList)), strict=True))
        assert shown["q0"] == "done" and shown["q198"] == "done"  # pages 0-3 (seq 0-199: q120's failure, q0-q198)
        assert {shown[f"q{i}"] for i in range(199, 249)} == {"queued"}  # page 4: unread, shown as not judged
        assert shown["q249"] == "done" and shown["q449"] == "done"  # the pages after the damaged one still read
        assert damaged.read_bytes() == b'{"results": {"1": {"seq": 0'  # left as it was


async def test_a_last_shard_put_back_from_an_older_copy_is_named_and_one_gone_keeps_the_session_closed(big) -> None:
    """The last results file put back from a copy made before its last results: the screen said "completed ·
    400/450 done" with no sign of damage. Now a toast names the damage once every page is read; and with the last
    file gone, the session does not open, naming the file (session.json records how many results files there are)."""
    store, session_id, ids = big
    folder = Path(store.root) / session_id
    last = max(folder.glob("results-*.json"))
    older = json.loads(last.read_text(encoding="utf-8"))
    kept = dict(list(older["results"].items())[:-1])
    assert len(kept) < len(older["results"])
    older["results"] = kept
    last.write_text(json.dumps(older), encoding="utf-8")
    app = QatuiApp(Config(), store, open_id=session_id)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: any("the results files hold" in n.message for n in app._notifications))
        (message,) = [n.message for n in app._notifications if "the results files hold" in n.message]
        assert f"session.json records {N_ITEMS} finished items of length, the results files hold {N_ITEMS - 1}" \
            in message
    last.unlink()
    app = QatuiApp(Config(), store, open_id=session_id)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: any(last.name in n.message for n in app._notifications))
        assert not isinstance(app.screen, SessionScreen)


@pytest.mark.parametrize("shard", [0, 4], ids=["first page", "a later page"])
async def test_a_damaged_stored_verdict_is_named_as_the_cli_names_it_never_a_validation_dump(big, shard) -> None:
    """A results file edited to hold `"scores": "oops"`: the CLI said "damaged verdict of length on q..." in one
    line, but the Session screen showed pydantic's dump ("ValidationError: 3 validation errors for Verdict") and
    stayed blank. It names the session's folder, the judge and the item now, on the first page or a later one."""
    store, session_id, ids = big
    path = Path(store.root) / session_id / f"results-{shard:04d}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    doc = next(d for d in data["results"].values() if d["status"] == "done")
    doc["verdict"]["scores"] = "oops"
    path.write_text(json.dumps(data), encoding="utf-8")
    app = QatuiApp(Config(), store, open_id=session_id)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: any("damaged verdict" in n.message for n in app._notifications))
        (message,) = [n.message for n in app._notifications if "damaged verdict" in n.message]
        assert f"{session_id}: damaged verdict of length on {doc['item_id']}: scores" in message
        assert "ValidationError" not in message and "pydantic" not in message


async def test_first_rows_paint_before_the_dataset_is_read(big, monkeypatch) -> None:
    """Only the items of the first rows are validated before they are drawn; the other 390 wait on a gate."""
    store, session_id, ids = big
    gate = threading.Event()
    validated = []
    to_item = jsonl.record_to_item

    def gated(record, where):
        validated.append(record["id"])
        if len(validated) > 60:  # the first rows' items pass; the next one waits
            assert gate.wait(30), "the test never opened the gate"
        return to_item(record, where)

    monkeypatch.setattr(jsonl, "record_to_item", gated)
    monkeypatch.setattr(ItemList, "FIRST_ROWS", 60)
    app = QatuiApp(Config(), store, open_id=session_id)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.query_one(ItemList).row_count)
        screen = app.screen
        items = screen.query_one(ItemList)
        # the reader waits at item 61; the results read before are drawn
        await wait_until(pilot, lambda: len(validated) > 60 and "done" in statuses(items), "the first rows drawn")
        assert not gate.is_set() and len(validated) <= 61  # drawn from the first 60 items of 450
        assert row_ids(items) == ids[:60] and items.border_title == f"Items ({N_ITEMS})"
        first = statuses(items)  # results page 0: q120's failure (its item not read yet) and verdicts on q0-q48
        assert first[:49] == ["done"] * 49 and set(first[49:]) == {"reading"}
        assert f"reading results… 49/{N_ITEMS}" in str(screen.query_one("#about").render())
        await pilot.press("j", "j")  # the screen answers keys while the dataset is read
        assert items.cursor_row == 2 and screen.query_one(ItemBrowser).selected() == ("q2", "length")
        gate.set()
        await wait_until(pilot, lambda: items.row_count == N_ITEMS and screen._worst)
        assert row_ids(items) == ids and set(statuses(items)) == {"done"}
        assert [item.id for item in screen.state.items] == ids and screen.dataset_items == screen.state.items
        q120 = screen.state.tasks[("q120", "length")]
        assert q120.status == "done" and q120.item is not None and q120.tau is not None  # failure, then its verdict
        assert f"{N_ITEMS}/{N_ITEMS} done · 0 failed" in str(screen.query_one("#about").render())


def changed_question(path: Path) -> None:
    """q0 asks something else now (a valid file, another sha256)."""
    lines = path.read_text().splitlines(keepends=True)
    lines[0] = lines[0].replace("Question 0?", "Another question?")
    path.write_text("".join(lines))


def broken_at_the_end(path: Path) -> None:
    """A record far past the first rows is malformed."""
    path.write_text(path.read_text() + '{"id": "q450", "question": "?"}\n')


@pytest.mark.parametrize(("change", "found"), [(changed_question, True), (broken_at_the_end, False),
                                               (Path.unlink, False)], ids=["changed", "broken", "missing"])
async def test_a_changed_or_missing_dataset_is_read_whole_as_ever(big, change, found) -> None:
    """Not the file the session ran on: it loads whole before the rows are drawn, or the screen says it is not found."""
    store, session_id, ids = big
    change(Path(store.open(session_id).meta["dataset"]["path"]))
    app = QatuiApp(Config(), store, open_id=session_id)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen._worst is not None
                    and app.screen.query_one(ItemList).row_count == N_ITEMS and not app.screen.workers)
        screen = app.screen
        about = str(screen.query_one("#about").render())
        assert ("dataset file not found" in about) is not found
        assert f"{N_ITEMS}/{N_ITEMS} done · 0 failed" in about
        rows = row_ids(screen.query_one(ItemList))  # without the file, from the results, in their order
        assert rows == ids if found else (rows[0] == "q120" and sorted(rows) == sorted(ids))
        q0 = screen.state.tasks[("q0", "length")].item
        assert (q0.question if q0 else None) == ("Another question?" if found else None)
        assert len(screen.state.items) == (N_ITEMS if found else 0)
