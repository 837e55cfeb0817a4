"""The always-longer baseline (CALF's "always long response" option): the longer response wins.

No backbone, no model: score = the response's length, so the ranking is longest first and,
on two-candidate items, the preference is the longer answer (a tie only when both are
equally long). It measures how far length alone goes, which is the length bias an LLM
judge may share. Length is counted by the one rule of `qatui.data.language` (`text_length`):
words for languages written with spaces, characters (whitespace left out) for Chinese,
Japanese and Korean items; `unit` forces one or the other.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Literal

from qatui.data.language import length_unit, text_length
from qatui.events import Event, Judgement
from qatui.judges.base import Judge, JudgeOptions

if TYPE_CHECKING:
    from qatui.data.presentation import ItemView


class LengthOptions(JudgeOptions):
    """Length baseline settings."""

    unit: Literal["auto", "words", "characters"] = "auto"
    """auto: characters for items in a language written without spaces (`data.language.UNSPACED_LANGUAGES`),
    words otherwise."""


class LengthJudge(Judge):
    """Always longer: score = length in words (characters for `UNSPACED_LANGUAGES`); no model."""

    name = "length"
    reproduces = ("calf:always-long",)
    summary = "Always longer (CALF baseline): score = length (words; characters for zh/ja/ko); no model"
    Options = LengthOptions

    async def judge(self, view: ItemView) -> AsyncIterator[Event]:
        """Score every response by its length; no model."""
        unit = length_unit(view.language, self.options.unit)
        lengths = {r.label: text_length(r.text, unit) for r in view.responses}
        yield Judgement(scores={label: float(n) for label, n in lengths.items()},
                        details={"unit": unit, "lengths": lengths})
