"""The engine with scripted judges: event order, label mapping, failures, cancel, skip."""

import asyncio

import pytest

from qatui.data.model import Item, PairwiseGold, RankingGold
from qatui.events import ItemFailed, ItemStarted, Judgement, LLMCallFinished, RunFinished, RunStarted, Verdict
from qatui.engine.runner import Engine
from qatui.judges.base import Judge, JudgeOptions


def _item(i: int, n: int = 3) -> Item:
    cands = {f"c{k}": f"text {k}" for k in range(n)}
    return Item(id=f"q{i}", question=f"question {i}", references=["ref"], candidates=cands,
                gold=RankingGold(tiers=[[f"c{k}"] for k in range(n)]))


class LengthOfTextJudge(Judge):
    """Scores a response by the digit in its text: 'text 2' -> 2."""

    name = "digit"
    summary = "test judge"

    async def judge(self, view):
        yield LLMCallFinished(model="scripted", purpose="score", prompt_hash="h", prompt_tokens=3, completion_tokens=1)
        yield Judgement(scores={r.label: float(r.text.split()[-1]) for r in view.responses})


class FailingJudge(Judge):
    name = "boom"
    summary = "fails on odd items"

    async def judge(self, view):
        if int(view.item_id[1:]) % 2:
            raise RuntimeError("backbone said no")
        yield Judgement(scores={r.label: 0.0 for r in view.responses})


async def _collect(engine: Engine) -> list:
    return [e async for e in engine.run()]


async def test_verdicts_are_in_candidate_space_with_strict_ranking() -> None:
    events = await _collect(Engine([_item(1), _item(2)], [LengthOfTextJudge()], seed=7, concurrency=2))
    assert isinstance(events[0], RunStarted) and isinstance(events[-1], RunFinished)
    assert events[-1].status == "completed" and events[-1].n_done == 2
    verdicts = [e for e in events if isinstance(e, Verdict)]
    assert {v.item_id for v in verdicts} == {"q1", "q2"}
    for v in verdicts:
        assert v.ranking == ["c2", "c1", "c0"]
        assert v.scores == {"c0": 0.0, "c1": 1.0, "c2": 2.0}
        assert sorted(v.order) == ["c0", "c1", "c2"]
        assert [a.type for a in v.artifacts] == ["judgement"]
    started = [e for e in events if isinstance(e, ItemStarted)]
    assert len(started) == 2 and all(e.judge == "digit" for e in started)


async def test_ties_follow_presentation_order_not_file_order() -> None:
    class Flat(Judge):
        name, summary = "flat", "all equal"

        async def judge(self, view):
            yield Judgement(scores={r.label: 0.5 for r in view.responses})

    items = [_item(i, n=5) for i in range(20)]
    verdicts = [e for e in await _collect(Engine(items, [Flat()], seed=1)) if isinstance(e, Verdict)]
    assert all(v.ranking == v.order for v in verdicts)
    # the shuffle must not keep the file's (gold) order for most items
    assert sum(v.ranking == ["c0", "c1", "c2", "c3", "c4"] for v in verdicts) <= 2


async def test_failures_are_recorded_per_item_never_scored() -> None:
    events = await _collect(Engine([_item(i) for i in range(4)], [FailingJudge()], seed=0))
    failed = [e for e in events if isinstance(e, ItemFailed)]
    assert sorted(e.item_id for e in failed) == ["q1", "q3"]
    assert all(e.reason == "backbone said no" and e.error_type == "RuntimeError" for e in failed)
    assert sorted(e.item_id for e in events if isinstance(e, Verdict)) == ["q0", "q2"]
    assert events[-1].n_failed == 2


async def test_concurrency_is_bounded() -> None:
    running = 0
    peak = 0

    class Slow(Judge):
        name, summary = "slow", "sleeps"

        async def judge(self, view):
            nonlocal running, peak
            running += 1
            peak = max(peak, running)
            await asyncio.sleep(0.01)
            running -= 1
            yield Judgement(scores={r.label: 1.0 for r in view.responses})

    await _collect(Engine([_item(i) for i in range(12)], [Slow()], seed=0, concurrency=3))
    assert peak == 3


async def test_skip_set_resumes_without_redoing_work() -> None:
    items = [_item(i) for i in range(3)]
    engine = Engine(items, [LengthOfTextJudge()], seed=0, skip={("q0", "digit"), ("q2", "digit")})
    events = await _collect(engine)
    assert [e.item_id for e in events if isinstance(e, Verdict)] == ["q1"]
    assert engine.counts.skipped == 2


async def test_cancel_stops_the_pool_and_reports_nothing_after() -> None:
    class Forever(Judge):
        name, summary = "forever", "never ends"

        async def judge(self, view):
            await asyncio.sleep(3600)
            yield Judgement(scores={})

    engine = Engine([_item(i) for i in range(4)], [Forever()], seed=0, concurrency=2)
    seen = []

    async def consume():
        async for e in engine.run():
            seen.append(e)

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not any(isinstance(e, Verdict) for e in seen)


async def test_pairwise_preference_follows_gold_orientation_and_judge_winner() -> None:
    item = Item(id="p", question="q", candidates={"x": "text 1", "y": "text 2"},
                gold=PairwiseGold(a="y", b="x", labels=["A"]))
    v = next(e for e in await _collect(Engine([item], [LengthOfTextJudge()], seed=0)) if isinstance(e, Verdict))
    assert v.pair == ("y", "x") and v.preference == "A"

    class SaysTie(Judge):
        name, summary = "tie", "native pairwise"

        async def judge(self, view):
            yield Judgement(scores={r.label: float(i) for i, r in enumerate(view.responses)}, winner="tie")

    v = next(e for e in await _collect(Engine([item], [SaysTie()], seed=0)) if isinstance(e, Verdict))
    assert v.preference == "tie"


async def test_rounded_equal_scores_are_a_tie() -> None:
    class Close(Judge):
        name, summary = "close", "nearly equal"
        Options = JudgeOptions

        async def judge(self, view):
            yield Judgement(scores={r.label: 0.5 + i * 1e-7 for i, r in enumerate(view.responses)})

    item = Item(id="p", question="q", candidates={"x": "1", "y": "2"}, gold=PairwiseGold(a="x", b="y", labels=["B"]))
    v = next(e for e in await _collect(Engine([item], [Close()], seed=0)) if isinstance(e, Verdict))
    assert v.preference == "tie"


async def test_a_ranking_that_is_not_a_permutation_fails_the_item() -> None:
    class Bad(Judge):
        name, summary = "bad", "invents a label"

        async def judge(self, view):
            yield Judgement(scores={r.label: 1.0 for r in view.responses}, ranking=["Response 9"])

    events = await _collect(Engine([_item(0)], [Bad()], seed=0))
    failed = [e for e in events if isinstance(e, ItemFailed)]
    assert failed and "not a permutation" in failed[0].reason


async def test_events_emitted_beneath_a_judge_reach_the_stream_and_the_verdict() -> None:
    from qatui.events import LLMToken, emit

    class Deep(Judge):
        name, summary = "deep", "emits from a helper"

        async def judge(self, view):
            emit(LLMToken(call_id="c1", model="m", purpose="p", text="hel"))
            emit(LLMCallFinished(call_id="c1", model="m", purpose="p", prompt_hash="h", response="hello"))
            yield Judgement(scores={r.label: 1.0 for r in view.responses})

    events = await _collect(Engine([_item(0)], [Deep()], seed=0))
    types = [e.type for e in events]
    assert types.index("llm_token") < types.index("llm_call_finished") < types.index("verdict")
    token = next(e for e in events if isinstance(e, LLMToken))
    assert token.item_id == "q0" and token.judge == "deep"
    verdict = next(e for e in events if isinstance(e, Verdict))
    assert [a.type for a in verdict.artifacts] == ["judgement"]  # tokens and calls are not artifacts
    emit(LLMToken(call_id="c2", model="m", purpose="p", text="x"))  # outside a run: dropped, no error


class RecordingJudge(Judge):
    """Records the item it starts, then takes a little while."""

    name, summary = "slow", "records starts"

    def __init__(self) -> None:
        super().__init__()
        self.started: list[str] = []

    async def judge(self, view):
        self.started.append(view.item_id)
        await asyncio.sleep(0.02)
        yield Judgement(scores={r.label: float(r.text.split()[-1]) for r in view.responses})


async def test_pause_holds_new_tasks_until_resume() -> None:
    judge = RecordingJudge()
    engine = Engine([_item(i) for i in range(6)], [judge], seed=0, concurrency=1)
    events = []

    async def consume():
        async for e in engine.run():
            events.append(e)

    task = asyncio.create_task(consume())
    while not judge.started:
        await asyncio.sleep(0.001)
    engine.pause()
    assert engine.paused
    await asyncio.sleep(0.2)  # ten tasks' worth of time: only the one in flight ran
    assert judge.started == ["q0"]
    assert sum(isinstance(e, Verdict) for e in events) == 1  # it finished; nothing new started
    engine.resume()
    assert not engine.paused
    await asyncio.wait_for(task, 5)
    assert len(judge.started) == 6
    assert isinstance(events[-1], RunFinished) and (events[-1].status, events[-1].n_done) == ("completed", 6)


async def test_cancel_while_paused_ends_promptly() -> None:
    judge = RecordingJudge()
    engine = Engine([_item(i) for i in range(4)], [judge], seed=0, concurrency=2)
    engine.pause()  # before the run: no task starts at all
    seen = []

    async def consume():
        async for e in engine.run():
            seen.append(e)

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.05)
    assert judge.started == []
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 1)
    assert not any(isinstance(e, Verdict) for e in seen)


class QuickJudge(Judge):
    """Answers after a millisecond, as a cached replay does: results arrive faster than flushes pay."""

    name = "quick"
    summary = "test judge"

    async def judge(self, view):
        await asyncio.sleep(0.001)
        yield Judgement(scores={r.label: float(r.text.split()[-1]) for r in view.responses})


async def test_results_faster_than_flushes_share_them_and_none_is_reported_before_it_is_on_disk(tmp_path) -> None:
    from qatui.store import SessionStore

    store = SessionStore(tmp_path, shard_size=50)
    session = store.create({})
    flushes = 0
    flush = session.flush

    def counted() -> None:
        nonlocal flushes
        flushes += 1
        flush()

    session.flush = counted
    items = [_item(i) for i in range(300)]
    on_disk: set = set()
    async for event in Engine(items, [QuickJudge()], seed=1, concurrency=8, session=session).run():
        if isinstance(event, Verdict) and (event.item_id, "quick") not in on_disk:
            on_disk = set(store.open(session.id).results())  # what a kill at this moment would leave
            assert (event.item_id, "quick") in on_disk
    assert set(store.open(session.id).results()) == {(f"q{i}", "quick") for i in range(300)}
    assert flushes < 20  # measured: 5 here, and 40 when every drained batch was flushed (FLUSH_SHARE = 1)


async def test_what_outlives_a_run_is_frozen_for_the_collector_only_while_runs_go_on() -> None:
    """engine.heap: objects alive at the start leave the collector's sight during a run (it was half a replay's CPU),
    come back when the last run ends, also a cancelled one, and garbage made before the run is still collected."""
    import gc
    import weakref

    class Cycle:
        pass

    seen: list[int] = []

    class Probe(Judge):
        name, summary = "probe", "records what the collector sees"

        async def judge(self, view):
            seen.append(gc.get_freeze_count())
            if view.item_id == "q9":
                await asyncio.sleep(3600)
            yield Judgement(scores={r.label: 0.0 for r in view.responses})

    assert gc.get_freeze_count() == 0
    garbage = Cycle()
    garbage.me = garbage  # a cycle only the collector can free
    gone = weakref.ref(garbage)
    del garbage
    events = await _collect(Engine([_item(i) for i in range(3)], [Probe()], seed=0, concurrency=2))
    assert isinstance(events[-1], RunFinished) and len(seen) == 3 and min(seen) > 0
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert gone() is None

    task = asyncio.create_task(_collect(Engine([_item(9)], [Probe()], seed=0)))
    while len(seen) < 4:
        await asyncio.sleep(0.01)
    assert gc.get_freeze_count() > 0
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert gc.get_freeze_count() == 0


def test_the_collector_pause_nests_and_leaves_the_collector_as_it_found_it() -> None:
    """engine.heap.collector_paused: off while any holder holds it; restored by the last one out, to what it was."""
    import gc

    from qatui.engine.heap import collector_paused

    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer holder still holds it
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("a failing reader")
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # it was off before: left off
    finally:
        gc.enable()


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
async def test_a_score_that_is_no_number_fails_the_item_never_scored(bad) -> None:
    """A NaN ties with every score (each comparison is false) and moves every mean: the item fails, naming it."""

    class Broken(Judge):
        name, summary = "broken", "one score is not a number"

        async def judge(self, view):
            yield Judgement(scores={r.label: (bad if i == 1 else float(i)) for i, r in enumerate(view.responses)})

    events = await _collect(Engine([_item(0)], [Broken()], seed=0))
    (failed,) = [e for e in events if isinstance(e, ItemFailed)]
    assert "Response 2" in failed.reason and "is not a number" in failed.reason and repr(bad) in failed.reason
    assert not [e for e in events if isinstance(e, Verdict)] and events[-1].n_failed == 1
