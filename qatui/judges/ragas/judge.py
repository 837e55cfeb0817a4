"""The RAGAS judges: the three metrics run per response, one of them (or their mean) ranking the item."""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import partial
from statistics import fmean
from typing import TYPE_CHECKING, Any, ClassVar

from qatui.errors import JudgeError
from qatui.events import Event, Judgement
from qatui.judges.base import Judge, Needs
from qatui.judges.prompts import load_prompts
from qatui.judges.ragas.answer_relevance import answer_relevance, questions_schema
from qatui.judges.ragas.context_relevance import ITEM_CONTEXT, context_relevance, selection_schema
from qatui.judges.ragas.faithfulness import Statements, faithfulness, verdicts_schema
from qatui.judges.ragas.options import (
    RagasAnswerRelevanceOptions,
    RagasMetricOptions,
    RagasOptions,
)
from qatui.judges.ragas.plan import ANSWER_METRICS, Plan, item_facts, make_plan, plan_problem
from qatui.judges.ragas.streams import merged

if TYPE_CHECKING:
    from qatui.data.model import Item
    from qatui.data.presentation import ItemView


class RagasJudge(Judge):
    """RAGAS: faithfulness, answer relevance, context relevance; the `metric` option picks what ranks."""

    name = "ragas"
    summary = "RAGAS: faithfulness (statements vs context), answer relevance (questions back), context relevance"
    needs = Needs()
    Options = RagasOptions
    uses_llm = True
    uses_embedder = True
    prompt_methods = ("ragas", "fence")
    answer_schemas = (Statements, partial(verdicts_schema, 3), partial(questions_schema, 3),
                      partial(selection_schema, 3))
    fixed_metric: ClassVar[str | None] = None
    reproduces = ("ragas:faithfulness", "ragas:answer-relevance", "ragas:context-relevance")

    @property
    def metric(self) -> str:
        """The metric that ranks: the variant's fixed one, else the `metric` option."""
        return self.fixed_metric or getattr(self.options, "metric", "auto")

    @property
    def n_questions(self) -> int:
        """Questions generated per answer for answer relevance."""
        return getattr(self.options, "n_questions", 3)

    def item_problem(self, item: Item) -> str | None:
        """Also not applicable: an item the chosen metric cannot rank (no context; answers vs contexts)."""
        if problem := super().item_problem(item):
            return problem
        facts = item_facts(item)
        key = plan_problem(self.metric, compares_context=facts["compares_context"], has_context=facts["has_context"])
        metric = self.metric
        return {
            "no_context": f"metric {metric} needs retrieved context, and the item has none "
                          "(answer_relevance works without it)",
            "contexts": f"metric {metric} scores answers, and the item compares contexts (meta compares = context): "
                        "use metric auto",
            "answers": "metric context_relevance ranks candidate contexts, and the item compares answers, which "
                       "share one context: use metric auto",
        }.get(key) if key else None

    def expected_calls(self, item: Item) -> tuple[int, int]:
        """Faithfulness 2 per response, answer relevance 1 per response (none for an empty one), context
        relevance 1 per context (+1 for the item's own context under `mean`). Repair re-asks are not counted."""
        try:
            plan = make_plan(self.metric, **item_facts(item))
        except JudgeError:
            return 0, 0
        per = {"faithfulness": 2, "answer_relevance": 1, "context_relevance": 1}
        n = sum(per[m] for text in item.candidates.values() for m in plan.compute
                if text.strip() or m not in ANSWER_METRICS) + plan.item_context
        return n, n

    embeds_answers_of = "questions"

    def embedded_texts(self, item: Item) -> list[str]:
        """Answer relevance embeds the item's question (once, whatever the number of responses) beside the questions
        written back from each response that is not empty."""
        try:
            plan = make_plan(self.metric, **item_facts(item))
        except JudgeError:
            return []
        answers = any(text.strip() for text in item.candidates.values())
        return [item.question] if "answer_relevance" in plan.compute and answers else []

    def embedded_from(self, answer: str) -> list[str]:
        """The questions answer relevance embeds out of one "questions" answer, read as the run reads it."""
        from qatui.llm.errors import ParseError
        from qatui.llm.parse import parse_output

        try:
            data = parse_output(answer, questions_schema(self.n_questions))
        except ParseError:
            return []
        return [q.strip() for q in data.questions if isinstance(q, str) and q.strip()][:self.n_questions]

    async def judge(self, view: ItemView) -> AsyncIterator[Event]:
        """Run the planned metrics for every response at once, then one `Judgement` with all of them in details."""
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
                streams.append(faithfulness(view, response.label, response.text, prompts, record, extra,
                                            **self._asking()))
            if "answer_relevance" in plan.compute:
                streams.append(answer_relevance(view, response.label, response.text, prompts, record, extra,
                                                **self._asking(), n=self.n_questions))
            if "context_relevance" in plan.compute:
                streams.append(context_relevance(view, response.label, response.text, prompts, record, extra,
                                                 **self._asking()))
        if plan.item_context:
            streams.append(context_relevance(view, ITEM_CONTEXT, "\n".join(view.context), prompts, record, extra,
                                             **self._asking()))
        async for event in merged(streams):
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

    def _asking(self) -> dict[str, Any]:
        """What a metric needs to ask the backbone: the run's resources and this judge's temperature."""
        return {"resources": self.resources, "temperature": self.options.temperature}

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


class RagasFaithfulnessJudge(RagasJudge):
    """RAGAS with faithfulness fixed as the ranking (and only) metric."""

    name = "ragas-faithfulness"
    reproduces = ("ragas:faithfulness",)
    summary = "RAGAS faithfulness alone: share of the answer's statements the context supports"
    Options = RagasMetricOptions
    uses_embedder = False
    fixed_metric = "faithfulness"


class RagasAnswerRelevanceJudge(RagasJudge):
    """RAGAS with answer relevance fixed as the ranking (and only) metric."""

    name = "ragas-answer-relevance"
    reproduces = ("ragas:answer-relevance",)
    summary = "RAGAS answer relevance alone: cosine of the question with questions generated from the answer"
    Options = RagasAnswerRelevanceOptions
    fixed_metric = "answer_relevance"


class RagasContextRelevanceJudge(RagasJudge):
    """RAGAS with context relevance fixed as the ranking (and only) metric."""

    name = "ragas-context-relevance"
    reproduces = ("ragas:context-relevance",)
    summary = "RAGAS context relevance alone: share of a candidate context's sentences needed for the question"
    Options = RagasMetricOptions
    uses_embedder = False
    fixed_metric = "context_relevance"
