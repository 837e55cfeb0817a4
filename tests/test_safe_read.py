"""Reading a user's file (`qatui.safe_read.read_bytes`): the memory of its own size, to its end, never past the limit.

Every loader, config, session and label file is read through it. It used to ask Python for one read of 1 GiB (its
limit), which Python allocates whole before reading: every file read reserved 1 GiB, and under an address-space
limit (`ulimit -v`, as shared machines set) every qatui command failed with a MemoryError.
"""

from __future__ import annotations

import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from qatui.safe_read import Refused, decode_text, read_bytes


def test_a_file_is_read_with_the_memory_of_its_own_size(tmp_path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_bytes(b'{"id": "q", "question": "Why?"}\n' * 10_000)  # 320 KB
    tracemalloc.start()
    try:
        data = read_bytes(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert data == path.read_bytes()
    assert peak < 2 * len(data) + 256_000, f"{peak:,} bytes to read {len(data):,}"  # before: 1,073,750,746


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="no /proc on this system")
def test_a_file_whose_status_says_0_bytes_is_read_to_its_end() -> None:
    """A /proc file is a regular file of size 0 that holds text: read to its end, as Python's own read does."""
    data = read_bytes("/proc/self/status")
    assert data.startswith(b"Name:") and b"\nVmSize:" in data and data.endswith(b"\n")
    with pytest.raises(Refused, match="qatui reads files of at most"):
        read_bytes("/proc/self/status", limit=100)


def test_a_file_past_the_limit_is_refused(tmp_path) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b"x" * 5_000)
    assert read_bytes(path, limit=5_000) == b"x" * 5_000
    with pytest.raises(Refused):
        read_bytes(path, limit=4_999)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc are Linux's")
def test_files_are_read_under_an_address_space_limit(tmp_path) -> None:
    """A process allowed 256 MB of address space beyond what it holds reads a dataset file and loads it."""
    path = tmp_path / "items.jsonl"
    path.write_text('{"id": "q1", "question": "Why is the sky blue?", "candidates": {"a": "Rayleigh scattering."}}\n',
                    encoding="utf-8")
    script = f"""
import re, resource
from qatui.data.loaders import load_dataset
from qatui.safe_read import read_bytes
held = int(re.search(r"VmSize:\\s+(\\d+) kB", open("/proc/self/status").read())[1]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (held + 256 * 2**20, resource.RLIM_INFINITY))
print(len(read_bytes({str(path)!r})), len(load_dataset({str(path)!r}).items))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [str(path.stat().st_size), "1"]


@pytest.mark.parametrize("data, line, column", [
    (b"\xff", 1, 1),
    (b"ab\ncd\xffx", 2, 3),
    (b"\xef\xbb\xbfab\xc3", 1, 3),                # a BOM is not a column; a sequence cut at the end
    (b"\xef\xbb\xbfa\n\xc3\xa9\xe9t\xe9", 2, 2),  # an 'e' with its accent is one column; Latin-1's is the byte
])
def test_text_that_is_not_utf8_is_refused_at_its_line_and_column(data, line, column) -> None:
    """Every user file is decoded by one helper, whose refusal says the line and column of the first byte that is
    not UTF-8 (a config or a checklist saved as Latin-1 said only "byte 1734")."""
    with pytest.raises(Refused) as refused:
        decode_text(data)
    assert (refused.value.line, refused.value.column) == (line, column)
    assert "not UTF-8" in refused.value.reason
