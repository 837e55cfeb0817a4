"""`qatui datasets inspect`: what a dataset holds (counts, gold kinds, languages) and its first items."""

from __future__ import annotations

from collections import Counter
from statistics import mean
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from qatui.data.hidden import hidden_texts, hidden_warning
from qatui.data.language import UNDETERMINED, read_language
from qatui.data.leaks import check_copies, leak_warnings, partial_gold_warning
from qatui.text import clip, plain
from qatui.ties import tiers_text

if TYPE_CHECKING:
    from rich.console import Console

    from qatui.data.model import Dataset, Item


def dataset_overview(dataset: Dataset) -> dict[str, Any]:
    """Counts, gold kinds, languages, the first item, and where the gold leaks (`data.leaks`): its sentences in
    `warnings`, and the copy check's findings in `copies` ([item id, candidate id] pairs that copy a reference, and
    those it could not compare with every reference), for a script to read without parsing a sentence; and the
    texts that hide text in tag characters or variation selectors (`data.hidden`) in `hidden`, with what they hide."""
    sizes = [len(it.candidates) for it in dataset.items]
    check = check_copies(dataset.items)
    hidden = hidden_texts(dataset.items)
    first = dataset.items[0]
    read = [read_language(it) for it in dataset.items]  # once: every item's text is read
    return {
        "name": dataset.name,
        "path": dataset.path,
        "format": dataset.format,
        "content_hash": dataset.content_hash,
        "n_items": len(dataset.items),
        "gold_kinds": dict(dataset.gold_kinds),
        "no_gold": sum(1 for it in dataset.items if it.gold is None),
        "languages": dict(Counter(code for code, _ in read)),
        "read_by": {how: dict(Counter(code for code, by in read if by == how))
                    for how in ("tag", "script", "words", "unsure") if any(by == how for _, by in read)},
        "question_types": dict(Counter(it.question_type or "unknown" for it in dataset.items)),
        "candidates": {"min": min(sizes), "max": max(sizes), "mean": round(mean(sizes), 2), "total": sum(sizes)},
        "with_reference": sum(1 for it in dataset.items if it.references),
        "with_context": sum(1 for it in dataset.items if it.context),
        "first_item": first.model_dump(mode="json"),
        "warnings": [w for w in [hidden_warning(hidden)] if w] + leak_warnings(dataset.items, check)
        + [w for w in [partial_gold_warning(dataset.items)] if w],
        "hidden": [[h.item_id, h.field, h.text] for h in hidden],
        "copies": {"copying": [list(pair) for pair in check.copies],
                   "not_compared": [list(pair) for pair in check.not_compared]},
    }


def languages_line(overview: dict[str, Any]) -> str:
    """'en 12, fr 3, und 1 (…); untagged: …': each language's count, then how the untagged items in Latin letters
    were read: the identifier named their language by their words, or was not sure of any and they are read as
    English (tag them if they are not)."""
    counts = ", ".join(f"{code} {n}" + (" (another script, or romanized: not English)" if code == UNDETERMINED else "")
                       for code, n in overview["languages"].items())
    read_by = overview["read_by"]
    notes = []
    if words := sum(read_by.get("words", {}).values()):
        notes.append(f"{words} identified by their words")
    if unsure := sum(read_by.get("unsure", {}).values()):
        notes.append(f"{unsure} too short to tell, read as English (tag {'it' if unsure == 1 else 'them'} if not)")
    return counts + (f"; untagged: {', '.join(notes)}" if notes else "")


def _counts(counter: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counter.items()) or "-"


def print_dataset(console: Console, dataset: Dataset) -> None:
    """The `datasets inspect` view: every text from the data made plain (`qatui.text.plain`) before it is laid out,
    and printed as text, never as markup."""
    o = dataset_overview(dataset)
    table = Table(show_header=False, box=None, title=Text.assemble((plain(o["name"]), "bold"), f" ({o['format']})"),
                  title_justify="left")
    table.add_column(style="dim")
    table.add_column()
    c = o["candidates"]
    gold = _counts(o["gold_kinds"]) + (f", none {o['no_gold']}" if o["no_gold"] else "")
    for key, value in (
        ("path", o["path"]),
        ("items", str(o["n_items"])),
        ("candidates", f"{c['total']} ({c['min']}-{c['max']} per item, mean {c['mean']})"),
        ("gold", gold),
        ("languages", languages_line(o) or "-"),
        ("question types", _counts(o["question_types"])),
        ("with reference", f"{o['with_reference']} of {o['n_items']}"),
        ("with context", f"{o['with_context']} of {o['n_items']}"),
    ):
        table.add_row(key, Text(plain(value)))
    console.print(table)
    for warning in o["warnings"]:
        console.print(Text.assemble(("warning:", "yellow"), " ", plain(warning)))
    first = dataset.items[0]
    width = max(console.width, 40)
    first_id = plain(first.id)
    console.print(Text.assemble("\n", ("first item", "bold"), f" {first_id}: ",
                                plain(clip(first.question, width - len(first_id) - 13))))
    if first.references:
        console.print(Text.assemble("  ", ("reference", "dim"), " ", plain(clip(first.references[0], width - 13))))
    for cid, text in first.candidates.items():
        shown = plain(cid)
        console.print(Text.assemble("  ", (shown, "cyan"), " ", plain(clip(text, width - len(shown) - 4))))
    if first.gold is not None:
        console.print(Text.assemble("  ", ("gold", "dim"), " ", plain(describe_gold(first))))


def describe_gold(item: Item) -> str:
    """The item's gold label in one line."""
    gold = item.gold
    if gold is None:
        return "none"
    if gold.kind == "ranking":
        return tiers_text(gold.tiers)
    if gold.kind == "pairwise":
        return f"{gold.label} (A={gold.a}, B={gold.b}; labels {'/'.join(gold.labels)}; {gold.pair_type or 'pair'})"
    return "; ".join(f"{cid}: " + ", ".join(f"{d} {v:g}" for d, v in dims.items()) for cid, dims in gold.ratings.items())
