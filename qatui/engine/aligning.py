"""`qatui judges align`: a judge's prompt revised by a writer model from the items where it disagrees with people.

1. The labelled items are split, seeded and stratified, into train and test (`split_items`).
2. The judge runs on both (`engine.alignment.evaluate_async`: real sessions).
3. Each round, the items the best judge so far got wrong on train (those it failed on first, with why, then the
   worst judged; at most `shown`) go to the writer with the judge's current text, every text from the user's files and data fenced
   (`engine.align_writer`); the writer answers a JSON object holding a revised text. The proposal is built as a judge
   (`judges.editable.Editable.build`): a text that is refused, unchanged, or would ask more calls per
   item than the judge it revises is recorded with the reason and never run. Otherwise it runs on
   train, and `choose_best` keeps the best of the candidates by their train figures alone, each over every
   train item (a failed item counted as agreeing with no one).
4. The kept judge runs on test once, at the end; the report pairs it with the start on test.

The test items never choose: `choose_best` is given train evaluations and nothing else, and the
only evaluations on test are the start's and the final's, made after the choice. Each candidate that
ran is kept as a version in the judge history (`store.judge_versions`) with its train figures.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from qatui.errors import JudgeError

if TYPE_CHECKING:
    from qatui.config import Config
    from qatui.data.model import Dataset, Item
    from qatui.engine.alignment import Comparison, Evaluation
    from qatui.events import Event
    from qatui.judges.base import Judge
    from qatui.judges.editable import Editable
    from qatui.judges.resources import Resources
    from qatui.store.judge_versions import JudgeHistory
    from qatui.store.session import SessionStore

MIN_SIDE = 2
"""The fewest labelled items train and test may each hold: a CI (and a paired one) needs two."""
MAX_ROUNDS = 20
"""The most rounds `--rounds` allows: each costs a writer call and a judge run over train."""
MAX_SHOWN = 50
"""The most disagreeing items one writer call may show (`--shown`)."""

Status = Literal["start", "scored", "refused", "failed"]


@dataclass(frozen=True)
class Settings:
    """How `align` runs: rounds, the train share of the labelled items, the split's seed, items shown per round."""

    rounds: int = 3
    train_share: float = 0.5
    seed: int = 0
    shown: int = 8


@dataclass
class Candidate:
    """One text the loop considered: the start (round 0) or a round's proposal, and what became of it."""

    round: int
    text: str
    status: Status
    reason: str = ""
    analysis: str = ""
    version: str = ""
    train: Evaluation | None = None

    def doc(self) -> dict[str, Any]:
        """The candidate as `--json` prints it."""
        return {"round": self.round, "status": self.status, "reason": self.reason, "analysis": self.analysis,
                "version": self.version, "train": self.train.figures() if self.train else None, "text": self.text}


@dataclass
class AlignState:
    """What the loop has done so far; filled as it goes, so a Ctrl-C still finds every finished step."""

    name: str
    train_ids: list[str] = field(default_factory=list)
    test_ids: list[str] = field(default_factory=list)
    stratified_by: str = ""
    candidates: list[Candidate] = field(default_factory=list)
    start_test: Evaluation | None = None
    final_test: Evaluation | None = None
    best: int = 0
    comparison: Comparison | None = None
    stopped: str = ""
    """Why the rounds ended early ("" when every round ran)."""
    sessions: list[str] = field(default_factory=list)
    """Every session the loop made, in order, the one a Ctrl-C stopped included."""


def stratum(item: Item) -> str:
    """What an item's split keeps in proportion: the people's majority preference (A / B / tie) for pairwise gold,
    the number of gold tiers for ranking gold (made into two groups at the median by `split_items`)."""
    gold = item.gold
    if gold is None:
        return ""
    if gold.kind == "pairwise":
        return gold.label
    if gold.kind == "ranking":
        return str(len(gold.tiers))
    return gold.kind


def split_items(dataset: Dataset, share: float, seed: int) -> tuple[list[str], list[str], str]:
    """(train ids, test ids, what the split is stratified by), seeded; each side in the dataset's order.

    scikit-learn's `train_test_split` keeps each stratum's share on both sides. A stratum too small to be
    split (one item) joins the largest one; when the split still cannot keep the strata (a side smaller
    than the number of strata) it is made without them, and says so. Too few labelled items for `MIN_SIDE`
    on each side are refused before any work.
    """
    from sklearn.model_selection import train_test_split

    from qatui.engine.alignment import AlignmentError, labelled_ids

    ids = labelled_ids(dataset)
    n_train = round(len(ids) * share)
    if len(ids) < 2 * MIN_SIDE or not MIN_SIDE <= n_train <= len(ids) - MIN_SIDE:
        raise AlignmentError(f"{dataset.path}: {len(ids)} labelled item(s) cannot be split {share:g} / {1 - share:g} "
                             f"with at least {MIN_SIDE} items on each side (train {n_train}, test {len(ids) - n_train}); "
                             "label more items or change --train-share")
    by_id = {item.id: item for item in dataset.items}
    kind = by_id[ids[0]].gold.kind  # type: ignore[union-attr]
    labels = [stratum(by_id[i]) for i in ids]
    how = "people's majority preference (A / B / tie)" if kind == "pairwise" else "the number of gold tiers"
    if kind == "ranking":
        counts = sorted(int(label) for label in labels)
        median = counts[len(counts) // 2]
        labels = ["fewer tiers" if int(label) < median else "more tiers" for label in labels]
        how = f"the number of gold tiers (below {median} / {median} or more)"
    sizes = {label: labels.count(label) for label in set(labels)}
    largest = max(sizes, key=lambda label: (sizes[label], label))
    labels = [label if sizes[label] > 1 else largest for label in labels]
    try:
        train, test = train_test_split(ids, train_size=n_train, random_state=seed, stratify=labels)
    except ValueError:  # a side smaller than the number of strata
        train, test = train_test_split(ids, train_size=n_train, random_state=seed)
        how = "nothing (too few items to keep the strata apart)"
    chosen = set(train)
    return [i for i in ids if i in chosen], [i for i in ids if i not in chosen], how


def choose_best(train: Sequence[Evaluation | None]) -> int:
    """The index of the candidate to keep, from their train evaluations only (None: not run).

    The highest train figure over every train item wins, an item a candidate failed on counted as agreeing with
    no one (`Evaluation.over_every_item`): every candidate is measured on the same items, so a start that failed
    some is not measured on its easy ones alone against a proposal measured on all. A tie keeps the earlier
    candidate (the incumbent). A proposal whose evaluation failed an item, or has no figure, is never kept; the
    start (index 0) always may be, so a proposal must beat it. Test evaluations cannot reach this function.
    """
    best, best_value = 0, None
    for index, evaluation in enumerate(train):
        if evaluation is None or (index and evaluation.failed) or (value := evaluation.over_every_item()) is None:
            continue
        if best_value is None or value > best_value:
            best, best_value = index, value
    return best


@dataclass(frozen=True)
class Plan:
    """The backbone calls `align` will make, before any work, as (fewest, most) per step; None when unknown."""

    start: tuple[int, int] | None
    per_round_judge: tuple[int, int] | None
    per_round_writer: int
    rounds: int
    end: tuple[int, int] | None

    @property
    def total(self) -> tuple[int, int] | None:
        """Fewest: every proposal refused (no judge call) and the start kept (no final run on test);
        most: every proposal run on train and a new judge run on test at the end."""
        if self.start is None or self.per_round_judge is None or self.end is None:
            return None
        fewest = self.start[0] + self.rounds * self.per_round_writer
        most = self.start[1] + self.rounds * (self.per_round_writer + self.per_round_judge[1]) + self.end[1]
        return fewest, most

    def doc(self) -> dict[str, Any]:
        """The plan as `--plan --json` prints it."""
        return {"start": self.start, "per_round": {"judge": self.per_round_judge, "writer": self.per_round_writer},
                "rounds": self.rounds, "end": self.end, "total": self.total}


def plan_calls(judge: Judge, dataset: Dataset, train_ids: list[str], test_ids: list[str], rounds: int) -> Plan:
    """The calls of `align` with `judge` as the start: start on train and test, a writer call and a train run per
    round, the kept judge on test at the end (re-asks of unreadable answers are not counted, as in `run --plan`)."""
    from qatui.engine.jobs import expected_calls

    def calls(ids: list[str]) -> tuple[int, int] | None:
        return expected_calls([judge], dataset.chosen(ids))[judge.name]

    train, test = calls(train_ids), calls(test_ids)
    start = None if train is None or test is None else (train[0] + test[0], train[1] + test[1])
    return Plan(start=start, per_round_judge=train, per_round_writer=1, rounds=rounds, end=test)


def _most_calls(judge: Judge, dataset: Dataset, ids: list[str]) -> int | None:
    from qatui.engine.jobs import expected_calls

    found = expected_calls([judge], dataset.chosen(ids))[judge.name]
    return None if found is None else found[1]


@dataclass
class Aligner:
    """The loop's parts: the editable judge, its data and models, the writer, where sessions and versions go."""

    editable: Editable
    dataset: Dataset
    config: Config
    resources: Resources
    writer: Any
    """The writer's backbone client (`LLMClient`: `complete` with a schema)."""
    store: SessionStore
    history: JudgeHistory
    settings: Settings = field(default_factory=Settings)
    on_event: Callable[[Event], None] | None = None
    on_step: Callable[[str], None] | None = None
    convention: str = "strict"

    def _say(self, line: str) -> None:
        if self.on_step is not None:
            self.on_step(line)

    async def _evaluate(self, state: AlignState, judge: Judge, ids: list[str], label: str) -> Evaluation:
        from qatui.engine.alignment import evaluate_async

        self._say(f"{label}: {judge.name} on {len(ids)} item(s)")
        return await evaluate_async(judge, self.dataset, ids, self.config, store=self.store, resources=self.resources,
                                    seed=self.settings.seed, convention=self.convention, on_event=self.on_event,
                                    on_session=state.sessions.append)

    def _keep(self, candidate: Candidate, judge: Judge) -> None:
        """Store a candidate that ran as a version of the judge, with its train figures."""
        figures = {**(candidate.train.figures() if candidate.train else {}), "on": "train items",
                   "round": candidate.round, "dataset": self.dataset.path}  # flat, as the Judge Lab keeps them
        note = ("judges align: the start" if candidate.round == 0
                else f"judges align: round {candidate.round} proposal")
        candidate.version = self.history.save(self.editable.name, candidate.text, figures, note, version=judge.version)

    async def run(self, state: AlignState) -> AlignState:
        """Every step into `state` as it finishes (see the module docstring); returns it."""
        settings = self.settings
        if not state.train_ids:
            state.train_ids, state.test_ids, state.stratified_by = split_items(self.dataset, settings.train_share,
                                                                               settings.seed)
        start_judge = self.editable.build(self.editable.text, self.resources)
        most = _most_calls(start_judge, self.dataset, state.train_ids)
        start = Candidate(round=0, text=self.editable.text, status="start")
        start.train = await self._evaluate(state, start_judge, state.train_ids, "start, train")
        self._keep(start, start_judge)
        state.candidates.append(start)
        state.start_test = await self._evaluate(state, start_judge, state.test_ids, "start, test")
        items = {item.id: item for item in self.dataset.items}
        if start.train.value is None:
            state.stopped = (f"no round: the judge gave no verdict to measure on train ({len(start.train.failed)} "
                             f"item(s) failed; see `qatui sessions show {start.train.session_id}`)")
        for number in range(1, settings.rounds + 1 if start.train.value is not None else 1):
            best = state.candidates[state.best]
            wrong = best.train.disagreeing()[:settings.shown] if best.train else []  # failed items first
            if not wrong:  # no item it failed on, none it judged otherwise than people
                state.stopped = f"round {number}: the kept judge agrees with people on every train item"
                break
            candidate = await self._propose(state, number, best, [items[i] for i in wrong], most)
            state.candidates.append(candidate)
            if candidate.status == "scored":
                state.best = choose_best([c.train if c.status in ("start", "scored") else None
                                          for c in state.candidates])
        kept = state.candidates[state.best]
        if state.best == 0:
            state.final_test = state.start_test
        else:
            judge = self.editable.build(kept.text, self.resources, f"round {kept.round} proposal")
            state.final_test = await self._evaluate(state, judge, state.test_ids, f"round {kept.round}, test")
        from qatui.engine.alignment import compare

        test_items = [items[i] for i in state.test_ids]
        state.comparison = compare(test_items, state.start_test, state.final_test, seed=settings.seed,
                                   convention=self.convention)
        return state

    async def _propose(self, state: AlignState, number: int, best: Candidate, wrong: list[Item], most: int | None) -> Candidate:
        """Round `number`: the writer's proposal, refused with its reason or run on train."""
        from qatui.engine.align_writer import WRITER_MAX_TOKENS, Proposal, writer_messages
        from qatui.llm.errors import LLMCallError, ParseError

        assert best.train is not None
        failed = sum(1 for item in wrong if item.id in best.train.failed)
        self._say(f"round {number}: the writer reads {len(wrong)} disagreement(s)"
                  + (f", {failed} of them item(s) the judge failed on" if failed else ""))
        try:
            result = await self.writer.complete(writer_messages(best.text, wrong, best.train),
                                                purpose="align:write", schema=Proposal, max_tokens=WRITER_MAX_TOKENS)
        except (LLMCallError, ParseError) as e:
            return Candidate(round=number, text="", status="refused", reason=f"the writer gave no usable answer: {e}")
        proposal: Proposal = result.data
        text = proposal.judge_file
        candidate = Candidate(round=number, text=text, status="refused", analysis=proposal.analysis)
        if _fingerprint(text) == _fingerprint(best.text):
            candidate.reason = "the proposal is the text it revises, unchanged"
            return candidate
        try:
            judge = self.editable.build(text, self.resources, f"round {number} proposal")
        except JudgeError as e:
            candidate.reason = str(e)
            return candidate
        calls = _most_calls(judge, self.dataset, _train(best))
        if most is not None and (calls is None or calls > most):
            candidate.reason = "the proposal would ask more backbone calls per item than the judge it revises"
            return candidate
        candidate.train = await self._evaluate(state, judge, _train(best), f"round {number}, train")
        candidate.status = "scored"
        if candidate.train.failed:
            candidate.status = "failed"
            candidate.reason = (f"{len(candidate.train.failed)} train item(s) failed; a candidate with failed items "
                                "is never kept")
        self._keep(candidate, judge)
        return candidate


def _train(candidate: Candidate) -> list[str]:
    """The train item ids, as the candidate's train evaluation ran them."""
    assert candidate.train is not None
    return list(candidate.train.item_ids)


def _fingerprint(text: str) -> str:
    """A text up to its line ends and trailing blanks: an unchanged proposal is caught whatever its newlines."""
    lines = [line.rstrip() for line in text.strip().splitlines()]
    return hashlib.sha256("\n".join(lines).encode("utf-8", "surrogatepass")).hexdigest()
