"""Prompt files: TOML in a `prompts/` folder beside the judge that uses them, one per method and language, read once.

A method's files sit in its package's `prompts/` folder (`minos/prompts/minos.en.toml`); those
several packages share (the fence note, NLI through the backbone) in `qatui/judges/prompts/`.
Method names are unique across the folders.

A prompt section has a `system` text, a `user` template and optional few-shot `examples`;
`chat()` turns them into chat messages, the examples as user / assistant turns whose
assistant side is the JSON a good answer would be.
"""

from __future__ import annotations

import json
import tomllib
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any

from qatui.errors import JudgeError
from qatui.llm.fence import Fence, fence_many

PROMPT_LANGUAGES = ("en", "zh")


@cache
def load_prompts(method: str, language: str) -> dict[str, Any]:
    """The prompt file of `method` in `language` (English when there is none for it)."""
    lang = language if language in PROMPT_LANGUAGES else "en"
    resource = _prompt_folder(method) / f"{method}.{lang}.toml"
    if lang != "en" and not resource.is_file():
        return load_prompts(method, "en")
    try:
        return tomllib.loads(resource.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise JudgeError(f"no prompt file {method}.{lang}.toml in a prompts folder of qatui/judges") from None


def _prompt_folder(method: str) -> Traversable:
    """The `prompts/` folder holding `method`'s English file: the shared one, else a judge package's."""
    root = files("qatui.judges")
    packages = sorted((d for d in root.iterdir() if d.is_dir() and (d / "prompts").is_dir()), key=lambda d: d.name)
    for folder in (root / "prompts", *(d / "prompts" for d in packages)):
        if (folder / f"{method}.en.toml").is_file():
            return folder
    return root / "prompts"


def chat(section: dict[str, Any], answer_keys: tuple[str, ...], fenced: dict[str, str] | None = None,
         **fields: Any) -> list[dict[str, str]]:
    """System, few-shot turns, then the user turn filled with `fields`.

    An example's answer is the JSON object of its `answer_keys`; its other keys fill the
    user template the same way the real question does. `fenced` maps a field to its block
    name: that field (a text, or a list of texts: one block each) is fenced (`qatui.llm.fence`)
    in every turn, the examples' too, so the few-shot turns look like the real one.
    """
    messages = [{"role": "system", "content": section["system"].format()}]
    for example in section.get("examples", []):
        shown = {k: v for k, v in example.items() if k not in answer_keys}
        messages.append({"role": "user", "content": section["user"].format(**_fence_fields(shown, fenced or {}))})
        answer = {k: example[k] for k in answer_keys}
        messages.append({"role": "assistant", "content": json.dumps(answer, ensure_ascii=False)})
    messages.append({"role": "user", "content": section["user"].format(**_fence_fields(fields, fenced or {}))})
    return messages


def _fence_fields(fields: dict[str, Any], fenced: dict[str, str]) -> dict[str, Any]:
    """`fields` with those named in `fenced` put in blocks under one key covering every text of the turn."""
    every = {name: [value] if isinstance(value, str) else list(value) for name, value in fields.items()
             if isinstance(value, (str, list, tuple))}
    texts = {name: values for name, values in every.items() if name in fenced}
    fence = Fence(*(str(t) for values in every.values() for t in values))  # the key covers the question too
    return {**fields, **{name: fence_many(fence, fenced[name], values) for name, values in texts.items()}}
