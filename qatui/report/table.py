"""`qatui table`: the papers' table, one row per (judge, backbone), from sessions run or reused.

A row holds what a reader of a meta-evaluation weighs: agreement with people (with 95%
CIs, under the chosen convention, and its coverage), what it cost (calls, tokens, dollars,
wall time, failures), two biases measured on the same run (position consistency, length
preference), and the difference against a baseline row with a paired bootstrap CI, so a
gap that is noise shows as one. Rows come from saved sessions: one of the same dataset
content, judge, options, judge version, models and items is reused; otherwise the CLI runs one.
"""

from __future__ import annotations

import csv
import functools
import io
from datetime import datetime
from typing import TYPE_CHECKING, Any

from qatui.data.language import language_reading, read_as_recorded
from qatui.metrics.summary import TABLE_KEYS
from qatui.report.cells import latex_cell, latex_comment, markdown_cell, sheet_cell
from qatui.report.versions import different_versions
from qatui.store.judge_versions import entry_options, entry_version
from qatui.text import NO_GOLD_ORDER, plain, usd

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from qatui.data.model import Dataset
    from qatui.events import Verdict
    from qatui.judges.base import Judge
    from qatui.judges.resources import Resources
    from qatui.store.session import Session, SessionStore

KEYS = TABLE_KEYS
"""The metric columns per gold kind, as the papers print them; the first is the one compared with the baseline."""


def run_signature(judge: Judge, resources: Resources) -> dict[str, Any]:
    """What must match for a saved run of `judge` to be reused: its options and the models it uses."""
    models = {}
    nli = {"nli": resources.nli_name, "nli_zh": resources.nli_name_for("zh")} if judge.uses_nli else {}
    if judge.uses_llm or "llm" in nli.values():  # the backbone as NLI, for every item or for Chinese ones
        models["backbone"] = resources.backbone
    models.update(nli)
    if judge.uses_embedder:
        models["embedder"] = resources.embedder_name
    if "backbone" in models:  # asked with another reasoning effort or thinking budget: not the same run
        models["reasoning"] = resources.reasoning() or None
    return {"options": judge.describe_options(), "models": models}


def find_reusable(store: SessionStore, dataset: Dataset, judge: Judge, resources: Resources) -> Session | None:
    """The newest finished session that judged exactly these items with this judge, options and models, their
    languages read alike (`data.language.language_reading`).

    Finished: not running, and every item of the judge is scored, failed or not applicable.
    """
    wanted = run_signature(judge, resources)
    reading = functools.cache(lambda: language_reading(dataset.items))
    for meta in store.list():  # newest first
        ds = meta.get("dataset") or {}
        if meta.get("status") in ("running", "interrupted", "damaged") or ds.get("content_hash") != dataset.content_hash:
            continue
        if ds.get("n_items") != len(dataset.items) or judge.name not in (meta.get("judges") or {}):
            continue
        if not read_as_recorded(ds.get("languages"), dataset.items, reading):
            continue  # its items' languages were read otherwise: their prompts, models and tokenizers may differ
        models = meta.get("models") or {}
        entry = meta["judges"][judge.name]
        if entry_options(entry) != wanted["options"] or \
                entry_version(entry) not in {judge.version, *judge.earlier_versions()}:
            continue  # other options, or another version of the judge (a prompt since edited): run it again
        if (file := getattr(judge, "file", None)) is not None and \
                ((meta.get("judge_files") or {}).get(judge.name) or {}).get("text") != file.text:
            continue  # a judge file's run is reused only for the very same file text
        if any(models.get(kind) != value for kind, value in wanted["models"].items()):
            continue
        doc = (meta.get("summary") or {}).get(judge.name)
        if doc is None:
            continue
        accounted = doc.get("n_done", 0) + doc.get("n_failed", 0) + doc.get("n_not_applicable", 0)
        if accounted == len(dataset.items):
            return store.open(meta["id"])
    return None


def find_imported(store: SessionStore, dataset: Dataset, name: str) -> Session | None:
    """The newest completed session holding judge `name` imported (`qatui sessions import`) for this dataset."""
    for meta in store.list():  # newest first
        ds = meta.get("dataset") or {}
        if ((meta.get("imported") or {}).get("judge") == name and meta.get("status") == "completed"
                and ds.get("content_hash") == dataset.content_hash and ds.get("limit") is None):
            return store.open(meta["id"])
    return None


def _seconds(meta: dict) -> float | None:
    """Wall time of a session, from its creation to its last update."""
    try:
        return (datetime.fromisoformat(meta["updated"]) - datetime.fromisoformat(meta["created"])).total_seconds()
    except (KeyError, TypeError, ValueError):
        return None


def table_row(session: Session, judge: str, dataset: Dataset, *, convention: str, seed: int,
              reused: bool, verdicts: dict[str, Verdict] | None = None) -> dict[str, Any]:
    """One row: the judge's agreement with people on `dataset`, its coverage, cost and biases.

    `verdicts` are the judge's verdicts when the caller has read them already (else they are read).
    """
    from qatui.engine.spend import deferred_spend, llm_totals
    from qatui.engine.repeats import self_agreement_doc
    from qatui.metrics import summarize
    from qatui.metrics.bias import length_preference
    from qatui.metrics.style_bias import style_biases

    ids = {item.id for item in dataset.items}  # a comparison may pass the items every run judged
    results = {key: doc for key, doc in session.results().items() if key[1] == judge and key[0] in ids}
    verdicts = {item_id: v for item_id, v in (session.verdicts(judge) if verdicts is None else verdicts).items()
                if item_id in ids}
    not_applicable = {item_id: doc.get("not_applicable", "") for (item_id, _), doc in results.items()
                      if doc["status"] == "n/a"}
    metrics = summarize(dataset.items, verdicts, seed=seed, convention=convention, not_applicable=not_applicable)
    failed = sum(1 for doc in results.values() if doc["status"] == "failed")
    meta = session.meta
    backbone = (meta.get("models") or {}).get("backbone") if meta.get("backbones") else None
    return {
        "judge": judge,
        "version": entry_version((meta.get("judges") or {}).get(judge)),
        "backbone": backbone,
        "session": session.id,
        "reused": reused,
        "convention": convention,
        "metrics": metrics.metrics,
        "ci": {key: list(value) for key, value in metrics.ci.items()},
        "n": metrics.n,
        "no_decision": metrics.no_decision,
        "left_out": metrics.left_out,
        **({"classes": metrics.classes} if metrics.classes else {}),
        "coverage": {"items": len(dataset.items), "scored": len(verdicts), "not_applicable": len(not_applicable),
                     "failed": failed},
        "llm": (llm := llm_totals(results.values(), deferred_spend(meta, judge))),
        "answers_cost_usd": answers_cost(llm),  # the cost column's figure (`answers_cost`)
        "answers_unpriced": answers_unpriced(llm),  # how many of them have no known cost: the figure is a floor
        "seconds": None if meta.get("imported") else _seconds(meta),  # an import took no judging time
        "self_agreement": self_agreement_doc(meta, judge, verdicts, seed),
        "bias": {"position_consistency": metrics.metrics.get("position_consistency"),
                 **({"one_order": [round(metrics.metrics["one_order"] * (pairs := metrics.n["one_order"])), pairs]}
                    if "one_order" in metrics.metrics else {}),
                 **length_preference(dataset.items, verdicts), **style_biases(dataset.items, verdicts, backbone)},
    }


def add_baseline_deltas(rows: list[dict], verdicts: list[dict], dataset: Dataset, baseline: int, key: str, *,
                        convention: str, seed: int) -> None:
    """Each row's `key` minus the baseline row's, with a paired bootstrap CI over the items both scored."""
    from qatui.metrics.paired import paired_difference

    for i, row in enumerate(rows):
        row["vs_baseline"] = None if i == baseline else paired_difference(
            dataset.items, verdicts[baseline], verdicts[i], key, convention=convention, seed=seed)
        if row["vs_baseline"] is not None:
            row["vs_baseline"]["key"] = key
            row["vs_baseline"]["baseline"] = rows[baseline]["label"]


def label(row: dict) -> str:
    """A row's name: the judge, with its backbone when it has one."""
    return f"{row['judge']}@{row['backbone']}" if row.get("backbone") else row["judge"]


# -- rendering ------------------------------------------------------------------------------------------


def _cell(value: float | None, ci: list[float] | None = None, scale: float = 100.0) -> str:
    if value is None:
        return "–"
    text = f"{value * scale:.1f}"
    return f"{text} [{ci[0] * scale:.1f}, {ci[1] * scale:.1f}]" if ci else text


def flat_rows(table: dict) -> tuple[list[str], list[list[str]]]:
    """The table as a header and rows of strings (metrics ×100 with CIs), for every output format."""
    from qatui.report.beside_people import KEY, ceiling_cell

    keys = [k for k in KEYS.get(table["gold"] or "", ()) if any(k in r["metrics"] for r in table["rows"])]
    people = [CEILING_COLUMN] if _has_ceiling(table) else []
    header = ["judge", *keys, "no decision", "Δ vs " + table["baseline"] if table["baseline"] else "Δ", "self", *people,
              "scored",
              "n/a", "failed", "calls", "tokens", "cost $", "time s", "pos. cons.", "longer: judge/people",
              "structured: judge/people", "own: judge/people"]
    lines = []
    for row in table["rows"]:
        delta = row.get("vs_baseline")
        bias, llm, cov = row["bias"], row["llm"], row["coverage"]
        lines.append([
            row["label"],
            *(_cell(row["metrics"].get(k), row["ci"].get(k)) for k in keys),
            _undecided(row, keys),
            "baseline" if delta is None and row["label"] == table["baseline"]
            else _cell(delta["delta"], delta["ci"]) if delta else "–",
            _self_cell(row.get("self_agreement")),
            *([ceiling_cell(row.get(KEY))] if people else []),
            f"{cov['scored']}/{cov['items']}", str(cov["not_applicable"]), str(cov["failed"]),
            _calls_cell(llm), str(llm["prompt_tokens"] + llm["completion_tokens"]),
            ("≥" if answers_unpriced(llm) else "") + usd(answers_cost(llm)).removeprefix("$"),
            "–" if row["seconds"] is None else f"{row['seconds']:.0f}",
            _cell(bias.get("position_consistency")) + (f" ({alone[0]}/{alone[1]} one order)"
                                                       if (alone := bias.get("one_order")) else ""),
            _longer(bias),
            *(_shares(bias.get(probe), name) for probe, name in (("structure", "structured"), ("self", "own"))),
        ])
    return header, lines


CEILING_COLUMN = "κ vs people: judge/ceiling"
"""The column of the human ceiling (`report.beside_people.ceiling_cell`), shown where two or more people labelled."""


def answers_cost(llm: dict) -> float:
    """What a row's answers cost: those bought in its session, and those the call cache gave it at the price paid
    when they were bought (a row served from the cache spent nothing, yet its judge is not free).

    The spend of calls whose items a cost cap left pending (`deferred_cost_usd`, in `cost_usd` for the cap's sake)
    is no answer of the row: a resume takes those answers from the cache, where `cached_cost_usd` counts them, so
    counted in both a capped-then-resumed row cost more than the uncapped run that bought the same answers."""
    spent = float(llm.get("cost_usd") or 0.0) - float(llm.get("deferred_cost_usd") or 0.0)
    return spent + float(llm.get("cached_cost_usd") or 0.0)


def answers_unpriced(llm: dict) -> int:
    """How many of a row's answers have no known cost (`llm_totals`' `unpriced_calls` and `cached_unpriced`): its
    `answers_cost` is then a floor, and its cell says so ("≥")."""
    return int(llm.get("unpriced_calls") or 0) + int(llm.get("cached_unpriced") or 0)


def _calls_cell(llm: dict) -> str:
    """'200', or '200 (150 cached)' when the call cache answered some: their time is not in the row's."""
    return f"{llm['calls']} ({llm['cached']} cached)" if llm.get("cached") else str(llm["calls"])


def _has_ceiling(table: dict) -> bool:
    """Whether some row has the human ceiling beside it (two or more people labelled the items)."""
    from qatui.report.beside_people import KEY

    return any(row.get(KEY) for row in table["rows"])


def _self_cell(doc: dict | None) -> str:
    """The judge's agreement with itself over its repeats ×100 with its CI (`metrics.self_agreement.headline`),
    'n/a' for a judge that calls no backbone, '–' when it was asked once."""
    from qatui.metrics.self_agreement import headline

    if isinstance(doc, dict) and doc.get("not_applicable"):
        return "n/a"
    found = headline(doc)
    if found is None:
        return "–"
    kind, value = found
    ci = (doc or {}).get(kind, {}).get("ci")
    return _cell(value, ci if isinstance(ci, list) and len(ci) == 2 else None) + ("" if kind == "choice" else " τ")


def _undecided(row: dict, keys: list[str]) -> str:
    """'2/6': of the headline figure's units, those the judge made no decision on (counted as agreeing with no one)."""
    key = next((k for k in keys if k in row["metrics"]), None)
    undecided = (row.get("no_decision") or {}).get(key)
    return "–" if undecided is None else f"{undecided}/{row['n'].get(key, 0)}"


def _longer(bias: dict) -> str:
    """'40/60': how often judge / people prefer the longer (%), with the pairs the judge tied when it tied any."""
    if "pairs" not in bias:
        return "–"
    ties = bias.get("judge_ties") or 0
    return (f"{bias['judge_longer'] * 100:.0f}/{bias['people_longer'] * 100:.0f}"
            + (f" · {ties}/{bias['pairs']} tied" if ties else ""))
def _shares(probe: dict | None, name: str) -> str:
    """'judge/people' percentages of a `metrics.style_bias` probe, '–' where it measured nothing."""
    return f"{probe[f'judge_{name}'] * 100:.0f}/{probe[f'people_{name}'] * 100:.0f}" if probe else "–"


def to_markdown(table: dict) -> str:
    """A Markdown table, with a line saying what the figures are."""
    header, lines = flat_rows(table)
    out = ["| " + " | ".join(markdown_cell(h) for h in header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(markdown_cell(cell) for cell in line) + " |" for line in lines]
    return "\n".join(out) + "\n\n" + markdown_cell(caption(table)) + "\n"


def to_csv(table: dict) -> str:
    """The same cells as CSV."""
    header, lines = flat_rows(table)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([sheet_cell(h) for h in header])
    writer.writerows([sheet_cell(line[0]), *line[1:]] for line in lines)  # the row's name is text; the rest figures
    return buffer.getvalue()


def to_latex(table: dict) -> str:
    """A booktabs LaTeX tabular (needs \\usepackage{booktabs})."""
    header, lines = flat_rows(table)
    out = [r"\begin{tabular}{l" + "r" * (len(header) - 1) + "}", r"\toprule",
           " & ".join(map(latex_cell, header)) + r" \\", r"\midrule"]
    out += [" & ".join(map(latex_cell, line)) + r" \\" for line in lines]
    out += [r"\bottomrule", r"\end{tabular}", latex_comment(caption(table))]
    return "\n".join(out) + "\n"


def terminal_tables(table: dict, width: int) -> list[Table]:
    """The table for a terminal `width` columns wide: one Rich table when every column fits on one line,
    else the columns in their order (figures first, the lesser counts and probes after) packed into as
    many tables as it takes, each led by the judge column. No cell ever wraps, so a figure and its CI
    stay on one line; a long header wraps at its spaces within its column. Cells are `Text` of plain strings
    (`qatui.text.plain`): a judge's or a dataset's name is shown as written, never read as markup, and measured
    at the width it is shown at.
    """
    from rich.cells import cell_len
    from rich.table import Table
    from rich.text import Text

    header, lines = flat_rows(table)
    columns = [tuple(map(plain, column)) for column in (zip(header, *lines) if lines else ([n] for n in header))]

    def need(column: tuple[str, ...]) -> int:
        """The column's width on one line per cell, its header at most as wide as its longest word or cell."""
        cells = max((cell_len(cell) for cell in column[1:]), default=0)
        return max(cells, *(cell_len(word) for word in column[0].split()), 1)

    needs = [need(column) for column in columns]
    groups: list[list[int]] = []
    used = width
    for i in range(1, len(columns)):
        if not groups or (len(groups[-1]) > 1 and used + needs[i] + 1 > width):
            groups.append([0])
            used = needs[0]
        groups[-1].append(i)
        used += needs[i] + 1  # one space between columns
    views = []
    for n, group in enumerate(groups):
        title = Text(plain(f"{table['dataset']} ({table['items']} items)") + (f", part {n + 1} of {len(groups)}"
                                                                        if len(groups) > 1 else ""))
        view = Table(box=None, padding=(0, 1, 0, 0), collapse_padding=True, pad_edge=False, title=title,
                     title_justify="left", min_width=min(title.cell_len, width))  # a narrow part's title stays whole
        for i in group:
            view.add_column(Text(columns[i][0], no_wrap=False), width=needs[i], no_wrap=True,
                            overflow="fold" if i == 0 else "ellipsis")
        for row in range(len(lines)):
            view.add_row(*(Text(columns[i][row + 1]) for i in group))
        views.append(view)
    return views


def print_terminal(console: Console, table: dict) -> None:
    """The table as terminal tables that fit `console`'s width (`terminal_tables`), then its caption: how `qatui
    table` and `sessions compare` print it, so no figure or CI is cut at any width."""
    from rich.text import Text

    for n, view in enumerate(terminal_tables(table, console.width)):
        if n:
            console.print()
        console.print(view)
    console.print(Text(plain(caption(table))))


def _left_out_lines(table: dict) -> list[str]:
    """Where the rows' headline figure left scored items out for want of a gold order, one line per count (the gold's
    doing, so mostly one for every judge): 'length, rouge-l: pearson on 3 of 6 items, 3 left out whose …'; where it
    left every scored item out, that there is no figure."""
    found: dict[tuple[str, int, int], list[str]] = {}
    for row in table["rows"]:
        keys, left_out = TABLE_KEYS.get(table["gold"], ()), row.get("left_out") or {}
        key = next((k for k in keys if k in row.get("metrics", {})), None) or next((k for k in keys if k in left_out),
                                                                                   None)
        if key is not None and (left := left_out.get(key)):
            found.setdefault((key, row["n"].get(key, 0), left), []).append(row.get("label") or row["judge"])
    return [f"{', '.join(names)}: {key} on {n} of {n + left} items, {left} left out {NO_GOLD_ORDER}" if n else
            f"{', '.join(names)}: no {key}, all {left} scored items left out, {NO_GOLD_ORDER}"
            for (key, n, left), names in found.items()]


def caption(table: dict) -> str:
    """What the figures mean, in one sentence under the table."""
    return (f"{table['dataset']}: agreement with people ×100 with 95% CIs over items (bootstrap; exact binomial "
            f"where every item agreed; {table['convention']} convention); Δ = row minus "
            f"{table['baseline'] or 'the baseline'} on the items both scored, paired bootstrap CI (an interval "
            "across 0 is noise); no decision = of the first figure's units, those where the judge tied every "
            "response, counted as agreeing with no one; longer = how often the judge / people "
            "prefer the longer response (%), a judge's tie preferring neither; structured = the one with more Markdown "
            "lists, headings, tables or code; own = the one its own backbone wrote (the item's meta.models); self = the "
            "judge against itself over its --repeats (×100): the share of repeats that made its own most frequent "
            "choice, or (τ) the mean Kendall tau between two repeats' rankings; calls: those the call cache answered "
            "in parentheses, their cost counted at the price paid when they were bought, their time not in the row's."
            + "".join(f" Versions: {line}, so their figures are not of one judge." for line in different_versions(
                {**row, "name": row.get("label") or row["judge"]} for row in table["rows"]))
            + "".join(f" {line}." for line in _left_out_lines(table))
            + (" one order = of the pairs asked in both orders, those one order alone decided (the other answer "
               "did not parse): their verdicts keep the position bias both orders cancel elsewhere."
               if any((row.get("bias") or {}).get("one_order") for row in table["rows"]) else "")
            + (" kappa = Cohen's kappa of the judge's A / tie / B against every human label (×100; `sessions show` "
               "has its confusion matrix)." if table["gold"] == "pairwise" else "")
            + (f" {CEILING_COLUMN} = where two or more people labelled the items, Cohen's kappa (×100) of the judge "
               "against each person's leave-one-out reference (the others' majority), beside the human ceiling (each "
               "person against the same); pass / fail: whether the alternative annotator test finds the judge could "
               "replace one of them (three or more people, 30 items each)." if _has_ceiling(table) else ""))
