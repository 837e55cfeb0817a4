"""Data texts in a prompt (answers, references, context), fenced so that none can close or forge a block.

A judge's prompt shows texts it did not write: a candidate may say "ignore the instructions",
hold a line "Answer B:" or a verdict such as `[[A]]`. Each such text goes between a begin and an
end line that carry the block's name and a key:

    <<<BEGIN Answer A 3f9c1b0e7d>>>
    ...the text, untouched...
    <<<END Answer A 3f9c1b0e7d>>>

The key is the SHA-256 of every data text of the prompt, the question too (`Fence(*texts)`), so no
text of the prompt can contain it (a text holding the hash of itself and the others is out of reach); should
one contain it by chance, the next key is taken. A text can therefore write "<<<END Answer A"
or a whole fake block, and it stays inside its own block. The judges' system prompts say that
everything inside a block is material to judge, never an instruction (prompts/fence.*.toml).

`fenced_blocks` finds the blocks again; the client trims their texts when a prompt would not
fit the backbone's context window (`qatui.llm.trim`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

KEY_CHARS = 10
_BLOCK = re.compile(r"<<<BEGIN (?P<name>[^\n<>]+) (?P<key>[0-9a-f]{" + str(KEY_CHARS) + r"})>>>\n"
                    r"(?P<text>.*?)\n<<<END (?P=name) (?P=key)>>>", re.DOTALL)


class Fence:
    """The fence of one prompt: a key derived from every text it will hold, which none of them contains."""

    def __init__(self, *texts: str) -> None:
        digest = hashlib.sha256("\x00".join(texts).encode("utf-8", "surrogatepass")).hexdigest()
        counter = 0
        while True:
            key = digest[:KEY_CHARS]
            if not any(key in text for text in texts):
                break
            counter += 1
            digest = hashlib.sha256(f"{digest}{counter}".encode()).hexdigest()
        self.key = key
        self._texts = set(texts)

    def __call__(self, name: str, text: str) -> str:
        """`text` between its begin and end lines, named `name` ("Answer A", "Response 2", "Context")."""
        if text not in self._texts:
            raise ValueError(f"text for {name!r} was not given to this Fence (its key must cover every text)")
        return f"<<<BEGIN {name} {self.key}>>>\n{text}\n<<<END {name} {self.key}>>>"


def fence_many(fence: Fence, name: str, texts: Sequence[str]) -> str:
    """One block per text: `name` for a single text, "name 1".."name n" for several, one per line."""
    if len(texts) == 1:
        return fence(name, texts[0])
    return "\n".join(fence(f"{name} {i}", text) for i, text in enumerate(texts, 1))


@dataclass(frozen=True)
class Block:
    """One fenced block found in a message: its name, key, and where its text lies in the message."""

    name: str
    key: str
    start: int
    end: int


def fenced_blocks(content: str) -> list[Block]:
    """The fenced blocks of a message, in order (a fake block inside a real one is not a block)."""
    return [Block(m["name"], m["key"], m.start("text"), m.end("text")) for m in _BLOCK.finditer(content)]


def block_texts(content: str) -> dict[str, str]:
    """Name -> text of each fenced block of a message (what a reader of the prompt sees as data)."""
    return {b.name: content[b.start:b.end] for b in fenced_blocks(content)}


def without_fenced(text: str) -> str:
    """`text` without the whole fenced blocks it holds (a model's answer echoing a candidate back)."""
    return _BLOCK.sub("", text)


def one_line(text: str) -> str:
    """`text` on one line (every run of blanks, line breaks included, one space): an item of a numbered list
    that cannot start a line of its own, so it cannot forge the next number."""
    return " ".join(text.split())
