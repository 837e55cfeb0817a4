"""A judge whose prompt is a text someone edits: what `judges align` rewrites and the Judge Lab edits.

`Editable` holds a judge's name, the text that defines it and where that text came from, and turns
a text into a judge (`build`): a revised text is refused with a `JudgeError` saying why (not TOML,
a section or placeholder missing, another judge's name or kind) before it is ever run.

The built-in single-prompt judge `pointwise` is editable through its prompt file's text
(`pointwise.en.toml`): the judge built from an edited text asks exactly as the built-in does, with
the edited prompts, and its `definition` (hence its version) is that text.
"""

from __future__ import annotations

import string
import tomllib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from qatui.errors import JudgeError
from qatui.judges.baselines.pointwise import PointwiseJudge, PointwiseOptions
from qatui.judges.base import as_they_finish
from qatui.judges.prompts import load_prompts, prompt_texts

if TYPE_CHECKING:
    from qatui.data.presentation import ItemView
    from qatui.events import Event
    from qatui.judges.base import Judge
    from qatui.judges.resources import Resources

POINTWISE_KEYS = {"system": (), "user": ("question", "reference", "answer"), "reference": ("reference",),
                  "reask": ("reason",)}
"""The keys of pointwise's `[score]` section and the placeholders each may hold (`answer` must be in `user`)."""


def _placeholders(template: str, where: str) -> set[str]:
    """The `{names}` of a format template; a JudgeError for a brace that is not one."""
    try:
        return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as e:
        raise JudgeError(f"{where}: {e} (write a literal brace as {{{{ or }}}})") from None


def pointwise_prompts(text: str, source: str) -> dict[str, Any]:
    """`text` read as pointwise's prompt file; a JudgeError naming `source` and the key at fault."""
    from qatui.data.safe_read import Refused, loads_toml

    try:
        data = loads_toml(text)
    except (tomllib.TOMLDecodeError, Refused) as e:
        raise JudgeError(f"{source}: not a valid prompt file: {e}") from None
    section = data.get("score")
    if not isinstance(section, dict):
        raise JudgeError(f"{source}: score: the [score] table is missing")
    for key, allowed in POINTWISE_KEYS.items():
        value = section.get(key)
        if not isinstance(value, str) or not value.strip():
            raise JudgeError(f"{source}: score.{key}: missing or empty")
        unknown = _placeholders(value, f"{source}: score.{key}") - set(allowed)
        if unknown:
            raise JudgeError(f"{source}: score.{key}: unknown placeholder {{{sorted(unknown)[0]}}} "
                             f"(allowed: {', '.join('{' + a + '}' for a in allowed) or 'none'})")
    if "answer" not in _placeholders(section["user"], source):
        raise JudgeError(f"{source}: score.user: the template never shows the answer ({{answer}})")
    return data


class EditedPointwise(PointwiseJudge):
    """The pointwise judge asking with an edited prompt file's text instead of the bundled one."""

    def __init__(self, text: str, source: str, options: PointwiseOptions | None = None,
                 resources: Resources | None = None) -> None:
        super().__init__(options, resources)
        self.text = text
        self.prompts = pointwise_prompts(text, source)

    def definition(self) -> dict[str, str]:
        """The edited text in place of the bundled English prompt file (the fence note as bundled)."""
        return {**prompt_texts(("fence",)), "pointwise.en.toml": self.text}

    async def judge(self, view: ItemView) -> AsyncIterator[Event]:
        """As the built-in pointwise judge, with the edited `[score]` section in every language."""
        from qatui.events import Judgement

        section = self.prompts["score"]
        scored: dict[str, float] = {}
        async for event in as_they_finish(self._score(view, r, section) for r in view.responses):
            scored[event.response] = event.score
            yield event
        yield Judgement(scores={label: scored[label] for label in view.labels})


@dataclass(frozen=True)
class Editable:
    """A judge's name, the text that defines it, where the text came from, and its options."""

    name: str
    text: str
    source: str
    options: dict[str, Any]

    def build(self, text: str, resources: Resources, source: str | None = None) -> Judge:
        """The judge `text` defines, with these options; a JudgeError (naming `source`) when the text is refused."""
        from pydantic import ValidationError

        try:
            options = PointwiseOptions.model_validate(self.options)
        except ValidationError as e:
            raise JudgeError(f"{self.name}: options: {e.errors()[0]['msg']}") from None
        return EditedPointwise(text, source or self.source, options, resources)


def editable_judge(name: str, options: dict[str, Any]) -> Editable:
    """The judge named `name` as an editable text; refused for a judge that is not a single prompt file."""
    if name != "pointwise":
        raise JudgeError(f"judge {name!r} cannot be edited: only a single-prompt judge can (pointwise)")
    text = prompt_texts(("pointwise",))["pointwise.en.toml"]
    load_prompts("pointwise", "en")  # the bundled file reads as the judge reads it
    return Editable(name=name, text=text, source="built-in pointwise (pointwise.en.toml)", options=options)
