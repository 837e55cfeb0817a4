"""The items where judges disagree most with people, as HTML: question, references, responses, each judge's work.

The texts (question, references, context, responses) are printed whole, escaped by the
template (`item.html`). Each judge's intermediate work (routing, key points with entailment,
silver instances, checklist answers, pairwise rationales, RAGAS statements) is the very view
`sessions show --item` prints (`report.item_view.print_judge_entry`), recorded by Rich and
exported as escaped HTML spans with inline colours.
"""

from __future__ import annotations

import io
from typing import Any

from qatui.events.labels import label_of
from qatui.report.html.markup import Markup, render_template
from qatui.text import clip
from qatui.ties import rank_label

SHOWN_TEXTS = 3
"""References and context passages shown per item; more are counted."""
CONTEXT_CHARS = 1200
"""A context passage longer than this is cut (the question and the responses never are)."""
WORK_WIDTH = 110
"""Columns of the recorded terminal view of a judge's work."""


def judge_work(judge: str, entry: dict[str, Any]) -> Markup:
    """One judge's part of an item, as `sessions show --item` prints it: HTML with inline colours, every text escaped by Rich."""
    from rich.console import Console

    from qatui.report.item_view import print_judge_entry

    console = Console(record=True, width=WORK_WIDTH, file=io.StringIO(), color_system="truecolor",
                      force_terminal=True, highlight=False, emoji=False)
    print_judge_entry(console, judge, entry)
    return Markup(console.export_html(inline_styles=True, code_format="{code}"))


def _responses(detail: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]]]:
    """The responses table's header and rows: each response whole, the label each judge saw it under, and each
    judge's score and rank."""
    from qatui.report.item_view import stored_tiers

    done = {judge: e for judge, e in detail["judges"].items() if e["status"] == "done"}
    order = next((e["order"] for e in done.values()), [])
    header = ["response", "text"] + [f"{judge}: score (rank)" for judge in done]
    rows = []
    for cid, text in detail["candidates"].items():
        cells = []
        for e in done.values():
            score = e["scores"].get(cid)
            cells.append("–" if score is None else f"{score:.3f} ({rank_label(stored_tiers(e, None), cid) or '–'})")
        rows.append({"cid": cid, "shown_as": label_of(order, cid) or "", "text": text, "cells": cells})
    return header, rows


def item_card(detail: dict[str, Any]) -> Markup:
    """One item: who disagrees and how much, its texts and gold, the responses, then each judge's work."""
    badges = [(f"{judge} {value:+.2f}", "bad" if value < 0 else "mid" if value < 0.5 else "good")
              for judge, value in detail.get("agreement", {}).items()]
    context: dict[str, Any] = {}
    if "question" in detail:
        header, responses = _responses(detail)
        context = {"header": header, "responses": responses,
                   "references": detail["references"][:SHOWN_TEXTS],
                   "more_references": max(0, len(detail["references"]) - SHOWN_TEXTS),
                   "context": [clip(text, CONTEXT_CHARS) for text in detail["context"][:SHOWN_TEXTS]],
                   "more_context": max(0, len(detail["context"]) - SHOWN_TEXTS)}
    works = [(judge, judge_work(judge, entry)) for judge, entry in detail["judges"].items()]
    return render_template("item.html", d=detail, badges=badges, works=works, **context)
