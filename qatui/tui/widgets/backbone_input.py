"""The backbone field of New run and Spot check: typed like `--backbone`, completed from the known ones.

A `[backbones.NAME]` of the config, the embedded `local/…` models, or any LiteLLM model string
(`openai/gpt-4o-mini`, `ollama/qwen2.5`): the field takes what `--backbone` takes, suggests the
known names as you type (→ accepts the suggestion), and says in one line why a typed name is no
backbone, by the check `--backbone` goes through (`qatui.llm.client.backbone_settings`). Whether
the backbone answers is checked when the run starts, as for the CLI. An input never opens a menu,
so the field works at any terminal size.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content
from textual.suggester import SuggestFromList
from textual.widgets import Input

from qatui.errors import QatuiError
from qatui.report.models import model_choices
from qatui.text import plain

if TYPE_CHECKING:
    from qatui.config import Config


def known_backbones(config: Config) -> list[str]:
    """The backbones a picker offers: the config's and the embedded models (`report.models.model_choices`)."""
    return [value for _, value in model_choices(config)["backbone"]]


def backbone_hint(config: Config) -> Content:
    """The line under the field: the known backbones, and that any LiteLLM model string is taken too."""
    known = ", ".join(known_backbones(config))
    return Content(plain(f"known: {known} · or any LiteLLM model string (provider/model); → completes"))


def backbone_problem(config: Config, name: str) -> str | None:
    """Why `name` is no backbone (`--backbone`'s one-line refusal), or None when it names one."""
    from qatui.llm.client import backbone_settings

    if not name:
        return "type a backbone: a [backbones] name of the config or a LiteLLM model string (provider/model)"
    try:
        backbone_settings(name, config)
    except QatuiError as e:
        return str(e)
    return None


class BackboneInput(Input):
    """A one-line backbone field with the known backbones as suggestions; `backbone` is what it names."""

    def __init__(self, config: Config, value: str, *, id: str | None = None) -> None:
        known = known_backbones(config)
        super().__init__(value, placeholder="provider/model or a [backbones] name", id=id, compact=True,
                         suggester=SuggestFromList(known, case_sensitive=True))

    @property
    def backbone(self) -> str:
        """The typed backbone, without surrounding spaces."""
        return self.value.strip()
