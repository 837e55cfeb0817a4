"""The pairwise judge's `calf` protocol beside qatui's both-orders variant, with a scripted backbone.

CALF asks each pair once, alternates which answer is shown as A (by a rule on the item
alone), samples at temperature 1.0 and gives the paper's plain triple-choice instruction.
"""

from __future__ import annotations

import pytest
from fakes import ScriptedLLM, answer_from_prompt, pair_answers, scripted_resources

from qatui.data.model import Item, PairwiseGold
from qatui.engine.runner import Engine
from qatui.errors import JudgeError
from qatui.events import PairJudged, Verdict
from qatui.judges.pairwise.protocol import asked_orders, calf_flipped
from qatui.judges.registry import make_judge

GOOD = "Air molecules scatter the blue part of sunlight much more than the red part."
BAD = "Because the ocean reflects its colour onto the sky."
QUESTION = "Why is the sky blue on a clear day?"
REFERENCE = "Air molecules scatter blue sunlight more strongly than red sunlight."


def _pair_item(item_id: str) -> Item:
    return Item(id=item_id, question=QUESTION, references=[REFERENCE], candidates={"c-good": GOOD, "c-bad": BAD},
                gold=PairwiseGold(a="c-good", b="c-bad", labels=["A"]))


def _many(n: int) -> Item:
    return Item(id=f"many-{n}", question=QUESTION, references=[REFERENCE],
                candidates={f"c{i}": f"Answer number {i} about the sky." for i in range(n)})


class Recorder(ScriptedLLM):
    """The shared scripted backbone, keeping each call's system prompt, shown answers and temperature."""

    def __init__(self, choose=None) -> None:
        super().__init__(model="scripted/tui", stream=True)
        self.choose = choose
        self.calls_seen: list[dict] = []

    async def complete(self, messages, *, purpose, schema=None, temperature=None, **kw):
        a, b = pair_answers(messages[-1]["content"])
        self.calls_seen.append({"system": messages[0]["content"], "shown": (a, b), "temperature": temperature})
        return await super().complete(messages, purpose=purpose, schema=schema, temperature=temperature, **kw)

    def answer(self, call):
        if self.choose is None:
            return answer_from_prompt(call)
        return self.choose(*pair_answers(call.content))


def _judge(llm: Recorder, **options):
    return make_judge("pairwise", options, scripted_resources(llm=llm))


async def _verdicts(judge, items, seed=0) -> tuple[list, dict[str, Verdict]]:
    events = [e async for e in Engine(list(items), [judge], seed=seed, concurrency=1).run()]
    assert not [e for e in events if e.type == "item_failed"]
    return events, {e.item_id: e for e in events if isinstance(e, Verdict)}


# -- order ---------------------------------------------------------------------------------------------

IDS = [f"q{i}" for i in range(12)]


def test_the_flip_depends_on_the_item_alone_and_goes_both_ways() -> None:
    flips = [calf_flipped(i) for i in IDS]
    assert flips == [calf_flipped(i) for i in IDS]  # deterministic
    assert 3 <= sum(flips) <= 9  # both ways, about half each, on these ids
    labels = ["Response 1", "Response 2", "Response 3"]
    for item_id in IDS:
        expected = [("Response 1", "Response 2"), ("Response 3", "Response 1"), ("Response 2", "Response 3")]
        if calf_flipped(item_id):  # pair k swapped when k + flip is odd: the order alternates pair by pair
            expected = [(b, a) for a, b in expected]
        assert asked_orders(labels, "calf", True, item_id) == expected


async def test_calf_asks_each_pair_once_alternating_which_answer_is_a_across_items() -> None:
    llm = Recorder()
    events, verdicts = await _verdicts(_judge(llm, protocol="calf"), [_pair_item(i) for i in IDS])
    assert len(llm.calls_seen) == len(IDS)  # one call per pair
    judged = {e.item_id: e for e in events if isinstance(e, PairJudged)}
    assert len(judged) == len(IDS)
    for item_id in IDS:
        shown = ("Response 2", "Response 1") if calf_flipped(item_id) else ("Response 1", "Response 2")
        assert (judged[item_id].first, judged[item_id].second) == shown
        verdict = verdicts[item_id]
        good = f"Response {verdict.order.index('c-good') + 1}"
        assert judged[item_id].winner == good and verdict.preference == "A"  # the one vote is the result
    shown_first = {judged[i].first for i in IDS}
    assert shown_first == {"Response 1", "Response 2"}  # alternated, not always the same position


async def test_the_alternation_is_the_same_under_another_seed_in_label_space() -> None:
    items = [_pair_item(i) for i in IDS]
    firsts = []
    for seed in (0, 7):
        events, _ = await _verdicts(_judge(Recorder(), protocol="calf"), items, seed=seed)
        firsts.append({e.item_id: e.first for e in events if isinstance(e, PairJudged)})
    assert firsts[0] == firsts[1]  # the rule reads the item id, never the run's seed or the file's order


async def test_an_always_a_backbone_prefers_each_file_position_about_half_the_time() -> None:
    """Position bias is spread over both of the file's answers, not piled on one."""
    llm = Recorder(lambda a, b: {"rationale": "the first", "choice": "A"})
    _, verdicts = await _verdicts(_judge(llm, protocol="calf"), [_pair_item(i) for i in IDS])
    prefs = [verdicts[i].preference for i in IDS]
    assert set(prefs) == {"A", "B"} and prefs.count("A") >= 3 and prefs.count("B") >= 3


# -- calls ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 4, 5])
@pytest.mark.parametrize(("options", "per_pair"), [
    ({"protocol": "calf"}, 1),
    ({"protocol": "both-orders"}, 2),
    ({}, 2),
    ({"protocol": "both-orders", "both_orders": False}, 1),
])
async def test_expected_calls_equal_the_calls_made(n, options, per_pair) -> None:
    llm = Recorder()
    judge = _judge(llm, **options)
    item = _many(n)
    await _verdicts(judge, [item])
    pairs = n * (n - 1) // 2
    assert len(llm.calls_seen) == per_pair * pairs
    assert judge.expected_calls(item) == (len(llm.calls_seen), len(llm.calls_seen))
    if options.get("protocol") == "calf":  # every unordered pair exactly once
        assert len({frozenset(c["shown"]) for c in llm.calls_seen}) == pairs


# -- temperature, prompt, options ----------------------------------------------------------------------


async def test_calf_samples_at_temperature_one_unless_told_otherwise() -> None:
    for options, expected in (({"protocol": "calf"}, 1.0), ({"protocol": "calf", "temperature": 0.3}, 0.3),
                              ({}, None), ({"temperature": 0.5}, 0.5)):
        llm = Recorder()
        await _verdicts(_judge(llm, **options), [_pair_item("t")])
        assert {c["temperature"] for c in llm.calls_seen} == {expected}, options


async def test_calf_gives_the_paper_instruction_and_both_orders_qatui_criteria() -> None:
    calf, variant = Recorder(), Recorder()
    await _verdicts(_judge(calf, protocol="calf"), [_pair_item("p")])
    await _verdicts(_judge(variant), [_pair_item("p")])
    calf_system, variant_system = calf.calls_seen[0]["system"], variant.calls_seen[0]["system"]
    assert "teacher" in calf_system and "step by step" in calf_system
    assert "Completeness" not in calf_system and "Length, style" not in calf_system
    assert "Completeness" in variant_system and "teacher" not in variant_system


async def test_details_name_the_protocol_and_no_pair_is_judged_in_both_orders() -> None:
    _, verdicts = await _verdicts(_judge(Recorder(), protocol="calf"), [_pair_item("d")])
    details = verdicts["d"].details
    assert details["protocol"] == "calf" and details["both_orders"] is False
    assert details["position_consistency"] == {"agreed": 0, "judged_both": 0, "one_order": 0}
    assert len(details["pairs"][0]["votes"]) == 1
    _, verdicts = await _verdicts(_judge(Recorder()), [_pair_item("d")])
    assert verdicts["d"].details["protocol"] == "both-orders" and verdicts["d"].details["both_orders"] is True


def test_protocol_options_are_validated() -> None:
    with pytest.raises(JudgeError, match="protocol"):
        make_judge("pairwise", {"protocol": "sometimes"})
    with pytest.raises(JudgeError, match="calf asks each pair once"):
        make_judge("pairwise", {"protocol": "calf", "both_orders": True})
    assert make_judge("pairwise", {"protocol": "calf", "both_orders": False}).options.protocol == "calf"
    assert make_judge("pairwise").options.protocol == "both-orders"  # qatui's variant stays the default


def test_the_item_view_says_calf_and_shows_the_one_order(tmp_path) -> None:
    import json
    from io import StringIO

    from rich.console import Console
    from tui_support import run_headless

    from qatui.config import Config
    from qatui.data.loaders import load_dataset
    from qatui.engine.jobs import start_run
    from qatui.report import item_detail, print_item_detail
    from qatui.store.session import SessionStore

    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps({"id": "p1", "question": QUESTION, "references": [REFERENCE],
                                "candidates": {"x": GOOD, "y": BAD},
                                "gold": {"kind": "pairwise", "a": "x", "b": "y", "labels": ["A"]}}) + "\n")
    config = Config(judges={"pairwise": {"protocol": "calf"}})
    store = SessionStore(tmp_path / "sessions")
    job = start_run(store, load_dataset(str(path)), ["pairwise"], config, concurrency=1,
                    resources=scripted_resources(config))
    run_headless(job)
    out = StringIO()
    print_item_detail(Console(file=out, width=160), item_detail(store.open(job.session.id), "p1"))
    shown = out.getvalue()
    assert "protocol calf: each pair once, the order alternated across items" in shown
    assert shown.count("A=x B=y") + shown.count("A=y B=x") == 1  # one order asked
    assert "position consistency" not in shown
