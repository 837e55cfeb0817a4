"""Which of a model's outputs is entailment, neutral, contradiction: read from `config.id2label`.

Names are matched case-insensitively, with '-' and ' ' read as '_':
- entailment: "entailment", "entail", "entails", "entailed";
- neutral: "neutral";
- contradiction: "contradiction", "contradict", "contradicts", "contradicted", "contradictory";
- two-class models ("entailment" / "not_entailment", as RTE / QNLI heads): the
  not-entailment output ("not_entailment", "non_entailment", "not_entailed", "non_entailed")
  is counted as neutral and P(contradiction) is 0, since such a model cannot tell "unsupported"
  from "contradicted". A model without a contradiction (or neutral) output likewise gets 0 there.

A model whose labels are unnamed ("LABEL_0", ...) or unknown is refused with the labels it
has: the order of outputs is never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from qatui.nli.base import NLIError, NLIProbs

_ENTAIL = {"entailment", "entail", "entails", "entailed"}
_NEUTRAL = {"neutral"}
_CONTRADICT = {"contradiction", "contradict", "contradicts", "contradicted", "contradictory"}
_NOT_ENTAIL = {"not_entailment", "non_entailment", "not_entailed", "non_entailed", "no_entailment"}


def _norm(name: str) -> str:
    return "_".join(str(name).strip().lower().replace("-", " ").replace("_", " ").split())


@dataclass(frozen=True)
class LabelMap:
    """The output indices summed into each class (most models: one index each)."""

    entail: tuple[int, ...]
    neutral: tuple[int, ...]
    contradict: tuple[int, ...]
    num_labels: int
    id2label: tuple[tuple[int, str], ...] = ()

    @property
    def two_class(self) -> bool:
        """An entailment / not-entailment model (its not-entailment counts as neutral)."""
        return any(_norm(name) in _NOT_ENTAIL for _, name in self.id2label)

    def describe(self) -> str:
        """The label mapping as `0=entailment, 1=...`, for error messages."""
        return ", ".join(f"{i}={name}" for i, name in self.id2label)


def label_map(id2label: Mapping[int | str, str], model: str = "the NLI model") -> LabelMap:
    """The LabelMap of a model's `config.id2label`; `NLIError` when it cannot be read as NLI."""
    try:
        items = sorted((int(k), str(v)) for k, v in dict(id2label).items())
    except (TypeError, ValueError):
        raise NLIError(f"NLI model {model!r} has an unreadable config.id2label: {id2label!r}") from None
    shown = ", ".join(f"{i}={name}" for i, name in items) or "none"
    if [i for i, _ in items] != list(range(len(items))) or len(items) < 2:
        raise NLIError(f"NLI model {model!r}: config.id2label must name outputs 0..n-1 (n >= 2), got {shown}")
    groups: dict[str, list[int]] = {"entail": [], "neutral": [], "contradict": []}
    unknown = []
    for index, name in items:
        key = _norm(name)
        if key in _ENTAIL:
            groups["entail"].append(index)
        elif key in _NEUTRAL or key in _NOT_ENTAIL:
            groups["neutral"].append(index)
        elif key in _CONTRADICT:
            groups["contradict"].append(index)
        else:
            unknown.append(name)
    if unknown or not groups["entail"]:
        why = f"labels {unknown} are not NLI classes" if unknown else "no output is named entailment"
        raise NLIError(
            f"NLI model {model!r} is not an NLI classifier qatui can read: {why} (config.id2label: {shown}). "
            "qatui needs outputs named entailment / neutral / contradiction (or entailment / not_entailment); "
            "fix the names in the model's config.json"
        )
    return LabelMap(
        entail=tuple(groups["entail"]), neutral=tuple(groups["neutral"]), contradict=tuple(groups["contradict"]),
        num_labels=len(items), id2label=tuple(items),
    )


PROBE_PAIRS = (
    ("A man in a blue shirt is playing a guitar on a small stage.", "A man is playing a guitar."),
    ("A man in a blue shirt is playing a guitar on a small stage.", "Nobody is playing a guitar."),
)
"""An obvious entailment, then an obvious contradiction: what a model's label names are checked on before it
judges anything (`check_reading`)."""


def check_reading(who: str, entailed: NLIProbs, contradicted: NLIProbs, labels: LabelMap, names: str) -> None:
    """Refuse (`NLIError` naming `who` and its label `names`) a model whose outputs, named as its labels name them,
    misread `PROBE_PAIRS`. Names can lie: a config whose id2label swaps two classes inverts every NLI judgement
    without a sign. With three classes the entailment's most probable class must be entailment and the
    contradiction's contradiction, which rules out each of the other five orders of the names (neutral is the one
    left); a two-class model (entailed or not) must put the entailment above one half and the contradiction below.
    Only entailment above contradiction was asked before: a neutral / contradiction swap passed, and contradicting
    answers then ranked above unrelated ones."""
    if labels.contradict and labels.neutral:
        right = entailed.label == "entail" and contradicted.label == "contradict"
    else:
        right = entailed.entail > 0.5 > contradicted.entail
    if not right:
        raise NLIError(f"{who} reads an obvious entailment as {entailed.label} ({_shown(entailed)}) and an obvious "
                       f"contradiction as {contradicted.label} ({_shown(contradicted)}): its label names ({names}) "
                       "do not match its outputs, so every NLI judgement would be misread. Fix the model's id2label "
                       "(config.json) or the server's label order")


def _shown(probs: NLIProbs) -> str:
    return f"entail {probs.entail:.2f}, neutral {probs.neutral:.2f}, contradict {probs.contradict:.2f}"
