"""The whole process: `qatui run` from the shell, then the fully cached rerun in a new process, with profiles.

Run: .venv/bin/python bench/bench_whole_process.py [N_ITEMS] [LATENCY_S] [--profile]   (defaults 1000 and 0.05)

A `pairwise` run (both orders: 2 calls per two-answer item, 2,000 calls for 1,000 items) as a
user starts it: `python -m qatui run DATA --judge pairwise --backbone fake --json` in a new
process, at concurrency 32, against the loopback server (tests/llm_server.py in a child process,
answering after LATENCY_S). Its wall time is set against the ideal (calls / (32 / latency)); then
the same command again, every call now in the call cache, in a new process (three times: the
median is the figure), and its wall time set against the first run's. Also timed: `python -c "import qatui.cli"` and the same with
LiteLLM imported (`qatui.llm._lazy.get_litellm`), what any `qatui` command pays before it works; and the first run
of another dataset (its questions reworded: every call new) with the same cache folder, as on a machine that has run
this backbone before: the model facts LiteLLM gave the first run are kept there (`qatui.llm.facts`), so no LiteLLM
import.
The processes run as a user's do: with Python's bytecode cache (`PYTHONDONTWRITEBYTECODE`, which a
sandbox may set, is cleared for them), so the first run compiles qatui's modules once and the
rerun reads them compiled, as a second `qatui run` after `pip install` does. The rerun sends no
request: the cache holds answers of the backbone, so its live check waits for a call the cache
cannot answer (`qatui.llm.preflight`), and none comes.
With `--profile`, both runs are run once more under cProfile and the cumulative time of each
stage (`STAGES`) is printed; CPU seconds are the processes' own (user + system), steadier than
wall time on a shared machine.
"""

from __future__ import annotations

import json
import os
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bench_engine_http import make_dataset, pairwise_answer  # noqa: E402
from loopback import serve_in_child  # noqa: E402

CONCURRENCY = 32
RERUNS = 3
"""How many times the fully cached rerun is made (each in a new process): its median is the figure, since one
process's wall time on a shared machine varies by a third from run to run."""
KEY_ENV = "QATUI_BENCH_FAKE_KEY"


def write_inputs(folder: Path, n: int, base_url: str) -> tuple[Path, Path]:
    """The dataset (JSONL) and the config a user would write for this run."""
    data = folder / "items.jsonl"
    with data.open("w") as f:
        for item in make_dataset(n).items:
            f.write(json.dumps({"id": item.id, "question": item.question, "references": item.references,
                                "candidates": item.candidates}) + "\n")
    config = folder / "config.toml"
    config.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{base_url}"\n'
                      f'api_key_env = "{KEY_ENV}"\nmax_concurrency = {CONCURRENCY}\n'
                      f'[general]\nconcurrency = {CONCURRENCY}\n[cache]\ndir = "{folder / "cache"}"\n')
    return data, config


def qatui(config: Path, data: Path, sessions: Path, profile: Path | None = None) -> list[str]:
    """The command line of one run (under cProfile when `profile` names its output)."""
    head = [sys.executable] + (["-m", "cProfile", "-o", str(profile)] if profile else []) + ["-m", "qatui"]
    return head + ["--config", str(config), "--sessions-dir", str(sessions), "run", str(data), "--judge", "pairwise",
                   "--backbone", "fake", "--json"]


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float, subprocess.CompletedProcess]:
    """Wall and CPU seconds (user + system) of one process, start to exit; it must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[-8:])} failed ({done.returncode}): {done.stdout[-500:]} {done.stderr[-800:]}")
    return wall, cpu, done


STAGES = (
    ("qatui/cli/__init__.py", "<module>", "importing the CLI"),
    ("qatui/llm/_lazy.py", "get_litellm", "importing LiteLLM (first use)"),
    ("qatui/llm/preflight.py", "preflight_backbone", "the preflight, LiteLLM's import included"),
    ("qatui/engine/jobs.py", "start_run", "start_run: dataset, judges, preflight, session"),
    ("qatui/engine/runner.py", "_judge_one", "judging every item (summed over concurrent tasks, waits included)"),
    ("qatui/llm/client.py", "_call", "the calls: cache lookups and requests (summed likewise)"),
    ("qatui/engine/jobs.py", "finish_run", "finish_run: summary and metrics"),
    ("qatui/metrics/summary.py", "<module>", "importing the metrics (scipy, scikit-learn)"),
    ("qatui/__main__.py", "<module>", "the whole process"),
)
"""The stages of one `qatui run` read from its profile: (file, function, what it is)."""


def stages(profile: Path) -> str:
    """Cumulative seconds of each of `STAGES` in a cProfile file, as a table."""
    stats = pstats.Stats(str(profile)).stats  # type: ignore[attr-defined]
    lines = []
    for suffix, function, what in STAGES:
        found = [v[3] for (f, _, fn), v in stats.items() if f.endswith(suffix) and fn == function]
        lines.append(f"  {max(found, default=0.0):7.2f} s  {what}")
    return "\n".join(lines)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(args[0]) if args else 1000
    latency = float(args[1]) if len(args) > 1 else 0.05
    profile = "--profile" in sys.argv
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, KEY_ENV: "sk-bench",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(ROOT)}
    calls = 2 * n
    ideal = calls / (CONCURRENCY / latency)
    with tempfile.TemporaryDirectory() as tmp, serve_in_child(pairwise_answer, latency) as server:
        folder = Path(tmp)
        data, config = write_inputs(folder, n, server.base_url)
        import_cli, cli_cpu, _ = timed([sys.executable, "-c", "import qatui.cli"], env)
        import_litellm, litellm_cpu, _ = timed([sys.executable, "-c", "import qatui.cli; from qatui.llm._lazy import "
                                                "get_litellm; get_litellm()"], env)
        before = server.count()
        first, first_cpu, done = timed(qatui(config, data, folder / "s1"), env)
        asked_first = server.count() - before
        summary = json.loads(done.stdout)
        before = server.count()
        reruns = [timed(qatui(config, data, folder / f"s2-{k}"), env)[:2] for k in range(RERUNS)]
        asked_rerun = server.count() - before
        other = folder / "other-items.jsonl"  # another dataset's first run, on a machine that has run this backbone
        other.write_text(data.read_text().replace("Question", "Query"))
        before = server.count()
        command = qatui(config, other, folder / "s3")
        kept, kept_cpu, done_kept = timed([command[0], "-X", "importtime", *command[1:]], env)  # what it imported
        asked_kept = server.count() - before
        litellm_imported = any(line.rsplit("|", 1)[-1].strip() == "litellm" for line in done_kept.stderr.splitlines())
        rerun, rerun_cpu = statistics.median(w for w, _ in reruns), statistics.median(c for _, c in reruns)
        print(f"{n} items x 2 orders = {calls} pairwise calls, server latency {latency * 1000:.0f} ms, "
              f"concurrency {CONCURRENCY}, {os.cpu_count()} CPUs; one `qatui run` process each")
        print(f"python -c 'import qatui.cli'           {import_cli:6.2f} s wall {cli_cpu:6.2f} s CPU")
        print(f"  ... and LiteLLM imported             {import_litellm:6.2f} s wall {litellm_cpu:6.2f} s CPU")
        print(f"first run                              {first:6.2f} s wall {first_cpu:6.2f} s CPU   {asked_first} "
              f"requests   ideal {ideal:.2f} s: {ideal / first:.2f} of ideal")
        print(f"fully cached rerun, new process        {rerun:6.2f} s wall {rerun_cpu:6.2f} s CPU   {asked_rerun} "
              f"requests   {rerun / first:.3f} of the first run's wall ({rerun_cpu / first_cpu:.3f} of its CPU)")
        print(f"  (the median of {RERUNS} reruns, each in a new process: "
              + ", ".join(f"{w:.2f} s wall {c:.2f} s CPU" for w, c in reruns) + ")")
        print(f"first run of another dataset         {kept:6.2f} s wall {kept_cpu:6.2f} s CPU   {asked_kept} "
              f"requests   ideal {ideal:.2f} s: {ideal / kept:.2f} of ideal (the backbone's facts kept; LiteLLM "
              f"{'imported' if litellm_imported else 'never imported'}: python -X importtime)")
        print(f"session {summary.get('session')}: status {summary.get('status')}")
        print(f"goal a whole `qatui run` >= 0.9 of the ideal at concurrency 32: {'met' if ideal / first >= 0.9 else 'missed'} "
              f"({ideal / first:.2f})")
        print(f"goal a fully cached rerun in a new process <= 0.1 of the first run's wall: "
              f"{'met' if rerun / first <= 0.1 else 'missed'} ({rerun / first:.2f}; CPU {rerun_cpu / first_cpu:.2f})")
        if profile:
            profile_dir = folder / "profiles"
            profile_dir.mkdir()
            timed(qatui(config, data, folder / "p1", profile_dir / "rerun.prof"), env)
            print("\nfully cached rerun under cProfile (cumulative seconds; the profiler slows every call):")
            print(stages(profile_dir / "rerun.prof"))
            timed([*qatui(config, data, folder / "p2", profile_dir / "first.prof"), "--no-cache"], env)
            print("\nfirst run (--no-cache) under cProfile:")
            print(stages(profile_dir / "first.prof"))


if __name__ == "__main__":
    main()
