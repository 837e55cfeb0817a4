"""The NLI cross-encoder on ONNX Runtime: the same probabilities as torch, one export reused, torch when it cannot be had."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from qatui.config import parse_config
from qatui.errors import ConfigError
from qatui.judges.resources import Resources
from qatui.nli import NLIError, clear_cache, load_nli
from qatui.onnx import export as onnx_export

ROOT = Path(__file__).resolve().parents[1]
PAIRS = [  # SNLI-style: a caption, and a hypothesis that follows, may hold, or cannot
    ("A man in a blue shirt is playing a guitar on a small stage.", "A man is performing music."),
    ("A man in a blue shirt is playing a guitar on a small stage.", "The man is asleep at home."),
    ("A man in a blue shirt is playing a guitar on a small stage.", "The man is a famous singer."),
    ("Two young children in swimsuits are running along the beach while their parents watch.", "Kids are outside."),
    ("Two young children in swimsuits are running along the beach while their parents watch.",
     "The children are sitting in a classroom."),
    ("A woman with a red umbrella waits at a crowded bus stop in the rain.", "A woman is waiting for a bus."),
    ("A woman with a red umbrella waits at a crowded bus stop in the rain.", "It is sunny and dry."),
    ("An older man sits on a park bench feeding pigeons.", "A man is feeding birds."),
    ("An older man sits on a park bench feeding pigeons.", "The man is feeding his own pet parrot."),
    ("A dog jumps.", "A black and white dog is jumping over a fallen log in the forest to catch a red ball."),
    ("Several workers in orange vests are repairing a road at night under bright lights.", "People are working."),
    ("A chef is chopping vegetables in a busy restaurant kitchen.", "Nobody is cooking."),
]
LONG = (" ".join(f"Item {i} in the list is a grey stone of medium size." for i in range(60))
        + " The capital of France is Paris.", "Paris is the capital of France.")  # windows of ~500 tokens


def test_onnx_gives_the_probabilities_torch_gives() -> None:
    on_onnx, on_torch = load_nli("bundled", runtime="onnx"), load_nli("bundled", runtime="torch")
    assert (on_onnx.runtime, on_torch.runtime) == ("onnx", "torch")  # type: ignore[attr-defined]
    assert load_nli("bundled").runtime == "onnx"  # type: ignore[attr-defined]  # the default on a CPU
    pairs = [*PAIRS, LONG]
    onnx_probs, torch_probs = on_onnx.predict(pairs), on_torch.predict(pairs)
    drift = max(abs(a - b) for x, y in zip(onnx_probs, torch_probs, strict=True)
                for a, b in zip(x.as_tuple(), y.as_tuple(), strict=True))
    assert drift < 1e-4, drift
    assert [p.label for p in onnx_probs][:3] == ["entail", "contradict", "neutral"]
    assert onnx_probs[-1].entail > 0.5  # the supporting sentence sits past token 512: a window saw it
    assert [p.as_tuple() for p in on_onnx.predict(PAIRS[:5])] == [p.as_tuple() for p in onnx_probs[:5]]


def test_the_export_is_made_once_and_reused_by_the_next_load_and_process(own_cache: Path) -> None:
    first = load_nli("bundled", runtime="onnx").loaded  # type: ignore[attr-defined]
    assert first.export.seconds is not None and first.export.path.parent.parent == own_cache
    written = first.export.path.stat().st_mtime_ns
    record = json.loads((first.export.path.parent / "export.json").read_text())
    assert record["largest_difference"] < onnx_export.TOLERANCE
    clear_cache()
    second = load_nli("bundled", runtime="onnx").loaded  # type: ignore[attr-defined]
    assert second is not first and second.export.path == first.export.path
    assert second.export.seconds is None and second.export.path.stat().st_mtime_ns == written
    assert not hasattr(second.forward, "model")  # no torch model was loaded to run it
    code = ("from qatui.nli import load_nli; m = load_nli('bundled').loaded; "
            "print(m.runtime, m.export.seconds, m.export.path)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                         env={**os.environ, "XDG_CACHE_HOME": str(own_cache.parent.parent)})
    assert out.stdout.split() == ["onnx", "None", str(first.export.path)]
    assert out.stderr == ""  # the TUI's terminal stays clean
    assert sorted(p.name for p in own_cache.iterdir() if not p.name.endswith(".lock")) == [first.export.path.parent.name]


def test_two_processes_loading_at_once_export_once(own_cache: Path) -> None:
    code = "from qatui.nli import load_nli; m = load_nli('bundled').loaded; print(m.runtime, m.export.seconds is not None)"
    env = {**os.environ, "XDG_CACHE_HOME": str(own_cache.parent.parent)}
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=ROOT, env=env) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert sorted(out.split() for out, _ in outs) == [["onnx", "False"], ["onnx", "True"]]  # one exported, one reused
    assert [err for _, err in outs] == ["", ""]  # the exporter's warnings never reach the terminal


def test_without_onnxruntime_it_runs_on_torch_and_says_why(own_cache: Path, monkeypatch: pytest.MonkeyPatch,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # `import onnxruntime` raises ImportError
    with caplog.at_level(logging.INFO, logger="qatui.nli"):
        scorer = load_nli("bundled")
    assert scorer.runtime == "torch"  # type: ignore[attr-defined]
    assert scorer.loaded.runtime_note == "torch, not ONNX Runtime: onnxruntime is not installed"  # type: ignore[attr-defined]
    assert "onnxruntime is not installed" in caplog.text and "Traceback" not in caplog.text
    assert [p.label for p in scorer.predict(PAIRS[:3])] == ["entail", "contradict", "neutral"]
    assert not own_cache.exists()  # nothing was exported
    with pytest.raises(NLIError, match="cannot run on ONNX Runtime: onnxruntime is not installed"):
        load_nli("bundled", runtime="onnx")


def test_a_failing_export_falls_back_to_torch_and_is_not_tried_again(own_cache: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    def refuse(*args: object, **kwargs: object) -> None:
        raise RuntimeError("Exporting the operator 'aten::strange_op' to ONNX opset version 17 is not supported.\n"
                           "Please feel free to request support.")

    monkeypatch.setattr(torch.onnx, "export", refuse)
    scorer = load_nli("bundled")
    note = scorer.loaded.runtime_note  # type: ignore[attr-defined]
    assert scorer.runtime == "torch" and "\n" not in note  # type: ignore[attr-defined]
    assert note == ("torch, not ONNX Runtime: the export to ONNX failed: RuntimeError: Exporting the operator "
                    "'aten::strange_op' to ONNX opset version 17 is not supported.")
    (refused,) = own_cache.glob("*.refused")
    assert [p.suffix for p in own_cache.iterdir() if p.is_dir()] == []  # no half-made copy left behind
    assert [p.label for p in scorer.predict(PAIRS[:3])] == ["entail", "contradict", "neutral"]

    monkeypatch.undo()  # the exporter works again, but the refusal is remembered: no second attempt
    monkeypatch.setenv("XDG_CACHE_HOME", str(own_cache.parent.parent))
    clear_cache()
    again = load_nli("bundled").loaded  # type: ignore[attr-defined]
    assert again.runtime == "torch" and f"recorded in {refused}; delete it to try again" in again.runtime_note
    refused.unlink()
    clear_cache()
    assert load_nli("bundled").runtime == "onnx"  # type: ignore[attr-defined]


def test_an_export_that_disagrees_with_torch_is_refused(own_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(onnx_export, "TOLERANCE", 0.0)  # any float difference at all now counts as disagreeing
    scorer = load_nli("bundled")
    assert scorer.runtime == "torch"  # type: ignore[attr-defined]
    assert "ONNX Runtime's probabilities differ from torch's by" in scorer.loaded.runtime_note  # type: ignore[attr-defined]
    assert not any(p.is_dir() for p in own_cache.iterdir())


def test_a_model_torch_cannot_load_is_an_error_not_a_remembered_refusal(own_cache: Path, tmp_path: Path) -> None:
    import shutil

    from qatui.nli import BUNDLED_DIR

    folder = tmp_path / "no-weights"
    shutil.copytree(BUNDLED_DIR, folder, ignore=shutil.ignore_patterns("*.safetensors"))
    with pytest.raises(NLIError, match="could not be loaded"):
        load_nli(str(folder))
    assert list(own_cache.glob("*.refused")) == []


def test_the_runtime_comes_from_the_config() -> None:
    config = parse_config('[models]\nnli_runtime = "torch"\n', "test.toml")
    assert Resources(config).nli.runtime == "torch"  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="nli_runtime"):
        parse_config('[models]\nnli_runtime = "tensorrt"\n', "test.toml")
    with pytest.raises(NLIError, match="unknown NLI runtime 'tensorrt'"):
        load_nli("bundled", runtime="tensorrt")
