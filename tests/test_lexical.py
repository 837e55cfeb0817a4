"""The lexical judges on real sacrebleu / rouge-score, English and Chinese."""

import pytest

from qatui.data.model import Item
from qatui.data.presentation import present
from qatui.events import Judgement
from qatui.judges.baselines.lexical import BleuJudge, RougeLJudge, bleu_score, rouge_l_score


def test_rouge_l_prefers_the_response_closer_to_a_reference() -> None:
    refs = ["The capital of France is Paris."]
    assert rouge_l_score("The capital of France is Paris.", refs, "en") == pytest.approx(1.0)
    close = rouge_l_score("Paris is the capital of France.", refs, "en")
    far = rouge_l_score("Bananas are yellow fruit.", refs, "en")
    assert 0.0 <= far < close < 1.0


def test_rouge_l_takes_the_best_reference() -> None:
    resp = "Water boils at 100 degrees Celsius at sea level."
    single = rouge_l_score(resp, ["Ice melts at zero."], "en")
    both = rouge_l_score(resp, ["Ice melts at zero.", "At sea level water boils at 100 degrees Celsius."], "en")
    assert both > single


def test_chinese_is_segmented_not_dropped() -> None:
    # rouge-score's default tokenizer drops CJK characters and would score 0 here.
    refs = ["水在海平面的沸点是一百摄氏度。"]
    good = rouge_l_score("水在海平面的沸点是一百摄氏度。", refs, "zh")
    bad = rouge_l_score("长城位于中国北方。", refs, "zh")
    assert good == pytest.approx(1.0) and bad < 0.3
    assert bleu_score("水在海平面的沸点是一百摄氏度。", refs, "zh") > bleu_score("长城位于中国北方。", refs, "zh")


def test_bleu_uses_all_references() -> None:
    resp = "the cat sat on the mat today"
    one = bleu_score(resp, ["a dog lay on a rug"], "en")
    two = bleu_score(resp, ["a dog lay on a rug", "the cat sat on the mat today"], "en")
    assert one < 0.2 and two == pytest.approx(1.0)


@pytest.mark.parametrize("judge_cls", [BleuJudge, RougeLJudge])
async def test_judges_score_every_label_and_never_see_ids(judge_cls) -> None:
    item = Item(
        id="x",
        question="What is the capital of France?",
        references=["The capital of France is Paris."],
        candidates={"gold-best": "The capital of France is Paris.", "gold-worst": "I like trains.", "mid": "Paris."},
    )
    view, order = present(item, seed=3)
    events = [e async for e in judge_cls().judge(view)]
    judgement = events[-1]
    assert isinstance(judgement, Judgement)
    assert set(judgement.scores) == {"Response 1", "Response 2", "Response 3"}
    assert "gold-best" not in view.model_dump_json()
    best_label = f"Response {order.index('gold-best') + 1}"
    assert max(judgement.scores, key=judgement.scores.get) == best_label
