"""`qatui table`: one row per judge with CIs and coverage, sessions reused, paired deltas, every output format."""

from __future__ import annotations

import csv
import html
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tui_support import exact_interval, long_right, pytest_approx, write_doubled

from qatui.cli import main
from qatui.store.session import SessionStore

DEMO = Path(__file__).resolve().parents[1] / "qatui" / "data" / "demo" / "demo.jsonl"


def table(capsys, tmp_path: Path, *args: str) -> tuple[int, dict | str, str]:
    code = main(["table", str(DEMO), "--sessions-dir", str(tmp_path / "s"), *args])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if "--json" in args and code == 0 else out), err


def sessions(tmp_path: Path) -> list[str]:
    return sorted(meta["id"] for meta in SessionStore(tmp_path / "s").list())


def test_rows_with_cis_and_coverage_then_reused(tmp_path, capsys) -> None:
    code, data, err = table(capsys, tmp_path, "--judge", "rouge-l", "--judge", "bleu", "--limit", "8", "--json")
    assert code == 0, err
    assert [r["label"] for r in data["rows"]] == ["rouge-l", "bleu"] and data["gold"] == "ranking"
    for row in data["rows"]:
        assert row["coverage"] == {"items": 8, "scored": 8, "not_applicable": 0, "failed": 0}
        assert set(row["ci"]) >= {"kendall", "spearman"} and row["reused"] is False
        low, high = row["ci"]["kendall"]
        assert low <= row["metrics"]["kendall"] <= high
    first = sessions(tmp_path)
    assert len(first) == 2
    code, again, err = table(capsys, tmp_path, "--judge", "rouge-l", "--judge", "bleu", "--limit", "8", "--json")
    assert code == 0 and sessions(tmp_path) == first  # nothing judged again
    assert all(row["reused"] for row in again["rows"]) and "reused session" in err
    assert [r["metrics"] for r in again["rows"]] == [r["metrics"] for r in data["rows"]]


def test_other_items_or_other_options_are_not_reused(tmp_path, capsys) -> None:
    table(capsys, tmp_path, "--judge", "bleu", "--limit", "4", "--json")
    assert len(sessions(tmp_path)) == 1
    table(capsys, tmp_path, "--judge", "bleu", "--limit", "5", "--json")
    assert len(sessions(tmp_path)) == 2
    config = tmp_path / "c.toml"
    config.write_text("[judges.bleu]\ntie_digits = 3\n")
    code, data, err = table(capsys, tmp_path, "--config", str(config), "--judge", "bleu", "--limit", "4", "--json")
    assert code == 0 and len(sessions(tmp_path)) == 3 and data["rows"][0]["reused"] is False


def test_the_delta_against_the_baseline_is_paired_on_the_same_items(tmp_path, capsys) -> None:
    code, data, _ = table(capsys, tmp_path, "--judge", "rouge-l", "--judge", "bleu", "--baseline", "bleu",
                          "--limit", "12", "--json")
    bleu, rouge = data["rows"][1], data["rows"][0]
    assert data["baseline"] == "bleu" and bleu["vs_baseline"] is None
    delta = rouge["vs_baseline"]
    assert delta["key"] == "kendall" and delta["n"] == rouge["n"]["kendall"]
    assert delta["delta"] == pytest.approx(rouge["metrics"]["kendall"] - bleu["metrics"]["kendall"])
    assert delta["ci"][0] <= delta["delta"] <= delta["ci"][1]


def test_markdown_csv_and_latex_hold_the_same_cells(tmp_path, capsys) -> None:
    args = ("--judge", "rouge-l", "--judge", "bleu", "--limit", "6")
    code, md, _ = table(capsys, tmp_path, *args, "--to", "md")
    lines = [line for line in md.splitlines() if line.startswith("|")]
    assert code == 0 and lines[0].startswith("| judge | kendall") and len(lines) == 4
    assert "paired bootstrap CI" in md
    code, text, _ = table(capsys, tmp_path, *args, "--to", "csv")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][0] == "judge" and [r[0] for r in rows[1:]] == ["rouge-l", "bleu"]
    assert len({len(r) for r in rows}) == 1
    from markdown_it import MarkdownIt  # the Markdown as a viewer reads it: its cells are the csv's

    rendered = MarkdownIt("commonmark").enable("table").render(md)
    shown = [[html.unescape(re.sub(r"<[^>]+>", "", cell)) for cell in re.findall(r"<t[dh]>(.*?)</t[dh]>", row)]
             for row in re.findall(r"<tr>(.*?)</tr>", rendered, re.DOTALL)]
    assert shown == rows
    code, tex, _ = table(capsys, tmp_path, *args, "--to", "latex")
    assert r"\toprule" in tex and r"rbo\_0.5" in tex and "rbo_0.5" not in tex.split("%")[0]


def test_a_row_that_cannot_run_refuses_the_table_before_any_work(tmp_path, capsys) -> None:
    code, out, err = table(capsys, tmp_path, "--judge", "rouge-l", "--judge", "minos", "--backbone", "nosuch")
    assert code == 2 and "unknown backbone 'nosuch'" in err
    assert not (tmp_path / "s").exists()  # rouge-l did not run first


@pytest.mark.shared_data
def test_webglm_table_of_lexical_judges(shared_data, tmp_path, capsys) -> None:
    path = shared_data / "LINKAGE_WebGLM" / "WEBGLM_50.json"
    code = main(["table", str(path), "--judge", "rouge-l", "--judge", "bleu", "--json",
                 "--sessions-dir", str(tmp_path / "s")])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["items"] == 100
    for row in data["rows"]:
        assert row["coverage"]["scored"] == 100 and "kendall" in row["ci"] and "rbo_0.9" in row["metrics"]
        assert 0.0 <= row["bias"]["people_longer"] <= 1.0 and row["bias"]["pairs"] > 0


def test_compare_shows_the_same_rows_as_the_table(tmp_path, capsys) -> None:
    from qatui.report.compare import compare_sessions
    from qatui.report.strict_json import strict_dumps
    from qatui.tui.comparison import load_comparison

    code, data, _ = table(capsys, tmp_path, "--judge", "rouge-l", "--judge", "bleu", "--limit", "8", "--json")
    store = SessionStore(tmp_path / "s")
    ids = [row["session"] for row in data["rows"]]
    compared = json.loads(strict_dumps(compare_sessions([store.open(i) for i in ids])["table"]))  # as --json writes it
    assert [r["label"] for r in compared["rows"]] == ["A rouge-l", "B bleu"]
    for mine, theirs in zip(compared["rows"], data["rows"], strict=True):
        assert mine["metrics"] == theirs["metrics"] and mine["ci"] == theirs["ci"] and mine["coverage"] == theirs["coverage"]
    assert compared["rows"][1]["vs_baseline"]["delta"] == pytest.approx(data["rows"][1]["vs_baseline"]["delta"])
    assert json.loads(strict_dumps(load_comparison(store, ids).table)) == compared  # the TUI's Compare screen draws these


CI = re.compile(r"-?\d+\.\d \[-?\d+\.\d, -?\d+\.\d\]")
"""A figure with its CI, whole on one line: '50.1 [29.6, 70.9]'."""


@pytest.mark.parametrize("columns", [140, 80])
def test_the_terminal_table_fits_the_width_and_never_splits_a_ci(tmp_path, columns) -> None:
    """A real `qatui table` on a terminal `columns` wide: no line is wider, every CI is whole on one line
    (a wrapped one leaves a '[' without its figures), and every row's cells are all there."""
    env = {**os.environ, "COLUMNS": str(columns), "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("QATUI_SESSIONS_DIR", None)
    base = [sys.executable, "-m", "qatui", "table", str(DEMO), "--sessions-dir", str(tmp_path / "s"),
            "--judge", "rouge-l", "--judge", "bleu", "--limit", "12"]
    shown = subprocess.run(base, capture_output=True, text=True, env=env, timeout=300)
    data = json.loads(subprocess.run([*base, "--json"], capture_output=True, text=True, env=env, timeout=300).stdout)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= columns
    cis = sum(len(CI.findall(line)) for line in lines)
    assert cis == shown.stdout.count("[")  # no CI split: each '[' opens a whole one
    assert cis > 2 * len(data["rows"])  # each row's figures with their CIs, and the delta's
    for row in data["rows"]:  # each row's CIs on lines led by its label
        assert any(line.startswith(row["label"] + " ") and CI.search(line) for line in lines)
    parts = [line for line in lines if re.match(r"demo \(12 items\)", line)]  # each part's title whole on a line
    assert parts and all(re.fullmatch(r"demo \(12 items\)(, part (\d+) of \d+)?", p.rstrip()) for p in parts), parts


def test_a_narrow_part_keeps_its_title_on_one_line(tmp_path) -> None:
    """At 80 columns the table's last part can be a single narrow column: its title 'eq (4 items), part 4 of 4'
    wrapped to that column's width ('part 4' / 'of 4')."""
    data = tmp_path / "eq.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "question": "Which is best?", "references": ["the first answer"],
                                        "candidates": {"a": "first answer", "b": "second answer", "c": "third one"},
                                        "gold": {"kind": "ranking", "tiers": [["a"], ["b"], ["c"]]}}) + "\n"
                            for i in range(4)), encoding="utf-8")
    env = {**os.environ, "COLUMNS": "80", "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("QATUI_SESSIONS_DIR", None)
    shown = subprocess.run([sys.executable, "-m", "qatui", "table", str(data), "--sessions-dir", str(tmp_path / "s"),
                            "--judge", "length", "--judge", "rouge-l"], capture_output=True, text=True, env=env,
                           timeout=300)
    assert shown.returncode == 0, shown.stderr
    titles = [line.rstrip() for line in shown.stdout.splitlines() if line.startswith("eq (4 items)")]
    count = len(titles)
    assert count > 1 and titles == [f"eq (4 items), part {n} of {count}" for n in range(1, count + 1)], titles


def test_the_length_judge_prefers_the_longer_response_in_every_language_the_bias_figure_reads(tmp_path, capsys) -> None:
    """The length-bias figure measures a response by the length baseline's own rule: an item in Japanese or in
    zh-CN (no spaces between words) is counted in characters, so the length judge prefers the longer one in
    every pair. With words counted there, each answer was one 'word' and the pair was left out unseen."""
    items = [  # each pair differs in length by characters; the Japanese and Chinese ones are one 'word' each
        ("ja-1", "ja", "空は青い。", "空が青く見えるのは、光が散乱するからです。"),
        ("ja-2", "ja", "海は広くて深く、多くの生き物がすんでいます。", "海は広い。"),
        ("zh-1", "zh-CN", "天空是蓝色的。", "天空看起来是蓝色的，因为阳光被大气散射。"),
        ("th-1", "th", "ท้องฟ้าสีฟ้า", "ท้องฟ้าดูเป็นสีฟ้าเพราะแสงกระเจิง"),
        ("en-1", "en", "Blue.", "The sky looks blue because air scatters blue light the most."),
    ]
    data = tmp_path / "langs.jsonl"
    data.write_text("".join(json.dumps({
        "id": item_id, "question": "Why is it so?", "language": language, "candidates": {"a": a, "b": b},
        "gold": {"kind": "pairwise", "a": "a", "b": "b", "labels": ["B", "A"]}}, ensure_ascii=False) + "\n"
        for item_id, language, a, b in items), encoding="utf-8")
    code = main(["table", str(data), "--judge", "length", "--json", "--sessions-dir", str(tmp_path / "s")])
    out, err = capsys.readouterr()
    assert code == 0, err
    (row,) = json.loads(out)["rows"]
    assert row["bias"]["pairs"] == 5  # each pair once (its two labels make people's share), none 'equally long'
    assert row["bias"]["judge_longer"] == 1.0 and row["bias"]["judge_ties"] == 0
    assert row["bias"]["people_longer"] == 0.5  # one label of each pair chose the longer


def test_sessions_compare_prints_the_table_whole_at_80_columns(tmp_path) -> None:
    """`sessions compare`'s table section is printed as `qatui table` prints it: at 80 columns it was one Rich table
    of 19 columns, every header cut to 'jud…' and each CI broken over two lines ('[37…' / '70.…')."""
    env = {**os.environ, "COLUMNS": "80", "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("QATUI_SESSIONS_DIR", None)
    qatui = [sys.executable, "-m", "qatui", "--sessions-dir", str(tmp_path / "s")]
    ids = []
    for judge in ("rouge-l", "bleu"):
        done = subprocess.run([*qatui, "run", str(DEMO), "--judge", judge, "--limit", "8", "--json"],
                              capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        ids.append(json.loads(done.stdout)["session"])
    shown = subprocess.run([*qatui, "sessions", "compare", *ids], capture_output=True, text=True, env=env, timeout=300)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    compared = json.loads(subprocess.run([*qatui, "sessions", "compare", *ids, "--json"], capture_output=True,
                                         text=True, env=env, timeout=300).stdout)
    metrics = [key for key, value in compared["runs"][0]["metrics"].items() if isinstance(value, float)]
    assert "accuracy_no_tie" in metrics  # a name that was cut to 'accuracy…', read as accuracy's
    for key in metrics:  # a row each, its name whole, both runs' figures on it (B's with its delta)
        assert any(re.match(rf"{re.escape(key)} +-?\d\.\d{{3}} +-?\d\.\d{{3}} \([+-]\d\.\d{{3}}\)", line)
                   for line in lines), key
    start = next(n for n, line in enumerate(lines) if line.startswith("as `qatui table`"))
    end = next(n for n, line in enumerate(lines) if line.startswith("items where two runs disagree"))
    section = lines[start:end]
    assert max(len(line.rstrip()) for line in section) <= 80 and "…" not in "\n".join(section)
    text = "\n".join(section)
    assert len(CI.findall(text)) == text.count("[") >= 2 * 4  # both rows' four figures with whole CIs, the Δ's too
    for label in ("A rouge-l", "B bleu"):
        assert any(line.startswith(label + " ") and CI.search(line) for line in section)


ITEMS_BY_SCRIPT = {
    "english": ("What metal is liquid at room temperature?", "Mercury is the metal that is liquid at room temperature.",
                ["Mercury is liquid at room temperature.", "Iron is liquid when hot.", "Mercury, a metal."], None),
    "russian": ("Какой металл жидкий при комнатной температуре?", "Ртуть жидкая при комнатной температуре.",
                ["Ртуть жидкая при комнатной температуре.", "Железо жидкое, когда горячее.", "Ртуть, металл."], None),
    "zh-CN": ("哪种金属在室温下是液体？", "汞在室温下是液体。", ["汞在室温下是液体。", "铁在高温下是液体。", "汞是金属。"], "zh-CN"),
}


def _script_dataset(tmp_path: Path, script: str) -> Path:
    """Four ranked three-answer items in one script (untagged, or tagged as the table says)."""
    question, reference, answers, tag = ITEMS_BY_SCRIPT[script]
    path = tmp_path / f"{script}.jsonl"
    path.write_text("".join(json.dumps({
        "id": f"{script}-{i}", "question": f"{question} ({i})", "references": [reference],
        "candidates": {f"r{k}": answer for k, answer in enumerate(answers)}, **({"language": tag} if tag else {}),
        "gold": {"kind": "ranking", "tiers": [["r0"], ["r2"], ["r1"]]}}, ensure_ascii=False) + "\n" for i in range(4)),
        encoding="utf-8")
    return path


@pytest.mark.parametrize(("script", "reused_when_unrecorded"), [("english", True), ("russian", False),
                                                                   ("zh-CN", False)])
def test_a_session_is_reused_only_when_its_items_languages_were_read_alike(tmp_path, capsys, script,
                                                                            reused_when_unrecorded) -> None:
    """A session records how its items' languages were read. One stored before that (no record) judged untagged
    Russian as English (rouge-score's a-z tokens: every answer 0) and a "zh-CN" item down the English path: the
    table judges such items again, and reuses an English set's session, which today's rules judge alike; a
    recorded reading that differs from today's is never reused."""
    data = _script_dataset(tmp_path, script)
    store = SessionStore(tmp_path / "s")

    def row() -> dict:
        code = main(["table", str(data), "--sessions-dir", str(tmp_path / "s"), "--judge", "rouge-l", "--json"])
        out, err = capsys.readouterr()
        assert code == 0, err
        return json.loads(out)["rows"][0]

    assert row()["reused"] is False and row()["reused"] is True  # recorded today: reused
    (first,) = sessions(tmp_path)
    session = store.open(first)
    recorded = session.meta["dataset"]["languages"]
    assert sum(recorded["counts"].values()) == 4
    session.update_meta(dataset={k: v for k, v in session.meta["dataset"].items() if k != "languages"})
    session.close()
    assert row()["reused"] is reused_when_unrecorded
    assert len(sessions(tmp_path)) == (1 if reused_when_unrecorded else 2)
    for meta in SessionStore(tmp_path / "s").list():  # every session now records a reading unlike today's
        other = SessionStore(tmp_path / "s").open(meta["id"])
        other.update_meta(dataset={**other.meta["dataset"], "languages": {**recorded, "digest": "0" * 16}})
        other.close()
    assert row()["reused"] is False


def test_two_judges_alike_on_every_item_get_an_interval_about_no_difference(tmp_path, capsys) -> None:
    """Length and ROUGE-L both prefer the longer, reference-quoting answer on each of 6 pairs: every item differs by
    0, every paired resample too, and the delta's CI was [0, 0], then none: 6 items cannot tell two judges apart
    to the last point. Each item is one trial on both sides, so the interval is Bonett and Price's for paired
    proportions, by hand: 0 + 1 of 6 + 2 gained and lost, (1/8 - 1/8) ± 1.95996 sqrt((1/8 + 1/8 - 0) / 8) =
    ±0.3465. Each row's accuracy has the exact binomial interval of 6 of 6."""
    data = write_doubled(tmp_path / "pairs.jsonl", 6, long_right, lambda i: f"{2 * i + 1}")
    code = main(["table", str(data), "--sessions-dir", str(tmp_path / "s"), "--judge", "length", "--judge", "rouge-l",
                 "--json"])
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert code == 0 and [row["metrics"]["accuracy"] for row in rows] == [1.0, 1.0]
    assert rows[1]["vs_baseline"]["delta"] == 0.0
    assert rows[1]["vs_baseline"]["ci"] == pytest.approx([-0.3465, 0.3465], abs=5e-5)
    assert all(row["ci"]["accuracy"] == exact_interval(6, 6) for row in rows)


def test_a_judge_right_where_the_baseline_was_wrong_on_every_item_gets_the_exact_bound_of_its_gain(tmp_path,
                                                                                                  capsys) -> None:
    """People prefer the answer that is the reference; ROUGE-L does too on each of 6 pairs, the length baseline never:
    every item gains +1, and the paired CI was [+100, +100]. Bonett and Price's interval, by hand: gained 6 + 1 and
    lost 0 + 1 of 6 + 2, 7/8 - 1/8 = 0.75 ± 1.95996 sqrt((7/8 + 1/8 - 0.75^2) / 8) = 0.75 ± 0.4583: [0.2917, 1],
    above 0; and 5 items gaining with one alike, a step in, reads lower, never higher, than all 6 gaining."""
    data = write_doubled(tmp_path / "pairs.jsonl", 6, long_right, lambda i: f"{2 * i}", label="B")
    code = main(["table", str(data), "--sessions-dir", str(tmp_path / "s"), "--judge", "length", "--judge", "rouge-l",
                 "--json"])
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert code == 0 and [row["metrics"]["accuracy"] for row in rows] == [0.0, 1.0]
    gain = rows[1]["vs_baseline"]
    assert gain["delta"] == 1.0 and gain["ci"] == [pytest.approx(0.2917, abs=5e-5), 1.0]
    from qatui.metrics.paired import paired_binary_interval

    assert paired_binary_interval(5, 0, 6)[0] < gain["ci"][0]  # one step in from the end: a lower bound, lower
