"""What the writer of `qatui judges align` is shown and what it answers.

The writer sees the judge's current text and the train items the judge got wrong: each question and
answer fenced (`qatui.llm.fence`, one key over every text of the prompt, the judge's text included,
with the fence note in the system prompt), people's verdict and the judge's in words qatui writes
(never the judge's raw answer). An item the judge failed on (no verdict: its answer could not be read,
say) is shown with the reason the run recorded, fenced too, since it may quote the model's answer. It answers a JSON object (`Proposal`) through a schema.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel

from qatui.judges.schemas import bounded_text
from qatui.ties import tiers_text

if TYPE_CHECKING:
    from qatui.data.model import Item
    from qatui.engine.alignment import Evaluation
    from qatui.events import Verdict

MAX_PROPOSAL_CHARS = 20_000
"""The longest revised text the writer is asked for (advertised in the schema)."""
WRITER_MAX_TOKENS = 8192
"""Room for the analysis and a whole revised text."""


class Proposal(BaseModel):
    """The writer's answer: what the judge gets wrong, and the whole revised text (schema)."""

    analysis: Annotated[str, bounded_text(1200)]
    judge_file: Annotated[str, bounded_text(MAX_PROPOSAL_CHARS)]


def _judged_text(item: Item, verdict: Verdict | None) -> str:
    """What the judge decided on `item`, in words (never its raw answer: that is the model's, not the data's)."""
    if verdict is None:
        return "no verdict"  # `writer_messages` says why where the judge failed
    gold = item.gold
    if gold is not None and gold.kind == "pairwise":
        from qatui.metrics.pairwise import judge_preference

        return _preference_words(judge_preference(verdict, gold.a, gold.b) or "no preference")
    return "best first: " + tiers_text(verdict.tiers, lambda cid: f"answer {cid}")


def _preference_words(preference: str) -> str:
    """A / B / tie as a person reads it."""
    return {"A": "answer A is better", "B": "answer B is better", "tie": "a tie"}.get(preference, preference)


def _gold_text(item: Item) -> str:
    """People's verdict on `item`, in words."""
    gold = item.gold
    if gold is None:
        return "no label"
    if gold.kind == "pairwise":
        return _preference_words(gold.label) + (f" ({len(gold.labels)} labels: {', '.join(gold.labels)})"
                                                if len(gold.labels) > 1 else "")
    if gold.kind == "ranking":
        return "best first: " + tiers_text(gold.tiers, lambda cid: f"answer {cid}")
    return "ratings"


def writer_messages(text: str, items: Sequence[Item], evaluation: Evaluation) -> list[dict[str, str]]:
    """The writer's chat: the judge's text and each disagreeing item (question, answers) fenced under one key."""
    from qatui.judges.prompts import guarded, load_prompts
    from qatui.llm.fence import Fence

    section = load_prompts("align_writer", "en")["write"]
    answers = [(item, _answer_pairs(item)) for item in items]
    failures = {item.id: evaluation.failed[item.id] for item in items if item.id in evaluation.failed}
    fence = Fence(text, *(item.question for item in items), *(t for _, pairs in answers for _, t in pairs),
                  *failures.values())
    cases = []
    for number, (item, pairs) in enumerate(answers, 1):
        shown = "\n".join(f"Answer {name}:\n{fence(f'Item {number} answer {name}', t)}" for name, t in pairs)
        judged = _judged_text(item, evaluation.verdicts.get(item.id))
        if item.id in failures:  # its reason may quote the model's answer: fenced, as every text qatui did not write
            judged = section["failed"].format(reason=fence(f"Item {number} failure", failures[item.id]))
        cases.append(section["case"].format(number=number, question=fence(f"Item {number} question", item.question),
                                            answers=shown, gold=_gold_text(item), judged=judged))
    user = section["user"].format(current=fence("Judge definition", text), count=len(items), cases="\n".join(cases))
    return guarded([{"role": "system", "content": section["system"]}, {"role": "user", "content": user}], "en")


def _answer_pairs(item: Item) -> list[tuple[str, str]]:
    """(name, text) of the answers a writer sees: A and B in the gold's orientation for a pair, else by candidate id."""
    gold = item.gold
    if gold is not None and gold.kind == "pairwise":
        return [("A", item.candidates[gold.a]), ("B", item.candidates[gold.b])]
    return list(item.candidates.items())
