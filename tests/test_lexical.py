"""The lexical judges on real sacrebleu / rouge-score, English, Chinese and other scripts."""

import json

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


@pytest.mark.parametrize(("language", "reference", "near", "far"), [
    ("ru", "Поваренная соль — это хлорид натрия.", "Соль — это хлорид натрия.", "Сахар сладкий."),
    ("ja", "食塩は塩化ナトリウムです。", "塩は塩化ナトリウムだ。", "砂糖は甘い。"),
    ("ko", "소금은 염화 나트륨입니다.", "소금은 염화 나트륨이다.", "설탕은 달다."),
    ("th", "เกลือคือโซเดียมคลอไรด์", "เกลือเป็นโซเดียมคลอไรด์", "น้ำตาลหวาน"),
])
def test_rouge_l_and_bleu_read_text_in_any_script(language, reference, near, far, tmp_path, capsys) -> None:
    """rouge-score's tokenizer keeps only a-z and 0-9: a Russian, Japanese or Korean answer scored ROUGE-L 0
    whatever it said, so every response tied. Now the reference itself scores 1 on both, an answer sharing
    most of its words ranks above one sharing none, and that one scores 0."""
    from qatui.cli import main
    from qatui.store.session import SessionStore

    data = tmp_path / "items.jsonl"
    data.write_text(json.dumps({"id": "q", "question": "?", "references": [reference], "language": language,
                                "candidates": {"same": reference, "near": near, "far": far}},
                               ensure_ascii=False) + "\n", encoding="utf-8")
    code = main(["run", str(data), "--judge", "rouge-l", "--judge", "bleu", "--json",
                 "--sessions-dir", str(tmp_path / "s")])
    out, err = capsys.readouterr()
    assert code == 0, err
    session = SessionStore(tmp_path / "s").open(json.loads(out)["session"])
    for doc in session.results().values():
        scores = doc["verdict"]["scores"]
        assert scores["same"] == pytest.approx(1.0) and scores["same"] > scores["near"] > scores["far"], (doc["judge"], scores)


def test_english_words_are_rouge_score_s_own_tokens() -> None:
    """For ASCII text the tokenizer that reads any script gives exactly rouge-score's tokens, stemmed as it stems
    them: the ROUGE-L of English answers is the published metric's."""
    from hypothesis import given, settings, strategies as st
    from nltk.stem import porter
    from rouge_score import tokenize

    from qatui.judges.baselines.lexical import _WordTokenizer

    stemmer, ours = porter.PorterStemmer(), _WordTokenizer(stem=True)
    plain = _WordTokenizer(stem=False)

    @settings(max_examples=300, deadline=None)
    @given(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=80))
    def same(text: str) -> None:
        assert ours.tokenize(text) == tokenize.tokenize(text, stemmer)
        assert plain.tokenize(text) == tokenize.tokenize(text, None)

    same()
    for text in ("The cats were running quickly, weren't they?", "Sodium chloride (NaCl) is table-salt; 58.44 g/mol"):
        assert ours.tokenize(text) == tokenize.tokenize(text, stemmer)
