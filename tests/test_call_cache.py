"""The call cache's SQLite file shared by threads and processes at once (a TUI run beside a CLI run)."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from qatui.llm.cache import CallCache

WRITER = """
import sys
from qatui.llm.cache import CallCache
cache = CallCache(sys.argv[1])
for i in range(int(sys.argv[3])):
    key = f"{sys.argv[2]}-{i:04d}"
    cache.put(key, {"model": "m", "messages": [{"role": "user", "content": key}]}, {"text": key})
    assert cache.get(key) == {"text": key}
"""


def test_two_processes_and_two_threads_write_at_once_and_every_entry_reads_back(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    children = [subprocess.Popen([sys.executable, "-c", WRITER, str(root), f"proc{k}", "150"]) for k in range(2)]
    cache = CallCache(root)
    errors: list[BaseException] = []

    def write(name: str) -> None:
        try:
            for i in range(150):
                key = f"{name}-{i:04d}"
                cache.put(key, {"model": "m", "messages": []}, {"text": key})
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=write, args=(f"thread{k}",)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [child.wait(timeout=120) for child in children] == [0, 0] and errors == []
    names = [f"{who}{k}" for who in ("proc", "thread") for k in range(2)]
    assert all(cache.get(f"{name}-{i:04d}") == {"text": f"{name}-{i:04d}"} for name in names for i in range(150))


def test_a_failed_calls_request_never_replaces_an_answer_and_a_missing_folder_is_a_miss(tmp_path: Path) -> None:
    cache = CallCache(tmp_path / "nowhere")
    assert cache.get("k") is None and not (tmp_path / "nowhere").exists()  # reading creates nothing
    cache.put("k", {"model": "m"}, {"text": "the answer"})
    cache.put("k", {"model": "m"}, None)
    assert cache.get("k") == {"text": "the answer"}
    cache.put("f", {"model": "m"}, None)
    assert cache.get("f") is None and cache.load("f")["request"]["model"] == "m"  # its prompt can still be shown
