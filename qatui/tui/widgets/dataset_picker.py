"""Picking a dataset in New run: a tree of the files qatui can load, and a summary of the one picked."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import DirectoryTree

from qatui.text import plain

if TYPE_CHECKING:
    from qatui.data.model import Dataset

DATASET_SUFFIXES = {".jsonl", ".json", ".csv"}
SKIPPED_FOLDERS = {"__pycache__", "node_modules", "site-packages"}
PREVIEW_ITEMS = 3


class DatasetTree(DirectoryTree):
    """Folders and the files qatui can load; hidden entries and virtualenv clutter left out."""

    def filter_paths(self, paths: Iterable[Path]) -> Iterable[Path]:
        """Hidden entries, caches and virtualenv folders out; regular files only (a FIFO would hang the load), of the
        dataset suffixes."""
        return [p for p in paths if not p.name.startswith(".") and p.name not in SKIPPED_FOLDERS
                and (p.is_dir() or (p.suffix.lower() in DATASET_SUFFIXES and p.is_file()))]

    def process_label(self, label: str | Text) -> Text:
        """A file's name as text, its control characters in view (a name can hold any byte but / and NUL)."""
        return super().process_label(plain(label) if isinstance(label, str) else label)


class FormScroll(VerticalScroll, can_focus=False):
    """A scrolling column of fields: Tab goes to its fields, not to the column."""


def dataset_summary(dataset: Dataset) -> Content:
    """What the dataset holds and its first items with their gold; its texts shown as text, never markup."""
    from qatui.report import clip, dataset_overview, describe_gold, languages_line

    o = dataset_overview(dataset)
    c = o["candidates"]
    gold = ", ".join(f"{k} {v}" for k, v in o["gold_kinds"].items()) or "none"
    if o["no_gold"] and o["gold_kinds"]:
        gold += f", none {o['no_gold']}"
    rows = [
        ("items", f"{o['n_items']} · {c['total']} responses ({c['min']}–{c['max']} each)"),
        ("gold", gold),
        ("languages", languages_line(o)),
        ("reference", f"{o['with_reference']} of {o['n_items']} · context {o['with_context']}"),
    ]
    lines = [Content.from_markup("[b]$name[/] [dim]($format)[/]", name=plain(o["name"]), format=plain(o["format"]))]
    lines += [Content.from_markup("[dim]$key[/]$value", key=f"{key:<10}", value=plain(value)) for key, value in rows]
    lines += [Content.from_markup("[$warning]warning[/] $text", text=plain(warning)) for warning in o["warnings"]]
    for item in dataset.items[:PREVIEW_ITEMS]:
        lines.append(Content(""))
        lines.append(Content.from_markup("[b]$id[/] $question", id=plain(item.id), question=plain(clip(item.question, 200))))
        if item.references:
            lines.append(Content.from_markup("  [dim]reference[/] $text", text=plain(clip(item.references[0], 120))))
        lines.append(Content.from_markup("  [dim]$n responses · gold[/] $gold", n=len(item.candidates),
                                         gold=plain(clip(describe_gold(item), 120))))
    return Content("\n").join(lines)
