"""A transformers model exported to ONNX once, checked against torch, and kept in the user's cache.

The copy lives in `onnx/<digest>/model.onnx` of the user's cache folder (`qatui.paths`: `$XDG_CACHE_HOME/qatui`
on Linux, default ~/.cache/qatui), where
the digest hashes the model's config and weights, the graph's inputs and output, torch's and
transformers' versions and this module's export format: a changed model gets a new copy, never a
stale one, and the package and the repository are never written. The export (torch's TorchScript
exporter, which needs the `onnx` package, with dynamic batch and sequence axes, attention in eager
form) runs under a file lock, so two processes loading at once export once; it goes to a temporary
folder that is renamed into place only after what the caller makes of ONNX Runtime's output on
probe batches of other shapes (a cross-encoder's probabilities, an encoder's pooled unit vectors)
matches what it makes of torch's within `TOLERANCE`, so a half-written or wrong copy is never used.
A model that cannot be exported or disagrees is recorded beside the copies (`<digest>.refused`,
its one-line reason), so later processes go straight to torch instead of exporting again.
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

import numpy as np

from qatui.onnx.runtime import Batch, OnnxForward, TorchForward
from qatui.paths import onnx_cache_dir

EXPORT_FORMAT = 2
"""Bumped when the export changes, so copies made the old way are not reused (2: the output is in the digest)."""
OPSET = 17
TOLERANCE = 1e-4
"""The largest difference from torch's (probabilities, unit-vector components) an exported model may show."""
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".index.json")


@dataclass(frozen=True)
class Graph:
    """A model to export and how to check it: the caller's tokenised batches and its reading of the output."""

    folder: Path
    """The transformers model folder (config.json and weights): what the digest hashes."""
    output: str
    """The model output the graph returns: "logits", "last_hidden_state"."""
    sample: Batch
    """The batch the exporter traces; its keys are the graph's inputs."""
    probes: tuple[Batch, ...]
    """Batches of other shapes than `sample`, run by both runtimes before the copy is kept."""
    load_model: Callable[[], Any]
    """The float32 torch model on the CPU, attention in eager form (called only when an export is needed)."""
    outcome: Callable[[np.ndarray, Batch], np.ndarray]
    """What the caller makes of an output and its batch (softmax, pooled unit vectors): what is compared."""
    compared: str
    """The outcome's name in a refusal: "probabilities", "sentence vectors"."""

    @property
    def inputs(self) -> list[str]:
        """The graph's input names, in the tokenizer's order."""
        return list(self.sample)


class ExportRefused(Exception):
    """The model will not run on ONNX Runtime here; the message is the one-line reason."""


@dataclass(frozen=True)
class Export:
    """An exported model on disk; `seconds` is the export's time when this call made it, None when reused."""

    path: Path
    seconds: float | None = None


def cache_root() -> Path:
    """The folder of every export (`qatui.paths.onnx_cache_dir`: `$XDG_CACHE_HOME/qatui/onnx` on Linux)."""
    return onnx_cache_dir()


def model_digest(folder: Path, inputs: list[str], output: str) -> str:
    """A hash of what the graph depends on: config, weights, inputs, output, torch, transformers, the format."""
    import torch
    import transformers

    versions = [EXPORT_FORMAT, OPSET, torch.__version__, transformers.__version__, inputs, output]
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


def exported(graph: Graph) -> Export:
    """The model's ONNX copy: reused when cached, else exported and checked now; `ExportRefused` says why not."""
    root = cache_root()
    try:
        digest = model_digest(graph.folder, graph.inputs, graph.output)
        if (root / digest / "model.onnx").is_file():
            return Export(root / digest / "model.onnx")
        root.mkdir(parents=True, exist_ok=True)
        with _file_lock(root / f"{digest}.lock"):
            return _export_once(root, digest, graph)
    except OSError as e:
        raise ExportRefused(f"the ONNX cache in {root} is unusable: {one_line(e)}") from None


def _export_once(root: Path, digest: str, graph: Graph) -> Export:
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
    model = graph.load_model()  # a model torch cannot load is the caller's error, not a refusal to remember
    work = Path(tempfile.mkdtemp(prefix=f"{digest}.", suffix=".tmp", dir=root))
    try:
        try:
            drift = _export_and_check(model, graph, work / "model.onnx")
        except Exception as e:  # noqa: BLE001 - any exporter or runtime failure means: use torch
            reason = f"the export to ONNX failed: {one_line(e)}"
            refused.write_text(reason + "\n", encoding="utf-8")
            raise ExportRefused(reason) from None
        if not drift < TOLERANCE:
            reason = (f"ONNX Runtime's {graph.compared} differ from torch's by {drift:.1e} "
                      f"(more than {TOLERANCE:.0e})")
            refused.write_text(reason + "\n", encoding="utf-8")
            raise ExportRefused(reason)
        seconds = time.perf_counter() - started
        (work / "export.json").write_text(json.dumps(
            {"folder": str(graph.folder), "inputs": graph.inputs, "output": graph.output, "opset": OPSET,
             "largest_difference": drift, "seconds": round(seconds, 2)}), encoding="utf-8")
        if final.exists():
            shutil.rmtree(final)  # a folder whose model.onnx was deleted by hand
        os.replace(work, final)
    finally:
        shutil.rmtree(work, ignore_errors=True)  # gone already after a successful rename
    prune_stale(root, digest, graph.folder, graph.output)
    return Export(final / "model.onnx", seconds)


def prune_stale(root: Path, kept: str, folder: Path, output: str) -> list[str]:
    """Delete the copies an earlier torch, transformers or export format made of the same model folder and
    output (their `export.json` says so), now that `kept` replaces them; the digests deleted.

    Each copy is about 90 MB, and an upgrade would otherwise leave one behind every time. A copy of
    another folder (another install) is left alone; one that cannot be read or deleted is skipped.
    """
    pruned = []
    for copy in root.iterdir():
        if copy.name == kept or not copy.is_dir() or copy.name.endswith(".tmp"):
            continue
        try:
            record = json.loads((copy / "export.json").read_text(encoding="utf-8"))
            same = record.get("folder") == str(folder) and record.get("output", "logits") == output
        except (OSError, ValueError, AttributeError):
            continue
        if same:
            shutil.rmtree(copy, ignore_errors=True)
            (root / f"{copy.name}.lock").unlink(missing_ok=True)
            pruned.append(copy.name)
    return pruned


def _export_and_check(model: Any, graph: Graph, target: Path) -> float:
    """Export `model` to `target`; the largest difference of the outcomes from torch's on the probe batches.

    The output's axes before its last are dynamic: (batch) for logits (B, C), (batch, sequence)
    for hidden states (B, T, H).
    """
    import torch

    inputs, output = graph.inputs, graph.output

    class Output(torch.nn.Module):
        """The model with positional inputs (as the exporter traces it) and `output` as its one output."""

        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
            return getattr(self.model(**dict(zip(inputs, tensors, strict=True))), output)

    module = Output().eval()
    sample = tuple(torch.from_numpy(graph.sample[n]) for n in inputs)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the exporter's deprecation and tracer warnings
        rank = module(*sample).dim()
        axes = {name: {0: "batch", 1: "sequence"} for name in inputs}
        axes[output] = dict(enumerate(("batch", "sequence")[:rank - 1]))
        torch.onnx.export(module, sample, str(target), input_names=inputs, output_names=[output], dynamic_axes=axes,
                          opset_version=OPSET, dynamo=False)
    onnx_run, torch_run = OnnxForward(target, threads=1), TorchForward(model, torch.device("cpu"), output)
    drift = 0.0
    for batch in graph.probes:
        ours, theirs = graph.outcome(onnx_run(batch), batch), graph.outcome(torch_run(batch), batch)
        drift = max(drift, float(np.abs(ours.astype(np.float64) - theirs.astype(np.float64)).max()))
    return drift
