"""Hostile files are refused in one line naming the file, line and field, before any work; big valid ones load.

Each hostile dataset goes through a real `qatui datasets inspect` and `qatui run` process: exit 2,
one line on stderr, no traceback, no session folder, and a bounded wait (a FIFO used to block the
reader forever, `/dev/zero` to read until memory ran out). The other loaders of user files
(results and label imports, checklists) refuse the same shapes through the same reader
(`qatui/safe_read.py`). A 10 MB JSONL field and a 200 KB CSV cell load.
"""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from qatui.data.loaders import load_dataset
from qatui.safe_read import MAX_DEPTH, MAX_NUMBER_CHARS
from qatui.errors import DatasetError

PROCESS_TIMEOUT_S = 120
"""Bound on one qatui process (a refusal takes a few seconds; a hang would take forever)."""


def _record(**extra: object) -> dict:
    return {"id": "q1", "question": "Which colour is the sky?", "references": ["blue"],
            "candidates": {"a": "blue", "b": "green"}, **extra}


def _nested(depth: int, leaf: object = 1, key: str | None = "a") -> object:
    """A value of `depth` levels: objects {key: ...} (or lists when key is None) around `leaf`."""
    value = leaf
    for _ in range(depth):
        value = {key: value} if key is not None else [value]
    return value


def _nan_gold(folder: Path) -> Path:
    path = folder / "nan_gold.jsonl"
    good = _record(id="q0", gold={"kind": "ratings", "ratings": {"a": {"overall": 4}, "b": {"overall": 2}}})
    bad = _record(gold={"kind": "ratings", "ratings": {"a": {"overall": 5}, "b": {"overall": math.nan}}})
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")  # json.dumps writes the bare NaN
    return path


def _infinity_list(folder: Path) -> Path:
    path = folder / "inf_gold.json"
    records = [_record(id=f"q{i}", gold={"kind": "ratings", "ratings": {"a": {"overall": 1}}}) for i in range(3)]
    records[2]["gold"]["ratings"]["a"]["overall"] = math.inf
    path.write_text(json.dumps(records, indent=1))
    return path


def _overflowing_float(folder: Path) -> Path:
    path = folder / "overflow.jsonl"
    text = json.dumps(_record(gold={"kind": "ratings", "ratings": {"a": {"overall": 12345}}}))
    path.write_text(text.replace("12345", "1e400") + "\n")  # Python reads 1e400 as infinity
    return path


def _brackets(folder: Path) -> Path:
    path = folder / "brackets.json"
    path.write_text("[" * 200_000)
    return path


def _deep_objects(folder: Path) -> Path:
    path = folder / "deep_objects.jsonl"
    path.write_text(json.dumps(_record()) + "\n" + '{"id": "q2", "question": ' + '{"x": ' * 200_000 + "\n")
    return path


def _deep_meta(folder: Path) -> Path:
    path = folder / "deep_meta.jsonl"
    path.write_text(json.dumps(_record(meta=_nested(900))) + "\n")
    return path


def _long_number(folder: Path) -> Path:
    path = folder / "long_number.jsonl"
    path.write_text(json.dumps(_record()) + "\n" + json.dumps(_record(id=7)).replace("7", "9" * 5000) + "\n")
    return path


def _duplicate_key(folder: Path) -> Path:
    path = folder / "dup_key.jsonl"
    text = json.dumps(_record(candidates={"a": "blue", "b": "green"}))
    path.write_text(json.dumps(_record(id="q0")) + "\n" + text.replace('"b": "green"', '"a": "green"') + "\n")
    return path


def _fifo(folder: Path) -> Path:
    path = folder / "pipe.jsonl"
    os.mkfifo(path)
    return path


def _dev_zero(folder: Path) -> Path:
    return Path("/dev/zero")


def _non_utf8_name(folder: Path) -> Path:
    """A well-formed dataset whose file name holds the byte 0x9b (no UTF-8): a session could not record it."""
    path = Path(os.fsdecode(os.fsencode(folder) + b"/data\x9bset.jsonl"))
    path.write_text(json.dumps(_record()) + "\n", encoding="utf-8")
    return path


HOSTILE: dict[str, tuple[Callable[[Path], Path], list[str]]] = {
    "nan-gold": (_nan_gold, ["nan_gold.jsonl line 2 column", "field 'gold.ratings.b.overall'", "NaN"]),
    "infinity-list": (_infinity_list, ["inf_gold.json line", "item 3", "field 'gold.ratings.a.overall'",
                                                 "Infinity"]),
    "float-1e400": (_overflowing_float, ["overflow.jsonl line 1 column", "field 'gold.ratings.a.overall'",
                                   "1e400 is too big"]),
    "brackets-200000": (_brackets, ["brackets.json line 1 column 65", f"nested deeper than {MAX_DEPTH} levels"]),
    "deep-objects": (_deep_objects, ["deep_objects.jsonl line 2 column", "field 'question.x.x.x.x.x…'",
                                     f"nested deeper than {MAX_DEPTH} levels"]),
    "meta-900-deep": (_deep_meta, ["deep_meta.jsonl line 1 column", "field 'meta.a.a.a.a.a…'",
                                   f"nested deeper than {MAX_DEPTH} levels"]),
    "number-5000-digits": (_long_number, ["long_number.jsonl line 2 column 8", "field 'id'", "a number of 5,000 digits"]),
    "duplicate-key": (_duplicate_key, ["dup_key.jsonl line 2 column", "field 'candidates.a'",
                                       "the key comes twice in one object"]),
    "fifo": (_fifo, ["pipe.jsonl: is a named pipe (FIFO), not a regular file"]),
    "dev-zero": (_dev_zero, ["/dev/zero: is a character device, not a regular file"]),
    "non-utf8-name": (_non_utf8_name, ["data\\x9bset.jsonl: the file name is not valid UTF-8"]),
}


def _qatui(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config"),
           "COLUMNS": "400"}
    return subprocess.run([sys.executable, "-m", "qatui", *args], capture_output=True, text=True, env=env,
                          timeout=PROCESS_TIMEOUT_S, check=False)


@pytest.mark.parametrize("command", ["inspect", "run"])
@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_dataset_is_refused_in_one_line_naming_file_line_and_field(tmp_path, case, command) -> None:
    make, expected = HOSTILE[case]
    path = make(tmp_path)
    sessions = tmp_path / "sessions"
    args = (["datasets", "inspect", str(path)] if command == "inspect"
            else ["run", str(path), "--judge", "rouge-l", "--sessions-dir", str(sessions)])
    done = _qatui(tmp_path, *args)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr[-2000:]
    for part in expected:
        assert part in lines[0], (part, lines[0])
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert not sessions.exists()


def test_numbers_and_nesting_at_the_limits_load_and_one_past_is_refused(tmp_path) -> None:
    """The documented limits are the real ones: 64 levels and 50-character numbers load, 65 and 51 do not."""
    path = tmp_path / "limits.jsonl"
    # the record is level 1 and meta level 2: 62 levels inside meta make 64 in all
    at_limit = _record(meta={"deep": _nested(MAX_DEPTH - 2, key=None), "n": int("9" * MAX_NUMBER_CHARS),
                             "x": float("0." + "1" * (MAX_NUMBER_CHARS - 2))})
    path.write_text(json.dumps(at_limit) + "\n")
    [item] = load_dataset(path).items
    assert item.meta["n"] == int("9" * MAX_NUMBER_CHARS)
    path.write_text(json.dumps(_record(meta={"deep": _nested(MAX_DEPTH - 1, key=None)})) + "\n")
    with pytest.raises(DatasetError, match=r"limits.jsonl line 1 column \d+: field 'meta.deep\[0\]"):
        load_dataset(path)
    path.write_text(json.dumps(_record(meta={"n": int("9" * (MAX_NUMBER_CHARS + 1))})) + "\n")
    with pytest.raises(DatasetError, match="field 'meta.n': a number of 51 digits"):
        load_dataset(path)


def test_a_10_mb_jsonl_field_and_a_200_kb_csv_cell_load(tmp_path) -> None:
    big = "word " * 2_000_000  # 10 MB in one field of the first line: longer than what the format sniffer reads
    jsonl = tmp_path / "big.jsonl"
    jsonl.write_text(json.dumps(_record(candidates={"a": big, "b": "green"})) + "\n" + json.dumps(_record(id="q2")) + "\n")
    dataset = load_dataset(jsonl)
    assert dataset.format == "jsonl" and dataset.items[0].candidates["a"] == big and len(dataset.items) == 2
    as_list = tmp_path / "big.json"
    as_list.write_text(json.dumps([_record(candidates={"a": big, "b": "green"})]))
    assert load_dataset(as_list).items[0].candidates["a"] == big
    cell = "x" * 200_000
    table = tmp_path / "big.csv"
    with table.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["id", "question", "candidate:a", "candidate:b"], ["r1", "q?", cell, "short"]])
    assert load_dataset(table).items[0].candidates["a"] == cell


def _bounded(call: Callable[[], object], fifo: Path) -> BaseException | None:
    """What `call` raised (None if it returned), failing the test if it blocks; a blocked FIFO reader is released."""
    outcome: list[BaseException | None] = []

    def target() -> None:
        try:
            call()
            outcome.append(None)
        except BaseException as e:  # noqa: BLE001 - handed to the test
            outcome.append(e)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(PROCESS_TIMEOUT_S)
    if thread.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # a writer arriving and leaving ends the blocked read
        pytest.fail(f"reading the FIFO {fifo} blocked")
    return outcome[0]


def test_the_other_loaders_refuse_a_fifo_without_waiting(tmp_path) -> None:
    """Results and label imports, checklists and themes: a FIFO is refused at once, never waited on."""
    from qatui.data.results_file import read_results
    from qatui.errors import ConfigError, LabelError, ResultsFileError
    from qatui.judges.checkeval.checklist import ChecklistError, load_checklist
    from qatui.report.label_files import read_rows
    from qatui.tui.themes import read_theme

    for name, call, error in [
        ("results.csv", lambda p: read_results(p, "score"), ResultsFileError),
        ("labels.jsonl", read_rows, LabelError),
        ("checklist.toml", lambda p: load_checklist(str(p)), ChecklistError),
        ("theme.toml", read_theme, ConfigError),
    ]:
        fifo = tmp_path / name
        os.mkfifo(fifo)
        raised = _bounded(lambda fifo=fifo, call=call: call(fifo), fifo)
        assert isinstance(raised, error) and "is a named pipe (FIFO), not a regular file" in str(raised), raised


@pytest.mark.parametrize("args", [
    ["labels", "import", "{folder}", "--dataset", "{data}"],
    ["sessions", "import", "{folder}", "--dataset", "{data}", "--judge-name", "x"],
    ["run", "{data}", "--judge", "{folder}"],
], ids=["labels-import", "results-import", "judge-file"])
def test_a_folder_or_a_link_to_one_is_refused_as_a_folder(tmp_path, capsys, args) -> None:
    """A folder where a file is wanted reads "is a folder" (it read "Is a directory: 3", the descriptor's number,
    or "no such file"), through a link too, and leaves no session."""
    from qatui.cli import main

    data = tmp_path / "ok.jsonl"
    data.write_text(json.dumps(_record()) + "\n")
    (tmp_path / "real").mkdir()
    folder = tmp_path / "linked.toml"
    folder.symlink_to(tmp_path / "real")
    sessions = tmp_path / "sessions"
    argv = [a.format(folder=folder, data=data) for a in args] + ["--sessions-dir", str(sessions)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "linked.toml" in err, err
    assert "is a folder, not a regular file" in err and "Errno" not in err, err
    assert not sessions.exists()


def test_labels_results_and_checklists_refuse_non_finite_numbers_naming_line_and_field(tmp_path) -> None:
    from qatui.data.labels import DEFAULT_SCALE, LabelRules, parse_label
    from qatui.data.results_file import read_results
    from qatui.errors import ResultsFileError
    from qatui.judges.checkeval.checklist import ChecklistError, parse_checklist

    dataset = tmp_path / "ok.jsonl"
    dataset.write_text(json.dumps(_record()) + "\n")
    [item] = load_dataset(dataset).items
    with pytest.raises(ValueError, match=r"ratings column \d+: field 'a.overall': Infinity is not a number"):
        parse_label(item, "ratings", '{"a": {"overall": Infinity}}', LabelRules(None, DEFAULT_SCALE))
    results = tmp_path / "r.jsonl"
    results.write_text('{"item_id": "q1", "candidate_id": "a", "score": 1}\n'
                       '{"item_id": "q1", "candidate_id": "b", "score": -Infinity}\n')
    with pytest.raises(ResultsFileError, match=r"r.jsonl: line 2 column \d+: field 'score': -Infinity is not"):
        read_results(results, "score")
    toml = ('name = "t"\ntask = "t"\ntarget = "Answer"\n\n[[dimensions]]\nname = "d"\ndefinition = "x"\n\n'
            '[[dimensions.sub_dimensions]]\nname = "s"\nquestions = ["One?", "Two?"]\nweights = [1, inf]\n')
    parse_checklist(toml.replace("inf", "2"), "c.toml")  # the file is a checklist but for its weight
    with pytest.raises(ChecklistError, match=r"checklist c.toml line 12: field "
                                             r"'dimensions\[0\].sub_dimensions\[0\].weights\[1\]': inf is not a finite"):
        parse_checklist(toml, "c.toml")


async def test_the_dataset_picker_lists_no_special_files(tmp_path) -> None:
    """New run's file tree shows a dataset file and a folder, never a FIFO (picking it would block the load)."""
    from fakes import wait_until
    from textual.app import App, ComposeResult

    from qatui.tui.widgets.dataset_picker import DatasetTree

    (tmp_path / "data.jsonl").write_text(json.dumps(_record()) + "\n")
    os.mkfifo(tmp_path / "pipe.jsonl")
    (tmp_path / "folder").mkdir()

    class Picker(App):
        def compose(self) -> ComposeResult:
            yield DatasetTree(str(tmp_path))

    app = Picker()
    async with app.run_test() as pilot:
        tree = app.query_one(DatasetTree)
        await wait_until(pilot, lambda: tree.root.children, "the folder listed", timeout=60)
        assert sorted(str(node.label) for node in tree.root.children) == ["data.jsonl", "folder"]


def test_json_output_is_strict_with_a_non_finite_figure_as_null_and_its_reason(tmp_path, capsys, monkeypatch) -> None:
    """`--json` never prints a bare NaN: an undefined figure is null, and `non_finite` says why."""
    import qatui.report
    from qatui.cli import main

    def refuse(name: str) -> None:
        raise AssertionError(f"not strict JSON: {name}")

    overview = qatui.report.dataset_overview
    monkeypatch.setattr(qatui.report, "dataset_overview", lambda d: {**overview(d), "kendall": math.nan,
                                                                     "ratio": [math.inf]})
    path = tmp_path / "ok.jsonl"
    path.write_text(json.dumps(_record()) + "\n")
    assert main(["datasets", "inspect", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out, parse_constant=refuse)
    assert data["kendall"] is None and data["ratio"] == [None]
    assert data["non_finite"]["kendall"].startswith("NaN: the figure is undefined")
    assert data["non_finite"]["ratio[0]"] == "inf: the figure is infinite"
    assert data["n_items"] == 1


def test_json_output_writes_a_float_sum_s_last_bit_noise_as_the_figure_it_means(tmp_path, capsys, monkeypatch) -> None:
    """A mean summed in floating point (0.1 ten times is 0.9999999999999999) reads 1.0 in `--json`, to 12 digits."""
    import qatui.report
    from qatui.cli import main

    overview = qatui.report.dataset_overview
    noisy = sum([0.1] * 10)
    assert noisy != 1.0
    monkeypatch.setattr(qatui.report, "dataset_overview",
                        lambda d: {**overview(d), "mean": noisy, "small": 1 / 3 * 1e-9, "big": 2.0 ** 70})
    path = tmp_path / "ok.jsonl"
    path.write_text(json.dumps(_record()) + "\n")
    assert main(["datasets", "inspect", str(path), "--json"]) == 0
    out = capsys.readouterr().out
    data = json.loads(out)
    assert '"mean": 1.0' in out and data["mean"] == 1.0
    assert data["small"] == 3.33333333333e-10 and data["big"] == 1.18059162072e21  # significant digits, not places


@pytest.mark.parametrize("link", ["loop", "nowhere"])
def test_a_symbolic_link_that_loops_or_leads_nowhere_is_named_as_one(tmp_path, capsys, link) -> None:
    """A link loop given as a dataset, a config or a sessions folder was "no such file" or "no sessions": a user
    looking for a typo. Each is named as what it is, in one line."""
    from qatui.cli import main

    target = tmp_path / "gone"
    if link == "loop":
        (tmp_path / "a").symlink_to(tmp_path / "b")
        (tmp_path / "b").symlink_to(tmp_path / "a")
        said = "a symbolic link that loops"
    else:
        (tmp_path / "a").symlink_to(target)
        said = f"a symbolic link to nowhere (to {target})"
    name = str(tmp_path / "a")
    for argv in (["datasets", "inspect", name], ["--config", name, "judges"], ["sessions", "list", "--sessions-dir", name]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert said in err and len(err.strip().splitlines()) == 1, (argv, err)


@pytest.mark.parametrize("name", ["", "  "])
def test_a_candidate_named_empty_or_blank_is_refused_as_an_empty_item_id_is(tmp_path, name) -> None:
    """A candidate keyed "" was accepted and shown blank in every table, the verdict between it and another
    unreadable; an empty item id was already refused."""
    from qatui.data.loaders import load_dataset
    from qatui.errors import DatasetError

    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"id": "q", "question": "?", "candidates": {name: "x", "b": "y"}}) + "\n")
    with pytest.raises(DatasetError, match="line 1: field 'candidates': a candidate's name .* must not be empty"):
        load_dataset(str(path))
