"""The items where judges disagree most with people, as HTML: question, references, responses, each judge's work.

The texts (question, references, context, responses) are printed whole and escaped. Each
judge's intermediate work (routing, key points with entailment, silver instances, checklist
answers, pairwise rationales, RAGAS statements) is the very view `sessions show --item`
prints (`report.item_view.print_judge_entry`), recorded by Rich and exported as escaped HTML
spans with inline colours.
"""

from __future__ import annotations

import io
from html import escape
from typing import Any

from qatui.events.labels import label_of
from qatui.report.html.markup import Raw, badge, table
from qatui.text import clip

SHOWN_TEXTS = 3
"""References and context passages shown per item; more are counted."""
CONTEXT_CHARS = 1200
"""A context passage longer than this is cut (the question and the responses never are)."""
WORK_WIDTH = 110
"""Columns of the recorded terminal view of a judge's work."""


def judge_work(judge: str, entry: dict[str, Any]) -> str:
    """One judge's part of an item, as `sessions show --item` prints it, in escaped HTML with inline colours."""
    from rich.console import Console

    from qatui.report.item_view import print_judge_entry

    console = Console(record=True, width=WORK_WIDTH, file=io.StringIO(), color_system="truecolor",
                      force_terminal=True, highlight=False, emoji=False)
    print_judge_entry(console, judge, entry)
    return console.export_html(inline_styles=True, code_format="{code}")


def _texts(kind: str, texts: list[str], chars: int | None = None) -> str:
    """References or context passages, the first few, each in a block."""
    if not texts:
        return ""
    out = []
    for i, text in enumerate(texts[:SHOWN_TEXTS], 1):
        shown = clip(text, chars) if chars else text
        out.append(f'<div class="text"><span class="tag">{escape(kind)} {i}</span><span>{escape(shown)}</span></div>')
    if len(texts) > SHOWN_TEXTS:
        out.append(f'<p class="muted">… {len(texts) - SHOWN_TEXTS} more {escape(kind)}s</p>')
    return "".join(out)


def _responses(detail: dict[str, Any]) -> str:
    """The responses whole, with the label each judge saw them under, and each judge's score and rank."""
    done = {judge: e for judge, e in detail["judges"].items() if e["status"] == "done"}
    order = next((e["order"] for e in done.values()), [])
    header = ["response", "text"] + [f"{judge}: score (rank)" for judge in done]
    rows = []
    for cid, text in detail["candidates"].items():
        shown_as = label_of(order, cid) or ""
        cells: list[object] = [Raw(f'<b>{escape(cid)}</b><br><span class="muted">{escape(shown_as)}</span>'),
                               Raw(f'<div class="response">{escape(text)}</div>')]
        for e in done.values():
            score = e["scores"].get(cid)
            rank = e["ranking"].index(cid) + 1 if cid in e["ranking"] else None
            cells.append("–" if score is None else f"{score:.3f} ({rank})")
        rows.append(cells)
    return table(header, rows, classes="responses")


def item_card(detail: dict[str, Any]) -> str:
    """One item: who disagrees and how much, its texts and gold, the responses, then each judge's work."""
    badges = "".join(badge(f"{judge} {value:+.2f}", "bad" if value < 0 else "mid" if value < 0.5 else "good")
                     for judge, value in detail.get("agreement", {}).items())
    parts = [f'<article class="item"><h4>item {escape(detail["item_id"])} {badges}</h4>']
    if "question" in detail:
        parts.append(f'<div class="text question"><span class="tag">question</span><span>{escape(detail["question"])}</span></div>')
        parts.append(_texts("reference", detail["references"]))
        parts.append(_texts("context", detail["context"], CONTEXT_CHARS))
        parts.append(f'<div class="text"><span class="tag">people</span><span>{escape(detail.get("gold_text") or "no gold")}</span></div>')
        parts.append(_responses(detail))
    for judge, entry in detail["judges"].items():
        parts.append(f'<div class="work"><h5>{escape(judge)}</h5><pre>{judge_work(judge, entry)}</pre></div>')
    parts.append("</article>")
    return "".join(parts)
