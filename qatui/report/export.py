"""Session exports: jsonl (one stored result a line), csv (one candidate a row), md (a report).

Exports carry the session's metadata and results only; the store never holds an API key,
so neither does an export.
"""

from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING

from qatui.events import Verdict
from qatui.report.session_view import coverage_text
from qatui.text import natural_key, plural
from qatui.ties import DEFAULT_DIGITS, judges_digits, tier_ranks

if TYPE_CHECKING:
    from qatui.store.session import Session

CSV_COLUMNS = ["session", "item_id", "judge", "status", "candidate", "shown_as", "score", "rank", "preference", "failure"]


def export_jsonl(session: Session) -> str:
    """One JSON object per (item, judge): the stored result with its verdict and calls."""
    lines = []
    for (item_id, judge), doc in _in_order(session):
        lines.append(json.dumps({"session": session.id, **doc}, ensure_ascii=False))
    return "\n".join(lines) + ("\n" if lines else "")


def export_csv(session: Session) -> str:
    """One row per (item, judge, candidate); a failed item is one row with its reason.

    `rank` is the judge's place with its ties: candidates it scored equal share their group's best rank.
    """
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    digits = judges_digits(session.meta)
    for (item_id, judge), doc in _in_order(session):
        row = {"session": session.id, "item_id": item_id, "judge": judge, "status": doc["status"]}
        if doc["status"] == "n/a":
            writer.writerow({**row, "failure": f"not applicable: {doc.get('not_applicable', '')}"})
            continue
        if doc["status"] != "done":
            writer.writerow({**row, "failure": doc["failure"]["reason"]})
            continue
        v = Verdict.model_validate(doc["verdict"], context={"tie_digits": digits.get(judge, DEFAULT_DIGITS)})
        ranks = tier_ranks(v.tiers)  # the judge's ties share a rank, as `sessions import` reads them back
        for cid in v.ranking:
            writer.writerow({
                **row,
                "candidate": cid,
                "shown_as": f"Response {v.order.index(cid) + 1}",
                "score": repr(v.scores[cid]),
                "rank": ranks[cid],
                "preference": v.preference or "",
            })
    return out.getvalue()


def export_md(session: Session) -> str:
    """A Markdown report: metadata, metrics per judge with CIs, and per-item rankings."""
    meta, summary = session.meta, session.summary()
    ds = meta["dataset"]
    lines = [
        f"# qatui session {meta['id']}",
        "",
        *([f"- name: {meta['name']}"] if meta.get("name") and meta["name"] != meta["id"] else []),
        f"- dataset: `{ds['path']}` ({ds['format']}, {plural(ds['n_items'], 'item')}, sha256 `{ds['content_hash'][:12]}`)",
        f"- status: {meta.get('status')}; seed {meta.get('seed')}; created {meta.get('created')}",
        f"- judges: {', '.join(f'{k} {json.dumps(v)}' for k, v in meta.get('judges', {}).items())}",
        "",
    ]
    for judge, doc in summary.items():
        lines += [f"## {judge}", "", coverage_text(doc), ""]
        if doc["metrics"]:
            lines += ["| metric | value | 95% CI |", "|---|---:|---:|"]
            for key, value in doc["metrics"].items():
                ci = doc.get("ci", {}).get(key)
                lines.append(f"| {key} | {value:.3f} | {f'[{ci[0]:.3f}, {ci[1]:.3f}]' if ci else ''} |")
            lines.append("")
    lines += ["## Items", "", "| item | judge | ranking (best first) | preference |", "|---|---|---|---|"]
    for (item_id, judge), doc in _in_order(session):
        if doc["status"] == "done":
            v = doc["verdict"]
            lines.append(f"| {item_id} | {judge} | {' > '.join(v['ranking'])} | {v.get('preference') or ''} |")
        elif doc["status"] == "n/a":
            reason = doc.get("not_applicable", "").replace("|", "/").replace("\n", " ")
            lines.append(f"| {item_id} | {judge} | not applicable: {reason} | |")
        else:
            reason = doc["failure"]["reason"].replace("|", "/").replace("\n", " ")
            lines.append(f"| {item_id} | {judge} | failed: {reason} | |")
    return "\n".join(lines) + "\n"


def _in_order(session: Session) -> list[tuple[tuple[str, str], dict]]:
    """The session's results by item id in natural order (q1, q2, q10), then judge."""
    return sorted(session.results().items(), key=lambda kv: (natural_key(kv[0][0]), kv[0][1]))


EXPORTERS = {"jsonl": export_jsonl, "csv": export_csv, "md": export_md}


def export_session(session: Session, fmt: str) -> str:
    """The session as text in `fmt` (csv, jsonl or md)."""
    return EXPORTERS[fmt](session)
