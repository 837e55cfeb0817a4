"""A session is the folder it lives in: a copy is named by its own folder everywhere, `sessions delete` takes only
an exact id, and a run killed after its last item but before its figures is finished by `sessions resume`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

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
