"""The Judge Lab's file: saved atomically, and never over an edit made outside the lab since it was opened."""

from __future__ import annotations

import os

import pytest

from qatui.errors import QatuiError
from qatui.tui.lab_file import ChangedOutside, new_lab_file, open_lab_file, save_lab_file


def test_save_writes_the_text_and_a_second_save_follows_the_first(tmp_path) -> None:
    path = tmp_path / "judge.toml"
    path.write_text('name = "mine"\n')
    opened = open_lab_file(path)
    saved = save_lab_file(opened, 'name = "mine"\n# one\n')
    assert path.read_text() == 'name = "mine"\n# one\n'
    save_lab_file(saved, 'name = "mine"\n# two\n')  # the lab's own save is not an outside change
    assert path.read_text() == 'name = "mine"\n# two\n'


def test_a_file_changed_outside_is_not_overwritten_without_asking(tmp_path) -> None:
    path = tmp_path / "judge.toml"
    path.write_text('name = "mine"\n')
    opened = open_lab_file(path)
    path.write_text('name = "mine"\n# edited in another editor\n')
    with pytest.raises(ChangedOutside, match="changed outside the lab"):
        save_lab_file(opened, 'name = "mine"\n# the lab\n')
    assert path.read_text() == 'name = "mine"\n# edited in another editor\n'
    save_lab_file(opened, 'name = "mine"\n# the lab\n', overwrite=True)  # the user said yes
    assert path.read_text() == 'name = "mine"\n# the lab\n'


def test_a_copy_not_saved_yet_does_not_replace_a_file_that_appeared(tmp_path) -> None:
    path = tmp_path / "judges" / "pointwise.toml"
    copy = new_lab_file(path, 'name = "pointwise"\n')
    path.parent.mkdir()
    path.write_text("someone else's\n")
    with pytest.raises(ChangedOutside, match="appeared"):
        save_lab_file(copy, 'name = "pointwise"\n')
    assert path.read_text() == "someone else's\n"


def test_a_copy_is_saved_into_a_folder_made_for_it(tmp_path) -> None:
    path = tmp_path / "config" / "judges" / "pointwise.toml"
    save_lab_file(new_lab_file(path, 'name = "pointwise"\n'), 'name = "pointwise"\n')
    assert path.read_text() == 'name = "pointwise"\n'


def test_a_deleted_file_is_not_silently_written_back(tmp_path) -> None:
    path = tmp_path / "judge.toml"
    path.write_text("x = 1\n")
    opened = open_lab_file(path)
    path.unlink()
    with pytest.raises(ChangedOutside, match="deleted"):
        save_lab_file(opened, "x = 2\n")


def test_unreadable_judge_files_are_refused_in_one_line(tmp_path) -> None:
    with pytest.raises(QatuiError, match="no such file"):
        open_lab_file(tmp_path / "missing.toml")
    (tmp_path / "latin.toml").write_bytes(b"x = '\xe9'\n")
    with pytest.raises(QatuiError, match="not UTF-8"):
        open_lab_file(tmp_path / "latin.toml")
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    with pytest.raises(QatuiError, match="pipe.toml"):
        open_lab_file(fifo)
