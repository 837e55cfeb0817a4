"""Short text forms of numbers, times and metrics, so every screen writes them the same way."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from textual.content import Content

from qatui.paths import tilde
from qatui.text import count  # noqa: F401 - screens take it from here with the other forms
from qatui.text import clip, left_out_note, no_decision_note, no_order_line, plain, usd

SHORT_METRICS = {
    "kendall": "tau",
    "spearman": "rho",
    "rbo_0.9": "rbo.9",
    "accuracy": "acc",
    "kappa": "kappa",
    "route_accuracy": "route",
}
"""The metrics a header shows, in order, with their short names."""

FIGURE_UNITS = {"kendall": "questions", "spearman": "questions", "rbo_0.9": "questions",
                "accuracy": "labels", "kappa": "labels", "route_accuracy": "routes"}
"""What each of `SHORT_METRICS` averages over: figures of one kind share their no-decision units and left-out items,
so the first of each kind says them (a dataset of rankings and pairs has both tau's and acc's)."""


def first_of_their_units(keys: list[str]) -> list[str]:
    """Of `keys` in order, the first of each kind of unit (`FIGURE_UNITS`): those that carry the notes."""
    seen: set[str] = set()
    return [key for key in keys if (unit := FIGURE_UNITS.get(key, key)) not in seen and not seen.add(unit)]


def undecided_cell(doc: dict, keys: list[str]) -> str:
    """The no-decision counts of a summary `doc`'s figures `keys` for a column named "no decision": '2/6' where the
    figures are of one kind of unit, named by figure where they are of more ('acc 3/8', 'tau 2/6 · acc 3/8': a
    bare '3/8' beside a tau column read as the tau's); '' when none."""
    if doc.get("stale"):  # one note for all: stored before no-decisions were counted
        return no_decision_note(doc, keys[0], short=True) if keys else ""
    kinds = first_of_their_units(keys)
    found = [(SHORT_METRICS.get(key, key), note) for key in kinds if (note := no_decision_note(doc, key, short=True))]
    return " · ".join(note if len(kinds) == 1 else f"{short} {note}" for short, note in found)

METRIC_MEANINGS = {
    "tau": "Kendall tau-b between the judge's ranking and people's, mean over questions (-1 to +1); "
           "[a,b] is its 95% bootstrap interval",
    "rho": "Spearman correlation of the judge's ranking with people's, mean over questions",
    "rbo.9": "rank-biased overlap (p = 0.9) with people's ranking: agreement weighted to the top (0 to 1)",
    "acc": "pairwise accuracy: share of pairs where the judge prefers the answer people prefer "
           "(A / B / tie against every human label)",
    "kappa": "Cohen's kappa of the judge's A / tie / B against every human label: agreement beyond chance "
             "(-1 to +1, 0 = chance); the line under it gives each class's recall and precision",
    "route": "route accuracy: how often MinosEval's factoid / non-factoid call matches the dataset's question type",
    "self": "the judge against itself over its repeats: the share of repeats that made its own most frequent "
            "choice, or (τ) the mean Kendall tau between two repeats' rankings",
    "people": "where several people labelled: the judge's κ and accuracy against each person's label, counted "
              "by the others' majority",
    "ceiling": "the human ceiling: each person against the others' majority the same way; a judge near it "
               "agrees with people about as well as they agree with each other",
    "alt-test": "with three or more people, the alternative annotator test: pass when the judge could take the "
                "place of one annotator",
}
"""What each short name of `SHORT_METRICS` and each figure beside them (self-agreement, people, the human
ceiling, the alternative annotator test) means, for the help screen and the header's tooltip."""


def metrics_glossary() -> str:
    """Every short metric name with its meaning, one per line (a tooltip)."""
    return "\n".join(f"{short}: {meaning}" for short, meaning in METRIC_MEANINGS.items())


def duration(seconds: float | None) -> str:
    """Seconds as m:ss or h:mm:ss; '–' when unknown."""
    if seconds is None:
        return "–"
    s = max(0, round(seconds))
    hours, rest = divmod(s, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def signed(value: float | None) -> str:
    """+0.412 / -0.100, '–' when absent."""
    return "–" if value is None else f"{value:+.3f}"


def signed2(value: float) -> str:
    """+0.41 / -0.10 at two places, keeping the sign of a value that rounds to zero (-0.004 is "-0.00": rounded
    first, it read "+0.00", a mean below zero shown as not); a zero, signed or not, is "+0.00"."""
    return f"{value + 0.0:+.2f}"


def when(iso: str | None) -> str:
    """An ISO timestamp as 'YYYY-MM-DD HH:MM' in its own offset; '' when absent or unreadable."""
    try:
        return datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M") if iso else ""
    except ValueError:
        return ""


def short_path(path: str) -> str:
    """A path relative to the working directory when inside it, else with ~ for the home folder."""
    p = Path(path)
    try:
        return str(p.relative_to(Path.cwd()))
    except ValueError:
        return tilde(p) if p.is_absolute() else path


def metrics_parts(metrics: dict[str, float], ci: dict[str, list[float]] | None = None,
                  doc: dict | None = None) -> list[str]:
    """The headline metrics as the parts a line may wrap between: each figure with its short name, the first with
    its CI ('tau +0.41 [+0.12,+0.66]', 'rho +0.45', ...).

    With the summary `doc` (its `n`, `no_decision` and `left_out`), the first figure of each kind of unit
    (`first_of_their_units`) also says how many of its units the judge made no decision on, and how many scored
    items it left out for want of a gold order (they read with it):
    'tau +0.21 [+0.02,+0.40] · 2/6 no decision · 6 of 9 items (3 no gold order)', then 'acc 0.50 · 3/8 no decision'.
    """
    parts: list[str] = []
    noted = first_of_their_units([key for key in SHORT_METRICS if key in metrics])
    for key, short in SHORT_METRICS.items():
        if key in metrics:
            first = not parts
            interval = (ci or {}).get(key) if first else None
            bounds = f" [{interval[0]:+.2f},{interval[1]:+.2f}]" if interval else ""
            notes = [note for note in (no_decision_note(doc, key), left_out_note(doc, key)) if note] \
                if key in noted and doc else []
            parts.append(f"{short} {signed2(metrics[key])}{bounds}"
                         + "".join(f" · {note}" for note in notes))
    return parts


def headline_parts(doc: dict, otherwise: str) -> list[str]:
    """A judge's headline as wrappable parts: its metrics (`metrics_parts`), else why it has none (`otherwise` when
    the summary does not say), then its agreement with itself over repeats (`self_line`) when it repeated."""
    parts = metrics_parts(doc.get("metrics", {}), doc.get("ci"), doc) or [no_order_line(doc) or otherwise]
    if small := self_line(doc.get("self_agreement")):
        parts.append(f"· {small}")
    return parts


def self_line(doc: object) -> str:
    """A judge's agreement with itself over its repeats, small: 'self 0.92', 'self τ 0.71', 'self n/a'; '' if asked once."""
    from qatui.metrics.self_agreement import headline

    if isinstance(doc, dict) and doc.get("not_applicable"):
        return "self n/a"
    found = headline(doc)
    if found is None:
        return ""
    kind, value = found
    return f"self {'' if kind == 'choice' else 'τ '}{value:.2f}"


def members_line(agreement: dict[str, dict]) -> str:
    """A jury's members' agreement in one line: 'members A/B/tie alpha -0.36 [-0.67,-0.36] kappa -0.64'."""
    parts = []
    for kind, entry in agreement.items():
        figures = []
        for key in ("alpha", "kappa"):
            if (value := entry.get("metrics", {}).get(key)) is not None:
                interval = entry.get("ci", {}).get(key)
                bounds = f" [{interval[0]:+.2f},{interval[1]:+.2f}]" if interval else ""
                figures.append(f"{key} {signed2(value)}{bounds}")
        parts.append(f"{'A/B/tie' if kind == 'preference' else 'rankings'} " + (" ".join(figures) or "alpha undefined"))
    return "members' agreement  " + "; ".join(parts) if parts else ""


def literal_markup(text: str) -> str:
    """Markup that shows `text` literally (brackets escaped, control characters in view), for the few Textual
    APIs that take only a markup string (the palette's hits and their help); elsewhere pass `Content(plain(text))`."""
    return Content(plain(text)).markup


def model_used_line(kind: str, model: str, by: list[str]) -> Content:
    """'  backbone local/smollm2 by minos' (New run's plan), dim where no judge picked uses the model."""
    if not by:
        return Content.assemble("  ", (plain(f"{kind:<9}{model} (not used by these judges)"), "dim"))
    return Content.assemble("  ", (f"{kind:<9}", "dim"), plain(model), " ", (f"by {', '.join(by)}", "dim"))


def plan_line(dataset: str, n_items: int, judges: list[str], backbone: str | None, calls: str,
              notes: tuple[str, ...] = (), price: str | None = None) -> Content:
    """New run's bottom line: 'demo · 20 items · minos · local/smollm2 · 43–60 backbone calls   ctrl+s starts'
    (`backbone` None: no judge picked calls one), with `notes` ("batch API", "cap $5") and then `price` ("≈ $0.0446",
    "pricing…", `price_note`) before the key; with a price, "calls" alone, so that the line fits 80 columns."""
    from qatui.text import plural

    calls_word = "backbone calls" if price is None else "calls"
    llm = Content.from_markup(f" · $b · [b]$n[/] {calls_word}", b=plain(backbone), n=calls) if backbone is not None \
        else " · no backbone calls"
    return Content.assemble((plain(dataset), "bold"), f" · {plural(n_items, 'item')} · {', '.join(judges)}", llm,
                            *(f" · {note}" for note in (*notes, *([price] if price else []))), "   ",
                            ("ctrl+s starts", "dim"))


def price_note(priced: dict) -> str | None:
    """The plan line's price of a run, from `engine.pricing.price_run`'s rows: '≈ $0.0274' (the Models tab has each
    judge's, and what it costs at most); 'no price' when a row has none; None when nothing is paid (embedded
    backbones only)."""
    rows = [row for label, row in priced.items() if label != "total"]
    if not rows or all(row.free and row.embed is None for row in rows):
        return None
    row = priced.get("total") or rows[0]
    if row.usd is None or row.usd_most is None:
        return "no price"
    return f"≈ {usd(row.usd)}"


def stopped_line(meta: dict) -> Content | None:
    """Why a `stopped` session stopped (its backbone failed the check put off to its first call the cache could not
    answer), in at most two lines at 80 columns: the whole reason is in `sessions show`; None for any other status."""
    if meta.get("status") != "stopped":
        return None
    return Content.from_markup("[$warning]stopped:[/] $why",
                               why=plain(clip(meta.get("stopped") or "its backbone could not answer", STOPPED_CHARS)))


STOPPED_CHARS = 120
"""How much of a stopped session's reason Home and the session screen show."""
