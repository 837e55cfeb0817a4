"""Pairwise A/B baseline (MinosEval's "Pairwise" row): every pair once, A or B, ranked by win rate.

For every unordered pair of responses {X, Y} (X before Y in presentation order) one call
shows the question, the reference answer(s) when the item has any, X as "Answer A" and Y as
"Answer B", weighing correctness, fluency, truthfulness and redundancy; the backbone
explains briefly and ends with `[[A]]` or `[[B]]`: no tie. The verdict is read strictly by
`qatui.judges.brackets` (the last `[[...]]`, A or B; one re-ask when it cannot be read);
each call is a `PairJudged` event with the raw answer. A pair whose verdict cannot be read
fails the item: it is never ranked on the other pairs.

Win rate = wins / (n - 1) (`qatui.judges.pairwise.judge.win_rates`, the win-rate rule both
pairwise judges share). Tie rule (MinosEval B.2: "in cases of ties ... we independently
re-compared the responses of the tied models"): responses whose win counts are equal are
compared once more, every pair of such a group in one more call with the order swapped (Y
shown as A: a new question, where the same order would only get the cached answer back),
a `PairJudged` event with `rematch = true`. Score = (wins + rematch wins / n) / (n - 1): a
rematch win weighs less than one first-round win, so it orders only responses whose win
rates tie. A group the rematches leave tied again (a cycle of three) keeps presentation
order (the engine's rule). With two responses there is one call, never a tie, and its
winner is the verdict's preference.

Calls: n(n-1)/2, plus one per pair of responses with equal win counts: at most n(n-1)/2
more when n is odd (every response wins (n-1)/2), (n-1)(n-2)/2 when n is even.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from itertools import combinations
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, Field

from qatui.events import Event, Judgement, PairJudged
from qatui.judges.base import Judge, JudgeOptions, Needs, as_they_finish
from qatui.judges.pairwise.judge import win_rates
from qatui.judges.brackets import ask_bracketed, bracket_enum, read_choice
from qatui.judges.prompts import guarded, load_prompts, reference_line
from qatui.judges.schemas import bounded_text, one_of
from qatui.llm.fence import Fence

if TYPE_CHECKING:
    from qatui.data.model import Item
    from qatui.data.presentation import ItemView

MAX_TOKENS = 320
"""A short explanation (advertised at 400 characters at most) and the verdict."""


class ABVerdict(BaseModel):
    """The backbone's answer on one ordered pair: a short explanation, then [[A]] or [[B]] (schema)."""

    explanation: Annotated[str, bounded_text(400)]
    verdict: Annotated[str, one_of(bracket_enum("AB"))]


class PairwiseABOptions(JudgeOptions):
    """Pairwise A/B baseline settings."""

    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    """Per-judge override of the backbone's temperature (default: the backbone's, 0)."""
    max_candidates: int = Field(default=8, ge=2, le=100)
    """Items with more candidates are not judged: n candidates cost up to n(n-1) calls (8 -> 28 to 49)."""


def pair_count(n: int) -> int:
    """Unordered pairs of n responses."""
    return n * (n - 1) // 2


def most_rematches(n: int) -> int:
    """The most pairs that can share a win count: all of them for odd n, all but one response's for even n."""
    return pair_count(n) if n % 2 else pair_count(n - 1)


def tied_groups(wins: dict[str, int]) -> list[list[str]]:
    """Labels with equal win counts (groups of two or more), in presentation order within each group."""
    by_count: dict[int, list[str]] = {}
    for label, count in wins.items():
        by_count.setdefault(count, []).append(label)
    return [group for _, group in sorted(by_count.items(), reverse=True) if len(group) > 1]


def ab_scores(labels: list[str], wins: dict[str, int], rematch_wins: dict[str, int]) -> dict[str, float]:
    """(wins + rematch wins / n) / (n - 1) per label: win rate, with rematches ordering only the ties."""
    n = len(labels)
    return {label: (wins[label] + rematch_wins.get(label, 0) / n) / (n - 1) for label in labels}


def ab_messages(section: dict, view: ItemView, answer_a: str, answer_b: str) -> list[dict[str, str]]:
    """The chat of one ordered comparison (the reference line only when the item has one)."""
    fence = Fence(view.question, answer_a, answer_b, *view.references)
    user = section["user"].format(question=view.question, reference=reference_line(section, view.references, fence),
                                  answer_a=fence("Answer A", answer_a), answer_b=fence("Answer B", answer_b))
    return guarded([{"role": "system", "content": section["system"]}, {"role": "user", "content": user}], view.language)


class PairwiseABJudge(Judge):
    """MinosEval's pairwise baseline: A or B for every pair in one order, win rate ranks, ties compared again."""

    name = "pairwise-ab"
    reproduces = ("minoseval:pairwise",)
    summary = "Pairwise A/B (MinosEval baseline): [[A]] or [[B]] per pair, one order; win rate ranks, ties re-compared"
    needs = Needs(min_candidates=2)
    Options = PairwiseABOptions
    uses_llm = True
    prompt_methods = ("pairwise_ab", "fence")
    answer_schemas = (ABVerdict,)

    def item_problem(self, item: Item) -> str | None:
        """Also not applicable: more candidates than `max_candidates`."""
        if problem := super().item_problem(item):
            return problem
        n, limit = len(item.candidates), self.options.max_candidates
        if n > limit:
            return (f"judges every pair of candidates, and the item has {n} > max_candidates = {limit} "
                    f"({pair_count(n)} to {pair_count(n) + most_rematches(n)} calls); raise max_candidates to allow it")
        return None

    def expected_calls(self, item: Item) -> tuple[int, int]:
        """n(n-1)/2 calls, plus up to one per pair with equal win counts (re-asks of unreadable answers not counted)."""
        n = len(item.candidates)
        return pair_count(n), pair_count(n) + most_rematches(n)

    async def _ask(self, view: ItemView, first: str, second: str, section: dict, rematch: bool) -> PairJudged:
        texts = {r.label: r.text for r in view.responses}
        read = await ask_bracketed(self.resources.llm, ab_messages(section, view, texts[first], texts[second]),
                                   read_choice, purpose="pair-ab:rematch" if rematch else "pair-ab",
                                   schema=ABVerdict, reask=section["reask"], temperature=self.options.temperature,
                                   max_tokens=MAX_TOKENS)
        return PairJudged(first=first, second=second, choice=read.value, ranked_by="win_rate", raw=read.raw,
                          rematch=rematch, reasked=read.reasked)

    async def _round(self, view: ItemView, asked: list[tuple[str, str]], section: dict, rematch: bool,
                     found: list[PairJudged]) -> AsyncIterator[Event]:
        async for event in as_they_finish(self._ask(view, a, b, section, rematch) for a, b in asked):
            found.append(event)
            yield event

    async def judge(self, view: ItemView) -> AsyncIterator[Event]:
        """Ask every pair once, rematch the win-rate ties, then score by win rate."""
        section = load_prompts("pairwise_ab", view.language)["judge"]
        labels = view.labels
        first_round: list[PairJudged] = []
        async for event in self._round(view, list(combinations(labels, 2)), section, False, first_round):
            yield event
        wins = {label: sum(1 for e in first_round if _winner(e) == label) for label in labels}
        groups = tied_groups(wins)
        rematches: list[PairJudged] = []
        asked_again = [(y, x) for group in groups for x, y in combinations(group, 2)]
        async for event in self._round(view, asked_again, section, True, rematches):
            yield event
        rematch_wins = {label: sum(1 for e in rematches if _winner(e) == label) for label in labels}
        winner = _winner(first_round[0]) if len(labels) == 2 else None
        yield Judgement(scores=ab_scores(labels, wins, rematch_wins), winner=winner,
                        details={"wins": wins, "win_rates": win_rates(labels, {(e.first, e.second): _winner(e)
                                                                               for e in first_round}),
                                 "tied_groups": groups, "rematch_wins": rematch_wins})


def _winner(event: PairJudged) -> str:
    return event.first if event.choice == "A" else event.second
