"""`--without-leaks`: figures on the items where no candidate copies a reference, with the count left out.

The expected figures are never recomputed here: they are what the same command prints on a
second file that simply lacks the leaking items, so a filter that leaves the wrong items out
(or none) shows as a different figure.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from qatui.cli import main

JUDGES = ("--judge", "rouge-l", "--judge", "length")


def _items() -> list[dict]:
    """Six ranking items; in two of them (q1, q4) the best candidate is the reference copied word for word.

    The gold is such that rouge-l agrees with people differently on q1, q4 and the rest, so
    leaving out either copy, both or neither gives four different figures.
    """
    items = []
    for i in range(6):
        reference = f"The river number {i} flows north through the old valley before it reaches the sea."
        good = reference if i in (1, 4) else f"River {i} runs north across the valley and ends in the sea."
        items.append({
            "id": f"q{i}", "question": f"Where does river {i} flow?", "references": [reference],
            "candidates": {"a": good,
                           "b": "It flows somewhere, probably south, through a city with a long history of trade.",
                           "c": f"The river number {i} flows north." if i % 2 else "No idea at all."},
            "gold": {"kind": "ranking", "tiers": [["b"], ["c"], ["a"]] if i == 4  # people disagree with the copy here
                     else [["a"], ["c"], ["b"]] if i % 3 else [["a"], ["b"], ["c"]]},
        })
    return items


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    """The dataset with its two leaking items, and the same dataset without them."""
    items = _items()
    full, clean = tmp_path / "full.jsonl", tmp_path / "clean.jsonl"
    full.write_text("".join(json.dumps(item) + "\n" for item in items))
    clean.write_text("".join(json.dumps(item) + "\n" for item in items if item["id"] not in ("q1", "q4")))
    return full, clean


def _json(capsys, *args: str) -> dict:
    code = main([*args, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def _figures(judges: dict) -> dict[str, dict[str, float]]:
    return {name: doc["metrics"] for name, doc in judges.items()}


def test_run_without_leaks_measures_the_items_without_copies_and_carries_both(files, tmp_path, capsys) -> None:
    full, clean = files
    sessions = ("--sessions-dir", str(tmp_path / "s"))
    free = _json(capsys, "run", str(full), *JUDGES, *sessions, "--without-leaks")
    plain = _json(capsys, "run", str(full), *JUDGES, *sessions)
    expected = _json(capsys, "run", str(clean), *JUDGES, *sessions)
    assert free["leaks"]["items_copying_a_reference"] == ["q1", "q4"] and free["leaks"]["left_out"] is True
    assert free["judges"]["rouge-l"]["n_items"] == 4
    # the coverage is of those items, as the clean dataset's run counts them (it said 6 scored of 4)
    assert {name: doc["coverage"] for name, doc in free["judges"].items()} == \
        {name: doc["coverage"] for name, doc in expected["judges"].items()}
    assert _figures(free["judges"]) == _figures(expected["judges"])
    assert _figures(free["leaks"]["without_leaks"]) == _figures(expected["judges"])
    # without the option the headline is every item's, and the JSON still carries both
    assert _figures(plain["judges"]) == _figures(free["leaks"]["all_items"])
    assert plain["leaks"]["left_out"] is False and _figures(plain["leaks"]["without_leaks"]) == _figures(expected["judges"])
    assert _figures(plain["judges"])["rouge-l"] != _figures(expected["judges"])["rouge-l"]
    assert "leaks" not in expected  # nothing copies a reference there


def test_the_text_says_how_many_were_left_out(files, tmp_path, capsys) -> None:
    full, _ = files
    sessions = ("--sessions-dir", str(tmp_path / "s"))
    assert main(["run", str(full), *JUDGES, *sessions, "--without-leaks"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "left out 2 of 6 items whose candidates copy a reference (q1, q4): the figures are on the other 4" in out
    assert main(["run", str(full), *JUDGES, *sessions]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "2 items (q1, q4) have a candidate copying a reference; --without-leaks gives the figures without them" in out


def test_sessions_show_without_leaks(files, tmp_path, capsys) -> None:
    full, clean = files
    sessions = ("--sessions-dir", str(tmp_path / "s"))
    ran = _json(capsys, "run", str(full), *JUDGES, *sessions)
    expected = _json(capsys, "run", str(clean), *JUDGES, *sessions)
    shown = _json(capsys, "sessions", "show", ran["session"], *sessions, "--without-leaks")
    assert _figures(shown["judges"]) == _figures(expected["judges"])
    assert shown["leaks"]["items_copying_a_reference"] == ["q1", "q4"]
    assert main(["sessions", "show", ran["session"], *sessions, "--without-leaks"]) == 0
    assert "left out 2 of 6 items" in " ".join(capsys.readouterr().out.split())
    # the dataset gone: the leaks cannot be found, so the option is refused in one line
    full.unlink()
    assert main(["sessions", "show", ran["session"], *sessions, "--without-leaks"]) == 2
    err = capsys.readouterr().err
    assert "is gone or changed" in err and "Traceback" not in err
    assert main(["sessions", "show", ran["session"], *sessions]) == 0  # without it: the stored figures


def test_table_without_leaks(files, tmp_path, capsys) -> None:
    full, clean = files
    sessions = ("--sessions-dir", str(tmp_path / "s"))
    free = _json(capsys, "table", str(full), *JUDGES, *sessions, "--without-leaks")
    expected = _json(capsys, "table", str(clean), *JUDGES, *sessions)
    assert free["items"] == 4 and free["leaks"]["items_copying_a_reference"] == ["q1", "q4"]
    assert [r["metrics"] for r in free["rows"]] == [r["metrics"] for r in expected["rows"]]
    assert [r["metrics"] for r in free["leaks"]["all_items"]["rows"]] != [r["metrics"] for r in expected["rows"]]
    assert main(["table", str(full), *JUDGES, *sessions, "--without-leaks"]) == 0
    out, err = capsys.readouterr()
    assert "left out 2 of 6 items whose candidates copy a reference" in " ".join(err.split())
    assert "(4 items)" in out


def test_the_report_shows_both_figures(files, tmp_path, capsys) -> None:
    full, clean = files
    sessions = ("--sessions-dir", str(tmp_path / "s"))
    ran = _json(capsys, "run", str(full), *JUDGES, *sessions)
    expected = _json(capsys, "run", str(clean), *JUDGES, *sessions)
    out = tmp_path / "r.html"
    assert main(["report", ran["session"], "-o", str(out), *sessions]) == 0
    html = out.read_text()
    assert "without the items whose candidates copy a reference" in html
    assert "2 items of 6 (q1, q4) have a candidate copying a reference" in html
    rouge = html[html.index("<h4>rouge-l</h4>"):]
    second = rouge[rouge.index("<caption>without the items whose candidates copy a reference</caption>"):]
    second = second[:second.index("</table>")]
    row = re.search(r"<tr><td>kendall</td><td[^>]*>([^<]+)</td>", second)
    assert row is not None and row.group(1) == f"{expected['judges']['rouge-l']['metrics']['kendall']:.3f}"


def test_candidates_the_copy_check_could_not_compare_are_named_everywhere(tmp_path, capsys) -> None:
    """Two texts too long to compare within the copy check's bound (`data.leaks.PAIR_STEPS`): each command says so,
    and the JSON names the item, rather than reading the unchecked candidate as no copy."""
    from fakes import texts_alike_in_length

    rows = [{"id": "long", "question": "Q?", "references": [texts_alike_in_length(66_000, 1)],
             "candidates": {"a": texts_alike_in_length(66_000, 2), "b": "x"}},
            {"id": "short", "question": "Q?", "references": ["Paris."], "candidates": {"a": "Lyon.", "b": "Nice."}}]
    path = tmp_path / "long.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    sessions = ("--sessions-dir", str(tmp_path / "s"))
    warning = "1 candidate in 1 item was not compared with every reference (long/a)"
    inspected = _json(capsys, "datasets", "inspect", str(path))
    assert inspected["copies"] == {"copying": [], "not_compared": [["long", "a"]]}
    assert any(warning in " ".join(w.split()) for w in inspected["warnings"])
    ran = _json(capsys, "run", str(path), "--judge", "length", *sessions)
    assert ran["leaks"] == {"items_copying_a_reference": [], "n_items": 2, "items_not_compared": ["long"]}
    assert main(["run", str(path), "--judge", "length", *sessions]) == 0
    assert warning in " ".join(capsys.readouterr().out.split())
    assert main(["run", str(path), "--judge", "length", *sessions, "--without-leaks"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # "no copy" is said of what was compared only
    assert "no candidate the copy check compared copies a reference (some could not be compared)" in out
    assert "no item has a candidate copying a reference" not in out
    shown = _json(capsys, "sessions", "show", ran["session"], *sessions)
    assert shown["leaks"]["items_not_compared"] == ["long"]
    assert main(["sessions", "show", ran["session"], *sessions]) == 0
    assert warning in " ".join(capsys.readouterr().out.split())
    table = _json(capsys, "table", str(path), "--judge", "length", *sessions)
    assert table["leaks"]["items_not_compared"] == ["long"]
    assert main(["table", str(path), "--judge", "length", *sessions]) == 0
    assert warning in " ".join(capsys.readouterr().err.split())
    out = tmp_path / "r.html"
    assert main(["report", ran["session"], "-o", str(out), *sessions]) == 0
    assert warning in " ".join(out.read_text().split())
