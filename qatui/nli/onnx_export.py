"""A sequence-classification model exported to ONNX once, checked against torch, and kept in the user's cache.

The copy lives in `$XDG_CACHE_HOME/qatui/onnx/<digest>/model.onnx` (default ~/.cache), where
the digest hashes the model's config and weights, the graph's inputs, torch's and transformers'
versions and this module's export format: a changed model gets a new copy, never a stale one, and the package
and the repository are never written. The export (torch's TorchScript exporter, which needs
the `onnx` package, with dynamic batch and sequence axes, attention in eager form) runs under
a file lock, so two processes loading at once export once; it goes to a temporary folder that
is renamed into place only after ONNX Runtime's probabilities on probe pairs of other shapes
match torch's within `TOLERANCE`, so a half-written or wrong copy is never used. A model that
cannot be exported or disagrees is recorded beside the copies (`<digest>.refused`, its one-line
reason), so later processes go straight to torch instead of exporting again.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qatui.nli.runtime import Batch, OnnxForward, TorchForward, softmax

EXPORT_FORMAT = 1
"""Bumped when the export changes, so copies made the old way are not reused."""
OPSET = 17
TOLERANCE = 1e-4
"""The largest probability difference from torch an exported model may show on the probe pairs."""
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".index.json")
PROBE_PAIRS = [
    ("A man in a blue shirt is playing a guitar on a small stage.", "A person is making music."),
    ("Two dogs run through a snowy field.", "The animals are asleep indoors."),
    ("A woman reads.", "A woman in a red coat is reading a newspaper in a busy cafe while it rains outside."),
    ("Children are building a sandcastle at the beach on a sunny afternoon.", "Kids are outside."),
]
"""Export traces the first two (batch 2); the check runs all four and the third alone (other shapes)."""


class ExportRefused(Exception):
    """The model will not run on ONNX Runtime here; the message is the one-line reason."""


@dataclass(frozen=True)
class Export:
    """An exported model on disk; `seconds` is the export's time when this call made it, None when reused."""

    path: Path
    seconds: float | None = None


def cache_root() -> Path:
    """`$XDG_CACHE_HOME/qatui/onnx`, XDG defaulting to ~/.cache."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "qatui" / "onnx"


def model_digest(folder: Path, inputs: list[str]) -> str:
    """A hash of what the exported graph depends on: config, weights, inputs, torch, transformers, the export format."""
    import torch
    import transformers

    versions = [EXPORT_FORMAT, OPSET, torch.__version__, transformers.__version__, inputs]
    digest = hashlib.sha256(json.dumps(versions).encode())
    files = [folder / "config.json"] + sorted(p for p in folder.iterdir() if p.name.endswith(WEIGHT_SUFFIXES))
    for path in files:
        digest.update(path.name.encode() + b"\0")
        with path.open("rb") as f:
            digest.update(hashlib.file_digest(f, "sha256").digest())
    return digest.hexdigest()[:32]


def one_line(error: BaseException) -> str:
    """`Type: first line of the message`, at most 240 characters: a reason, never a traceback."""
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"[:240].rstrip(": ")


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock between processes (POSIX flock); without fcntl the atomic rename alone keeps copies whole."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: two processes may both export; one rename wins
        yield
        return
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def exported(folder: Path, batch_of: Callable[[list[tuple[str, str]]], Batch],
             load_model: Callable[[], Any]) -> Export:
    """The model's ONNX copy: reused when cached, else exported and checked now; `ExportRefused` says why not.

    `batch_of(pairs)` pads pairs as the scorer does; `load_model()` gives the float32 torch model
    (called only when an export is needed).
    """
    inputs = list(batch_of(PROBE_PAIRS[:1]))
    root = cache_root()
    try:
        digest = model_digest(folder, inputs)
        if (root / digest / "model.onnx").is_file():
            return Export(root / digest / "model.onnx")
        root.mkdir(parents=True, exist_ok=True)
        with _file_lock(root / f"{digest}.lock"):
            return _export_once(root, digest, folder, inputs, batch_of, load_model)
    except OSError as e:
        raise ExportRefused(f"the ONNX cache in {root} is unusable: {one_line(e)}") from None


def _export_once(root: Path, digest: str, folder: Path, inputs: list[str],
                 batch_of: Callable[[list[tuple[str, str]]], Batch], load_model: Callable[[], Any]) -> Export:
    """Under the lock: the copy another process made meanwhile, the recorded refusal, or a new checked export."""
    final, refused = root / digest, root / f"{digest}.refused"
    if (final / "model.onnx").is_file():
        return Export(final / "model.onnx")
    if refused.is_file():
        raise ExportRefused(f"{refused.read_text(encoding='utf-8').strip()} (recorded in {refused}; "
                            "delete it to try again)")
    try:
        import onnx  # noqa: F401 - torch's exporter writes through it
    except ImportError:
        raise ExportRefused("the onnx package is not installed (torch needs it to export the model)") from None
    started = time.perf_counter()
    model = load_model()  # a model torch cannot load is the caller's error, not a refusal to remember
    work = Path(tempfile.mkdtemp(prefix=f"{digest}.", suffix=".tmp", dir=root))
    try:
        try:
            drift = _export_and_check(model, inputs, batch_of, work / "model.onnx")
        except Exception as e:  # noqa: BLE001 - any exporter or runtime failure means: use torch
            reason = f"the export to ONNX failed: {one_line(e)}"
            refused.write_text(reason + "\n", encoding="utf-8")
            raise ExportRefused(reason) from None
        if not drift < TOLERANCE:
            reason = f"ONNX Runtime's probabilities differ from torch's by {drift:.1e} (more than {TOLERANCE:.0e})"
            refused.write_text(reason + "\n", encoding="utf-8")
            raise ExportRefused(reason)
        seconds = time.perf_counter() - started
        (work / "export.json").write_text(json.dumps(
            {"folder": str(folder), "inputs": inputs, "opset": OPSET, "largest_difference": drift,
             "seconds": round(seconds, 2)}), encoding="utf-8")
        if final.exists():
            shutil.rmtree(final)  # a folder whose model.onnx was deleted by hand
        os.replace(work, final)
    finally:
        shutil.rmtree(work, ignore_errors=True)  # gone already after a successful rename
    return Export(final / "model.onnx", seconds)


def _export_and_check(model: Any, inputs: list[str], batch_of: Callable[[list[tuple[str, str]]], Batch],
                      target: Path) -> float:
    """Export `model` to `target`; the largest probability difference from torch on probe batches of other shapes."""
    import torch

    class Logits(torch.nn.Module):
        """The model with positional inputs (as the exporter traces it) and the logits as its one output."""

        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
            return self.model(**dict(zip(inputs, tensors, strict=True))).logits

    sample = batch_of(PROBE_PAIRS[:2])
    axes = {name: {0: "batch", 1: "sequence"} for name in inputs} | {"logits": {0: "batch"}}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the exporter's deprecation and tracer warnings
        torch.onnx.export(Logits().eval(), tuple(torch.from_numpy(sample[n]) for n in inputs), str(target),
                          input_names=inputs, output_names=["logits"], dynamic_axes=axes, opset_version=OPSET,
                          dynamo=False)
    onnx_run, torch_run = OnnxForward(target, threads=1), TorchForward(model, torch.device("cpu"))
    drift = 0.0
    for pairs in (PROBE_PAIRS, PROBE_PAIRS[2:3]):
        batch = batch_of(pairs)
        drift = max(drift, float(abs(softmax(onnx_run(batch)) - softmax(torch_run(batch))).max()))
    return drift
