"""`qatui sessions import`: another tool's results become a session that reads like qatui's own.

Real TinyDB sessions, the real `length` and `rouge-l` judges, the CLI in process. A round trip
exports a real judge's results as CSV (as an outside tool would hand them over), imports them
under another name, and checks the figures match the real judge's exactly.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
from test_cli import DEMO, run_cli, run_json

from qatui.data.loaders import load_dataset


def _export_rows(capsys, sessions: Path, session_id: str) -> list[dict[str, str]]:
    code, out, err = run_cli(capsys, "sessions", "export", session_id, "--format", "csv", "--sessions-dir", str(sessions))
    assert code == 0, err
    return list(csv.DictReader(out.splitlines()))


def _write_csv(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def _import(capsys, sessions: Path, path: Path, name: str, *extra: str, dataset: Path = DEMO) -> tuple[int, str, str]:
    return run_cli(capsys, "sessions", "import", str(path), "--dataset", str(dataset), "--judge-name", name,
                   "--sessions-dir", str(sessions), *extra)


@pytest.fixture
def length_run(tmp_path, capsys) -> tuple[Path, dict, list[dict[str, str]]]:
    """A real `length` session of the demo set, and its results exported as CSV rows."""
    sessions = tmp_path / "sessions"
    data = run_json(capsys, "run", str(DEMO), "--judge", "length", "--sessions-dir", str(sessions))
    return sessions, data, _export_rows(capsys, sessions, data["session"])


def test_imported_scores_equal_the_real_judge_and_sit_beside_it_in_compare(tmp_path, capsys, length_run) -> None:
    sessions, real, exported = length_run
    scores = _write_csv(tmp_path / "lengths.csv", ["item_id", "candidate_id", "score"],
                        [[r["item_id"], r["candidate"], r["length score"]] for r in exported])
    code, out, err = _import(capsys, sessions, scores, "words-ext", "--json")
    assert code == 0, err
    imported = json.loads(out)
    assert imported["imported"]["source"] == "lengths.csv" and imported["imported"]["kind"] == "score"
    assert imported["status"] == "completed" and imported["judges"]["words-ext"]["coverage"]["scored"] == 20
    # the same scores give the same figures: the import is measured exactly as a run is
    assert imported["judges"]["words-ext"]["metrics"] == real["judges"]["length"]["metrics"]

    # same structure as a run's session: the same files, the same verdict fields, the same shuffle
    folder = sessions / imported["session"]
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in (sessions / real["session"]).iterdir())
    from qatui.store.session import SessionStore

    store = SessionStore(sessions)
    ours = store.open(imported["session"]).verdicts("words-ext")
    theirs = store.open(real["session"]).verdicts("length")
    for item_id, verdict in theirs.items():
        assert ours[item_id].order == verdict.order and ours[item_id].ranking == verdict.ranking
        assert ours[item_id].preference == verdict.preference and ours[item_id].scores == verdict.scores
    assert store.open(imported["session"]).meta["judges"]["words-ext"]["imported_from"] == "lengths.csv"

    compared = run_json(capsys, "sessions", "compare", real["session"], imported["session"],
                        "--sessions-dir", str(sessions))
    assert [r["judge"] for r in compared["runs"]] == ["length", "words-ext"]
    assert compared["runs"][1]["metrics"] == compared["runs"][0]["metrics"]
    assert compared["agreement"][0]["stats"]["kendall"] == pytest.approx(1.0)
    assert [r["label"] for r in compared["table"]["rows"]] == ["A length", "B words-ext"]
    code, text, _ = run_cli(capsys, "sessions", "compare", real["session"], imported["session"],
                            "--sessions-dir", str(sessions))
    assert code == 0 and "words-ext" in text and "length" in text
    code, shown, _ = run_cli(capsys, "sessions", "show", imported["session"], "--sessions-dir", str(sessions))
    assert "imported from lengths.csv" in shown
    # the table takes the imported judge by name, beside a judge it runs
    table = run_json(capsys, "table", str(DEMO), "--judge", "length", "--judge", "words-ext",
                     "--sessions-dir", str(sessions))
    assert [r["judge"] for r in table["rows"]] == ["length", "words-ext"]
    assert table["rows"][1]["session"] == imported["session"] and table["rows"][1]["seconds"] is None
    assert table["rows"][1]["vs_baseline"]["delta"] == pytest.approx(0.0)
    # nothing to resume: qatui cannot run an imported judge, and says so
    code, _, err = run_cli(capsys, "sessions", "resume", imported["session"], "--sessions-dir", str(sessions))
    assert code == 2 and "imported from lengths.csv" in err and "nothing to resume" in err


def test_imported_ranking_as_jsonl_keeps_the_ranking(tmp_path, capsys, length_run) -> None:
    sessions, real, exported = length_run
    path = tmp_path / "ranks.jsonl"
    path.write_text("".join(json.dumps({"item_id": r["item_id"], "candidate_id": r["candidate"],
                                        "rank": int(r["length rank"])}) + "\n" for r in exported), encoding="utf-8")
    data = run_json(capsys, "sessions", "import", str(path), "--dataset", str(DEMO), "--judge-name", "ranks-ext",
                    "--kind", "ranking", "--sessions-dir", str(sessions))
    assert data["imported"]["format"] == "jsonl" and data["imported"]["rows"] == len(exported)
    for key in ("kendall", "spearman", "rbo_0.5", "rbo_0.9"):
        assert data["judges"]["ranks-ext"]["metrics"][key] == pytest.approx(real["judges"]["length"]["metrics"][key])
    from qatui.store.session import SessionStore

    store = SessionStore(sessions)
    theirs = store.open(real["session"]).verdicts("length")
    ranks = {(r["item_id"], r["candidate"]): int(r["length rank"]) for r in exported}  # the judge's ties share a rank
    for item_id, verdict in store.open(data["session"]).verdicts("ranks-ext").items():
        assert verdict.ranking == theirs[item_id].ranking and verdict.tiers == theirs[item_id].tiers
        n = len(verdict.ranking)
        assert verdict.scores == {c: float(n + 1 - ranks[(item_id, c)]) for c in verdict.ranking}


def test_imported_pairwise_verdicts_either_way_round_with_partial(tmp_path, capsys, length_run) -> None:
    sessions, real, exported = length_run
    dataset = load_dataset(DEMO)
    pairs = [item for item in dataset.items if item.gold is not None and item.gold.kind == "pairwise"]
    first_of_pair = {item.id: item.gold.a for item in pairs}
    said = {r["item_id"]: {"yes": "A", "no": "B", "tie": "tie"}[r["length preferred"]]
            for r in exported if r["candidate"] == first_of_pair.get(r["item_id"])}
    flip = {"A": "B", "B": "A", "tie": "tie"}
    rows = [[item.id, item.gold.a, item.gold.b, said[item.id]] for item in pairs[1:]]
    rows.append([pairs[0].id, pairs[0].gold.b, pairs[0].gold.a, flip[said[pairs[0].id]].lower()])  # b, a: flipped
    verdicts = _write_csv(tmp_path / "ab.csv", ["item_id", "a", "b", "verdict"], rows)
    code, _, err = _import(capsys, sessions, verdicts, "ab-ext", "--kind", "pairwise")
    assert code == 2 and "15 items of 20" in err and "--partial" in err
    assert len(list(sessions.iterdir())) == 1  # refused: only the length run is there
    data = run_json(capsys, "sessions", "import", str(verdicts), "--dataset", str(DEMO), "--judge-name", "ab-ext",
                    "--kind", "pairwise", "--partial", "--sessions-dir", str(sessions))
    assert data["judges"]["ab-ext"]["coverage"] == {"items": 20, "scored": 5, "not_applicable": 0, "failed": 0,
                                                   "pending": 15}
    assert data["imported"]["not_judged"] == 15
    compared = run_json(capsys, "sessions", "compare", real["session"], data["session"],
                        "--sessions-dir", str(sessions))
    assert compared["common_items"] == 5 and "5 items" in compared["note"]
    assert compared["runs"][1]["metrics"]["accuracy"] == pytest.approx(compared["runs"][0]["metrics"]["accuracy"])
    assert compared["agreement"][0]["stats"]["preference"] == pytest.approx(1.0)


DEMO_ITEM = load_dataset(DEMO).items[0]
C1, C2 = list(DEMO_ITEM.candidates)[:2]
SCORES = ["item_id", "candidate_id", "score"]


def _good_rows() -> list[list[object]]:
    return [[item.id, cid, 1.0] for item in load_dataset(DEMO).items for cid in item.candidates]


REFUSALS = [
    ("unknown item", SCORES, lambda rows: rows[:1] + [["nope", C1, 1]] + rows[1:],
     "row 2 (line 3): field 'item_id': 'nope' is not an item of demo"),
    ("unknown candidate", SCORES, lambda rows: rows[:2] + [[DEMO_ITEM.id, "zz", 1]] + rows[2:],
     f"row 3 (line 4): field 'candidate_id': 'zz' is not a candidate of item '{DEMO_ITEM.id}'"),
    ("missing candidate", SCORES, lambda rows: rows[1:],
     f"item '{DEMO_ITEM.id}' (rows 1"),
    ("duplicate row", SCORES, lambda rows: rows[:3] + [rows[0]] + rows[3:],
     f"row 4 (line 5): a second row for item '{DEMO_ITEM.id}', candidate '{C1}' (the first is row 1)"),
    ("not a number", SCORES, lambda rows: [[*rows[0][:2], "high"]] + rows[1:],
     "row 1 (line 2): field 'score': 'high' is not a number"),
    ("NaN", SCORES, lambda rows: rows[:4] + [[*rows[4][:2], "nan"]] + rows[5:],
     "row 5 (line 6): field 'score': 'nan' is not a finite number"),
    ("inf", SCORES, lambda rows: rows[:4] + [[*rows[4][:2], "-inf"]] + rows[5:],
     "row 5 (line 6): field 'score': '-inf' is not a finite number"),
    ("5000 digits", SCORES, lambda rows: rows[:4] + [[*rows[4][:2], "9" * 5000]] + rows[5:],  # was echoed whole
     "row 5 (line 6): field 'score': '" + "9" * 39 + "…' is not a finite number"),
    ("extra column", [*SCORES, "note"], lambda rows: [[*r, "x"] for r in rows],
     "row 1 (line 2): field 'note' is not one of item_id, candidate_id, score"),
    ("missing column", ["item_id", "candidate", "score"], lambda rows: rows,
     "row 1 (line 2): field 'candidate_id' is missing"),
    ("short row", SCORES, lambda rows: rows[:1] + [rows[1][:2]] + rows[2:],
     "row 2 (line 3): 2 cells where the header names 3 columns"),
]


@pytest.mark.parametrize(("case", "header", "change", "message"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_a_bad_row_is_refused_with_its_row_and_no_session_is_left(tmp_path, capsys, case, header, change,
                                                                   message) -> None:
    sessions = tmp_path / "sessions"
    path = _write_csv(tmp_path / "scores.csv", header, change(_good_rows()))
    code, out, err = _import(capsys, sessions, path, "ext")
    assert code == 2, out
    assert message in err and err.count("\n") == 1, err  # one line
    assert not sessions.exists() or not any(sessions.iterdir())


def test_refusals_of_ranks_verdicts_jsonl_names_and_partial_files(tmp_path, capsys) -> None:
    sessions = tmp_path / "sessions"
    items = load_dataset(DEMO).items
    pair = next(item for item in items if len(item.candidates) == 2)
    three = next(item for item in items if len(item.candidates) >= 3)
    cases = [
        (["item_id", "candidate_id", "rank"], [[DEMO_ITEM.id, C1, 0]], ("--kind", "ranking"),
         "row 1 (line 2): field 'rank': '0' is not a whole number of 1 or more"),
        (["item_id", "candidate_id", "rank"], [[DEMO_ITEM.id, C1, 1.5]], ("--kind", "ranking"),
         "field 'rank': '1.5' is not a whole number"),
        (["item_id", "candidate_id", "rank"], [[DEMO_ITEM.id, C1, 99]], ("--kind", "ranking"),
         "row 1 (line 2): field 'rank': 99 is past the"),
        (["item_id", "a", "b", "verdict"], [[pair.id, *pair.candidates, "C"]], ("--kind", "pairwise"),
         "row 1 (line 2): field 'verdict': 'C' is not A, B or tie"),
        (["item_id", "a", "b", "verdict"], [[pair.id, *pair.candidates, "A"], [pair.id, *pair.candidates, "B"]],
         ("--kind", "pairwise"), "row 2 (line 3): a second verdict for item"),
        (["item_id", "a", "b", "verdict"], [[three.id, *list(three.candidates)[:2], "A"]], ("--kind", "pairwise"),
         f"row 1 (line 2): item '{three.id}' has {len(three.candidates)} candidates"),
        (SCORES, [[DEMO_ITEM.id, c, 1] for c in DEMO_ITEM.candidates], (),
         "19 items of 20 in demo have no row"),
    ]
    for header, rows, extra, message in cases:
        code, _, err = _import(capsys, sessions, _write_csv(tmp_path / "r.csv", header, rows), "ext", *extra)
        assert code == 2 and message in err, (message, err)
    bad_json = tmp_path / "r.jsonl"
    bad_json.write_text(json.dumps({"item_id": DEMO_ITEM.id, "candidate_id": C1, "score": 1}) + "\n{oops\n")
    code, _, err = _import(capsys, sessions, bad_json, "ext")
    assert code == 2 and "line 2: not JSON" in err
    bad_json.write_text(json.dumps({"item_id": DEMO_ITEM.id, "candidate_id": C1, "score": math.nan}) + "\n")
    code, _, err = _import(capsys, sessions, bad_json, "ext")
    assert code == 2 and "r.jsonl: line 1 column 53: field 'score': NaN is not a number" in err
    good = _write_csv(tmp_path / "good.csv", SCORES, _good_rows())
    for name, message in (("rouge-l", "one of qatui's own judges"), ("bad name!", "use letters, digits")):
        code, _, err = _import(capsys, sessions, good, name)
        assert code == 2 and message in err
    assert not sessions.exists() or not any(sessions.iterdir())
    assert _import(capsys, sessions, good, "ext", "--session", "mine")[0] == 0
    code, _, err = _import(capsys, sessions, good, "ext", "--session", "mine")
    assert code == 2 and "already exists" in err and len(list(sessions.iterdir())) == 1


def test_a_ragas_result_is_matched_by_question_and_response(tmp_path, capsys) -> None:
    """ragas' `to_pandas()` rows carry no ids: the question and response texts name the item and candidate."""
    sessions = tmp_path / "sessions"
    dataset = load_dataset(DEMO)
    header = ["user_input", "retrieved_contexts", "response", "reference", "answer_relevancy"]
    rows = [[item.question, json.dumps(item.context), text, item.references[0], len(text) / 100]
            for item in dataset.items for text in item.candidates.values()]
    rows[3][-1] = "nan"  # ragas writes NaN where a metric failed on a sample: that item is failed, never scored
    path = _write_csv(tmp_path / "ragas.csv", header, rows)
    data = run_json(capsys, "sessions", "import", str(path), "--dataset", str(DEMO), "--judge-name", "ragas-ext",
                    "--format", "ragas", "--sessions-dir", str(sessions))
    assert data["imported"]["metric"] == "answer_relevancy"
    coverage = data["judges"]["ragas-ext"]["coverage"]
    assert coverage["scored"] == 19 and coverage["failed"] == 1
    rows[5][2] = "an answer no item has"
    code, _, err = _import(capsys, sessions, _write_csv(tmp_path / "ragas2.csv", header, rows), "ragas-ext",
                           "--format", "ragas")
    assert code == 2 and "row 6 (line 7): its user_input and response matches no item of demo" in err
    code, _, err = _import(capsys, sessions, _write_csv(tmp_path / "ragas3.csv", [*header, "faithfulness"],
                                                        [[*r, 1] for r in rows]), "ragas-ext", "--format", "ragas")
    assert code == 2 and "metric columns found: answer_relevancy, faithfulness" in err


def test_a_ragas_table_written_by_pandas_to_csv_imports_its_nan_as_failed(tmp_path, capsys) -> None:
    """pandas' `to_csv` writes NaN as an empty cell (its default `na_rep`): such a table was refused ("'' is not a
    number"). The empty cell is read as the NaN it stands for: that item failed, never scored; and `sessions show`
    says to mend the file and import again, never to resume (an imported session cannot be)."""
    sessions = tmp_path / "sessions"
    dataset = load_dataset(DEMO)
    rows = [[item.question, text, len(text) / 100] for item in dataset.items for text in item.candidates.values()]
    rows[3][-1] = ""  # DataFrame.to_csv(index=False) writes a NaN cell as nothing
    path = _write_csv(tmp_path / "ragas.csv", ["user_input", "response", "faithfulness"], rows)
    data = run_json(capsys, "sessions", "import", str(path), "--dataset", str(DEMO), "--judge-name", "ragas-ext",
                    "--format", "ragas", "--sessions-dir", str(sessions))
    coverage = data["judges"]["ragas-ext"]["coverage"]
    assert coverage["scored"] == 19 and coverage["failed"] == 1
    code, out, _ = run_cli(capsys, "sessions", "show", data["session"], "--sessions-dir", str(sessions))
    shown = " ".join(out.split())
    assert code == 0 and "import it again" in shown and "sessions resume" not in shown
    scores = tmp_path / "scores.csv"
    scores.write_text("item_id,candidate_id,score\nen-01,r1,\n")
    code, _, err = _import(capsys, sessions, scores, "ext", "--partial")
    assert code == 2 and "is not a number" in err  # the native formats keep refusing an empty score


@pytest.mark.shared_data
def test_summeval_scores_from_outside_sit_beside_rouge_l_in_compare(shared_data, tmp_path, capsys) -> None:
    """An outside tool's CSV of scores (summary length in words) for all of SummEval, beside a real rouge-l run."""
    path = shared_data / "SummEval" / "summeval.jsonl"
    sessions = tmp_path / "sessions"
    dataset = load_dataset(path)
    scores = _write_csv(tmp_path / "summary_length.csv", SCORES,
                        [[item.id, cid, len(text.split())] for item in dataset.items
                         for cid, text in item.candidates.items()])
    imported = run_json(capsys, "sessions", "import", str(scores), "--dataset", str(path), "--judge-name", "words",
                        "--sessions-dir", str(sessions))
    assert imported["judges"]["words"]["coverage"]["scored"] == 100
    rouge = run_json(capsys, "run", str(path), "--judge", "rouge-l", "--limit", "20", "--sessions-dir", str(sessions))
    compared = run_json(capsys, "sessions", "compare", rouge["session"], imported["session"],
                        "--sessions-dir", str(sessions))
    assert [r["judge"] for r in compared["runs"]] == ["rouge-l", "words"] and compared["common_items"] == 20
    rouge_m, words_m = (r["metrics"] for r in compared["runs"])
    for key in ("pearson", "spearman", "kendall", "pearson/relevance", "spearman_sample"):
        assert -1 <= rouge_m[key] <= 1 and -1 <= words_m[key] <= 1 and rouge_m[key] != words_m[key], key
    # length tracks relevance far more than fluency; ROUGE-L agrees with people more than length does overall
    assert words_m["spearman_sample/relevance"] > words_m["spearman_sample/fluency"]
    assert rouge_m["spearman_sample"] > words_m["spearman_sample"]
    rows = {r["judge"]: r for r in compared["table"]["rows"]}
    assert rows["words"]["metrics"]["pearson"] == pytest.approx(words_m["pearson"])
    code, text, _ = run_cli(capsys, "sessions", "compare", rouge["session"], imported["session"],
                            "--sessions-dir", str(sessions))
    assert code == 0 and "words" in text and "rouge-l" in text and "agreement A–B" in text


async def test_the_workbench_lists_an_import_and_opens_it_like_a_run(tmp_path, capsys) -> None:
    from fakes import wait_until as until
    from test_tui import table

    from qatui.config import Config
    from qatui.store.session import SessionStore
    from qatui.tui.app import QatuiApp
    from qatui.tui.screens.session import SessionScreen
    from qatui.tui.widgets.ranking_panel import RankingPanel
    from qatui.tui.widgets.session_info import SessionInfo

    sessions = tmp_path / "sessions"
    path = _write_csv(tmp_path / "scores.csv", SCORES, [[i, c, len(c)] for i, c, _ in _good_rows()])
    data = run_json(capsys, "sessions", "import", str(path), "--dataset", str(DEMO), "--judge-name", "ext",
                    "--sessions-dir", str(sessions))
    app = QatuiApp(Config(), SessionStore(sessions))
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: table(app).row_count == 1)
        info = app.screen.query_one(SessionInfo)
        await until(pilot, lambda: "imported ext from scores.csv" in str(info.render()))
        assert "(score, 71 rows)" in str(info.render())
        await pilot.press("enter")  # opens like any session: its items and the judge's verdicts
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None)
        await pilot.pause()
        assert app.screen.session_id == data["session"]
        assert len(app.screen.state.tasks) == 20 and app.screen.state.count("done") == 20
        ranking = app.screen.query_one(RankingPanel)
        assert ranking.display and ranking.task.tau is not None


def test_an_import_into_a_folder_it_cannot_write_is_refused_in_one_line(tmp_path, capsys, length_run) -> None:
    """`run` refused a read-only, full or file-in-the-way sessions folder in one line; `sessions import` ended in
    an OSError traceback. Checked the same way now, before the file is read (a real read-only tmpfs where the
    machine lets the test mount one)."""
    import subprocess

    sessions, _, exported = length_run
    path = tmp_path / "ranks.jsonl"
    path.write_text("".join(json.dumps({"item_id": r["item_id"], "candidate_id": r["candidate"],
                                        "rank": int(r["length rank"])}) + "\n" for r in exported), encoding="utf-8")
    a_file = tmp_path / "not-a-folder"
    a_file.write_text("x")
    code, _, err = _import(capsys, a_file, path, "ranks-ext", "--kind", "ranking")
    assert code == 2 and "is a file, not a folder" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    read_only = tmp_path / "ro"
    read_only.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(read_only)], capture_output=True,
                             text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.strip() or mounted.returncode}): needs root or "
                    "CAP_SYS_ADMIN to make a real read-only disk")
    try:
        code, _, err = _import(capsys, read_only / "sessions", path, "ranks-ext", "--kind", "ranking")
    finally:
        subprocess.run(["umount", "-l", str(read_only)], capture_output=True, check=False)
    assert code == 2 and "read-only" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
