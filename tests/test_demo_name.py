"""`demo` names the bundled demo set wherever a dataset is asked for; a user's own file of that name wins."""

from __future__ import annotations

import json

from qatui.cli import main


def test_demo_is_a_dataset_name_for_run_inspect_and_table(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)  # no file called demo here
    sessions = ("--sessions-dir", str(tmp_path / "s"))
    assert main(["run", "demo", "--judge", "length", "--limit", "3", *sessions, "--json"]) == 0
    ran = json.loads(capsys.readouterr().out)
    assert ran["dataset"]["name"] == "demo" and ran["judges"]["length"]["n_items"] == 3
    assert main(["datasets", "inspect", "demo", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_items"] == 20
    assert main(["table", "demo", "--judge", "length", "--limit", "3", *sessions, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["items"] == 3


def test_a_file_called_demo_in_the_working_directory_wins(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    item = {"id": "mine", "question": "Q?", "references": ["R."], "candidates": {"a": "A.", "b": "B."}}
    (tmp_path / "demo").write_text(json.dumps(item) + "\n")
    assert main(["datasets", "inspect", "demo", "--format", "jsonl", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_items"] == 1
