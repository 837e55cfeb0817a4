"""Plain-terminal views of datasets and sessions (Rich tables), shared by the CLI commands.

Each view has a data function (JSON-safe dict, also used by `--json`) and a `print_*`
function that renders it, so the shell output and the JSON never disagree.
"""

from __future__ import annotations

from collections import Counter
from statistics import mean
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from qatui.errors import DatasetError, SessionError
from qatui.text import clip, plural

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console

    from qatui.data.model import Dataset, Item
    from qatui.engine.events import ItemFailed
    from qatui.store.session import Session

METRIC_ORDER = ("kendall", "spearman", "pearson", "rbo_0.5", "rbo_0.9", "accuracy", "accuracy_no_tie")


def dataset_overview(dataset: Dataset) -> dict[str, Any]:
    """Counts, gold kinds, languages and the first item of a loaded dataset."""
    sizes = [len(it.candidates) for it in dataset.items]
    first = dataset.items[0]
    return {
        "name": dataset.name,
        "path": dataset.path,
        "format": dataset.format,
        "content_hash": dataset.content_hash,
        "n_items": len(dataset.items),
        "gold_kinds": dict(dataset.gold_kinds),
        "no_gold": sum(1 for it in dataset.items if it.gold is None),
        "languages": dict(dataset.languages),
        "question_types": dict(Counter(it.question_type or "unknown" for it in dataset.items)),
        "candidates": {"min": min(sizes), "max": max(sizes), "mean": round(mean(sizes), 2), "total": sum(sizes)},
        "with_reference": sum(1 for it in dataset.items if it.references),
        "with_context": sum(1 for it in dataset.items if it.context),
        "first_item": first.model_dump(mode="json"),
    }


def _counts(counter: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counter.items()) or "-"


def print_dataset(console: Console, dataset: Dataset) -> None:
    """The `datasets inspect` view."""
    o = dataset_overview(dataset)
    table = Table(show_header=False, box=None, title=f"[bold]{escape(o['name'])}[/] ({o['format']})", title_justify="left")
    table.add_column(style="dim")
    table.add_column()
    c = o["candidates"]
    gold = _counts(o["gold_kinds"]) + (f", none {o['no_gold']}" if o["no_gold"] else "")
    for key, value in (
        ("path", o["path"]),
        ("items", str(o["n_items"])),
        ("candidates", f"{c['total']} ({c['min']}-{c['max']} per item, mean {c['mean']})"),
        ("gold", gold),
        ("languages", _counts(o["languages"])),
        ("question types", _counts(o["question_types"])),
        ("with reference", f"{o['with_reference']} of {o['n_items']}"),
        ("with context", f"{o['with_context']} of {o['n_items']}"),
    ):
        table.add_row(key, escape(value))
    console.print(table)
    first = dataset.items[0]
    width = max(console.width, 40)
    console.print(f"\n[bold]first item[/] {escape(first.id)}: {escape(clip(first.question, width - len(first.id) - 13))}")
    if first.references:
        console.print(f"  [dim]reference[/] {escape(clip(first.references[0], width - 13))}")
    for cid, text in first.candidates.items():
        console.print(f"  [cyan]{escape(cid)}[/] {escape(clip(text, width - len(cid) - 4))}")
    if first.gold is not None:
        console.print(f"  [dim]gold[/] {escape(describe_gold(first))}")


def describe_gold(item: Item) -> str:
    """The item's gold label in one line."""
    gold = item.gold
    if gold is None:
        return "none"
    if gold.kind == "ranking":
        return " > ".join(" = ".join(tier) for tier in gold.tiers)
    if gold.kind == "pairwise":
        return f"{gold.label} (A={gold.a}, B={gold.b}; labels {'/'.join(gold.labels)}; {gold.pair_type or 'pair'})"
    return "; ".join(f"{cid}: " + ", ".join(f"{d} {v:g}" for d, v in dims.items()) for cid, dims in gold.ratings.items())


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _metric_rows(doc: dict) -> list[tuple[str, str, str, str]]:
    metrics, ci, n = doc.get("metrics", {}), doc.get("ci", {}), doc.get("n", {})
    keys = [k for k in METRIC_ORDER if k in metrics] + sorted(k for k in metrics if k not in METRIC_ORDER)
    rows = []
    for key in keys:
        lo_hi = ci.get(key)
        rows.append((key, _fmt(metrics[key]), f"[{lo_hi[0]:.3f}, {lo_hi[1]:.3f}]" if lo_hi else "", str(n.get(key, ""))))
    return rows


BREAKDOWN_KEYS = ("kendall", "spearman", "rbo_0.9", "accuracy", "accuracy_no_tie", "pearson_sample")


def _breakdown_table(breakdown: dict[str, dict[str, dict[str, float]]]) -> Table:
    """Metrics per question type / pair type, the main keys only so it fits 80 columns."""
    present = [k for k in BREAKDOWN_KEYS if any(k in m for groups in breakdown.values() for m in groups.values())]
    table = Table(box=None, padding=(0, 1))
    table.add_column("  by", style="dim", no_wrap=True)
    for key in present:
        table.add_column(key, justify="right", no_wrap=True)
    for group, per_value in breakdown.items():
        for value, metrics in per_value.items():
            table.add_row(f"  {escape(value)}", *(_fmt(metrics.get(k)) for k in present))
    return table


def print_session(console: Console, meta: dict, summary: dict[str, dict], failures: list[ItemFailed] = ()) -> None:
    """A session's header, each judge's metrics with 95% CIs, LLM usage and failures."""
    ds = meta["dataset"]
    name = f" [bold]{escape(meta['name'])}[/]" if meta.get("name") and meta["name"] != meta["id"] else ""
    console.print(
        f"[bold]session[/] {escape(meta['id'])}{name}  [dim]{escape(session_status(meta))}[/]  "
        f"dataset {escape(ds['name'])} ({ds['format']}, {plural(ds['n_items'], 'item')})"
    )
    for judge, doc in summary.items():
        table = Table(title=f"[bold]{escape(judge)}[/]  done {doc['n_done']}/{doc['n_items']}, failed {doc['n_failed']}",
                      title_justify="left", box=None)
        for col, just in (("metric", "left"), ("value", "right"), ("95% CI", "right"), ("n", "right")):
            table.add_column(col, justify=just)
        rows = _metric_rows(doc)
        for row in rows:
            table.add_row(*row)
        if not rows:
            why = "no gold labels to compare with" if doc.get("n_done") else "nothing judged, so no metric"
            table.add_row(f"[dim]{why}[/]", "", "", "")
        console.print(table)
        if breakdown := doc.get("breakdown"):
            console.print(_breakdown_table(breakdown))
    llm = meta.get("llm") or {}
    if llm.get("calls"):
        console.print(
            f"[dim]LLM calls[/] {llm['calls']} ({llm['cached']} cached), tokens {llm['prompt_tokens']}+"
            f"{llm['completion_tokens']}, cost ${llm['cost_usd']:.4f}"
        )
    print_failures(console, failures)
    if session_status(meta) == "failed":
        console.print("[bold red]every item failed[/]: nothing was judged, so there is nothing to compare with "
                      "the gold; fix the cause above, then resume")
    if session_status(meta) in ("cancelled", "interrupted", "failed") or failures:
        console.print(f"[dim]resume (retries failures): qatui sessions resume {escape(meta['id'])}[/]")
    console.print(f"[dim]details: qatui sessions show {escape(meta['id'])} --item ITEM_ID[/]")


def print_failures(console: Console, failures: list[ItemFailed], groups: int = 5) -> None:
    """Failures grouped by reason (a dead backbone fails every item the same way), each reason whole."""
    by_reason: dict[tuple[str, str], list[str]] = {}
    for failure in failures:
        by_reason.setdefault((failure.judge, failure.reason), []).append(failure.item_id)
    ranked = sorted(by_reason.items(), key=lambda kv: -len(kv[1]))
    for (judge, reason), items in ranked[:groups]:
        shown = ", ".join(items[:3]) + (f" and {len(items) - 3} more" if len(items) > 3 else "")
        console.print(f"[red]failed[/] {plural(len(items), 'item')} of {escape(judge)} ({escape(shown)}): "
                      f"{escape(reason)}", soft_wrap=False)
    if len(ranked) > groups:
        rest = sum(len(items) for _, items in ranked[groups:])
        console.print(f"[red]... and {plural(rest, 'more failure')} for other reasons[/] "
                      "(`qatui sessions export ID` lists every result)")


def key_metric(summary: dict[str, dict]) -> str:
    """The first headline metric of a session's first judge that has one (for listings)."""
    for doc in summary.values():
        for key, short in (("kendall", "tau"), ("accuracy", "acc"), ("spearman", "rho"), ("pearson", "r")):
            if key in doc.get("metrics", {}):
                return f"{short} {doc['metrics'][key]:+.3f}"
    return ""


def print_session_list(console: Console, rows: list[dict], root: Path) -> None:
    """The `sessions list` view, newest first; fits 80 columns."""
    if not rows:
        console.print(f"no sessions in {root}; start one with `qatui run DATASET --judge NAME` or `qatui demo`")
        return
    named = any(meta.get("name") and meta["name"] != meta["id"] for meta in rows)
    wide = console.width >= 100  # a name column; narrower, the name goes under the id
    table = Table(box=None, padding=(0, 1, 0, 0))
    table.add_column("id", no_wrap=True)
    if named and wide:
        table.add_column("name", max_width=16, overflow="ellipsis", no_wrap=True)
    table.add_column("dataset", max_width=12, overflow="ellipsis", no_wrap=True)
    table.add_column("judges", max_width=14, overflow="ellipsis", no_wrap=True)
    table.add_column("done/fail", justify="right", no_wrap=True)
    table.add_column("metric", no_wrap=True)
    table.add_column("status", no_wrap=True)
    for meta in rows:
        own = meta.get("name") if meta.get("name") != meta["id"] else ""
        name = [escape(own or "")] if named and wide else []
        ident = escape(meta["id"]) + (f"\n  [bold]{escape(clip(own, 18))}[/]" if own and not wide else "")
        if meta.get("status") == "damaged":
            table.add_row(ident, *name, escape(meta.get("error", "")), "", "", "", "[red]damaged[/]")
            continue
        summary = meta.get("summary", {})
        done = sum(d.get("n_done", 0) for d in summary.values())
        failed = sum(d.get("n_failed", 0) for d in summary.values())
        table.add_row(
            ident, *name, escape(meta["dataset"]["name"]), escape(",".join(meta.get("judges", {}))),
            f"{done}/{failed}", key_metric(summary), escape(session_status(meta)),
        )
    console.print(table)


def session_status(meta: dict) -> str:
    """The stored status, except that a 'running' session whose process is gone was interrupted."""
    status = meta.get("status", "")
    pid = meta.get("pid")
    if status == "running" and pid:
        import os

        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return "interrupted"
        except PermissionError:
            pass
    return status


def stored_failures(session: Session) -> list[ItemFailed]:
    """The failures currently standing in a session (superseded ones excluded)."""
    from qatui.engine.events import ItemFailed

    return [
        ItemFailed(item_id=item_id, judge=judge, reason=doc["failure"]["reason"], error_type=doc["failure"]["error_type"])
        for (item_id, judge), doc in session.results().items()
        if doc["status"] == "failed"
    ]


def session_dataset(session: Session) -> Dataset | None:
    """The session's dataset reloaded from its path, or None when it can no longer be read."""
    from qatui.data.loaders import load_dataset

    ds = session.meta["dataset"]
    try:
        return load_dataset(ds["path"], ds["format"])
    except DatasetError:
        return None


def item_detail(session: Session, item_id: str) -> dict[str, Any]:
    """Everything stored about one item: each judge's scores, ranking, preference and calls, and the gold."""
    results = {judge: doc for (iid, judge), doc in session.results().items() if iid == item_id}
    if not results:
        raise SessionError(f"session {session.id} has no result for item {item_id!r}")
    dataset = session_dataset(session)
    item = next((it for it in dataset.items if it.id == item_id), None) if dataset else None
    data: dict[str, Any] = {"session": session.id, "item_id": item_id, "judges": {}}
    if item is not None:
        data.update(
            question=item.question, references=item.references, context=item.context, candidates=item.candidates,
            gold=item.gold.model_dump(mode="json") if item.gold else None, gold_text=describe_gold(item),
        )
    for judge, doc in results.items():
        entry: dict[str, Any] = {"status": doc["status"]}
        if doc["status"] == "done":
            v = doc["verdict"]
            entry.update(
                scores=v["scores"], ranking=v["ranking"], order=v["order"], pair=v.get("pair"),
                preference=v.get("preference"), details=v.get("details", {}),
                artifacts=[a for a in v.get("artifacts", []) if a.get("type") != "judgement"],
            )
        else:
            entry["failure"] = doc["failure"]
        entry["calls"] = doc.get("calls", [])
        data["judges"][judge] = entry
    return data


SHOWN_TEXTS = 3
"""References and context passages printed per item (SummEval has eleven references)."""


def print_item_detail(console: Console, data: dict[str, Any]) -> None:
    """One item: the question and reference, then a candidate × judge table of score and rank."""
    console.print(f"[bold]item[/] {escape(data['item_id'])}  [dim]session {escape(data['session'])}[/]")
    if "question" in data:
        console.print(f"[bold]question[/] {escape(clip(data['question'], 300))}")
        for kind, texts, width in (("reference", data["references"], 300), ("context", data["context"], 200)):
            for i, text in enumerate(texts[:SHOWN_TEXTS], 1):
                console.print(f"[dim]{kind} {i}[/] {escape(clip(text, width))}")
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
    labels = {}
    for e in done.values():
        labels = {cid: f"Response {i + 1}" for i, cid in enumerate(e["order"])}
        break
    for cid, text in candidates.items():
        cells = [escape(cid), labels.get(cid, "")]
        for e in done.values():
            cells += [f"{e['scores'].get(cid, float('nan')):.4f}", str(e["ranking"].index(cid) + 1)]
        cells.append(escape(clip(text, 60)))
        table.add_row(*cells)
    console.print(table)
    if data.get("gold_text"):
        console.print(f"[bold]gold[/] {escape(data['gold_text'])}")
    for judge, e in judges.items():
        if e["status"] == "done":
            line = " > ".join(e["ranking"])
            pref = f"  preference {e['preference']} (A={e['pair'][0]}, B={e['pair'][1]})" if e.get("preference") else ""
            console.print(Text.assemble((judge, "bold"), f" ranking {line}{pref}"))
            by_label = {f"Response {i + 1}": cid for i, cid in enumerate(e["order"])}
            print_artifacts(console, e["artifacts"], by_label)
            if isinstance(per_label := e["details"].get("dimension_scores"), dict):
                print_dimension_scores(console, per_label, e["order"])
            if isinstance(e["details"].get("pairs"), list):
                print_pairs(console, e["artifacts"], e["details"], by_label)
            if isinstance(e["details"].get("chosen_by"), str) and isinstance(e["details"].get("metric"), str):
                print_ragas_metrics(console, e["details"], e["order"])
        else:
            console.print(f"[red]{escape(judge)} failed[/] ({escape(e['failure']['error_type'])}): {escape(e['failure']['reason'])}")
        if e["calls"]:
            console.print(f"  [dim]{len(e['calls'])} LLM calls[/]")


def print_comparison(console: Console, data: dict[str, Any]) -> None:
    """The `sessions compare` view: runs lettered A, B, … with deltas against A, agreement per pair, disagreements."""
    runs = data["runs"]
    metrics = [k for k in METRIC_ORDER if any(k in r["metrics"] for r in runs)]
    metrics += sorted({k for r in runs for k in r["metrics"]} - set(metrics))
    console.print(f"[bold]dataset[/] {escape(data['dataset'])}")
    legend = Table("run", "session", "judge", "done", "failed", box=None, padding=(0, 1, 0, 0))
    for r in runs:
        session = r["session"] if r["label"] == r["session"] else f"{r['label']} ({r['session']})"
        legend.add_row(f"[bold]{r['letter']}[/]", escape(session), escape(r["judge"]), str(r["n_done"]),
                       str(r["n_failed"]))
    console.print(legend)
    if data.get("note"):
        console.print(f"[yellow]note:[/] {escape(data['note'])}")
    if metrics:
        table = Table("run", *metrics, box=None, padding=(0, 1, 0, 0),
                      title="metrics (delta against A)", title_justify="left")
        base = runs[0]["metrics"]
        for i, r in enumerate(runs):
            cells = []
            for k in metrics:
                v = r["metrics"].get(k)
                cell = _fmt(v)
                if i and v is not None and k in base:
                    delta = v - base[k]
                    cell += f" [{'green' if delta > 0 else 'red' if delta < 0 else 'dim'}]({delta:+.3f})[/]"
                cells.append(cell)
            table.add_row(f"[bold]{r['letter']}[/]", *cells)
        console.print(table)
    for a in data["agreement"]:
        shown = ", ".join(f"{k} {v:.3f}" for k, v in a["stats"].items() if isinstance(v, float))
        items = max(a["n"].values(), default=0)
        console.print(f"[bold]agreement {a['pair'][0]}–{a['pair'][1]}[/]: {escape(shown) or 'nothing in common'}"
                      f" [dim]({plural(items, 'item')})[/]")
    for group in data.get("checklist_agreement", []):
        letters = {f"{r['session']}/{r['judge']}": r["letter"] for r in runs}
        members = ", ".join(f"{letters.get(r, r)} ({b})" for r, b in zip(group["runs"], group["backbones"], strict=True))
        table = Table("dimension", "Krippendorff alpha", "Fleiss kappa", "units", "all answered", box=None,
                      title=f"checklist agreement ({escape(group['checklist'])}): {escape(members)}", title_justify="left")
        for dim, stats in group["per_dimension"].items():
            table.add_row(escape(dim), _fmt(stats["alpha"]), _fmt(stats["kappa"]),
                          str(stats["n_units"]), str(stats["n_complete"]))
        console.print(table)
    if data["disagreements"]:
        table = Table("item", "pair", "tau", "rankings (first run | second run)", box=None, padding=(0, 1, 0, 0),
                      title="items where two runs disagree most", title_justify="left")
        for d in data["disagreements"]:
            table.add_row(escape(d["item_id"]), f"{d['pair'][0]}–{d['pair'][1]}", f"{d['tau']:+.3f}",
                          escape(" | ".join(d["rankings"])))
        console.print(table)


def print_artifacts(console: Console, artifacts: list[dict], by_label: dict[str, str]) -> None:
    """A judge's intermediate work: routing, key points × responses entailment, instances, repairs."""
    names = {label: f"{cid}" for label, cid in by_label.items()}
    for a in artifacts:
        kind = a.get("type")
        if kind == "question_classified":
            console.print(f"  [dim]routed[/] {a['question_type']} [dim]({a['source']}: {escape(clip(a['rationale'], 80))})[/]")
        elif kind == "key_points_extracted":
            points = a["points"]
            scored = [x for x in artifacts if x.get("type") == "entailment_scored"
                      and x["reference_index"] == a["reference_index"]]
            table = Table(title=f"key points of reference {a['reference_index'] + 1}: P(entail) - P(contradict)",
                          title_justify="left", box=None, padding=(0, 1, 0, 0))
            table.add_column("key point", overflow="fold", ratio=3)
            labels = list(dict.fromkeys(x["response"] for x in scored))
            for label in labels:
                table.add_column(escape(names.get(label, label)), justify="right", no_wrap=True)
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
                table.add_row(escape(point), *cells)
            console.print(table)
        elif kind == "checklist_answered":
            if a is next(x for x in artifacts if x.get("type") == "checklist_answered"):
                print_checklist_grid(console, [x for x in artifacts if x.get("type") == "checklist_answered"], names)
        elif kind == "instances_generated":
            console.print("  [bold]silver instances[/]")
            for level, text in a["levels"].items():
                console.print(f"    [dim]{escape(level)}[/] {escape(clip(text, 100))}")
        elif kind == "ranking_produced" and a.get("repaired"):
            console.print(f"  [yellow]ranking repaired[/]: {escape(a['repair'])} (raw: {escape(', '.join(a['raw']))})")
        elif kind in RAGAS_ARTIFACTS:
            print_ragas_artifact(console, a, artifacts, names)


ANSWER_CELLS = {"yes": "[green]yes[/]", "no": "[red]no[/]", None: "[yellow]?[/]"}
COMPACT_CELLS = {"yes": "[green]y[/]", "no": "[red]n[/]", None: "[yellow]?[/]"}


def print_checklist_grid(console: Console, answers: list[dict], names: dict[str, str]) -> None:
    """CheckEval: every question, grouped by dimension › sub-dimension, x every response: yes, no, ? (unanswered).

    With more than six responses the cells shrink to y / n / ? so sixteen summaries fit 80 columns.
    """
    labels = sorted(dict.fromkeys(a["response"] for a in answers), key=lambda x: (len(x), x))
    marks = COMPACT_CELLS if len(labels) > 6 else ANSWER_CELLS
    table = Table(title="checklist: question x response (? = unanswered, excluded from the score)",
                  title_justify="left", box=None, padding=(0, 1, 0, 0))
    table.add_column("question", overflow="fold", min_width=24, ratio=1)
    compact = marks is COMPACT_CELLS
    for label in labels:
        header = label.removeprefix("Response ") if compact else names.get(label, label)
        table.add_column(escape(header), justify="center", no_wrap=True)
    cells: dict[str, dict[str, str | None]] = {}
    rows: dict[str, dict] = {}
    for a in sorted(answers, key=lambda x: x.get("position", 0)):
        rows.setdefault(a["question_id"], a)
        cells.setdefault(a["question_id"], {})[a["response"]] = a["answer"]
    group = None
    for qid, a in rows.items():
        if (a["dimension"], a["sub_dimension"]) != group:
            group = (a["dimension"], a["sub_dimension"])
            table.add_row(f"[bold]{escape(a['dimension'])}[/] [dim]› {escape(a['sub_dimension'])}[/]", *[""] * len(labels))
        table.add_row(escape(a["question"]), *(marks.get(cells[qid][label]) if label in cells[qid] else ""
                                               for label in labels))
    console.print(table)
    if compact:
        legend = "  ".join(f"{label.removeprefix('Response ')}={names.get(label, label)}" for label in labels)
        console.print(f"[dim]columns are Response k: {escape(legend)}[/]")


def print_dimension_scores(console: Console, per_label: dict[str, dict], order: list[str]) -> None:
    """CheckEval: each candidate's share of yes per dimension (- when no question was answered)."""
    dims = list(dict.fromkeys(d for scores in per_label.values() for d in scores))
    table = Table("candidate", *dims, title="share of yes per dimension", title_justify="left", box=None)
    for i, cid in enumerate(order):
        scores = per_label.get(f"Response {i + 1}", {})
        table.add_row(escape(cid), *("-" if scores.get(d) is None else f"{scores[d]:.2f}" for d in dims))
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


def print_pairs(console: Console, artifacts: list[dict], details: dict, by_label: dict[str, str]) -> None:
    """Pairwise (CALF): every pair, each order asked (who was A, the choice, the rationale), then the combined result."""
    def name(label: str) -> str:
        return by_label.get(label, label)

    judged = [a for a in artifacts if a.get("type") == "pair_judged"]
    both = details.get("both_orders", True)
    console.print("pairwise comparisons, " + ("each pair in both orders (orders that disagree make a tie)" if both
                                              else "each pair in one order"))  # not a table title: it would wrap
    table = Table(box=None, padding=(0, 1, 0, 0))
    table.add_column("shown as", no_wrap=True)
    table.add_column("choice", no_wrap=True)
    table.add_column("prefers", no_wrap=True)
    table.add_column("rationale", overflow="fold", ratio=1)
    for entry in details["pairs"]:
        x, y = entry["pair"]
        asked = sorted((a for a in judged if {a["first"], a["second"]} == {x, y}), key=lambda a: a["first"] != x)
        for a in asked:
            winner = {"A": a["first"], "B": a["second"]}.get(a.get("choice") or "", a.get("choice") or "-")
            table.add_row(escape(f"A={name(a['first'])} B={name(a['second'])}"), CHOICE_CELLS[a.get("choice")],
                          escape(name(winner)), escape(clip(a.get("rationale", ""), 90)))
        result = entry["result"]
        table.add_row("  [bold]combined[/]", "", f"[bold]{escape(name(result)) if result else '-'}[/]",
                      _pair_outcome(entry["votes"], result))
    console.print(table)
    consistency, positions = details.get("position_consistency") or {}, details.get("positions") or {}
    if both:
        console.print(f"  [dim]position consistency[/] {consistency.get('agreed', 0)} of "
                      f"{consistency.get('judged_both', 0)} pairs judged in both orders agree")
    console.print("  [dim]positions chosen[/] " + ", ".join(f"{k} {v}" for k, v in positions.items()))


RAGAS_ARTIFACTS = ("statements_extracted", "statements_verified", "questions_generated", "context_sentences_selected")
RAGAS_MARKS = {True: "[green]✓[/]", False: "[red]✗[/]", None: "[yellow]?[/]"}
RAGAS_SENTENCES_SHOWN = 20
"""Contexts with more sentences show only the picked ones, the others counted between them."""


def print_ragas_artifact(console: Console, a: dict, artifacts: list[dict], names: dict[str, str]) -> None:
    """RAGAS: statements with ✓ / ✗ / ? (unanswered, excluded), questions written back with their
    similarity to the item's question, context sentences with the needed ones marked ●."""
    kind, label = a["type"], a.get("response", "")
    who = escape(names.get(label, label))

    def table(title: str, *columns: tuple[str, dict]) -> Table:
        console.print(title)  # above the table, not its title: a narrow table would wrap it
        grid = Table(box=None, padding=(0, 1, 0, 0), show_header=False)
        for header, options in columns:
            grid.add_column(header, **options)
        return grid

    if kind == "statements_extracted":
        if not any(x.get("type") == "statements_verified" and x.get("response") == label for x in artifacts):
            grid = table(f"statements of {who} (not verified)", ("", {"width": 3}), ("statement", {"ratio": 1}))
            for statement in a["statements"]:
                grid.add_row("  ·", escape(statement))
            console.print(grid)
    elif kind == "statements_verified":
        verdicts = a["verdicts"]
        answered = [v["supported"] for v in verdicts if v.get("supported") is not None]
        open_ = len(verdicts) - len(answered)
        title = (f"faithfulness of {who}: {sum(answered)} of {len(answered)} statements supported"
                 + (f" ({open_} unanswered, excluded)" if open_ else ""))
        grid = table(title, ("", {"width": 3}), ("statement", {"ratio": 3}), ("reason", {"ratio": 2, "style": "dim"}))
        for v in verdicts:
            grid.add_row(f"  {RAGAS_MARKS[v.get('supported')]}", escape(v["statement"]), escape(v.get("reason", "")))
        console.print(grid)
    elif kind == "questions_generated":
        sims = a.get("similarities") or []
        head = f"mean cosine {mean(sims):.3f}" if sims else "no question"
        grid = table(f"questions written back from {who}: {head}", ("cosine", {"width": 7, "justify": "right"}),
                     ("question", {"ratio": 1}))
        for i, question in enumerate(a["questions"]):
            grid.add_row(f"{sims[i]:.3f}" if i < len(sims) else "-", escape(question))
        console.print(grid)
    elif kind == "context_sentences_selected":
        sentences, picked = a["sentences"], set(a.get("relevant") or [])
        where = who if label else "the item's context"
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
            text = escape(clip(sentence, 240))
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
    console.print(f"  [bold]RAGAS[/] ranks by {escape(ranked.replace('_', ' '))} [dim](chosen by: "
                  f"{escape(details['chosen_by'])}; * = the ranking score)[/]")
    table = Table("candidate", *heads, box=None)
    failures = details.get("failures") or {}
    for i, cid in enumerate(order):
        label = f"Response {i + 1}"
        cells = []
        for m in metrics:
            value = details[m].get(label)
            cells.append(f"{value:.3f}" if value is not None else "[yellow]failed[/]" if m in failures.get(label, {})
                         else "-")
        table.add_row(escape(cid), *cells)
    console.print(table)
    if (shared := details.get("context_relevance_of_context")) is not None:
        console.print(f"  [dim]context relevance of the item's context (same for every response, not ranked)[/] {shared:.3f}")
    for key, per_metric in failures.items():
        name = order[int(key.removeprefix("Response ")) - 1] if key.startswith("Response ") else key
        for metric, reason in per_metric.items():
            console.print(f"  [yellow]{escape(metric)} failed[/] for {escape(name)}: {escape(clip(reason, 120))}")

