"""Picking a dataset in New run: a tree of the files qatui can load, and a summary of the one picked."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape
from textual.containers import VerticalScroll
from textual.widgets import DirectoryTree

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


class FormScroll(VerticalScroll, can_focus=False):
    """A scrolling column of fields: Tab goes to its fields, not to the column."""


def dataset_summary(dataset: Dataset) -> str:
    """Rich markup: what the dataset holds and its first items with their gold."""
    from qatui.report import clip, dataset_overview, describe_gold

    o = dataset_overview(dataset)
    c = o["candidates"]
    gold = ", ".join(f"{k} {v}" for k, v in o["gold_kinds"].items()) or "none"
    if o["no_gold"] and o["gold_kinds"]:
        gold += f", none {o['no_gold']}"
    rows = [
        ("items", f"{o['n_items']} · {c['total']} responses ({c['min']}–{c['max']} each)"),
        ("gold", gold),
        ("languages", ", ".join(f"{k} {v}" for k, v in o["languages"].items())),
        ("reference", f"{o['with_reference']} of {o['n_items']} · context {o['with_context']}"),
    ]
    lines = [f"[b]{escape(o['name'])}[/] [dim]({o['format']})[/]"]
    lines += [f"[dim]{key:<10}[/]{escape(value)}" for key, value in rows]
    lines += [f"[$warning]warning[/] {escape(warning)}" for warning in o["warnings"]]
    for item in dataset.items[:PREVIEW_ITEMS]:
        lines.append("")
        lines.append(f"[b]{escape(item.id)}[/] {escape(clip(item.question, 200))}")
        if item.references:
            lines.append(f"  [dim]reference[/] {escape(clip(item.references[0], 120))}")
        lines.append(f"  [dim]{len(item.candidates)} responses · gold[/] {escape(clip(describe_gold(item), 120))}")
    return "\n".join(lines)
