"""Every `-o FILE` is written by one rule (`qatui.store.output_file.write_output`): a named pipe or a device is
written into and a link written through, never replaced by a plain file; a failure to write is one line, exit 2.

Before, `report`, `sessions export`, `table` and `labels export` renamed a temp file over the path (a pipe's
reader got nothing and the pipe became a file; a link's target was never written; as root `-o /dev/full`
replaced the device) or wrote with `Path.write_text` (a full disk ended in a traceback after the work was done).
No test here writes to a system device: a broken rule would replace it.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from qatui.cli import main

DEMO = Path(__file__).resolve().parent.parent / "qatui" / "data" / "demo" / "demo.jsonl"


@pytest.fixture
def session(tmp_path, capsys) -> tuple[Path, str]:
    """A finished `length` run on three demo items: (sessions folder, session id)."""
    sessions = tmp_path / "sessions"
    assert main(["--sessions-dir", str(sessions), "run", str(DEMO), "--judge", "length", "--limit", "3", "--json"]) == 0
    return sessions, json.loads(capsys.readouterr().out)["session"]


def commands(sessions: Path, session: str, out: str) -> dict[str, list[str]]:
    """Each command that writes `-o`, writing to `out`."""
    head = ["--sessions-dir", str(sessions)]
    return {
        "report": [*head, "report", session, "-o", out],
        "sessions export": [*head, "sessions", "export", session, "--format", "csv", "-o", out],
        "table": [*head, "table", str(DEMO), "--judge", "length", "--limit", "3", "--to", "csv", "-o", out],
        "table (text)": [*head, "table", str(DEMO), "--judge", "length", "--limit", "3", "-o", out],
    }


def test_a_named_pipe_is_written_into_and_stays_a_pipe(session, tmp_path, capsys) -> None:
    sessions, session_id = session
    pipe = tmp_path / "out.pipe"
    os.mkfifo(pipe)
    for name, argv in commands(sessions, session_id, str(pipe)).items():
        got: list[bytes] = []
        reader = threading.Thread(target=lambda: got.append(pipe.read_bytes()), daemon=True)  # never holds the run
        reader.start()
        assert main(argv) == 0, name
        reader.join(timeout=60)
        assert not reader.is_alive() and got and len(got[0]) > 100, f"{name}: the pipe's reader got {got}"
        assert stat.S_ISFIFO(pipe.stat().st_mode), f"{name} replaced the pipe with a file"
    capsys.readouterr()


def test_a_link_is_written_through_to_its_file(session, tmp_path, capsys) -> None:
    sessions, session_id = session
    for n, (name, argv) in enumerate(commands(sessions, session_id, str(tmp_path / f"link{0}")).items()):
        kept, link = tmp_path / f"kept{n}" / "real.out", tmp_path / f"link{n}"
        kept.parent.mkdir()
        kept.write_text("old")
        kept.chmod(0o640)
        link.symlink_to(kept)
        argv[argv.index(str(tmp_path / "link0"))] = str(link)
        assert main(argv) == 0, name
        assert link.is_symlink() and os.readlink(link) == str(kept), f"{name} replaced the link"
        assert len(kept.read_text()) > 100 and stat.S_IMODE(kept.stat().st_mode) == 0o640, name
        assert [p.name for p in kept.parent.iterdir()] == ["real.out"], f"{name} left a temp file"
    capsys.readouterr()


def test_dev_stdout_writes_to_the_pipe_the_command_prints_to(session) -> None:
    """`-o /dev/stdout` with the output piped (`| less`, a script capturing it): /dev/stdout is a link to the
    process's descriptor, which names a pipe, not a file; it is written into like any pipe."""
    import subprocess
    import sys

    sessions, session_id = session
    for name, argv in commands(sessions, session_id, "/dev/stdout").items():
        done = subprocess.run([sys.executable, "-m", "qatui", *argv], capture_output=True, text=True, timeout=120,
                              cwd=Path(__file__).resolve().parent.parent, check=False)
        assert done.returncode == 0, (name, done.stderr)
        assert len(done.stdout) > 100 and "Traceback" not in done.stderr, (name, done.stdout[:200], done.stderr)


def test_a_file_that_cannot_be_written_is_one_line_exit_2(session, tmp_path, capsys) -> None:
    """A link that loops (as a full disk or a read-only file system, known only on writing): one line naming
    the file, exit 2, the link left as it was. No test here writes to a system device (a broken rule would replace
    it, as `-o /dev/full` once did as root)."""
    sessions, session_id = session
    loop, other = tmp_path / "loop.out", tmp_path / "other.out"
    loop.symlink_to(other)
    other.symlink_to(loop)
    for name, argv in commands(sessions, session_id, str(loop)).items():
        capsys.readouterr()
        assert main(argv) == 2, name
        err = capsys.readouterr().err
        assert f"cannot write {loop}" in err and "Traceback" not in err, (name, err)
        assert [line for line in err.splitlines() if "cannot write" in line] == [err.splitlines()[-1]], err
        assert loop.is_symlink() and os.readlink(loop) == str(other), f"{name} replaced the link"


def test_labels_export_writes_through_a_link_and_says_a_file_it_cannot_write_in_one_line(tmp_path) -> None:
    from qatui.errors import QatuiError
    from qatui.report.label_files import write_rows

    rows = [{"item_id": "en-01", "annotator": "bob", "kind": "pairwise", "label": "A"}]
    kept, link = tmp_path / "labels.real.csv", tmp_path / "labels.csv"
    link.symlink_to(kept)
    write_rows(rows, link)
    assert link.is_symlink() and "en-01" in kept.read_text()
    loop = tmp_path / "loop.csv"
    loop.symlink_to(loop)
    with pytest.raises(QatuiError, match=f"cannot write {loop}"):
        write_rows(rows, loop)
    assert loop.is_symlink()
