"""What runs a cross-encoder's forward pass: torch, or ONNX Runtime over an exported copy of the model.

Both take one padded batch (numpy arrays named as the tokenizer names them) and give its
logits as float32 numpy rows, so the scorer around them is the same for either. ONNX Runtime
runs the same float32 graph 1.7-2.5x faster than torch on a CPU (bench/bench_nli.py), with
probabilities within 1e-5 of torch's; `onnx_export` makes and checks the copy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

RUNTIMES = ("auto", "onnx", "torch")
"""`[models] nli_runtime`: "auto" is ONNX Runtime on a CPU where the export works and agrees, else torch."""

Batch = dict[str, np.ndarray]


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax in float64 (one formula for both runtimes)."""
    shifted = logits.astype(np.float64) - logits.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


class TorchForward:
    """The transformers model itself, float32, in inference mode on its device."""

    name = "torch"

    def __init__(self, model: Any, device: Any) -> None:
        self.model = model
        self.device = device

    def __call__(self, batch: Batch) -> np.ndarray:
        """Logits of one padded batch."""
        import torch

        with torch.inference_mode():
            inputs = {k: torch.from_numpy(v).to(self.device) for k, v in batch.items()}
            return self.model(**inputs).logits.float().cpu().numpy()


class OnnxForward:
    """An ONNX Runtime session on the CPU over an exported model, fed the inputs its graph declares."""

    name = "onnx"

    def __init__(self, path: Path, threads: int) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = max(1, threads)
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3  # errors only: warnings on stderr would tear the TUI
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # idle threads sleep
        self.path = path
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.output = self.session.get_outputs()[0].name

    def __call__(self, batch: Batch) -> np.ndarray:
        """Logits of one padded batch; a graph input the batch lacks is a KeyError naming it."""
        feed = {name: np.ascontiguousarray(batch[name], dtype=np.int64) for name in self.inputs}
        return np.asarray(self.session.run([self.output], feed)[0], dtype=np.float32)
