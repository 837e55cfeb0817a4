"""Run every benchmark of bench/ and write bench/RESULTS.md: the figures, the machine, the date, each goal met or missed.

Run: make bench   (or .venv/bin/python bench/run_all.py [--only NAME ...] [--out PATH])
Each benchmark runs in its own interpreter, one after the other (never two at once: they
time CPU), with the repository root first on PYTHONPATH (so this checkout's qatui is measured),
LITELLM_LOCAL_MODEL_COST_MAP=True and OMP_NUM_THREADS=1 (on a shared 2-core machine torch's
spinning threads make inference many times slower; bench_embed.py measured 10x). Every line a
benchmark prints is kept in RESULTS.md; lines starting with "goal " are also gathered into
the summary table. A benchmark that fails or passes its time limit is reported as such, with
its last lines, and the others still run.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

HERE = Path(__file__).resolve().parent
RAGAS_DEFAULT = HERE.parent / ".venv-ragas" / "bin" / "python"
"""Where `make ragas-venv` puts the ragas peer's own virtualenv (inside the checkout, ignored by git)."""
ROOT = HERE.parent


@dataclass(frozen=True)
class Bench:
    """One benchmark: its script, the arguments `make bench` gives it, what it measures, and its time limit."""

    script: str
    args: tuple[str, ...]
    title: str
    limit_s: int = 600


BENCHES = (
    Bench("bench_engine_http.py", ("500", "0.05"), "1. Engine overhead over real HTTP (pairwise, 500 items)"),
    Bench("bench_harness_ceiling.py", ("1000", "0.05"), "1b. The loopback harness's own ceiling, and the engine beside it"),
    Bench("bench_cached_replay.py", ("1000", "0.05"), "2. Cached replay (pairwise and MinosEval, 1,000 items)"),
    Bench("bench_session_scale.py", ("1000", "10000"), "3. Session store scaling and the TUI's first paint"),
    Bench("bench_store.py", (), "3b. Time per stored result, sharded vs one file"),
    Bench("bench_nli.py", ("--pairs", "32", "--compare", "2000"), "4a. NLI throughput vs a transformers pipeline"),
    Bench("bench_embed.py", ("--n", "128", "--compare", "2000"), "4b. Embedding throughput vs a transformers pipeline"),
    Bench("bench_startup.py", ("3", "20"), "5. Startup: launch to first frame"),
    Bench("bench_calls_per_item.py", (), "6. Calls per item of every judge on the demo set"),
    Bench("bench_ragas_peer.py", ("40", "0.05"), "7. A peer, side by side: the ragas library"),
    Bench("bench_llm_cache.py", ("20", "96"), "The embedded backbone, uncached vs cached"),
    Bench("bench_local_runtime.py", ("--rounds", "3", "--profile"), "The embedded model's runtime: transformers vs llama.cpp"),
    Bench("bench_router.py", ("100", "0.05", "5", "10"), "Beyond one endpoint: two rate-limited deployments as one backbone"),
    Bench("bench_rate_limit.py", ("60", "10", "2", "16"), "A rate-limited provider: the run slows to its rate, fails nothing"),
    Bench("bench_whole_process.py", ("1000", "0.05", "--profile"), "8. The whole process: `qatui run` and its cached rerun"),
    Bench("bench_leak_check.py", ("50", "300"), "9. The leak check: difflib alone against the rule"),
)
PACKAGES = ("textual", "litellm", "tinydb", "transformers", "torch", "llguidance", "aiohttp", "openai", "pydantic", "numpy")


def without_machine_paths(line: str) -> str:
    """A line of a benchmark's output (a profile's file names, a traceback) with this machine's folders taken out:
    a package by its import path (`site-packages/torch/...` -> `torch/...`), the checkout's files relative to it."""
    line = re.sub(r"[^\s\"']*/(?:site|dist)-packages/", "", line)
    line = re.sub(r"[^\s\"']*/lib/python3\.\d+/", "python/", line)
    return line.replace(f"{ROOT}/", "")


def run(bench: Bench) -> tuple[str, float, float, int | str]:
    """Run one benchmark; its output, wall seconds, CPU seconds of its process tree, and exit status (or 'timeout')."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)]),
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    started, children = time.perf_counter(), os.times()
    try:
        done = subprocess.run([sys.executable, str(HERE / bench.script), *bench.args], capture_output=True,
                              text=True, env=env, cwd=ROOT, timeout=bench.limit_s)
        output, status = done.stdout + ("\n" + done.stderr if done.returncode else ""), done.returncode
    except subprocess.TimeoutExpired as e:
        output = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        status = "timeout"
    after = os.times()
    cpu = (after.children_user - children.children_user) + (after.children_system - children.children_system)
    return output, time.perf_counter() - started, cpu, status


def machine() -> list[str]:
    """What the figures were measured on: CPU, cores, memory, load, Python and package versions."""
    lines = []
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model = next((ln.split(":", 1)[1].strip() for ln in lscpu.splitlines() if ln.startswith("Model name")), "?")
    except OSError:
        model = platform.processor() or "?"
    memory = "?"
    if Path("/proc/meminfo").is_file():
        total_kb = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f"{total_kb / 1024 / 1024:.1f} GiB"
    lines.append(f"- CPU: {model}, {os.cpu_count()} logical cores, {memory} memory; {platform.platform()}")
    lines.append(f"- load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
                 "(the machine is shared with other work: wall times are noisy, CPU times less so)")
    lines.append(f"- Python {platform.python_version()} (the virtualenv `make bench` set up)")
    found = []
    for name in PACKAGES:
        try:
            found.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            pass
    lines.append("- " + ", ".join(found))
    ragas = Path(os.environ.get("RAGAS_PYTHON", str(RAGAS_DEFAULT)))
    if ragas.is_file():
        text = subprocess.run([str(ragas), "-c", "from importlib.metadata import version as v; "
                               "print(', '.join(f'{p} {v(p)}' for p in ('ragas', 'langchain-core', "
                               "'langchain-openai', 'openai')))"], capture_output=True, text=True).stdout.strip()
        lines.append(f"- the peer's own virtualenv ({ragas.parent.parent}): {text}")
    lines.append("- environment of every benchmark: OMP_NUM_THREADS=1, LITELLM_LOCAL_MODEL_COST_MAP=True")
    return lines


def notes() -> str:
    """The hand-kept explanations of bench/NOTES.md (what limits each goal missed), when present."""
    path = HERE / "NOTES.md"
    return "\n" + path.read_text(encoding="utf-8") if path.is_file() else ""


def main() -> None:
    """Run the benchmarks and write the results file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="script names (e.g. bench_nli.py) to run; default: all")
    parser.add_argument("--out", default=str(HERE / "RESULTS.md"))
    args = parser.parse_args()
    chosen = [b for b in BENCHES if not args.only or b.script in args.only]
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    head = machine()
    sections, goals = [], []
    total = time.perf_counter()
    for bench in chosen:
        print(f"== {bench.title} ({bench.script} {' '.join(bench.args)})", flush=True)
        output, wall, cpu, status = run(bench)
        kept = [without_machine_paths(ln) for ln in output.splitlines() if ln.strip() and "Warning" not in ln
                and "Loading weights" not in ln and not ln.startswith("  warnings.warn")]
        if status != 0:
            kept = kept[-30:]
            goals.append((bench.title, f"not measured: the benchmark {'ran past its limit' if status == 'timeout' else f'exited {status}'}"))
        goals += [(bench.title, ln[len("goal "):]) for ln in kept if ln.startswith("goal ")]
        print("\n".join(kept), flush=True)
        sections.append(f"## {bench.title}\n\n`.venv/bin/python bench/{bench.script} {' '.join(bench.args)}`: "
                        f"{wall:.0f} s wall, {cpu:.0f} s CPU (its processes)\n\n```\n" + "\n".join(kept) + "\n```\n")
    minutes = (time.perf_counter() - total) / 60
    rows = "\n".join(f"| {title} | {text.replace('|', '/')} |" for title, text in goals)
    Path(args.out).write_text(
        f"# Benchmark results\n\nWritten by `make bench` (bench/run_all.py) on {when}, in {minutes:.1f} minutes.\n\n"
        + "\n".join(head) + "\n\n## Goals\n\n| benchmark | goal: met or missed (measured) |\n|---|---|\n"
        + rows + "\n\n" + "\n".join(sections) + notes(), encoding="utf-8")
    print(f"wrote {args.out} ({minutes:.1f} minutes)")


if __name__ == "__main__":
    main()
