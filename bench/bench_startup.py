"""How fast `qatui` paints: launch to first frame and to the sessions listed, and the app's import cost.

Run: .venv/bin/python bench/bench_startup.py [RUNS] [SESSIONS]
Each run starts a fresh interpreter that does what `qatui` does (import the app, read the
config, open Home on a sessions folder of SESSIONS lexical sessions) headless at 100×30, and
reports wall time from before the process was spawned to Textual's `Ready` event (the first
frame is on screen) and to the Home table holding every session. Then: `import textual.app`
against `import qatui.tui.app` in fresh interpreters (median of RUNS; the ratio is what qatui
adds), and whether importing the app pulls in torch, transformers or litellm (it must not).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = """
import sys, time
from qatui.config import load_config
from qatui.store.session import SessionStore
from qatui.tui.app import QatuiApp
from qatui.tui.widgets.sessions_table import SessionsTable

class Probe(QatuiApp):
    def on_ready(self) -> None:
        print("ready", time.time(), flush=True)
        self.set_interval(0.005, self.check)

    def check(self) -> None:
        tables = self.screen.query(SessionsTable)
        if tables and tables.first().row_count == int(sys.argv[2]):
            print("listed", time.time(), flush=True)
            self.exit()

Probe(load_config(), SessionStore(sys.argv[1])).run(headless=True, size=(100, 30))
"""


def make_sessions(root: Path, n: int) -> None:
    """`n` finished bleu sessions on five demo items."""
    import asyncio

    from qatui.config import Config
    from qatui.data.loaders import demo_dataset
    from qatui.engine.jobs import finish_run, start_run
    from qatui.store.session import SessionStore

    store = SessionStore(root)
    for _ in range(n):
        job = start_run(store, demo_dataset(), ["bleu"], Config(), limit=5)

        async def drive(job=job) -> None:
            async for _ in job.engine.run():
                pass

        asyncio.run(drive())
        finish_run(job, "completed")


def launch(root: Path, n: int) -> tuple[float, float]:
    """Seconds from spawning the process to the first frame, and to the sessions listed."""
    started = time.time()
    out = subprocess.run([sys.executable, "-c", CHILD, str(root), str(n)], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    marks = dict(line.split() for line in out.splitlines() if line.split()[0] in ("ready", "listed"))
    return float(marks["ready"]) - started, float(marks["listed"]) - started


def import_seconds(module: str) -> float:
    """Wall time of a fresh interpreter importing `module`."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", f"import {module}"], check=True)
    return time.perf_counter() - started


def heavy_imports() -> list[str]:
    """Top-level packages among torch, transformers, litellm that `import qatui.tui.app` loads."""
    trace = subprocess.run([sys.executable, "-X", "importtime", "-c", "import qatui.tui.app"],
                           capture_output=True, text=True, check=True).stderr
    names = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in trace.splitlines() if "|" in line}
    return sorted(names & {"torch", "transformers", "litellm"})


def main(runs: int, sessions: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "sessions"
        make_sessions(root, sessions)
        launches = [launch(root, sessions) for _ in range(runs)]
    ready = [r for r, _ in launches]
    listed = [x for _, x in launches]
    print(f"qatui launch -> first frame:    median {statistics.median(ready):.3f} s  "
          f"(min {min(ready):.3f}, max {max(ready):.3f}, {runs} runs)")
    print(f"qatui launch -> {sessions} sessions listed: median {statistics.median(listed):.3f} s  "
          f"(min {min(listed):.3f}, max {max(listed):.3f})")
    bare = statistics.median(import_seconds("sys") for _ in range(runs))
    textual = statistics.median(import_seconds("textual.app") for _ in range(runs))
    app = statistics.median(import_seconds("qatui.tui.app") for _ in range(runs))
    print(f"fresh interpreter: bare {bare:.3f} s, import textual.app {textual:.3f} s, "
          f"import qatui.tui.app {app:.3f} s")
    print(f"import cost over the bare interpreter, qatui.tui.app / textual.app: "
          f"{(app - bare) / (textual - bare):.2f}x")
    heavy = heavy_imports()
    print(f"torch / transformers / litellm imported by qatui.tui.app: {', '.join(heavy) if heavy else 'none'}")
    first = statistics.median(ready)
    print(f"goal first frame under 1 s (lazy imports): {'met' if first < 1 and not heavy else 'missed'} "
          f"({first:.2f} s median)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5, int(sys.argv[2]) if len(sys.argv) > 2 else 20)
