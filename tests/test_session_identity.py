"""A session is the folder it lives in: a copy is named by its own folder everywhere, `sessions delete` takes only
an exact id, and a run killed after its last item but before its figures is finished by `sessions resume`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from qatui.cli import main


def _run(capsys, sessions: Path, *extra: str) -> dict:
    assert main(["--sessions-dir", str(sessions), "run", "demo", "--judge", "rouge-l", "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def _cli(capsys, sessions: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--sessions-dir", str(sessions), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_copied_session_folder_is_named_by_its_folder_everywhere(tmp_path, capsys) -> None:
    """`sessions list` named a copy by its folder, `show`, its JSON and the Markdown export by the stored id of the
    session it was copied from: a `delete ID` read off the screen then removed the other one."""
    sessions = tmp_path / "s"
    original = _run(capsys, sessions)["session"]
    shutil.copytree(sessions / original, sessions / "copyA")
    code, out, _ = _cli(capsys, sessions, "sessions", "show", "copyA", "--json")
    assert code == 0 and json.loads(out)["session"] == "copyA"
    code, out, _ = _cli(capsys, sessions, "sessions", "show", "copyA")
    assert code == 0 and "copyA" in out and original not in out, out
    code, out, _ = _cli(capsys, sessions, "sessions", "export", "copyA", "--format", "md")
    assert code == 0 and out.startswith("# qatui session copyA") and original not in out, out[:200]
    code, out, _ = _cli(capsys, sessions, "sessions", "show", original, "--json")
    assert json.loads(out)["session"] == original  # the original is itself still


def test_sessions_delete_takes_only_an_exact_id(tmp_path, capsys) -> None:
    """A name or the start of an id was resolved, then deleted without a question under --yes."""
    sessions = tmp_path / "s"
    session = _run(capsys, sessions, "--session", "mine")["session"]
    for given in ("mine", session[:2]):
        code, _, err = _cli(capsys, sessions, "sessions", "delete", given, "--yes")
        assert code == 2 and "takes a session's exact id" in err and f"qatui sessions delete {session}" in err, err
        assert (sessions / session).is_dir()
    code, out, _ = _cli(capsys, sessions, "sessions", "delete", session, "--yes")
    assert code == 0 and f"deleted {session}" in out and not (sessions / session).exists()


def test_a_run_killed_after_its_last_item_but_before_its_figures_is_finished_by_resume(tmp_path, capsys) -> None:
    """Killed while a big run computed its summary, a session kept every item, no figure and status "running":
    `show` said "resume it to finish" and `resume` said "complete, nothing to resume". Resume computes them."""
    sessions = tmp_path / "s"
    out = _run(capsys, sessions)
    session_file = sessions / out["session"] / "session.json"
    stored = json.loads(session_file.read_text())
    stored["meta"]["1"].update(status="running", pid=2 ** 22 + 1)  # as the killed run left it: no live writer
    stored["summary"] = {}
    session_file.write_text(json.dumps(stored))
    code, text, _ = _cli(capsys, sessions, "sessions", "show", out["session"], "--json")
    assert json.loads(text)["status"] == "interrupted" and json.loads(text)["judges"]["rouge-l"]["metrics"] == {}
    code, _, err = _cli(capsys, sessions, "sessions", "resume", out["session"])
    assert code == 0 and "computed them now" in " ".join(err.split()), err
    code, text, _ = _cli(capsys, sessions, "sessions", "show", out["session"], "--json")
    shown = json.loads(text)
    assert shown["status"] == "completed"
    assert shown["judges"]["rouge-l"]["metrics"] == out["judges"]["rouge-l"]["metrics"]
    code, _, err = _cli(capsys, sessions, "sessions", "resume", out["session"])
    assert code == 0 and "nothing to resume" in err  # once ended, as any finished session


def test_the_markdown_export_writes_a_judges_tie_as_a_tie(tmp_path, capsys) -> None:
    """`length` ties two answers of one length (`show`: r1 = r2); the Markdown export wrote `r1 > r2`, an order the
    judge never gave, while the CSV ranked both 1."""
    data = tmp_path / "tie.jsonl"
    data.write_text(json.dumps({"id": "q1", "question": "Capital?", "references": ["Paris"],
                                "candidates": {"r1": "It is Paris.", "r2": "It is Lyons"},
                                "gold": {"kind": "pairwise", "a": "r1", "b": "r2", "labels": ["A"]}}) + "\n")
    sessions = tmp_path / "s"
    assert main(["--sessions-dir", str(sessions), "run", str(data), "--judge", "length", "--json"]) == 0
    session = json.loads(capsys.readouterr().out)["session"]
    code, out, _ = _cli(capsys, sessions, "sessions", "export", session, "--format", "md")
    row = next(line for line in out.splitlines() if line.startswith("| q1 |"))
    assert code == 0 and row == "| q1 | length | r1 = r2 | tie |", row


def _nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = {"a": value}
    return value


def _edit_meta(meta: dict, key: str, value: object) -> None:
    if "." in key:
        table, field = key.split(".")
        meta[table][field] = value
    else:
        meta[key] = value


@pytest.mark.parametrize(("where", "key", "value", "said"), [
    ("summary", "metrics", None, "summary of 'rouge-l'.metrics is not an object"),
    ("summary", "metrics", 5, "summary of 'rouge-l'.metrics is not an object"),
    ("meta", "judges", None, "meta.judges is not an object"),
    ("meta", "judges", ["rouge-l"], "meta.judges is not an object"),
    ("meta", "progress", {"rouge-l": "x"}, "meta.progress holds a value that is not an object"),
    ("meta", "dataset.path", None, "meta.dataset.path is not text"),
    ("meta", "dataset.item_ids", 5, "meta.dataset.item_ids is not a list or null"),
    ("meta", "dataset", "demo", "meta.dataset is not an object"),
    ("meta", "models", "x", "meta.models is not an object"),
    ("meta", "llm", "x", "meta.llm is not an object"),
    ("meta", "dataset.content_hash", None, "meta.dataset.content_hash is not text"),
    ("meta", "name", _nested(700), "meta nests deeper than 64 levels"),
])
def test_a_hand_edited_session_file_is_one_damaged_session_never_a_traceback(tmp_path, capsys, where, key, value,
                                                                             said) -> None:
    """Only the meta's count and schema were checked: `"metrics": null` in one folder made `sessions list` (and so
    Home) fail with a TypeError for every session, and a field of another type or a value nested 700 deep made
    `show`, `export`, `resume`, `compare` and the report fail with tracebacks. Now the folder is listed damaged,
    and every command on it says so in one line, while the good session beside it is listed as ever."""
    sessions = tmp_path / "s"
    good = _run(capsys, sessions, "--session", "good")["session"]
    bad = _run(capsys, sessions, "--session", "bad")["session"]
    session_file = sessions / bad / "session.json"
    stored = json.loads(session_file.read_text())
    if where == "summary":
        next(iter(stored["summary"].values()))[key] = value
    else:
        _edit_meta(stored["meta"]["1"], key, value)
    session_file.write_text(json.dumps(stored))
    code, out, err = _cli(capsys, sessions, "sessions", "list", "--json")
    listed = {entry["id"]: entry for entry in json.loads(out)}
    assert code == 0 and listed[good]["status"] == "completed" and listed[bad]["status"] == "damaged", err
    assert said in listed[bad]["error"]
    for command in (["sessions", "show", bad], ["sessions", "export", bad, "--format", "md"],
                    ["sessions", "resume", bad], ["sessions", "compare", good, bad],
                    ["report", bad, "-o", str(tmp_path / "r.html")]):
        code, out, err = _cli(capsys, sessions, *command)
        assert code == 2 and said in " ".join(err.split()) and "Traceback" not in err + out, (command, err)


@pytest.mark.parametrize(("change", "said"), [({"failure": {}}, "malformed result document"),
                                              ({"calls": "x"}, "malformed result document")])
def test_a_hand_edited_result_record_is_refused_as_damage(tmp_path, capsys, change, said) -> None:
    """A failure record without its reason made `show` and `export` fail with KeyError; calls given as text made
    `show --item` fail with AttributeError."""
    sessions = tmp_path / "s"
    session = _run(capsys, sessions)["session"]
    shard = sessions / session / "results-0000.json"
    data = json.loads(shard.read_text())
    doc = next(iter(data["results"].values()))
    doc.update(change)
    if "failure" in change:
        doc.update(status="failed", verdict=None)
    shard.write_text(json.dumps(data))
    for command in (["sessions", "show", session], ["sessions", "export", session, "--format", "md"],
                    ["sessions", "show", session, "--item", doc["item_id"]]):
        code, out, err = _cli(capsys, sessions, *command)
        assert code == 2 and said in err and "Traceback" not in err + out, (command, err)


def test_results_of_items_a_session_has_not_are_damage_never_more_scored_than_items(tmp_path, capsys) -> None:
    """Records of two items not in an interrupted session's dataset were counted: `show` said "scored 22 of 20"."""
    sessions = tmp_path / "s"
    out = _run(capsys, sessions)
    folder = sessions / out["session"]
    stored = json.loads((folder / "session.json").read_text())
    stored["meta"]["1"].update(status="running", pid=2 ** 22 + 1)
    (folder / "session.json").write_text(json.dumps(stored))
    shard = folder / "results-0000.json"
    data = json.loads(shard.read_text())
    first = next(iter(data["results"].values()))
    for n, item_id in enumerate(["../x", "\x1b[2Jghost"], start=10_000):
        data["results"][str(n)] = {**first, "item_id": item_id, "seq": n,
                                   "verdict": {**first["verdict"], "item_id": item_id}}
    shard.write_text(json.dumps(data))
    code, text, err = _cli(capsys, sessions, "sessions", "show", out["session"])
    assert code == 2 and "more than the session's 20" in " ".join(err.split()) and "of 20" not in text, (text, err)
