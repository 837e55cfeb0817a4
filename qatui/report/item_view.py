"""One item of a session in detail: every judge's scores, ranking and gold, and its intermediate work."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from qatui.errors import SessionError
from qatui.metrics.repeated import first_repeat_only
from qatui.events import upgrade_stored_artifact
from qatui.events.labels import candidates_by_label, label_of
from qatui.ties import DEFAULT_DIGITS, rank_label, tiers_text
from qatui.report.artifact_views import (
    RAGAS_ARTIFACTS,
    has_pairs,
    print_checklist_grid,
    print_dimension_scores,
    print_pairs,
    print_ragas_artifact,
    print_ragas_metrics,
)
from qatui.report.baseline_views import BASELINE_ARTIFACTS, print_baseline_artifact, print_length_details
from qatui.report.dataset_view import describe_gold
from qatui.report.jury_view import print_members
from qatui.report.session_view import session_dataset
from qatui.text import clip, escaped, plain, trim_note

if TYPE_CHECKING:
    from rich.console import Console

    from qatui.data.model import Item
    from qatui.store.session import Session


def item_detail(session: Session, item_id: str) -> dict[str, Any]:
    """Everything stored about one item: each judge's scores, ranking, preference and calls, and the gold."""
    dataset = session_dataset(session)
    item = next((it for it in dataset.items if it.id == item_id), None) if dataset else None
    from qatui.ties import judges_digits

    return stored_item(session.id, item_id, item, session.results(), judges_digits(session.meta))


def stored_tiers(verdict: dict[str, Any], digits: int | None) -> list[list[str]]:
    """A stored verdict's tied groups, best first (`Verdict.tiers`; derived from its scores under its judge's
    `tie_digits` for one stored before they were kept): what the judge said, never the strict display ranking."""
    if isinstance(tiers := verdict.get("tiers"), list) and tiers:
        return [[str(cid) for cid in tier] for tier in tiers if isinstance(tier, list)]
    from qatui.ties import ranking_tiers, stored_digits

    places = digits if digits is not None else stored_digits(None)
    return ranking_tiers(verdict.get("scores") or {}, verdict.get("ranking") or [], places)


def stored_item(session_id: str, item_id: str, item: Item | None,
                results: dict[tuple[str, str], dict], digits: dict[str, int] | None = None) -> dict[str, Any]:
    """`item_detail` from what the caller has read already: the item (None when gone) and the session's results.

    Stored artifacts are read in today's form (`events.upgrade_stored_artifact`): a session written before
    both pairwise judges shared one event shows as a new one does."""
    from qatui.store.session import stored_verdict

    results = {judge: doc for (iid, judge), doc in results.items() if iid == item_id}
    if not results:
        raise SessionError(f"session {session_id} has no result for item {item_id!r}")
    data: dict[str, Any] = {"session": session_id, "item_id": item_id, "judges": {}}
    if item is not None:
        data.update(
            question=item.question, references=item.references, context=item.context, candidates=item.candidates,
            gold=item.gold.model_dump(mode="json") if item.gold else None, gold_text=describe_gold(item),
        )
    for judge, doc in results.items():
        entry: dict[str, Any] = {"status": doc["status"]}
        if doc["status"] == "done":
            v = doc["verdict"]
            stored_verdict(v, f"session {session_id}", judge, item_id, (digits or {}).get(judge, DEFAULT_DIGITS))
            entry.update(
                scores=v["scores"], ranking=v["ranking"], tiers=stored_tiers(v, (digits or {}).get(judge)),
                order=v["order"], pair=v.get("pair"),
                preference=v.get("preference"), details=v.get("details", {}), version=v.get("version"),
                artifacts=[upgrade_stored_artifact(a) for a in v.get("artifacts", [])
                           if a.get("type") not in ("judgement", "member_verdict")],
            )
            if members := [{**a, "artifacts": [upgrade_stored_artifact(x) for x in a.get("artifacts", [])]}
                           for a in v.get("artifacts", []) if a.get("type") == "member_verdict"]:
                entry["member_artifacts"] = members
        elif doc["status"] == "n/a":
            entry["not_applicable"] = doc.get("not_applicable", "")
        else:
            entry["failure"] = doc["failure"]
        entry["calls"] = doc.get("calls", [])
        entry["trimmed"] = [{"purpose": c.get("purpose", ""), **c["trimmed"]} for c in entry["calls"] if c.get("trimmed")]
        data["judges"][judge] = entry
    return data


SHOWN_TEXTS = 3
"""References and context passages printed per item (SummEval has eleven references)."""


def print_item_detail(console: Console, data: dict[str, Any]) -> None:
    """One item: the question and reference, then a candidate × judge table of score and rank."""
    console.print(f"[bold]item[/] {escaped(data['item_id'])}  [dim]session {escaped(data['session'])}[/]")
    if "question" in data:
        console.print(f"[bold]question[/] {escaped(clip(data['question'], 300))}")
        for kind, texts, width in (("reference", data["references"], 300), ("context", data["context"], 200)):
            for i, text in enumerate(texts[:SHOWN_TEXTS], 1):
                console.print(f"[dim]{kind} {i}[/] {escaped(clip(text, width))}")
            if len(texts) > SHOWN_TEXTS:
                console.print(f"[dim]… {len(texts) - SHOWN_TEXTS} more {kind}s (--json shows all)[/]")
    else:
        console.print("[yellow]the dataset file cannot be reloaded: showing stored results only[/]")
    judges = data["judges"]
    done = {j: e for j, e in judges.items() if e["status"] == "done"}
    candidates = data.get("candidates") or {cid: "" for e in done.values() for cid in e["order"]}
    table = Table(box=None)
    table.add_column("candidate")
    table.add_column("shown as", style="dim")
    for judge in done:
        table.add_column(f"{judge} score", justify="right")
        table.add_column("rank", justify="right")
    table.add_column("text")
    order = next((e["order"] for e in done.values()), [])
    for cid, text in candidates.items():
        cells = [escaped(cid), label_of(order, cid) or ""]
        for e in done.values():
            cells += [f"{e['scores'].get(cid, float('nan')):.4f}", rank_label(stored_tiers(e, None), cid)]
        cells.append(escaped(clip(text, 60)))
        table.add_row(*cells)
    console.print(table)
    if data.get("gold_text"):
        console.print(f"[bold]gold[/] {escaped(data['gold_text'])}")
    for judge, e in judges.items():
        print_judge_entry(console, judge, e)


def print_repeats(console: Console, details: dict[str, Any]) -> None:
    """A repeated judgement's rule and what each repeat said (its tied groups, '=' inside one, and A / B / tie)."""
    repeats = details.get("repeats")
    if not isinstance(repeats, list) or not repeats:
        return
    console.print(Text(plain(f"  asked {len(repeats)} times, aggregate: {details.get('aggregation', '?')}"),
                       style="dim"))
    for i, record in enumerate(repeats, 1):
        if not isinstance(record, dict) or not isinstance(tiers := record.get("tiers"), list):
            continue
        groups = tiers_text([[str(c) for c in tier] for tier in tiers if isinstance(tier, list)])
        pref = f"  preference {record['preference']}" if record.get("preference") else ""
        console.print(Text(plain(f"    repeat {i}: {groups}{pref}"), style="dim"))


def print_judge_entry(console: Console, judge: str, e: dict[str, Any]) -> None:
    """One judge's part of an item (an `item_detail` entry): its ranking, the models used and its work, or why none."""
    if e["status"] == "done":
        tiers = stored_tiers(e, None)  # what the judge said: its ties kept (`item_detail` gives them)
        line = tiers_text(tiers)
        if len(tiers) == 1 and len(tiers[0]) > 1:
            line += " (no decision: all tied)"
        pref = f"  preference {e['preference']} (A={e['pair'][0]}, B={e['pair'][1]})" if e.get("preference") else ""
        console.print(Text.assemble((plain(judge), "bold"), plain(f" ranking {line}{pref}")))
        print_repeats(console, e["details"])
        models = [f"{kind} {e['details'][kind]}" for kind in ("nli", "embedder") if e["details"].get(kind)]
        if models:
            console.print(f"  [dim]models used: {escaped(', '.join(models))}[/]")
        by_label = candidates_by_label(e["order"])
        print_artifacts(console, e["artifacts"], by_label)
        if e.get("member_artifacts"):
            print_members(console, e)
            repeated = any(m.get("repeat") for m in e["member_artifacts"])  # a jury asked K times: each repeat's own
            for member in (m for m in e["member_artifacts"] if m["status"] == "done" and m["artifacts"]):
                which = f" in repeat {int(member.get('repeat') or 0) + 1}" if repeated else ""
                console.print(f"  [bold]{escaped(member['member'])}[/] [dim]its steps{which}[/]")
                print_artifacts(console, member["artifacts"], by_label)
                if has_pairs(member["details"]):
                    print_pairs(console, member["artifacts"], member["details"], by_label)
        first_only = first_repeat_only(e["details"])
        if isinstance(per_label := e["details"].get("dimension_scores"), dict):
            geval = "methods" in e["details"]  # G-Eval's 1-5 ratings, not CheckEval's share of yes
            title = "G-Eval score (1-5) per dimension" if geval else "share of yes per dimension"
            print_dimension_scores(console, per_label, e["order"], title + first_only)
        if has_pairs(e["details"]):
            print_pairs(console, e["artifacts"], e["details"], by_label)
        if isinstance(e["details"].get("chosen_by"), str) and isinstance(e["details"].get("metric"), str):
            print_ragas_metrics(console, e["details"], e["order"])
            if first_only:
                console.print(f"  [yellow]these metrics are{escaped(first_only)}[/]")
        if isinstance(e["details"].get("lengths"), dict) and "unit" in e["details"]:
            print_length_details(console, e["details"])
    elif e["status"] == "n/a":
        console.print(f"[dim]{escaped(judge)} not applicable[/]: {escaped(e['not_applicable'])}")
    else:
        console.print(f"[red]{escaped(judge)} failed[/] ({escaped(e['failure']['error_type'])}): {escaped(e['failure']['reason'])}")
    if e["calls"]:
        console.print(f"  [dim]{len(e['calls'])} LLM calls[/]")
    print_thinking(console, e["calls"])
    for cut in e.get("trimmed", []):
        console.print(f"  [yellow]{escaped(cut['purpose'])} prompt {escaped(trim_note(cut))}[/]")


THINKING_SHOWN = 300
"""Characters of each call's thinking printed by `sessions show --item` (--json holds what the call kept)."""


def print_thinking(console: Console, calls: list[dict]) -> None:
    """What a reasoning model thought before each answer, one clipped line per call that has any (never the answer)."""
    for call in calls:
        if not (thought := str(call.get("thinking") or "")):
            continue
        tokens = int(call.get("reasoning_tokens") or 0)
        about = f"{len(thought):,} chars" + (f", {tokens:,} tokens" if tokens else "")
        console.print(Text.assemble(("  thinking ", "dim"), plain(call.get("purpose", "")), (f" ({about}): ", "dim"),
                                    plain(clip(thought, THINKING_SHOWN))))


def print_artifacts(console: Console, artifacts: list[dict], by_label: dict[str, str]) -> None:
    """A judge's intermediate work: routing, key points × responses entailment, instances, repairs."""
    names = {label: f"{cid}" for label, cid in by_label.items()}
    for a in artifacts:
        kind = a.get("type")
        if kind == "question_classified":
            console.print(f"  [dim]routed[/] {a['question_type']} [dim]({a['source']}: {escaped(clip(a['rationale'], 80))})[/]")
        elif kind == "key_points_extracted":
            points = a["points"]
            scored = [x for x in artifacts if x.get("type") == "entailment_scored"
                      and x["reference_index"] == a["reference_index"]]
            table = Table(title=f"key points of reference {a['reference_index'] + 1}: P(entail) - P(contradict)",
                          title_justify="left", box=None, padding=(0, 1, 0, 0))
            table.add_column("key point", overflow="fold", ratio=3)
            labels = list(dict.fromkeys(x["response"] for x in scored))
            for label in labels:
                table.add_column(escaped(names.get(label, label)), justify="right", no_wrap=True)
            for point in points:
                cells = []
                for label in labels:
                    hit = next((x for x in scored if x["response"] == label and x["key_point"] == point), None)
                    if hit is None:
                        cells.append("")
                        continue
                    value = hit["p_entail"] - hit["p_contradict"]
                    colour = "green" if value > 0.3 else "red" if value < -0.3 else "yellow"
                    cells.append(f"[{colour}]{value:+.2f}[/]")
                table.add_row(escaped(point), *cells)
            console.print(table)
        elif kind == "checklist_answered":
            if a is next(x for x in artifacts if x.get("type") == "checklist_answered"):
                print_checklist_grid(console, [x for x in artifacts if x.get("type") == "checklist_answered"], names)
        elif kind == "instances_generated":
            console.print("  [bold]silver instances[/]")
            for level, text in a["levels"].items():
                console.print(f"    [dim]{escaped(level)}[/] {escaped(clip(text, 100))}")
        elif kind == "ranking_produced" and a.get("repaired"):
            console.print(f"  [yellow]ranking repaired[/]: {escaped(a['repair'])} (raw: {escaped(', '.join(a['raw']))})")
        elif kind in RAGAS_ARTIFACTS:
            print_ragas_artifact(console, a, artifacts, names)
        elif kind in BASELINE_ARTIFACTS:
            print_baseline_artifact(console, a, artifacts, names)
