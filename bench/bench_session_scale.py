"""How a session scales from 1,000 to 10,000 items: writing, its files, opening, listing, and the TUI painting it.

Run: .venv/bin/python bench/bench_session_scale.py [SMALL] [LARGE]   (default 1000 10000)
Each size is a realistic MinosEval session (bench/session_fixture.py: six candidates, 36
artifacts and two call records per item) written through the engine's session API in a child
process (peak memory from its max RSS). Then, each in a fresh process: `SessionStore.list()`,
`sessions show --json` (every result read and summarised), and the TUI's Session screen
headless at 80x24: seconds from opening it to its first rows drawn, and to every result read.
Goal: LARGE/SMALL write time <= 12, and the large session paints in under 1 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent

WRITER = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[3])
from pathlib import Path
from session_fixture import write_dataset, write_session
root = Path(sys.argv[1]); n = int(sys.argv[2])
dataset = write_dataset(root / "data.jsonl", n)
started = time.perf_counter()
session_id = write_session(root / "sessions", dataset)
print(json.dumps({"id": session_id, "write_s": time.perf_counter() - started,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

PAINT = """
import sys, time
from qatui.config import load_config
from qatui.store.session import SessionStore
from qatui.tui.app import QatuiApp
from qatui.tui.screens.session import SessionScreen
from qatui.tui.widgets.item_list import ItemList
from qatui.tui.saved import READING

class Probe(QatuiApp):
    def on_ready(self) -> None:
        print("opened", time.time(), time.process_time(), flush=True)
        self.push_screen(SessionScreen(self.store, sys.argv[2]))
        self.set_interval(0.005, self.check)

    def check(self) -> None:
        lists = self.screen.query(ItemList)
        if not hasattr(self, "painted") and lists and lists.first().display and lists.first().row_count:
            self.painted = time.time()
            print("painted", self.painted, time.process_time(), flush=True)
        state = getattr(self.screen, "state", None)
        if hasattr(self, "painted") and state is not None and self.screen._worst and \\
                not any(t.status == READING for t in state.tasks.values()):
            print("loaded", time.time(), time.process_time(), flush=True)
            self.exit()

Probe(load_config(), SessionStore(sys.argv[1])).run(headless=True, size=(80, 24))
"""


def child(code: str, *args: str) -> tuple[str, float]:
    """Run `code` in a fresh interpreter; its stdout and the wall time from spawn to exit."""
    started = time.time()
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True,
                         timeout=600, env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}).stdout
    return out, started


def measure(root: Path, n: int) -> dict[str, float]:
    """Every figure for a session of `n` items written under `root`."""
    out, _ = child(WRITER, str(root), str(n), str(HERE))
    figures = json.loads(out.splitlines()[-1])
    folder = root / "sessions" / figures["id"]
    figures["size_mb"] = sum(p.stat().st_size for p in folder.iterdir()) / 1e6
    _, started = child(f"from qatui.store.session import SessionStore; SessionStore({str(root / 'sessions')!r}).list()")
    figures["list_s"] = time.time() - started
    _, started = child("import sys; from qatui.cli import main; sys.exit(main(sys.argv[1:]))",
                       "--sessions-dir", str(root / "sessions"), "sessions", "show", figures["id"], "--json")
    figures["show_json_s"] = time.time() - started
    out, started = child(PAINT, str(root / "sessions"), figures["id"])
    marks = {words[0]: (float(words[1]), float(words[2])) for words in map(str.split, out.splitlines())
             if words and words[0] in ("opened", "painted", "loaded")}
    for mark, key in (("painted", "paint"), ("loaded", "loaded")):
        figures[f"{key}_s"] = marks[mark][0] - marks["opened"][0]
        figures[f"{key}_cpu_s"] = marks[mark][1] - marks["opened"][1]
    return figures


def main(small: int, large: int) -> None:
    """Print each figure at both sizes and their ratio."""
    results = {}
    for n in (small, large):
        with tempfile.TemporaryDirectory() as tmp:
            results[n] = measure(Path(tmp), n)
    rows = [("write (s)", "write_s"), ("peak memory of the writer (MB)", "peak_mb"), ("files (MB)", "size_mb"),
            ("list sessions, fresh process (s)", "list_s"), ("sessions show --json, fresh process (s)", "show_json_s"),
            ("TUI: Session screen -> first rows (s)", "paint_s"),
            ("  the same, CPU time of the process (s)", "paint_cpu_s"),
            ("TUI: Session screen -> every result read (s)", "loaded_s"),
            ("  the same, CPU time of the process (s)", "loaded_cpu_s")]
    print(f"{'':<42}{small:>10}{large:>10}   ratio")
    for label, key in rows:
        a, b = results[small][key], results[large][key]
        print(f"{label:<42}{a:>10.2f}{b:>10.2f}   {b / a:5.2f}")
    ratio = results[large]["write_s"] / results[small]["write_s"]
    print(f"goal write {large}/{small} <= 12: {'met' if ratio <= 12 else 'missed'} ({ratio:.1f}); "
          f"goal first rows of {large} items < 1 s: "
          f"{'met' if results[large]['paint_s'] < 1 else 'missed'} ({results[large]['paint_s']:.2f} s)")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3])) if len(sys.argv) > 2 else main(1000, 10000)
