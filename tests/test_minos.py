"""MinosEval with a scripted backbone and a scripted NLI model: routing, formula, repair, opacity."""

from __future__ import annotations

import json

import pytest
from fakes import ScriptedLLM

from qatui.config import Config
from qatui.data.model import Item, RankingGold
from qatui.engine.runner import Engine
from qatui.events import (
    EntailmentScored,
    InstancesGenerated,
    KeyPointsExtracted,
    QuestionClassified,
    RankingProduced,
    Verdict,
    event_from_dict,
)
from qatui.judges.registry import make_judge
from qatui.judges.resources import Resources
from qatui.llm.fence import block_texts
from qatui.nli import NLIProbs


def scripted(script: dict[str, list[dict]]) -> ScriptedLLM:
    """The shared scripted backbone answering each call with the next answer its purpose has in `script`."""
    answers = {purpose: list(replies) for purpose, replies in script.items()}
    return ScriptedLLM(lambda call: answers[call.purpose].pop(0))


class WordNLI:
    """Entailment = share of the hypothesis's words found in the premise; contradiction if 'not' differs."""

    def __init__(self) -> None:
        self.pairs: list[tuple[str, str]] = []

    async def apredict(self, pairs):
        self.pairs.extend(pairs)
        out = []
        for premise, hypothesis in pairs:
            words = hypothesis.lower().rstrip(".").split()
            cover = sum(w in premise.lower() for w in words) / len(words)
            contra = 0.6 if ("not" in premise.lower().split()) != ("not" in words) else 0.0
            entail = cover * (1 - contra)
            out.append(NLIProbs(entail=entail, contradict=contra, neutral=1 - entail - contra))
        return out


def _judge(name: str, llm: ScriptedLLM, nli: WordNLI | None = None, **options):
    return make_judge(name, options, Resources(Config(), llm=llm, nli=nli or WordNLI()))


ITEM = Item(
    id="q1",
    question="Is the sky blue on a clear day?",
    references=["The sky is blue on a clear day because air scatters blue light."],
    candidates={
        "best": "Yes, the sky is blue on a clear day because air scatters blue light.",
        "mid": "The sky is blue.",
        "worst": "The sky is not blue.",
    },
    gold=RankingGold(tiers=[["best"], ["mid"], ["worst"]]),
)


async def _run(judge, items=(ITEM,), seed=0):
    events = [e async for e in Engine(list(items), [judge], seed=seed).run()]
    verdicts = [e for e in events if isinstance(e, Verdict)]
    failures = [e for e in events if e.type == "item_failed"]
    assert not failures, failures
    return events, verdicts[0]


async def test_factoid_route_scores_key_points_with_the_response_as_premise() -> None:
    llm = scripted({
        "classify": [{"reason": "a fact", "factoid": True}],
        "key_points": [{"key_points": ["The sky is blue on a clear day.", "Air scatters blue light."]}],
    })
    nli = WordNLI()
    events, verdict = await _run(_judge("minos", llm, nli))
    assert llm.purposes() == ["classify", "key_points"]  # the method's minimum for one reference
    assert _judge("minos", llm).expected_calls(ITEM) == (2, 3)  # factoid 2, non-factoid 3
    assert verdict.ranking == ["best", "mid", "worst"]
    premises = {p for p, _ in nli.pairs}
    hypotheses = {h for _, h in nli.pairs}
    assert premises == set(ITEM.candidates.values())
    assert hypotheses == {"The sky is blue on a clear day.", "Air scatters blue light."}
    scored = [e for e in events if isinstance(e, EntailmentScored)]
    assert len(scored) == 6
    # score = mean over points of P(entail) - P(contradict), per response label
    ranking_event = next(e for e in events if isinstance(e, RankingProduced))
    for label, score in ranking_event.scores.items():
        mine = [e.p_entail - e.p_contradict for e in scored if e.response == label]
        assert score == pytest.approx(sum(mine) / len(mine))
    assert next(e for e in events if isinstance(e, QuestionClassified)).question_type == "factoid"


async def test_several_references_keep_the_best_score_per_response() -> None:
    item = ITEM.model_copy(update={"references": ["Air scatters blue light.", "The sky is not blue."]})
    llm = scripted({
        "classify": [{"reason": "a fact", "factoid": True}],
        "key_points": [{"key_points": ["Air scatters blue light."]}, {"key_points": ["The sky is not blue."]}],
    })
    events, verdict = await _run(_judge("minos", llm), items=[item])
    assert llm.purposes() == ["classify", "key_points", "key_points"]
    assert _judge("minos", llm).expected_calls(item) == (3, 3)
    assert [e.reference_index for e in events if isinstance(e, KeyPointsExtracted)] == [0, 1]
    # 'worst' matches reference 2 fully, so the max lifts it above 'mid'
    assert verdict.scores["worst"] == pytest.approx(1.0)
    assert verdict.details["per_reference"][1] != verdict.details["per_reference"][0]


async def test_non_factoid_route_writes_instances_then_ranks_with_them() -> None:
    labels_seen = []

    llm = scripted({
        "classify": [{"reason": "advice", "factoid": False}],
        "instances": [{k: f"{k} answer" for k in ("excellent", "good", "fair", "poor", "bad")}],
        "rank": [{"rank": ["Response 2", "Response 3", "Response 1"]}],
    })
    events, verdict = await _run(_judge("minos", llm))
    assert llm.purposes() == ["classify", "instances", "rank"]
    assert len(llm.purposes()) == _judge("minos", llm).expected_calls(ITEM)[1]
    rank_prompt = llm.requests[-1].content
    for level in ("Excellent: excellent answer", "Bad: bad answer"):
        assert level in rank_prompt
    for cid in ITEM.candidates:
        assert f"[{cid}]" not in rank_prompt and cid not in rank_prompt.split()  # ids never shown
    assert [name for name in block_texts(rank_prompt) if name != "Reference"] == ["Response 1", "Response 2",
                                                                                "Response 3"]
    assert isinstance(next(e for e in events if isinstance(e, InstancesGenerated)), InstancesGenerated)
    order = verdict.order
    assert verdict.ranking == [order[1], order[2], order[0]]


async def test_candidates_reach_the_prompt_in_a_seeded_shuffle() -> None:
    texts_by_seed = {}
    for seed in range(6):
        llm = scripted({"rank": [{"rank": ["Response 1", "Response 2", "Response 3"]}]})
        await _run(_judge("listwise", llm), seed=seed)
        prompt = llm.requests[0].content
        texts_by_seed[seed] = tuple(sorted(ITEM.candidates.values(), key=prompt.index))
    assert len(set(texts_by_seed.values())) > 1  # the order changes with the seed
    again = scripted({"rank": [{"rank": ["Response 1", "Response 2", "Response 3"]}]})
    await _run(_judge("listwise", again), seed=3)
    prompt = again.requests[0].content
    assert tuple(sorted(ITEM.candidates.values(), key=prompt.index)) == texts_by_seed[3]  # and is stable


async def test_bad_ranking_is_reasked_once_then_repaired_by_the_documented_rule() -> None:
    llm = scripted({"rank": [{"rank": ["Response 2", "Response 2", "Response 9"]}],
                       "rank_repair": [{"rank": ["Response 3", "Response 3"]}]})
    events, verdict = await _run(_judge("listwise", llm))
    assert llm.purposes() == ["rank", "rank_repair"]
    assert "repeated label(s) Response 2" in llm.requests[1].content
    produced = next(e for e in events if isinstance(e, RankingProduced))
    assert produced.repaired and "appended the missing ones" in produced.repair
    assert produced.ranking == ["Response 3", "Response 1", "Response 2"]


async def test_a_good_second_answer_is_used_and_still_marked_repaired() -> None:
    llm = scripted({"rank": [{"rank": ["Response 1"]}],
                       "rank_repair": [{"rank": ["Response 3", "Response 1", "Response 2"]}]})
    events, verdict = await _run(_judge("listwise", llm))
    produced = next(e for e in events if isinstance(e, RankingProduced))
    assert produced.repaired and produced.ranking == ["Response 3", "Response 1", "Response 2"]
    assert produced.raw == ["Response 1"]


async def test_gold_routing_makes_no_classification_call() -> None:
    item = ITEM.model_copy(update={"question_type": "factoid"})
    llm = scripted({"key_points": [{"key_points": ["The sky is blue on a clear day."]}]})
    events, _ = await _run(_judge("minos", llm, route="gold"), items=[item])
    assert llm.purposes() == ["key_points"]
    assert _judge("minos", llm, route="gold").expected_calls(item) == (1, 1)
    assert next(e for e in events if isinstance(e, QuestionClassified)).source == "gold"


async def test_ablations_skip_the_router() -> None:
    akps = scripted({"key_points": [{"key_points": ["The sky is blue."]}]})
    await _run(_judge("minos-akps", akps))
    assert akps.purposes() == ["key_points"]
    assert _judge("minos-akps", akps).expected_calls(ITEM) == (1, 1)
    ialr = scripted({"instances": [{k: k for k in ("excellent", "good", "fair", "poor", "bad")}],
                        "rank": [{"rank": ["Response 1", "Response 2", "Response 3"]}]})
    await _run(_judge("minos-ialr", ialr))
    assert ialr.purposes() == ["instances", "rank"]
    assert _judge("minos-ialr", ialr).expected_calls(ITEM) == (2, 2)


async def test_every_artifact_survives_storage() -> None:
    llm = scripted({
        "classify": [{"reason": "a fact", "factoid": True}],
        "key_points": [{"key_points": ["The sky is blue on a clear day."]}],
    })
    _, verdict = await _run(_judge("minos", llm))
    restored = event_from_dict(json.loads(verdict.model_dump_json()))
    assert [a.type for a in restored.artifacts] == [
        "question_classified", "key_points_extracted", "entailment_scored", "entailment_scored",
        "entailment_scored", "ranking_produced", "judgement",
    ]


def test_chinese_items_get_chinese_prompts() -> None:
    from qatui.judges.prompts import chat, load_prompts

    prompts = load_prompts("minos", "zh")
    messages = chat(prompts["key_points"], ("key_points",), question="问", reference="答")
    assert "参考答案：答" in messages[-1]["content"] and "要点" in messages[0]["content"]
    assert json.loads(messages[2]["content"])["key_points"]  # the few-shot answer is valid JSON


async def test_route_accuracy_is_reported_against_the_dataset_label() -> None:
    from qatui.metrics import summarize

    items = [ITEM.model_copy(update={"id": "f", "question_type": "factoid"}),
             ITEM.model_copy(update={"id": "n", "question_type": "non-factoid"})]
    llm = scripted({
        "classify": [{"reason": "x", "factoid": True}, {"reason": "y", "factoid": True}],
        "key_points": [{"key_points": ["The sky is blue."]}, {"key_points": ["The sky is blue."]}],
    })
    judge = _judge("minos", llm)
    events = [e async for e in Engine(items, [judge], seed=0, concurrency=1).run()]
    verdicts = {e.item_id: e for e in events if isinstance(e, Verdict)}
    metrics = summarize(items, verdicts).metrics
    assert metrics["route_accuracy"] == pytest.approx(0.5)


async def test_llm_nli_asks_once_per_response_and_scores_one_hot() -> None:
    from qatui.judges.llm_nli import LLMNLIScorer

    llm = scripted({
        "classify": [{"reason": "a fact", "factoid": True}],
        "key_points": [{"key_points": ["The sky is blue on a clear day.", "Air scatters blue light."]}],
        "nli": [{"labels": ["entail", "entail"]}, {"labels": ["entail", "neutral"]},
                {"labels": ["contradict", "neutral"]}],
    })
    judge = _judge("minos", llm, nli=LLMNLIScorer(llm))
    events, verdict = await _run(judge)
    assert llm.purposes() == ["classify", "key_points", "nli", "nli", "nli"]
    nli_prompt = llm.requests[2].content
    assert "1. The sky is blue on a clear day." in nli_prompt and "2. Air scatters blue light." in nli_prompt
    scores = sorted(verdict.scores.values(), reverse=True)
    assert scores == pytest.approx([1.0, 0.5, -0.5])


async def test_llm_nli_with_a_wrong_label_count_fails_the_item() -> None:
    from qatui.judges.llm_nli import LLMNLIScorer

    llm = scripted({
        "classify": [{"reason": "a fact", "factoid": True}],
        "key_points": [{"key_points": ["The sky is blue.", "Air scatters blue light."]}],
        "nli": [{"labels": ["entail"]}],
    })
    judge = _judge("minos", llm, nli=LLMNLIScorer(llm))
    events = [e async for e in Engine([ITEM], [judge], seed=0).run()]
    failed = [e for e in events if e.type == "item_failed"]
    assert failed and "1 entailment labels for 2 statements" in failed[0].reason


async def test_repeated_key_points_count_once() -> None:
    llm = scripted({
        "classify": [{"reason": "a fact", "factoid": True}],
        "key_points": [{"key_points": ["The sky is blue."] * 5 + ["", "Air scatters blue light."]}],
    })
    events, _ = await _run(_judge("minos", llm))
    (extracted,) = [e for e in events if isinstance(e, KeyPointsExtracted)]
    assert extracted.points == ["The sky is blue.", "Air scatters blue light."]
    assert len([e for e in events if isinstance(e, EntailmentScored)]) == 6
