"""Which runtime runs a model's forward pass: `[models] *_runtime` = "auto", "onnx" or "torch".

"torch" (and "auto" off the CPU) never exports. Otherwise the checked ONNX copy (`export`) runs
on ONNX Runtime with torch's intra-op thread count; where that cannot be had, "auto" runs torch
and keeps the one-line reason as a note, and "onnx" raises `ExportRefused` for the caller to turn
into its own error. Errors of the model itself (torch cannot load it) pass through unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from qatui.onnx.export import Export, ExportRefused, Graph, exported, one_line
from qatui.onnx.runtime import OnnxForward, TorchForward


@dataclass(frozen=True)
class Picked:
    """What runs the model, the ONNX copy it runs when it is ONNX Runtime, and why torch when ONNX was refused."""

    forward: TorchForward | OnnxForward
    export: Export | None = None
    note: str | None = None


def pick_forward(runtime: str, device: str, graph: Callable[[], Graph],
                 torch_forward: Callable[[], TorchForward]) -> Picked:
    """The forward for `runtime` on `device` ("cpu", "cuda:0"); `graph()`, `torch_forward()` run only if needed."""
    on_cpu = device.split(":")[0] == "cpu"
    if runtime == "torch" or (runtime == "auto" and not on_cpu):
        return Picked(torch_forward())
    try:
        if not on_cpu:
            raise ExportRefused(f"ONNX Runtime runs on the CPU here, not on {device}")
        try:
            import onnxruntime  # noqa: F401
        except ImportError:
            raise ExportRefused("onnxruntime is not installed") from None
        export = exported(graph())
        try:
            import torch

            return Picked(OnnxForward(export.path, threads=torch.get_num_threads()), export)
        except Exception as e:  # noqa: BLE001 - a cached copy ONNX Runtime cannot open
            raise ExportRefused(f"ONNX Runtime cannot open the exported model: {one_line(e)}") from None
    except ExportRefused as refused:
        if runtime == "onnx":
            raise
        reason = str(refused)
    return Picked(torch_forward(), note=f"torch, not ONNX Runtime: {reason}")
