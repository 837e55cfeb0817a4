"""The engine: runs judges over items concurrently and streams every event they produce.

`Engine.run()` is an async generator. Judges work in a bounded pool of tasks; their events
are stamped with item and judge, forwarded in order of arrival, and each finished
(item, judge) is recorded in the session. After every drained batch of events the session
is flushed before its results are reported, so a kill at any moment loses nothing that was
reported finished; results that arrive faster than flushes pay (a cached replay) wait and
share one flush, since each flush rewrites the open shard whole (`FLUSH_SHARE`), while every
other event (an item started, its steps, its tokens) is passed on at once. Cancelling
the consumer (Ctrl-C, the TUI's cancel) stops the pool, flushes, and leaves the session
resumable: a later run skips what is done and retries what failed. `pause()` lets the tasks
in flight finish but starts no new one until `resume()`; cancelling a paused run still ends it.
Backbone answers are streamed as `LLMToken`s only where `watch_tokens` says so: True or False
for the whole run, or a function of (item id, judge) asked at each call (the TUI streams only
the task whose transcript is on screen); otherwise each call is one plain request, which costs
a third of the CPU (LiteLLM builds objects for every chunk).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from qatui.data.model import Item
from qatui.data.presentation import ItemView, present
from qatui.engine.heap import frozen_heap
from qatui.errors import SessionError
from qatui.events import (
    EVENT_SINK,
    TOKENS_WATCHED,
    Event,
    ItemFailed,
    ItemNotApplicable,
    ItemStarted,
    Judgement,
    LLMCallFinished,
    LLMToken,
    RunFinished,
    RunStarted,
    Verdict,
)
from qatui.metrics.repeated import aggregate
from qatui.events.labels import candidates_by_label
from qatui.judges.ranking import pair_preference, pair_tiers, ranking_tiers, strict_ranking
from qatui.llm.batch import BATCH
from qatui.llm.cache import ANSWERS_USED, AnswersUsed
from qatui.llm.errors import LLMCallError
from qatui.llm.deferred import RUN_STOP, RUN_STOPPING
from qatui.llm.repeat import REPEAT
from qatui.llm.spend import SPEND, TaskSpend
from qatui.engine.spend import add_deferred, tally_deployments

if TYPE_CHECKING:
    from qatui.judges.base import Judge
    from qatui.llm.batch import Batcher
    from qatui.llm.spend import SpendCap
    from qatui.store.session import Session

_DONE = object()
FLUSH_SHARE = 0.05
"""While results keep arriving, flushes take at most about this share of the run's time: after a flush
that took t seconds, the next waits until 19 t has passed (a result, never another event, is reported at most
that late)."""


class JudgementError(Exception):
    """A judge's closing judgement does not fit the item (missing scores, bad ranking)."""


@dataclass
class RunCounts:
    """What happened so far in this run (not counting skipped work)."""

    done: int = 0
    failed: int = 0
    skipped: int = 0
    not_applicable: int = 0
    deferred: int = 0
    """Tasks left pending because the cost cap refused one of their calls (a resume with a higher cap does them)."""
    deferred_cost_usd: float = 0.0
    """What the calls of those tasks cost: paid, but recorded with no result (their answers are in the cache)."""
    calls: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    """Of `completion_tokens`, those spent thinking (where the provider says)."""
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    """Calls made whose cost is unknown (`LLMCallFinished.unpriced`): `cost_usd` is a floor while any is."""
    failures: list[ItemFailed] = field(default_factory=list)
    deployments: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per deployment of a backbone with deployments ("BACKBONE/NAME"): see `tally_deployments`."""

    def count_call(self, call: LLMCallFinished) -> None:
        """Add one backbone call to the tallies (calls, cache hits, tokens, cost, deployments)."""
        self.calls += 1
        self.cached += call.cached
        self.prompt_tokens += call.prompt_tokens
        self.completion_tokens += call.completion_tokens
        self.reasoning_tokens += call.reasoning_tokens
        self.cost_usd += call.cost_usd
        self.unpriced_calls += call.unpriced and not call.cached
        tally_deployments(self.deployments, call.deployment, call.hop_errors,
                          call.prompt_tokens + call.completion_tokens)


def to_verdict(item: Item, judge: Judge, view: ItemView, order: list[str], judgement: Judgement) -> Verdict:
    """Map a label-space judgement onto candidate ids: a strict ranking (display), the tied groups, a preference."""
    labels = view.labels
    missing = [label for label in labels if label not in judgement.scores]
    if missing:
        raise JudgementError(f"the judge gave no score for {', '.join(missing)}")
    if not_numbers := [label for label in labels if not math.isfinite(judgement.scores[label])]:
        raise JudgementError(f"the judge's score for {', '.join(not_numbers)} is not a number "
                             f"({', '.join(repr(judgement.scores[label]) for label in not_numbers)}): "
                             "it would tie with every score and move every mean")
    if judgement.ranking is None:
        ranking_labels = strict_ranking(judgement.scores, labels, judge.options.tie_digits)
    elif sorted(judgement.ranking) == sorted(labels):
        ranking_labels = list(judgement.ranking)
    else:
        raise JudgementError(f"the judge's ranking {judgement.ranking} is not a permutation of {labels}")
    by_label = candidates_by_label(order)
    scores = {by_label[label]: float(s) for label, s in judgement.scores.items() if label in by_label}
    pair = item.pair
    preference = None
    if pair is not None:
        if judgement.winner is not None:
            winner = judgement.winner if judgement.winner == "tie" else by_label.get(judgement.winner)
            if winner not in ("tie", *pair):
                raise JudgementError(f"the judge named {judgement.winner!r} as winner, not one of {labels}")
            preference = "tie" if winner == "tie" else ("A" if winner == pair[0] else "B")
        else:
            preference = pair_preference(scores[pair[0]], scores[pair[1]], judge.options.tie_digits)
    ranking = [by_label[label] for label in ranking_labels]
    return Verdict(
        scores=scores,
        ranking=ranking,
        order=order,
        pair=pair,
        preference=preference,
        tiers=pair_tiers(pair, preference, ranking) if judgement.winner is not None and pair is not None
        else ranking_tiers(scores, ranking, judge.options.tie_digits),
        details=judgement.details,
    )


class Engine:
    """Runs `judges` over `items` with at most `concurrency` (item, judge) tasks at once."""

    def __init__(
        self,
        items: Iterable[Item],
        judges: list[Judge],
        *,
        seed: int,
        concurrency: int = 4,
        session: Session | None = None,
        skip: set[tuple[str, str]] | frozenset[tuple[str, str]] = frozenset(),
        watch_tokens: bool | Callable[[str, str], bool] = False,
        spend_cap: SpendCap | None = None,
        batcher: Batcher | None = None,
    ) -> None:
        self.items = list(items)
        self.spend_cap = spend_cap
        self.batcher = batcher
        """Batch mode (`--batch`, `qatui.llm.batch`): the items' backbone calls go through the provider's batch API."""
        self.started_at: float | None = None
        """`time.monotonic()` when `run` began (what a live view counts from)."""
        """The run's cost cap (`--max-cost`): once it refuses a call, no new task starts and the run ends "capped"."""
        self.watch_tokens = watch_tokens
        self.judges = judges
        self.seed = seed
        self.concurrency = max(1, concurrency)
        self.session = session
        self.versions = {j.name: j.version for j in judges}
        """Each judge's version, stamped on every verdict it gives (`Judge.version`)."""
        self.not_applicable = {(it.id, j.name): problem for it in self.items for j in judges
                               if (problem := j.item_problem(it)) is not None}
        self.tasks = [(it, j) for it in self.items for j in judges
                      if (it.id, j.name) not in skip and (it.id, j.name) not in self.not_applicable]
        self.counts = RunCounts(skipped=len(self.items) * len(judges) - len(self.tasks) - len(self.not_applicable))
        self.stopped = ""
        """Why the run stopped, once a backbone failed the live check put off to its first call the cache could not
        answer (`llm.preflight`): no new task starts, the task that met it is left pending, and the run ends
        "stopped"."""
        self.stopping = False
        """Set by `stop_calls` (a run's first Ctrl-C): no new task starts and no new call is sent, while the calls in
        flight return (cached and recorded); the items they belonged to are left pending, never failed."""
        self._running = asyncio.Event()
        self._running.set()

    def stop_calls(self) -> None:
        """Stop the run the way its first Ctrl-C promises: no new task, no new backbone call (`RunStopping`), the
        calls in flight waited for, so that what they cost is recorded and their answers kept in the call cache (a
        resume takes them from there); their items are left pending. Call on the engine's loop."""
        self.stopping = True
        self._running.set()  # a paused worker wakes, sees the stop and ends

    @property
    def paused(self) -> bool:
        """Whether workers are held before their next task."""
        return not self._running.is_set()

    def pause(self) -> None:
        """Start no new task; those in flight finish. Call on the engine's loop (`loop.call_soon_threadsafe`)."""
        self._running.clear()

    def resume(self) -> None:
        """Let workers take tasks again. Call on the engine's loop."""
        self._running.set()

    async def run(self) -> AsyncIterator[Event]:
        """Yield every event of the run, ending with `RunFinished`."""
        self.started_at = time.monotonic()
        queue: asyncio.Queue = asyncio.Queue()
        todo: asyncio.Queue = asyncio.Queue()
        for task in self.tasks:
            todo.put_nowait(task)
        workers = [asyncio.create_task(self._worker(todo, queue)) for _ in range(min(self.concurrency, len(self.tasks)))]
        status = "cancelled"
        yield RunStarted(
            session_id=self.session.id if self.session else "",
            n_items=len(self.items),
            n_tasks=len(self.tasks),
            n_skipped=self.counts.skipped,
        )
        for event in self._record_not_applicable():
            yield event
        with frozen_heap():  # modules, dataset and models outlive the run: out of the collector's way
            try:
                live, next_flush, held = len(workers), 0.0, []
                while live or held:
                    wait = max(0.0, next_flush - time.monotonic()) if held else None
                    batch = await self._next_batch(queue, wait) if live else []
                    live -= self._take(batch, queue)
                    for event in batch:
                        if isinstance(event, (Verdict, ItemFailed)) and self.session is not None:
                            held.append(event)  # reported once it is on disk
                        elif event is not _DONE:
                            yield event  # steps, tokens, starts: at once, so a live view never lags a flush
                    if held and (not live or time.monotonic() >= next_flush):
                        started = time.monotonic()
                        self.session.flush()
                        ended = time.monotonic()
                        next_flush = ended + (ended - started) * (1 / FLUSH_SHARE - 1)
                        for event in held:
                            yield event
                        held = []
                status = ("stopped" if self.stopped else "cancelled" if self.stopping else
                          "capped" if self.spend_cap is not None and self.spend_cap.reached else "completed")
            finally:
                for w in workers:
                    w.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
                if self.batcher is not None:
                    await self.batcher.close()
                if self.session is not None:
                    try:
                        self.session.flush()
                    except SessionError:  # it cannot be saved (a full disk): free it for a resume, in this process too
                        self.session.release_writer()
                        raise
        yield RunFinished(status=status, n_done=self.counts.done, n_failed=self.counts.failed, reason=self.stopped)

    @staticmethod
    async def _next_batch(queue: asyncio.Queue, wait: float | None) -> list:
        """The next queued event, waiting at most `wait` seconds (None: for as long as it takes); [] on timeout.

        Not `asyncio.wait_for`: in Python 3.11 it swallows a cancellation (Ctrl-C) that lands as the get completes.
        """
        if wait is None:
            return [await queue.get()]
        getter = asyncio.ensure_future(queue.get())
        try:
            await asyncio.wait({getter}, timeout=wait)
        finally:
            if not getter.done():
                getter.cancel()
        return [getter.result()] if getter.done() and not getter.cancelled() else []

    def _take(self, batch: list, queue: asyncio.Queue) -> int:
        """Move what is queued into `batch` and count its events; returns how many workers ended."""
        while not queue.empty():
            batch.append(queue.get_nowait())
        ended = 0
        for event in batch:
            if event is _DONE:
                ended += 1
            else:
                self._count(event)
        return ended

    def _record_not_applicable(self) -> list[ItemNotApplicable]:
        """The items a judge cannot judge: stored once (a resume finds them recorded) and reported."""
        recorded = self.session.not_applicable_keys() if self.session is not None else set()
        events = []
        for (item_id, judge), reason in self.not_applicable.items():
            if self.session is not None and (item_id, judge) not in recorded:
                self.session.record_not_applicable(item_id, judge, reason)
            events.append(ItemNotApplicable(item_id=item_id, judge=judge, reason=reason))
        self.counts.not_applicable = len(events)
        if self.session is not None and events:
            self.session.flush()
        return events

    def _count(self, event: Event) -> None:
        if isinstance(event, LLMCallFinished):
            self.counts.count_call(event)
        elif isinstance(event, Verdict):
            self.counts.done += 1
        elif isinstance(event, ItemFailed):
            self.counts.failed += 1
            self.counts.failures.append(event)

    def _defer(self, judge: str, calls: list[LLMCallFinished]) -> None:
        """A task the cost cap, a backbone that failed its put-off check or a stop left pending: what its calls cost
        is added to the session's `deferred_cost_usd`, so that a resume's cap counts it (the results that would
        record it are not kept), and the calls and their tokens to `deferred_calls` under its judge
        (`add_deferred`), so that the session's spend counts the calls and tokens it paid for, not only
        their cost."""
        self.counts.deferred += 1
        cost = sum(call.cost_usd for call in calls)
        self.counts.deferred_cost_usd += cost
        if self.session is not None and calls:
            meta = self.session.meta
            self.session.update_meta(deferred_cost_usd=float(meta.get("deferred_cost_usd") or 0) + cost,
                                     deferred_calls=add_deferred(meta.get("deferred_calls"), judge, calls))

    async def _worker(self, todo: asyncio.Queue, out: asyncio.Queue) -> None:
        try:
            while True:
                await self._running.wait()  # the pause gate: checked before each new task
                if todo.empty() or self.stopped or self.stopping or (
                        self.spend_cap is not None and self.spend_cap.reached):
                    break
                item, judge = todo.get_nowait()
                await self._judge_one(item, judge, out.put_nowait)
        finally:
            out.put_nowait(_DONE)

    @staticmethod
    def repeats(judge: Judge) -> int:
        """How many times each judgement of `judge` is asked (its `repeats` option; `jobs` sets 1 for a judge
        that calls no backbone, whose answer never changes)."""
        return max(1, int(getattr(judge.options, "repeats", 1)))

    @staticmethod
    async def _ask(judge: Judge, view: ItemView, repeat: int, forward: Callable[[Event], None],
                   artifacts: list[Event]) -> Judgement:
        """One asking of `judge` on `view` as repeat `repeat` (its calls get that repeat's seed and cache key);
        returns its closing judgement."""
        start = len(artifacts)
        bound = REPEAT.set(repeat)
        try:
            async for raw in judge.judge(view):
                forward(raw)
        finally:
            REPEAT.reset(bound)
        judgements = [e for e in artifacts[start:] if isinstance(e, Judgement)]
        if not judgements:
            raise JudgementError("the judge ended without a judgement")
        return judgements[-1]

    async def _judge_one(self, item: Item, judge: Judge, send: Callable[[Event], None]) -> None:
        """One (item, judge): forward its events as they happen, then record its verdict or failure.

        Events a judge yields and events emitted beneath it (LLM calls, streamed tokens) go to
        `send` at once, stamped with the item and judge; calls are stored beside the verdict,
        tokens are never stored, everything else becomes the verdict's artifacts. A judge with
        `repeats` K > 1 is asked K times in turn, and the verdict is their aggregate (`metrics.repeated`);
        one repeat that fails fails the item (a resume asks again, the other repeats answered by the cache).
        An item that fails on what its answers said (not on a call that failed) has those answers forgotten by
        the cache (`llm.cache.AnswersUsed`): replaying them could only fail it again.
        """
        stamp = {"item_id": item.id, "judge": judge.name}
        started = time.perf_counter()
        artifacts: list[Event] = []
        calls: list[LLMCallFinished] = []

        def forward(raw: Event) -> None:
            event = raw.model_copy(update={**stamp, "repeat": REPEAT.get()})  # `_ask` binds the repeat being asked
            if isinstance(event, LLMCallFinished):
                calls.append(event)
            elif not isinstance(event, LLMToken):
                artifacts.append(event)
            send(event)

        send(ItemStarted(**stamp))
        backbone_down = False  # a call of this task met a backbone that failed its put-off check

        def stop(reason: str) -> None:
            nonlocal backbone_down
            backbone_down = True
            self.stopped = self.stopped or reason

        stopping = RUN_STOP.set(stop)
        halted = False  # a call of this task was not sent because the run is stopping

        def halting() -> bool:
            nonlocal halted
            halted = halted or self.stopping
            return self.stopping

        halts = RUN_STOPPING.set(halting)
        spend = TaskSpend(self.spend_cap) if self.spend_cap is not None else None
        spent = SPEND.set(spend)
        answers = AnswersUsed()
        used = ANSWERS_USED.set(answers)
        batched = BATCH.set(self.batcher)
        bound = EVENT_SINK.set(forward)
        watch = self.watch_tokens
        watched = TOKENS_WATCHED.set(watch if isinstance(watch, bool) else lambda: watch(item.id, judge.name))
        try:
            view, order = present(item, self.seed)
            judgements = []
            for repeat in range(self.repeats(judge)):
                judgements.append(await self._ask(judge, view, repeat, forward, artifacts))
            if len(judgements) == 1:
                verdict = to_verdict(item, judge, view, order, judgements[0])
            else:
                each = [to_verdict(item, judge, view, order, judgement) for judgement in judgements]
                combined = aggregate(judgements, each, view.labels, judge.options.tie_digits)
                verdict = to_verdict(item, judge, view, order, combined)
            verdict = verdict.model_copy(
                update={**stamp, "artifacts": artifacts, "elapsed_s": time.perf_counter() - started,
                        "version": self.versions[judge.name]}
            )
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - any judge failure is recorded on the item, never scored
            if (spend is not None and spend.refused) or backbone_down or halted:
                self._defer(judge.name, calls)  # the cap refused a call, its backbone is down, or the run stops
                return
            if not isinstance(e, LLMCallError):  # it failed on what the answers said: a resume asks them again
                answers.forget()
            failure = ItemFailed(**stamp, reason=str(e) or type(e).__name__, error_type=type(e).__name__)
            if self.session is not None:
                self.session.record_failure(item.id, judge.name, failure.reason, failure.error_type, calls)
            send(failure)
            return
        finally:
            TOKENS_WATCHED.reset(watched)
            EVENT_SINK.reset(bound)
            BATCH.reset(batched)
            SPEND.reset(spent)
            ANSWERS_USED.reset(used)
            RUN_STOP.reset(stopping)
            RUN_STOPPING.reset(halts)
        if (spend is not None and spend.refused) or backbone_down or halted:  # a judge went on without the call
            self._defer(judge.name, calls)
            return
        if self.session is not None:
            self.session.record_verdict(verdict, calls)
        send(verdict)
