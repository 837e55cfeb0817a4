"""The `qatui` command end to end: real loaders, real judges, real TinyDB sessions."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tui_support import exact_interval, long_right, write_doubled

from qatui.cli import main
from qatui.data.loaders import load_dataset
from qatui.store.session import SessionStore

DEMO = Path(__file__).resolve().parents[1] / "qatui" / "data" / "demo" / "demo.jsonl"


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *args: str) -> dict:
    code, out, err = run_cli(capsys, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_run_demo_prints_the_json_contract(tmp_path, capsys) -> None:
    data = run_json(capsys, "run", str(DEMO), "--judge", "rouge-l", "--judge", "bleu", "--sessions-dir", str(tmp_path))
    assert set(data) >= {"session", "dataset", "judges", "llm"}
    assert set(data["llm"]) == {"calls", "cached", "prompt_tokens", "completion_tokens", "reasoning_tokens", "cost_usd",
                                "cached_cost_usd", "unpriced_calls", "cached_unpriced"}
    for judge in ("rouge-l", "bleu"):
        j = data["judges"][judge]
        assert j["n_items"] == 20 and j["n_failed"] == 0
        for key in ("kendall", "spearman", "pearson", "rbo_0.5", "rbo_0.9", "accuracy", "accuracy_no_tie"):
            assert -1.0 <= j["metrics"][key] <= 1.0, key
    # the demo's good answers overlap their references far more than the bad ones
    assert data["judges"]["rouge-l"]["metrics"]["kendall"] > 0.2
    shown = run_json(capsys, "sessions", "show", data["session"], "--sessions-dir", str(tmp_path))
    assert shown["judges"] == data["judges"]


def test_run_plan_counts_the_calls_and_starts_nothing(tmp_path, capsys) -> None:
    from qatui.data.loaders import load_dataset

    sessions = tmp_path / "sessions"
    plan = run_json(capsys, "run", str(DEMO), "--judge", "minos", "--judge", "bleu", "--limit", "5", "--plan",
                    "--sessions-dir", str(sessions))
    items = load_dataset(DEMO).items[:5]
    # MinosEval: a routing call, then one key-point call per reference (factoid) or instances + ranking
    fewest = sum(1 + min(len(it.references), 2) for it in items)
    most = sum(1 + max(len(it.references), 2) for it in items)
    assert plan["items"] == 5 and plan["backbone"] == "local/smollm2"
    assert plan["calls"] == {"minos": [fewest, most], "bleu": [0, 0]} and plan["total_calls"] == [fewest, most]
    assert not sessions.exists()  # no session, no call
    code, out, err = run_cli(capsys, "run", str(DEMO), "--judge", "minos", "--plan", "--limit", "2",
                             "--sessions-dir", str(sessions))
    assert code == 0 and "minos" in out and "backbone calls" in out


def test_item_detail_shows_scores_ranking_and_gold(tmp_path, capsys) -> None:
    data = run_json(capsys, "run", str(DEMO), "--judge", "rouge-l", "--limit", "3", "--sessions-dir", str(tmp_path))
    code, out, _ = run_cli(capsys, "sessions", "show", data["session"], "--item", "en-01", "--sessions-dir", str(tmp_path))
    assert code == 0
    assert "question" in out and "gold" in out and "rouge-l ranking" in out and "Response 1" in out
    detail = run_json(capsys, "sessions", "show", data["session"], "--item", "en-01", "--sessions-dir", str(tmp_path))
    entry = detail["judges"]["rouge-l"]
    assert sorted(entry["ranking"]) == sorted(detail["candidates"]) == sorted(entry["order"])


def test_refused_judge_is_a_clear_error_before_any_work(tmp_path, capsys) -> None:
    nodata = tmp_path / "noref.jsonl"
    nodata.write_text(json.dumps({"id": "1", "question": "q?", "candidates": {"a": "x", "b": "y"}}) + "\n")
    code, out, err = run_cli(capsys, "run", str(nodata), "--judge", "rouge-l", "--sessions-dir", str(tmp_path / "s"))
    assert code == 2 and "needs a reference answer" in err and "Traceback" not in err
    assert not (tmp_path / "s").exists() or not any((tmp_path / "s").iterdir())


def test_malformed_dataset_names_file_line_and_field(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "1", "question": "q", "candidates": {"a": "x"}}) + "\n" + '{"id": "2", "question": "q"}\n')
    code, _, err = run_cli(capsys, "datasets", "inspect", str(bad))
    assert code == 2 and "bad.jsonl" in err and "line 2" in err and "candidates" in err


def test_unknown_judge_lists_known_ones(capsys) -> None:
    code, _, err = run_cli(capsys, "run", str(DEMO), "--judge", "nope")
    assert code == 2 and "rouge-l" in err


def test_export_csv_jsonl_md(tmp_path, capsys) -> None:
    data = run_json(capsys, "run", str(DEMO), "--judge", "bleu", "--limit", "4", "--sessions-dir", str(tmp_path))
    sid = data["session"]
    for fmt in ("csv", "jsonl", "md"):
        out_file = tmp_path / f"out.{fmt}"
        code, _, _ = run_cli(capsys, "sessions", "export", sid, "--format", fmt, "-o", str(out_file), "--sessions-dir", str(tmp_path))
        assert code == 0
        text = out_file.read_text()
        assert "en-01" in text
    rows = list(csv.DictReader((tmp_path / "out.csv").read_text().splitlines()))
    assert len(rows) == sum(len(item.candidates) for item in load_dataset(DEMO).items[:4])  # one row per response
    records = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(records) == 4 and all(r["status"] == "done" for r in records)


def test_export_jsonl_is_strict_json_when_a_stored_result_holds_a_non_finite_number(tmp_path, capsys) -> None:
    """A results file edited or damaged to hold NaN in a judge's details and Infinity in a time (fields no verdict
    check reads) was exported as bare `NaN` / `Infinity`, which `JSON.parse` and `jq` refuse, while `--json` views of
    the same session said null. Each line is strict JSON now: the value null, its path under `non_finite`."""
    sid = run_json(capsys, "run", str(DEMO), "--judge", "length", "--limit", "2", "--sessions-dir", str(tmp_path))[
        "session"]
    shard = tmp_path / sid / "results-0000.json"
    data = json.loads(shard.read_text(encoding="utf-8"))
    first = next(iter(data["results"].values()))
    first["elapsed_s"] = float("inf")
    first["verdict"]["details"]["edited"] = float("nan")
    shard.write_text(json.dumps(data), encoding="utf-8")  # Python writes them bare, as a hand edit could
    code, out, err = run_cli(capsys, "sessions", "export", sid, "--format", "jsonl", "--sessions-dir", str(tmp_path))
    assert code == 0, err

    def refuse(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")

    records = [json.loads(line, parse_constant=refuse) for line in out.splitlines()]
    edited = next(r for r in records if "non_finite" in r)
    assert edited["elapsed_s"] is None and edited["verdict"]["details"]["edited"] is None
    assert set(edited["non_finite"]) == {"elapsed_s", "verdict.details.edited"}
    assert sum("non_finite" in r for r in records) == 1


def test_export_csv_of_a_ratings_session_has_each_response_s_gold_ratings(tmp_path, capsys) -> None:
    """A ratings dataset's export (the CSV every spreadsheet user asks for) failed with a traceback: each response's
    gold columns were read with the ratings' keys the wrong way round. Each row now has its response's ratings."""
    data = tmp_path / "rated.jsonl"
    data.write_text("".join(json.dumps({"id": f"d{i}", "question": "Sum up.", "references": ["a summary"],
                                        "candidates": {"a": "a summary", "b": "a longer summary here"},
                                        "gold": {"kind": "ratings", "ratings": {"a": {"coherence": 2, "fluency": 4},
                                                                                "b": {"coherence": 5}}}}) + "\n"
                            for i in range(2)), encoding="utf-8")
    sid = run_json(capsys, "run", str(data), "--judge", "length", "--sessions-dir", str(tmp_path))["session"]
    code, out, err = run_cli(capsys, "sessions", "export", sid, "--format", "csv", "--sessions-dir", str(tmp_path))
    assert code == 0, err
    rows = list(csv.DictReader(out.splitlines()))
    assert [(r["candidate"], r["gold coherence"], r["gold fluency"]) for r in rows] == [
        ("a", "2.0", "4.0"), ("b", "5.0", "")] * 2


def test_compare_two_sessions(tmp_path, capsys) -> None:
    a = run_json(capsys, "run", str(DEMO), "--judge", "bleu", "--sessions-dir", str(tmp_path))["session"]
    b = run_json(capsys, "run", str(DEMO), "--judge", "rouge-l", "--sessions-dir", str(tmp_path))["session"]
    data = run_json(capsys, "sessions", "compare", a, b, "--sessions-dir", str(tmp_path))
    assert [r["judge"] for r in data["runs"]] == ["bleu", "rouge-l"]
    assert 0.0 <= data["agreement"][0]["stats"]["top1"] <= 1.0
    code, out, _ = run_cli(capsys, "sessions", "list", "--sessions-dir", str(tmp_path))
    assert code == 0 and a in out and b in out


def test_a_comparison_measures_every_run_under_one_convention_and_says_so(tmp_path, capsys) -> None:
    """The same judge under the strict and the paper convention made the same verdicts (agreement 1.000), yet the
    metrics block showed their stored kendall apart (0.287 | 0.192) and the table re-measured both under A's: a
    difference that was the convention's, read as the judges'. And a paper run against a smaller paper run was
    re-measured under strict in one block and paper in the other. Every figure is now under run A's convention,
    each run's own in `runs`, and the note says so."""
    data = tmp_path / "tied.jsonl"
    rows = [{"id": f"q{n}", "question": f"Question {n}?", "references": ["r"],
             "candidates": {"a": "one two three four", "b": "one two", "c": "one"},
             "gold": {"kind": "ranking", "tiers": tiers}}
            for n, tiers in enumerate([[["a"], ["b"], ["c"]], [["c"], ["b"], ["a"]], [["a", "b", "c"]],
                                       [["b"], ["a"], ["c"]], [["a", "b", "c"]], [["a"], ["c"], ["b"]]])]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    sessions = ["--sessions-dir", str(tmp_path / "s")]
    strict = run_json(capsys, "run", str(data), "--judge", "length", *sessions)
    paper = run_json(capsys, "run", str(data), "--judge", "length", "--convention", "paper", *sessions)
    assert strict["judges"]["length"]["metrics"]["kendall"] != paper["judges"]["length"]["metrics"]["kendall"]
    for first, second, convention in ((strict, paper, "strict"), (paper, strict, "paper")):
        found = run_json(capsys, "sessions", "compare", first["session"], second["session"], *sessions)
        assert [r["convention"] for r in found["runs"]] == [convention, {"strict": "paper", "paper": "strict"}[convention]]
        assert "different conventions" in found["note"] and f"every figure here is under {convention}" in found["note"]
        a, b = found["runs"]
        assert a["metrics"] == b["metrics"] == first["judges"]["length"]["metrics"]  # one judge, one convention
        assert found["table"]["convention"] == convention
        assert [row["metrics"]["kendall"] for row in found["table"]["rows"]] == [a["metrics"]["kendall"]] * 2
    smaller = run_json(capsys, "run", str(data), "--judge", "length", "--convention", "paper", "--limit", "5", *sessions)
    found = run_json(capsys, "sessions", "compare", paper["session"], smaller["session"], *sessions)
    assert "different conventions" not in found["note"]  # both paper: the metrics block and the table alike
    assert found["runs"][0]["metrics"]["kendall"] == pytest.approx(found["table"]["rows"][0]["metrics"]["kendall"])


@pytest.mark.shared_data
def test_webglm_both_lexical_judges(shared_data, tmp_path, capsys) -> None:
    path = shared_data / "LINKAGE_WebGLM" / "WEBGLM_50.json"
    data = run_json(capsys, "run", str(path), "--judge", "rouge-l", "--judge", "bleu", "--sessions-dir", str(tmp_path))
    assert data["dataset"]["format"] == "linkage-webglm"
    for judge in ("rouge-l", "bleu"):
        metrics = data["judges"][judge]["metrics"]
        assert {"kendall", "spearman", "pearson", "rbo_0.5", "rbo_0.9"} <= set(metrics)


@pytest.mark.shared_data
def test_summeval_pointwise_per_dimension(shared_data, tmp_path, capsys) -> None:
    path = shared_data / "SummEval" / "summeval.jsonl"
    data = run_json(capsys, "run", str(path), "--judge", "rouge-l", "--limit", "10", "--sessions-dir", str(tmp_path))
    metrics = data["judges"]["rouge-l"]["metrics"]
    for dim in ("coherence", "consistency", "fluency", "relevance"):
        assert f"pearson/{dim}" in metrics and f"spearman_sample/{dim}" in metrics
    dims = [metrics[f"pearson/{d}"] for d in ("coherence", "consistency", "fluency", "relevance")]
    assert metrics["pearson"] == pytest.approx(sum(dims) / 4)


@pytest.mark.shared_data
def test_lfqa_eval_inspects_and_refuses_reference_judges(shared_data, capsys) -> None:
    folder = shared_data / "LFQA-Eval_Xu2023"
    info = run_json(capsys, "datasets", "inspect", str(folder))
    assert info["format"] == "lfqa-eval" and info["gold_kinds"] == {"pairwise": info["n_items"]}
    code, _, err = run_cli(capsys, "run", str(folder), "--judge", "rouge-l")
    assert code == 2 and "needs a reference answer" in err


def _big_dataset(path: Path, n: int) -> None:
    words = "the quick brown fox jumps over the lazy dog while a small cat sleeps near the warm fire".split()
    with path.open("w") as f:
        for i in range(n):
            text = " ".join(words[(i + k) % len(words)] for k in range(100))
            cands = {f"c{k}": " ".join(text.split()[k * 9:]) for k in range(5)}
            f.write(json.dumps({"id": f"i{i}", "question": f"q{i}", "references": [text], "candidates": cands,
                                "gold": {"kind": "ranking", "tiers": [[c] for c in cands]}}) + "\n")


def _stored(session_dir: Path) -> dict[str, float]:
    """item id -> verdict time of what a session holds on disk right now."""
    session = SessionStore(session_dir.parent).open(session_dir.name)
    return {item_id: v.at for item_id, v in session.verdicts("rouge-l").items()}


def _stored_bytes(sessions: Path) -> int:
    """The bytes of the result shards under `sessions` now; 0 while there are none. The run's check that the folder
    can be written makes the folder and removes it again before the session makes it for good, so it may vanish
    between a listing and a read."""
    try:
        return sum(f.stat().st_size for f in sessions.glob("*/results-*.json"))
    except FileNotFoundError:
        return 0


def test_kill_9_then_resume_loses_and_recomputes_nothing(tmp_path) -> None:
    data = tmp_path / "big.jsonl"
    _big_dataset(data, 200)
    sessions = tmp_path / "sessions"
    cmd = [sys.executable, "-m", "qatui", "run", str(data), "--judge", "rouge-l", "--concurrency", "1",
           "--sessions-dir", str(sessions)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            if _stored_bytes(sessions) > 20_000:
                break
            assert proc.poll() is None, "the run ended before it could be killed"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    (session_dir,) = sessions.iterdir()
    before = _stored(session_dir)
    assert 0 < len(before) < 200
    done = subprocess.run([sys.executable, "-m", "qatui", "sessions", "resume", session_dir.name, "--json",
                           "--sessions-dir", str(sessions)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "completed" and result["judges"]["rouge-l"]["n_failed"] == 0
    after = _stored(session_dir)
    assert len(after) == 200
    assert all(after[item_id] == at for item_id, at in before.items()), "a finished item was recomputed"


def test_csv_export_is_one_row_per_response_with_its_text_gold_and_every_judge(tmp_path, capsys) -> None:
    """A spreadsheet review needs no join: question, response, gold rank and each judge's score on one row."""
    item = {"id": "=cmd|' /C calc'!A0", "question": "+Which is longer?", "references": ["A long answer here."],
            "candidates": {"short": "-Short.", "long": "@A much longer answer than the other one."},
            "gold": {"kind": "ranking", "tiers": [["long"], ["short"]]}}
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(item) + "\n")
    sid = run_json(capsys, "run", str(path), "--judge", "length", "--judge", "rouge-l", "--sessions-dir", str(tmp_path))["session"]
    code, out, err = run_cli(capsys, "sessions", "export", sid, "--format", "csv", "--sessions-dir", str(tmp_path))
    assert code == 0, err
    rows = {row["candidate"]: row for row in csv.DictReader(out.splitlines())}
    assert set(rows) == {"short", "long"}
    long = rows["long"]
    # every text a spreadsheet would run as a formula starts with ' (shown as text)
    assert long["item_id"] == "'=cmd|' /C calc'!A0" and long["question"] == "'+Which is longer?"
    assert long["response"] == "'@A much longer answer than the other one." and rows["short"]["response"] == "'-Short."
    assert long["gold rank"] == "1" and rows["short"]["gold rank"] == "2"
    words = len("@A much longer answer than the other one.".split())
    assert float(long["length score"]) == words and long["length rank"] == "1" and long["length status"] == "done"
    assert long["rouge-l status"] == "done" and 0 < float(long["rouge-l score"]) <= 1
    # the dataset gone: ids and scores are still there, the texts are not
    path.unlink()
    code, out, _ = run_cli(capsys, "sessions", "export", sid, "--format", "csv", "--sessions-dir", str(tmp_path))
    rows = {row["candidate"]: row for row in csv.DictReader(out.splitlines())}
    assert code == 0 and rows["long"]["response"] == "" and float(rows["long"]["length score"]) == words


def test_each_group_of_the_breakdown_says_how_many_units_its_figures_hold(tmp_path, capsys) -> None:
    """`sessions show`'s figures by question type and pair type each carry their n: a group's 0.500 was shown
    without it, though it may be two human labels. Counted here from the demo file: ranking questions of each
    type whose gold has two tiers or more, and human labels of each pair type."""
    result = run_json(capsys, "run", str(DEMO), "--judge", "bleu", "--json", "--sessions-dir", str(tmp_path))
    records = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()]
    questions: dict[str, int] = {}
    labels: dict[str, int] = {}
    for record in records:
        gold = record.get("gold") or {}
        if gold.get("kind") == "ranking" and len(gold["tiers"]) > 1 and record.get("question_type"):
            questions[record["question_type"]] = questions.get(record["question_type"], 0) + 1
        if gold.get("kind") == "pairwise" and gold.get("pair_type"):
            labels[gold["pair_type"]] = labels.get(gold["pair_type"], 0) + len(gold["labels"])
    shown = run_json(capsys, "sessions", "show", result["session"], "--json", "--sessions-dir", str(tmp_path))
    counts = shown["judges"]["bleu"]["breakdown_n"]
    assert {t: n["kendall"] for t, n in counts["question_type"].items()} == questions
    assert {t: n["accuracy"] for t, n in counts["pair_type"].items()} == labels
    assert main(["sessions", "show", result["session"], "--sessions-dir", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    for group, n in {**questions, **labels}.items():  # the text's row of each group ends with its n
        assert any(line.split()[:1] == [group] and line.split()[-1] == str(n) for line in text.splitlines()), group
    assert "n: the units of the row's first figure" in text


def test_a_judge_right_on_every_item_gets_an_interval_six_items_can_give(tmp_path, capsys) -> None:
    """`qatui run` of the length judge on 6 pairs where people and the judge all prefer the longer answer: every
    bootstrap resample is 6 of 6, and the interval printed was [1.000, 1.000]. It is Clopper and Pearson's exact
    interval of 6 successes in 6 trials, [(0.025)^(1/6), 1], for accuracy and for the recall and precision of A,
    in the JSON and on the screen."""
    data = write_doubled(tmp_path / "pairs.jsonl", 6, long_right, lambda i: f"{2 * i + 1}")
    code = main(["--sessions-dir", str(tmp_path / "s"), "run", str(data), "--judge", "length", "--json"])
    doc = json.loads(capsys.readouterr().out)["judges"]["length"]
    exact = exact_interval(6, 6)
    assert code == 0 and doc["metrics"]["accuracy"] == 1.0 and doc["ci"]["accuracy"] == exact
    assert doc["classes"]["per_class"]["A"]["recall_ci"] == exact
    code = main(["--sessions-dir", str(tmp_path / "s"), "sessions", "show", SessionStore(tmp_path / "s").list()[0]["id"]])
    out = capsys.readouterr().out
    assert code == 0 and "[0.541, 1.000]" in out and "[1.000, 1.000]" not in out


def test_a_point_interval_stored_before_the_rule_is_shown_as_none(tmp_path, capsys) -> None:
    """Sessions stored before 2026-11-28 kept [1.0, 1.0] for 6 items all judged right. Read back (`sessions show`,
    `sessions list`, their JSON), such a point is no interval; a summary stored under the rule keeps its own."""
    data = write_doubled(tmp_path / "pairs.jsonl", 6, long_right, lambda i: f"{2 * i + 1}")
    assert main(["--sessions-dir", str(tmp_path / "s"), "run", str(data), "--judge", "length", "--json"]) == 0
    capsys.readouterr()
    [meta] = SessionStore(tmp_path / "s").list()
    path = tmp_path / "s" / meta["id"] / "session.json"
    stored = json.loads(path.read_text(encoding="utf-8"))
    [doc] = stored["summary"].values()
    assert doc["interval_rule"] == 2 and doc["ci"]["accuracy"] == exact_interval(6, 6)
    del doc["interval_rule"]
    doc["ci"]["accuracy"] = [1.0, 1.0]  # as the old rule stored it
    doc["classes"]["per_class"]["A"]["recall_ci"] = [1.0, 1.0]
    path.write_text(json.dumps(stored), encoding="utf-8")
    assert main(["--sessions-dir", str(tmp_path / "s"), "sessions", "show", meta["id"], "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["judges"]["length"]
    assert "accuracy" not in shown["ci"] and shown["classes"]["per_class"]["A"]["recall_ci"] is None
    assert shown["ci"]["accuracy_no_tie"] == exact_interval(6, 6)  # not a point: kept
    assert main(["--sessions-dir", str(tmp_path / "s"), "sessions", "show", meta["id"]]) == 0
    assert "[1.000, 1.000]" not in capsys.readouterr().out
