"""A sessions folder that cannot take a session is refused in one line, exit 2, before any work: no preflight
call is paid for, no traceback. Read-only and full disks are real tmpfs mounts (root ignores permissions, so
a chmod'd folder proves nothing when the tests run as root); skipped with the reason where mounting is not
allowed."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from qatui.cli import main
from qatui.store.session import SessionStore


def _mount(folder: Path, options: str) -> None:
    """A tmpfs at `folder`, or the test is skipped with the reason."""
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or done.returncode}): needs root or "
                    "CAP_SYS_ADMIN to make a real read-only or full disk")


@pytest.fixture
def mounts(tmp_path: Path) -> Iterator[list[Path]]:
    """Folders mounted by the test, unmounted after it."""
    mounted: list[Path] = []
    yield mounted
    for folder in reversed(mounted):
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)


def _run_args(tmp_path: Path, server, sessions: Path) -> list[str]:
    """`qatui run` of pairwise on two items against the loopback backbone, into `sessions`."""
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "question": f"Sum {i}?", "candidates": {"a": "1", "b": "2"},
                                        "gold": {"kind": "pairwise", "a": "a", "b": "b", "labels": ["A"]}}) + "\n"
                            for i in range(2)))
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{server.base_url}"\n'
                      f'api_key_env = "FAKE_KEY"\n[cache]\nenabled = false\n')
    return ["run", str(data), "--judge", "pairwise", "--backbone", "fake", "--config", str(config),
            "--sessions-dir", str(sessions)]


def _refused(capsys, *words: str) -> None:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert all(word in err for word in words), err


@pytest.fixture
def backbone(llm_server, monkeypatch):
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    llm_server.script(lambda body: json.dumps({"rationale": "r", "choice": "A"}))
    return llm_server


def test_a_read_only_sessions_folder_is_refused_before_the_preflight(tmp_path, capsys, backbone, mounts) -> None:
    sessions = tmp_path / "ro"
    _mount(sessions, "ro,size=1m")
    mounts.append(sessions)
    assert main(_run_args(tmp_path, backbone, sessions)) == 2
    _refused(capsys, str(sessions), "cannot be written", "read-only")
    assert backbone.n_requests == 0  # no preflight call paid for


def test_a_full_sessions_disk_is_refused_before_the_preflight(tmp_path, capsys, backbone, mounts) -> None:
    disk = tmp_path / "full"
    _mount(disk, "size=64k")
    mounts.append(disk)
    with pytest.raises(OSError):  # fill it
        with open(disk / "filler", "wb") as f:
            while True:
                f.write(b"\0" * 4096)
                f.flush()
                os.fsync(f.fileno())
    assert main(_run_args(tmp_path, backbone, disk / "sessions")) == 2
    _refused(capsys, str(disk / "sessions"), "cannot be written", "full")
    assert backbone.n_requests == 0


def test_resuming_in_a_folder_made_read_only_is_refused_before_the_preflight(tmp_path, capsys, backbone,
                                                                            mounts) -> None:
    sessions = tmp_path / "s"
    _mount(sessions, "size=4m")
    mounts.append(sessions)
    backbone.script(faults=lambda i, body: "ok" if i == 0 else "400-echo")  # the preflight passes, items fail
    assert main(_run_args(tmp_path, backbone, sessions) + ["--json"]) != 0
    session_id = json.loads(capsys.readouterr().out)["session"]
    remount = subprocess.run(["mount", "-o", "remount,ro", str(sessions)], capture_output=True, text=True)
    if remount.returncode != 0:
        pytest.skip(f"cannot remount read-only: {remount.stderr.strip()}")
    asked = backbone.n_requests
    assert main(["sessions", "resume", session_id, "--sessions-dir", str(sessions),
                 "--config", str(tmp_path / "c.toml")]) == 2
    _refused(capsys, session_id, "read-only")
    assert backbone.n_requests == asked


def test_a_sessions_dir_that_is_a_file_is_refused_in_one_line(tmp_path, capsys, backbone) -> None:
    target = tmp_path / f"file-{uuid.uuid4().hex[:6]}"
    target.write_text("not a folder")
    assert main(_run_args(tmp_path, backbone, target)) == 2
    _refused(capsys, str(target), "is a file, not a folder")
    assert backbone.n_requests == 0
    for command in (["sessions", "list"], ["sessions", "show", "x"]):
        assert main([*command, "--sessions-dir", str(target)]) == 2
        _refused(capsys, str(target), "is a file, not a folder")


def test_a_disk_that_fills_during_a_run_stops_it_in_one_line_and_a_resume_finishes_it(tmp_path, capsys,
                                                                                       mounts) -> None:
    """The disk filling mid-run was four chained OSError tracebacks (exit 1), and so was a resume on it. Now the
    run stops in one line saying the disk is full and how to go on; the items saved before stay, and once space is
    freed a resume judges the rest, each item once."""
    disk = tmp_path / "disk"
    _mount(disk, "size=1m")
    mounts.append(disk)
    data = tmp_path / "d.jsonl"
    n = 800
    data.write_text("".join(json.dumps({"id": f"q{i}", "question": f"How long is answer {i}?", "candidates": {
        "a": "short", "b": "a longer answer"}, "gold": {"kind": "pairwise", "a": "a", "b": "b", "labels": ["B"]}})
        + "\n" for i in range(n)))
    filler = disk / "filler"
    filler.write_bytes(b"\0" * (512 * 1024))
    sessions = disk / "sessions"
    code = main(["run", str(data), "--judge", "length", "--sessions-dir", str(sessions)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "Traceback" not in err, err
    error = err.splitlines()[-1]  # after the live progress line
    assert error.startswith("error: ") and "the disk is full" in error and "qatui sessions resume" in error, err
    [session_id] = [p.name for p in sessions.iterdir()]
    saved = len(SessionStore(sessions).open(session_id).verdicts("length"))
    filler.unlink()
    resumed = main(["sessions", "resume", session_id, "--sessions-dir", str(sessions), "--json"])
    assert resumed == 0, capsys.readouterr()
    capsys.readouterr()
    docs = SessionStore(sessions).open(session_id).results().values()
    assert 0 < saved < n and len(docs) == n and all(doc["status"] == "done" for doc in docs)


def test_a_resume_refuses_a_damaged_verdict_before_it_pays_for_a_call(tmp_path, capsys, backbone) -> None:
    """A shard holding a verdict that is no verdict (edited, or written by a broken tool) was found at the summary,
    after the resume had paid for every call of the items left. Now the resume is refused first, naming it."""
    sessions = tmp_path / "s"
    backbone.script(lambda body: json.dumps({"rationale": "r", "choice": "A"}),
                    faults=lambda i, body: "400-echo" if "Sum 1?" in json.dumps(body) else "ok")  # q1 fails
    assert main(_run_args(tmp_path, backbone, sessions) + ["--json"]) == 0  # completed, with one item failed
    session_id = json.loads(capsys.readouterr().out)["session"]
    shard = sessions / session_id / "results-0000.json"
    doc = json.loads(shard.read_text())
    [done] = [d for d in doc["results"].values() if d["status"] == "done"]
    done["verdict"] = {"x": 1}
    shard.write_text(json.dumps(doc))
    backbone.script(lambda body: json.dumps({"rationale": "r", "choice": "A"}))
    asked = backbone.n_requests
    assert main(["sessions", "resume", session_id, "--sessions-dir", str(sessions),
                 "--config", str(tmp_path / "c.toml")]) == 2
    _refused(capsys, "damaged verdict of pairwise on q0")
    assert backbone.n_requests == asked
