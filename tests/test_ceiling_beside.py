"""The human ceiling beside every judge: `sessions show` (text and --json), `qatui table` and the Session screen.

The data is test_classes' ALT_ITEMS (three people, 30 pairwise items, `length` as the judge), whose
ceiling, judge figures and alt-test were worked out by hand there: the same numbers must appear
beside the judge wherever its figures are shown, and nothing where fewer than two people labelled.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
from pathlib import Path

import pytest
from test_classes import ALT_ITEMS, B, run_json, write_pairs

from qatui.cli import main

CEILING_KAPPA = None
"""By hand (test_classes' ALT_ITEMS): a reference leaves out the items the two others split on, so ana's and bo's
are A on 24 items each (18 matched: 0.75) and cy's A on 18 (all matched): each reference is one class, where kappa
is 0 whatever is said (cy's undefined, both sides one class), so none is given."""
CEILING_ACCURACY = (0.75 + 0.75 + 1.0) / 3
JUDGE_KAPPA = None
"""By hand: the judge against those one-class references, 21 of 24, 21 of 24 and 15 of 18: no kappa either."""
ONE_CLASS = "kappa left out for 3 people: the others' majority is one class there, where kappa is 0 whatever is said"
JUDGE_ACCURACY = (21 / 24 + 21 / 24 + 15 / 18) / 3
SPLIT = 12
"""The items where one person alone said B: the other two split there, for that person's reference."""


def _import_labels(tmp_path, path, sessions, people: tuple[str, ...]) -> None:
    from qatui.data.loaders import load_dataset

    dataset = load_dataset(str(path))
    rows = [{"annotator": name, "dataset": dataset.content_hash, "dataset_name": dataset.name,
             "dataset_path": str(path), "format": dataset.format, "item_id": f"p{n}", "kind": "pairwise",
             "label": "B" if row[i] == B else "A", "a": "c1", "b": "c2", "updated": ""}
            for i, name in enumerate(people) for n, row in enumerate(ALT_ITEMS, 1)]
    labels = tmp_path / f"labels-{len(people)}.jsonl"
    labels.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    assert main(["--sessions-dir", str(sessions), "labels", "import", str(labels)]) == 0


@pytest.fixture
def labelled(tmp_path, capsys):
    """ALT_ITEMS as a dataset, a `length` session on it, and ana's labels only: (path, sessions, session id)."""
    path, sessions = tmp_path / "alt.jsonl", tmp_path / "sessions"
    write_pairs(path, [("B" if row[3] == B else "A", ["A"]) for row in ALT_ITEMS])
    session = run_json(capsys, "--sessions-dir", str(sessions), "run", str(path), "--judge", "length", "--json")
    _import_labels(tmp_path, path, sessions, ("ana",))
    return path, sessions, session["session"]


def test_sessions_show_and_table_put_the_ceiling_beside_the_judge(labelled, tmp_path, capsys) -> None:
    path, sessions, session = labelled
    show = ["--sessions-dir", str(sessions), "sessions", "show", session]
    table = ["--sessions-dir", str(sessions), "table", str(path), "--judge", "length"]
    # one person: no ceiling anywhere
    assert "human_ceiling" not in run_json(capsys, *show, "--json")["judges"]["length"]
    assert "human_ceiling" not in run_json(capsys, *table, "--json")["rows"][0]
    _import_labels(tmp_path, path, sessions, ("ana", "bo", "cy"))
    found = run_json(capsys, *show, "--json")["judges"]["length"]["human_ceiling"]
    assert found["people"] == 3 and found["ceiling"]["kappa"] is CEILING_KAPPA and found["one_class"] == 3
    assert found["ceiling"]["accuracy"] == pytest.approx(CEILING_ACCURACY) and found["split"] == SPLIT
    assert found["kappa"] is JUDGE_KAPPA and found["accuracy"] == pytest.approx(JUDGE_ACCURACY)
    assert found["alt_test"]["winning_rate"] == pytest.approx(2 / 3) and found["alt_test"]["passed"]
    assert main(show) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert (f"vs people (3 people, each against the others' majority): kappa -, accuracy "
            f"{JUDGE_ACCURACY:.3f} · human ceiling kappa -, accuracy {CEILING_ACCURACY:.3f} · "
            f"{SPLIT} decisions the others split on left out · {ONE_CLASS}") in text, text
    assert "the judge can replace an annotator: winning rate 0.67 at ε=0.2" in text
    row = run_json(capsys, *table, "--json")["rows"][0]
    assert row["human_ceiling"]["kappa"] is JUDGE_KAPPA
    assert row["human_ceiling"]["ceiling"]["kappa"] is CEILING_KAPPA
    assert main([*table, "--to", "csv"]) == 0
    [shown] = csv.DictReader(io.StringIO(capsys.readouterr().out))
    cell = shown["κ vs people: judge/ceiling"]
    assert cell == "–/– pass"


async def test_the_session_screen_shows_the_ceiling_beside_the_judge(labelled, tmp_path) -> None:
    from fakes import wait_until as until
    from tui_support import open_the_only_session

    from qatui.config import Config
    from qatui.store.session import SessionStore
    from qatui.tui.app import QatuiApp
    from qatui.tui.widgets.session_header import SessionHeader

    path, sessions, _ = labelled
    _import_labels(tmp_path, path, sessions, ("ana", "bo", "cy"))
    app = QatuiApp(Config(), SessionStore(sessions))
    async with app.run_test(size=(80, 24)) as pilot:
        shown = await open_the_only_session(pilot)
        header = app.screen.query_one(SessionHeader)
        await until(pilot, lambda: "ceiling" in shown())
        assert (f"3 people: acc {JUDGE_ACCURACY:.3f} · ceiling acc {CEILING_ACCURACY:.3f} · κ none (one class) · "
                "alt-test pass") in shown()
        # at 80x24 too: the ceiling and a pairwise judge's class line are on screen, not only drawn
        for line in (header.query_one(".ceiling"), header.query_one(".classes")):
            assert line.display and line.region.height >= 1 and line.region.bottom <= header.region.bottom


def test_the_ceiling_beside_a_judge_stands_on_the_units_that_judge_decided(tmp_path, capsys) -> None:
    """Four pairs; ana says A, A, B, A and bo A, A, A, B. On all four each matches the other on 2 of 4 (accuracy 0.5;
    Cohen's kappa (0.5 - 10/16) / (6/16) = -1/3). p3 and p4 have no reference, so rouge-l decided p1 and p2 only,
    where the two agree: the ceiling beside it is accuracy 1.0 on those 4 of 8 decisions, its kappa none (one
    class), never the 0.5 of units it never saw. `labels agreement` of a --limit 2 run the same."""
    from qatui.data.loaders import load_dataset

    path, sessions = tmp_path / "four.jsonl", tmp_path / "sessions"
    path.write_text("".join(json.dumps({"id": f"p{n}", "question": f"Question {n}?",
                                        "references": ["the cat sat on the mat"] if n < 3 else [],
                                        "candidates": {"c1": "the cat sat", "c2": "a dog ran"}}) + "\n"
                            for n in range(1, 5)), encoding="utf-8")
    session = run_json(capsys, "--sessions-dir", str(sessions), "run", str(path), "--judge", "rouge-l",
                       "--json")["session"]
    dataset = load_dataset(str(path))
    said = {"ana": "AABA", "bo": "AAAB"}
    rows = [{"annotator": name, "dataset": dataset.content_hash, "dataset_name": dataset.name,
             "dataset_path": str(path), "format": dataset.format, "item_id": f"p{n}", "kind": "pairwise",
             "label": label, "a": "c1", "b": "c2", "updated": ""}
            for name, labels in said.items() for n, label in enumerate(labels, 1)]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    assert main(["--sessions-dir", str(sessions), "labels", "import", str(labels)]) == 0
    show = ["--sessions-dir", str(sessions), "sessions", "show", session]
    found = run_json(capsys, *show, "--json")["judges"]["rouge-l"]["human_ceiling"]
    assert found["ceiling"] == {"kappa": None, "accuracy": 1.0}
    assert (found["units"], found["ceiling_units"]) == (4, 8)
    assert main(show) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "human ceiling kappa -, accuracy 1.000 on the judge's 4 of 8 decisions" in text, text
    run_json(capsys, "--sessions-dir", str(sessions), "run", str(path), "--judge", "length", "--limit", "2", "--json")
    agreement = run_json(capsys, "--sessions-dir", str(sessions), "labels", "agreement", str(path), "--json")
    assert agreement["ceiling"]["ceiling"]["accuracy"] == 0.5
    assert agreement["ceiling"]["ceiling"]["kappa"] == pytest.approx(-1 / 3)
    assert [row["ceiling"] for row in agreement["beside_people"]] == [{"kappa": None, "accuracy": 1.0}] * 2
    assert main(["--sessions-dir", str(sessions), "labels", "agreement", str(path)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert text.count("(ceiling -, 1.000 on the judge's 4 of 8 decisions)") == 2, text
    asyncio.run(_agreement_screen_says_kappa_none(dataset, sessions))


async def _agreement_screen_says_kappa_none(dataset, sessions) -> None:
    """The Label screen's g at 80 columns: a kappa none of one class is "none*" (the long "none (one class)" was
    cut at the screen's edge), with what it means under the people's line."""
    from fakes import wait_until

    from qatui.config import Config
    from qatui.store.session import SessionStore
    from qatui.tui.app import QatuiApp
    from qatui.tui.screens.label_agreement import AgreementScreen
    from qatui.tui.widgets.vim_table import VimTable

    store = SessionStore(sessions)
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(AgreementScreen(dataset, store))
        await wait_until(pilot, lambda: isinstance(app.screen, AgreementScreen)
                         and [t.row_count for t in app.screen.query("#per-person")] == [4])
        table = app.screen.query_one("#per-person", VimTable)
        kappas = {(str(table.get_row_at(k)[0]), str(table.get_row_at(k)[5])) for k in range(table.row_count)}
        assert ("rouge-l", "none*") in kappas, kappas
        shown = " ".join(str(app.screen.query_one("#agreement-people").render()).split())
        assert "kappa none*: the person gave one class on every unit the judge decided" in shown, shown
        assert "human ceiling: Cohen's kappa -0.333, accuracy 0.500 (each person against the others' majority)" \
            in shown, shown
        # each judge beside the ceiling on the units it decided (the CLI's lines): rouge-l, not applicable on p3 and
        # p4, and the --limit 2 run of length, each on 4 of the 8 decisions, where the two people agree (1.000)
        beside = app.screen.query_one("#beside-ceiling", VimTable)
        header = [str(column.label) for column in beside.columns.values()]
        rows = [dict(zip(header, map(str, beside.get_row_at(k)))) for k in range(beside.row_count)]
        assert sorted(row["judge"] for row in rows) == ["length", "rouge-l"], rows
        assert {(row["ceiling kappa"], row["ceiling acc"], row["units"], row["alt-test"]) for row in rows} == {
            ("-", "1.000", "4 of 8", "-")}, rows
        assert beside.display and beside.region.height >= 3  # on screen at 80x24, not only filled


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_agreement_dialog_shows_the_ceiling_and_each_judge_beside_it(snap_compare, tmp_path, capsys,
                                                                         monkeypatch, size) -> None:
    """The Label screen's g on ALT_ITEMS with three people and two judges (length, rouge-l), as looked at in tmux:
    the people's line with kappa's units, the ceiling, the judge-by-person table and each judge beside the ceiling,
    both tables' rows on screen at 80x24."""
    from fakes import settle
    from tui_support import freeze_time

    from qatui.config import Config
    from qatui.data.loaders import load_dataset
    from qatui.store.session import SessionStore
    from qatui.tui.app import QatuiApp
    from qatui.tui.screens.label_agreement import AgreementScreen

    freeze_time(monkeypatch)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))  # Home's title names the sessions folder: ~/sessions in every run
    path, sessions = Path("alt.jsonl"), Path("sessions")
    write_pairs(path, [("B" if row[3] == B else "A", ["A"]) for row in ALT_ITEMS])
    for judge in ("length", "rouge-l"):
        run_json(capsys, "--sessions-dir", str(sessions), "run", str(path), "--judge", judge, "--json")
    _import_labels(tmp_path, path, sessions, ("ana", "bo", "cy"))
    store = SessionStore(sessions)
    app = QatuiApp(Config(), store)

    async def open_dialog(pilot) -> None:
        app.push_screen(AgreementScreen(load_dataset(str(path)), store))
        await settle(pilot, lambda: isinstance(app.screen, AgreementScreen)
                     and [t.row_count for t in app.screen.query("#beside-ceiling")] == [2], "the dialog")

    assert snap_compare(app, run_before=open_dialog, terminal_size=size)
