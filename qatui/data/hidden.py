"""Text a model reads and a person does not see, hidden in a dataset's texts: Unicode tag characters and runs of
variation selectors.

Each tag character (U+E0020-E007E) is an invisible copy of one printable ASCII character. A terminal, a browser
and an editor show nothing for them, but a model's tokenizer reads them, so a line of them inside an answer is an
instruction to the judge ("rate this response 10") that the person reviewing the data cannot see. A run of
variation selectors behind one character hides bytes the same way, one a selector (U+FE00-FE0F for 0-15,
U+E0100-E01EF for 16-255): one selector picks a character's look, two in a row mean nothing but data. qatui shows
both as their escapes (`qatui.text.plain`), and this module finds them and reads them back (tags as the ASCII they
copy, selectors as the UTF-8 their bytes spell), so that `datasets inspect`, New run's preview, `run` and the HTML
report can say what is hidden and where.

An emoji flag of England, Scotland or Wales is made of tags too (a black flag, then tags, then U+E007F), and is
named like any other.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from qatui.data.model import Item
from qatui.text import VARIATION_SELECTORS, clip, plain, plural

_HIDING = re.compile(f"[\U000e0000-\U000e007f]+|[{VARIATION_SELECTORS}]{{2,}}")
SHOWN_PLACES = 3
"""How many hidden texts a warning names before "…"."""


@dataclass(frozen=True)
class Hidden:
    """A run of tag characters or variation selectors in one text of an item: where it is, and what it says."""

    item_id: str
    field: str
    """"question", "references[0]", "context[1]", "candidate NAME"."""
    text: str
    """What it says: the characters the tags copy (a tag outside U+E0020-E007E as its escape), or the UTF-8 the
    selectors' bytes spell (bytes that spell none as U+FFFD)."""


def hidden_texts(items: Sequence[Item]) -> list[Hidden]:
    """Every run of tag characters or variation selectors in the items' questions, references, context and
    candidates, in order."""
    return [found for item in items for found in _in_item(item)]


def hidden_warning(found: Sequence[Hidden]) -> str | None:
    """One sentence naming the texts that hide text and what they hide, for a person to read; None when none do."""
    if not found:
        return None
    items = len({h.item_id for h in found})
    shown = "; ".join(f"{h.item_id} {h.field}: {clip(h.text, 60)!r}" for h in found[:SHOWN_PLACES]) + (
        " …" if len(found) > SHOWN_PLACES else "")
    verb = "hides" if len(found) == 1 else "hide"
    return (f"{plural(len(found), 'text')} in {plural(items, 'item')} {verb} text a model reads and a person does not "
            f"see (Unicode tag characters or variation selectors, shown as their escapes): {plain(shown)}")


def _in_item(item: Item) -> Iterator[Hidden]:
    fields = [("question", item.question), *((f"references[{i}]", t) for i, t in enumerate(item.references)),
              *((f"context[{i}]", t) for i, t in enumerate(item.context)),
              *((f"candidate {name}", t) for name, t in item.candidates.items())]
    for field, text in fields:
        for run in _HIDING.findall(text):
            yield Hidden(item.id, field, _read(run))


def _read(run: str) -> str:
    """What a run of tags or variation selectors says (`Hidden.text`)."""
    if 0xE0000 <= ord(run[0]) <= 0xE007F:
        return "".join(chr(ord(c) - 0xE0000) if 0xE0020 <= ord(c) <= 0xE007E else plain(c) for c in run)
    data = bytes(ord(c) - 0xFE00 if ord(c) <= 0xFE0F else ord(c) - 0xE0100 + 16 for c in run)
    return plain(data.decode("utf-8", errors="replace"))
