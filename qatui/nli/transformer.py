"""An NLI scorer backed by a transformers sequence-classification model (a cross-encoder).

The pair is encoded as the model was trained: `[CLS] premise [SEP] hypothesis [SEP]` (or the
tokenizer's own pair template). A premise too long to fit beside the hypothesis in
`max_length` (512 tokens, or less when the model's positions run out) is split into windows of
whole sentences, and the pair scores as its best window (`qatui.nli.windows`): nothing the
premise says is cut away unseen. Only a hypothesis that alone overflows is cut
('longest_first' for that one pair).

Pairs are tokenised once, sorted by length and run `batch_size` at a time with padding to the
longest of the batch, so a batch wastes little on padding; results come back in input order.
The model runs in float32 (fp16 weights are cast up: CPUs are slow or inexact in half
precision) under a lock: judges call `predict` from worker threads, and two threads must not
drive one fast tokenizer at once ("Already borrowed"); on a small machine one forward at a
time is also the fastest. On a CPU the forward pass runs on ONNX Runtime over a copy exported
once and checked against torch (`qatui.onnx`): the same probabilities within 1e-5, about twice
as fast; where that cannot be had, torch runs it and `runtime_note` says why.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from qatui import hub
from qatui.nli.base import NLIError, NLIProbs, NLIScorer, check_pairs
from qatui.nli.labels import LabelMap, label_map
from qatui.nli.windows import premise_windows
from qatui.onnx.export import Export, ExportRefused, Graph
from qatui.onnx.pick import pick_forward
from qatui.onnx.runtime import RUNTIMES, Batch, OnnxForward, TorchForward

if TYPE_CHECKING:
    from qatui.store.model_outputs import PutOffCheck

log = logging.getLogger(__name__)

MAX_LENGTH = 512
DEFAULT_BATCH_SIZE = 32
PROBE_PAIRS = [
    ("A man in a blue shirt is playing a guitar on a small stage.", "A person is making music."),
    ("Two dogs run through a snowy field.", "The animals are asleep indoors."),
    ("A woman reads.", "A woman in a red coat is reading a newspaper in a busy cafe while it rains outside."),
    ("Children are building a sandcastle at the beach on a sunny afternoon.", "Kids are outside."),
]
"""The ONNX export traces the first two (batch 2); its check runs all four and the third alone (other shapes)."""


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax in float64 (one formula for both runtimes)."""
    shifted = logits.astype(np.float64) - logits.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


class LoadedModel:
    """One model, its tokenizer and label map in memory, and what runs it; shared by the scorers of one spec.

    `runtime` (`[models] nli_runtime`): "auto" runs ONNX Runtime on a CPU when the model exports
    and agrees with torch (`qatui.onnx`), else torch, recording why in `runtime_note`; "onnx"
    insists (an `NLIError` with the reason); "torch" never tries ONNX.
    """

    def __init__(self, folder: Path, spec: str, *, device: str | None = None, runtime: str = "auto") -> None:
        import torch

        hub.import_transformers()
        from transformers import AutoConfig, AutoTokenizer

        if runtime not in RUNTIMES:
            raise NLIError(f"unknown NLI runtime {runtime!r}: use one of {', '.join(RUNTIMES)}")
        self.spec = spec
        self.folder = folder
        self.reading_checked = False
        """Whether its label names read two obvious pairs right (`TransformersNLI.check_labels_read_right`)."""
        self.reading_check: PutOffCheck | None = None
        """That check as a run's put-off check (`TransformersNLI.put_off_checks`): made before the first pair the
        model-output store cannot answer; one that fails stops the run (its items pending), not each item."""
        with hub.quiet_loading():
            try:
                config = AutoConfig.from_pretrained(folder, local_files_only=True)
            except Exception as e:  # noqa: BLE001 - a folder that is not a transformers model
                raise NLIError(f"NLI model {spec!r}: {folder} has no readable transformers config.json ({e})") from None
            self.labels: LabelMap = label_map(config.id2label or {}, spec)  # before the weights: fail fast
            try:
                self.tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
            except Exception as e:  # noqa: BLE001 - missing sentencepiece, a broken tokenizer file
                raise NLIError(f"NLI model {spec!r} could not be loaded from {folder}: {type(e).__name__}: {e}") from None
        if config.num_labels != self.labels.num_labels:
            raise NLIError(f"NLI model {spec!r}: {config.num_labels} outputs but config.id2label names "
                           f"{self.labels.num_labels}")
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        limits = [MAX_LENGTH]
        model_max = getattr(self.tokenizer, "model_max_length", None)
        if isinstance(model_max, int) and 0 < model_max < 100_000:
            limits.append(model_max)
        positions = getattr(config, "max_position_embeddings", None)
        if isinstance(positions, int) and positions > 16 and getattr(config, "model_type", "") not in (
            "roberta", "xlm-roberta", "camembert", "longformer"):  # RoBERTa's count includes 2 offset slots
            limits.append(positions)
        self.max_length = min(limits)
        self.lock = threading.Lock()
        self.forward_calls = 0
        self.runtime_note: str | None = None
        self.export: Export | None = None
        self.forward: TorchForward | OnnxForward = self._runtime(runtime)

    @property
    def runtime(self) -> str:
        """"onnx" or "torch": what runs the forward pass."""
        return self.forward.name

    def _runtime(self, runtime: str) -> TorchForward | OnnxForward:
        """ONNX Runtime when asked for (or "auto" on a CPU) and the export works, else torch (`qatui.onnx.pick`)."""
        try:
            picked = pick_forward(runtime, str(self.device), self._graph,
                                  lambda: TorchForward(self._torch_model(), self.device, "logits"))
        except ExportRefused as refused:
            raise NLIError(f"NLI model {self.spec!r} cannot run on ONNX Runtime: {refused}; "
                           "set [models] nli_runtime = \"auto\" or \"torch\"") from None
        self.export, self.runtime_note = picked.export, picked.note
        if picked.note:
            log.info("NLI model %r runs on %s", self.spec, picked.note)
        return picked.forward

    def _graph(self) -> Graph:
        """The logits graph to export, traced and checked on `PROBE_PAIRS` padded as `probabilities` pads."""
        batch = lambda pairs: self.pad(self.encode(pairs, self.max_length))  # noqa: E731
        return Graph(folder=self.folder, output="logits", sample=batch(PROBE_PAIRS[:2]),
                     probes=(batch(PROBE_PAIRS), batch(PROBE_PAIRS[2:3])),
                     load_model=lambda: self._torch_model(attention="eager"),
                     outcome=lambda logits, _: softmax(logits), compared="probabilities")

    def _torch_model(self, attention: str | None = None) -> Any:
        """The float32 torch model in eval mode (fp16 weights, as bundled, are cast up: CPUs are slow in fp16)."""
        from transformers import AutoModelForSequenceClassification

        extra = {"attn_implementation": attention} if attention else {}
        with hub.quiet_loading():
            try:
                model = AutoModelForSequenceClassification.from_pretrained(self.folder, local_files_only=True, **extra)
            except Exception as e:  # noqa: BLE001 - missing weights, unknown architecture
                raise NLIError(f"NLI model {self.spec!r} could not be loaded from {self.folder}: "
                               f"{type(e).__name__}: {e}") from None
        device = self.device if attention is None else "cpu"  # the export runs on the CPU
        return model.float().to(device).eval()

    def encode(self, pairs: list[tuple[str, str]], max_length: int) -> list[dict[str, list[int]]]:
        """Token ids (and type ids) per pair, unpadded; premise cut first, hypothesis kept."""
        tok = self.tokenizer
        premises = [p for p, _ in pairs]
        hypotheses = [h for _, h in pairs]
        try:
            enc = tok(premises, hypotheses, truncation="only_first", max_length=max_length, padding=False)
            return [{k: enc[k][i] for k in enc.keys()} for i in range(len(pairs))]
        except Exception:  # noqa: BLE001 - some hypothesis alone is longer than max_length
            rows = []
            for premise, hypothesis in pairs:
                try:
                    enc = tok(premise, hypothesis, truncation="only_first", max_length=max_length)
                except Exception:  # noqa: BLE001
                    enc = tok(premise, hypothesis, truncation="longest_first", max_length=max_length)
                rows.append({k: list(v) for k, v in enc.items()})
            return rows

    def pad(self, rows: list[dict[str, list[int]]]) -> Batch:
        """Pad one batch to its longest row, as the tokenizer pads (side, pad id): int64 arrays by input name."""
        width = max(len(r["input_ids"]) for r in rows)
        pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        left = getattr(self.tokenizer, "padding_side", "right") == "left"

        def place(values: list[list[int]], fill: int) -> np.ndarray:
            out = np.full((len(values), width), fill, dtype=np.int64)
            for i, row in enumerate(values):
                out[i, slice(width - len(row), width) if left else slice(0, len(row))] = row
            return out

        batch = {key: place([r[key] for r in rows], pad_id if key == "input_ids" else 0)
                 for key in rows[0] if key in ("input_ids", "attention_mask", "token_type_ids")}
        if "attention_mask" not in batch:
            batch["attention_mask"] = place([[1] * len(r["input_ids"]) for r in rows], 0)
        return batch

    def probabilities(self, pairs: list[tuple[str, str]], batch_size: int, max_length: int) -> list[list[float]]:
        """Softmax over the model's outputs, one row per pair, in input order."""
        with self.lock:
            rows = self.encode(pairs, max_length)
            order = sorted(range(len(rows)), key=lambda i: len(rows[i]["input_ids"]), reverse=True)
            out: list[list[float] | None] = [None] * len(rows)
            for start in range(0, len(order), batch_size):
                chunk = order[start:start + batch_size]
                probs = softmax(self.forward(self.pad([rows[i] for i in chunk])))
                self.forward_calls += 1
                for i, row in zip(chunk, probs.tolist(), strict=True):
                    out[i] = row
        return out  # type: ignore[return-value]


class TransformersNLI(NLIScorer):
    """`predict` over a `LoadedModel`: probabilities summed into entail / neutral / contradict."""

    def __init__(self, loaded: LoadedModel, *, name: str, batch_size: int = DEFAULT_BATCH_SIZE,
                 max_length: int = MAX_LENGTH) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self.loaded = loaded
        self.name = name
        self.batch_size = batch_size
        self.max_length = min(max_length, loaded.max_length)

    @property
    def labels(self) -> LabelMap:
        """The model's label mapping onto entail / neutral / contradict."""
        return self.loaded.labels

    @property
    def runtime(self) -> str:
        """"onnx" or "torch": what runs the model (`loaded.runtime_note` says why torch, when it fell back)."""
        return self.loaded.runtime

    def identity(self) -> str:
        """The model folder's files and the length windows are cut at: what the probabilities depend on
        (the key of the model-output store, `qatui.nli.stored`)."""
        from qatui.store.model_outputs import files_identity

        return files_identity(self.loaded.folder, "nli", self.name, str(self.max_length))

    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[NLIProbs]:
        """Batched probabilities of every (premise, hypothesis) pair; the model's label names are checked before
        its first pair (`check_labels_read_right`)."""
        pairs = check_pairs(pairs)
        if not pairs:
            return []
        self.check_labels_read_right()
        return self._predict(pairs)

    def put_off_checks(self, put_off: Callable[[Callable[[], str]], PutOffCheck]) -> None:
        """The label check (`check_labels_read_right`) as a run's put-off check, once per model loaded."""
        if self.loaded.reading_check is None and not self.loaded.reading_checked:
            self.loaded.reading_check = put_off(self._reading_line)

    async def apredict(self, pairs: Sequence[tuple[str, str]]) -> list[NLIProbs]:
        """`predict` in a worker thread, after the put-off label check where a run wired one (`put_off_checks`):
        a model that misreads its labels stops the run there, before any item is judged with it."""
        check = self.loaded.reading_check
        if check is not None and not self.loaded.reading_checked and pairs:
            await check.before_call()
        return await super().apredict(pairs)

    def _reading_line(self) -> str:
        """The label check, made (blocking: it runs the model); the line a passed check shows."""
        self.check_labels_read_right()
        return f"NLI model {self.loaded.spec!r}: its label names read two obvious pairs right"

    def check_labels_read_right(self) -> None:
        """Refuse (`NLIError`) a model whose config's label names misread two obvious pairs (`labels.check_reading`),
        once per model loaded, before it scores anything: a folder whose id2label swaps entailment and contradiction
        judged a whole run upside down, with no sign. Made at the first pair, not at load, so a rerun the
        model-output store answers runs the model not at all; a served model is checked when it is built."""
        from qatui.nli.labels import PROBE_PAIRS, check_reading

        if self.loaded.reading_checked:
            return
        entailed, contradicted = self._predict(list(PROBE_PAIRS))
        check_reading(f"NLI model {self.loaded.spec!r}", entailed, contradicted, self.labels, self.labels.describe())
        self.loaded.reading_checked = True

    def _predict(self, pairs: list[tuple[str, str]]) -> list[NLIProbs]:
        """`predict` without the label check."""
        labels = self.labels
        expanded: list[tuple[str, str]] = []
        owner: list[int] = []
        with self.loaded.lock:  # the tokenizer counts the windows: one thread at a time
            for index, (premise, hypothesis) in enumerate(pairs):
                for window in premise_windows(premise, hypothesis, self.max_length, self._count, self._cut):
                    expanded.append((window, hypothesis))
                    owner.append(index)
        best: list[NLIProbs | None] = [None] * len(pairs)
        for index, row in zip(owner, self.loaded.probabilities(expanded, self.batch_size, self.max_length),
                              strict=True):
            entail = sum(row[i] for i in labels.entail)
            contradict = sum(row[i] for i in labels.contradict)
            neutral = max(0.0, 1.0 - entail - contradict)  # = sum of the neutral outputs, exactly 1 in total
            probs = NLIProbs(entail=entail, neutral=neutral, contradict=contradict)
            kept = best[index]
            if kept is None or probs.entail - probs.contradict > kept.entail - kept.contradict:
                best[index] = probs  # the premise's best window decides (`qatui.nli.windows`)
        return [probs for probs in best if probs is not None]

    def _count(self, text: str) -> int:
        """Tokens of `text` alone, without special tokens."""
        return len(self.loaded.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _cut(self, text: str, size: int) -> list[str]:
        """`text` in pieces of at most `size` tokens, decoded back to text."""
        ids = self.loaded.tokenizer(text, add_special_tokens=False)["input_ids"]
        return [self.loaded.tokenizer.decode(ids[i:i + size]) for i in range(0, len(ids), size)]
