"""A realistic saved MinosEval session of N items, written through the engine's own session API.

Used by bench_session_scale.py (and importable by a profiler): a dataset of N questions with six
candidates and a gold ranking, and a session whose every item has MinosEval's artifacts (route,
five key points, 30 entailment scores, ranking, judgement) and two backbone call records, closed by
`finish_run` as a real run is.
"""

from __future__ import annotations

import json
from pathlib import Path

from qatui.config import load_config
from qatui.data.loaders import load_dataset
from qatui.engine.jobs import finish_run, start_run
from qatui.events import (
    EntailmentScored,
    Judgement,
    KeyPointsExtracted,
    LLMCallFinished,
    QuestionClassified,
    RankingProduced,
    Verdict,
)
from qatui.judges.resources import Resources
from qatui.store.session import SessionStore

CANDIDATES = 6
KEY_POINTS = 5
SENTENCE = "The answer explains the main mechanism and gives one concrete example of it. "


def write_dataset(path: Path, n: int) -> Path:
    """A qatui-JSONL dataset of `n` items, six ~60-word candidates each, gold ranking by candidate index."""
    with path.open("w") as out:
        for i in range(n):
            candidates = {f"r{k}": f"Answer {k} to question {i}. " + SENTENCE * (3 + k % 3) for k in range(CANDIDATES)}
            out.write(json.dumps({
                "id": f"q{i}",
                "question": f"Question number {i}: how does the process work, and why does it matter?",
                "references": [SENTENCE * 4],
                "candidates": candidates,
                "gold": {"kind": "ranking", "tiers": [[f"r{k}"] for k in range(CANDIDATES)]},
            }) + "\n")
    return path


def minos_result(item_id: str, i: int) -> tuple[Verdict, list[LLMCallFinished]]:
    """One item's MinosEval verdict with its artifacts (stamped, label space, as the engine stores them) and calls."""
    stamp = {"item_id": item_id, "judge": "minos"}
    labels = [f"Response {k + 1}" for k in range(CANDIDATES)]
    ids = [f"r{k}" for k in range(CANDIDATES)]
    points = [f"Key point {p} of item {i}: the mechanism and its example." for p in range(KEY_POINTS)]
    scores = {label: k / CANDIDATES for k, label in enumerate(labels)}
    artifacts = [
        QuestionClassified(**stamp, question_type="non-factoid", rationale="asks for an explanation"),
        KeyPointsExtracted(**stamp, points=points),
        *[EntailmentScored(**stamp, response=label, key_point=point, p_entail=0.6, p_neutral=0.3, p_contradict=0.1)
          for label in labels for point in points],
        RankingProduced(**stamp, ranking=labels[::-1], scores=scores),
        Judgement(**stamp, scores=scores, ranking=labels[::-1]),
    ]
    calls = [LLMCallFinished(**stamp, model="local/smollm2", purpose=purpose, prompt_hash=f"{i:08x}{purpose}",
                             prompt_tokens=700, completion_tokens=90, latency_s=1.2)
             for purpose in ("classify", "key_points")]
    rotated = ids[i % CANDIDATES:] + ids[:i % CANDIDATES]
    verdict = Verdict(**stamp, scores={c: k / CANDIDATES for k, c in enumerate(rotated)}, ranking=rotated,
                      order=ids, artifacts=artifacts)
    return verdict, calls


def write_session(root: Path, dataset_path: Path, batch: int = 20) -> str:
    """Judge every item of `dataset_path` into a new session under `root` (scripted results); its id."""
    dataset = load_dataset(str(dataset_path), "jsonl")
    config = load_config(None)
    job = start_run(SessionStore(root), dataset, ["minos"], config,
                    resources=Resources(config, backbone_name="local/smollm2"))
    for i, item in enumerate(dataset.items, 1):
        job.session.record_verdict(*minos_result(item.id, i))
        if i % batch == 0:
            job.session.flush()
    finish_run(job, "completed")
    job.session.close()
    return job.session.id
