"""Which class a judge gets wrong: kappa, weighted kappa, the confusion matrix, per-class recall and precision,
the human ceiling and the alternative annotator test, each against figures worked out by hand.

The pairwise dataset `pairs` (7 items, c1 = A, c2 = B) is judged by `length`, which prefers the
longer answer and ties equal lengths. People's label(s) and the judge's preference per item:
p1 A/A, p2 B/A, p3 B/B, p4 tie/B, p5 tie/tie, p6 A/tie, p7 (two labels) A,A/A. Counted per
human label, rows people and columns the judge over A, tie, B:

    A   [3, 1, 0]      row totals 4, 2, 2; column totals 4, 2, 2; 8 labels, 5 on the diagonal
    tie [0, 1, 1]      kappa: p_o = 5/8, p_e = (4*4 + 2*2 + 2*2)/64 = 3/8, (5/8 - 3/8)/(5/8) = 2/5
    B   [1, 0, 1]      linear: observed |i-j| = (1 + 1 + 2)/8 = 1/2; expected sum |i-j| r_i c_j / 64
                       = (8 + 16 + 8 + 4 + 16 + 4)/64 = 7/8; 1 - (1/2)/(7/8) = 3/7
recall A 3/4, tie 1/2, B 1/2; precision A 3/4, tie 1/2, B 1/2.
"""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix, precision_recall_fscore_support
from tui_support import exact_interval

from qatui.cli import main
from qatui.metrics.ceiling import alt_test, alt_test_sentence, human_ceiling
from qatui.metrics.classes import PREFERENCE_CLASSES, YES_NO, class_agreement, kappa_from_counts

WORDS = {"A": (6, 3), "B": (3, 6), "tie": (4, 4)}
PAIRS = [("A", ["A"]), ("A", ["B"]), ("B", ["B"]), ("B", ["tie"]), ("tie", ["tie"]), ("tie", ["A"]), ("A", ["A", "A"])]
"""(the longer answer, which `length` prefers; people's labels) per item."""
CONFUSION = [[3, 1, 0], [0, 1, 1], [1, 0, 1]]
A, TIE, B = 0.0, 1.0, 2.0


def pairs_units() -> list[list[tuple[str, str]]]:
    return [[(label, longer) for label in labels] for longer, labels in PAIRS]


def test_kappa_weighted_kappa_and_per_class_rates_equal_the_hand_computation() -> None:
    found = class_agreement(pairs_units(), PREFERENCE_CLASSES, ordinal=True)
    assert found["confusion"] == CONFUSION
    assert found["metrics"]["kappa"] == pytest.approx(2 / 5)
    assert found["metrics"]["kappa_linear"] == pytest.approx(3 / 7)
    recall = {label: found["per_class"][label]["recall"] for label in PREFERENCE_CLASSES}
    precision = {label: found["per_class"][label]["precision"] for label in PREFERENCE_CLASSES}
    assert recall == pytest.approx({"A": 3 / 4, "tie": 1 / 2, "B": 1 / 2})
    assert precision == pytest.approx({"A": 3 / 4, "tie": 1 / 2, "B": 1 / 2})
    assert found["n"] == 8 and found["n_items"] == 7
    low, high = found["ci"]["kappa"]
    assert low < 2 / 5 < high


def test_the_figures_equal_scikit_learns_on_random_labels() -> None:
    rng = np.random.default_rng(7)
    for _ in range(20):
        people, judge = rng.choice(PREFERENCE_CLASSES, 40), rng.choice(PREFERENCE_CLASSES, 40)
        found = class_agreement([[(p, j)] for p, j in zip(people, judge, strict=True)], PREFERENCE_CLASSES,
                                ordinal=True, ci=False)
        labels = list(PREFERENCE_CLASSES)
        assert found["metrics"]["kappa"] == pytest.approx(cohen_kappa_score(people, judge, labels=labels))
        assert found["metrics"]["kappa_linear"] == pytest.approx(
            cohen_kappa_score(people, judge, labels=labels, weights="linear"))
        assert found["confusion"] == confusion_matrix(people, judge, labels=labels).tolist()
        _, recall, _, _ = precision_recall_fscore_support(people, judge, labels=labels, zero_division=np.nan)
        assert [found["per_class"][c]["recall"] for c in labels] == pytest.approx(list(recall))


def test_the_resamples_kappa_is_scikit_learns_formula() -> None:
    """The CIs compute kappa from confusion counts; on any table it is scikit-learn's value."""
    rng = np.random.default_rng(3)
    for weights in (None, "linear"):
        for _ in range(30):
            people, judge = rng.integers(0, 3, 25), rng.integers(0, 3, 25)
            counts = confusion_matrix(people, judge, labels=[0, 1, 2])
            assert float(kappa_from_counts(counts, weights)) == pytest.approx(
                cohen_kappa_score(people, judge, labels=[0, 1, 2], weights=weights))


def test_yes_no_gives_tpr_and_tnr_by_hand() -> None:
    # people yes yes yes no no, judge yes no yes no yes: TPR = 2/3 (yes found), TNR = 1/2 (no found);
    # kappa: p_o = 3/5, p_e = (3*3 + 2*2)/25 = 13/25, (15/25 - 13/25)/(12/25) = 1/6
    people, judge = ["yes", "yes", "yes", "no", "no"], ["yes", "no", "yes", "no", "yes"]
    found = class_agreement([[pair] for pair in zip(people, judge, strict=True)], YES_NO)
    assert found["tpr"] == pytest.approx(2 / 3) and found["tnr"] == pytest.approx(1 / 2)
    assert found["metrics"]["kappa"] == pytest.approx(1 / 6)
    assert "kappa_linear" not in found["metrics"]  # yes / no is nominal


def test_a_judge_tie_is_its_own_class_never_a_hit() -> None:
    # people A, A; the judge tie, A: the tie is counted in column tie of row A, and recall of A is 1/2
    found = class_agreement([[("A", "tie")], [("A", "A")]], PREFERENCE_CLASSES, ordinal=True)
    assert found["confusion"] == [[1, 1, 0], [0, 0, 0], [0, 0, 0]]
    assert found["per_class"]["A"]["recall"] == pytest.approx(1 / 2)
    assert found["per_class"]["tie"]["precision"] == 0.0
    assert found["metrics"] == {} and found["kappa_undefined"]  # people: one class; p_o = p_e = 1/2 for any judge
    alike = class_agreement([[("A", "A")], [("A", "A")]], PREFERENCE_CLASSES, ordinal=True)
    assert alike["metrics"] == {}  # one class on both sides: p_e = 1, kappa undefined, absent rather than 0 or 1


def decisions(codes: list[float]) -> dict[tuple[str, str, str], float]:
    return {(f"i{n}", "c1", "c2"): code for n, code in enumerate(codes)}


def test_human_ceiling_is_each_person_against_the_others_majority_by_hand() -> None:
    # unit:  1    2    3  4    5    6
    # ana    A    A    B  B    A    tie
    # bo     A    A    B  A    A    B
    # cy     A    B    B  B    tie  B
    # judge  A    A    B  B    B    B
    # A unit the two others split on (no decision made most often) is no reference: it is left out.
    # ana's reference (bo, cy): 1 A, 3 B, 6 B (2, 4, 5 split); ana A B tie matches 2 of 3;
    #   kappa: ana A1 B1 tie1, ref A1 B2: p_e = (1 + 2)/9 = 1/3, (2/3 - 1/3)/(2/3) = 1/2; the judge A B B: 1 (p_e 5/9)
    # bo's reference (ana, cy): 1 A, 3 B, 4 B (2, 5, 6 split); bo A B A matches 2 of 3:
    #   bo A2 B1, ref A1 B2: p_e = 4/9, (2/3 - 4/9)/(5/9) = 2/5; the judge A B B: 1
    # cy's reference (ana, bo): 1 A, 2 A, 3 B, 5 A (4, 6 split); cy A B B tie matches 2 of 4:
    #   cy A1 B2 tie1, ref A3 B1: p_e = (3 + 2)/16, (8/16 - 5/16)/(11/16) = 3/11;
    #   the judge A A B B matches 3 of 4: A2 B2 against A3 B1, p_e = 8/16, (12 - 8)/8 = 1/2
    # Read as ties instead (the plurality's tie), the splits were references nobody gave.
    people = {"ana": decisions([A, A, B, B, A, TIE]), "bo": decisions([A, A, B, A, A, B]),
              "cy": decisions([A, B, B, B, TIE, B])}
    found = human_ceiling(people, {"judge": decisions([A, A, B, B, B, B])})
    assert {name: p["kappa"] for name, p in found["people"].items()} == pytest.approx(
        {"ana": 1 / 2, "bo": 2 / 5, "cy": 3 / 11})
    assert {name: p["n"] for name, p in found["people"].items()} == {"ana": 3, "bo": 3, "cy": 4}
    assert found["ceiling"]["kappa"] == pytest.approx((1 / 2 + 2 / 5 + 3 / 11) / 3)
    assert found["ceiling"]["accuracy"] == pytest.approx((2 / 3 + 2 / 3 + 2 / 4) / 3)
    assert found["judges"]["judge"]["kappa"] == pytest.approx((1 + 1 + 1 / 2) / 3)
    assert found["judges"]["judge"]["accuracy"] == pytest.approx((1 + 1 + 3 / 4) / 3)
    assert found["split"] == 4  # units 2, 4, 5 and 6
    assert human_ceiling({"ana": people["ana"]}, {}) is None  # one person: no ceiling


def test_a_reference_of_one_class_gives_no_kappa_and_is_left_out_of_the_means_by_hand() -> None:
    """Where the others' majority is one class, chance agreement equals the observed one whatever is said: kappa
    is 0 (a person matching 39 of 40 read a ceiling of 0.000). Such a person's kappa, and the judge's against the
    same reference, are None and left out of the means; accuracy stays, and `one_class` counts them."""
    # unit:  1  2  3  4
    # ana    A  A  A  A
    # bo     A  A  B  B
    # cy     A  A  B  B
    # judge  A  B  B  B
    # ana's reference (bo, cy): A A B B; ana matches 2 of 4, ana A4 against A2 B2: p_e = 1/2, kappa 0 (defined);
    #   the judge matches 3 of 4: A1 B3 against A2 B2, p_e = (2 + 6)/16 = 1/2, (3/4 - 1/2)/(1/2) = 1/2
    # bo's reference (ana, cy): 1 A, 2 A (3, 4 split): one class; bo matches 2 of 2, the judge 1 of 2
    # cy's reference (ana, bo): the same as bo's
    people = {"ana": decisions([A, A, A, A]), "bo": decisions([A, A, B, B]), "cy": decisions([A, A, B, B])}
    found = human_ceiling(people, {"judge": decisions([A, B, B, B])})
    assert {name: p["kappa"] for name, p in found["people"].items()} == {"ana": 0.0, "bo": None, "cy": None}
    assert found["one_class"] == 2
    assert found["ceiling"]["kappa"] == 0.0  # ana's alone
    assert found["ceiling"]["accuracy"] == pytest.approx((2 / 4 + 1 + 1) / 3)
    assert found["judges"]["judge"]["kappa"] == pytest.approx(1 / 2)  # against ana's reference alone
    assert found["judges"]["judge"]["accuracy"] == pytest.approx((3 / 4 + 1 / 2 + 1 / 2) / 3)
    alone = human_ceiling({"bo": people["bo"], "cy": people["cy"], "ana": people["ana"]}, {})
    assert alone["one_class"] == 2
    every = human_ceiling({"ana": decisions([A] * 4), "bo": decisions([A] * 4)}, {"judge": decisions([B] * 4)})
    assert every["one_class"] == 2 and every["ceiling"]["kappa"] is None and every["judges"]["judge"]["kappa"] is None


def test_a_judge_that_always_ties_never_beats_people_who_split() -> None:
    """Three people who never say tie, split 2-1 on 30 of 40 pairs: read as the others' tie, each split was a
    reference nobody gave, and a judge that says tie on every pair scored accuracy 0.500 against a human ceiling
    of 0.250 (every person below a judge with no opinion). Splits are left out now: the judge's tie is a miss on
    every reference, and each person matches the others' majority where there is one."""
    people = {"ana": decisions([A] * 10 + [A] * 10 + [A] * 10 + [B] * 10),
              "bo": decisions([A] * 10 + [A] * 10 + [B] * 10 + [A] * 10),
              "cy": decisions([A] * 10 + [B] * 10 + [A] * 10 + [A] * 10)}
    found = human_ceiling(people, {"tie": decisions([TIE] * 40)})
    assert found["judges"]["tie"]["accuracy"] == 0.0
    assert found["ceiling"]["accuracy"] == pytest.approx(0.5)  # each: with the unanimous 10, against the 10 they lost
    assert found["split"] == 30


# The alt-test's 30 items (one pair each): 15 where all agree on A and the judge too; 3 where all say A
# and the judge B; 6 where ana alone says B (the judge A); 6 where bo alone says B (the judge A).
ALT_ITEMS = [(A, A, A, A)] * 15 + [(A, A, A, B)] * 3 + [(B, A, A, A)] * 6 + [(A, B, A, A)] * 6
"""(ana, bo, cy, the judge) per item."""


def test_alt_test_equals_the_hand_computation() -> None:
    # d = W_h - W_f per item. ana: +1 on the judge's 3 misses (it matches no other, ana both), -1 on her 6
    # (the judge matches both others, she none), 0 elsewhere (on bo's 6 both match cy alone). Mean -3/30 =
    # -0.1; sample variance (3 * 1.1^2 + 6 * 0.9^2 + 21 * 0.1^2)/29 = 8.7/29 = 0.3; se = sqrt(0.3/30) = 0.1;
    # t = (-0.1 - 0.2)/0.1 = -3 on 29 degrees of freedom. bo: the same. cy: +1 on the 3 misses, 0 elsewhere:
    # mean 0.1, variance (3 * 0.81 + 27 * 0.01)/29 = 2.7/29, t = -0.1 / sqrt(2.7/29/30) = -1.7951.
    # Benjamini-Yekutieli over 3 p-values, c(3) = 1 + 1/2 + 1/3 = 11/6: sorted p1 = p2 < p3, adjusted
    # p3' = 11/6 p3, p2' = min(3 * 11/6 / 2 * p2, p3'), p1' = min(3 * 11/6 * p1, p2') = 2.75 p1.
    # W_f is 0 only on the judge's 3 misses for everyone: advantage probability 27/30 = 0.9.
    from scipy.stats import t as student

    people = {name: decisions([row[i] for row in ALT_ITEMS]) for i, name in enumerate(("ana", "bo", "cy"))}
    judge = decisions([row[3] for row in ALT_ITEMS])
    found = alt_test(people, judge, epsilon=0.2)
    p_ana, p_cy = student.cdf(-3.0, 29), student.cdf(-0.1 / np.sqrt(2.7 / 29 / 30), 29)
    assert p_ana == pytest.approx(0.00275, abs=1e-5) and p_cy == pytest.approx(0.0415, abs=1e-4)
    per = found["per_person"]
    assert [per[n]["p"] for n in ("ana", "bo", "cy")] == pytest.approx([p_ana, p_ana, p_cy])
    assert per["ana"]["p_adjusted"] == pytest.approx(2.75 * p_ana)  # 0.0076 <= 0.05: rejected
    assert per["cy"]["p_adjusted"] == pytest.approx(11 / 6 * p_cy)  # 0.0762 > 0.05: kept
    assert [per[n]["rejected"] for n in ("ana", "bo", "cy")] == [True, True, False]
    assert found["winning_rate"] == pytest.approx(2 / 3) and found["passed"]
    assert found["advantage_probability"] == pytest.approx(0.9)
    assert alt_test_sentence(found).startswith("the judge can replace an annotator: winning rate 0.67 at ε=0.2")
    strict = alt_test(people, judge, epsilon=0.1)  # a smaller margin: t(ana) = -0.2/0.1 = -2, p = 0.0275,
    assert not strict["passed"]  # adjusted 2.75 * 0.0275 = 0.076 > 0.05: nobody beaten
    assert alt_test_sentence(strict).startswith("the judge cannot replace an annotator: winning rate 0.00 at ε=0.1")


def test_the_alt_test_needs_three_people_with_thirty_items() -> None:
    people = {name: decisions([row[i] for row in ALT_ITEMS[:29]]) for i, name in enumerate(("ana", "bo", "cy"))}
    found = alt_test(people, decisions([row[3] for row in ALT_ITEMS[:29]]))
    assert not found["ran"] and found["items"] == {"ana": 29, "bo": 29, "cy": 29}
    assert alt_test_sentence(found).startswith("alt-test not run: needs 3 people who each labelled at least 30")
    two = {name: decisions([row[i] for row in ALT_ITEMS]) for i, name in enumerate(("ana", "bo"))}
    assert not alt_test(two, decisions([row[3] for row in ALT_ITEMS]))["ran"]


# -- through the CLI ------------------------------------------------------------------------------------


def write_pairs(path, rows: list[tuple[str, list[str]]]) -> None:
    """A pairwise dataset: per item the longer answer (A, B or equal: tie) and the dataset's labels."""
    with path.open("w", encoding="utf-8") as out:
        for n, (longer, labels) in enumerate(rows, 1):
            first, second = WORDS[longer]
            out.write(json.dumps({"id": f"p{n}", "question": f"Question {n}?", "references": ["a reference"],
                                  "candidates": {"c1": " ".join(["word"] * first), "c2": " ".join(["word"] * second)},
                                  "gold": {"kind": "pairwise", "a": "c1", "b": "c2", "labels": labels}}) + "\n")


def run_json(capsys, *argv: str) -> dict:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def pairs(tmp_path, capsys):
    """The `pairs` dataset and a finished `length` session on it: (dataset path, sessions dir, session id)."""
    path, sessions = tmp_path / "pairs.jsonl", tmp_path / "sessions"
    write_pairs(path, PAIRS)
    data = run_json(capsys, "--sessions-dir", str(sessions), "run", str(path), "--judge", "length", "--json")
    return path, sessions, data["session"]


def test_sessions_show_and_table_carry_kappa_and_the_confusion_matrix(pairs, capsys) -> None:
    path, sessions, session = pairs
    shown = run_json(capsys, "--sessions-dir", str(sessions), "sessions", "show", session, "--json")
    length = shown["judges"]["length"]
    assert length["metrics"]["kappa"] == pytest.approx(2 / 5)
    assert length["metrics"]["kappa_linear"] == pytest.approx(3 / 7)
    assert length["classes"]["confusion"] == CONFUSION and length["classes"]["classes"] == ["A", "tie", "B"]
    assert length["classes"]["per_class"]["A"]["recall"] == pytest.approx(3 / 4)
    table = run_json(capsys, "--sessions-dir", str(sessions), "table", str(path), "--judge", "length", "--json")
    row = table["rows"][0]
    assert row["reused"] and row["metrics"]["kappa"] == pytest.approx(2 / 5)
    assert row["classes"]["confusion"] == CONFUSION
    assert main(["--sessions-dir", str(sessions), "sessions", "show", session]) == 0
    text = capsys.readouterr().out
    assert "kappa_linear" in text and "people \\ judge" in text and "0.750 [" in text  # recall of A with its CI
    assert main(["--sessions-dir", str(sessions), "table", str(path), "--judge", "length"]) == 0
    assert "kappa" in capsys.readouterr().out


def test_labels_agreement_shows_the_human_ceiling_and_the_alt_test(tmp_path, capsys) -> None:
    # ALT_ITEMS as a dataset: the judge (length) prefers c2 (B) on items 16-18, c1 (A) elsewhere
    path, sessions = tmp_path / "alt.jsonl", tmp_path / "sessions"
    write_pairs(path, [("B" if row[3] == B else "A", ["A"]) for row in ALT_ITEMS])
    run_json(capsys, "--sessions-dir", str(sessions), "run", str(path), "--judge", "length", "--json")
    from qatui.data.loaders import load_dataset

    dataset = load_dataset(str(path))
    rows = [{"annotator": name, "dataset": dataset.content_hash, "dataset_name": dataset.name,
             "dataset_path": str(path), "format": dataset.format, "item_id": f"p{n}", "kind": "pairwise",
             "label": {A: "A", B: "B"}[row[i]], "a": "c1", "b": "c2", "updated": ""}
            for i, name in enumerate(("ana", "bo", "cy")) for n, row in enumerate(ALT_ITEMS, 1)]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    assert main(["--sessions-dir", str(sessions), "labels", "import", str(labels)]) == 0
    data = run_json(capsys, "--sessions-dir", str(sessions), "labels", "agreement", str(path), "--json")
    # by hand (test_ceiling_beside): the references leave out the 12 items the two others split on, and each is
    # then one class (A), where kappa measures nothing: no kappa, for all three
    assert data["ceiling"]["ceiling"]["kappa"] is None and data["ceiling"]["split"] == 12
    assert data["ceiling"]["one_class"] == 3
    assert data["ceiling"]["ceiling"]["accuracy"] == pytest.approx((0.75 + 0.75 + 1.0) / 3)
    beside = data["beside_people"][0]
    assert beside["judge"] == "length"
    assert beside["kappa"] is None  # against the same one-class references
    assert beside["accuracy"] == pytest.approx((21 / 24 + 21 / 24 + 15 / 18) / 3)
    assert beside["alt_test"]["winning_rate"] == pytest.approx(2 / 3) and beside["alt_test"]["passed"]
    cy = next(row for row in data["judges"] if row["annotator"] == "cy")  # cy said A on every item: one class
    assert cy["kappa"] is None and cy["kappa_undefined"] == "cy gave one class on every unit the judge decided"
    assert all(row["kappa"] is not None for row in data["judges"] if row["annotator"] != "cy")
    assert main(["--sessions-dir", str(sessions), "labels", "agreement", str(path)]) == 0
    text = capsys.readouterr().out
    assert "none (one class)" in text and "cy gave one class on every unit the judge decided" in " ".join(text.split())
    assert "human ceiling" in text and "12 decisions the others split on left out" in " ".join(text.split())
    assert ("kappa left out for 3 people: the others' majority is one class there, where kappa is 0 whatever is "
            "said") in " ".join(text.split())
    assert "the judge can replace an annotator: winning rate 0.67 at ε=0.2" in text
    assert main(["--sessions-dir", str(sessions), "labels", "agreement", str(path), "--epsilon", "1.5"]) == 2
    assert "--epsilon" in capsys.readouterr().err
    asyncio.run(_on_the_agreement_screen(dataset, sessions, lambda screen: [
        t.row_count for t in screen.query("#beside-ceiling")] == [1], _the_judge_can_replace_an_annotator))


async def _on_the_agreement_screen(dataset, sessions, ready, check) -> None:
    """The Label screen's g over `sessions` at 80x24: once `ready(screen)` holds, `check(screen)`."""
    from fakes import wait_until

    from qatui.config import Config
    from qatui.store.session import SessionStore
    from qatui.tui.app import QatuiApp
    from qatui.tui.screens.label_agreement import AgreementScreen

    store = SessionStore(sessions)
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(AgreementScreen(dataset, store))
        await wait_until(pilot, lambda: isinstance(app.screen, AgreementScreen) and ready(app.screen))
        check(app.screen)


def _beside_row(screen) -> dict[str, str]:
    """The first row of the beside-the-ceiling table, by column."""
    beside = screen.query_one("#beside-ceiling")
    return dict(zip((str(c.label) for c in beside.columns.values()), map(str, beside.get_row_at(0))))


def _the_judge_can_replace_an_annotator(screen) -> None:
    """The judge beside the ceiling, with the alt-test's result and winning rate (2 of 3)."""
    row = _beside_row(screen)
    assert (row["judge"], row["kappa"], row["alt-test"]) == ("length", "-", "can replace (0.67)"), row
    assert row["acc"] == f"{(21 / 24 + 21 / 24 + 15 / 18) / 3:.3f}", row


def _people_lines(screen) -> str:
    return " ".join(" ".join(str(s.render()) for s in screen.query("#agreement-people")).split())


def _the_people_have_no_kappa(screen) -> None:
    """The people's line reads none* with who gave one class under it, never 0.000."""
    shown = _people_lines(screen)
    assert "Cohen's kappa none* (30 units, 30 decided by all)" in shown, shown  # kappa's units: all decided
    assert "0.000" not in shown.split("human ceiling")[0], shown
    assert "none*: cy gave one class on every unit both people decided" in shown, shown


async def test_the_session_screen_shows_kappa_and_each_class(pairs) -> None:
    from fakes import wait_until as until
    from tui_support import open_the_only_session

    from qatui.config import Config
    from qatui.store.session import SessionStore
    from qatui.tui.app import QatuiApp

    _, sessions, session = pairs
    app = QatuiApp(Config(), SessionStore(sessions))
    async with app.run_test(size=(80, 24)) as pilot:
        shown = await open_the_only_session(pilot)
        await until(pilot, lambda: "kappa +0.40" in shown())
        assert "recall A 0.75 tie 0.50 B 0.50 · precision A 0.75 tie 0.50 B 0.50" in shown()


# -- the structure and self-preference probes -------------------------------------------------------------

LISTED = "Steps:\n\n- boil water\n- add tea\n\n## Notes\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
"""Two list items, a heading and a table of two rows (header and one body row): 5 structure blocks."""


def test_structure_counts_markdown_blocks_by_hand() -> None:
    from qatui.metrics.style_bias import same_model, structure

    assert structure(LISTED) == 5
    assert structure("plain prose - with a dash and # a hash inside a line") == 0
    assert structure("```\ncode\n```\n\n> quoted") == 2  # a fence and a block quote
    assert same_model("openai/GPT-4o-mini", "gpt-4o-mini") and not same_model("gpt-4o", "gpt-4o-mini")


def test_structure_and_self_preference_beside_people_by_hand() -> None:
    from qatui.data.model import Item
    from qatui.events import Verdict
    from qatui.metrics.style_bias import style_biases

    def item(n: int, labels: list[str], models: dict[str, str]) -> Item:
        return Item(id=f"s{n}", question="How?", candidates={"c1": LISTED, "c2": "Boil water and add tea."},
                    gold={"kind": "pairwise", "a": "c1", "b": "c2", "labels": labels}, meta={"models": models})

    def prefers(n: int, winner: str | None) -> Verdict:
        scores = {"c1": 1.0, "c2": 1.0} if winner is None else {winner: 2.0, ({"c1", "c2"} - {winner}).pop(): 1.0}
        return Verdict(item_id=f"s{n}", scores=scores, ranking=sorted(scores, key=lambda c: -scores[c]),
                       order=["c1", "c2"])

    # c1 (the list) is the more structured everywhere. People: s1 A, s2 B, s3 B, s4 tie (told nothing apart);
    # the judge: s1 c1, s2 c1, s3 tie, s4 c1. Over the 3 pairs people told apart: people prefer the list
    # 1 of 3, the judge 2 of 3 (s3's tie is no preference), with 1 tie.
    # Self: the judge is openai/gpt-4o; it wrote c2 on s1 and s2, c1 on s3, nothing on s4.
    # s1: own c2, people A (not own), judge c1 (not own); s2: own c2, people B (own), judge c1 (not own);
    # s3: own c1, people B (not own), judge tie: people 1 of 3 for their own, the judge 0 of 3, 1 tie.
    items = [item(1, ["A"], {"c1": "llama-3", "c2": "gpt-4o"}), item(2, ["B"], {"c1": "llama-3", "c2": "gpt-4o"}),
             item(3, ["B"], {"c1": "GPT-4o", "c2": "llama-3"}), item(4, ["tie"], {"c1": "gpt-4o"})]
    verdicts = {v.item_id: v for v in (prefers(1, "c1"), prefers(2, "c1"), prefers(3, None), prefers(4, "c1"))}
    found = style_biases(items, verdicts, "openai/gpt-4o")
    assert found["structure"] == {"judge_structured": pytest.approx(2 / 3), "people_structured": pytest.approx(1 / 3),
                                  "pairs": 3, "judge_ties": 1}
    assert found["self"] == {"judge_own": 0.0, "people_own": pytest.approx(1 / 3), "pairs": 3, "judge_ties": 1}
    assert "self" not in style_biases(items, verdicts, None)  # no backbone: no self-preference to measure
    # A pair seven people labelled (5 A, 2 B) is one pair: the judge's one choice (c1) counts once, people's share
    # of it is 5/7. Counted per label it read 8 pairs, the judge's c1 weighed seven times: judge 7/8, people 6/8.
    many = [item(5, ["A"] * 5 + ["B"] * 2, {}), item(6, ["B"], {})]
    found = style_biases(many, {v.item_id: v for v in (prefers(5, "c1"), prefers(6, "c2"))}, None)
    assert found["structure"] == {"judge_structured": 0.5, "people_structured": pytest.approx((5 / 7 + 0) / 2),
                                  "pairs": 2, "judge_ties": 0}


def test_table_shows_the_structure_probe(tmp_path, capsys) -> None:
    # length prefers the list (more words) on both items; people prefer it on one: judge 100, people 50
    path, sessions = tmp_path / "styled.jsonl", tmp_path / "sessions"
    rows = [{"id": f"s{n}", "question": "How?", "candidates": {"c1": LISTED, "c2": "Boil water."},
             "gold": {"kind": "pairwise", "a": "c1", "b": "c2", "labels": [label]}} for n, label in ((1, "A"), (2, "B"))]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    table = run_json(capsys, "--sessions-dir", str(sessions), "table", str(path), "--judge", "length", "--json")
    assert table["rows"][0]["bias"]["structure"] == {"judge_structured": 1.0, "people_structured": 0.5, "pairs": 2,
                                                     "judge_ties": 0}
    capsys.readouterr()
    assert main(["--sessions-dir", str(sessions), "table", str(path), "--judge", "length", "--to", "csv"]) == 0
    header, row = capsys.readouterr().out.strip().splitlines()[-2:]
    assert header.endswith("structured: judge/people,own: judge/people") and row.endswith(",100/50,–")


def test_the_report_draws_the_summarys_confusion_matrix_and_per_class_table(pairs, tmp_path, capsys) -> None:
    _, sessions, session = pairs
    out = tmp_path / "report.html"
    assert main(["--sessions-dir", str(sessions), "report", session, "-o", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert "recall (95% CI)" in html and "8 labels on 7 items" in html
    assert '<td>kappa</td><td class="num">0.400</td>' in html
    assert "confusion matrices of A, B and tie" in html


def test_a_class_every_item_got_right_has_the_exact_interval_over_its_items_never_a_point() -> None:
    """Every resample of 6 items whose A labels the judge all called A gives recall 1: the percentile bootstrap said
    [1.000, 1.000]. The interval is Clopper and Pearson's for 6 of 6, over the items holding an A label (people's
    for recall, the judge's for precision), whatever their number of labels."""
    units = [[("A", "A"), ("A", "A")] for _ in range(4)] + [[("A", "A")], [("A", "A"), ("B", "tie")]]
    found = class_agreement(units, PREFERENCE_CLASSES, ordinal=True)
    a = found["per_class"]["A"]
    assert a["recall"] == 1.0 and a["precision"] == 1.0
    assert a["recall_ci"] == exact_interval(6, 6) and a["precision_ci"] == a["recall_ci"]
    assert found["per_class"]["B"]["recall"] == 0.0  # the one B label, on one item: no interval of one unit
    assert found["per_class"]["B"]["recall_ci"] is None


def test_kappa_is_not_given_where_people_gave_one_class(tmp_path, capsys) -> None:
    """Every person said A: chance agreement equals the observed one for any judge, so Cohen's kappa is 0 whatever
    the judge says (scikit-learn: 0.0 for a judge right on 5 of 6 labels and for one right on 1 of 6). It was
    printed as `kappa 0.000` beside accuracy 0.833, a figure that measures nothing; now it is left out and the
    reason is said where the class figures are (sessions show's matrix caption, the TUI's class line)."""
    from qatui.report.classes_view import caption, class_line

    units = [[("A", "A")]] * 5 + [[("A", "B")]]
    assert cohen_kappa_score(["A"] * 6, ["A"] * 5 + ["B"]) == 0.0 == cohen_kappa_score(["A"] * 6, ["A"] + ["B"] * 5)
    found = class_agreement(units, PREFERENCE_CLASSES, ordinal=True)
    assert found["metrics"] == {} and found["ci"] == {} and "one class (A)" in found["kappa_undefined"]
    assert found["per_class"]["A"]["recall"] == pytest.approx(5 / 6)  # the rates are still measured
    assert "one class (A)" in caption(found) and "people gave one class" in class_line(found)
    assert "kappa_undefined" not in class_agreement(pairs_units(), PREFERENCE_CLASSES, ordinal=True)

    path, sessions = tmp_path / "one-class.jsonl", tmp_path / "sessions"
    write_pairs(path, [("A", ["A"])] * 5 + [("B", ["A"])])
    data = run_json(capsys, "--sessions-dir", str(sessions), "run", str(path), "--judge", "length", "--json")
    shown = run_json(capsys, "--sessions-dir", str(sessions), "sessions", "show", data["session"], "--json")
    length = shown["judges"]["length"]
    assert length["metrics"]["accuracy"] == pytest.approx(5 / 6) and "kappa" not in length["metrics"]
    assert main(["--sessions-dir", str(sessions), "sessions", "show", data["session"]]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "kappa 0.000" not in text and "people gave one class (A) on every label" in text


def test_class_intervals_of_one_label_items_are_exact_and_kappa_has_none_where_resamples_lose_a_class() -> None:
    """12 items of one label each: people A on 10, B on 2; the judge right on 11 (one A called B). Recall A 9 of 10,
    precision B 2 of 3: binomial, so SciPy's exact interval (a bootstrap read 9 of 10 as [0.667, 1], tighter than
    9 of 9's [0.664, 1], and an upper bound of 1 with a miss). 11% of resamples draw no B of people, where kappa is
    0 whatever the judge says: past 5% undefined, the kappa gets no interval (it read [0.000, 1.000])."""
    from scipy.stats import binomtest

    units = [[("A", "A")]] * 9 + [[("A", "B")]] + [[("B", "B")]] * 2
    found = class_agreement(units, ["A", "B"])
    exact = {(hits, n): list(binomtest(hits, n).proportion_ci(method="exact")) for hits, n in ((9, 10), (2, 3))}
    assert found["per_class"]["A"]["recall_ci"] == pytest.approx(exact[(9, 10)])
    assert found["per_class"]["B"]["precision_ci"] == pytest.approx(exact[(2, 3)])
    assert found["per_class"]["A"]["precision_ci"] == pytest.approx([0.025 ** (1 / 9), 1.0])  # 9 of 9
    assert found["metrics"]["kappa"] == pytest.approx(cohen_kappa_score([p for [(p, _)] in units],
                                                                        [j for [(_, j)] in units]))
    assert "kappa" not in found["ci"]


def test_labels_agreement_gives_no_kappa_between_two_people_where_one_gave_one_class(tmp_path, capsys) -> None:
    # cy said A on every item, ana did not: Cohen's kappa between them is 0 whatever ana said, so it is no figure
    path, sessions = tmp_path / "alt.jsonl", tmp_path / "sessions"
    write_pairs(path, [("B" if row[3] == B else "A", ["A"]) for row in ALT_ITEMS])
    from qatui.data.loaders import load_dataset

    dataset = load_dataset(str(path))
    rows = [{"annotator": name, "dataset": dataset.content_hash, "dataset_name": dataset.name,
             "dataset_path": str(path), "format": dataset.format, "item_id": f"p{n}", "kind": "pairwise",
             "label": {A: "A", B: "B"}[row[i]], "a": "c1", "b": "c2", "updated": ""}
            for i, name in ((0, "ana"), (2, "cy")) for n, row in enumerate(ALT_ITEMS, 1)]
    assert {row["label"] for row in rows if row["annotator"] == "cy"} == {"A"}
    assert {row["label"] for row in rows if row["annotator"] == "ana"} == {"A", "B"}
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    assert main(["--sessions-dir", str(sessions), "labels", "import", str(labels)]) == 0
    data = run_json(capsys, "--sessions-dir", str(sessions), "labels", "agreement", str(path), "--json")
    people = data["people"]
    assert people["kappa_of"] == "Cohen" and people["kappa"] is None
    assert people["kappa_undefined"] == "cy gave one class on every unit both people decided"
    assert people["n_complete"] == len(ALT_ITEMS)
    assert main(["--sessions-dir", str(sessions), "labels", "agreement", str(path)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    people_line = text.split("people:")[1].split("human ceiling")[0]
    assert "Cohen's kappa none (one class)" in people_line and "0.000" not in people_line, people_line
    assert "cy gave one class on every unit both people decided" in text
    asyncio.run(_on_the_agreement_screen(dataset, sessions, lambda screen: "people:" in _people_lines(screen),
                                         _the_people_have_no_kappa))
