"""The papers' baselines: pointwise, pairwise A/B, LINKAGE, G-Eval, always-longer.

Scripted backbones cover each `[[...]]` reader and scorer, the re-ask and the failure after
it, the win-rate tie re-comparison, log-probability weighting and its sample-mean fallback,
and that `expected_calls` is the count a run makes; the client passes log-probabilities
through and caches them; `sessions show --item` prints the raw answers; and each judge runs
offline on the real embedded backbone through `qatui run`.
"""

from __future__ import annotations

import json
import math
import re
from io import StringIO

import pytest
from fakes import ScriptedLLM
from rich.console import Console

from qatui import extras
from qatui.config import BackboneConfig, Config
from qatui.data.model import Item, PairwiseGold, RankingGold
from qatui.engine.runner import Engine
from qatui.events import LLMCallFinished, Verdict, emit, event_from_dict
from qatui.judges.baselines.geval_scoring import digit_probabilities, weighted_score
from qatui.data.language import length_unit, text_length
from qatui.judges.brackets import Unreadable, read_choice, read_score, read_whole
from qatui.judges.pairwise.ab import ab_scores, most_rematches
from qatui.judges.registry import make_judge
from qatui.judges.resources import Resources
from qatui.llm.errors import ParseError
from qatui.llm.fence import block_texts

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly. qualifier:UserWarning")  # LiteLLM's types

GOOD = "Air molecules scatter blue sunlight far more than red sunlight, so the whole sky glows blue."
MID = "Light scatters in the air."
BAD = "The sky reflects the colour of the ocean."
ITEM = Item(id="sky", question="Why is the sky blue on a clear day?",
            references=["Air molecules scatter blue sunlight more strongly than red sunlight."],
            candidates={"good": GOOD, "mid": MID, "bad": BAD},
            gold=RankingGold(tiers=[["good"], ["mid"], ["bad"]]))
QUALITY = {GOOD: 3, MID: 2, BAD: 1}


def scripted(reply) -> ScriptedLLM:
    """The shared scripted backbone answering `reply(purpose, user_text, call)`: text (returned unread, for the
    judge's own bracket reader), (text, logprobs), a dict (JSON) or a ParseError."""
    return ScriptedLLM(lambda call: reply(call.purpose, call.content, call), model="scripted/baselines",
                       parse_text=False)


def _judge(name: str, llm: ScriptedLLM, backbone: str | None = None, **options):
    return make_judge(name, options, Resources(Config(), backbone_name=backbone, llm=llm))


async def _run(judge, items=(ITEM,)):
    events = [e async for e in Engine(list(items), [judge], seed=0, concurrency=1).run()]
    failures = [e for e in events if e.type == "item_failed"]
    return events, [e for e in events if isinstance(e, Verdict)], failures


def _shown(user: str, block: str) -> str:
    """The text of the response in the fenced block named `block` of a prompt."""
    return block_texts(user)[block]


# -- the strict [[...]] readers --------------------------------------------------------------------


def test_the_last_bracketed_verdict_is_read_with_its_type_and_range() -> None:
    assert read_score("[[8.12]]") == 8.12
    assert read_score('Format: "[[8.12]]". My score: [[6.5]]') == 6.5  # the last one counts
    assert read_score('{"score": "[[10.00]]"}') == 10.0
    assert read_choice("Answer B is vaguer. [[a]]") == "A"
    assert read_choice("[[A]] at first, but on reflection [[B]]") == "B"
    assert read_whole("It belongs at [[ 2 ]].", 1, 5) == 2
    for bad in ("8.12", "[[11.00]]", "[[8.123]]", "[[eight]]", "[[-1]]", "[[8,12]]", "[8.12]"):
        with pytest.raises(Unreadable):
            read_score(bad)
    for bad in ("[[C]]", "[[tie]]", "[[A or B]]", "A"):
        with pytest.raises(Unreadable):
            read_choice(bad)
    for bad in ("[[6]]", "[[0]]", "[[2.0]]", "[[two]]"):
        with pytest.raises(Unreadable):
            read_whole(bad, 1, 5)


# -- pointwise -------------------------------------------------------------------------------------


def _pointwise(purpose, user, call):
    return f"[[{QUALITY[_shown(user, 'Answer')] * 3:.2f}]]"


async def test_pointwise_scores_each_response_once_and_ranks_by_score() -> None:
    llm = scripted(_pointwise)
    judge = _judge("pointwise", llm)
    events, [verdict], _ = await _run(judge)
    assert len(llm.requests) == judge.expected_calls(ITEM)[0] == judge.expected_calls(ITEM)[1] == 3
    assert verdict.scores == {"good": 9.0, "mid": 6.0, "bad": 3.0} and verdict.ranking == ["good", "mid", "bad"]
    scored = [e for e in events if e.type == "point_scored"]
    assert sorted(e.raw for e in scored) == ["[[3.00]]", "[[6.00]]", "[[9.00]]"]
    user = llm.requests[0].messages[-1]["content"]
    assert block_texts(user)["Reference"].startswith("Air molecules") and "good" not in user  # no candidate ids, ever


async def test_an_unreadable_score_is_asked_again_once() -> None:
    llm = scripted(lambda p, user, c: "[[7.25]]" if p.endswith(":reask") else "A fine answer, about 7.")
    events, [verdict], _ = await _run(_judge("pointwise", llm))
    assert llm.purposes().count("pointwise:reask") == 3 and len(llm.requests) == 6
    assert set(verdict.scores.values()) == {7.25}
    assert all(e.reasked for e in events if e.type == "point_scored")
    assert "Your score could not be read: no [[...]] verdict" in llm.requests[1].messages[-1]["content"]


async def test_still_unreadable_after_the_re_ask_fails_the_item_and_scores_nothing() -> None:
    llm = scripted(lambda p, user, c: "[[12.50]]")
    _, verdicts, [failure] = await _run(_judge("pointwise", llm))
    assert verdicts == []
    assert "after one re-ask" in failure.reason and "[[12.50]] is outside" in failure.reason
    assert failure.error_type == "ParseError"


async def test_after_the_clients_own_repair_re_ask_there_is_no_second_one() -> None:
    readable = scripted(lambda p, u, c: ParseError("no JSON", text="My score is [[5.50]]"))
    _, [verdict], _ = await _run(_judge("pointwise", readable))
    assert set(verdict.scores.values()) == {5.5} and len(readable.requests) == 3  # read from the repaired answer
    unreadable = scripted(lambda p, u, c: ParseError("no JSON", text="no idea"))
    _, _, [failure] = await _run(_judge("pointwise", unreadable))
    assert "pointwise:reask" not in unreadable.purposes() and "no [[...]] verdict" in failure.reason


# -- pairwise A/B ----------------------------------------------------------------------------------


def _ab(prefer):
    def reply(purpose, user, call):
        a, b = _shown(user, "Answer A"), _shown(user, "Answer B")
        return f"A is {QUALITY[a]}, B is {QUALITY[b]}. [[{'A' if prefer(a, b, purpose) == a else 'B'}]]"
    return reply


async def test_pairwise_ab_asks_every_pair_once_and_ranks_by_win_rate() -> None:
    llm = scripted(_ab(lambda a, b, p: a if QUALITY[a] > QUALITY[b] else b))
    judge = _judge("pairwise-ab", llm)
    events, [verdict], _ = await _run(judge)
    assert len(llm.requests) == 3 and judge.expected_calls(ITEM) == (3, 6)
    assert verdict.ranking == ["good", "mid", "bad"]
    assert verdict.scores == {"good": 1.0, "mid": 0.5, "bad": 0.0}
    chosen = [e for e in events if e.type == "pair_judged"]
    assert not any(e.rematch for e in chosen) and {(e.first, e.second) for e in chosen} == {
        ("Response 1", "Response 2"), ("Response 1", "Response 3"), ("Response 2", "Response 3")}


async def test_equal_win_rates_are_compared_once_more_in_the_other_order() -> None:
    cycle = {(GOOD, MID): GOOD, (MID, BAD): MID, (BAD, GOOD): BAD}  # each wins once: all three tie

    def prefer(a, b, purpose):
        if purpose.endswith(":rematch"):  # the rematch: the better one wins
            return a if QUALITY[a] > QUALITY[b] else b
        return cycle.get((a, b)) or cycle[(b, a)]

    llm = scripted(_ab(prefer))
    judge = _judge("pairwise-ab", llm)
    events, [verdict], _ = await _run(judge)
    assert len(llm.requests) == 6 == judge.expected_calls(ITEM)[1]
    rematches = [e for e in events if e.type == "pair_judged" and e.rematch]
    first = {(e.first, e.second) for e in events if e.type == "pair_judged" and not e.rematch}
    assert {(e.second, e.first) for e in rematches} == first  # every tied pair again, the order swapped
    assert verdict.ranking == ["good", "mid", "bad"]
    assert verdict.details["tied_groups"] == [["Response 1", "Response 2", "Response 3"]]
    n = 3  # score = (wins + rematch wins / n) / (n - 1)
    assert sorted(verdict.scores.values()) == pytest.approx([(1 + 0 / n) / 2, (1 + 1 / n) / 2, (1 + 2 / n) / 2])


def test_rematch_wins_order_only_responses_whose_win_rates_tie() -> None:
    labels = ["R1", "R2", "R3", "R4"]
    scores = ab_scores(labels, {"R1": 2, "R2": 2, "R3": 1, "R4": 1}, {"R2": 1, "R3": 1})
    assert scores["R2"] > scores["R1"] > scores["R3"] > scores["R4"]
    assert [most_rematches(n) for n in (2, 3, 4, 5)] == [0, 3, 3, 10]


async def test_two_responses_one_call_and_the_winner_is_the_preference() -> None:
    item = Item(id="p", question=ITEM.question, references=ITEM.references, candidates={"x": BAD, "y": GOOD},
                gold=PairwiseGold(a="x", b="y", labels=["B"]))
    llm = scripted(_ab(lambda a, b, p: a if QUALITY[a] > QUALITY[b] else b))
    _, [verdict], _ = await _run(_judge("pairwise-ab", llm), items=[item])
    assert len(llm.requests) == 1 and verdict.preference == "B"


# -- LINKAGE ---------------------------------------------------------------------------------------

GRADED = ["Blue light is scattered most by air.", "Air scatters light.", "Light is blue.", "The sea is blue."]


def _placing(purpose, user, call):
    if purpose == "linkage:references":
        return {"answers": ["Scattering happens.", "The air is blue.", "Because of clouds."]}
    return f"It sits at [[{4 - QUALITY[_shown(user, 'Candidate')]}]]."


async def test_linkage_places_each_response_in_the_datasets_graded_list() -> None:
    item = ITEM.model_copy(update={"meta": {"graded_references": GRADED}})
    llm = scripted(_placing)
    judge = _judge("linkage", llm)
    events, [verdict], _ = await _run(judge, items=[item])
    assert llm.purposes() == ["linkage:place"] * 3 and judge.expected_calls(item) == (3, 3)
    [built] = [e for e in events if e.type == "reference_list_built"]
    assert built.source == "dataset" and built.references == GRADED
    user = llm.requests[0].messages[-1]["content"]
    assert block_texts(user)["Reference 1"] == "Blue light is scattered most by air."
    assert block_texts(user)["Reference 4"] == "The sea is blue."
    assert "[[5]]" in user  # worse than all four references
    assert verdict.scores == {"good": -1.0, "mid": -2.0, "bad": -3.0}


async def test_linkage_writes_the_list_once_per_question_when_the_data_grades_none() -> None:
    llm = scripted(_placing)
    judge = _judge("linkage", llm)
    events, [verdict], _ = await _run(judge)
    assert llm.purposes() == ["linkage:references", *["linkage:place"] * 3]
    assert judge.expected_calls(ITEM) == (4, 4)
    [built] = [e for e in events if e.type == "reference_list_built"]
    assert built.source == "llm" and built.references == [ITEM.references[0], "Scattering happens.",
                                                             "The air is blue.", "Because of clouds."]
    restored = event_from_dict(json.loads(verdict.model_dump_json()))
    assert [a.type for a in restored.artifacts].count("candidate_placed") == 3


async def test_a_place_out_of_range_is_asked_again() -> None:
    llm = scripted(lambda p, user, c: "[[2]]" if p.endswith(":reask") else "[[9]]")
    item = ITEM.model_copy(update={"meta": {"graded_references": GRADED}})
    _, [verdict], _ = await _run(_judge("linkage", llm), items=[item])
    assert set(verdict.scores.values()) == {-2.0} and llm.purposes().count("linkage:place:reask") == 3
    assert "whole number from 1 to 5" in llm.requests[1].messages[-1]["content"]


def test_the_webglm_loader_keeps_linkages_graded_list(tmp_path) -> None:
    from qatui.data.loaders import load_dataset
    from qatui.data.presentation import present

    entry = {"doc_list": [{"answer": "a1", "model": "m1", "label": 2}, {"answer": "a2", "model": "m2", "label": 1}],
             "ground0": "worst", "ground1": "poor", "ground2": "fair", "ground3": "human", "ground4": "human copy"}
    path = tmp_path / "WEBGLM.json"
    path.write_text(json.dumps({"How?": entry}))
    [item] = load_dataset(path).items
    assert item.meta["graded_references"] == ["human", "fair", "poor", "worst"]  # ground4 left out, as LINKAGE does
    assert present(item, 0)[0].graded_references == ["human", "fair", "poor", "worst"]


# -- G-Eval ----------------------------------------------------------------------------------------


def _tokens(text: str, top: dict[str, float]) -> list[dict]:
    """Fake log-probabilities: one token per character; the digit's alternatives are `top` (probabilities)."""
    digit = re.search(r"\[\[(\d)\]\]", text).start(1)
    return [{"token": ch, "logprob": 0.0, "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in top.items()]
             if i == digit else []} for i, ch in enumerate(text)]


def test_log_probabilities_weigh_the_digits_one_to_five() -> None:
    found = digit_probabilities(_tokens('{"score": "[[4]]"}', {"4": 0.6, " 4": 0.1, "3": 0.2, "x": 0.05}))
    assert found == pytest.approx({"4": 0.7 / 0.9, "3": 0.2 / 0.9})  # variants summed, renormalised over 1-5
    assert weighted_score(found) == pytest.approx((4 * 0.7 + 3 * 0.2) / 0.9)
    shared = [{"token": "[[4", "logprob": 0.0, "top_logprobs": []}, {"token": "]]", "logprob": 0.0}]
    assert digit_probabilities(shared) is None and digit_probabilities(None) is None  # no clean digit: sample


def _tokens_at(text: str, tops: dict[int, dict[str, float]]) -> list[dict]:
    """Fake log-probabilities, one token per character; the character at each index of `tops` has those alternatives."""
    return [{"token": ch, "logprob": 0.0, "top_logprobs": [{"token": t, "logprob": math.log(p)}
                                                          for t, p in tops.get(i, {}).items()]}
            for i, ch in enumerate(text)]


@pytest.mark.parametrize("text, verdict, expected", [
    ('{"score": "[[5]]"}\n<think>Second thoughts: [[1]]</think>', 5, "5"),  # thinking after the answer
    ('<think>Draft: [[1]]</think>{"score": "[[5]]"}', 5, "5"),
    ('{"score": "[[1]]", "note": "the text under review says [[5]]"}', 1, "1"),  # a quote after the verdict
    ('{"note": "it says [[5]]", "score": "[[1]]"}', 1, "1"),
    ('My rating: [[4]]', 4, "4"),  # prose: the answer's last
    ('{"score": "[[5]]"}', 3, None),  # not the digit that was read: another text's distribution, none
])
def test_log_probabilities_are_read_at_the_verdict_s_digit_in_the_answer_only(text, verdict, expected) -> None:
    """The tokens hold the thinking and every field of the answer: the distribution is read at the verdict field's
    `[[d]]`, outside any thinking, and only when it is the digit read as the verdict."""
    tops = {m.start(1): {m[1]: 0.8, str(6 - int(m[1])) if m[1] != "3" else "2": 0.2}
            for m in re.finditer(r"\[\[(\d)\]\]", text)}
    found = digit_probabilities(_tokens_at(text, tops), verdict=verdict, field="score")
    if expected is None:
        assert found is None
    else:
        assert max(found, key=found.get) == expected and found[expected] == pytest.approx(0.8)


async def test_geval_weighs_by_log_probabilities_when_the_backbone_gives_them() -> None:
    def reply(purpose, user, call):
        if purpose == "geval:steps":
            return "1. Read the reference.\n2. Compare the answer.\n3. Score it."
        assert call.logprobs == 5 and call.temperature == 1.0 and call.sample == 0
        q = QUALITY[_shown(user, "Answer")]
        text = f'{{"score": "[[{q + 1}]]"}}'
        return text, _tokens(text, {str(q + 1): 0.5, str(q + 2): 0.5})

    llm = scripted(reply)
    judge = _judge("geval", llm, backbone="openai/gpt-4o-mini", dimensions="accuracy,completeness")
    events, [verdict], _ = await _run(judge)
    assert llm.purposes().count("geval:steps") == 2
    assert len(llm.requests) == 2 + 3 * 2 and judge.expected_calls(ITEM) == (2 + 3 * 2, 2 + 3 * 2 * 5)
    assert verdict.scores == pytest.approx({"good": 4.5, "mid": 3.5, "bad": 2.5})
    rated = [e for e in events if e.type == "dimension_rated"]
    assert {e.method for e in rated} == {"logprobs"} and verdict.details["methods"] == {"logprobs": 6, "samples": 0}
    assert verdict.details["dimension_scores"]["Response 1"].keys() == {"accuracy", "completeness"}
    steps = [e for e in events if e.type == "steps_written"]
    assert [e.dimension for e in steps] == ["accuracy", "completeness"] and "Compare the answer" in steps[0].steps


async def test_without_log_probabilities_geval_averages_samples_on_new_seeds() -> None:
    def reply(purpose, user, call):
        if purpose == "geval:steps":
            return "1. Check the facts."
        return f"[[{min(5, QUALITY[_shown(user, 'Answer')] + call.sample % 2)}]]"  # 3, 4, 3, 4, 3 for good

    llm = scripted(reply)
    judge = _judge("geval", llm, backbone="openai/gpt-4o-mini", dimensions="accuracy")
    events, [verdict], _ = await _run(judge)
    assert len(llm.requests) == 1 + 3 * 5 and judge.expected_calls(ITEM) == (1 + 3, 1 + 3 * 5)  # auto: a range
    local = _judge("geval", llm, backbone="local/smollm2", dimensions="accuracy")
    assert local.expected_calls(ITEM) == (1 + 3 * 5, 1 + 3 * 5)  # the embedded models never give log-probabilities
    assert sorted(r.sample for r in llm.requests if r.purpose == "geval:rate")[:6] == [0, 0, 0, 1, 1, 1]
    assert verdict.scores["good"] == pytest.approx((3 + 4 + 3 + 4 + 3) / 5)
    assert {e.method for e in events if e.type == "dimension_rated"} == {"samples"}
    sampled = _judge("geval", scripted(reply), dimensions="accuracy", method="samples", samples=3)
    assert sampled.expected_calls(ITEM) == (1 + 3 * 3, 1 + 3 * 3)


async def test_geval_writes_the_same_steps_request_for_every_item() -> None:
    llm = scripted(lambda p, u, c: "1. Check." if p == "geval:steps" else "[[3]]")
    judge = _judge("geval", llm, dimensions="clarity", samples=1)
    other = ITEM.model_copy(update={"id": "other", "question": "Why does ice float?"})
    await _run(judge, items=[ITEM, other])
    steps = [r.messages for r in llm.requests if r.purpose == "geval:steps"]
    assert len(steps) == 2 and steps[0] == steps[1]  # one cache entry serves every item


async def test_geval_method_logprobs_fails_an_item_the_backbone_gives_none() -> None:
    llm = scripted(lambda p, u, c: "1. Check." if p == "geval:steps" else "[[3]]")
    _, _, [failure] = await _run(_judge("geval", llm, dimensions="accuracy", method="logprobs"))
    assert "gave no log-probabilities" in failure.reason


def test_geval_dimensions_are_checked() -> None:
    from qatui.errors import JudgeError

    assert make_judge("geval", {"dimensions": ["Relevance", "fluency"]}).options.names == ["relevance", "fluency"]
    with pytest.raises(JudgeError, match="unknown dimension"):
        make_judge("geval", {"dimensions": "accuracy,style"})


# -- always longer ---------------------------------------------------------------------------------


async def test_length_prefers_the_longer_in_words_or_in_chinese_characters() -> None:
    assert length_unit("en", "auto") == "words" and length_unit("zh", "auto") == "characters"
    assert text_length("天空 是蓝色的", "characters") == 6 and text_length("the sky is blue", "words") == 4
    item = Item(id="p", question="Why?", candidates={"x": "Short.", "y": "A much longer answer here."},
                gold=PairwiseGold(a="x", b="y", labels=["B"]))
    judge = make_judge("length")
    _, [verdict], _ = await _run(judge, items=[item])
    assert verdict.preference == "B" and verdict.scores == {"x": 1.0, "y": 5.0}
    shown = {f"Response {i + 1}": int(verdict.scores[cid]) for i, cid in enumerate(verdict.order)}
    assert verdict.details == {"unit": "words", "lengths": shown}
    assert judge.expected_calls(item) == (0, 0) and not judge.uses_llm


# -- the client: log-probabilities through, cached, keys unchanged ---------------------------------


class StubBackbone:
    """Answers every request with `[[3]]` and log-probabilities; records the requests it got."""

    router = None  # one endpoint, as `llm.backbone.Backbone` without deployments

    def __init__(self) -> None:
        self.requests: list[dict] = []

    async def run(self, kwargs, *, api_key=None, consume=None, hops=None, send=None):
        from qatui.llm._lazy import get_litellm

        self.requests.append(kwargs)
        content = [{"token": "[[", "logprob": -0.1, "top_logprobs": []},
                   {"token": "3", "logprob": -0.4, "top_logprobs": [{"token": "3", "logprob": -0.4},
                                                                      {"token": "4", "logprob": -1.1}]},
                   {"token": "]]", "logprob": -0.1, "top_logprobs": []}]
        return get_litellm().ModelResponse(model="gpt-4o-mini", usage={"prompt_tokens": 5, "completion_tokens": 3,
                                                                        "total_tokens": 8}, choices=[
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "[[3]]"},
             "logprobs": {"content": content}}]), 1


async def test_the_client_asks_for_log_probabilities_and_caches_them(tmp_path, monkeypatch) -> None:
    from qatui.llm.cache import CallCache, cache_key
    from qatui.llm.client import LLMClient

    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    backbone = StubBackbone()
    client = LLMClient(model="openai/gpt-4o-mini", name="gpt", backbone=backbone, cache=CallCache(tmp_path),
                       settings=BackboneConfig(model="openai/gpt-4o-mini", api_base="http://127.0.0.1:9"))
    ask = [{"role": "user", "content": "Rate it."}]
    plain = client.build_request(ask)
    assert "logprobs" not in plain and cache_key(plain) == cache_key({**plain, "logprobs": None})
    assert client.build_request(ask, sample=2)["seed"] == plain["seed"] + 2
    first = await client.complete(ask, purpose="rate", logprobs=5)
    assert backbone.requests[0]["logprobs"] is True and backbone.requests[0]["top_logprobs"] == 5
    assert "stream" not in backbone.requests[0]  # log-probabilities come whole only without streaming
    assert digit_probabilities(first.logprobs) == pytest.approx({"3": 1 / (1 + math.exp(-0.7)),
                                                                 "4": math.exp(-0.7) / (1 + math.exp(-0.7))})
    again = await client.complete(ask, purpose="rate", logprobs=5)
    assert len(backbone.requests) == 1 and again.event.cached and again.logprobs == first.logprobs
    local = LLMClient(model="local/smollm2", name="local/smollm2", backbone=backbone, cache=CallCache(tmp_path),
                      settings=BackboneConfig(model="local/smollm2"))
    assert "logprobs" not in local.build_request(ask, logprobs=5)  # the embedded models give none


# -- what `sessions show --item` prints ------------------------------------------------------------


async def test_the_item_view_prints_each_raw_answer_and_what_was_read() -> None:
    from qatui.report.item_view import print_item_detail

    def stored(verdict: Verdict) -> dict:  # a judge's entry as `item_detail` reads it from a session
        return {"status": "done", "scores": verdict.scores, "ranking": verdict.ranking, "order": verdict.order,
                "pair": None, "preference": None, "details": verdict.details, "calls": [],
                "artifacts": [a.model_dump(mode="json") for a in verdict.artifacts if a.type != "judgement"]}

    item = ITEM.model_copy(update={"meta": {"graded_references": GRADED}})
    judges = {
        "pointwise": _judge("pointwise", scripted(_pointwise)),
        "pairwise-ab": _judge("pairwise-ab", scripted(_ab(lambda a, b, p: a if QUALITY[a] > QUALITY[b] else b))),
        "linkage": _judge("linkage", scripted(_placing)),
        "geval": _judge("geval", scripted(lambda p, u, c: "1. Compare with the reference." if p == "geval:steps"
                                             else "[[4]]"), dimensions="accuracy", samples=2),
        "length": make_judge("length"),
    }
    entries = {}
    for name, judge in judges.items():
        _, [verdict], _ = await _run(judge, items=[item])
        entries[name] = stored(verdict)
    out = StringIO()
    print_item_detail(Console(file=out, width=140), {"item_id": "sky", "session": "s", "judges": entries})
    text = out.getvalue()
    for expected in ("[[9.00]]", "A is 2, B is 3. [[B]]", "It sits at [[1]].", "The sea is blue.",
                     "G-Eval steps for accuracy", "samples 4 4", "G-Eval score (1-5) per dimension",
                     "length counted in words"):
        assert expected in text, expected


async def test_a_session_stored_with_the_old_pairwise_ab_event_shows_as_a_new_one() -> None:
    """MinosEval's A / B choices were stored as "pair_chosen" before both pairwise judges shared `PairJudged`:
    `sessions show --item` (and the report, which prints the same view) shows an old session's as a new one's,
    at the top level and inside a jury member."""
    from qatui.events import MemberVerdict
    from qatui.report.item_view import print_item_detail, stored_item

    _, [verdict], _ = await _run(_judge("pairwise-ab", scripted(_ab(lambda a, b, p: a if QUALITY[a] > QUALITY[b]
                                                                     else b))))
    new = [a.model_dump(mode="json") for a in verdict.artifacts if a.type != "judgement"]
    assert {a["type"] for a in new} == {"pair_judged"}
    old = [{k: v for k, v in a.items() if k != "ranked_by"} | {"type": "pair_chosen"} if a["type"] == "pair_judged"
           else a for a in new]

    def shown(artifacts: list[dict]) -> str:
        member = {**MemberVerdict(member="pairwise-ab@x", scores=verdict.scores, ranking=list(verdict.scores),
                                  details=verdict.details).model_dump(mode="json"), "artifacts": artifacts}  # as stored
        stored = {"scores": verdict.scores, "ranking": verdict.ranking, "order": verdict.order,
                  "details": verdict.details, "artifacts": [*artifacts, member]}
        detail = stored_item("s", "sky", None, {("sky", "pairwise-ab"): {"status": "done", "verdict": stored}})
        out = StringIO()
        print_item_detail(Console(file=out, width=140), detail)
        return out.getvalue()

    assert shown(old) == shown(new)
    assert shown(old).count("pairwise A/B verdicts, each pair once") == 2  # the judge's own and its member's
    assert "A is 2, B is 3. [[B]]" in shown(old)


# -- the real embedded backbone, offline -----------------------------------------------------------

TWO_ITEMS = [
    {"id": "sky", "question": "Why is the sky blue on a clear day?", "references": [ITEM.references[0]],
     "candidates": {"good": GOOD, "mid": MID, "bad": BAD}, "meta": {"graded_references": GRADED},
     "gold": {"kind": "ranking", "tiers": [["good"], ["mid"], ["bad"]]}},
    {"id": "ice", "question": "Why does ice float on water?",
     "references": ["Ice is less dense than liquid water, because its molecules lock into an open lattice."],
     "candidates": {"good": "Ice is less dense than water, as freezing locks its molecules into an open lattice.",
                    "mid": "Ice is lighter than water.", "bad": "Ice floats because it is cold."},
     "gold": {"kind": "ranking", "tiers": [["good"], ["mid"], ["bad"]]}},
]


NO_MODEL = pytest.mark.skipif(
    not extras.has("local"),
    reason=f"the embedded model is not installed: {extras.install_hint('local')}")


@pytest.mark.parametrize("judge", [*(pytest.param(name, marks=[pytest.mark.slow, NO_MODEL])
                                     for name in ("pointwise", "pairwise-ab", "linkage", "geval")), "length"])
def test_each_baseline_runs_offline_on_the_embedded_backbone(judge, tmp_path, capsys, monkeypatch) -> None:
    from qatui.cli import main
    from qatui.store.session import SessionStore

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # every call reaches the model
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    data = tmp_path / "two.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in TWO_ITEMS))
    config = tmp_path / "qatui.toml"
    config.write_text('[judges.geval]\ndimensions = "accuracy"\nsamples = 2\n')  # 7 calls an item, not 48
    args = ["run", str(data), "--judge", judge, "--backbone", "local/smollm2", "--limit", "2", "--json",
            "--config", str(config), "--sessions-dir", str(tmp_path / "sessions")]
    assert main([*args, "--plan"]) == 0
    fewest, most = json.loads(capsys.readouterr().out)["calls"][judge]
    code = main(args)
    out, err = capsys.readouterr()
    assert code == 0, err
    result = json.loads(out)
    assert result["judges"][judge]["n_failed"] == 0  # constrained decoding: the tiny model always answers in format
    assert fewest <= result["llm"]["calls"] <= most and (judge == "pairwise-ab" or fewest == most)
    assert len(SessionStore(tmp_path / "sessions").open(result["session"]).verdicts(judge)) == 2
    assert main(["sessions", "show", result["session"], "--item", "ice", "--sessions-dir",
                 str(tmp_path / "sessions")]) == 0
    shown = capsys.readouterr().out
    assert {"pointwise": "pointwise scores", "pairwise-ab": "pairwise A/B verdicts", "linkage": "LINKAGE places",
            "geval": "G-Eval ratings", "length": "length counted in words"}[judge] in shown


def test_a_language_tag_with_a_region_or_script_is_read_as_its_language(tmp_path, capsys) -> None:
    """"zh-CN" and "zh_Hans" are Chinese: the same item gets the same BLEU, ROUGE-L and length scores as under
    "zh". Read whole, the tag sent a Chinese item down the English path: rouge-score's tokenizer drops CJK text,
    so every answer scored 0, and BLEU split it on spaces only."""
    from qatui.cli import main
    from qatui.store.session import SessionStore

    reference = "食盐是氯化钠，由钠和氯两种元素组成。"
    candidates = {"a": "食盐的化学式是氯化钠，它由钠和氯组成。", "b": "食盐是氯化钾。", "c": "盐是一种调味品，很咸。"}
    scores = {}
    for tag in ("zh", "zh-CN", "zh_Hans", "ZH"):
        data = tmp_path / f"{tag}.jsonl"
        data.write_text(json.dumps({"id": "q", "question": "食盐是什么？", "references": [reference], "language": tag,
                                    "candidates": candidates}, ensure_ascii=False) + "\n", encoding="utf-8")
        code = main(["run", str(data), "--judge", "rouge-l", "--judge", "bleu", "--judge", "length", "--json",
                     "--sessions-dir", str(tmp_path / "s")])
        out, err = capsys.readouterr()
        assert code == 0, err
        session = SessionStore(tmp_path / "s").open(json.loads(out)["session"])
        scores[tag] = {doc["judge"]: doc["verdict"]["scores"] for doc in session.results().values()}
    assert all(scores[tag] == scores["zh"] for tag in scores), scores
    assert min(scores["zh"]["rouge-l"].values()) > 0.0  # jieba's words: every answer shares some with the reference
    assert sorted(scores["zh"]["length"].values()) == [7.0, 11.0, 19.0]  # characters, punctuation included
