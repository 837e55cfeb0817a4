"""A form for one judge's options, built from its pydantic model.

A choice (`Literal`) gets a Select, a flag a Switch, anything else an Input (blank = the
default). The form only collects what was typed; the judge's own model validates it, so
the rules live in one place.
"""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Label, Select, Static, Switch


def _editor(name: str, annotation: Any, value: Any) -> Input | Select | Switch:
    """The widget that edits one option, showing `value`."""
    args = typing.get_args(annotation)
    widget_id = f"opt-{name}"
    if typing.get_origin(annotation) is typing.Literal:
        return Select([(str(a), a) for a in args], value=value, allow_blank=False, id=widget_id, compact=True)
    if annotation is bool:
        return Switch(bool(value), id=widget_id)
    kinds = {a for a in (args if typing.get_origin(annotation) in (typing.Union, types.UnionType) else (annotation,))
             if a is not type(None)}
    kind = "integer" if kinds == {int} else "number" if kinds <= {int, float} else "text"
    text = "" if value is None else ",".join(map(str, value)) if isinstance(value, list) else str(value)
    return Input(text, type=kind, placeholder="default", id=widget_id, compact=True)


class OptionsForm(Vertical):
    """Edits the options of the judge last `show`n; posts `Changed` with what the form holds."""

    DEFAULT_CSS = """
    OptionsForm {
        height: auto;
        & > Label { color: $text-accent; margin-top: 1; }
        & > Label.first { margin-top: 0; }
        & > .help { color: $text-muted; }
        & > Input, & > Select { background: $foreground 6%; }
        & > Switch { height: auto; border: none; padding: 0; }
    }
    """

    class Changed(Message):
        """The options of `judge` as the form now holds them (only fields that were filled in)."""

        def __init__(self, judge: str, values: dict[str, Any]) -> None:
            super().__init__()
            self.judge = judge
            self.values = values

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.judge: str | None = None
        self.fields: dict[str, Any] = {}

    async def show(self, judge: str, options: type[BaseModel], values: dict[str, Any]) -> None:
        """Rebuild the form for `judge`, filled with `values` over the model's defaults."""
        self.judge = None  # changes posted by the old editors while they go are not this judge's
        await self.remove_children()
        self.fields = {name: field for name, field in options.model_fields.items()  # stored, not typed (a jury's
                       if (field.json_schema_extra or {}).get("form", True)}         # member options)
        widgets: list = []
        for i, (name, field) in enumerate(self.fields.items()):
            widgets.append(Label(name, classes="first" if i == 0 else ""))
            widgets.append(_editor(name, field.annotation, values.get(name, field.get_default(call_default_factory=True))))
            if field.description:
                widgets.append(Static(" ".join(field.description.split()), classes="help"))  # docstring breaks
        await self.mount_all(widgets)
        self.judge = judge

    def values(self) -> dict[str, Any]:
        """Every option the form holds, as typed (blank inputs left out, so the default applies)."""
        found: dict[str, Any] = {}
        for name in self.fields:
            widget = self.query_one(f"#opt-{name}", (Input, Select, Switch))
            if isinstance(widget, Input):
                if text := widget.value.strip():
                    found[name] = text
            else:
                found[name] = widget.value
        return found

    def on_input_changed(self, event: Input.Changed) -> None:
        self._changed(event)

    def on_select_changed(self, event: Select.Changed) -> None:
        self._changed(event)

    def on_switch_changed(self, event: Switch.Changed) -> None:
        self._changed(event)

    def _changed(self, event: Message) -> None:
        event.stop()
        if self.judge is not None and getattr(event, "control", None) in self.children:
            self.post_message(self.Changed(self.judge, self.values()))
