"""The state of a run as the screens show it, folded from events and free of Textual.

One `TaskView` per (item, judge) holds what the panels draw: the routing decision, key
points with each response's entailment, silver instances, the ranking beside the gold with
its Kendall tau, the failure, and the raw LLM transcript. `RunState.fold` applies one event.
The live run screen folds the engine's events in batches; the session screen replays a
stored session through the same fold (`qatui.tui.saved`), so both draw the same panels.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from qatui.data.model import Item
from qatui.data.presentation import permutation
from qatui.engine.runner import RunCounts
from qatui.events import (
    ChecklistAnswered,
    ContextSentencesSelected,
    EntailmentScored,
    Event,
    InputTrimmed,
    InstancesGenerated,
    ItemFailed,
    ItemNotApplicable,
    ItemStarted,
    Judgement,
    KeyPointsExtracted,
    LLMCallFinished,
    LLMToken,
    MemberVerdict,
    PairJudged,
    QuestionClassified,
    QuestionsGenerated,
    RankingProduced,
    RunFinished,
    RunStarted,
    StatementsExtracted,
    StatementsVerified,
    StatementVerdict,
    Verdict,
)
from qatui.events.labels import candidates_by_label, label_of
from qatui.metrics.item import item_tau, item_undecided
from qatui.text import trim_note
from qatui.tui.baseline_steps import BASELINE_EVENTS, baseline_line

TaskKey = tuple[str, str]
"""(item_id, judge)."""
PACE_WINDOW = 20
"""The ETA assumes a task left takes as long as the mean of this many latest finished ones."""


@dataclass
class TaskView:
    """Everything known about one judge's work on one item, in the labels the judge saw."""

    item_id: str
    judge: str
    item: Item | None
    seed: int
    """The run's seed: the presentation order is drawn from it the first time `order` is read."""
    status: str = "queued"
    route: QuestionClassified | None = None
    key_points: dict[int, list[str]] = field(default_factory=dict)
    support: dict[tuple[int, str, str], float] = field(default_factory=dict)
    """(reference index, response label, key point) -> P(entail) - P(contradict)."""
    instances: dict[str, str] = field(default_factory=dict)
    checklist: dict[str, tuple[str, str]] = field(default_factory=dict)
    """CheckEval's questions in the order asked: question id -> (dimension, question)."""
    answers: dict[tuple[str, str, int], str | None] = field(default_factory=dict)
    """(question id, response label, repeat) -> "yes", "no", or None when the backbone gave no usable answer. Keyed
    by repeat: a judge asked K times showed its last repeat's answers beside a verdict combining all K."""
    pairs: list[PairJudged] = field(default_factory=list)
    """Pairwise comparisons in the order judged (each pair twice: both orders)."""
    statements: dict[tuple[str, int], list[str]] = field(default_factory=dict)
    """RAGAS: (response label, repeat) -> its statements. Every RAGAS field is keyed by repeat as the checklist's
    answers are: each repeat writes its own statements and questions."""
    statement_verdicts: dict[tuple[str, int], list[StatementVerdict]] = field(default_factory=dict)
    """RAGAS: (response label, repeat) -> each statement checked against the context."""
    questions: dict[tuple[str, int], tuple[list[str], list[float]]] = field(default_factory=dict)
    """RAGAS: (response label, repeat) -> (questions written back from it, their cosine to the item's question)."""
    context_sentences: dict[tuple[str, int], tuple[list[str], list[int]]] = field(default_factory=dict)
    """RAGAS: (response label, '' = the item's context; repeat) -> (its sentences, indices of the relevant ones)."""
    members: dict[tuple[str, int], MemberVerdict] = field(default_factory=dict)
    """A jury: each member's verdict (or why none) as it came, by (member name, repeat): a jury asked K times keeps
    every repeat's, not only the last."""
    baseline_steps: list[str] = field(default_factory=list)
    """The baselines' steps (pointwise scores, A/B choices, LINKAGE places, G-Eval ratings), one line each."""
    ranking: list[str] = field(default_factory=list)
    """Response labels, best first."""
    preference: str | None = None
    nli: str = ""
    """The NLI model the verdict says it used (per language: never the English model on Chinese)."""
    """The judge's A / B / tie for an item with a pairwise gold label (A, B as the gold names them)."""
    scores: dict[str, float] = field(default_factory=dict)
    """Scores by response label."""
    repair: str = ""
    tau: float | None = None
    """Agreement with the gold: Kendall tau for a ranking; for a pair +1 agree, -1 opposite, 0 one side a tie."""
    tiers: list[list[str]] = field(default_factory=list)
    """What the judge said, best first, candidates it scored equal in one group (`Verdict.tiers`, candidate ids):
    the ranks shown come from it, never from the strict display order."""
    undecided: bool = False
    """The judge told none of the candidates apart where people did (`metrics.item.item_undecided`): its tau of 0
    is no decision, shown as such."""
    failure: str = ""
    elapsed_s: float = 0.0
    calls: int = 0
    cached: int = 0
    """Of `calls`, how many the call cache answered."""
    started_at: float | None = None
    """When this run started the task, in the run's own seconds (`RunState.elapsed`); None when not running."""
    transcript: list[str] = field(default_factory=list)
    """Append-only chunks of raw LLM text; a pane shows their concatenation."""
    thinking: dict[int, str] = field(default_factory=dict)
    """Index in `transcript` -> what a reasoning model thought before the answer at that chunk (a pane folds it)."""
    streamed: dict[str, str] = field(default_factory=dict)
    """call_id -> the text streamed so far, to tell streamed calls from cached ones."""
    revision: Counter[str] = field(default_factory=Counter)
    """How often each part changed ("status", "route", "points", "instances", "checklist", "pairs", "ragas",
    "ranking", "jury", "transcript"), so a panel redraws only when its part did."""

    _order: list[str] | None = field(default=None, repr=False)

    @property
    def order(self) -> list[str]:
        """Candidate ids in presentation order: `order[i]` was shown as "Response i+1".

        Drawn when first read (a 10,000-item session need not draw them all before its first rows).
        """
        if self._order is None:
            self._order = permutation(self.item, self.seed) if self.item is not None else []
        return self._order

    @order.setter
    def order(self, value: list[str]) -> None:
        """The order a verdict says the candidates were shown in."""
        self._order = list(value)

    @property
    def key(self) -> TaskKey:
        """(item id, judge)."""
        return (self.item_id, self.judge)

    def candidate(self, label: str) -> str:
        """The candidate id shown under `label` ("" when unknown)."""
        return candidates_by_label(self.order).get(label, "")

    def label(self, candidate: str) -> str:
        """The label `candidate` was shown under."""
        return label_of(self.order, candidate) or candidate


class RunState:
    """Every task of a run (all items × judges, done or not) and the run's totals."""

    def __init__(self, items: Iterable[Item], judges: list[str], seed: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.items = list(items)
        self.judges = list(judges)
        self.seed = seed
        self.clock = clock
        self.tasks: dict[TaskKey, TaskView] = {
            (it.id, j): TaskView(it.id, j, it, seed) for it in self.items for j in self.judges
        }
        self.counts = RunCounts()
        self.verdicts: dict[str, dict[str, Verdict]] = {j: {} for j in self.judges}
        self.status = "starting"
        self.n_planned = 0
        """Tasks this run will judge (skipped, already finished ones excluded)."""
        self.n_finished = 0
        """Tasks this run has judged (done or failed)."""
        self.started_at: float | None = None
        self.finished_at: float | None = None
        self.paused_at: float | None = None
        """When the current pause began; None while not paused."""
        self.paused_s = 0.0
        """Seconds spent in earlier pauses."""
        self.changed: set[TaskKey] = set()
        self.durations: deque[float] = deque(maxlen=PACE_WINDOW)
        """How long the latest finished tasks took (pauses excluded); tasks the cache answered whole left out."""
        self.slots = 1
        """The most tasks seen running at once: how many the engine runs side by side."""

    def fold(self, event: Event) -> None:
        """Apply one event of the stream."""
        FOLDERS[type(event)](self, event)

    def task(self, event: Event, *parts: str) -> TaskView:
        """The task an event is about (created for items the dataset did not list), its `parts` marked changed."""
        key = (event.item_id, event.judge)
        if key not in self.tasks:
            self.tasks[key] = TaskView(event.item_id, event.judge, None, self.seed)
        task = self.tasks[key]
        for part in parts:  # not Counter.update: this runs for every event of a 10,000-item replay
            task.revision[part] += 1
        self.changed.add(key)
        return task

    def take_changed(self) -> set[TaskKey]:
        """The tasks changed since the last call."""
        changed, self.changed = self.changed, set()
        return changed

    def count(self, status: str) -> int:
        """How many tasks are in `status`."""
        return sum(1 for t in self.tasks.values() if t.status == status)

    def elapsed(self) -> float:
        """Seconds the run has been running: pauses excluded, frozen while paused and once it ended."""
        if self.started_at is None:
            return 0.0
        stop = self.finished_at if self.finished_at is not None else self.paused_at
        return (stop if stop is not None else self.clock()) - self.started_at - self.paused_s

    def eta(self) -> float | None:
        """Seconds left, if every task left takes as long as the latest ones did; None before one finished, while
        paused, after the end, or when every task left has run past that time (it is then unknown).

        Tasks run `slots` at a time: each running one ends when it has run the average time (at once if it
        already has), and the queued ones take the slots as they free up. So the figure counts down between
        finishes instead of growing with the clock (total elapsed / tasks finished does, since nothing is
        credited for work in flight), and the last tasks, each alone in its slot, are not sped up by the
        concurrency that served the middle of the run. Tasks the cache answered do not set the pace.
        """
        if self.finished_at is not None or self.paused_at is not None or not self.durations:
            return None
        pace = sum(self.durations) / len(self.durations)
        now = self.elapsed()
        running = [t for t in self.tasks.values() if t.status == "running" and t.started_at is not None]
        free = sorted(max(t.started_at + pace - now, 0.0) for t in running)
        free += [0.0] * (max(self.slots, len(free)) - len(free))
        queued = max(self.n_planned - self.n_finished - len(running), 0)
        rounds, extra = divmod(queued, len(free))
        left = max(at + (rounds + (i < extra)) * pace for i, at in enumerate(free))
        return left if left >= 0.5 else None

    def finish(self, task: TaskView) -> None:
        """A task of this run ended (judged or failed): count it, and learn the pace from it."""
        self.n_finished += 1
        if task.started_at is not None and not (task.calls and task.cached == task.calls):
            self.durations.append(self.elapsed() - task.started_at)
        task.started_at = None

    def pause(self) -> None:
        """The engine starts no new task: stop the clock and the ETA (tasks in flight still finish)."""
        if self.paused_at is None:
            self.paused_at = self.clock()
        self.status = "paused"

    def resume(self) -> None:
        """The engine takes tasks again: the clock goes on from where the pause stopped it."""
        self._unpause()
        self.status = "running"

    def _unpause(self) -> None:
        if self.paused_at is not None:
            self.paused_s += self.clock() - self.paused_at
            self.paused_at = None

    def end(self, status: str) -> None:
        """The run stopped: stop the clock; tasks caught running are queued again (a resume redoes them)."""
        self.status = status
        self._unpause()
        if self.finished_at is None:
            self.finished_at = self.clock()
        for task in self.tasks.values():
            if task.status == "running":
                task.status = "queued"
                task.revision["status"] += 1
                self.changed.add(task.key)

    def worst_first(self) -> list[TaskKey]:
        """Tasks with a tau, the judge's worst agreement with people first."""
        scored = [t for t in self.tasks.values() if t.tau is not None]
        return [t.key for t in sorted(scored, key=lambda t: t.tau)]


def _run_started(state: RunState, e: RunStarted) -> None:
    state.status = "running"
    state.n_planned = e.n_tasks
    state.started_at = state.clock()


def _run_finished(state: RunState, e: RunFinished) -> None:
    state.end(e.status)


def _item_started(state: RunState, e: ItemStarted) -> None:
    task = state.task(e, "status")
    task.status = "running"
    task.failure = ""
    task.started_at = state.elapsed()
    state.slots = max(state.slots, sum(1 for t in state.tasks.values() if t.status == "running"))
    task.members.clear()  # a retried jury item asks its members again


def _token(state: RunState, e: LLMToken) -> None:
    task = state.task(e, "transcript")
    if e.call_id not in task.streamed:
        task.streamed[e.call_id] = ""
        task.transcript.append(f"── {e.purpose} · {e.model} ──\n")
    task.streamed[e.call_id] += e.text
    task.transcript.append(e.text)


def _call(state: RunState, e: LLMCallFinished) -> None:
    task = state.task(e, "transcript")
    task.calls += 1
    task.cached += bool(e.cached)
    state.counts.count_call(e)
    streamed = task.streamed.pop(e.call_id, None)
    if streamed is None:
        note = " (cached)" if e.cached else ""
        task.transcript.append(f"── {e.purpose} · {e.model}{note} ──\n")
    elif e.response and e.response != streamed:
        task.transcript.append("\n── kept answer ──\n")
    if e.thinking:
        task.thinking[len(task.transcript)] = e.thinking  # drawn before the answer, folded
    if streamed is None or (e.response and e.response != streamed):
        task.transcript.append(e.response)
    if e.trimmed:
        task.transcript.append(f"\n!! prompt {trim_note(e.trimmed)}")
    if not e.ok:
        task.transcript.append(f"\n!! call failed: {e.error}")
    task.transcript.append("\n")


def _classified(state: RunState, e: QuestionClassified) -> None:
    state.task(e, "route").route = e


def _key_points(state: RunState, e: KeyPointsExtracted) -> None:
    state.task(e, "points").key_points[e.reference_index] = list(e.points)


def _entailment(state: RunState, e: EntailmentScored) -> None:
    state.task(e, "points").support[(e.reference_index, e.response, e.key_point)] = e.p_entail - e.p_contradict


def _instances(state: RunState, e: InstancesGenerated) -> None:
    state.task(e, "instances").instances = dict(e.levels)


def _checklist(state: RunState, e: ChecklistAnswered) -> None:
    task = state.task(e, "checklist")
    task.checklist.setdefault(e.question_id, (e.dimension, e.question))
    task.answers[(e.question_id, e.response, e.repeat)] = e.answer


def _pair(state: RunState, e: PairJudged) -> None:
    """CALF's pairs go to the pairs panel (both orders side by side); MinosEval's win-rate choices are baseline steps."""
    if e.ranked_by == "win_rate":
        _baseline_step(state, e)
    else:
        state.task(e, "pairs").pairs.append(e)


def _statements(state: RunState, e: StatementsExtracted) -> None:
    state.task(e, "ragas").statements[(e.response, e.repeat)] = list(e.statements)


def _statements_verified(state: RunState, e: StatementsVerified) -> None:
    state.task(e, "ragas").statement_verdicts[(e.response, e.repeat)] = list(e.verdicts)


def _questions(state: RunState, e: QuestionsGenerated) -> None:
    state.task(e, "ragas").questions[(e.response, e.repeat)] = (list(e.questions), list(e.similarities))


def _context_sentences(state: RunState, e: ContextSentencesSelected) -> None:
    state.task(e, "ragas").context_sentences[(e.response, e.repeat)] = (list(e.sentences), list(e.relevant))


def _ranking(state: RunState, e: RankingProduced) -> None:
    task = state.task(e, "ranking")
    task.ranking, task.scores = list(e.ranking), dict(e.scores)
    if e.repaired:
        task.repair = f"{e.repair} (raw: {', '.join(e.raw)})"


def _judgement(state: RunState, e: Judgement) -> None:
    task = state.task(e, "ranking")
    task.scores = dict(e.scores)
    task.ranking = list(e.ranking) if e.ranking else task.ranking


def _failed(state: RunState, e: ItemFailed) -> None:
    task = state.task(e, "status", "ranking")
    task.status, task.failure = "failed", e.reason
    state.finish(task)


def _baseline_step(state: RunState, e: Event) -> None:
    state.task(e, "baseline").baseline_steps.append(baseline_line(e))


def _member(state: RunState, e: MemberVerdict) -> None:
    state.task(e, "jury").members[(e.member, e.repeat)] = e


def _trimmed(state: RunState, e: InputTrimmed) -> None:
    state.task(e, "transcript")  # the call's LLMCallFinished carries the same record into the transcript


def _not_applicable(state: RunState, e: ItemNotApplicable) -> None:
    task = state.task(e, "status", "ranking")
    task.status, task.failure = "n/a", e.reason


def _verdict(state: RunState, e: Verdict) -> None:
    task = state.task(e, "status", "ranking")
    task.status, task.failure, task.elapsed_s = "done", "", e.elapsed_s
    task.order = list(e.order)
    task.ranking = [task.label(cid) for cid in e.ranking]
    task.tiers = [list(tier) for tier in e.tiers]
    task.scores = {task.label(cid): s for cid, s in e.scores.items()}
    task.preference = e.preference
    task.nli = str(e.details.get("nli") or "")
    task.tau = item_tau(task.item, e)
    task.undecided = task.tau is not None and item_undecided(task.item, e)
    state.verdicts.setdefault(e.judge, {})[e.item_id] = e
    state.finish(task)


FOLDERS: dict[type[Event], Callable[[RunState, Event], None]] = {
    RunStarted: _run_started,
    RunFinished: _run_finished,
    ItemStarted: _item_started,
    LLMToken: _token,
    LLMCallFinished: _call,
    QuestionClassified: _classified,
    KeyPointsExtracted: _key_points,
    EntailmentScored: _entailment,
    InstancesGenerated: _instances,
    RankingProduced: _ranking,
    ChecklistAnswered: _checklist,
    PairJudged: _pair,
    StatementsExtracted: _statements,
    StatementsVerified: _statements_verified,
    QuestionsGenerated: _questions,
    ContextSentencesSelected: _context_sentences,
    Judgement: _judgement,
    MemberVerdict: _member,
    ItemFailed: _failed,
    ItemNotApplicable: _not_applicable,
    Verdict: _verdict,
    InputTrimmed: _trimmed,
    **dict.fromkeys(BASELINE_EVENTS, _baseline_step),
}
"""How each event type changes the state; a test checks every event type has an entry."""
