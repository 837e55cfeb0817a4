"""What runs a transformers model's forward pass: torch, or ONNX Runtime over an exported copy of the model.

Both take one padded batch (numpy arrays named as the tokenizer names them) and give the one
output the caller wants (a cross-encoder's logits, an encoder's last hidden state) as a float32
numpy array, so the code around them is the same for either. ONNX Runtime runs the same float32
graph faster than torch on a CPU (bench/bench_nli.py, bench/bench_embed.py) with the same
results within 1e-5; `export` makes and checks the copy, `pick` chooses between the two.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

RUNTIMES = ("auto", "onnx", "torch")
"""`[models] nli_runtime` / `embedder_runtime`: "auto" is ONNX Runtime on a CPU where the export works
and agrees, else torch."""

Batch = dict[str, np.ndarray]


class TorchForward:
    """The transformers model itself, float32, in inference mode on its device; `output` names what it gives."""

    name = "torch"

    def __init__(self, model: Any, device: Any, output: str) -> None:
        self.model = model
        self.device = device
        self.output = output

    def __call__(self, batch: Batch) -> np.ndarray:
        """The model's `output` (e.g. "logits", "last_hidden_state") for one padded batch."""
        import torch

        with torch.inference_mode():
            inputs = {k: torch.from_numpy(v).to(self.device) for k, v in batch.items()}
            return getattr(self.model(**inputs), self.output).float().cpu().numpy()


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
        """The graph's one output for one padded batch; a graph input the batch lacks is a KeyError naming it."""
        feed = {name: np.ascontiguousarray(batch[name], dtype=np.int64) for name in self.inputs}
        return np.asarray(self.session.run([self.output], feed)[0], dtype=np.float32)
