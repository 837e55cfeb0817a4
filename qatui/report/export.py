"""Session exports: jsonl (one stored result a line), csv (one response a row, every judge beside), md (a report).

Exports carry the session's metadata and results only; the store never holds an API key,
so neither does an export.
"""

from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING

from qatui.data.model import PairwiseGold, RankingGold, RatingsGold
from qatui.report.cells import markdown_cell, sheet_cell
from qatui.report.session_view import coverage_text
from qatui.report.strict_json import strict_dumps
from qatui.text import natural_key, plural
from qatui.ties import DEFAULT_DIGITS, judges_digits, tier_ranks, tiers_text

if TYPE_CHECKING:
    from qatui.data.model import Item
    from qatui.events import Verdict
    from qatui.store.session import Session

def export_jsonl(session: Session) -> str:
    """One JSON object per (item, judge): the stored result with its verdict and calls.

    ASCII JSON (every other character as its `\\u` escape): what it quotes from a dataset or a model may hold an
    escape sequence, a C1 control or a bidi override, and none reaches a terminal the export is printed on. Strict
    JSON (`strict_dumps`): a non-finite number a damaged or edited file holds outside the checked scores (a judge's
    details, a call's cost) is null, with its path under the line's `non_finite`, never a bare `NaN` that
    `JSON.parse` and `jq` refuse."""
    from qatui.store.session import stored_verdict

    digits = judges_digits(session.meta)
    lines = []
    for (item_id, judge), doc in _in_order(session):
        if doc["status"] == "done":  # a damaged verdict is said, never exported as done (a NaN score was)
            stored_verdict(doc["verdict"], str(session.path), judge, item_id, digits.get(judge, DEFAULT_DIGITS))
        lines.append(strict_dumps({"session": session.id, **doc}, ensure_ascii=True))
    return "\n".join(lines) + ("\n" if lines else "")


def export_csv(session: Session) -> str:
    """One row per (item, response): its question, text and gold beside every judge's score, rank and status.

    A spreadsheet review needs no join: the question and response come from the session's dataset
    reloaded (empty, with the item and response ids still there, when it is gone or changed).
    Per judge: `J score` (as stored, full precision), `J rank` (1 best; responses it tied share one),
    `J preferred` (a pair's verdict: yes, no or tie for this response), `J status` (done,
    failed, n/a or pending) and `J reason` (why it failed or does not apply). Gold: `gold rank`
    (ranking gold, 1 best, tied responses share one), `gold preferred` (pairwise gold: yes, no
    or tie for this response against the other), `gold DIMENSION` (ratings). A text cell that a spreadsheet
    would run as a formula starts with `'`, as does one that starts with `'` (`report.cells.sheet_cell`).
    """
    from qatui.report.session_view import unchanged_dataset
    from qatui.store.session import stored_verdict

    judges = list(session.meta.get("judges", {}))
    results = session.results()
    dataset = unchanged_dataset(session)
    if dataset is not None:
        dataset = dataset.of_session(session.meta["dataset"])
    items = {item.id: item for item in dataset.items} if dataset is not None else {}
    order = list(items) if items else sorted({item_id for item_id, _ in results}, key=natural_key)
    dims = sorted({dim for item in items.values() if isinstance(item.gold, RatingsGold) for dim in item.gold.dimensions})
    columns = ["session", "item_id", "question", "candidate", "response", "gold rank", "gold preferred",
               *(f"gold {dim}" for dim in dims)]
    for judge in judges:
        columns += [f"{judge} score", f"{judge} rank", f"{judge} preferred", f"{judge} status", f"{judge} reason"]
    digits = judges_digits(session.meta)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for item_id in order:
        item = items.get(item_id)
        docs = {judge: results.get((item_id, judge)) for judge in judges}
        verdicts = {judge: stored_verdict(doc["verdict"], str(session.path), judge, item_id,
                                          digits.get(judge, DEFAULT_DIGITS))
                    for judge, doc in docs.items() if doc is not None and doc["status"] == "done"}
        candidates = list(item.candidates) if item else list(dict.fromkeys(
            cid for doc in docs.values() if doc and doc.get("verdict") for cid in doc["verdict"]["ranking"]))
        for cid in candidates:
            row = {"session": session.id, "item_id": sheet_cell(item_id), "candidate": sheet_cell(cid),
                   "question": sheet_cell(item.question) if item else "",
                   "response": sheet_cell(item.candidates[cid]) if item else "", **_gold_cells(item, cid)}
            for judge, doc in docs.items():
                row.update(_judge_cells(judge, doc, verdicts.get(judge), cid))
            writer.writerow(row)
    return out.getvalue()


def _gold_cells(item: Item | None, cid: str) -> dict[str, str]:
    """The gold columns of one response: its rank, whether people preferred it, its ratings."""
    if item is None or item.gold is None:
        return {}
    gold = item.gold
    if isinstance(gold, RankingGold):
        rank = next((i for i, tier in enumerate(gold.tiers, 1) if cid in tier), None)
        return {"gold rank": str(rank) if rank else ""}
    if isinstance(gold, PairwiseGold):
        if cid not in (gold.a, gold.b):
            return {}
        return {"gold preferred": _preferred(gold.label, "A" if cid == gold.a else "B")}
    return {f"gold {dim}": repr(value) for dim, value in gold.ratings.get(cid, {}).items()}  # ratings: cid -> dims


def _judge_cells(judge: str, doc: dict | None, verdict: Verdict | None, cid: str) -> dict[str, str]:
    """One judge's columns for one response: score, rank (its ties share one), preferred, status and reason;
    `verdict`: the doc's, checked (`store.session.stored_verdict`), when it is done."""
    if doc is None:
        return {f"{judge} status": "pending"}
    cells = {f"{judge} status": doc["status"]}
    if doc["status"] == "n/a":
        return {**cells, f"{judge} reason": sheet_cell(doc.get("not_applicable", ""))}
    if doc["status"] != "done" or verdict is None:
        return {**cells, f"{judge} reason": sheet_cell(doc["failure"]["reason"])}
    if cid in verdict.scores:
        cells[f"{judge} score"] = repr(verdict.scores[cid])
    if (rank := tier_ranks(verdict.tiers).get(cid)) is not None:  # as `sessions import` reads ties back
        cells[f"{judge} rank"] = str(rank)
    if verdict.preference and verdict.pair and cid in verdict.pair:
        cells[f"{judge} preferred"] = _preferred(verdict.preference, "A" if cid == verdict.pair[0] else "B")
    return cells


def _preferred(preference: str, side: str) -> str:
    """Whether the response on `side` (A or B) of a pair was preferred: yes, no or tie."""
    return "tie" if preference == "tie" else "yes" if preference == side else "no"


def export_md(session: Session) -> str:
    """A Markdown report: metadata, metrics per judge with CIs, and per-item rankings.

    Every text from the session, its dataset or a model (names, paths, ids, reasons) is set in as `markdown_cell`
    makes it, so a viewer shows it as written: an id cannot add an image, a link, HTML or a table cell."""
    md = markdown_cell
    meta, summary = session.meta, session.summary()
    ds = meta["dataset"]
    lines = [
        f"# qatui session {md(meta['id'])}",
        "",
        *([f"- name: {md(meta['name'])}"] if meta.get("name") and meta["name"] != meta["id"] else []),
        f"- dataset: {md(ds['path'])} ({md(ds['format'])}, {plural(ds['n_items'], 'item')}, sha256 "
        f"{md(ds['content_hash'][:12])})",
        f"- status: {md(meta.get('status'))}; seed {md(meta.get('seed'))}; created {md(meta.get('created'))}",
        f"- judges: {', '.join(md(f'{k} {json.dumps(v)}') for k, v in meta.get('judges', {}).items())}",
        "",
    ]
    for judge, doc in summary.items():
        lines += [f"## {md(judge)}", "", md(coverage_text(doc)), ""]
        if doc["metrics"]:
            lines += ["| metric | value | 95% CI |", "|---|---:|---:|"]
            for key, value in doc["metrics"].items():
                ci = doc.get("ci", {}).get(key)
                lines.append(f"| {md(key)} | {value:.3f} | {f'[{ci[0]:.3f}, {ci[1]:.3f}]' if ci else ''} |")
            lines.append("")
    from qatui.store.session import stored_verdict

    digits = judges_digits(meta)
    lines += ["## Items", "", "| item | judge | ranking (best first; = a tie) | preference |", "|---|---|---|---|"]
    for (item_id, judge), doc in _in_order(session):
        if doc["status"] == "done":
            v = stored_verdict(doc["verdict"], str(session.path), judge, item_id, digits.get(judge, DEFAULT_DIGITS))
            lines.append(f"| {md(item_id)} | {md(judge)} | {tiers_text(v.tiers, md)} | "  # its ties, as `show` says them
                         f"{md(v.preference or '')} |")
        elif doc["status"] == "n/a":
            lines.append(f"| {md(item_id)} | {md(judge)} | not applicable: {md(doc.get('not_applicable', ''))} | |")
        else:
            lines.append(f"| {md(item_id)} | {md(judge)} | failed: {md(doc['failure']['reason'])} | |")
    return "\n".join(lines) + "\n"


def _in_order(session: Session) -> list[tuple[tuple[str, str], dict]]:
    """The session's results by item id in natural order (q1, q2, q10), then judge."""
    return sorted(session.results().items(), key=lambda kv: (natural_key(kv[0][0]), kv[0][1]))


EXPORTERS = {"jsonl": export_jsonl, "csv": export_csv, "md": export_md}


def export_session(session: Session, fmt: str) -> str:
    """The session as text in `fmt` (csv, jsonl or md)."""
    return EXPORTERS[fmt](session)
