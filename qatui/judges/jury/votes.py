"""How a jury turns its members' verdicts into one: strict majority, mean of normalised scores, Borda count.

Everything here is in label space ("Response 1", ...), over the members that answered the
item (`MemberVerdict` with status done). The rules, as docs/JURIES.md states them:

- **majority** (two responses): each member votes Response 1, Response 2 or tie; a choice
  with more than half of the votes wins, otherwise the jury says tie. Member order never
  breaks a tie. Scores: 1 / 0 for the winner, 0.5 / 0.5 for a tie.
- **mean**: each member's scores are rounded to its `tie_digits`, then min-max normalised
  over the item's responses (best 1, worst 0; all equal: 0.5 each); the jury's score is the
  mean over the members.
- **borda**: a member's place k of n (1 = best) is worth n - k points; responses the member
  scores equal (once rounded to its `tie_digits`) share the mean of the points of the places
  they take. The jury's score is the mean points over the members, divided by n - 1.

The jury's ranking then follows qatui's one tie rule: equal scores keep presentation order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from statistics import mean
from typing import Annotated, Literal

from pydantic import Field

from qatui.errors import JudgeError
from qatui.events import Judgement, MemberVerdict
from qatui.metrics.jury import shared_places

Aggregation = Literal["auto", "majority", "mean", "borda"]
Quorum = Literal["majority", "all"] | Annotated[int, Field(ge=1, le=64)]


class QuorumNotMet(JudgeError):
    """Fewer members answered an item than the jury's quorum: the item fails, never scored."""


def resolved(aggregation: Aggregation, n_responses: int) -> str:
    """The rule used on an item: `auto` is majority for two responses (A / B / tie), Borda for a ranking."""
    if aggregation != "auto":
        return aggregation
    return "majority" if n_responses == 2 else "borda"


def quorum_size(quorum: Quorum, n_members: int) -> int:
    """How many members must answer: `majority` = more than half, `all` = every member, a number = that many."""
    if quorum == "majority":
        return n_members // 2 + 1
    if quorum == "all":
        return n_members
    return int(quorum)


def majority(votes: Sequence[MemberVerdict], labels: Sequence[str]) -> tuple[str, dict[str, float], dict]:
    """(winner, scores, details): the choice more than half the members made, else "tie"."""
    counts = Counter(v.winner or "tie" for v in votes)
    top, n = counts.most_common(1)[0] if counts else ("tie", 0)
    split = n * 2 <= len(votes)  # no choice has more than half the votes
    winner = "tie" if split else top
    scores = {label: 0.5 for label in labels} if winner == "tie" else \
        {label: 1.0 if label == winner else 0.0 for label in labels}
    return winner, scores, {"votes": {choice: counts.get(choice, 0) for choice in (*labels, "tie")},
                            "no_majority": split}


def normalised(vote: MemberVerdict, labels: Sequence[str]) -> dict[str, float]:
    """One member's scores min-max normalised over the item (rounded to its tie_digits first); all equal: 0.5."""
    rounded = {label: round(vote.scores[label], vote.tie_digits) for label in labels}
    low, high = min(rounded.values()), max(rounded.values())
    if high == low:
        return {label: 0.5 for label in labels}
    return {label: (value - low) / (high - low) for label, value in rounded.items()}


def borda_points(vote: MemberVerdict, labels: Sequence[str]) -> dict[str, float]:
    """One member's Borda points: place k of n is worth n - k; responses it scores equal share their places' mean."""
    ranking = [label for label in vote.ranking if label in labels]
    return {label: len(labels) - place for label, place in shared_places(vote.scores, ranking, vote.tie_digits).items()}


def aggregate(votes: Sequence[MemberVerdict], labels: Sequence[str], rule: str) -> Judgement:
    """The jury's judgement under `rule` (majority, mean, borda) from the members that answered."""
    if rule == "majority":
        if len(labels) != 2:
            raise JudgeError(f"aggregation majority decides between two responses, and the item has {len(labels)}")
        winner, scores, details = majority(votes, labels)
        return Judgement(scores=scores, winner=winner, details={"aggregation": rule, **details})
    if rule == "mean":
        per_member = [normalised(v, labels) for v in votes]
    elif rule == "borda":
        top = max(len(labels) - 1, 1)
        per_member = [{label: p / top for label, p in borda_points(v, labels).items()} for v in votes]
    else:
        raise JudgeError(f"unknown aggregation {rule!r}: majority, mean or borda")
    scores = {label: float(mean(m[label] for m in per_member)) for label in labels}
    return Judgement(scores=scores, details={"aggregation": rule, "member_scores": dict(zip(
        (v.member for v in votes), per_member))})


def decide(verdicts: Sequence[MemberVerdict], labels: Sequence[str], rule: str, quorum: int) -> Judgement:
    """The jury's judgement when at least `quorum` members answered; else `QuorumNotMet` naming each absence."""
    answered = [v for v in verdicts if v.status == "done"]
    if len(answered) < quorum:
        absent = "; ".join(f"{v.member} {'not applicable' if v.status == 'n/a' else 'failed'}: {v.reason}"
                           for v in verdicts if v.status != "done")
        raise QuorumNotMet(f"quorum not met: {len(answered)} of {len(verdicts)} members answered, "
                           f"{quorum} needed ({absent})")
    judgement = aggregate(answered, labels, rule)
    details = {**judgement.details, "members": [v.member for v in verdicts], "answered": [v.member for v in answered],
               "absent": {v.member: v.reason for v in verdicts if v.status != "done"}, "quorum": quorum}
    return judgement.model_copy(update={"details": details})
