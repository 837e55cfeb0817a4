"""CALF pairwise judge with a scripted backbone: both orders, the combination rule, parse failures, win rates."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from rich.console import Console
from fakes import ScriptedLLM, answer_from_prompt, pair_answers, scripted_resources
from tui_support import run_headless

from qatui.config import Config
from qatui.data.model import Dataset, Item, PairwiseGold, RankingGold
from qatui.data.presentation import present
from qatui.engine.jobs import finish_run, start_run
from qatui.engine.runner import Engine
from qatui.errors import JudgeError
from qatui.events import (
    ItemFailed,
    LLMCallFinished,
    PairJudged,
    Verdict,
    event_from_dict,
)
from qatui.judges.pairwise.judge import combine, pair_messages, read_choice
from qatui.judges.prompts import load_prompts
from qatui.judges.registry import make_judge
from qatui.llm.fence import block_texts
from qatui.store.session import SessionStore

GOOD = "Air molecules scatter the blue part of sunlight much more than the red part."
BAD = "Because the ocean reflects its colour onto the sky."
ITEM = Item(
    id="sky",
    question="Why is the sky blue on a clear day?",
    references=["Air molecules scatter blue sunlight more strongly than red sunlight."],
    candidates={"c-good": GOOD, "c-bad": BAD},
    gold=PairwiseGold(a="c-good", b="c-bad", labels=["A"]),
)


class PairLLM(ScriptedLLM):
    """The shared scripted backbone, recording the (Answer A, Answer B) texts of every pairwise call.

    `choose(a, b)` scripts the answer (a dict, or raw text); without it the shared backbone
    answers from the prompt (the answer sharing more words with the reference wins).
    """

    def __init__(self, choose=None) -> None:
        super().__init__(model="scripted/tui", stream=True)
        self.choose = choose
        self.shown: list[tuple[str, str]] = []

    def answer(self, call):
        self.shown.append(pair_answers(call.content))
        if self.choose is None:
            return answer_from_prompt(call)
        return self.choose(*self.shown[-1])


def _judge(llm: ScriptedLLM | None = None, **options):
    return make_judge("pairwise", options, scripted_resources(llm=llm))


async def _run(judge, items=(ITEM,), seed=0):
    events = [e async for e in Engine(list(items), [judge], seed=seed, concurrency=1).run()]
    return events, [e for e in events if isinstance(e, Verdict)], [e for e in events if isinstance(e, ItemFailed)]


def _labels(verdict: Verdict) -> dict[str, str]:
    """candidate id -> "Response k" as the judge saw it."""
    return {cid: f"Response {i + 1}" for i, cid in enumerate(verdict.order)}


def _choose(good_first: dict | str, bad_first: dict | str):
    """Answer `good_first` when the good answer is shown as A, `bad_first` when the bad one is."""
    return lambda a, b: good_first if a == GOOD else bad_first


# -- both orders -----------------------------------------------------------------------------------


async def test_each_pair_is_asked_twice_with_the_positions_swapped() -> None:
    llm = PairLLM()
    events, (verdict,), _ = await _run(_judge(llm))
    first, second = (ITEM.candidates[cid] for cid in verdict.order)
    assert llm.shown == [(first, second), (second, first)]
    judged = [e for e in events if isinstance(e, PairJudged)]
    assert [(e.first, e.second) for e in judged] == [("Response 1", "Response 2"), ("Response 2", "Response 1")]
    good = _labels(verdict)["c-good"]
    assert [e.winner for e in judged] == [good, good]  # A in one order, B in the other
    assert sorted(e.choice for e in judged) == ["A", "B"]
    assert verdict.preference == "A" and verdict.ranking == ["c-good", "c-bad"]
    assert verdict.scores == {"c-good": 1.0, "c-bad": 0.0}
    assert verdict.details["position_consistency"] == {"agreed": 1, "judged_both": 1, "one_order": 0}
    prompts = [call.response for call in events if isinstance(call, LLMCallFinished)]
    assert len(prompts) == 2


async def test_the_prompt_shows_question_reference_and_answers_but_never_candidate_ids() -> None:
    seen = []

    class Keep(PairLLM):
        def answer(self, call):
            seen.append(call.content)
            return super().answer(call)

    await _run(_judge(Keep()))
    for content in seen:
        assert "Question: Why is the sky blue on a clear day?" in content
        assert block_texts(content)["Reference"].startswith("Air molecules scatter blue sunlight")
        assert "c-good" not in content and "c-bad" not in content and "Response" not in content


async def test_without_a_reference_the_judge_still_runs_and_shows_none() -> None:
    item = ITEM.model_copy(update={"references": []})
    dataset = Dataset(name="n", path="n", format="jsonl", content_hash="x", items=[item])
    judge = _judge(PairLLM(_choose({"rationale": "on topic", "choice": "A"}, {"rationale": "ok", "choice": "B"})))
    assert judge.unmet_needs(dataset) == []
    view, _ = present(item, 0)
    messages = pair_messages(load_prompts("pairwise", "en")["judge"], view, GOOD, BAD)
    assert "Reference answer" not in messages[-1]["content"]
    assert messages[-1]["content"].startswith(f"Question: {item.question}\n\nAnswer A:\n<<<BEGIN Answer A ")
    assert block_texts(messages[-1]["content"]) == {"Answer A": GOOD, "Answer B": BAD}
    _, (verdict,), _ = await _run(judge, items=[item])
    assert verdict.preference == "A"


# -- the combination rule ------------------------------------------------------------------------------


def test_combination_rule() -> None:
    assert combine(["Response 1", "Response 1"]) == "Response 1"
    assert combine(["Response 1", "Response 2"]) == "tie"  # position bias
    assert combine(["Response 2", "tie"]) == "tie"
    assert combine(["tie", "tie"]) == "tie"
    assert combine([None, "Response 2"]) == "Response 2"  # an unparsed order is no vote
    assert combine([None, None]) is None


@pytest.mark.parametrize(("good_first", "bad_first", "preference", "agreed", "positions"), [
    ("A", "B", "A", 1, {"A": 1, "B": 1, "tie": 0}),      # both orders prefer the good answer
    ("A", "A", "tie", 0, {"A": 2, "B": 0, "tie": 0}),    # always the first position: disagree -> tie
    ("B", "B", "tie", 0, {"A": 0, "B": 2, "tie": 0}),    # always the second position
    ("A", "tie", "tie", 0, {"A": 1, "B": 0, "tie": 1}),  # a win and a tie -> tie
    ("tie", "tie", "tie", 1, {"A": 0, "B": 0, "tie": 2}),
    ("B", "A", "B", 1, {"A": 1, "B": 1, "tie": 0}),      # both prefer the bad answer
])
async def test_two_orders_combine_into_one_preference(good_first, bad_first, preference, agreed, positions) -> None:
    llm = PairLLM(_choose({"rationale": "r", "choice": good_first}, {"rationale": "r", "choice": bad_first}))
    _, (verdict,), _ = await _run(_judge(llm))
    assert verdict.preference == preference  # A = c-good, B = c-bad (the gold's orientation)
    details = verdict.details
    assert details["position_consistency"] == {"agreed": agreed, "judged_both": 1, "one_order": 0}
    assert details["positions"] == {**positions, "unparsed": 0}
    expected = {"A": (1.0, 0.0), "B": (0.0, 1.0), "tie": (0.5, 0.5)}[preference]
    assert (verdict.scores["c-good"], verdict.scores["c-bad"]) == expected


# -- parse failures ----------------------------------------------------------------------------------


def test_choices_are_read_tolerantly_but_never_guessed() -> None:
    assert [read_choice(v) for v in ("A", "b", " Answer B.", "Response a", '"tie"', "Tie", "平局")] == \
        ["A", "B", "B", "A", "tie", "tie", "tie"]
    for bad in ("maybe", "A or B", "", "C"):
        with pytest.raises(ValueError):
            read_choice(bad)


@pytest.mark.parametrize("unreadable", [
    "I think both answers have merit.",                      # no JSON at all
    json.dumps({"rationale": "hmm", "choice": "maybe"}),     # JSON, but not a choice
])
async def test_an_unparseable_order_is_recorded_as_none_and_not_counted(unreadable) -> None:
    llm = PairLLM(_choose('Sure: ```json\n{"rationale": "covers scattering", "choice": "Answer A"}\n```', unreadable))
    events, (verdict,), _ = await _run(_judge(llm))
    judged = {e.first: e for e in events if isinstance(e, PairJudged)}
    good, bad = _labels(verdict)["c-good"], _labels(verdict)["c-bad"]
    assert judged[good].choice == "A" and judged[good].rationale == "covers scattering"  # fenced, prefixed: read
    assert judged[bad].choice is None and judged[bad].winner is None
    assert judged[bad].rationale.startswith("unparsed: ")
    assert verdict.preference == "A"  # the one counted vote stands; the unparsed one is no tie
    assert verdict.details["unparsed"] == 1
    # decided by one order
    assert verdict.details["position_consistency"] == {"agreed": 0, "judged_both": 0, "one_order": 1}
    assert verdict.details["pairs"] == [{"pair": ["Response 1", "Response 2"],
                                         "votes": [good, None] if good == "Response 1" else [None, good],
                                         "result": good}]


async def test_an_item_whose_every_answer_is_unparseable_fails() -> None:
    llm = PairLLM(lambda a, b: "no idea")
    events, verdicts, failures = await _run(_judge(llm))
    assert verdicts == []
    (failure,) = failures
    assert failure.error_type == "ParseError" and "none of the 2 pairwise answers could be parsed" in failure.reason
    assert sum(isinstance(e, PairJudged) and e.choice is None for e in events) == 2


# -- more than two candidates --------------------------------------------------------------------------

THREE = Item(
    id="three",
    question="Why is the sky blue on a clear day?",
    references=["Air molecules scatter blue sunlight more strongly than red sunlight."],
    candidates={"best": GOOD, "mid": "Something in the air makes it look blue.", "worst": BAD},
    gold=RankingGold(tiers=[["best"], ["mid"], ["worst"]]),
)
QUALITY = {GOOD: 3, THREE.candidates["mid"]: 2, BAD: 1}


def _three_way(a: str, b: str) -> dict:
    """Prefers by quality, except that between mid and worst it always picks the first position."""
    if {a, b} == {THREE.candidates["mid"], BAD}:
        return {"rationale": "the first one", "choice": "A"}
    return {"rationale": "better", "choice": "A" if QUALITY[a] > QUALITY[b] else "B"}


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
async def test_three_candidates_are_ranked_by_win_rate_over_all_pairs(seed) -> None:
    llm = PairLLM(_three_way)
    judge = _judge(llm)
    _, (verdict,), _ = await _run(judge, items=[THREE], seed=seed)
    assert len(llm.shown) == 6 == judge.expected_calls(THREE)[0]
    assert {(a, b) for a, b in llm.shown} == {(a, b) for a in QUALITY for b in QUALITY if a != b}
    # best wins both its pairs; mid-worst is a position-bias tie: 0.5 each, mid and worst lose to best
    assert verdict.scores == {"best": 1.0, "mid": 0.25, "worst": 0.25}
    mid_first = verdict.order.index("mid") < verdict.order.index("worst")
    assert verdict.ranking == ["best", "mid", "worst"] if mid_first else ["best", "worst", "mid"]  # tie rule
    assert verdict.preference is None
    details = verdict.details
    assert details["position_consistency"] == {"agreed": 2, "judged_both": 3, "one_order": 0}
    assert len(details["pairs"]) == 3 and details["no_votes"] == []


async def test_a_response_without_any_counted_pair_scores_neutral_and_is_listed() -> None:
    def choose(a, b):
        if BAD in (a, b):
            return "unreadable"
        return {"rationale": "r", "choice": "A" if a == GOOD else "B"}

    _, (verdict,), _ = await _run(_judge(PairLLM(choose)), items=[THREE])
    assert verdict.scores == {"best": 1.0, "mid": 0.0, "worst": 0.5}
    assert verdict.details["no_votes"] == [_labels(verdict)["worst"]]
    assert verdict.details["unparsed"] == 4


async def test_one_order_asks_each_pair_once_in_presentation_order() -> None:
    llm = PairLLM(_three_way)
    judge = _judge(llm, both_orders=False)
    _, (verdict,), _ = await _run(judge, items=[THREE])
    texts = [THREE.candidates[cid] for cid in verdict.order]
    assert llm.shown == [(texts[0], texts[1]), (texts[0], texts[2]), (texts[1], texts[2])]
    assert judge.expected_calls(THREE) == (3, 3)
    assert verdict.details["position_consistency"] == {"agreed": 0, "judged_both": 0, "one_order": 0}


def test_expected_calls_are_n_times_n_minus_one() -> None:
    judge = _judge()
    for n in (2, 3, 4, 8):
        item = ITEM.model_copy(update={"candidates": {f"c{i}": f"text {i}" for i in range(n)}, "gold": None})
        assert judge.expected_calls(item) == (n * (n - 1), n * (n - 1))
        assert _judge(both_orders=False).expected_calls(item) == (n * (n - 1) // 2,) * 2


def test_options_are_validated_and_large_items_are_not_applicable() -> None:
    with pytest.raises(JudgeError, match="bogus"):
        make_judge("pairwise", {"bogus": 1})
    with pytest.raises(JudgeError, match="temperature"):
        make_judge("pairwise", {"temperature": 5})
    big = ITEM.model_copy(update={"candidates": {f"c{i}": "t" for i in range(10)}, "gold": None})
    dataset = Dataset(name="big", path="big", format="jsonl", content_hash="x", items=[big, ITEM])
    judge = make_judge("pairwise")
    assert judge.unmet_needs(dataset) == []  # the small item runs; the big one is not applicable
    assert judge.not_applicable(dataset) == {big.id: judge.item_problem(big)}
    assert "10 > max_candidates = 8 (90 calls)" in judge.item_problem(big)
    only_big = dataset.model_copy(update={"items": [big]})
    (problem,) = judge.unmet_needs(only_big)  # nothing it can judge: the run is refused
    assert "max_candidates = 8" in problem and "(1 of 1 item)" in problem
    assert make_judge("pairwise", {"max_candidates": 10}).not_applicable(dataset) == {}


def test_chinese_items_get_the_chinese_prompt() -> None:
    item = ITEM.model_copy(update={"question": "天空为什么是蓝色的？", "references": ["空气散射蓝光。"], "language": "zh"})
    view, _ = present(item, 0)
    assert view.language == "zh"
    messages = pair_messages(load_prompts("pairwise", view.language)["judge"], view, "甲", "乙")
    assert "阅卷专家" in messages[0]["content"]
    assert messages[-1]["content"].startswith("问题：天空为什么是蓝色的？\n参考答案：<<<BEGIN Reference ")
    assert block_texts(messages[-1]["content"]) == {"Reference": "空气散射蓝光。", "Answer A": "甲", "Answer B": "乙"}
    assert "<<<BEGIN" in messages[0]["content"] and "待评估" in messages[0]["content"]  # the fence note, in Chinese


# -- through the run machinery --------------------------------------------------------------------------


def test_accuracy_end_to_end_against_pairwise_gold_and_the_item_view(tmp_path) -> None:
    from qatui.data.loaders import load_dataset
    from qatui.report import item_detail, print_item_detail

    lines = [
        # the content-based backbone prefers the answer closer to the reference: agrees with both labels
        {"id": "p1", "question": ITEM.question, "references": ITEM.references,
         "candidates": {"x": GOOD, "y": BAD}, "gold": {"kind": "pairwise", "a": "x", "b": "y", "labels": ["A"]}},
        {"id": "p2", "question": ITEM.question, "references": ITEM.references,
         "candidates": {"x": BAD, "y": GOOD}, "gold": {"kind": "pairwise", "a": "x", "b": "y", "labels": ["B", "B"]}},
        # equally close to the reference: the backbone ties, the human said A
        {"id": "p3", "question": ITEM.question, "references": ITEM.references,
         "candidates": {"x": "Air scatters it.", "y": "Sunlight scatters."},
         "gold": {"kind": "pairwise", "a": "x", "b": "y", "labels": ["A"]}},
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    dataset = load_dataset(str(path))
    config = Config()
    store = SessionStore(tmp_path / "sessions")
    job = start_run(store, dataset, ["pairwise"], config, concurrency=1, resources=scripted_resources(config))
    run_headless(job)
    summary = finish_run(job, "completed")["pairwise"]
    assert summary["n_done"] == 3 and summary["n_failed"] == 0
    assert summary["metrics"]["accuracy"] == pytest.approx(3 / 4)  # 1 + 2 of 4 human labels
    assert summary["metrics"]["position_consistency"] == pytest.approx(1.0)
    assert summary["n"]["position_consistency"] == 3
    session = store.open(job.session.id)
    verdicts = session.verdicts("pairwise")
    assert {k: v.preference for k, v in verdicts.items()} == {"p1": "A", "p2": "B", "p3": "tie"}
    restored = event_from_dict(json.loads(verdicts["p1"].model_dump_json()))
    assert [a.type for a in restored.artifacts] == ["pair_judged", "pair_judged", "judgement"]

    out = StringIO()
    print_item_detail(Console(file=out, width=160), item_detail(session, "p1"))
    shown = out.getvalue()
    assert "pairwise comparisons" in shown
    assert shown.count("A=x B=y") == 1 and shown.count("A=y B=x") == 1  # both orders, by candidate id
    combined = next(line for line in shown.splitlines() if "combined" in line)
    assert combined.split()[1:] == ["x", "both", "orders", "agree"]
    assert "shares" in shown  # the rationale
