"""How the LLM judges write prompts: the prompt files, the chat built from them, data texts fenced.

Prompt files are TOML in a `prompts/` folder beside the judge that uses them, one per method
and language, read once: a method's files sit in its package's `prompts/` folder
(`minos/prompts/minos.en.toml`); those several packages share (the fence note, NLI through the
backbone) in `qatui/judges/prompts/`. Method names are unique across the folders.

A prompt section has a `system` text, a `user` template and optional few-shot `examples`;
`chat()` turns them into chat messages, the examples as user / assistant turns whose
assistant side is the JSON a good answer would be.

Data texts go into prompts fenced (`qatui.llm.fence`), with a note saying so: answers,
references and context are fenced, and `guarded` adds the note of `prompts/fence.<lang>.toml`
(a fenced text is material to judge, never an instruction) to the system prompt. Questions
and checklist questions are not fenced: they frame the task.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Sequence
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any

from qatui.errors import JudgeError
from qatui.llm.fence import Fence, fence_many, one_line

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


def prompt_folders() -> list[Traversable]:
    """Every `prompts/` folder, in the order a method is looked for: the shared one, then the judge packages'."""
    root = files("qatui.judges")
    packages = sorted((d for d in root.iterdir() if d.is_dir() and (d / "prompts").is_dir()), key=lambda d: d.name)
    return [root / "prompts", *(d / "prompts" for d in packages)]


def _prompt_folder(method: str) -> Traversable:
    """The `prompts/` folder holding `method`'s English file: the shared one, else a judge package's."""
    folders = prompt_folders()
    for folder in folders:
        if (folder / f"{method}.en.toml").is_file():
            return folder
    return folders[0]


def prompt_texts(methods: Sequence[str]) -> dict[str, str]:
    """The text of every prompt file of `methods`, each language there is, by file name (`pointwise.zh.toml`):
    what `load_prompts` reads for them, so a word changed in any of them changes the judge's version."""
    texts: dict[str, str] = {}
    for method in methods:
        folder = _prompt_folder(method)
        for lang in PROMPT_LANGUAGES:
            resource = folder / f"{method}.{lang}.toml"
            if resource.is_file():
                texts[f"{method}.{lang}.toml"] = resource.read_text(encoding="utf-8")
        if f"{method}.en.toml" not in texts:
            raise JudgeError(f"no prompt file {method}.en.toml in a prompts folder of qatui/judges")
    return texts


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


def guarded(messages: list[dict[str, Any]], language: str) -> list[dict[str, Any]]:
    """`messages` with the fence note added to the system message (a system message first if there is none)."""
    note = load_prompts("fence", language)["note"]
    out = [dict(m) for m in messages]
    if out and out[0].get("role") == "system":
        out[0]["content"] = f"{out[0]['content']}\n\n{note}"
    else:
        out.insert(0, {"role": "system", "content": note})
    return out


def references_block(fence: Fence, references: Sequence[str]) -> str:
    """Each reference in its own block ("Reference", or "Reference 1".."Reference n" when there are several)."""
    return fence_many(fence, "Reference", references)


def reference_line(section: dict[str, Any], references: Sequence[str], fence: Fence) -> str:
    """The section's `reference` template filled with the fenced references, or "" when the item has none."""
    return section["reference"].format(reference=references_block(fence, references)) if references else ""


def context_line(section: dict[str, Any], context: Sequence[str], fence: Fence) -> str:
    """The section's `context` template filled with the fenced context passages, or "" when the item has none."""
    return section["context"].format(context=fence_many(fence, "Context", context)) if context else ""


def numbered_lines(template: str, texts: Sequence[str]) -> str:
    """One line per text, numbered from 1 by the prompt's `template` ({number}, {text}; each text on one line)."""
    return "\n".join(template.format(number=k, text=one_line(text)) for k, text in enumerate(texts, 1))
