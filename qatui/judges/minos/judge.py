"""MinosEval (Fan et al.): route each question, then rank with the strategy fitted to it.

1. Fact detection: the backbone classifies the question (with its reference) as factoid or
   not, with few-shot demonstrations (mode `auto`), or the dataset's label is used (`gold`).
2. Factoid → adaptive key-point scoring: one call per reference extracts key points; the
   NLI model scores every (response ⇒ key point) pair with the RESPONSE AS PREMISE (blank
   and repeated points are dropped, at most 16 kept); pair
   score = P(entail) − P(contradict); response score = mean over the points, best over the
   references. Scores equal once rounded to `tie_digits` are a tie (`qatui.ties`): the
   judge hands the engine its scores alone, so the ranking, the preference and the tied
   groups the metrics read all follow that one rule.
3. Non-factoid → instance-aware listwise ranking: one call writes five silver answers
   (Excellent … Bad), one call ranks the responses with them in the prompt.

Ranking repair rule (recorded in `RankingProduced.repair`, never hidden): an output that is
not a permutation of the labels shown gets one re-ask naming the problem; if the second
answer is still not a permutation, its labels are kept in order (first occurrence, unknown
labels dropped) and the missing ones are appended in presentation order.

Variants: `minos-akps` (key points for every question), `minos-ialr` (instances for every
question) and `listwise` (the ranking call alone, no instances, no routing).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from functools import cache, partial
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, Field, create_model

from qatui.data.language import item_language
from qatui.events import (
    EntailmentScored,
    Event,
    InstancesGenerated,
    Judgement,
    KeyPointsExtracted,
    QuestionClassified,
    RankingProduced,
)
from qatui.judges.base import Judge, JudgeOptions, Needs
from qatui.judges.prompts import chat, guarded, load_prompts, references_block
from qatui.judges.ranking import strict_ranking
from qatui.judges.schemas import bounded_text, capped_strings, exactly_n_of
from qatui.llm.fence import Fence

if TYPE_CHECKING:
    from qatui.data.model import Item
    from qatui.data.presentation import ItemView

LEVELS = ("excellent", "good", "fair", "poor", "bad")


MAX_KEY_POINTS = 16
INSTANCE_CHARS = 1000
"""Cap on one silver instance, only so constrained decoding always ends: the most that llama.cpp's grammar held
(the embedded model's runtime before llguidance, which holds 20,000), kept so answers stay comparable."""
INSTANCE_TOKENS = 2048
"""Token budget of the instances call: five full answers (the backbone's default 1024 would cut them off)."""
"""Key points kept per reference after dropping blanks and repeats (small models loop)."""


class Classification(BaseModel):
    """The router's answer: factoid or not, and why (schema sent to the backbone)."""

    reason: Annotated[str, bounded_text(300)]
    factoid: bool


class KeyPoints(BaseModel):
    """The key points extracted from one reference (schema sent to the backbone)."""

    key_points: Annotated[list[str], capped_strings(MAX_KEY_POINTS, 300)]


class Instances(BaseModel):
    """Five silver answers of falling quality (schema sent to the backbone)."""

    excellent: Annotated[str, bounded_text(INSTANCE_CHARS)]
    good: Annotated[str, bounded_text(INSTANCE_CHARS)]
    fair: Annotated[str, bounded_text(INSTANCE_CHARS)]
    poor: Annotated[str, bounded_text(INSTANCE_CHARS)]
    bad: Annotated[str, bounded_text(INSTANCE_CHARS)]


class MinosOptions(JudgeOptions):
    """MinosEval settings (see the module docstring)."""

    route: Literal["auto", "gold"] = "auto"
    """auto: the backbone classifies each question; gold: the dataset's question type when it has one."""
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    """Per-judge override of the backbone's temperature (default: the backbone's, 0)."""


@cache
def ranking_schema(labels: tuple[str, ...]) -> type[BaseModel]:
    """`rank`: a list of strings, advertised to the backbone as a list of the labels shown.

    Constrained decoding gets the enum and the length (exactly one entry per label, so a small
    model that loops still closes its JSON); validation accepts any strings, so a bad ranking
    reaches the repair rule instead of failing the item.
    """
    return create_model("Ranking", rank=(Annotated[list[str], exactly_n_of(labels, len(labels))], ...))


def ranking_problem(raw: list[str], labels: list[str]) -> str:
    """Why `raw` is not a permutation of `labels` ('' when it is)."""
    problems = []
    if unknown := [x for x in raw if x not in labels]:
        problems.append(f"unknown label(s) {', '.join(dict.fromkeys(unknown))}")
    if dups := sorted({x for x in raw if raw.count(x) > 1}):
        problems.append(f"repeated label(s) {', '.join(dups)}")
    if missing := [x for x in labels if x not in raw]:
        problems.append(f"missing label(s) {', '.join(missing)}")
    return "; ".join(problems)


def repair_ranking(raw: list[str], labels: list[str]) -> list[str]:
    """The documented fallback: known labels in the given order, then the missing ones in presentation order."""
    kept = [x for x in dict.fromkeys(raw) if x in labels]
    return kept + [x for x in labels if x not in kept]


def scores_from_ranking(ranking: list[str]) -> dict[str, float]:
    """Listwise rankings have no scores: position becomes one, 1.0 for the best down to 0.0."""
    n = len(ranking)
    return {label: (n - 1 - i) / (n - 1) if n > 1 else 1.0 for i, label in enumerate(ranking)}


class MinosJudge(Judge):
    """MinosEval: factoid → key points × NLI; non-factoid → silver instances + listwise ranking."""

    name = "minos"
    summary = "MinosEval: routes factoid / non-factoid, key points + NLI or instance-aware listwise ranking"
    needs = Needs(reference=True, min_candidates=2)
    Options = MinosOptions
    uses_llm = True
    uses_nli = True
    prompt_methods = ("minos", "fence")
    answer_schemas = (Instances, Classification, KeyPoints,
                      partial(ranking_schema, ("Response 1", "Response 2", "Response 3")))
    strategy: ClassVar[Literal["route", "akps", "ialr", "listwise"]] = "route"
    reproduces = ("minoseval:minoseval", "minoseval:minoseval-gold-route")

    async def judge(self, view: ItemView) -> AsyncIterator[Event]:
        """Route the question, then score by key points and NLI or rank with silver instances."""
        prompts = load_prompts("minos", view.language)
        route: dict[str, str | None] = {"question_type": None, "routed_by": None}
        if self.strategy == "route":
            classified = await self._classify(view, prompts)
            route = {"question_type": classified.question_type, "routed_by": classified.source}
            yield classified
        if self.strategy == "akps" or route["question_type"] == "factoid":
            async for event in self._key_point_scoring(view, prompts, route):
                yield event
            return
        levels: dict[str, str] = {}
        if self.strategy in ("route", "ialr"):
            result = await self.resources.llm.complete(
                self._asked(prompts["instances"], (), view, view.references),
                purpose="instances", schema=Instances, temperature=self.options.temperature,
                max_tokens=INSTANCE_TOKENS,
            )
            names = prompts["levels"]
            levels = {names[k]: getattr(result.data, k) for k in LEVELS}
            yield InstancesGenerated(levels=levels)
        produced = await self._listwise(view, prompts, levels)
        yield produced
        yield Judgement(scores=produced.scores, ranking=produced.ranking,
                        details={"strategy": "listwise", **route, "repaired": produced.repaired})

    def expected_calls(self, item: Item) -> tuple[int, int]:
        """Per route: classify 1; key points one per reference (plus, when the item's NLI is the
        backbone, one NLI call per reference and response); instances 1 + ranking 1.

        Re-asks of a malformed answer or ranking are not counted (they happen only when
        the backbone errs).
        """
        key_points, listwise = len(item.references), 2
        if self.uses_nli and self.resources.nli_name_for(item_language(item)) == "llm":
            key_points += len(item.references) * len(item.candidates)  # LLM-NLI: one call per (reference, response)
        if self.strategy == "akps":
            return key_points, key_points
        if self.strategy == "ialr":
            return listwise, listwise
        if self.strategy == "listwise":
            return 1, 1
        if self.options.route == "gold" and item.question_type is not None:
            n = key_points if item.question_type == "factoid" else listwise
            return n, n
        return 1 + min(key_points, listwise), 1 + max(key_points, listwise)

    @staticmethod
    def _asked(section: dict, answer_keys: tuple[str, ...], view: ItemView, references: list[str]) -> list[dict]:
        """The chat of a call that shows the question and `references` (fenced), with the fence note."""
        return guarded(chat(section, answer_keys, {"reference": "Reference"}, question=view.question,
                            reference=references), view.language)

    async def _classify(self, view: ItemView, prompts: dict) -> QuestionClassified:
        if self.options.route == "gold" and view.question_type is not None:
            return QuestionClassified(question_type=view.question_type, source="gold",
                                      rationale="taken from the dataset's label")
        result = await self.resources.llm.complete(
            self._asked(prompts["classify"], ("reason", "factoid"), view, view.references),
            purpose="classify", schema=Classification, temperature=self.options.temperature,
        )
        return QuestionClassified(question_type="factoid" if result.data.factoid else "non-factoid",
                                  rationale=result.data.reason, source="llm")

    async def _key_point_scoring(self, view: ItemView, prompts: dict, route: dict) -> AsyncIterator[Event]:
        per_reference: list[dict[str, float]] = []
        for index, reference in enumerate(view.references):
            result = await self.resources.llm.complete(
                self._asked(prompts["key_points"], ("key_points",), view, [reference]),
                purpose="key_points", schema=KeyPoints, temperature=self.options.temperature,
            )
            points = list(dict.fromkeys(p.strip() for p in result.data.key_points if p.strip()))[:MAX_KEY_POINTS]
            if not points:
                points = [reference]  # nothing extracted: the reference itself is the one key point
            yield KeyPointsExtracted(points=points, reference_index=index)
            pairs = [(r.text, point) for r in view.responses for point in points]
            probs = await self.resources.nli_for(view.language).apredict(pairs)
            sums = {r.label: 0.0 for r in view.responses}
            for (response, point), p, label in zip(
                pairs, probs, (r.label for r in view.responses for _ in points), strict=True
            ):
                yield EntailmentScored(response=label, key_point=point, reference_index=index,
                                       p_entail=p.entail, p_neutral=p.neutral, p_contradict=p.contradict)
                sums[label] += p.entail - p.contradict
            per_reference.append({label: total / len(points) for label, total in sums.items()})
        scores = {r.label: max(ref[r.label] for ref in per_reference) for r in view.responses}
        best_reference = {r.label: max(range(len(per_reference)), key=lambda i: per_reference[i][r.label])
                          for r in view.responses}
        ranking = strict_ranking(scores, view.labels, self.options.tie_digits)  # shown; the engine ties alike
        yield RankingProduced(ranking=ranking, scores=scores)
        yield Judgement(scores=scores,
                        details={"strategy": "key_points", **route, "best_reference": best_reference,
                                 "per_reference": per_reference, "nli": self.resources.nli_name_for(view.language)})

    async def _listwise(self, view: ItemView, prompts: dict, levels: dict[str, str]) -> RankingProduced:
        # the plain baseline asks as the paper's listwise prompt does, naming no criteria
        section = prompts["listwise" if self.strategy == "listwise" else "rank"]
        instances = ""
        if levels:
            lines = "\n".join(section["level_line"].format(level=k, text=v) for k, v in levels.items())
            instances = section["instances"].format(levels=lines)
        fence = Fence(view.question, *(r.text for r in view.responses), *view.references)
        responses = "\n".join(section["response_block"].format(block=fence(r.label, r.text)) for r in view.responses)
        messages = guarded([
            {"role": "system", "content": section["system"].format()},
            {"role": "user", "content": section["user"].format(
                question=view.question, reference=references_block(fence, view.references), instances=instances,
                responses=responses)},
        ], view.language)
        labels = view.labels
        return await ask_ranking(self.resources.llm, messages, labels,
                                 lambda problem: section["repair"].format(problem=problem, labels=", ".join(labels)),
                                 temperature=self.options.temperature)


async def ask_ranking(llm: Any, messages: list[dict], labels: list[str], repair: Callable[[str], str], *,
                      purpose: str = "rank", schema: type[BaseModel] | None = None, **call: Any) -> RankingProduced:
    """Ask for a ranking of `labels` and read it by the repair rule (module docstring): one re-ask whose text is
    `repair(problem)`, then the known labels in order with the missing ones appended."""
    schema = schema or ranking_schema(tuple(labels))
    result = await llm.complete(messages, purpose=purpose, schema=schema, **call)
    raw = list(result.data.rank)
    problem = ranking_problem(raw, labels)
    if not problem:
        return RankingProduced(ranking=raw, scores=scores_from_ranking(raw), raw=raw)
    retry = messages + [
        {"role": "assistant", "content": result.text},
        {"role": "user", "content": repair(problem)},
    ]
    again = await llm.complete(retry, purpose=f"{purpose}_repair", schema=schema, **call)
    second = list(again.data.rank)
    if not (second_problem := ranking_problem(second, labels)):
        return RankingProduced(ranking=second, scores=scores_from_ranking(second), repaired=True,
                               repair=f"re-asked once ({problem})", raw=raw)
    fixed = repair_ranking(second, labels)
    return RankingProduced(ranking=fixed, scores=scores_from_ranking(fixed), repaired=True, raw=second,
                           repair=f"re-asked once ({problem}); still {second_problem}: kept the known labels "
                                  "in order and appended the missing ones in presentation order")


class MinosAKPSJudge(MinosJudge):
    """MinosEval's ablation: key points and NLI for every question, no routing."""

    name = "minos-akps"
    summary = "MinosEval ablation: key points + NLI for every question"
    needs = Needs(reference=True, min_candidates=2)
    strategy = "akps"
    reproduces = ("minoseval:akps",)


class MinosIALRJudge(MinosJudge):
    """MinosEval's ablation: instance-aware listwise ranking for every question, no routing."""

    name = "minos-ialr"
    summary = "MinosEval ablation: silver instances + listwise ranking for every question"
    needs = Needs(reference=True, min_candidates=2)
    strategy = "ialr"
    reproduces = ("minoseval:ialr",)
    uses_nli = False


class ListwiseJudge(MinosJudge):
    """The listwise baseline: the backbone ranks the responses, with no silver instances."""

    name = "listwise"
    summary = "Listwise (MinosEval baseline): the backbone orders the responses against the reference; no criteria named"
    needs = Needs(reference=True, min_candidates=2)
    strategy = "listwise"
    reproduces = ("minoseval:listwise",)
    uses_nli = False
