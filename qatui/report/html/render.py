"""The report's sections as HTML: one per session (settings, metrics, plots, worst items) and the comparison.

The functions here gather what each section shows; the templates beside this module
(`session.html`, `comparison.html`, `macros.html`) lay it out, escaping every value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from qatui.extras import EXTRAS, has, install_hint
from qatui.report.compare import fmt_tau
from qatui.report.html import plots
from qatui.report.html.gather import PREFERENCES
from qatui.report.html.items import item_card
from qatui.report.html.markup import Markup, render_template
from qatui.report.session_view import METRIC_ORDER, breakdown_rows, fmt
from qatui.store.judge_versions import NOT_RECORDED
from qatui.text import no_decision_note, plural

if TYPE_CHECKING:
    from qatui.report.html.gather import JudgeContent, SessionContent


def _judge_view(judge: JudgeContent) -> dict[str, Any]:
    """A judge's metrics with CIs and coverage, as `sessions show` prints them, its classes and its breakdown by group."""
    view: dict[str, Any] = {"name": judge.name, "coverage": judge.coverage, "metric_rows": judge.metric_rows,
                            "no_metric": judge.no_metric, "self_agreement": judge.self_agreement,
                            "left_out": judge.left_out,
                            "leak_free_rows": judge.leak_free_rows, "classes": None, "breakdown": None}
    if judge.classes:
        from qatui.report.classes_view import caption, class_rows

        header, rows = class_rows(judge.classes)
        view["classes"] = {"header": header, "rows": rows, "caption": caption(judge.classes)}
    header, rows = breakdown_rows({"breakdown": judge.breakdown, "breakdown_n": judge.breakdown_n})
    if len(header) > 2:
        groups = " and by ".join(by.replace("_", " ") for by in judge.breakdown)
        view["breakdown"] = {"header": header, "rows": rows,
                             "caption": f"by {groups}; n: the units of the row's first figure (questions or labels)"}
    return view


def qatui_table(data: dict[str, Any], title: str) -> dict[str, Any]:
    """A `qatui table` dict (`report.table`) as the `qatui_table` macro draws it: its rows with their caption, and
    its headline metric with CIs as a plot."""
    from qatui.report.table import KEYS, caption, flat_rows

    header, lines = flat_rows(data)
    view: dict[str, Any] = {"title": title, "header": header, "lines": lines, "caption": caption(data), "plot": None}
    key = next((k for k in KEYS.get(data["gold"] or "", ()) if any(k in r["metrics"] for r in data["rows"])), None)
    if key and len(data["rows"]) > 1 and has("plot"):
        rows = data["rows"]
        svg = plots.metric_intervals([r["label"] for r in rows], [r["metrics"].get(key) for r in rows],
                                     [r["ci"].get(key) for r in rows], key)
        view["plot"] = (Markup(svg), f"{key} of each row: the dot is the value, the bar its 95% bootstrap CI "
                                     "over items; bars that overlap much are not told apart by this data.")
    return view


NO_PLOTS = f"no plot: {EXTRAS['plot'].gives} need matplotlib ({install_hint('plot')})"
"""What a report says in place of its plots when matplotlib is not installed (the tables are all there)."""


def _plots(content: SessionContent) -> list[tuple[Markup, str]]:
    """The session's plots with their captions, each only where its data exists (matplotlib installed)."""
    found = []
    agreement = {j.name: list(j.agreement.values()) for j in content.judges if j.agreement}
    if agreement:
        undecided = ", ".join(f"{j.name} {j.undecided} of {len(j.agreement)}" for j in content.judges if j.undecided)
        found.append((plots.agreement_histogram(agreement),
                      "Per-item agreement with people: how many items each judge ranks like people "
                      "(right) or the other way round (left)."
                      + (f" Items a judge made no decision on (every response tied; for ratings, on a dimension) "
                         f"are counted at 0: {undecided}."
                         if undecided else "")))
    for judge in content.judges:
        if any(human for human, _ in judge.ratings.values()):
            found.append((plots.ratings_scatter(judge.name, judge.ratings, judge.rating_r),
                          f"{judge.name}: its score of each response against the human rating "
                          "(x jittered a little so equal ratings do not hide each other)."))
    confusion = {j.name: j.confusion for j in content.judges if j.confusion is not None}
    if confusion:
        found.append((plots.confusion_matrices(confusion, PREFERENCES),
                      "Pairwise: people's label (rows) against the judge's preference (columns), one count "
                      "per human label; the diagonal is agreement."))
    bias = _bias((content.table or {}).get("rows", []))
    return [(Markup(svg), caption) for svg, caption in found] + ([bias] if bias else [])


def _bias(rows: list[dict[str, Any]]) -> tuple[Markup, str] | None:
    """The position and length bias of `qatui table` rows as a plot with its caption, when any row measured one."""
    if not any(r["bias"].get("position_consistency") is not None or "pairs" in r["bias"] for r in rows):
        return None
    return (Markup(plots.bias_bars(rows)),
            "Position bias: pairs whose verdict stays the same when the order is swapped. Length bias: how "
            "often the judge prefers the longer of two responses people told apart, beside how often people "
            "do (a judge far above people favours length).")


def session_section(content: SessionContent, anchor: str) -> Markup:
    """One session: settings, each judge's metrics, the `qatui table` view, plots and the worst items."""
    plot_extra = has("plot")
    return render_template("session.html", c=content, anchor=anchor, judges=[_judge_view(j) for j in content.judges],
                  table_view=qatui_table(content.table, "As qatui table prints it (×100)") if content.table else None,
                  plot_extra=plot_extra, no_plots=NO_PLOTS,
                  plots=_plots(content) if plot_extra and content.table is not None else [],
                  worst_count=plural(len(content.worst), "item"), worst=[item_card(d) for d in content.worst])


def comparison_section(data: dict[str, Any], anchor: str) -> Markup:
    """`sessions compare` as HTML: runs lettered A, B, …, metrics with Δ against A, agreement, disagreements."""
    runs = data["runs"]
    keys = [k for k in METRIC_ORDER if any(k in r["metrics"] for r in runs)]
    keys += sorted({k for r in runs for k in r["metrics"]} - set(keys))
    metrics = None
    if keys:
        base = runs[0]["metrics"]
        metrics = {"header": ["run", *keys],
                   "rows": [[r["letter"], *(_with_delta(r["metrics"].get(k), base.get(k), i > 0) for k in keys)]
                            for i, r in enumerate(runs)]}
    table_view = None
    if data.get("table"):
        table_view = qatui_table(data["table"], "As qatui table prints it (×100, Δ: paired bootstrap against A)")
    return render_template(
        "comparison.html", data=data, anchor=anchor, metrics=metrics, table_view=table_view,
        bias=_bias(data["table"]["rows"]) if data.get("table") else None,
        runs=[[r["letter"], r["label"] if r["label"] == r["session"] else f"{r['label']} ({r['session']})",
               r["judge"], r.get("version") or NOT_RECORDED, r["n_done"], r["n_failed"]] for r in runs],
        versions=[f"{line}: their figures are not of one judge (`qatui sessions diff` shows what changed)"
                  for line in data.get("versions", [])],
        agreement_caption="agreement between runs (no decision: items where one run tied every response and the other "
                          "did not, each counted 0 in tau and top-1; neither decided: items where both did, left out)",
        agreement=[[f"{a['pair'][0]}–{a['pair'][1]}", *(fmt(a["stats"].get(k)) for k in ("kendall", "top1", "preference")),
                    max(a["n"].values(), default=0),
                    no_decision_note(a, "kendall", short=True) or "–", a.get("neither_decided") or "–"]
                   for a in data["agreement"]],
        checklists=[{"caption": f"checklist agreement ({group['checklist']})",
                     "rows": [[dim, fmt(s["alpha"]), fmt(s["kappa"]), s["n_units"], s["n_complete"]]
                              for dim, s in group["per_dimension"].items()]}
                    for group in data.get("checklist_agreement", [])],
        disagreements=[[d["item_id"], f"{d['pair'][0]}–{d['pair'][1]}", fmt_tau(d["tau"]), " | ".join(d["rankings"])]
                       for d in data["disagreements"]])


def _with_delta(value: float | None, base: float | None, show: bool) -> str:
    """'0.512 (+0.031)': a value with its delta against run A."""
    text = fmt(value)
    if show and value is not None and base is not None:
        text += f" ({value - base:+.3f})"
    return text
