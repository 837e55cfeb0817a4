"""An NLI scorer whose probabilities are kept in the model-output store, so that a rerun scores nothing again.

MinosEval and the NLI baselines score every (premise, hypothesis) pair with the NLI model; the
call cache makes a rerun's LLM calls free, and this makes its NLI free too: pairs found in the
store are not run, pairs run are stored. The identity names the model's files and the settings
that change its output (`TransformersNLI.identity`). `reads=False` (`--no-cache`) runs every
pair and still stores it, as the call cache does. A served model's `probed` (what its `/info`
showed) is written with its outputs (`store.model_outputs`).
"""

from __future__ import annotations

import json
import logging
import struct
from collections.abc import Sequence
from typing import TYPE_CHECKING

from qatui.nli.base import NLIProbs, NLIScorer, check_pairs

if TYPE_CHECKING:
    from qatui.store.model_outputs import ModelOutputs, Probed

log = logging.getLogger(__name__)
_PROBS = struct.Struct("<3d")


class StoredNLI(NLIScorer):
    """`inner` with its outputs in `store` under `identity`."""

    def __init__(self, inner: NLIScorer, store: ModelOutputs, identity: str, *, reads: bool = True,
                 probed: Probed | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.store = store
        self.identity = identity
        self.reads = reads
        self.probed_facts = probed

    def __repr__(self) -> str:
        return f"StoredNLI({self.inner!r})"

    def __getattr__(self, name: str) -> object:
        """What the inner scorer says about itself (its runtime, labels, model) reads through the wrapper."""
        if name == "inner":  # not set yet (during unpickling or a failed __init__): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[NLIProbs]:
        """Stored probabilities where there are some; the inner model for the rest, stored afterwards."""
        pairs = check_pairs(pairs)
        found, missing = self._read(pairs)
        if missing:
            self._merge(found, missing, self.inner.predict(missing))
        return [found[p] for p in pairs]

    async def apredict(self, pairs: Sequence[tuple[str, str]]) -> list[NLIProbs]:
        """As `predict`, the inner model's part in its own `apredict` (a worker thread)."""
        pairs = check_pairs(pairs)
        found, missing = self._read(pairs)
        if missing:
            self._merge(found, missing, await self.inner.apredict(missing))
        return [found[p] for p in pairs]

    def _read(self, pairs: list[tuple[str, str]]) -> tuple[dict[tuple[str, str], NLIProbs], list[tuple[str, str]]]:
        """(pair -> stored probabilities, the distinct pairs without any, in order)."""
        distinct = list(dict.fromkeys(pairs))
        found: dict[tuple[str, str], NLIProbs] = {}
        if self.reads:
            for pair, raw in zip(distinct, self.store.get_many(self.identity, [_text(p) for p in distinct])):
                probs = _probs(raw)
                if probs is not None:
                    found[pair] = probs
        return found, [p for p in distinct if p not in found]

    def _merge(self, found: dict[tuple[str, str], NLIProbs], pairs: list[tuple[str, str]],
               scored: list[NLIProbs]) -> None:
        """Add the inner model's answers to `found` and to the store (a store that cannot be written is logged)."""
        found.update(zip(pairs, scored, strict=True))
        try:
            self.store.put_many(self.identity, ((_text(p), _PROBS.pack(*s.as_tuple())) for p, s in zip(pairs, scored)),
                                self.probed_facts)
        except OSError as e:
            log.info("NLI probabilities not stored: %s", e)


def _text(pair: tuple[str, str]) -> str:
    """One unambiguous text for a pair (a JSON list: no separator inside a text can be mistaken)."""
    return json.dumps(pair, ensure_ascii=False)


def _probs(raw: bytes | None) -> NLIProbs | None:
    """Stored bytes back to probabilities; None for none or a damaged row."""
    if raw is None or len(raw) != _PROBS.size:
        return None
    entail, neutral, contradict = _PROBS.unpack(raw)
    try:
        return NLIProbs(entail=entail, neutral=neutral, contradict=contradict)
    except ValueError:
        return None
