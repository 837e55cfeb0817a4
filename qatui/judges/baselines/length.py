"""The always-longer baseline (CALF's "always long response" option): the longer response wins.

No backbone, no model: score = the response's length, so the ranking is longest first and,
on two-candidate items, the preference is the longer answer (a tie only when both are
equally long). It measures how far length alone goes, which is the length bias an LLM
judge may share. Length is counted in words (whitespace-separated) for languages written
with spaces, and in characters (whitespace left out) for Chinese, Japanese and Korean
items, which have no spaces between words; `unit` forces one or the other.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Literal

from qatui.events import Event, Judgement
from qatui.judges.base import Judge, JudgeOptions

if TYPE_CHECKING:
    from qatui.data.presentation import ItemView

UNSPACED_LANGUAGES = ("zh", "ja", "ko")
"""Item languages counted in characters under `unit = "auto"`."""

Unit = Literal["words", "characters"]


class LengthOptions(JudgeOptions):
    """Length baseline settings."""

    unit: Literal["auto", "words", "characters"] = "auto"
    """auto: characters for Chinese, Japanese and Korean items, words otherwise."""


def unit_for(language: str, unit: str) -> Unit:
    """The unit an item of `language` is counted in under the `unit` option."""
    if unit in ("words", "characters"):
        return unit  # type: ignore[return-value]
    return "characters" if language.split("-")[0].lower() in UNSPACED_LANGUAGES else "words"


def text_length(text: str, unit: Unit) -> int:
    """Words (whitespace-separated) or characters (whitespace left out) in `text`."""
    return len(text.split()) if unit == "words" else sum(1 for ch in text if not ch.isspace())


class LengthJudge(Judge):
    """Always longer: score = length in words (characters for Chinese, Japanese, Korean); no model."""

    name = "length"
    reproduces = ("calf:always-long",)
    summary = "Always longer (CALF baseline): score = length (words; characters for zh/ja/ko); no model"
    Options = LengthOptions

    async def judge(self, view: ItemView) -> AsyncIterator[Event]:
        """Score every response by its length; no model."""
        unit = unit_for(view.language, self.options.unit)
        lengths = {r.label: text_length(r.text, unit) for r in view.responses}
        yield Judgement(scores={label: float(n) for label, n in lengths.items()},
                        details={"unit": unit, "lengths": lengths})
