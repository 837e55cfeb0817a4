"""Two more bias probes beside position and length: Markdown structure and the judge's own model.

Each looks at the pairs of an item's responses that people told apart (different gold tiers, or
a human A / B label) and where one response is "marked": the more structured one, or the one
the judge's own backbone wrote. It counts how often people prefer the marked one and how often
the judge does; a judge far above people favours the mark. The judge's choice is its preference
(`metrics.pairwise.judge_preference`, so its tie rule applies): a tie prefers neither, so it is
no preference for the marked one, and `judge_ties` counts those pairs.

- Structure: a response's Markdown blocks, parsed by markdown-it (CommonMark): list items,
  headings, table rows, fenced or indented code and block quotes. The more structured of two is
  the one with more such blocks; equal counts mark neither.
- Self-preference: an item's `meta.models` maps candidate ids to the model that wrote them
  (`{"c1": "gpt-4o-mini", "c2": "llama-3.1-8b"}`). A candidate is the judge's own when its model
  names the judge's backbone: equal ignoring case, or equal after the provider prefix
  (`openai/gpt-4o-mini` is `gpt-4o-mini`). A pair is marked when exactly one is the judge's own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import combinations
from typing import TYPE_CHECKING

from qatui.data.model import Item, PairwiseGold, RankingGold
from qatui.metrics.pairwise import judge_preference

if TYPE_CHECKING:
    from qatui.events import Verdict

MODELS_KEY = "models"
"""The item `meta` key that maps candidate ids to the model that wrote them."""
STRUCTURE_BLOCKS = ("list_item_open", "heading_open", "tr_open", "fence", "code_block", "blockquote_open")
"""The markdown-it tokens counted as structure."""

Marked = Callable[[Item, str, str], str | None]
"""Of two candidate ids, the marked one, or None when neither (or both) is."""


def structure(text: str) -> int:
    """How many Markdown structure blocks `text` holds (list items, headings, table rows, code, quotes)."""
    from markdown_it import MarkdownIt

    return sum(token.type in STRUCTURE_BLOCKS for token in MarkdownIt("commonmark").enable("table").parse(text))


def more_structured(item: Item, x: str, y: str) -> str | None:
    """The more structured of two candidates; None when they hold as many blocks."""
    sx, sy = structure(item.candidates[x]), structure(item.candidates[y])
    return None if sx == sy else x if sx > sy else y


def same_model(a: str, b: str) -> bool:
    """Whether two model names name the same model: equal ignoring case, or after a provider prefix."""
    a, b = a.strip().lower(), b.strip().lower()
    return bool(a) and (a == b or a.rsplit("/", 1)[-1] == b.rsplit("/", 1)[-1])


def own_answer(backbone: str) -> Marked:
    """The `Marked` rule of self-preference for a judge on `backbone`."""
    def marked(item: Item, x: str, y: str) -> str | None:
        models = item.meta.get(MODELS_KEY)
        if not isinstance(models, dict):
            return None
        own = [cid for cid in (x, y) if isinstance(models.get(cid), str) and same_model(models[cid], backbone)]
        return own[0] if len(own) == 1 else None

    return marked


def _told_apart(item: Item) -> list[tuple[str, str, list[str]]]:
    """(x, y, people's preferences as 'x' / 'y') for each pair people told apart."""
    gold = item.gold
    if isinstance(gold, RankingGold):
        grades = gold.grade()
        return [(x, y, ["x" if grades[x] > grades[y] else "y"])
                for x, y in combinations([c for c in item.candidates if c in grades], 2) if grades[x] != grades[y]]
    if isinstance(gold, PairwiseGold):
        said = [{"A": "x", "B": "y"}[label] for label in gold.labels if label != "tie"]
        return [(gold.a, gold.b, said)] if said else []
    return []


def marked_preference(items: Sequence[Item], verdicts: Mapping[str, Verdict], marked: Marked,
                      prefix: str) -> dict[str, float | int]:
    """`judge_<prefix>` and `people_<prefix>` (shares in [0, 1]) over `pairs`, of which the judge tied `judge_ties`.

    Empty when no pair people told apart has a marked response the judge decided on.
    """
    judge_hits = ties = pairs = 0
    people_hits = 0.0
    for item in items:
        verdict = verdicts.get(item.id)
        if verdict is None or item.gold is None:
            continue
        for x, y, said in _told_apart(item):
            if (mark := marked(item, x, y)) is None or (judged := judge_preference(verdict, x, y)) is None:
                continue
            side = "x" if mark == x else "y"  # the pair once, people's share of it from however many labelled it
            pairs += 1
            people_hits += sum(person == side for person in said) / len(said)
            judge_hits += judged == {"x": "A", "y": "B"}[side]
            ties += judged == "tie"
    if not pairs:
        return {}
    return {f"judge_{prefix}": judge_hits / pairs, f"people_{prefix}": people_hits / pairs, "pairs": pairs,
            "judge_ties": ties}


def style_biases(items: Sequence[Item], verdicts: Mapping[str, Verdict], backbone: str | None) -> dict[str, dict]:
    """`structure` and (when the judge has a backbone) `self` preference, each present where measured."""
    out = {}
    if found := marked_preference(items, verdicts, more_structured, "structured"):
        out["structure"] = found
    if backbone and (found := marked_preference(items, verdicts, own_answer(backbone), "own")):
        out["self"] = found
    return out
