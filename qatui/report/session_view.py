"""A session in the shell: each judge's metrics with CIs, failures grouped by reason, the list of sessions."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from qatui.errors import DatasetError
from qatui.llm.errors import failure_cause, grouped_reason
from qatui.store.judge_versions import shown_version
from qatui.text import (clip, deployments_line, escaped, left_out_caption, no_decision_note, no_order_line, plain,
                        plural, spent, thinking_note, units_cell, usd)

if TYPE_CHECKING:
    from rich.console import Console

    from qatui.data.model import Dataset
    from qatui.events import ItemFailed
    from qatui.store.session import Session

METRIC_ORDER = ("kendall", "spearman", "pearson", "rbo_0.5", "rbo_0.9", "accuracy", "accuracy_no_tie", "kappa",
                "kappa_linear")


def fmt(value: float | None) -> str:
    """A metric value with three decimals, or '-' when absent."""
    return "-" if value is None else f"{value:.3f}"


def metric_rows(doc: dict) -> list[tuple[str, str, str, str]]:
    """(metric, value, '[low, high]' 95% CI, n) of a judge's summary, headline metrics first."""
    metrics, ci = doc.get("metrics", {}), doc.get("ci", {})
    keys = [k for k in METRIC_ORDER if k in metrics] + sorted(k for k in metrics if k not in METRIC_ORDER)
    rows = []
    for key in keys:
        lo_hi, note = ci.get(key), no_decision_note(doc, key)
        rows.append((key, fmt(metrics[key]) + (f" · {note}" if note else ""),
                     f"[{lo_hi[0]:.3f}, {lo_hi[1]:.3f}]" if lo_hi else "", units_cell(doc, key)))
    return rows


BREAKDOWN_KEYS = ("kendall", "spearman", "rbo_0.9", "accuracy", "accuracy_no_tie", "pearson_sample")


def breakdown_rows(doc: dict) -> tuple[list[str], list[list[str]]]:
    """A judge's metrics per question type / pair type (`breakdown`): the header ("by", the main keys, "n") and a
    row a group, its figures and `n`, the units its first figure averaged (questions, or human labels: a 0.500
    may be 2 labels; "-" in a session stored before it was kept). `sessions show` and the HTML report print it."""
    breakdown, counts = doc.get("breakdown") or {}, doc.get("breakdown_n") or {}
    present = [k for k in BREAKDOWN_KEYS if any(k in m for groups in breakdown.values() for m in groups.values())]
    rows = []
    for by, per_value in breakdown.items():
        for value, metrics in per_value.items():
            first = next((k for k in present if metrics.get(k) is not None), None)
            n = (counts.get(by) or {}).get(value, {}).get(first) if first else None
            rows.append([value, *(fmt(metrics.get(k)) for k in present), "-" if n is None else str(n)])
    return ["by", *present, "n"], rows


def _breakdown_table(doc: dict) -> Table:
    """Metrics per question type / pair type (`breakdown_rows`), the main keys only so it fits 80 columns."""
    header, rows = breakdown_rows(doc)
    table = Table(box=None, padding=(0, 1), caption="  n: the units of the row's first figure (questions or labels)",
                  caption_justify="left", caption_style="dim")
    table.add_column(f"  {header[0]}", style="dim", no_wrap=True)
    for key in header[1:]:
        table.add_column(key, justify="right", no_wrap=True)
    for row in rows:
        table.add_row(f"  {escaped(row[0])}", *row[1:])
    return table


def print_session(console: Console, meta: dict, summary: dict[str, dict], failures: list[ItemFailed] = ()) -> None:
    """A session's header, each judge's metrics with 95% CIs, LLM usage and failures."""
    ds = meta["dataset"]
    name = f" [bold]{escaped(meta['name'])}[/]" if meta.get("name") and meta["name"] != meta["id"] else ""
    console.print(
        f"[bold]session[/] {escaped(meta['id'])}{name}  [dim]{escaped(session_status(meta))}[/]  "
        f"dataset {escaped(ds['name'])} ({ds['format']}, {plural(ds['n_items'], 'item')})"
    )
    for judge, doc in summary.items():
        source = (meta.get("judges", {}).get(judge) or {}).get("imported_from")
        origin = f"  [dim]imported from {escaped(source)}[/]" if source else ""
        table = Table(title=f"[bold]{escaped(judge)}[/]{origin}  {coverage_text(doc)}", title_justify="left", box=None)
        for col, just in (("metric", "left"), ("value", "right"), ("95% CI", "right"), ("n", "right")):
            table.add_column(col, justify=just)
        rows = metric_rows(doc)
        for row in rows:
            table.add_row(*row)
        if not rows:
            table.add_row(f"[dim]{no_metric_reason(doc)}[/]", "", "", "")
        console.print(table)
        if caption := left_out_caption(doc):
            console.print(f"  {caption}", markup=False, style="dim")
        if not source and (entry := meta.get("judges", {}).get(judge)) is not None:
            console.print(f"  version {shown_version(entry)}", markup=False, style="dim")
        if line := self_agreement_line(doc.get("self_agreement")):
            console.print(f"  {line}", markup=False)
        if doc.get("breakdown"):
            console.print(_breakdown_table(doc))
        if classes := doc.get("classes"):
            from qatui.report.classes_view import print_classes

            print_classes(console, classes)
        if found := doc.get("human_ceiling"):
            console.print(f"  {ceiling_line(found)}", markup=False)
            if found.get("alt_test_result"):
                console.print(f"  {found['alt_test_result']}", markup=False)
        if "members" in doc:
            from qatui.report.jury_view import print_jury

            print_jury(console, doc, [row[0] for row in rows])
    llm = meta.get("llm") or {}
    if llm.get("calls"):
        console.print(
            f"[dim]LLM calls[/] {llm['calls']:,} ({llm['cached']:,} cached), tokens {int(llm['prompt_tokens']):,}+"
            f"{int(llm['completion_tokens']):,}{thinking_note(llm.get('reasoning_tokens', 0))}, cost {spent(llm['cost_usd'], int(llm.get('unpriced_calls') or 0))}"
        )
        if llm.get("deployments"):
            console.print(f"[dim]deployments[/] {escaped(deployments_line(llm['deployments']))}")
    if line := batch_mode_line(meta):
        console.print(Text.assemble(("batch mode ", "dim"), plain(line)))
    for line in batch_lines(meta.get("batches") or []):
        console.print(Text.assemble(("batch ", "dim"), plain(line)))
    for note in (meta.get("requests") or {}).values():
        console.print(Text.assemble(("requests ", "dim"), plain(note)))
    print_failures(console, failures)
    imported = meta.get("imported")
    if session_status(meta) == "failed":
        then = "import it again" if imported else "resume"
        console.print("[bold red]every item failed[/]: nothing was judged, so there is nothing to compare with "
                      f"the gold; fix the cause above, then {then}")
    if session_status(meta) == "capped":
        from qatui.engine.capping import suggest

        cap = float(meta.get("max_cost_usd") or 0)
        console.print(f"[yellow]stopped at its cost cap[/] (${cap:g}): resume with a higher one: qatui sessions "
                      f"resume {escaped(meta['id'])} --max-cost {suggest(float(llm.get('cost_usd') or 0), cap)}")
    elif session_status(meta) == "stopped":
        console.print(Text.assemble(("stopped: ", "yellow"), plain(str(meta.get("stopped") or "its backbone could not "
                                                                          "answer")),
                                    (f"; resume once it answers: qatui sessions resume {meta['id']}", "dim")))
    elif imported and failures:  # nothing to retry: the rows came from another tool's file
        console.print(Text.assemble(("an imported session is not resumed: its failed rows are as ", "dim"),
                                    (plain(str(imported.get("source", "its file"))), "dim"),
                                    (" gave them; mend them there and import it again", "dim")))
    elif session_status(meta) in ("cancelled", "interrupted", "failed") or failures:
        console.print(f"[dim]resume (retries failures): qatui sessions resume {escaped(meta['id'])}[/]")
    console.print(f"[dim]details: qatui sessions show {escaped(meta['id'])} --item ITEM_ID[/]")


def batch_mode_line(meta: dict) -> str:
    """How the session's backbone calls go, for a session that ever ran in batch mode: "on, failed requests asked
    again in a batch" / "... directly", or "off (resumed with --no-batch)"; "" for one that never did."""
    if meta.get("batch"):
        how = "directly" if meta.get("batch_retry") == "direct" else "in a batch"
        return f"on, failed requests asked again {how} (--batch-retry {meta.get('batch_retry') or 'batch'})"
    return "off (resumed with --no-batch)" if meta.get("batch") is False else ""


def batch_lines(batches: list[dict]) -> list[str]:
    """One line per provider batch of a `--batch` run: its id, state and counts, requests asked again, and what
    it cost against the list price ("batch_abc completed 40/40, 2 failed, 2 asked again; $0.0100, list price
    $0.0200: LiteLLM's batch price")."""
    lines = []
    for doc in batches:
        if not isinstance(doc, dict):
            continue
        text = f"{doc.get('id')} {doc.get('status')} {doc.get('completed', 0)}/{doc.get('requests', 0)}"
        if doc.get("failed"):
            text += f", {doc['failed']} failed"
        if doc.get("retried"):
            text += f", {doc['retried']} asked again"
        if doc.get("gave_up"):
            text += f", {doc['gave_up']} given up"
        if isinstance(doc.get("reasons"), dict) and doc["reasons"]:
            ranked = sorted(doc["reasons"].items(), key=lambda pair: -int(pair[1] or 0))
            text += " (" + "; ".join(f"{reason} ×{n}" for reason, n in ranked[:3]) + \
                    (f"; {len(ranked) - 3} more reasons" if len(ranked) > 3 else "") + ")"
        if doc.get("cancel_asked"):
            text += (f" (cancel refused: {doc['cancel_refused']})" if doc.get("cancel_refused")
                     else " (cancelled by a resume with --no-batch)")
        if not doc.get("collected"):
            text += " (not collected yet: a resume collects it)"
        elif doc.get("price") and doc["price"] != "unpriced":
            text += (f"; {usd(float(doc.get('cost_usd') or 0))}, list price {usd(float(doc.get('list_price_usd') or 0))}: "
                     f"{doc['price']}")
        lines.append(text)
    return lines


def ceiling_line(found: dict[str, Any] | None) -> str:
    """'vs people (3 people, each against the others' majority): kappa 0.412, accuracy 0.700 · human ceiling kappa
    0.620, accuracy 0.800' (`report.beside_people`); '' without two people."""
    if not found:
        return ""
    ceiling = found["ceiling"]
    return (f"vs people ({plural(found['people'], 'person', 'people')}, each against the others' majority): "
            f"kappa {fmt(found['kappa'])}, accuracy {fmt(found['accuracy'])} · human ceiling kappa "
            f"{fmt(ceiling['kappa'])}, accuracy {fmt(ceiling['accuracy'])}{units_note(found)}{split_note(found)}")


def units_note(row: dict[str, Any]) -> str:
    """' on the judge's 6 of 18 decisions' where a judge decided fewer units than the ceiling stands on (a run with
    --limit, a judge not applicable on some items): the ceiling beside it is the people's on those units."""
    if row.get("units") is None or row["units"] >= row.get("ceiling_units", 0):
        return ""
    return f" on the judge's {row['units']} of {row['ceiling_units']} decisions"


def split_note(found: dict[str, Any]) -> str:
    """' · 30 decisions the others split on left out' (`metrics.ceiling.references`), and ' · kappa left out for 2
    people: the others' majority is one class there, where kappa is 0 whatever is said' (`metrics.ceiling._agreement`);
    '' when neither was."""
    notes = f" · {plural(found['split'], 'decision')} the others split on left out" if found.get("split") else ""
    if found.get("one_class"):
        notes += (f" · kappa left out for {plural(found['one_class'], 'person', 'people')}: the others' majority is "
                  "one class there, where kappa is 0 whatever is said")
    return notes


def self_agreement_line(doc: object) -> str:
    """'self-agreement over 3 repeats: choice 0.667 [0.333, 1.000] (3 items) · ranking tau ...', or not applicable.

    The judge against itself (`metrics.self_agreement`), printed beside its agreement with people; '' when the
    judge was not asked to repeat.
    """
    if not isinstance(doc, dict):
        return ""
    if reason := doc.get("not_applicable"):
        return f"self-agreement: not applicable ({reason})"
    names = {"choice": "choice", "ranking": "ranking tau"}
    parts = []
    for kind, name in names.items():
        figure = doc.get(kind)
        if not isinstance(figure, dict) or not isinstance(figure.get("value"), (int, float)):
            continue
        ci = figure.get("ci")
        interval = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if isinstance(ci, list) and len(ci) == 2 else ""
        parts.append(f"{name} {figure['value']:.3f}{interval} ({plural(int(figure.get('n') or 0), 'item')})")
    if undecided := doc.get("ranking_no_decision"):
        parts.append(f"ranking tau 0 between a repeat that tied every response and one that did not, on "
                     f"{plural(int(undecided), 'item')}")
    if undefined := doc.get("ranking_undefined"):
        parts.append(f"ranking tau undefined on {plural(int(undefined), 'item')} (every repeat tied every response)")
    head = f"self-agreement over {doc.get('repeats')} repeats"
    return f"{head}: {' · '.join(parts)}" if parts else f"{head}: no item to measure it on"


def no_metric_reason(doc: dict) -> str:
    """Why a judge's summary has no metric: the run has not ended, nothing judged, a gold that orders no scored
    item, or no gold to compare with."""
    if doc.get("unfinished"):
        return "metrics are computed when the run ends (resume it to finish)"
    if not doc.get("n_done"):
        return "nothing judged, so no metric"
    return no_order_line(doc, why=True) or "no gold labels to compare with"


def coverage_text(doc: dict) -> str:
    """'scored 18 of 20 · 1 not applicable · 1 failed · strict convention': what a judge's figures stand on."""
    from qatui.engine.jobs import coverage

    counts = coverage(doc)
    parts = [f"scored {counts['scored']} of {counts['items']}"]
    if counts["not_applicable"]:
        parts.append(f"{counts['not_applicable']} not applicable")
    if counts["failed"]:
        parts.append(f"{counts['failed']} failed")
    if counts["pending"]:
        parts.append(f"{counts['pending']} not judged yet")
    parts.append(f"{doc.get('convention', 'strict')} convention")
    return " · ".join(parts)


def print_failures(console: Console, failures: list[ItemFailed], groups: int = 5) -> None:
    """Failures grouped by cause (a dead backbone fails every item the same way, however long each took)."""
    by_cause: dict[tuple[str, str], list[ItemFailed]] = {}
    for failure in failures:
        by_cause.setdefault((failure.judge, failure_cause(failure.reason)), []).append(failure)
    ranked = sorted(by_cause.items(), key=lambda kv: -len(kv[1]))
    for (judge, _), group in ranked[:groups]:
        items = [failure.item_id for failure in group]
        shown = ", ".join(items[:3]) + (f" and {len(items) - 3} more" if len(items) > 3 else "")
        reason = grouped_reason([failure.reason for failure in group])
        console.print(f"[red]failed[/] {plural(len(items), 'item')} of {escaped(judge)} ({escaped(shown)}): "
                      f"{escaped(reason)}", soft_wrap=False)
    if len(ranked) > groups:
        rest = sum(len(items) for _, items in ranked[groups:])
        console.print(f"[red]... and {plural(rest, 'more failure')} for other reasons[/] "
                      "(`qatui sessions export ID` lists every result)")


def key_figure(summary: dict[str, dict]) -> tuple[str, str, float | None, str] | None:
    """The first headline metric of a session's first judge that has one, as (whose: the judge's name when the
    session has several, else "", its short name, its value, its no-decision note); the value is None for a
    summary stored before ties counted as ties (it may credit a judge with no opinion). None: no such metric."""
    from qatui.ties import summary_is_current

    named = len(summary) > 1  # whose figure it is, when the session has several judges
    for judge, doc in summary.items():
        for key, short in (("kendall", "tau"), ("accuracy", "acc"), ("spearman", "rho"), ("pearson", "r")):
            if key in doc.get("metrics", {}):
                current = summary_is_current({judge: doc})
                return (judge if named else "", short, float(doc["metrics"][key]) if current else None,
                        no_decision_note(doc, key) if current else "")
    return None


def key_metric(summary: dict[str, dict]) -> str:
    """`key_figure` as listings show it, with its no-decision share ("tau +0.667 · 1/3 no decision").

    A summary stored before ties counted as ties shows no figure: opening the session recomputes it.
    """
    if (figure := key_figure(summary)) is None:
        return ""
    who, short, value, note = figure
    who = f"{who} " if who else ""
    if value is None:
        return f"{who}{short} ? old tie rule"
    return f"{who}{short} {value:+.3f}" + (f" · {note}" if note else "")


def items_done(meta: dict) -> str:
    """Items judged, as people count them: 'done/items', with ' ✗N' for items that failed.

    Counts are per judge (an item two judges judged is one item, not two): the judge that finished
    fewest sets 'done', the one that failed most sets '✗'. '–' when nothing is counted yet.
    """
    summary = meta.get("summary") or {}
    if not summary:
        return "–"
    done = min(int(d.get("n_done", 0)) for d in summary.values())
    failed = max(int(d.get("n_failed", 0)) for d in summary.values())
    total = (meta.get("dataset") or {}).get("n_items") or max(int(d.get("n_items", 0)) for d in summary.values())
    return f"{done}/{total}" + (f" ✗{failed}" if failed else "")


def print_session_list(console: Console, rows: list[dict], root: Path) -> None:
    """The `sessions list` view, newest first, under the sessions folder's absolute path; fits 80 columns."""
    where = escaped(str(Path(root).absolute()))  # whole, so it names the same folder read from any directory
    if not rows:
        console.print(f"no sessions in {where}; start one with `qatui run DATASET --judge NAME` or `qatui demo`",
                      soft_wrap=True)
        return
    console.print(f"[dim]sessions in[/] {where}", soft_wrap=True)
    named = any(meta.get("name") and meta["name"] != meta["id"] for meta in rows)
    wide = console.width >= 100  # a name column; narrower, the name goes under the id
    table = Table(box=None, padding=(0, 1, 0, 0))
    table.add_column("id", no_wrap=True)
    if named and wide:
        table.add_column("name", max_width=16, overflow="ellipsis", no_wrap=True)
    table.add_column("dataset", max_width=12, overflow="ellipsis", no_wrap=True)
    table.add_column("judges", max_width=14, overflow="ellipsis", no_wrap=True)
    table.add_column("items", justify="right", no_wrap=True)
    table.add_column("metric", no_wrap=True)
    table.add_column("status", no_wrap=True)
    for meta in rows:
        own = meta.get("name") if meta.get("name") != meta["id"] else ""
        name = [escaped(own or "")] if named and wide else []
        ident = escaped(meta["id"]) + (f"\n  [bold]{escaped(clip(own, 18))}[/]" if own and not wide else "")
        if meta.get("status") == "damaged":
            table.add_row(ident, *name, escaped(meta.get("error", "")), "", "", "", "[red]damaged[/]")
            continue
        table.add_row(
            ident, *name, escaped(meta["dataset"]["name"]), escaped(",".join(meta.get("judges", {}))),
            items_done(meta), escaped(key_metric(meta.get("summary", {}))), escaped(session_status(meta)),
        )
    console.print(table)


def session_status(meta: dict) -> str:
    """The stored status, except that a 'running' session whose process is gone was interrupted."""
    from qatui.store.session_file import live_writer

    status = meta.get("status", "")
    if status == "running" and meta.get("pid") and live_writer(meta) is None:
        return "interrupted"
    return status


def stored_failures(session: Session) -> list[ItemFailed]:
    """The failures currently standing in a session (superseded ones excluded)."""
    from qatui.events import ItemFailed

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


def unchanged_dataset(session: Session) -> Dataset | None:
    """The session's dataset reloaded, or None when it is gone or changed (its gold is not the one judged on)."""
    dataset = session_dataset(session)
    if dataset is None or dataset.content_hash != session.meta["dataset"]["content_hash"]:
        return None
    return dataset
