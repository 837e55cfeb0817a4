"""A judge's agreement with itself across repeats (`repeats` K > 1): is it wrong, or only noisy?

Read from each verdict's `details["repeats"]` (`engine.repeats`: every repeat's preference and
tied groups, candidate ids). Two figures, each over the items where it applies:

- `choice` (items with two responses): the share of repeats that agree with the judge's own mode
  on that item, AlpacaEval's measure of a judge's variance. An item asked K times whose most
  frequent choice (A, B or tie) came m times counts m / K; the figure pools them, sum of m over
  sum of K (with one K for every item, the mean share). 1 means every repeat chose alike; with
  three choices it cannot fall below 1/3.
- `ranking` (items with three responses or more): the mean Kendall tau-b between every two
  repeats' rankings of the item (each repeat's tied groups, ties kept as ties), then the mean
  over items. A pair of repeats where one tied every response and the other did not counts 0
  (a repeat with no opinion agrees with no one, as between two runs: `metrics.agreement`), and
  the item is counted (`ranking_no_decision`); a pair where both tied every response has no order
  to agree on and is left out; an item with no pair left counts nowhere (`ranking_undefined`).
  1: every repeat ranked alike.

95% CIs are percentile bootstraps over items (`metrics.bootstrap`): `ratio_ci` for the pooled
choice share, `mean_ci` for the mean tau. Items with one response have neither figure. Views read
one figure through `headline`, which needs no SciPy (the TUI draws it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from itertools import combinations
from typing import TYPE_CHECKING, Any

from qatui.metrics.kendall import kendall_tau_b, no_decision, tier_places

if TYPE_CHECKING:
    from qatui.events import Verdict

CHOICES = ("A", "B", "tie")
KINDS = ("choice", "ranking")
"""The figures, in the order a view prints them; `headline` takes the first one present."""


def _records(verdict: Verdict) -> list[dict[str, Any]]:
    """The repeats stored with a verdict, well-formed ones only (a session file is data, not trusted)."""
    found = verdict.details.get("repeats")
    return [r for r in found if isinstance(r, dict)] if isinstance(found, list) else []


def _tiers(record: dict[str, Any]) -> list[list[str]] | None:
    """A repeat's tied groups, or None when they are not a list of lists of ids."""
    tiers = record.get("tiers")
    if not isinstance(tiers, list) or not all(isinstance(t, list) and all(isinstance(c, str) for c in t)
                                              for t in tiers):
        return None
    return tiers


def choice_row(verdict: Verdict) -> tuple[float, float] | None:
    """(repeats that made the item's most frequent choice, repeats) of a two-response verdict; None otherwise."""
    if verdict.pair is None:
        return None
    choices = [r.get("preference") for r in _records(verdict)]
    choices = [c for c in choices if c in CHOICES]
    if len(choices) < 2:
        return None
    return float(Counter(choices).most_common(1)[0][1]), float(len(choices))


def _pair_taus(verdict: Verdict) -> tuple[list[float], int]:
    """Kendall tau-b of every two repeats' rankings of a verdict with 3+ responses, and how many of those pairs had
    one repeat that tied every response and one that did not (each counted 0); a pair where both did is left out
    (no order on either side)."""
    if verdict.pair is not None or len(verdict.order) < 3:
        return [], 0
    candidates = list(verdict.order)
    repeats = []  # (tied groups, scores of the candidates in `candidates` order) of each well-formed repeat
    for record in _records(verdict):
        if (tiers := _tiers(record)) is None:
            continue
        places = tier_places(tiers)
        if all(c in places for c in candidates):
            repeats.append((tiers, [-places[c] for c in candidates]))
    taus, undecided_pairs = [], 0
    for (tiers_one, one), (tiers_two, two) in combinations(repeats, 2):
        undecided = (no_decision(tiers_one), no_decision(tiers_two))
        if undecided == (False, False):
            if (tau := kendall_tau_b(one, two)) is not None:
                taus.append(tau)
        elif undecided != (True, True):
            taus.append(0.0)
            undecided_pairs += 1
    return taus, undecided_pairs


def repeats_of(verdicts: Mapping[str, Verdict]) -> int:
    """The most repeats any verdict holds (0 when none was repeated)."""
    return max((len(_records(v)) for v in verdicts.values()), default=0)


def self_agreement(verdicts: Mapping[str, Verdict], *, seed: int = 0, ci: bool = True) -> dict[str, Any]:
    """{"repeats": K, "choice": {...}, "ranking": {...}}, each figure {"value", "ci", "n" (items)} where defined;
    "ranking_undefined": the items of 3+ responses whose tau is undefined (every repeat tied every response);
    "ranking_no_decision": of the items the ranking counts, those where a repeat tied every response and another
    did not (those pairs counted 0)."""
    from qatui.metrics.bootstrap import mean_ci, ratio_ci  # SciPy: not for views that only read `headline`

    rows = [row for v in verdicts.values() if (row := choice_row(v)) is not None]
    ranked = [v for v in verdicts.values() if v.pair is None and len(v.order) >= 3 and len(_records(v)) >= 2]
    per_item = [_pair_taus(v) for v in ranked]
    taus = [sum(pairs) / len(pairs) for pairs, _ in per_item if pairs]
    out: dict[str, Any] = {"repeats": repeats_of(verdicts)}
    if len(taus) < len(ranked):  # tau-b is 0/0 when every repeat ties every response: said, never dropped in silence
        out["ranking_undefined"] = len(ranked) - len(taus)
    if undecided := sum(1 for pairs, one_undecided in per_item if pairs and one_undecided):
        out["ranking_no_decision"] = undecided
    if rows:
        value = sum(m for m, _ in rows) / sum(k for _, k in rows)
        interval = ratio_ci(rows, seed=seed) if ci else None
        out["choice"] = {"value": value, "ci": list(interval) if interval else None, "n": len(rows)}
    if taus:
        interval = mean_ci(taus, seed=seed) if ci else None
        out["ranking"] = {"value": sum(taus) / len(taus), "ci": list(interval) if interval else None, "n": len(taus)}
    return out


def headline(doc: Mapping[str, Any] | None) -> tuple[str, float] | None:
    """(kind, value) a one-figure view shows of a self-agreement doc: choice where present, else ranking."""
    if not isinstance(doc, Mapping):
        return None
    for kind in KINDS:
        figure = doc.get(kind)
        if isinstance(figure, Mapping) and isinstance(figure.get("value"), (int, float)):
            return kind, float(figure["value"])
    return None
