"""How each judge's artifacts print: CheckEval's grid, pairwise votes, RAGAS statements and metrics."""

from __future__ import annotations

from statistics import mean
from typing import TYPE_CHECKING

from rich.table import Table

from qatui.events.labels import candidates_by_label, label_number
from qatui.metrics.summary import position_counts
from qatui.text import clip, escaped

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Console

ANSWER_CELLS = {"yes": "[green]yes[/]", "no": "[red]no[/]", None: "[yellow]?[/]"}


COMPACT_CELLS = {"yes": "[green]y[/]", "no": "[red]n[/]", None: "[yellow]?[/]"}


def print_checklist_grid(console: Console, answers: list[dict], names: dict[str, str]) -> None:
    """CheckEval: every question, grouped by dimension › sub-dimension, x every response: yes, no, ? (unanswered).

    With more than six responses the cells shrink to y / n / ? so sixteen summaries fit 80 columns.
    """
    labels = sorted(dict.fromkeys(a["response"] for a in answers), key=lambda x: (len(x), x))
    marks = COMPACT_CELLS if len(labels) > 6 else ANSWER_CELLS
    repeats = len({a.get("repeat", 0) for a in answers})
    title = "checklist: question x response (? = unanswered, excluded from the score)"
    if repeats > 1:
        title += f"; k/K = yes in k of the K of {repeats} repeats that answered it"
    table = Table(title=title, title_justify="left", box=None, padding=(0, 1, 0, 0))
    table.add_column("question", overflow="fold", min_width=24, ratio=1)
    compact = marks is COMPACT_CELLS
    for label in labels:
        header = (label_number(label) or label) if compact else names.get(label, label)
        table.add_column(escaped(header), justify="center", no_wrap=True)
    cells: dict[str, dict[str, list[str | None]]] = {}
    """Question id -> response -> every repeat's answer (one for a judge asked once: the last repeat's overwrote the
    others beside a verdict combining them all)."""
    rows: dict[str, dict] = {}
    for a in sorted(answers, key=lambda x: (x.get("repeat", 0), x.get("position", 0))):
        rows.setdefault(a["question_id"], a)
        cells.setdefault(a["question_id"], {}).setdefault(a["response"], []).append(a["answer"])

    def cell(given: list[str | None]) -> str:
        if len(set(given)) == 1:
            return marks.get(given[0]) or ""
        answered = [x for x in given if x is not None]
        return f"{sum(x == 'yes' for x in answered)}/{len(answered)}"

    group = None
    for qid, a in sorted(rows.items(), key=lambda row: row[1].get("position", 0)):
        if (a["dimension"], a["sub_dimension"]) != group:
            group = (a["dimension"], a["sub_dimension"])
            table.add_row(f"[bold]{escaped(a['dimension'])}[/] [dim]› {escaped(a['sub_dimension'])}[/]", *[""] * len(labels))
        table.add_row(escaped(a["question"]), *(cell(cells[qid][label]) if label in cells[qid] else ""
                                               for label in labels))
    console.print(table)
    if compact:
        legend = "  ".join(f"{label_number(label) or label}={names.get(label, label)}" for label in labels)
        console.print(f"[dim]columns are Response k: {escaped(legend)}[/]")


def print_dimension_scores(console: Console, per_label: dict[str, dict], order: list[str],
                           title: str = "share of yes per dimension") -> None:
    """CheckEval (or G-Eval, with its `title`): each candidate's score per dimension (- when there is none)."""
    dims = list(dict.fromkeys(d for scores in per_label.values() for d in scores))
    table = Table("candidate", *(escaped(d) for d in dims), title=title, title_justify="left", box=None,
                  min_width=len(title))  # a dimension is named by a checklist or a judge file: text, never markup
    for label, cid in candidates_by_label(order).items():
        scores = per_label.get(label, {})
        table.add_row(escaped(cid), *("-" if scores.get(d) is None else f"{scores[d]:.2f}" for d in dims))
    console.print(table)


CHOICE_CELLS = {"A": "A", "B": "B", "tie": "[dim]tie[/]", None: "[yellow]unparsed[/]"}


def _pair_outcome(votes: list[str | None], result: str | None) -> str:
    """How a pair's orders combined, in words: agreement, position bias, or missing answers."""
    counted = [v for v in votes if v is not None]
    if result is None:
        return "[yellow]no order parsed: no result[/]"
    if len(votes) == 1:
        return "asked in one order"
    if len(counted) < len(votes):
        return "[yellow]one order unparsed[/]: the other stands"
    if len(set(counted)) == 1:
        return "[green]both orders agree[/]"
    return f"[red]orders disagree[/] ({'position bias' if 'tie' not in counted else 'a win against a tie'}): tie"


def has_pairs(details: dict) -> bool:
    """Whether a verdict's details hold pairwise comparisons: its own `pairs`, or (a judge asked K times) each
    repeat's (`metrics.repeated.PER_ASKING`)."""
    return isinstance(details.get("pairs"), list) or any(
        isinstance(record, dict) and isinstance(record.get("pairs"), list) for record in _records(details))


def _records(details: dict) -> list[dict]:
    """A repeated verdict's per-repeat records (`details["repeats"]`), [] for a judgement asked once."""
    repeats = details.get("repeats")
    return [r for r in repeats if isinstance(r, dict)] if isinstance(repeats, list) else []


def print_pairs(console: Console, artifacts: list[dict], details: dict, by_label: dict[str, str]) -> None:
    """Pairwise (CALF or a judge file's pairs): every pair, each order asked (who was A, the choice, the rationale),
    then the combined result, and the position-bias counts.

    A judge asked K times gets one such table per repeat, the votes of that repeat only (each artifact names its
    repeat) and that repeat's combined results and counts, then the counts over all K repeats (what the run
    summary pools): the verdict is the repeats' aggregate, printed above. A session stored before each repeat kept
    its own pairs has only the first repeat's results and untagged votes: its votes are listed together, without
    combined results, and its counts said to be the first repeat's.
    """
    def name(label: str) -> str:
        return by_label.get(label, label)

    judged = [a for a in artifacts if a.get("type") == "pair_judged" and a.get("ranked_by") != "win_rate"]
    records = _records(details)
    split = bool(records) and all(isinstance(r.get("pairs"), list) for r in records)
    entries = [e for r in records for e in r.get("pairs") or []] if split else details.get("pairs") or []
    both = details.get("both_orders", any(len(entry.get("votes") or []) > 1 for entry in entries))
    # a judge file's pairs say nothing of the protocol: what was asked tells (it read "both orders" for one)
    if details.get("protocol") == "calf":
        how = "protocol calf: each pair once, the order alternated across items"
    else:
        how = "each pair in both orders (orders that disagree make a tie)" if both else "each pair in one order"
    console.print(f"pairwise comparisons, {how}")  # not a table title: it would wrap
    if split:
        for k, record in enumerate(records):
            console.print(f"  [bold]repeat {k + 1}[/] of {len(records)}")
            console.print(_pair_table([a for a in judged if a.get("repeat", 0) == k], record["pairs"], name))
            _print_positions(console, record, both, f"repeat {k + 1}")
        _print_positions(console, details, both, f"all {len(records)} repeats")
        return
    if records:  # stored before each repeat kept its pairs: the votes are not told apart, the results are repeat 1's
        console.print(f"  [yellow]votes of all {len(records)} repeats together[/] [dim](stored before each vote named "
                      "its repeat: no combined result per repeat)[/]")
        console.print(_pair_table(judged, details.get("pairs") or [], name, combined=False))
        _print_positions(console, details, both, "repeat 1 only")
        return
    console.print(_pair_table(judged, details.get("pairs") or [], name))
    _print_positions(console, details, both, "")


def _pair_table(judged: list[dict], pairs: list[dict], name: Callable[[str], str], combined: bool = True) -> Table:
    """Each pair's orders asked (who was A, the choice, whom it prefers, the rationale), then its combined result."""
    table = Table(box=None, padding=(0, 1, 0, 0))
    table.add_column("shown as", no_wrap=True)
    table.add_column("choice", no_wrap=True)
    table.add_column("prefers", no_wrap=True)
    table.add_column("rationale", overflow="fold", ratio=1)
    for entry in pairs:
        x, y = entry["pair"]
        asked = sorted((a for a in judged if {a["first"], a["second"]} == {x, y}), key=lambda a: a["first"] != x)
        for a in asked:
            winner = {"A": a["first"], "B": a["second"]}.get(a.get("choice") or "", a.get("choice") or "-")
            table.add_row(escaped(f"A={name(a['first'])} B={name(a['second'])}"), CHOICE_CELLS[a.get("choice")],
                          escaped(name(winner)), escaped(clip(a.get("rationale", ""), 90)))
        if combined:
            result = entry["result"]
            table.add_row("  [bold]combined[/]", "", f"[bold]{escaped(name(result)) if result else '-'}[/]",
                          _pair_outcome(entry["votes"], result))
    return table


def _print_positions(console: Console, details: dict, both: bool, whose: str) -> None:
    """The position-bias lines of `details` (a verdict's, or one repeat's record), `whose` saying which askings."""
    consistency, positions = position_counts(details) or {}, details.get("positions") or {}
    of = f" ({whose})" if whose else ""
    if both:
        console.print(f"  [dim]position consistency{of}[/] {consistency.get('agreed', 0)} of "
                      f"{consistency.get('judged_both', 0)} pairs judged in both orders agree")
    if positions:
        console.print(f"  [dim]positions chosen{of}[/] " + ", ".join(f"{k} {v}" for k, v in positions.items()))


RAGAS_ARTIFACTS = ("statements_extracted", "statements_verified", "questions_generated", "context_sentences_selected")


RAGAS_MARKS = {True: "[green]✓[/]", False: "[red]✗[/]", None: "[yellow]?[/]"}
RAGAS_SENTENCES_SHOWN = 20
"""Contexts with more sentences show only the picked ones, the others counted between them."""


def print_ragas_artifact(console: Console, a: dict, artifacts: list[dict], names: dict[str, str]) -> None:
    """RAGAS: statements with ✓ / ✗ / ? (unanswered, excluded), questions written back with their
    similarity to the item's question, context sentences with the needed ones marked ●."""
    kind, label, repeat = a["type"], a.get("response", ""), a.get("repeat", 0)
    repeated = any(x.get("repeat", 0) for x in artifacts)
    who = escaped(names.get(label, label)) + (f" (repeat {repeat + 1})" if repeated else "")

    def table(title: str, *columns: tuple[str, dict]) -> Table:
        console.print(title)  # above the table, not its title: a narrow table would wrap it
        grid = Table(box=None, padding=(0, 1, 0, 0), show_header=False)
        for header, options in columns:
            grid.add_column(header, **options)
        return grid

    if kind == "statements_extracted":
        if not any(x.get("type") == "statements_verified" and x.get("response") == label
                   and x.get("repeat", 0) == repeat for x in artifacts):
            grid = table(f"statements of {who} (not verified)", ("", {"width": 3}), ("statement", {"ratio": 1}))
            for statement in a["statements"]:
                grid.add_row("  ·", escaped(statement))
            console.print(grid)
    elif kind == "statements_verified":
        verdicts = a["verdicts"]
        answered = [v["supported"] for v in verdicts if v.get("supported") is not None]
        open_ = len(verdicts) - len(answered)
        title = (f"faithfulness of {who}: {sum(answered)} of {len(answered)} statements supported"
                 + (f" ({open_} unanswered, excluded)" if open_ else ""))
        grid = table(title, ("", {"width": 3}), ("statement", {"ratio": 3}), ("reason", {"ratio": 2, "style": "dim"}))
        for v in verdicts:
            grid.add_row(f"  {RAGAS_MARKS[v.get('supported')]}", escaped(v["statement"]), escaped(v.get("reason", "")))
        console.print(grid)
    elif kind == "questions_generated":
        sims = a.get("similarities") or []
        head = f"mean cosine {mean(sims):.3f}" if sims else "no question"
        grid = table(f"questions written back from {who}: {head}", ("cosine", {"width": 7, "justify": "right"}),
                     ("question", {"ratio": 1}))
        for i, question in enumerate(a["questions"]):
            grid.add_row(f"{sims[i]:.3f}" if i < len(sims) else "-", escaped(question))
        console.print(grid)
    elif kind == "context_sentences_selected":
        sentences, picked = a["sentences"], set(a.get("relevant") or [])
        where = who if label else "the item's context" + (f" (repeat {repeat + 1})" if repeated else "")
        grid = table(f"context sentences of {where}: {len(picked)} of {len(sentences)} needed",
                     ("", {"width": 3}), ("k", {"width": 3, "justify": "right", "style": "dim"}),
                     ("sentence", {"ratio": 1}))
        skipped = 0
        for i, sentence in enumerate(sentences):
            if len(sentences) > RAGAS_SENTENCES_SHOWN and i not in picked:
                skipped += 1
                continue
            if skipped:
                grid.add_row("", "", f"[dim]… {skipped} not needed[/]")
                skipped = 0
            text = escaped(clip(sentence, 240))
            grid.add_row("  [green]●[/]" if i in picked else "  [dim]·[/]", str(i + 1),
                         text if i in picked else f"[dim]{text}[/]")
        if skipped:
            grid.add_row("", "", f"[dim]… {skipped} not needed[/]")
        console.print(grid)


def print_ragas_metrics(console: Console, details: dict, order: list[str]) -> None:
    """RAGAS: every metric computed, per candidate; the one that ranks is marked, failures named."""
    metrics = [m for m in ("faithfulness", "answer_relevance", "context_relevance") if isinstance(details.get(m), dict)]
    if not metrics:
        return
    ranked = details["metric"]
    heads = [f"{m.replace('_', ' ')}{' *' if m == ranked or (ranked == 'mean' and m in details.get('mean_of', ())) else ''}"
             for m in metrics]
    console.print(f"  [bold]RAGAS[/] ranks by {escaped(ranked.replace('_', ' '))} [dim](chosen by: "
                  f"{escaped(details['chosen_by'])}; * = the ranking score)[/]")
    table = Table("candidate", *heads, box=None)
    failures = details.get("failures") or {}
    for label, cid in candidates_by_label(order).items():
        cells = []
        for m in metrics:
            value = details[m].get(label)
            cells.append(f"{value:.3f}" if value is not None else "[yellow]failed[/]" if m in failures.get(label, {})
                         else "-")
        table.add_row(escaped(cid), *cells)
    console.print(table)
    if (shared := details.get("context_relevance_of_context")) is not None:
        console.print(f"  [dim]context relevance of the item's context (same for every response, not ranked)[/] {shared:.3f}")
    for key, per_metric in failures.items():
        name = candidates_by_label(order).get(key, key)
        for metric, reason in per_metric.items():
            console.print(f"  [yellow]{escaped(metric)} failed[/] for {escaped(name)}: {escaped(clip(reason, 120))}")
