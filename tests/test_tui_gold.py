"""`g` on the Session and Compare screens under Pilot: the gold cycles dataset → each annotator → majority,
and the header's metrics, the per-item tau column and sparkline, `w`, the panels' gold and the two
verdicts of a disagreement all follow it (figures by hand in tests/test_labels_gold.py).
"""

from __future__ import annotations

import io

import pytest
from fakes import settle, wait_until
from rich.console import Console
from test_labels_gold import ROUGE_ANA, ROUGE_MAJORITY, three  # noqa: F401 (a fixture)
from test_tui_jury import panel_text_of
from textual.widgets import Sparkline

from qatui.config import Config
from qatui.tui.app import QatuiApp
from qatui.tui.screens.compare import CompareScreen, SideBySideScreen
from qatui.tui.screens.session import SessionScreen
from qatui.tui.widgets.item_list import ItemList
from qatui.tui.widgets.question_panel import QuestionPanel
from qatui.tui.widgets.ranking_panel import RankingPanel
from qatui.tui.widgets.session_header import SessionHeader

TAU_ANA = {"q1": 1.0, "q2": 1 / 3, "q3": -1.0}
TAU_BO = {"q1": 1.0, "q2": 1.0, "q3": None}  # bo did not label q3
TAU_DI = {"q1": None, "q2": 1.0, "q3": None}  # di labelled q2 only
TAU_MAJORITY = {"q1": 1.0, "q2": 1.0, "q3": -1.0}


def tau_column(screen: SessionScreen) -> dict[str, str]:
    """Item id -> the tau cell as drawn."""
    items = screen.query_one(ItemList)
    rows = [[cell.plain for cell in items.get_row_at(i)] for i in range(items.row_count)]
    return {row[-1]: row[1].strip() for row in rows}


def drawn(taus: dict[str, float | None]) -> dict[str, str]:
    return {item_id: "–" if tau is None else f"{tau:+.2f}" for item_id, tau in taus.items()}


def rendered(panel) -> str:
    """A panel's Rich rendering as plain text."""
    console = Console(width=80, record=True, file=io.StringIO())
    console.print(panel.render())
    return console.export_text()


def sparkline(screen: SessionScreen) -> list[float]:
    return list(screen.query_one(SessionHeader).query_one(Sparkline).data)


async def gold_shown(pilot, screen: SessionScreen, spec: str) -> str:
    await settle(pilot, lambda: screen.gold == spec, f"gold {spec}")
    return panel_text_of(screen.query_one(SessionHeader))


async def test_g_on_the_session_screen_measures_everything_shown_against_the_next_gold(three) -> None:  # noqa: F811
    _, store, ids, _ = three
    app = QatuiApp(Config(), store, open_id=ids["rouge-l"])
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen) and len(app.screen.golds) == 5)
        screen = app.screen
        assert screen.golds == ["dataset", "annotator:ana", "annotator:bo", "annotator:di", "majority"]
        assert tau_column(screen) == {"q1": "+1.00", "q2": "+1.00", "q3": "+1.00"}
        await wait_until(pilot, lambda: "Gold" in " ".join(key.description for key in screen.query("FooterKey")))

        await pilot.press("g")  # the item list has focus: its own g (first row) gives way
        header = await gold_shown(pilot, screen, "annotator:ana")
        assert "gold: annotator ana, 3 of 3 items labelled" in header
        assert f"tau {ROUGE_ANA:+.2f}" in header  # +0.11, from +1.00
        assert tau_column(screen) == drawn(TAU_ANA)
        assert sparkline(screen) == pytest.approx(list(TAU_ANA.values()))
        await pilot.press("down")  # q2: the ranking shows ana's tau (below 30 rows the question leaves the gold out)
        await wait_until(pilot, lambda: "Kendall tau vs gold +0.333" in rendered(screen.query_one(RankingPanel)))
        await pilot.press("w")  # the worst item against ana: q3
        await wait_until(pilot, lambda: screen.query_one(ItemList).selected() == ("q3", "rouge-l"))

        await pilot.press("g")
        header = await gold_shown(pilot, screen, "annotator:bo")
        assert "gold: annotator bo, 2 of 3 items labelled" in header and "tau +1.00" in header
        assert tau_column(screen) == drawn(TAU_BO)
        assert sparkline(screen) == pytest.approx([1.0, 1.0])

        await pilot.press("g")
        header = await gold_shown(pilot, screen, "annotator:di")
        assert "gold: annotator di, 1 of 3 items labelled" in header and "tau +1.00" in header
        assert tau_column(screen) == drawn(TAU_DI)

        await pilot.press("g")
        header = await gold_shown(pilot, screen, "majority")
        assert "the annotators' majority of 3 annotators" in header and f"tau {ROUGE_MAJORITY:+.2f}" in header
        assert tau_column(screen) == drawn(TAU_MAJORITY)  # q2 against bo's and di's c1 > c2 > c3

        await pilot.press("g")
        header = await gold_shown(pilot, screen, "dataset")
        assert "gold: the dataset's gold" in header and "tau +1.00" in header
        assert tau_column(screen) == {"q1": "+1.00", "q2": "+1.00", "q3": "+1.00"}
        assert sparkline(screen) == pytest.approx([1.0, 1.0, 1.0])

        await pilot.press("g", "g")  # pressed twice before the first figures come: the second gold is shown
        header = await gold_shown(pilot, screen, "annotator:bo")
        assert "gold: annotator bo" in header and tau_column(screen) == drawn(TAU_BO)


async def test_without_labels_g_stays_the_lists_first_row(three) -> None:  # noqa: F811
    _, store, ids, _ = three
    for folder in sorted((store.root / "labels").rglob("*"), reverse=True):
        folder.unlink() if folder.is_file() else folder.rmdir()
    app = QatuiApp(Config(), store, open_id=ids["rouge-l"])
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen._worst)
        screen = app.screen
        assert screen.golds == ["dataset"] and "Gold" not in " ".join(k.description for k in screen.query("FooterKey"))
        await pilot.press("G")
        assert screen.query_one(ItemList).cursor_row == 2
        await pilot.press("g")
        await settle(pilot)
        assert screen.query_one(ItemList).cursor_row == 0 and screen.gold == "dataset"


async def test_g_on_the_compare_screen_and_the_two_verdicts_follow_the_gold(three) -> None:  # noqa: F811
    _, store, ids, _ = three
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.screen is not None and not app.screen.workers)
        await app.push_screen(CompareScreen(store, [ids["rouge-l"], ids["length"]]))
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.comparison is not None)
        first = app.screen
        assert first.golds == ["dataset", "annotator:ana", "annotator:bo", "annotator:di", "majority"]
        assert [run.metrics["kendall"] for run in first.comparison.runs] == pytest.approx([1.0, -1 / 3])
        await pilot.press("g")
        await wait_until(pilot, lambda: app.screen is not first and app.screen.comparison is not None)
        screen = app.screen
        assert screen.gold == "annotator:ana" and "gold: annotator ana, 3 of 3 items labelled" in screen.sub_title
        assert [run.metrics["kendall"] for run in screen.comparison.runs] == pytest.approx([ROUGE_ANA, -1 / 3])
        runs = screen.query_one("#runs")
        assert runs.get_row_at(0)[4].plain == f"{ROUGE_ANA:+.2f}"  # the tau column of run A
        assert [row["metrics"]["kendall"] for row in screen.comparison.table["rows"]] == \
            pytest.approx([ROUGE_ANA, -1 / 3])
        screen.query_one("#disagreements").focus()
        await pilot.press("down", "enter")  # q2, where ana ranks c2 > c1 > c3
        await settle(pilot, lambda: isinstance(app.screen, SideBySideScreen) and bool(app.screen.tasks), "both verdicts")
        side = app.screen
        assert side.disagreement.item_id == "q2"
        assert "gold c2 > c1 > c3" in str(side.query_one(QuestionPanel).render())
        taus = [task.tau for task in side.tasks]
        assert taus == pytest.approx([1 / 3, -1.0])  # rouge-l and length against ana on q2
        await pilot.press("escape")
        for expected in ("annotator:bo", "annotator:di", "majority", "dataset"):
            await pilot.press("g")
            await wait_until(pilot, lambda want=expected: app.screen.gold == want and app.screen.comparison is not None)
        assert [run.metrics["kendall"] for run in app.screen.comparison.runs] == pytest.approx([1.0, -1 / 3])


async def test_a_refused_label_file_leaves_the_session_open_and_says_the_ceiling_is_not_shown(three) -> None:  # noqa: F811
    """One label file that does not fit its items (a ranking leaving a response out) kept the Session screen from
    opening at all: the figures against the dataset's gold are shown, with a warning naming the file."""
    from qatui.data.labels import Label
    from qatui.store.labels import LabelStore

    _, store, ids, meta = three
    with LabelStore(store.root).open_pass("ana", meta) as labelled:
        labelled.put(Label(item_id="q1", kind="ranking", tiers=[["c1"], ["c2"]]))
    app = QatuiApp(Config(), store, open_id=ids["rouge-l"])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None
                     and any(n.title == "Labels" for n in app._notifications), "the session and its warning",
                     drop_toasts=False)
        warning = next(n for n in app._notifications if n.title == "Labels")
        assert "human ceiling not shown" in warning.message and "a ranking must name every response once" in \
            warning.message
        assert "tau +1.00" in panel_text_of(app.screen.query_one(SessionHeader))
