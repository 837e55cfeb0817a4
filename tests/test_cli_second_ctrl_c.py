"""The second Ctrl-C quits at once, whatever the process is doing after the first one.

After the first Ctrl-C the CLI summarises the stopped session; that summary takes seconds on a
large session (1.2 to 2.2 s on 10,000 rouge-l items here). It ran on the event loop, where the
second Ctrl-C's handler runs, so "quits at once" waited for it. A real process gets real
SIGINTs; the summary is made slow (a stand-in for a very large session, installed through
`sitecustomize` in the child only), and the test waits for states: the process announcing the
stop, then the summary having begun.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.fakes import poll

SLOW_SUMMARY_S = 60.0
"""How long the stand-in summary takes: far longer than any quit may."""

SLOW_STEP = f"""
import importlib, pathlib, time

module = importlib.import_module({{module!r}})
_real = getattr(module, {{name!r}})

def slow(*args, **kwargs):
    pathlib.Path({{marker!r}}).write_text("begun")
    time.sleep({SLOW_SUMMARY_S})
    return _real(*args, **kwargs)

setattr(module, {{name!r}}, slow)
"""
"""A `sitecustomize` that makes one step after the stop slow and says when it begins."""


def _dataset(path: Path, n: int) -> Path:
    with path.open("w") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"q{i}", "question": f"question {i}?", "references": [f"answer {i} is blue"],
                                "candidates": {"a": f"answer {i} is blue", "b": "green " * 50, "c": "red"}}) + "\n")
    return path


@pytest.mark.parametrize("module, name", [
    ("qatui.engine.jobs", "finish_run"),  # the stopped session's summary
    ("qatui.report.leak_figures", "split_by_leaks"),  # the figures without leaking items, after the loop has ended
], ids=["summary", "leak-free figures"])
def test_the_second_ctrl_c_quits_while_the_stopped_session_is_summarised(tmp_path, module: str, name: str) -> None:
    marker = tmp_path / "begun"
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SLOW_STEP.format(module=module, name=name, marker=str(marker)))
    data, sessions = _dataset(tmp_path / "big.jsonl", 20_000), tmp_path / "s"
    env = dict(os.environ, COLUMNS="100", PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-m", "qatui", "run", str(data), "--judge", "rouge-l",
                             "--concurrency", "2", "--sessions-dir", str(sessions)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    err: list[bytes] = []
    reader = threading.Thread(target=lambda: err.extend(iter(lambda: proc.stderr.read1(4096), b"")), daemon=True)
    reader.start()
    try:
        assert poll(lambda: list(sessions.glob("*/results-0000.json")) or proc.poll() is not None, 120)
        assert proc.poll() is None, b"".join(err).decode()
        proc.send_signal(signal.SIGINT)
        assert poll(lambda: marker.exists() and b"Ctrl-C again" in b"".join(err), 60)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=SLOW_SUMMARY_S / 2)  # TimeoutExpired: the quit waited for the summary
        took = time.monotonic() - sent
    finally:
        proc.kill()
        reader.join(5)
    text = b"".join(err).decode()
    assert proc.returncode == 130, text
    assert "Quit." in text and "qatui sessions resume" in text and "Traceback" not in text, text
    assert took < SLOW_SUMMARY_S / 4, took
    from qatui.store.session import SessionStore

    [row] = SessionStore(sessions).list()
    assert 0 < len(SessionStore(sessions).open(row["id"]).finished_keys()) < 20_000  # what finished is on disk
