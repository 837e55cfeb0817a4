"""`run --plan`'s price of a served embedder's requests (`[embedders.NAME]`): the texts a judge embeds, counted or
estimated, at LiteLLM's price for the embedding model.

A judge says what it embeds (`Judge.embedded_texts`, `embeds_answers_of`, `embedded_from`); RAGAS answer relevance
embeds the item's question and the questions the backbone writes back from each response.

- Counted: the texts known before the run (the item's question), and those in an answer the call cache holds
  already (the generating call was captured with its cached answer), each counted with LiteLLM's tokenizer for the
  embedding model. A text whose vector the model-output store holds (`--no-cache` aside), or that an earlier item or
  judge of the run embeds already, costs nothing: the embedder asks a text once.
- Estimated: the texts of a generating call the cache cannot answer (once per request: a second judge building
  the same request is answered by the cache, and embeds the same texts), at the mean of the texts the cache's answers of
  that model and purpose hold (measured with the same tokenizer), else at the call's `max_tokens` (the whole answer
  embedded: the most). `usd_most` takes every such answer at `max_tokens`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qatui.data.model import Item
    from qatui.judges.base import Judge
    from qatui.judges.resources import Resources
    from qatui.llm.capture import Captured
    from qatui.llm.client import LLMClient

MEASURED_ANSWERS = 200
"""Cached answers (newest first) whose embedded texts make the mean an estimated answer is expected to hold."""


@dataclass
class EmbedPriced:
    """One judge's (or the total's) planned embedding tokens and cost on the served embedder."""

    embedder: str
    model: str
    texts_counted: int = 0
    """Texts known before the run or read in a cached answer, counted with the embedding model's tokenizer."""
    texts_cached: int = 0
    """Of them, texts already embedded (the store holds their vector, or the run asks them once before): free."""
    answers_estimated: int = 0
    """Generating calls the cache cannot answer: their texts are estimated."""
    answers_measured: int = 0
    """Of them, estimated at the mean of the cache's answers (the rest at max_tokens)."""
    tokens_counted: float = 0.0
    tokens_estimated: float = 0.0
    tokens_most: float = 0.0
    """The estimated texts at their generating call's max_tokens (what `usd_most` prices)."""
    usd: float | None = 0.0
    usd_most: float | None = 0.0
    unpriced: str = ""

    def add(self, other: EmbedPriced, scale: float = 1.0) -> None:
        """Sum `other` (times `scale`: items priced at the sample's mean) into this one."""
        for name in ("texts_counted", "texts_cached", "answers_estimated", "answers_measured"):
            setattr(self, name, getattr(self, name) + round(getattr(other, name) * scale))
        for name in ("tokens_counted", "tokens_estimated", "tokens_most"):
            setattr(self, name, getattr(self, name) + getattr(other, name) * scale)
        self.usd = None if self.usd is None or other.usd is None else self.usd + other.usd * scale
        self.usd_most = (None if self.usd_most is None or other.usd_most is None
                         else self.usd_most + other.usd_most * scale)
        self.unpriced = self.unpriced or other.unpriced

    def priced(self) -> EmbedPriced:
        """Its cost from its tokens at LiteLLM's price for the model (None, with the reason, when the map lacks it)."""
        from qatui.llm.spend import price, unpriced

        self.unpriced = unpriced(self.model) or ""
        self.usd = price(self.model, round(self.tokens_counted + self.tokens_estimated), 0)
        self.usd_most = price(self.model, round(self.tokens_counted + self.tokens_most), 0)
        return self

    @property
    def tokens(self) -> float:
        """Its tokens in all: counted and estimated."""
        return self.tokens_counted + self.tokens_estimated

    def json(self) -> dict[str, Any]:
        """The JSON form in a judge's `run --plan --json` cost row."""
        return {"embedder": self.embedder, "model": self.model, "texts_counted": self.texts_counted,
                "texts_cached": self.texts_cached, "answers_estimated": self.answers_estimated,
                "answers_measured": self.answers_measured, "tokens_counted": round(self.tokens_counted),
                "tokens_estimated": round(self.tokens_estimated), "tokens": round(self.tokens),
                "usd": self.usd, "usd_most": self.usd_most, **({"unpriced": self.unpriced} if self.unpriced else {})}


@dataclass
class EmbedPlanner:
    """A run's served embedder as the plan sees it: the texts already counted, the store, the measured means."""

    resources: Resources
    seen: set[str] = field(default_factory=set)
    means: dict[tuple[str, str, str], tuple[float, int] | None] = field(default_factory=dict)
    written: set[str] = field(default_factory=set)
    """The cache keys of the generating calls estimated so far: a request asked again is answered by the cache."""

    def uses(self, judge: Judge, models: Resources) -> bool:
        """Whether `judge` embeds with a served embedder on `models` (a local embedder costs nothing)."""
        return judge.uses_embedder and models.embedder_name in models.config.embedders

    def new_row(self, models: Resources) -> EmbedPriced:
        """An empty row for a judge on `models`' served embedder."""
        return EmbedPriced(models.embedder_name, models.config.embedders[models.embedder_name].model)

    def add_item(self, row: EmbedPriced, judge: Judge, models: Resources, item: Item, calls: list[Captured],
                 client: LLMClient) -> None:
        """Count what `judge` embeds on `item`, whose first calls are `calls` (captured, with cached answers)."""
        texts = list(judge.embedded_texts(item))
        for call in calls:
            if judge.embeds_answers_of and call.purpose == judge.embeds_answers_of:
                if call.answer is not None:
                    texts.extend(judge.embedded_from(call.answer))
                elif call.key not in self.written:  # another judge's same request: its answer, its texts
                    self.written.add(call.key)
                    self._estimate(row, judge, client, call.max_tokens)
        distinct = list(dict.fromkeys(texts))
        fresh = [t for t in distinct if t not in self.seen]
        row.texts_counted += len(distinct)
        row.texts_cached += len(distinct) - len(fresh)
        self.seen.update(fresh)
        stored = self._stored(models, fresh)
        row.texts_cached += len(stored)
        row.tokens_counted += sum(self._tokens(row.model, t) for t in fresh if t not in stored)

    def _estimate(self, row: EmbedPriced, judge: Judge, client: LLMClient, max_tokens: int) -> None:
        """One generating call the cache cannot answer: its texts at the cache's measured mean, else max_tokens."""
        mean = self._mean(row.model, judge, client)
        row.answers_estimated += 1
        row.answers_measured += mean is not None
        row.tokens_estimated += mean[0] if mean is not None else max_tokens
        row.tokens_most += max_tokens

    def _mean(self, model: str, judge: Judge, client: LLMClient) -> tuple[float, int] | None:
        """The mean embedding tokens of the texts in the cache's answers of the generating call, and their number."""
        key = (str(client.cache.db_path), f"{client.model}\0{judge.embeds_answers_of}\0{judge.name}", model)
        if key not in self.means:
            answers = client.cache.answer_texts(client.model, judge.embeds_answers_of, MEASURED_ANSWERS) \
                if client.use_cache else []
            counts = [sum(self._tokens(model, t) for t in judge.embedded_from(a)) for a in answers]
            self.means[key] = (sum(counts) / len(counts), len(counts)) if counts else None
        return self.means[key]

    def _stored(self, models: Resources, texts: list[str]) -> set[str]:
        """Those of `texts` whose vectors the model-output store holds (none when reads are off, or offline: the
        embedder not probed, its store cannot be matched to it)."""
        if not texts or models.offline:
            return set()
        embedder = models.embedder
        stored = models.stored_vectors(embedder)
        return set(stored.read(texts, embedder.dim)) if stored is not None else set()

    @staticmethod
    def _tokens(model: str, text: str) -> int:
        from qatui.llm.tokens import count_text

        return count_text(model, text)
