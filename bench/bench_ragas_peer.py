"""A peer, side by side: the ragas library's faithfulness and answer relevancy beside qatui's, on the same items.

Run: .venv/bin/python bench/bench_ragas_peer.py [N_ITEMS] [LATENCY_S]   (defaults 40 and 0.05)
Needs the ragas library in a virtualenv of its own, never qatui's: $RAGAS_PYTHON, default
/work/ragas-venv/bin/python, made by `make ragas-venv` (ragas 0.4.3; its LangChain pinned below
0.4, since ragas 0.4.3 imports a module langchain-community 0.4 dropped). Both sides talk to the
same loopback server (bench/loopback.py: chat completions answered from the prompt, each answer's
sentences as its statements, every statement supported; `/v1/embeddings` for ragas), on the same
N items (a question, a four-sentence context, a three-sentence answer), at 16 requests at a time,
each on a fresh cache, then again on that cache. qatui runs `ragas-faithfulness` and
`ragas-answer-relevance` through `start_run` and the engine (its embedder is the bundled MiniLM,
local, loaded before the timing); ragas runs `evaluate` with `faithfulness` and `answer_relevancy` in a
child process (its imports not timed).
Printed per side: wall and CPU seconds, chat and embedding requests per item, the cached rerun's
time and requests, and the ratios ragas / qatui (goal: qatui ahead on every figure).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_engine_http import KEY_ENV
from loopback import serve_in_child

from qatui.config import BackboneConfig, CacheConfig, Config, GeneralConfig, ModelsConfig
from qatui.data.model import Dataset, Item
from qatui.engine.jobs import finish_run, start_run
from qatui.store import SessionStore

HERE = Path(__file__).resolve().parent
RAGAS_PYTHON = os.environ.get("RAGAS_PYTHON", "/work/ragas-venv/bin/python")
WORKERS = 16
JUDGES = ["ragas-faithfulness", "ragas-answer-relevance"]


def make_items(n: int) -> list[dict[str, str]]:
    """N items: a question, a context of four sentences, an answer of three."""
    return [{"id": f"p{i}", "question": f"Where is the observatory of town {i}, and when was it built?",
             "context": (f"The observatory of town {i} stands on the northern hill. It was built in {1800 + i}. "
                         f"Its telescope was replaced in {1900 + i}. Visitors come every summer."),
             "answer": (f"The observatory of town {i} is on the northern hill. It was built in {1800 + i}. "
                        "It still welcomes visitors.")} for i in range(n)]


def qatui_side(items: list[dict[str, str]], base_url: str, cache: Path, store: SessionStore, served: Any) -> dict:
    """qatui's two judges over the items: seconds, CPU seconds, requests made during the run."""
    dataset = Dataset(name="bench-ragas-peer", path="bench://ragas-peer", format="jsonl",
                      content_hash=f"peer-{len(items)}",
                      items=[Item(id=i["id"], question=i["question"], context=[i["context"]],
                                  candidates={"answer": i["answer"]}) for i in items])
    fake = BackboneConfig(model="openai/fake-model", api_base=base_url, api_key_env=KEY_ENV, timeout_s=120.0,
                          max_concurrency=WORKERS)
    config = Config(general=GeneralConfig(concurrency=WORKERS), cache=CacheConfig(dir=str(cache)),
                    models=ModelsConfig(default_backbone="fake"), backbones={"fake": fake})
    job = start_run(store, dataset, JUDGES, config)
    job.engine.watch_tokens = False

    async def drive() -> None:
        async for _ in job.engine.run():
            pass

    before = served.counts()
    wall, cpu = time.perf_counter(), time.process_time()
    asyncio.run(drive())
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    after = served.counts()
    finish_run(job, "completed")
    if job.engine.counts.failed:
        raise SystemExit(f"qatui: {job.engine.counts.failed} failed: {job.engine.counts.failures[0].reason}")
    return {"wall": wall, "cpu": cpu, "chat": after[0] - before[0], "embeddings": after[1] - before[1]}


def ragas_side(items_path: Path, base_url: str, cache: Path, served: Any) -> dict:
    """The ragas library's `evaluate` in its own interpreter: its figures and the requests it made."""
    before = served.counts()
    done = subprocess.run([RAGAS_PYTHON, str(HERE / "ragas_peer_child.py"), base_url, str(items_path), str(cache),
                           str(WORKERS)], capture_output=True, text=True, timeout=900)
    after = served.counts()
    if done.returncode:
        raise SystemExit(f"ragas failed (exit {done.returncode}): {done.stderr.strip()[-1500:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return {**figures, "chat": after[0] - before[0], "embeddings": after[1] - before[1]}


def row(label: str, f: dict, n: int) -> str:
    """One side's figures."""
    return (f"{label:<26} {f['wall']:7.2f} s wall {f['cpu']:6.2f} s CPU  {f['chat'] / n:5.2f} chat + "
            f"{f['embeddings'] / n:5.2f} embedding requests/item")


def main(n: int, latency_s: float) -> None:
    """Both sides, first run then cached rerun, and the ratios."""
    if not Path(RAGAS_PYTHON).is_file():
        print(f"ragas is not installed: no {RAGAS_PYTHON} (make ragas-venv); nothing measured")
        return
    os.environ[KEY_ENV] = "sk-bench-loopback"
    from qatui.embed import load_embedder

    load_embedder(Config().models.embedder).embed(["warm-up"])  # the model's load (seconds, once) out of the timing
    items = make_items(n)
    print(f"{n} items, server latency {latency_s * 1000:.0f} ms, {WORKERS} requests at a time")
    with serve_in_child(latency_s=latency_s) as served, tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        items_path = root / "items.json"
        items_path.write_text(json.dumps(items), encoding="utf-8")
        store = SessionStore(root / "sessions")
        ours = [qatui_side(items, served.base_url, root / "qatui-cache", store, served) for _ in range(2)]
        theirs = [ragas_side(items_path, served.base_url, root / "ragas-cache", served) for _ in range(2)]
    for label, (first, again) in (("qatui", ours), ("ragas " + ragas_version(), theirs)):
        print(row(f"{label} first run", first, n))
        print(row(f"{label} cached rerun", again, n))
    print(f"ragas scores: faithfulness {theirs[0]['faithfulness']:.3f}, answer relevancy "
          f"{theirs[0]['answer_relevancy']:.3f}, {theirs[0]['missing']} missing")
    figures = {"first run wall": ("wall", 0), "first run CPU": ("cpu", 0), "cached rerun wall": ("wall", 1),
               "cached rerun CPU": ("cpu", 1)}
    ratios = {name: theirs[k][key] / max(ours[k][key], 1e-9) for name, (key, k) in figures.items()}
    ratios["chat requests/item"] = theirs[0]["chat"] / max(ours[0]["chat"], 1)
    ratios["all requests/item"] = (theirs[0]["chat"] + theirs[0]["embeddings"]) / max(
        ours[0]["chat"] + ours[0]["embeddings"], 1)
    rerun = {"qatui": ours[1]["chat"] + ours[1]["embeddings"], "ragas": theirs[1]["chat"] + theirs[1]["embeddings"]}
    print("ragas / qatui: " + ", ".join(f"{name} {value:.2f}x" for name, value in ratios.items())
          + f"; requests of the cached rerun: qatui {rerun['qatui']}, ragas {rerun['ragas']}")
    ahead = all(v >= 1 for v in ratios.values()) and rerun["qatui"] <= rerun["ragas"]
    print(f"goal qatui ahead of ragas on every figure: {'met' if ahead else 'missed'} "
          f"(lowest ratio {min(ratios.values()):.2f}x)")


def ragas_version() -> str:
    """The ragas library's version in its own virtualenv."""
    done = subprocess.run([RAGAS_PYTHON, "-c", "from importlib.metadata import version; print(version('ragas'))"],
                          capture_output=True, text=True)
    return done.stdout.strip() or "?"


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 40, float(sys.argv[2]) if len(sys.argv) > 2 else 0.05)
