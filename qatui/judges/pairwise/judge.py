"""CALF pairwise judging: A / B / tie between two answers, as CALF asks it or in both orders.

For every unordered pair of responses {X, Y} the backbone sees the question, the reference
answer(s) when the item has any (the judge also works without one), and the two answers as
"Answer A" and "Answer B", and replies `{"rationale": ..., "choice": "A" | "B" | "tie"}`
(a schema, so constrained decoding keeps the shape). Which orders are asked is the
`protocol` (`qatui.judges.pairwise.protocol`):
- `both-orders` (default, qatui's variant): each pair twice, X as A then Y as A, so that a
  preference for a position cannot pass for a preference for an answer (`both_orders =
  false`: once, in presentation order); the prompt names the criteria to weigh; the
  backbone's temperature;
- `calf` (the paper's protocol): each pair once, the order alternating across pairs and
  items, the paper's plain triple-choice instruction against the reference, temperature 1.0.
Each call is one `PairJudged` event (`first` = the label shown as A). An answer that does
not parse, even after the client's one repair re-ask, is recorded with `choice=None` and is
never counted as a vote.

Combination rule, per pair, over the orders whose answer parsed:
- every counted order names the same winner (or all say tie) -> that result;
- they disagree (one prefers X, the other Y: position bias) or one says tie -> tie;
- only one order parsed -> its result stands; none parsed -> the pair has no result.

Scores: each response's win rate over its pairs that have a result (win 1, tie 0.5,
loss 0); a response none of whose pairs has a result scores 0.5 and is listed in
`details["no_votes"]`. The ranking follows the scores, equal scores in presentation order
(the engine's tie rule). With exactly two responses the pair's combined result is also the
`Judgement.winner` ("Response k" or "tie"), which becomes the verdict's preference. If no
answer of an item parses at all, the item fails (it is never scored).

`details` shows position bias: `position_consistency` counts the pairs judged in both orders
(`judged_both`), those where both orders gave the same result (`agreed`; none under
`calf`) and those asked in both orders that one order alone decided, the other answer unparsed
(`one_order`: there the order of the answers was not cancelled out); `positions` counts how
often each position (A, B, tie) was chosen; `pairs` lists each pair's votes (in order: X
first, then Y first) and its combined result; `protocol` names the protocol.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from itertools import combinations
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
)

from qatui.events import Event, Judgement, PairJudged
from qatui.judges.base import Judge, JudgeOptions, Needs, as_they_finish
from qatui.judges.pairwise.protocol import (
    CALF_TEMPERATURE,
    Protocol,
    asked_orders,
    asks_both,
    calls_per_item,
)
from qatui.judges.prompts import chat, guarded, load_prompts, reference_line
from qatui.judges.schemas import bounded_text, one_of
from qatui.llm.errors import ParseError
from qatui.llm.fence import Fence

if TYPE_CHECKING:
    from qatui.data.model import Item
    from qatui.data.presentation import ItemView

Choice = Literal["A", "B", "tie"]

_CHOICE_WORDS: dict[str, Choice] = {
    "a": "A", "b": "B", "tie": "tie", "equal": "tie", "both": "tie", "neither": "tie", "draw": "tie",
    "平局": "tie", "平手": "tie", "持平": "tie", "相当": "tie", "不分高下": "tie",
}
_CHOICE_PREFIX = re.compile(r"^(?:my (?:choice|decision) is|answer|response|option|回答|答案)\s*")
_CHOICE_TRIM = " \t\n.,:;!\"'`*()[]。，：；！"


def read_choice(value: object) -> Choice:
    """A, B or tie from what a model wrote: case, quotes and an "Answer "/"Response " prefix are ignored.

    Anything else is a ValueError, so the answer counts as unparsed (never guessed).
    """
    if not isinstance(value, str):
        raise ValueError("the choice must be a string: A, B or tie")  # noqa: TRY004 - pydantic reports only ValueError
    text = value.strip(_CHOICE_TRIM).lower()
    text = _CHOICE_PREFIX.sub("", text).strip(_CHOICE_TRIM)
    if text in _CHOICE_WORDS:
        return _CHOICE_WORDS[text]
    raise ValueError(f"the choice must be A, B or tie, not {value!r}")


def _both_required(schema: dict) -> None:
    """Advertise both fields as required (a missing rationale is still accepted when reading)."""
    schema["required"] = ["rationale", "choice"]
    schema["properties"]["rationale"].pop("default", None)


class PairChoice(BaseModel):
    # The backbone's answer for one ordered pair. The rationale comes first, so it reasons
    # before it picks. (A comment, not a docstring: a docstring would go out in the schema.)
    """The backbone's verdict on one ordered pair: a rationale and A, B or tie (schema)."""

    model_config = ConfigDict(json_schema_extra=_both_required)

    rationale: Annotated[str, bounded_text(400)] = ""
    choice: Annotated[Choice, BeforeValidator(read_choice), one_of(("A", "B", "tie"))]


class PairwiseOptions(JudgeOptions):
    """CALF pairwise settings (see the module docstring)."""

    protocol: Protocol = "both-orders"
    """both-orders: qatui's variant, each pair in both orders (disagreement = tie); calf: the paper's, each pair once, order alternated across items, temperature 1.0."""
    both_orders: bool = True
    """both-orders protocol only: ask each pair in both orders (each answer once as A); False: once, in presentation order."""
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    """Per-judge override of the backbone's temperature (default: the backbone's, 0; 1.0 under calf, as the paper)."""
    max_candidates: int = Field(default=8, ge=2, le=100)
    """Refuse datasets with items of more candidates: n candidates cost n(n-1) calls (8 -> 56)."""

    @model_validator(mode="after")
    def _one_order_under_calf(self) -> PairwiseOptions:
        """`both_orders = true` given with `protocol = calf` is a contradiction, never silently ignored."""
        if self.protocol == "calf" and self.both_orders and "both_orders" in self.model_fields_set:
            raise ValueError("protocol calf asks each pair once; both_orders applies to protocol both-orders")
        return self

    @property
    def effective_temperature(self) -> float | None:
        """The temperature sent: the option, else 1.0 under calf, else None (the backbone's)."""
        if self.temperature is not None:
            return self.temperature
        return CALF_TEMPERATURE if self.protocol == "calf" else None


def combine(votes: list[str | None]) -> str | None:
    """One pair's result from its orders' winners (a label, "tie", or None when unparsed).

    Same winner in every counted order -> that winner; any disagreement (position bias, or
    a tie against a win) -> "tie"; no counted order -> None.
    """
    counted = [v for v in votes if v is not None]
    if not counted:
        return None
    return counted[0] if all(v == counted[0] for v in counted) else "tie"


def position_details(votes: dict[tuple[str, str], list[str | None]], judged: list[PairJudged]) -> dict[str, Any]:
    """What a verdict's details say of position bias, the one structure both pairwise judges (CALF's and a judge
    file's `[pair]`) write and the item view and run summary read: `position_consistency` (`judged_both`: pairs both
    of whose orders parsed, `agreed`: those whose orders named the same result, `one_order`: pairs asked in both
    orders that one order alone decided) and `positions` (how often A, B and tie were chosen, and unparsed answers).
    `votes`: each pair's winners in the orders asked; `judged`: every comparison made."""
    both = [v for v in votes.values() if len(v) == 2 and None not in v]
    positions = {"A": 0, "B": 0, "tie": 0, "unparsed": 0}
    for e in judged:
        positions[e.choice or "unparsed"] += 1
    return {"position_consistency": {"agreed": sum(1 for v in both if v[0] == v[1]), "judged_both": len(both),
                                     "one_order": sum(1 for v in votes.values()
                                                      if len(v) == 2 and v.count(None) == 1)},
            "positions": positions}


def win_rates(labels: list[str], results: dict[tuple[str, str], str | None]) -> dict[str, float | None]:
    """Each label's share of points over its pairs with a result (win 1, tie 0.5); None when it has none."""
    points = dict.fromkeys(labels, 0.0)
    counted = dict.fromkeys(labels, 0)
    for pair, result in results.items():
        if result is None:
            continue
        for label in pair:
            counted[label] += 1
            points[label] += 0.5 if result == "tie" else float(result == label)
    return {label: points[label] / counted[label] if counted[label] else None for label in labels}


def pair_messages(section: dict, view: ItemView, answer_a: str, answer_b: str) -> list[dict[str, str]]:
    """The chat of one ordered comparison, answers and references fenced; the reference line only when the item has one."""
    fence = Fence(view.question, answer_a, answer_b, *view.references)
    question = view.question
    if "question_line" in section:  # CALF's prompt: the question only where no reference gives the standard
        question = "" if view.references else section["question_line"].format(question=view.question)
    messages = chat(section, ("rationale", "choice"), question=question,
                    reference=reference_line(section, view.references, fence),
                    answer_a=fence("Answer A", answer_a), answer_b=fence("Answer B", answer_b))
    return guarded(messages, view.language)


class PairwiseJudge(Judge):
    """CALF: every pair judged A / B / tie (once, alternating, or in both orders), combined, ranked by win rate."""

    name = "pairwise"
    reproduces = ("calf:llm",)
    summary = ("CALF: A / B / tie per pair of responses; protocol both-orders (default: both orders, "
               "disagreement = tie) or calf (the paper's: once, order alternated, temperature 1.0); win rate ranks")
    needs = Needs(reference=False, min_candidates=2)
    Options = PairwiseOptions
    uses_llm = True
    prompt_methods = ("pairwise", "fence")
    answer_schemas = (PairChoice,)

    def item_problem(self, item: Item) -> str | None:
        """Also not applicable: more candidates than `max_candidates` (n(n-1) calls would be refused anyway)."""
        if problem := super().item_problem(item):
            return problem
        limit, n = self.options.max_candidates, len(item.candidates)
        if n > limit:
            return (f"judges every pair of candidates, and the item has {n} > max_candidates = {limit} "
                    f"({self._calls(n)} calls); raise max_candidates to allow it")
        return None

    def _calls(self, n: int) -> int:
        return calls_per_item(n, self.options.protocol, self.options.both_orders)

    def expected_calls(self, item: Item) -> tuple[int, int]:
        """n(n-1) calls for n candidates in both orders, n(n-1)/2 once per pair (calf, or both_orders off).

        The client's repair re-ask of an answer that does not parse is not counted (it
        happens only when the backbone errs).
        """
        n = self._calls(len(item.candidates))
        return n, n

    def orders(self, labels: list[str], item_id: str) -> list[tuple[str, str]]:
        """The (A, B) label pairs asked for the item `item_id`, by the protocol's rule."""
        return asked_orders(labels, self.options.protocol, self.options.both_orders, item_id)

    async def _ask(self, view: ItemView, first: str, second: str, section: dict) -> PairJudged:
        texts = {r.label: r.text for r in view.responses}
        messages = pair_messages(section, view, texts[first], texts[second])
        try:
            result = await self.resources.llm.complete(messages, purpose="pair", schema=PairChoice,
                                                       temperature=self.options.effective_temperature)
        except ParseError as e:
            return PairJudged(first=first, second=second, choice=None, rationale=f"unparsed: {e.reason}")
        return PairJudged(first=first, second=second, choice=result.data.choice,
                          rationale=" ".join(result.data.rationale.split()))

    async def judge(self, view: ItemView) -> AsyncIterator[Event]:
        """Ask every pair in the protocol's orders, then score by win rate."""
        section = load_prompts("pairwise", view.language)["calf" if self.options.protocol == "calf" else "judge"]
        judged: list[PairJudged] = []
        async for event in as_they_finish(self._ask(view, a, b, section)
                                          for a, b in self.orders(view.labels, view.item_id)):
            judged.append(event)
            yield event
        if all(e.choice is None for e in judged):
            raise ParseError(f"none of the {len(judged)} pairwise answers could be parsed "
                             f"(first: {judged[0].rationale.removeprefix('unparsed: ')})")
        yield self.judgement(view.labels, judged)

    def judgement(self, labels: list[str], judged: list[PairJudged]) -> Judgement:
        """Combine the ordered comparisons into pair results, win rates and (for two responses) a winner."""
        votes: dict[tuple[str, str], list[str | None]] = {}
        for x, y in combinations(labels, 2):
            asked = [e for e in judged if (e.first, e.second) in ((x, y), (y, x))]
            asked.sort(key=lambda e: e.first != x)  # X shown first, then Y first
            votes[(x, y)] = [e.winner for e in asked]
        results = {pair: combine(v) for pair, v in votes.items()}
        rates = win_rates(labels, results)
        bias = position_details(votes, judged)
        details = {
            "protocol": self.options.protocol,
            "both_orders": asks_both(self.options.protocol, self.options.both_orders),
            "pairs": [{"pair": list(pair), "votes": votes[pair], "result": results[pair]} for pair in votes],
            **bias,
            "unparsed": bias["positions"]["unparsed"],
            "no_votes": [label for label, rate in rates.items() if rate is None],
        }
        winner = results[(labels[0], labels[1])] if len(labels) == 2 else None
        return Judgement(scores={label: 0.5 if rate is None else rate for label, rate in rates.items()},
                         winner=winner, details=details)
