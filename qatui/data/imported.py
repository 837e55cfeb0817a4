"""Matching the rows of a results file to a dataset's items and candidates, every row checked.

An imported judge must look like one of qatui's own: one result per item, covering every
candidate of that item. So a row naming an unknown item or candidate, a second row for the
same (item, candidate), a ranking place past the item's size, a pairwise row on an item that
is not a pair of those two candidates, and an item whose rows leave a candidate out are all
refused, each naming its row. Items with no row at all are returned as `not_judged`; the
caller decides whether that is allowed (`--partial`). Nothing here writes anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from qatui.data.results_file import ResultsFile, Row, raise_problems

if TYPE_CHECKING:
    from qatui.data.model import Dataset, Item


@dataclass
class ItemResult:
    """What the file says about one item: a value per candidate (score or rank), or a pairwise verdict."""

    item_id: str
    values: dict[str, float] = field(default_factory=dict)
    pair: tuple[str, str, str] | None = None
    """(a, b, verdict) of a pairwise row, verdict A / B / tie as the file oriented it."""
    rows: list[int] = field(default_factory=list)
    failure: str | None = None
    """Why the item has no result though it has rows (a ragas NaN): recorded as failed, never scored."""


@dataclass
class Matched:
    """The file's results by item id (dataset order) and the items it has no row for."""

    results: dict[str, ItemResult]
    not_judged: list[str]


def match_rows(results: ResultsFile, dataset: Dataset) -> Matched:
    """Every row resolved to an item (and candidate); every problem found is refused at once, naming rows."""
    items = {item.id: item for item in dataset.items}
    by_text = _text_index(dataset) if results.format == "ragas" else {}
    found: dict[str, ItemResult] = {}
    seen: dict[tuple[str, ...], int] = {}
    problems: list[str] = []
    for row in results.rows:
        problem = _place(row, results, items, by_text, found, seen, dataset.name)
        if problem:
            problems.append(f"{row.where}: {problem}")
    for item_id, result in found.items():
        if results.kind != "pairwise" and (missing := [c for c in items[item_id].candidates if (item_id, c) not in seen]):
            rows = ", ".join(map(str, result.rows[:5]))
            problems.append(f"row {result.rows[0]}: item {item_id!r} (rows {rows}) has no row for candidate"
                            f"{'s' if len(missing) > 1 else ''} {', '.join(missing)}; every candidate of an "
                            "item needs one")
    if problems:
        raise_problems(results.path, problems)
    ordered = {item.id: found[item.id] for item in dataset.items if item.id in found}
    return Matched(ordered, [item.id for item in dataset.items if item.id not in found])


def _text_index(dataset: Dataset) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(question, candidate text) → the (item id, candidate id) pairs with those texts: how a ragas row is matched."""
    index: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for item in dataset.items:
        for cid, text in item.candidates.items():
            index.setdefault((item.question.strip(), text.strip()), []).append((item.id, cid))
    return index


def _place(row: Row, results: ResultsFile, items: dict[str, Item],
           by_text: dict[tuple[str, str], list[tuple[str, str]]],
           found: dict[str, ItemResult], seen: dict[tuple[str, ...], int], name: str) -> str | None:
    """Put one row into `found`; the problem with it, if any."""
    values = row.values
    if results.format == "ragas":
        matches = by_text.get((values["user_input"], values["response"]), [])
        if len(matches) != 1:
            which = (f"matches {len(matches)} (item, candidate) pairs: "
                     + ", ".join(f"{i}/{c}" for i, c in matches[:4])) if matches else "matches no item of " + name
            return (f"its user_input and response {which} (a ragas row is matched by the question and the "
                    "response text, exactly); import ids with --format csv instead")
        item_id, cid = matches[0]
    else:
        item_id = values["item_id"]
        if item_id not in items:
            return f"field 'item_id': {item_id!r} is not an item of {name}"
        cid = values.get("candidate_id")
    item = items[item_id]
    if results.kind == "pairwise":
        return _place_pair(row, item, found, seen)
    if cid not in item.candidates:
        return f"field 'candidate_id': {cid!r} is not a candidate of item {item_id!r} ({', '.join(item.candidates)})"
    if (first := seen.get((item_id, cid))) is not None:
        return f"a second row for item {item_id!r}, candidate {cid!r} (the first is row {first})"
    seen[(item_id, cid)] = row.number
    result = found.setdefault(item_id, ItemResult(item_id))
    result.rows.append(row.number)
    if results.kind == "ranking":
        if values["rank"] > len(item.candidates):
            return f"field 'rank': {values['rank']} is past the {len(item.candidates)} candidates of item {item_id!r}"
        result.values[cid] = float(values["rank"])
    elif values["score"] is None:  # ragas wrote NaN: that metric failed on this sample
        result.failure = result.failure or f"the ragas result has no {results.metric} (NaN) for {cid} (row {row.number})"
    else:
        result.values[cid] = values["score"]
    return None


def _place_pair(row: Row, item: Item, found: dict[str, ItemResult], seen: dict[tuple[str, ...], int]) -> str | None:
    """A pairwise row: its item must be a pair of exactly the two candidates it names, judged once."""
    a, b = row.values["a"], row.values["b"]
    if len(item.candidates) != 2:
        return (f"item {item.id!r} has {len(item.candidates)} candidates; a pairwise verdict needs an item of two "
                "(import scores or a ranking instead)")
    for name, cid in (("a", a), ("b", b)):
        if cid not in item.candidates:
            return f"field {name!r}: {cid!r} is not a candidate of item {item.id!r} ({', '.join(item.candidates)})"
    if a == b:
        return f"fields 'a' and 'b' both name {a!r}; a verdict compares two different candidates"
    if (first := seen.get((item.id,))) is not None:
        return f"a second verdict for item {item.id!r} (the first is row {first})"
    seen[(item.id,)] = row.number
    found[item.id] = ItemResult(item.id, pair=(a, b, row.values["verdict"]), rows=[row.number])
    return None
