"""A jury: a judge made of judges, each member a (judge, backbone) pair or a judge with no backbone.

Every member sees the item exactly as the jury does (one presentation order, one set of
labels) and the members run at once. Each member's verdict, or why it gave none, is an
event (`MemberVerdict`) stored with the jury's verdict. The jury decides from the members
that answered, by the rules of `votes`, only when its quorum did; otherwise the item
fails with each absent member's reason. A member that cannot judge an item (its
`item_problem`) counts as absent: when too few members remain the jury is not applicable.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import Field, field_validator

from qatui.errors import JudgeError
from qatui.events import Event, Judgement, MemberVerdict
from qatui.judges.base import Judge, JudgeOptions, as_they_finish
from qatui.judges.jury.votes import Aggregation, Quorum, decide, quorum_size, resolved
from qatui.judges.ranking import pair_preference, strict_ranking
from qatui.text import did_you_mean

if TYPE_CHECKING:
    from qatui.data.model import Item
    from qatui.data.presentation import ItemView
    from qatui.judges.resources import Resources


class JuryOptions(JudgeOptions):
    """A jury's members and how it decides (a `[juries.NAME]` table of the config holds the same keys)."""

    members: list[str] = Field(default_factory=list)
    """Members, comma-separated: judge@backbone for a judge that calls a backbone (judge alone: the run's backbone),
    judge for one that needs none; e.g. pairwise@local/smollm2,rouge-l,length."""
    aggregation: Aggregation = "auto"
    """auto: majority on two responses, borda on more; or majority, mean (of normalised scores), borda."""
    quorum: Quorum = "majority"
    """Members that must answer an item: majority (more than half), all, or a number."""
    name: str = Field("", json_schema_extra={"form": False})
    """The `[juries.NAME]` table the jury came from ("" when its members were listed inline)."""
    member_options: dict[str, dict[str, Any]] = Field(default_factory=dict, json_schema_extra={"form": False})
    """Each member judge's options (judge name -> options); filled from `[judges.NAME]` when the jury is built."""

    @field_validator("members", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        return [part.strip() for part in value.split(",")] if isinstance(value, str) else value


@dataclass(frozen=True)
class Member:
    """One member: its name as shown and stored (judge@backbone, or judge) and the judge itself."""

    name: str
    judge: Judge


def _member(spec: str, jury: Jury) -> Member:
    """The member a spec names, built with its own backbone; a bad spec is a JudgeError naming it."""
    from qatui.judges.registry import JUDGES, make_judge

    judge_name, at, backbone = (part.strip() for part in spec.partition("@"))
    where = f"jury member {spec!r}"
    if not judge_name:
        raise JudgeError(f"{where}: empty: write judge@backbone or judge, separated by commas")
    if judge_name == "jury":
        raise JudgeError(f"{where}: a jury cannot be a member of a jury")
    if judge_name not in JUDGES:
        raise JudgeError(f"{where}: unknown judge {judge_name!r}{did_you_mean(judge_name, JUDGES)}; known judges: "
                         f"{', '.join(sorted(JUDGES))}"
                         " (--jury takes members separated by commas, or the NAME of a [juries.NAME] table)")
    config = jury.resources.config
    options = jury.options.member_options.get(judge_name, config.judge_options(judge_name))
    probe = make_judge(judge_name, options, jury.resources)
    if at and not backbone:
        raise JudgeError(f"{where}: no backbone after '@'")
    if backbone and not (probe.uses_llm or probe.uses_nli):
        raise JudgeError(f"{where}: {judge_name} calls no backbone; name it without @{backbone}")
    if backbone and "/" not in backbone and backbone not in config.backbones:
        raise JudgeError(f"{where}: unknown backbone {backbone!r}{did_you_mean(backbone, config.backbones)}: "
                         f"not a [backbones.{backbone}] table of "
                         f"{config.source or 'the config'}, nor a LiteLLM model string such as openai/gpt-4o-mini")
    if probe.uses_llm and probe.options.repeats > 1:
        raise JudgeError(f"{where}: its own repeats = {probe.options.repeats} would change what each of its votes is "
                         "without the jury reporting it; repeats belong to the jury: --repeats K (or the jury's "
                         f"repeats) asks every member K times, or set repeats = 1 in [judges.{judge_name}]")
    if not probe.uses_llm and not backbone:
        return Member(judge_name, probe)
    chosen = backbone or jury.resources.backbone
    resources = jury.resources if chosen == jury.resources.backbone else jury.resources.with_backbone(chosen)
    return Member(f"{judge_name}@{chosen}", make_judge(judge_name, options, resources))


class Jury(Judge):
    """Judges made of judges: members' verdicts on one presentation, aggregated under a quorum."""

    name = "jury"
    summary = "Several judges vote (judge@backbone members): strict majority, mean normalised score or Borda"
    Options = JuryOptions

    def __init__(self, options: JudgeOptions | None = None, resources: Resources | None = None) -> None:
        super().__init__(options, resources)
        opts: JuryOptions = self.options  # type: ignore[assignment]
        if len(opts.members) < 2:
            raise JudgeError("a jury needs at least two members, as judge@backbone or judge separated by commas "
                             "(command line: --jury MEMBERS, or --jury NAME of a [juries.NAME] table of the config)")
        self.members = [_member(spec, self) for spec in opts.members]
        names = [m.name for m in self.members]
        if twice := sorted({n for n in names if names.count(n) > 1}):
            raise JudgeError(f"jury member {twice[0]!r} is named twice (members: {', '.join(names)})")
        n = len(self.members)
        if isinstance(opts.quorum, int) and not 1 <= opts.quorum <= n:
            raise JudgeError(f"jury quorum {opts.quorum}: must be from 1 to {n}, the number of members")
        self.quorum = quorum_size(opts.quorum, n)
        self.uses_llm = any(m.judge.uses_llm for m in self.members)  # type: ignore[misc]
        self.uses_nli = any(m.judge.uses_nli for m in self.members)  # type: ignore[misc]
        self.uses_embedder = any(m.judge.uses_embedder for m in self.members)  # type: ignore[misc]
        self._problems: dict[str, dict[str, str]] = {}

    def parts(self) -> list[Judge]:
        """The members' judges, each with its own backbone."""
        return [m.judge for m in self.members]

    def definition(self) -> dict[str, str]:
        """Each member's definition texts, named `MEMBER/FILE` (`pairwise@gpt/pairwise.en.toml`)."""
        return {f"{m.name}/{file}": text for m in self.members for file, text in m.judge.definition().items()}

    def version_document(self) -> dict[str, Any]:
        """The jury's own (its options, the members' texts) and each member's version: a member's change is the jury's."""
        return {**super().version_document(), "members": {m.name: m.judge.version for m in self.members}}

    def member_problems(self, item: Item) -> dict[str, str]:
        """Member name -> why it cannot judge `item`, for the members that cannot."""
        found = {m.name: p for m in self.members if (p := m.judge.item_problem(item)) is not None}
        self._problems[item.id] = found
        return found

    def item_problem(self, item: Item) -> str | None:
        """Not applicable when forced majority meets more than two responses, or too few members can judge the item."""
        if self.options.aggregation == "majority" and len(item.candidates) != 2:  # type: ignore[attr-defined]
            return (f"aggregation majority decides between two responses, and the item has {len(item.candidates)} "
                    "(use borda or mean)")
        absent = self.member_problems(item)
        if len(self.members) - len(absent) < self.quorum:
            reasons = "; ".join(f"{name}: {problem}" for name, problem in absent.items())
            return f"only {len(self.members) - len(absent)} of {len(self.members)} members can judge it, " \
                   f"quorum {self.quorum} ({reasons})"
        return None

    def member_calls(self, item: Item) -> dict[str, tuple[int, int] | None]:
        """Backbone calls each member makes on `item`: 0 for a member that cannot judge it, and for every
        member when the jury itself cannot (too few members can, or majority on more than two responses)."""
        jury_na = self.item_problem(item) is not None
        return {m.name: (0, 0) if jury_na or m.judge.item_problem(item) else m.judge.expected_calls(item)
                for m in self.members}

    def expected_calls(self, item: Item) -> tuple[int, int] | None:
        """The members' calls summed; None when a member cannot say."""
        counts = list(self.member_calls(item).values())
        if any(c is None for c in counts):
            return None
        return sum(c[0] for c in counts if c), sum(c[1] for c in counts if c)

    def describe_options(self) -> dict:
        """The options with members named in full (judge@backbone) and each member judge's options, for a resume."""
        stored = super().describe_options()
        stored["members"] = [m.name for m in self.members]
        stored["member_options"] = {m.judge.name: m.judge.describe_options() for m in self.members}
        return stored

    async def judge(self, view: ItemView) -> AsyncIterator[Event]:
        """Every member on the same view at once, each verdict as it comes, then the jury's judgement."""
        absent = self._problems.get(view.item_id, {})
        verdicts = [MemberVerdict(member=name, status="n/a", reason=reason) for name, reason in absent.items()]
        for verdict in verdicts:
            yield verdict
        asked = [self._ask(m, view) for m in self.members if m.name not in absent]
        async for verdict in as_they_finish(asked):
            verdicts.append(verdict)
            yield verdict
        order = {m.name: i for i, m in enumerate(self.members)}
        verdicts.sort(key=lambda v: order[v.member])
        rule = resolved(self.options.aggregation, len(view.labels))  # type: ignore[attr-defined]
        yield decide(verdicts, view.labels, rule, self.quorum)

    async def _ask(self, member: Member, view: ItemView) -> MemberVerdict:
        """One member's verdict, or its failure with the reason (an error never escapes to the other members)."""
        artifacts: list[dict] = []
        judgement = None
        try:
            async for event in member.judge.judge(view):
                if isinstance(event, Judgement):
                    judgement = event
                else:
                    artifacts.append(event.model_dump(mode="json"))
            if judgement is None:
                raise JudgeError("the judge ended without a judgement")
            return member_verdict(member.name, judgement, view.labels, member.judge.options.tie_digits, artifacts)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - a member's failure is recorded with its reason, never scored
            return MemberVerdict(member=member.name, status="failed", reason=f"{type(e).__name__}: {e}",
                                 artifacts=artifacts)


def member_verdict(member: str, judgement: Judgement, labels: list[str], tie_digits: int,
                   artifacts: list[dict]) -> MemberVerdict:
    """A member's judgement as its verdict: scores for every label, a strict ranking, and a winner on two responses."""
    if missing := [label for label in labels if label not in judgement.scores]:
        raise JudgeError(f"the judge gave no score for {', '.join(missing)}")
    scores = {label: float(judgement.scores[label]) for label in labels}
    if judgement.ranking is not None and sorted(judgement.ranking) != sorted(labels):
        raise JudgeError(f"the judge's ranking {judgement.ranking} is not a permutation of {labels}")
    ranking = list(judgement.ranking) if judgement.ranking else strict_ranking(scores, labels, tie_digits)
    if judgement.winner is not None and judgement.winner not in (*labels, "tie"):
        raise JudgeError(f"the judge named {judgement.winner!r} as winner, not one of {labels}")
    winner = None
    if len(labels) == 2:
        if judgement.winner is not None:
            winner = judgement.winner
        else:
            choice = pair_preference(scores[labels[0]], scores[labels[1]], tie_digits)
            winner = {"A": labels[0], "B": labels[1]}.get(choice, "tie")
    return MemberVerdict(member=member, scores=scores, ranking=ranking, winner=winner, tie_digits=tie_digits,
                         details=judgement.details, artifacts=artifacts)
