"""The report's sections as HTML: one per session (settings, metrics, plots, worst items) and the comparison."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any

from qatui.extras import EXTRAS, has, install_hint
from qatui.report.html import plots
from qatui.report.html.gather import PREFERENCES
from qatui.report.html.items import item_card
from qatui.report.html.markup import Raw, figure, paragraph, section, table
from qatui.report.session_view import BREAKDOWN_KEYS, METRIC_ORDER, fmt
from qatui.store.judge_versions import NOT_RECORDED
from qatui.text import plural

if TYPE_CHECKING:
    from qatui.report.html.gather import JudgeContent, SessionContent


def _judge_metrics(judge: JudgeContent) -> str:
    """A judge's metrics with CIs and coverage, as `sessions show` prints them, and its breakdown by group."""
    parts = [f'<div class="judge"><h4>{escape(judge.name)}</h4>', str(paragraph(judge.coverage, "muted"))]
    if judge.metric_rows:
        parts.append(table(["metric", "value", "95% CI", "n"], judge.metric_rows, classes="metrics"))
    else:
        parts.append(paragraph(judge.no_metric, "muted"))
    if judge.self_agreement:
        parts.append(paragraph(judge.self_agreement, "muted"))
    if judge.leak_free_rows:
        parts.append(table(["metric", "value", "95% CI", "n"], judge.leak_free_rows, classes="metrics",
                           caption="without the items whose candidates copy a reference"))
    if judge.classes:
        from qatui.report.classes_view import caption, class_rows

        header, rows = class_rows(judge.classes)
        parts.append(table(header, rows, classes="metrics", caption=caption(judge.classes)))
    present = [k for k in BREAKDOWN_KEYS
               if any(k in m for groups in judge.breakdown.values() for m in groups.values())]
    if present:
        rows = [[value, *(fmt(metrics.get(k)) for k in present)]
                for per_value in judge.breakdown.values() for value, metrics in per_value.items()]
        groups = " and by ".join(by.replace("_", " ") for by in judge.breakdown)
        parts.append(table(["by", *present], rows, classes="metrics", caption=f"by {groups}"))
    return "".join(parts) + "</div>"


def qatui_table(data: dict[str, Any], title: str) -> str:
    """A `qatui table` dict (`report.table`) as HTML with its caption, and its headline metric with CIs as a plot."""
    from qatui.report.table import KEYS, caption, flat_rows

    header, lines = flat_rows(data)
    parts = [f"<h3>{escape(title)}</h3>", table(header, lines, classes="wide", caption=caption(data))]
    key = next((k for k in KEYS.get(data["gold"] or "", ()) if any(k in r["metrics"] for r in data["rows"])), None)
    if key and len(data["rows"]) > 1 and has("plot"):
        rows = data["rows"]
        svg = plots.metric_intervals([r["label"] for r in rows], [r["metrics"].get(key) for r in rows],
                                     [r["ci"].get(key) for r in rows], key)
        parts.append(figure(svg, f"{key} of each row: the dot is the value, the bar its 95% bootstrap CI "
                                 "over items; bars that overlap much are not told apart by this data."))
    return "".join(parts)


NO_PLOTS = f"no plot: {EXTRAS['plot'].gives} need matplotlib ({install_hint('plot')})"
"""What a report says in place of its plots when matplotlib is not installed (the tables are all there)."""


def _plots(content: SessionContent) -> str:
    """The session's plots, each only where its data exists; a note naming the extra when matplotlib is absent."""
    if not has("plot"):
        return str(paragraph(NO_PLOTS, "note"))
    parts = []
    agreement = {j.name: list(j.agreement.values()) for j in content.judges if j.agreement}
    if agreement:
        parts.append(figure(plots.agreement_histogram(agreement),
                            "Per-item agreement with people: how many items each judge ranks like people "
                            "(right) or the other way round (left)."))
    for judge in content.judges:
        if any(human for human, _ in judge.ratings.values()):
            parts.append(figure(plots.ratings_scatter(judge.name, judge.ratings, judge.rating_r),
                                f"{judge.name}: its score of each response against the human rating "
                                "(x jittered a little so equal ratings do not hide each other)."))
    confusion = {j.name: j.confusion for j in content.judges if j.confusion is not None}
    if confusion:
        parts.append(figure(plots.confusion_matrices(confusion, PREFERENCES),
                            "Pairwise: people's label (rows) against the judge's preference (columns), one count "
                            "per human label; the diagonal is agreement."))
    parts.append(_bias((content.table or {}).get("rows", [])))
    return "".join(parts) or str(paragraph("no plot: nothing judged against people's labels", "muted"))


def _bias(rows: list[dict[str, Any]]) -> str:
    """The position and length bias of `qatui table` rows as a plot, when any row measured one."""
    if not any(r["bias"].get("position_consistency") is not None or "pairs" in r["bias"] for r in rows):
        return ""
    return figure(plots.bias_bars(rows),
                  "Position bias: pairs whose verdict stays the same when the order is swapped. Length bias: how "
                  "often the judge prefers the longer of two responses people told apart, beside how often people "
                  "do (a judge far above people favours length).")


def session_section(content: SessionContent, anchor: str) -> Raw:
    """One session: settings, each judge's metrics, the `qatui table` view, plots and the worst items."""
    parts = []
    if content.note:
        parts.append(paragraph(content.note, "note"))
    parts.append(table(["setting", "value"], content.settings, classes="settings"))
    parts.append("<h3>Metrics (95% bootstrap CIs over items)</h3>")
    if content.leak_note:
        parts.append(paragraph(content.leak_note, "note"))
    parts.append('<div class="judges">' + "".join(_judge_metrics(judge) for judge in content.judges) + "</div>")
    if content.table:
        parts.append(qatui_table(content.table, "As qatui table prints it (×100)"))
    if content.table is not None:
        parts.append("<h3>Plots</h3>" + _plots(content))
        parts.append(f"<h3>Where judges disagree most with people ({plural(len(content.worst), 'item')})</h3>")
        if content.worst:
            parts.append(paragraph("Worst first: the items whose least agreeing judge agrees least (the badges are "
                                   "each judge's agreement on the item). Each judge's work is shown as "
                                   "qatui sessions show ID --item ITEM prints it.", "muted"))
            parts += [item_card(detail) for detail in content.worst]
        else:
            parts.append(paragraph("no item where a judge disagrees with people (or no gold to compare with)", "muted"))
    return section(f"Session {content.title}", "".join(str(p) for p in parts), anchor)


def comparison_section(data: dict[str, Any], anchor: str) -> Raw:
    """`sessions compare` as HTML: runs lettered A, B, …, metrics with Δ against A, agreement, disagreements."""
    runs = data["runs"]
    parts = [table(["run", "session", "judge", "version", "done", "failed"],
                   [[r["letter"], r["label"] if r["label"] == r["session"] else f"{r['label']} ({r['session']})",
                     r["judge"], r.get("version") or NOT_RECORDED, r["n_done"], r["n_failed"]] for r in runs],
                   classes="settings")]
    parts += [paragraph(f"{line}: their figures are not of one judge (`qatui sessions diff` shows what changed)",
                        "note") for line in data.get("versions", [])]
    if data.get("note"):
        parts.append(paragraph(data["note"], "note"))
    if data.get("gold"):
        parts.append(paragraph(data["gold"], "muted"))
    keys = [k for k in METRIC_ORDER if any(k in r["metrics"] for r in runs)]
    keys += sorted({k for r in runs for k in r["metrics"]} - set(keys))
    if keys:
        base = runs[0]["metrics"]
        rows = [[r["letter"], *(_with_delta(r["metrics"].get(k), base.get(k), i > 0) for k in keys)]
                for i, r in enumerate(runs)]
        parts.append(table(["run", *keys], rows, classes="metrics wide", caption="metrics (Δ against A)"))
    if data.get("table"):
        parts.append(qatui_table(data["table"], "As qatui table prints it (×100, Δ: paired bootstrap against A)"))
        parts.append(_bias(data["table"]["rows"]))
    if data["agreement"]:
        rows = [[f"{a['pair'][0]}–{a['pair'][1]}", *(fmt(a["stats"].get(k)) for k in ("kendall", "top1", "preference")),
                 max(a["n"].values(), default=0)] for a in data["agreement"]]
        parts.append(table(["pair", "mean tau", "top-1 agree", "preference agree", "items"], rows,
                           classes="metrics", caption="agreement between runs"))
    for group in data.get("checklist_agreement", []):
        rows = [[dim, fmt(s["alpha"]), fmt(s["kappa"]), s["n_units"], s["n_complete"]]
                for dim, s in group["per_dimension"].items()]
        parts.append(table(["dimension", "Krippendorff alpha", "Fleiss kappa", "units", "all answered"], rows,
                           classes="metrics", caption=f"checklist agreement ({group['checklist']})"))
    if data["disagreements"]:
        rows = [[d["item_id"], f"{d['pair'][0]}–{d['pair'][1]}", f"{d['tau']:+.3f}", " | ".join(d["rankings"])]
                for d in data["disagreements"]]
        parts.append(table(["item", "pair", "tau", "rankings (first run | second run)"], rows,
                           classes="wide", caption="items where two runs disagree most"))
    return section(f"Comparison on {data['dataset']}", "".join(str(p) for p in parts), anchor)


def _with_delta(value: float | None, base: float | None, show: bool) -> str:
    """'0.512 (+0.031)': a value with its delta against run A."""
    text = fmt(value)
    if show and value is not None and base is not None:
        text += f" ({value - base:+.3f})"
    return text
