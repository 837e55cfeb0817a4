"""qatui's one tie rule, and every ranking, tie group and preference made from a judge's scores.

Two scores are equal when they are equal once rounded to the judge's `tie_digits` (as CALF
does for its lexical baselines): `compare` says so, and everything below goes through it.

- `tied_groups`: what the judge said, best first, candidates it scored equal in one group
  (in presentation order). The metrics read this: a judge that scored every response alike
  made no decision, and agreement treats its ties as ties.
- `strict_ranking`: the same groups laid end to end, so equal scores keep presentation order
  (Response 1 before Response 2). For display only: the presentation order is a seeded
  shuffle, and no metric may read a judge's tie as the order the shuffle gave it.
- `pair_preference`: A, B, or "tie" when both scores are equal.
- `ranking_tiers`: a ranking the judge gave itself, cut where its scores differ, so a judge
  that hands over its own order still gets the same rule for the scores it tied.
- `plurality`: the one vote rule of several choices (people's labels of a pair, a judge's
  repeats, the others' labels a person is measured against): the choice made most often, a tie
  when two or more share the most. A jury's quorum is the one place that asks for more than
  half the members instead (`judges.jury.votes.majority`).

This module sits at the bottom of the layers so that judges, the engine, the stored verdict
(`events.Verdict`) and the metrics all import the same rule.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

DEFAULT_DIGITS = 4
"""The tie digits of a judge that names none (every judge's default but the lexical ones')."""
MAX_DIGITS = 12
"""The most digits a tie rule rounds to (a judge option past it is refused: past a double's precision rounding
decides nothing); a stored `tie_digits` outside 0..MAX_DIGITS falls back to the default."""

PairChoice = Literal["A", "B", "tie"]


def plurality(choices: Sequence[Any], tie: Any = "tie") -> Any:
    """The choice made most often; `tie` when two or more choices share the most, or there is none.

    Not a strict majority: A, A, B, tie gives A (2 of 4), A, A, B, B a tie, A, B, tie a tie."""
    counts = Counter(choices).most_common(2)
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return tie
    return counts[0][0]


def compare(a: float, b: float, digits: int) -> int:
    """1 when `a` is better, -1 when `b` is, 0 when they are equal once rounded to `digits` (a tie)."""
    x, y = round(a, digits), round(b, digits)
    return (x > y) - (x < y)


def pair_preference(score_a: float, score_b: float, digits: int) -> PairChoice:
    """A, B, or a tie when both scores are equal once rounded to `digits` (as CALF does)."""
    return {1: "A", -1: "B", 0: "tie"}[compare(score_a, score_b, digits)]  # type: ignore[return-value]


def tied_groups(scores: Mapping[str, float], presented: Sequence[str], digits: int) -> list[list[str]]:
    """`presented` best first in groups of equal score (rounded to `digits`); presentation order within a group."""
    position = {label: i for i, label in enumerate(presented)}
    ordered = sorted(presented, key=lambda label: (-round(scores[label], digits), position[label]))
    return ranking_tiers(scores, ordered, digits)


def strict_ranking(scores: Mapping[str, float], presented: Sequence[str], digits: int) -> list[str]:
    """Labels best first by score (rounded to `digits`); ties broken by position in `presented` (for display)."""
    return [label for group in tied_groups(scores, presented, digits) for label in group]


def ranking_tiers(scores: Mapping[str, float], ranking: Sequence[str], digits: int) -> list[list[str]]:
    """`ranking` cut into groups of neighbours whose scores are equal (rounded to `digits`); unscored ones alone."""
    groups: list[list[str]] = []
    for label in ranking:
        previous = groups[-1][-1] if groups else None
        if (previous is not None and label in scores and previous in scores
                and compare(scores[previous], scores[label], digits) == 0):
            groups[-1].append(label)
        else:
            groups.append([label])
    return groups


def tiers_text(tiers: Sequence[Sequence[str]], name: Callable[[str], str] = str) -> str:
    """Tied groups as people read them, best first: 'a > b = c' (each candidate through `name`). The one form of
    a ranking shown anywhere: what the judge (or people) said, its ties kept, never a strict display order."""
    return " > ".join(" = ".join(name(cid) for cid in tier) for tier in tiers)


def member_tiers(member: Any) -> list[list[str]]:
    """A jury member's tied groups (`MemberVerdict`, or its stored dict): its strict ranking cut where its scores are
    equal under its own `tie_digits`."""
    get = member.get if isinstance(member, Mapping) else lambda key, default=None: getattr(member, key, default)
    return ranking_tiers(get("scores") or {}, get("ranking") or [], get("tie_digits", DEFAULT_DIGITS))


def pair_tiers(pair: tuple[str, str], preference: str | None, ranking: Sequence[str]) -> list[list[str]]:
    """What a judge that named a winner of its pair said: the winner's group above, or one group for a tie."""
    if preference == "tie":
        return [list(ranking)]
    return [[pair[0]], [pair[1]]] if preference == "A" else [[pair[1]], [pair[0]]]


def tier_ranks(tiers: Sequence[Sequence[str]]) -> dict[str, int]:
    """Each candidate's 1-based rank, a tied group sharing the best rank of its places (1, 1, 3: competition ranking)."""
    ranks: dict[str, int] = {}
    for tier in tiers:
        ranks.update(dict.fromkeys(tier, len(ranks) + 1))
    return ranks


def rank_label(tiers: Sequence[Sequence[str]], candidate: str) -> str:
    """How a rank reads where one is shown: '2', or '1=' when the judge tied `candidate` with others (what it said,
    never the strict display order); '' for a candidate it did not rank."""
    ranks = tier_ranks(tiers)
    if candidate not in ranks:
        return ""
    shared = any(candidate in tier and len(tier) > 1 for tier in tiers)
    return f"{ranks[candidate]}=" if shared else str(ranks[candidate])


def tier_preference(tiers: Sequence[Sequence[str]], a: str, b: str) -> PairChoice | None:
    """A when `a` sits in a better group than `b`, B for the reverse, tie in the same group; None if either is absent."""
    place = {cid: i for i, tier in enumerate(tiers) for cid in tier}
    if a not in place or b not in place:
        return None
    return "tie" if place[a] == place[b] else "A" if place[a] < place[b] else "B"


def stored_digits(options: Mapping | None) -> int:
    """The `tie_digits` a stored judge's options name; the default when absent or not a sane count."""
    value = options.get("tie_digits", DEFAULT_DIGITS) if isinstance(options, Mapping) else DEFAULT_DIGITS
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_DIGITS:
        return DEFAULT_DIGITS
    return value


TIE_RULE = 4
"""The version of how a stored summary's figures treat a judge's ties (its `tie_rule`). A summary without
it was computed when agreement read the strict display ranking, crediting a judge that tied everything
with the presentation shuffle's order; views recompute or flag it (`summary_is_current`). Rule 3
(2026-11-29): in self-agreement's ranking tau, a pair of repeats where one tied every response and the
other did not counts 0 (it was left out, `metrics.self_agreement`); a rule-2 summary whose self-agreement
has no ranking figure is the same under rule 3. Rule 4 (2026-12-04): pairwise `accuracy`'s no-decision units are
the A and B labels of the pairs the judge tied, no longer the human ties it matched too (a hit, counted in the
figure); a rule-2 or rule-3 summary with no such unit is the same under rule 4."""


def summary_is_current(summary: Mapping[str, object]) -> bool:
    """True when every judge's stored summary doc was computed under the current tie rule (`TIE_RULE`), or under an
    earlier one whose figures it would not change."""
    def current(doc: object) -> bool:
        if not isinstance(doc, dict):
            return False
        rule = doc.get("tie_rule")
        if rule == TIE_RULE:
            return True
        repeated = doc.get("self_agreement")
        rule_3 = rule == 3 or (rule == 2 and not (isinstance(repeated, dict) and "ranking" in repeated))
        undecided = doc.get("no_decision")
        return rule_3 and not (isinstance(undecided, dict) and undecided.get("accuracy"))

    return all(current(doc) for doc in summary.values())


def judges_digits(meta: Mapping) -> dict[str, int]:
    """Judge name -> the `tie_digits` its stored options name (`stored_digits`), from a session's metadata."""
    judges = meta.get("judges")
    return {name: stored_digits(options) for name, options in judges.items()} if isinstance(judges, Mapping) else {}
