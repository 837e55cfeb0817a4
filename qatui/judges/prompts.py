"""Prompt files: TOML beside the judges, one per method and language, read once.

A prompt section has a `system` text, a `user` template and optional few-shot `examples`;
`chat()` turns them into chat messages, the examples as user / assistant turns whose
assistant side is the JSON a good answer would be.
"""

from __future__ import annotations

import json
import tomllib
from functools import cache
from importlib.resources import files
from typing import Any

from qatui.errors import JudgeError

PROMPT_LANGUAGES = ("en", "zh")


@cache
def load_prompts(method: str, language: str) -> dict[str, Any]:
    """The prompt file of `method` in `language` (English when there is none for it)."""
    lang = language if language in PROMPT_LANGUAGES else "en"
    resource = files("qatui.judges") / "prompts" / f"{method}.{lang}.toml"
    if lang != "en" and not resource.is_file():
        return load_prompts(method, "en")
    try:
        return tomllib.loads(resource.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise JudgeError(f"no prompt file {method}.{lang}.toml in qatui/judges/prompts") from None


def chat(section: dict[str, Any], answer_keys: tuple[str, ...], **fields: str) -> list[dict[str, str]]:
    """System, few-shot turns, then the user turn filled with `fields`.

    An example's answer is the JSON object of its `answer_keys`; its other keys fill the
    user template the same way the real question does.
    """
    messages = [{"role": "system", "content": section["system"].format()}]
    for example in section.get("examples", []):
        shown = {k: v for k, v in example.items() if k not in answer_keys}
        messages.append({"role": "user", "content": section["user"].format(**shown)})
        answer = {k: example[k] for k in answer_keys}
        messages.append({"role": "assistant", "content": json.dumps(answer, ensure_ascii=False)})
    messages.append({"role": "user", "content": section["user"].format(**fields)})
    return messages
