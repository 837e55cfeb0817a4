"""`FileJudge`: a judge built from a judge file, one class per file so it is listed and chosen like a built-in.

Per kind (docs/JUDGE_FILES.md):
- score: one call per answer; the score `[[x]]` on the file's scale, read strictly with one re-ask
  (`brackets.ask_bracketed`); with `[scale] logprobs = true` and a provider that returns them,
  G-Eval's probability-weighted score (`baselines.geval_scoring`) instead of the digit written;
- label: one call per answer; the label's place in the set (worst 0) is its score;
- checklist: one call per answer, every question answered yes or no; the share of yes is its score;
- pair: every unordered pair once (or, with `both_orders`, in both orders: swap and confirm, orders
  that disagree make a tie and the consistency rate is in the details); win rates rank (a tie is
  half a win), and `rematch_ties` compares equal win counts once more, swapped (MinosEval's rule);
- listwise: one call ranks every answer, read by MinosEval's repair rule (`minos.judge.ask_ranking`).
Every data text is fenced (`qatui.llm.fence`) and the fence note added (`prompts.guarded`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from functools import cache
from itertools import combinations
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import create_model
from pydantic.fields import FieldInfo

from qatui.events import ChecklistAnswered, Event, Judgement, PairJudged, PointScored
from qatui.judges.base import Judge, Needs, as_they_finish
from qatui.judges.brackets import ask_bracketed
from qatui.judges.files import answers, readers
from qatui.judges.files.spec import ANSWER_FIELDS, FileJudgeOptions, JudgeFile, template_fields, verdict_key
from qatui.judges.prompts import context_line, guarded, numbered_lines, reference_line, references_block
from qatui.llm.fence import Fence, fence_many

if TYPE_CHECKING:
    from qatui.data.model import Item
    from qatui.data.presentation import ItemView, Response
    from qatui.judges.files.spec import JudgeSpec

TOP_LOGPROBS = 5
"""Alternatives asked per token when a scale weighs by log-probabilities (as G-Eval)."""
DEFAULT_REASK = {
    "score": "Your score could not be read: {reason}. Reply again, ending with the score written as [[{max}]].",
    "pair": "Your verdict could not be read: {reason}. Reply again with the verdict as asked.",
    "label": "Your label could not be read: {reason}. Reply again with exactly one of: {labels}.",
    "checklist": "Your answers could not be read: {reason}. Reply again with yes or no for every question.",
    "listwise": "Your ranking was not usable: {reason}. Reply again listing each label exactly once, best first.",
}


class FileJudge(Judge):
    """A judge defined by a judge file; `file_judge_class` makes one subclass per file."""

    file: ClassVar[JudgeFile]
    Options = FileJudgeOptions
    uses_llm = True

    def __init__(self, options: FileJudgeOptions | None = None, resources: Any = None) -> None:
        super().__init__(options, resources)
        self.spec: JudgeSpec = self.file.spec
        self._schemas: dict[tuple[str, ...], Any] = {}

    # -- what it is --------------------------------------------------------------------------------

    def definition(self) -> dict[str, str]:
        """The text that defines the judge: `NAME.toml` -> the TOML text as read. Named by the judge, never by the
        file it was read from: the same text copied to another file, or proposed by `judges align` before it is
        saved, is the same judge, so its version is the same (keyed by the file's name, one text had three)."""
        return {f"{self.name}.toml": self.file.text}

    def earlier_versions(self) -> set[str]:
        """The version this text had before 2026-12-02, when `definition` was keyed by the file's name."""
        from pathlib import Path

        from qatui.store.judge_versions import version_of

        if self.file.source == "built-in":
            return set()
        return {version_of({**self.version_document(), "definition": {Path(self.file.source).name: self.file.text}})}

    def item_problem(self, item: Item) -> str | None:
        """Also not applicable to a pair judge: more candidates than `max_candidates`."""
        if problem := super().item_problem(item):
            return problem
        n, limit = len(item.candidates), self.options.max_candidates
        if self.spec.kind == "pair" and n > limit:
            low, high = self.expected_calls(item)
            return (f"judges every pair of candidates, and the item has {n} > max_candidates = {limit} "
                    f"({low} to {high} calls); raise max_candidates to allow it")
        return None

    def expected_calls(self, item: Item) -> tuple[int, int]:
        """One call per answer (score, label, checklist), one per ranking, one or two per pair (+ rematches)."""
        n = len(item.candidates)
        if self.spec.kind == "listwise":
            return 1, 1
        if self.spec.kind != "pair":
            return n, n
        pairs = n * (n - 1) // 2
        both = self.spec.pair is not None and self.spec.pair.both_orders
        rematches = (pairs if n % 2 else (n - 1) * (n - 2) // 2) if self._rematch else 0
        return pairs * (2 if both else 1), pairs * (2 if both else 1) + rematches

    @property
    def _rematch(self) -> bool:
        return self.spec.pair is not None and self.spec.pair.rematch_ties

    # -- prompts -----------------------------------------------------------------------------------

    def section(self, language: str) -> dict[str, Any]:
        """The prompt for an item in `language`: the default, with that language's variant over it."""
        prompts = self.spec.prompts
        base = prompts.model_dump(exclude={"en", "zh"}, exclude_none=True)
        variant = getattr(prompts, language, None) if language in ("en", "zh") else None
        if variant is not None:
            base.update(variant.model_dump(exclude_none=True))
        base.setdefault("reask", DEFAULT_REASK[self.spec.kind])
        return base

    def statics(self) -> dict[str, Any]:
        """Placeholders filled from the file itself."""
        spec = self.spec
        found: dict[str, Any] = {"criteria": spec.criteria}
        if spec.scale is not None:
            found.update(min=spec.scale.min, max=spec.scale.max)
        if spec.labels is not None:
            found["labels"] = ", ".join(spec.labels.values)
        if spec.checklist is not None:
            found["questions"] = numbered_lines("Q{number}. {text}", spec.checklist.questions)
        return found

    def _fields(self, section: dict[str, Any], question: str, shown: dict[str, str | list[tuple[str, str]]],
                references: list[str], context: list[str]) -> dict[str, Any]:
        """The user template's fields: the question, the answers, references and context fenced."""
        texts = [t for value in shown.values() for t in ([value] if isinstance(value, str) else [x for _, x in value])]
        uses_context = "context" in template_fields(section["user"])
        fence = Fence(question, *texts, *references, *(context if uses_context else ()))
        fields: dict[str, Any] = {"question": question, **self.statics()}
        for key, value in shown.items():
            if isinstance(value, str):
                fields[key] = fence({"answer": "Answer", "answer_a": "Answer A", "answer_b": "Answer B"}[key], value)
            else:
                fields[key] = "\n".join(f"{fence(label, text)}\n" for label, text in value)
        if "reference" in section:
            fields["reference"] = reference_line(section, references, fence)
        else:
            fields["reference"] = references_block(fence, references) if references else ""
        if "context" in section:
            fields["context"] = context_line(section, context, fence) if uses_context else ""
        else:
            fields["context"] = fence_many(fence, "Context", context) if context and uses_context else ""
        return fields

    def messages(self, view: ItemView, shown: dict[str, Any]) -> list[dict[str, str]]:
        """System, the few-shot turns, then the user turn; with the fence note."""
        section = self.section(view.language)
        statics = self.statics()
        out = [{"role": "system", "content": section["system"].format(**statics)}]
        keys = answers.answer_keys(self.spec)
        for example in section.get("examples", []):
            given = {k: v for k, v in example.items() if k in ANSWER_FIELDS[self.spec.kind]}
            fields = self._fields(section, example.get("question", ""), given,
                                  [example["reference"]] if example.get("reference") else [],
                                  [example["context"]] if example.get("context") else [])
            out.append({"role": "user", "content": section["user"].format(**fields)})
            out.append({"role": "assistant", "content": json.dumps({k: example[k] for k in keys}, ensure_ascii=False)})
        fields = self._fields(section, view.question, shown, list(view.references), list(view.context))
        out.append({"role": "user", "content": section["user"].format(**fields)})
        return guarded(out, view.language)

    def schema(self, labels: tuple[str, ...] = ()) -> Any:
        """The answer schema (built once per set of labels shown)."""
        if labels not in self._schemas:
            self._schemas[labels] = answers.answer_schema(self.spec, labels)
        return self._schemas[labels]

    def _reask(self, section: dict[str, Any]) -> str:
        """The re-ask text with the file's own placeholders filled and {reason} left for `ask_bracketed`, which
        formats it once more: the braces the first fill leaves are doubled again."""
        filled = section["reask"].format(**self.statics(), reason="\x00")
        return filled.replace("{", "{{").replace("}", "}}").replace("\x00", "{reason}")

    async def _ask(self, messages: list[dict[str, str]], read: Any, section: dict[str, Any], **extra: Any) -> Any:
        return await ask_bracketed(self.resources.llm, messages, read, purpose=f"file:{self.spec.kind}",
                                   schema=self.schema(), reask=self._reask(section),
                                   temperature=self.options.temperature, max_tokens=self.options.max_tokens, **extra)

    # -- judging -----------------------------------------------------------------------------------

    async def judge(self, view: ItemView) -> AsyncIterator[Event]:
        """Judge one item as the file's kind says (module docstring)."""
        kind = self.spec.kind
        runs = {"score": self._scores, "label": self._labels, "checklist": self._checklist, "pair": self._pairs,
                "listwise": self._ranking}
        async for event in runs[kind](view):
            yield event

    async def _scores(self, view: ItemView) -> AsyncIterator[Event]:
        scale = self.spec.scale
        assert scale is not None
        section = self.section(view.language)
        read = readers.score_reader(scale)
        digits = tuple(str(d) for d in range(scale.min, scale.max + 1))

        async def one(response: Response) -> tuple[PointScored, dict[str, float] | None]:
            from qatui.judges.baselines.geval_scoring import digit_probabilities, weighted_score

            got = await self._ask(self.messages(view, {"answer": response.text}), read, section,
                                  logprobs=TOP_LOGPROBS if scale.logprobs else None)
            probabilities = digit_probabilities(getattr(got.result, "logprobs", None), digits, verdict=got.value,
                                                field=verdict_key(self.spec)) if scale.logprobs else None
            score = weighted_score(probabilities) if probabilities else got.value
            return PointScored(response=response.label, score=score, raw=got.raw, reasked=got.reasked,
                               top=float(scale.max)), probabilities

        scores: dict[str, float] = {}
        weighted: dict[str, dict[str, float]] = {}
        async for event, probabilities in as_they_finish(one(r) for r in view.responses):
            scores[event.response] = event.score
            if probabilities:
                weighted[event.response] = probabilities
            yield event
        details = {"scale": [scale.min, scale.max]}
        if scale.logprobs:
            details["weighted"] = {label: weighted.get(label) for label in view.labels}
        yield Judgement(scores={label: scores[label] for label in view.labels}, details=details)

    async def _labels(self, view: ItemView) -> AsyncIterator[Event]:
        assert self.spec.labels is not None
        values = self.spec.labels.values
        section = self.section(view.language)
        read = readers.label_reader(self.spec)

        async def one(response: Response) -> tuple[PointScored, str]:
            got = await self._ask(self.messages(view, {"answer": response.text}), read, section)
            return PointScored(response=response.label, score=float(values.index(got.value)), raw=got.raw,
                               reasked=got.reasked, label=got.value), got.value

        chosen: dict[str, str] = {}
        scores: dict[str, float] = {}
        async for event, label in as_they_finish(one(r) for r in view.responses):
            chosen[event.response], scores[event.response] = label, event.score
            yield event
        yield Judgement(scores={label: scores[label] for label in view.labels},
                        details={"labels": {label: chosen[label] for label in view.labels}, "scale": list(values)})

    async def _checklist(self, view: ItemView) -> AsyncIterator[Event]:
        assert self.spec.checklist is not None
        questions = self.spec.checklist.questions
        section = self.section(view.language)
        read = readers.checklist_reader(len(questions))

        async def one(response: Response) -> tuple[str, list[str]]:
            got = await self._ask(self.messages(view, {"answer": response.text}), read, section)
            return response.label, got.value

        said: dict[str, list[str]] = {}
        async for label, found in as_they_finish(one(r) for r in view.responses):
            said[label] = found
            for k, (question, answer) in enumerate(zip(questions, found, strict=True), 1):
                yield ChecklistAnswered(dimension=self.name, sub_dimension="", question=question, question_id=f"Q{k}",
                                        response=label, answer=answer, position=k)  # type: ignore[arg-type]
        yield Judgement(scores={label: said[label].count("yes") / len(questions) for label in view.labels},
                        details={"answers": {label: said[label] for label in view.labels}})

    async def _ranking(self, view: ItemView) -> AsyncIterator[Event]:
        from qatui.judges.minos.judge import ask_ranking

        section = self.section(view.language)
        labels = view.labels
        messages = self.messages(view, {"answers": [(r.label, r.text) for r in view.responses]})
        reask = section["reask"]
        produced = await ask_ranking(
            self.resources.llm, messages, labels,
            lambda problem: reask.format(**self.statics(), reason=problem, labels=", ".join(labels)),
            purpose="file:listwise", schema=self.schema(tuple(labels)), temperature=self.options.temperature,
            max_tokens=self.options.max_tokens)
        yield produced
        yield Judgement(scores=produced.scores, ranking=produced.ranking, details={"repaired": produced.repaired})

    async def _pairs(self, view: ItemView) -> AsyncIterator[Event]:
        from qatui.judges.pairwise.ab import ab_scores, tied_groups
        from qatui.judges.pairwise.judge import combine, position_details, win_rates

        labels = view.labels
        both = self.spec.pair is not None and self.spec.pair.both_orders
        asked = [order for x, y in combinations(labels, 2) for order in ([(x, y), (y, x)] if both else [(x, y)])]
        judged: list[PairJudged] = []
        async for event in as_they_finish(self._pair(view, a, b) for a, b in asked):
            judged.append(event)
            yield event
        votes = {(x, y): [e.winner for e in sorted((e for e in judged if {e.first, e.second} == {x, y}),
                                                   key=lambda e: e.first != x)]
                 for x, y in combinations(labels, 2)}
        results = {pair: combine(v) for pair, v in votes.items()}
        rates = win_rates(labels, results)
        scores = {label: 0.5 if rate is None else rate for label, rate in rates.items()}
        # CALF's structure, so the item view and the run summary read a file judge's position bias as the built-in's
        details: dict[str, Any] = {"both_orders": both,
                                   "pairs": [{"pair": list(p), "votes": v, "result": results[p]}
                                             for p, v in votes.items()], **position_details(votes, judged)}
        if self._rematch:
            wins = {label: sum(1 for r in results.values() if r == label) for label in labels}
            groups = tied_groups(wins)
            again = [(y, x) for group in groups for x, y in combinations(group, 2)]
            rematches: list[PairJudged] = []
            async for event in as_they_finish(self._pair(view, a, b, rematch=True) for a, b in again):
                rematches.append(event)
                yield event
            rematch_wins = {label: sum(1 for e in rematches if e.winner == label) for label in labels}
            scores = ab_scores(labels, wins, rematch_wins)
            details.update(wins=wins, tied_groups=groups, rematch_wins=rematch_wins)
        winner = results[(labels[0], labels[1])] if len(labels) == 2 else None
        yield Judgement(scores=scores, winner=winner, details=details)

    async def _pair(self, view: ItemView, first: str, second: str, rematch: bool = False) -> PairJudged:
        texts = {r.label: r.text for r in view.responses}
        section = self.section(view.language)
        got = await self._ask(self.messages(view, {"answer_a": texts[first], "answer_b": texts[second]}),
                              readers.choice_reader(self.spec), section)
        explanation = ""
        if self.spec.answer.explanation and got.result is not None:
            explanation = str(getattr(got.result.data, self.spec.answer.explanation_key, ""))
        note = "rematch: " if rematch else ""
        return PairJudged(first=first, second=second, choice=got.value, rationale=note + " ".join(explanation.split()))


def _needs(spec: JudgeSpec) -> Needs:
    """References (context) are needed when the user template shows {reference} ({context}) bare, without a line."""
    used = set(template_fields(spec.prompts.user or ""))
    return Needs(reference="reference" in used and spec.prompts.reference is None,
                 context="context" in used and spec.prompts.context is None,
                 min_candidates=2 if spec.kind in ("pair", "listwise") else 1)


def _options_class(file: JudgeFile) -> type[FileJudgeOptions]:
    """`FileJudgeOptions` with the file's `[options]` as defaults (each still checked against its range)."""
    fields: dict[str, Any] = {}
    for key, value in file.options.items():
        info = FieldInfo.merge_field_infos(FileJudgeOptions.model_fields[key], default=value)
        fields[key] = (info.annotation, info)
    return create_model(f"{file.name}Options", __base__=FileJudgeOptions, __doc__=f"Options of {file.name}.",
                        **fields)




@cache
def file_judge_class(file: JudgeFile) -> type[FileJudge]:
    """The judge class of one judge file (the same class for the same file text)."""
    summary = file.description.strip().splitlines()[0] if file.description.strip() else f"a {file.kind} judge"
    return type(f"FileJudge[{file.name}]", (FileJudge,), {
        "__doc__": f"The judge of {file.source}.", "name": file.name, "summary": summary, "file": file,
        "needs": _needs(file.spec), "Options": _options_class(file), "__module__": __name__,
    })
