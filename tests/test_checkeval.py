"""CheckEval: checklist files, strict answer parsing, scoring, agreement, generation, an engine run."""

from __future__ import annotations

import json
import re

import krippendorff
import numpy as np
import pytest
from fakes import ScriptedLLM

from qatui.config import Config
from qatui.data.model import Item, RatingsGold
from qatui.engine.runner import Engine
from qatui.events import (
    ChecklistAnswered,
    Verdict,
    event_from_dict,
)
from qatui.judges.checkeval.checklist import (
    ChecklistError,
    bundled_checklists,
    load_checklist,
    parse_answers,
    share_of_yes,
)
from qatui.judges.checkeval.generate import NO_VERDICT, generate_checklist, parse_verdicts, question_lines
from qatui.judges.registry import make_judge
from qatui.judges.resources import Resources
from qatui.llm.errors import ParseError
from qatui.llm.fence import block_texts
from qatui.metrics import summarize
from qatui.metrics.agreement import checklist_agreement, fleiss_kappa


def scripted(reply, model: str = "scripted/test") -> ScriptedLLM:
    """The shared scripted backbone answering `reply(purpose, messages)` with text (read by the judge itself) or a
    ParseError to raise."""
    return ScriptedLLM(lambda call: reply(call.purpose, call.messages), model=model, parse_text=False)


def _judge(llm, **options):
    return make_judge("checkeval", options, Resources(Config(), llm=llm))


def _questions(messages) -> list[str]:
    return re.findall(r"^Q\d+: (.*)$", messages[-1]["content"], re.MULTILINE)


def _text(messages) -> str:
    """The text under evaluation: the last fenced block of the prompt (after the item's inputs)."""
    return list(block_texts(messages[-1]["content"]).values())[-1]


# -- parsing ---------------------------------------------------------------------------------------


def test_lines_are_read_per_question_whatever_the_case_and_the_prose() -> None:
    text = "Sure, here are my answers.\nQ1: Yes, the summary is on topic.\nq2: NO - it wanders\n**Q3:** yes\nDone."
    assert parse_answers(text, 3) == ["yes", "no", "yes"]


def test_a_missing_answer_is_unanswered_not_no() -> None:
    assert parse_answers("Q1: yes\nQ3: no", 3) == ["yes", None, "no"]
    assert parse_answers("I think the text is fine.", 2) == [None, None]
    assert parse_answers("Q2: maybe", 2) == [None, None]


def test_answers_out_of_order_and_out_of_range() -> None:
    assert parse_answers("Q3: no\nQ1: yes\nQ2: yes\nQ7: no\nQ0: yes", 3) == ["yes", "yes", "no"]


def test_a_duplicated_question_keeps_a_consistent_answer_and_drops_a_conflicting_one() -> None:
    assert parse_answers("Q1: yes\nQ1: YES\nQ2: no\nQ2: yes", 2) == ["yes", None]


def test_only_line_starts_count_and_yes_must_be_a_word() -> None:
    text = "The answer to Q1: yes is obvious\nQ2: yesterday\nQ3: nope\nQ4. no\nQ5) yes"
    assert parse_answers(text, 5) == [None, None, None, "no", "yes"]


def test_json_answers_are_read_key_by_key() -> None:
    assert parse_answers('{"Q1": "Yes", "q2": "no, because...", "Q3": "unsure"}', 3) == ["yes", "no", None]
    assert parse_answers('Here: {"Q2": "no"}', 3) == [None, "no", None]


# -- scoring ---------------------------------------------------------------------------------------


def test_share_of_yes_weighs_answers_and_skips_unanswered() -> None:
    assert share_of_yes([("yes", 1.0), ("no", 1.0), (None, 1.0)]) == pytest.approx(0.5)
    assert share_of_yes([("yes", 2.0), ("no", 1.0)]) == pytest.approx(2 / 3)
    assert share_of_yes([("no", 3.0), (None, 5.0), ("yes", 1.0)]) == pytest.approx(0.25)
    assert share_of_yes([(None, 1.0)]) is None


# -- checklist files -------------------------------------------------------------------------------

GOOD = """
name = "tiny"
task = "Judge a summary."
target = "Summary"
[inputs]
context = "Source"
[[dimensions]]
name = "coherence"
definition = "Well organised."
[[dimensions.sub_dimensions]]
name = "Flow"
questions = ["Is the order logical?", "Do sentences connect?"]
weights = [2.0, 1.0]
[[dimensions]]
name = "fluency"
definition = "Well written."
[[dimensions.sub_dimensions]]
name = "Grammar"
questions = ["Is the grammar correct?"]
"""


def test_bundled_checklists_load_with_the_dimensions_of_their_datasets() -> None:
    assert set(bundled_checklists()) >= {"qa", "summeval", "topical_chat"}
    dims = {name: [d.name for d in load_checklist(name).dimensions] for name in ("summeval", "topical-chat", "qa")}
    assert dims["summeval"] == ["coherence", "consistency", "fluency", "relevance"]
    assert dims["topical-chat"] == ["coherence", "engagingness", "groundedness", "naturalness"]
    assert dims["qa"] == ["factuality", "completeness", "relevance", "clarity"]
    for name in ("summeval", "topical-chat", "qa"):  # seed lists, every question weighing the same (the paper's)
        checklist = load_checklist(name)
        assert checklist.stage == "seed"
        assert {q.weight for _, _, _, q in checklist.question_ids()} == {1.0}
        assert {q.origin for _, _, _, q in checklist.question_ids()} == {"seed"}


def test_a_checklist_file_loads_by_path(tmp_path) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(GOOD)
    checklist = load_checklist(str(path))
    ids = [qid for _, _, qid, _ in checklist.question_ids()]
    assert ids == ["coherence/Flow/Q1", "coherence/Flow/Q2", "fluency/Grammar/Q1"]


@pytest.mark.parametrize(("change", "message"), [
    (lambda t: t.replace('weights = [2.0, 1.0]', 'weights = [2.0]'), "dimensions[0].sub_dimensions[0]"),
    (lambda t: t.replace('definition = "Well written."\n', ''), "key dimensions[1].definition"),
    (lambda t: t.replace('context = "Source"', 'source = "Source"'), "key inputs"),
    (lambda t: t.replace('questions = ["Is the grammar correct?"]', 'questions = []'),
     "key dimensions[1].sub_dimensions[0].questions"),
    (lambda t: t.replace('name = "fluency"', 'name = "coherence"'), "named twice"),
    (lambda t: t + "\nnot toml [", "not valid TOML"),
    # a weight is a number: "inf" passed --plan and failed every item once its calls were paid for
    (lambda t: t.replace('weights = [2.0, 1.0]', 'weights = ["inf", 1.0]'),
     "questions[0].weight: Input should be a valid number"),
    (lambda t: t.replace('weights = [2.0, 1.0]', 'weights = [true, 1.0]'),
     "questions[0].weight: Input should be a valid number"),
    (lambda t: t.replace('weights = [2.0, 1.0]', 'weights = ["2", 1.0]'),
     "questions[0].weight: Input should be a valid number"),
    (lambda t: t.replace('weights = [2.0, 1.0]', 'weights = [1e7, 1.0]'),
     "questions[0].weight: Input should be less than"),
])
def test_checklist_errors_name_the_file_and_the_key(tmp_path, change, message) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(change(GOOD))
    with pytest.raises(ChecklistError) as e:
        load_checklist(str(path))
    assert str(path) in str(e.value) and message in str(e.value)


def test_unknown_checklists_and_missing_files_are_clear() -> None:
    with pytest.raises(ChecklistError, match="bundled ones are .*summeval"):
        load_checklist("nonesuch")
    with pytest.raises(ChecklistError, match="nope/x.toml: no such file"):
        load_checklist("nope/x.toml")
    with pytest.raises(Exception, match="unknown checklist"):
        _judge(scripted(lambda p, m: ""), checklist="nonesuch")


# -- the judge in the engine -------------------------------------------------------------------------

ITEM = Item(
    id="doc1",
    question="Summarize the news article.",
    context=["The council approved a new park on Monday. Building starts in May."],
    references=["A park was approved."],
    candidates={"good": "The council approved a new park; building starts in May.",
                "mid": "A park was approved.",
                "bad": "the the park park"},
    gold=RatingsGold(ratings={
        "good": {"coherence": 5, "fluency": 5},
        "mid": {"coherence": 3, "fluency": 4},
        "bad": {"coherence": 1, "fluency": 1},
    }),
)

YES = {"good": {"coherence": ["yes", "yes"], "fluency": ["yes"]},
       "mid": {"coherence": ["yes", "no"], "fluency": ["yes"]},
       "bad": {"coherence": ["no", "no"], "fluency": ["no"]}}


def _scripted_answers(purpose, messages) -> str:
    text = _text(messages)
    cid = next(cid for cid, t in ITEM.candidates.items() if t == text)
    dim = "coherence" if "Is the order logical?" in messages[-1]["content"] else "fluency"
    answers = YES[cid][dim]
    if cid == "mid" and dim == "coherence":  # prose, mixed case, and Q2 left out: unanswered
        return "Q1: YES, it is ordered.\nI am not sure about the rest."
    return json.dumps({f"Q{k}": a for k, a in enumerate(answers, 1)})


async def _run(judge, items=(ITEM,)):
    events = [e async for e in Engine(list(items), [judge], seed=0).run()]
    assert not [e for e in events if e.type == "item_failed"]
    return events, next(e for e in events if isinstance(e, Verdict))


async def test_one_call_per_response_and_sub_dimension_and_an_event_per_question(tmp_path) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(GOOD)
    llm = scripted(_scripted_answers)
    judge = _judge(llm, checklist=str(path))
    events, verdict = await _run(judge)
    assert len(llm.requests) == 3 * 2
    assert judge.expected_calls(ITEM) == (6, 6)  # what the new-run screen announces
    first = llm.requests[0].content
    assert block_texts(first)["Source"].startswith("The council approved") and "Q1: " in first
    assert "A park was approved." not in first.split("Summary to evaluate")[0]  # the reference is not an input here
    answered = [e for e in events if isinstance(e, ChecklistAnswered)]
    assert len(answered) == 3 * 3
    by = {(verdict.order[int(e.response.split()[1]) - 1], e.question_id): e.answer for e in answered}
    assert by[("mid", "coherence/Flow/Q2")] is None and by[("mid", "coherence/Flow/Q1")] == "yes"
    dims = verdict.details["dimension_scores"]
    label = {cid: f"Response {i + 1}" for i, cid in enumerate(verdict.order)}
    assert dims[label["good"]] == {"coherence": 1.0, "fluency": 1.0}
    assert dims[label["mid"]] == {"coherence": 1.0, "fluency": 1.0}  # the unanswered Q2 is not a no
    assert dims[label["bad"]] == {"coherence": 0.0, "fluency": 0.0}
    assert verdict.scores == {"good": 1.0, "mid": 1.0, "bad": 0.0}
    assert verdict.details["unanswered"][label["mid"]] == 1
    restored = event_from_dict(json.loads(verdict.model_dump_json()))
    assert sum(a.type == "checklist_answered" for a in restored.artifacts) == 9


async def test_weights_count_in_the_share_of_yes(tmp_path) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(GOOD)
    llm = scripted(lambda p, m: "Q1: no\nQ2: yes" if "Is the order logical?" in m[-1]["content"] else "Q1: yes")
    _, verdict = await _run(_judge(llm, checklist=str(path)))
    scores = verdict.details["dimension_scores"]["Response 1"]
    assert scores["coherence"] == pytest.approx(1 / 3)  # no (weight 2), yes (weight 1)
    assert verdict.scores[verdict.order[0]] == pytest.approx(2 / 4)  # pooled over all answered questions


async def test_a_reply_that_is_not_json_is_read_line_by_line() -> None:
    llm = scripted(lambda p, m: ParseError("no JSON", text="Q1: yes\nQ2: no\nQ3: yes"))
    _, verdict = await _run(_judge(llm, checklist="summeval"))
    assert all(0.0 <= s <= 1.0 for s in verdict.scores.values())


async def test_nothing_answered_fails_the_item_instead_of_scoring_zero() -> None:
    llm = scripted(lambda p, m: "I cannot tell.")
    events = [e async for e in Engine([ITEM], [_judge(llm, checklist="summeval")], seed=0).run()]
    assert not [e for e in events if isinstance(e, Verdict)]
    (failure,) = [e for e in events if e.type == "item_failed"]
    n = len(load_checklist("summeval").question_ids())
    assert failure.error_type == "ParseError"
    assert f"Response 1, Response 2, Response 3: none of the {n} checklist questions" in failure.reason


async def test_per_dimension_correlations_use_each_dimension_own_score(tmp_path) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(GOOD)
    items = [ITEM, ITEM.model_copy(update={"id": "doc2"})]
    llm = scripted(_scripted_answers)
    events = [e async for e in Engine(items, [_judge(llm, checklist=str(path))], seed=0).run()]
    verdicts = {e.item_id: e for e in events if isinstance(e, Verdict)}
    metrics = summarize(items, verdicts, ci=False).metrics
    for key in ("pearson/coherence", "spearman/fluency", "kendall_sample/coherence", "pearson_sample/fluency",
                "pearson", "spearman_sample"):
        assert key in metrics, key
    # fluency: judge 1, 1, 0 vs human 5, 4, 1
    assert metrics["pearson/fluency"] == pytest.approx(np.corrcoef([1, 1, 0], [5, 4, 1])[0, 1])


def test_qa_checklist_needs_references() -> None:
    from qatui.data.model import Dataset

    judge = _judge(scripted(lambda p, m: ""))
    no_ref = Dataset(name="d", path="p", format="jsonl", content_hash="h",
                     items=[ITEM.model_copy(update={"references": []})])
    assert any("reference" in p for p in judge.unmet_needs(no_ref))


# -- agreement -------------------------------------------------------------------------------------


def test_agreement_per_dimension_matches_hand_computation_and_the_package() -> None:
    def run(answers: dict[str, list[str | None]]) -> dict:
        return {("q", f"c{i}", f"{dim}/s/Q1"): (dim, a) for dim, col in answers.items() for i, a in enumerate(col)}

    a = run({"coherence": ["yes", "yes", "no", "no"], "fluency": ["yes", "no", "yes", None]})
    b = run({"coherence": ["yes", "no", "no", "no"], "fluency": ["yes", "no", "yes", "yes"]})
    out = checklist_agreement([a, b])
    # coherence by hand: 4 units x 2 raters; agreement P = (1 + 0 + 1 + 1) / 4 = 0.75;
    # shares yes 3/8, no 5/8, Pe = 9/64 + 25/64 = 34/64; kappa = (0.75 - 34/64) / (1 - 34/64)
    assert out["coherence"]["kappa"] == pytest.approx((0.75 - 34 / 64) / (1 - 34 / 64))
    table = np.array([[1, 1, 0, 0], [1, 0, 0, 0]], dtype=float)
    assert out["coherence"]["alpha"] == pytest.approx(krippendorff.alpha(table, level_of_measurement="nominal"))
    # fluency: the unanswered unit drops from kappa only; alpha needs 2 raters per unit too
    assert out["fluency"]["n_complete"] == 3 and out["fluency"]["n_units"] == 3
    assert out["fluency"]["kappa"] == pytest.approx(1.0)
    assert out["all"]["n_complete"] == 7
    assert out["all"]["kappa"] == pytest.approx(fleiss_kappa([[2, 0], [1, 1], [0, 2], [0, 2], [2, 0], [0, 2], [2, 0]]))


def test_agreement_is_undefined_when_every_answer_is_the_same() -> None:
    a = {("q", "c", "d/s/Q1"): ("d", "yes"), ("q", "c2", "d/s/Q1"): ("d", "yes")}
    out = checklist_agreement([a, dict(a)])
    assert out["d"]["alpha"] is None and out["d"]["kappa"] is None


async def test_sessions_compare_reports_agreement_between_two_backbones(tmp_path) -> None:
    from qatui.data.loaders import load_dataset
    from qatui.engine.jobs import finish_run, start_run
    from qatui.report.compare import compare_sessions
    from qatui.store.session import SessionStore

    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({
        "src": ITEM.context[0], "ref_summs": ITEM.references,
        "sys_summs": {cid: {"sys_summ": text, "scores": dict(ITEM.gold.ratings[cid])}
                      for cid, text in ITEM.candidates.items()},
    }) + "\n")
    dataset = load_dataset(str(data))
    store = SessionStore(tmp_path / "sessions")
    config = Config(judges={"checkeval": {"checklist": "summeval"}})
    sessions = []
    for model, answer in (("one", lambda t: "yes"), ("two", lambda t: "no" if "the the" in t else "yes")):
        llm = scripted(lambda p, m, answer=answer: "\n".join(
            f"Q{k}: {answer(_text(m))}" for k in range(1, len(_questions(m)) + 1)), model=model)
        resources = Resources(config, backbone_name=model, llm=llm)
        job = start_run(store, dataset, ["checkeval"], config, resources=resources)
        async for _ in job.engine.run():
            pass
        summary = finish_run(job, "completed")
        assert summary["checkeval"]["n_done"] == 1
        sessions.append(job.session)
    data_out = compare_sessions([store.open(s.id) for s in sessions])
    (group,) = data_out["checklist_agreement"]
    assert group["checklist"] == "summeval" and group["backbones"] == ["one", "two"]
    per_dim = group["per_dimension"]
    assert set(per_dim) == {"coherence", "consistency", "fluency", "relevance", "all"}
    n_questions = len(load_checklist("summeval").question_ids())
    assert per_dim["all"]["n_complete"] == 3 * n_questions  # 3 candidates x every question
    # one says yes everywhere; two says no for the bad summary's questions only
    table = np.array([[1.0] * 3 * n_questions, [1.0] * 2 * n_questions + [0.0] * n_questions])
    assert per_dim["all"]["alpha"] == pytest.approx(krippendorff.alpha(table, level_of_measurement="nominal"))
    counts = [[2, 0]] * 2 * n_questions + [[1, 1]] * n_questions
    assert per_dim["all"]["kappa"] == pytest.approx(fleiss_kappa(counts))
    from io import StringIO

    from rich.console import Console

    from qatui.report import print_comparison

    out = StringIO()
    print_comparison(Console(file=out, width=200), data_out)
    assert "checklist agreement (summeval)" in out.getvalue() and "Krippendorff alpha" in out.getvalue()

    from qatui.report import item_detail, print_item_detail

    grid = StringIO()
    print_item_detail(Console(file=grid, width=250), item_detail(store.open(sessions[1].id), "doc1"))
    shown = grid.getvalue()
    assert "question x response" in shown and "share of yes per dimension" in shown
    first_question = load_checklist("summeval").question_ids()[0][3].text
    assert first_question in shown
    rows = [line for line in shown.splitlines() if "?" in line and ("yes" in line or "no" in line)]
    assert first_question in rows[0]  # checklist order, whatever the answer order
    lines = shown.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("coherence ›"))
    assert header == lines.index(rows[0]) - 1  # grouped under its dimension › sub-dimension
    row = next(line for line in shown.splitlines() if first_question in line)
    assert row.count("yes") == 2 and row.count("no") == 1  # the bad summary gets no from backbone two

    from fakes import settle

    from qatui.tui.app import QatuiApp
    from qatui.tui.screens.compare import CompareScreen

    app = QatuiApp(config, store)
    async with app.run_test(size=(120, 40)) as pilot:
        app.compare_sessions([s.id for s in sessions])
        await settle(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.comparison is not None,
                     "the comparison")
        table = app.screen.query_one("#checklists")
        assert table.display and table.row_count == len(per_dim)  # one row per dimension, and "all"
        row = table.get_row("summeval/AB/all")
        assert (str(row[0]), str(row[1])) == ("summeval", "AB")
        assert str(row[3]) == f"{per_dim['all']['alpha']:+.2f}" and str(row[4]) == f"{per_dim['all']['kappa']:+.2f}"
        assert str(row[5]) == str(per_dim["all"]["n_units"])


# -- generation ------------------------------------------------------------------------------------


def test_generated_questions_are_read_one_per_line() -> None:
    text = "Here you go:\n1. Are names spelled right?\n- Is every date correct?\n* Is every date correct?\nshort?\nNo question here"
    assert question_lines(text, 5, {"Are names spelled right?"}) == ["Is every date correct?"]


def test_filter_verdicts_are_parsed_strictly() -> None:
    text = "Q1: KEEP\nQ2: remove redundant\nq3: REMOVE - misaligned\nQ4: perhaps\nQ5: remove\nQ6: keep\nQ6: remove off-dimension"
    assert parse_verdicts(text, 6) == [(False, ""), (True, "redundant"), (True, "misaligned"), None,
                                       (True, "removed (no reason given)"), None]


def _generator(purpose, messages) -> str:
    user = messages[-1]["content"]
    if purpose == "diversify":
        return "1. Are the transitions between sentences smooth?\n2. Is the order logical?\nnot a question"
    if purpose == "elaborate":
        if "Is the grammar correct?" in user:
            return "- Do subjects agree with verbs?\n- Are tenses used consistently?\n- Are articles used correctly?"
        return "- Is the first sentence a good opening?\n- Does the summary contain errors?\n- Is the order logical?"
    assert purpose == "filter"
    reviewed = re.findall(r"^Q(\d+): (.*)$", user, re.MULTILINE)  # seeds and new questions, one dimension
    lines = []
    for k, question in reviewed:
        if "errors" in question:
            lines.append(f"Q{k}: REMOVE misaligned")
        elif "transitions" in question:
            lines.append(f"Q{k}: REMOVE redundant")
        elif "tenses" in question:
            continue  # no verdict: kept, and said so
        else:
            lines.append(f"Q{k}: KEEP")
    return "\n".join(lines)


async def test_generation_records_origins_and_removal_reasons(tmp_path) -> None:
    seed = tmp_path / "seed.toml"
    seed.write_text(GOOD)
    out = tmp_path / "out.toml"
    llm = scripted(_generator)
    report = await generate_checklist(str(seed), str(out), llm, diversify=2, elaborate=3)
    assert report.startswith(f"wrote {out}")
    # per sub-dimension: one diversify call, one elaborate call per seed; one filter call per dimension
    assert llm.purposes().count("elaborate") == 3
    assert llm.purposes().count("filter") == 2
    checklist = load_checklist(str(out))
    flow = checklist.dimensions[0].sub_dimensions[0]
    by_text: dict = {}
    for q in flow.questions:
        by_text.setdefault(q.text, q)
    assert sum(q.text == "Is the order logical?" and q.removed and q.origin == "elaborated" for q in flow.questions) == 2
    assert by_text["Is the order logical?"].origin == "seed"  # the diversified repeat of a seed was dropped
    assert by_text["Are the transitions between sentences smooth?"].origin == "diversified"
    assert by_text["Are the transitions between sentences smooth?"].removed
    assert by_text["Are the transitions between sentences smooth?"].reason == "redundant"
    errors = by_text["Does the summary contain errors?"]
    assert errors.origin == "elaborated" and errors.parent == "Is the order logical?"
    assert errors.removed and errors.reason == "misaligned"
    assert by_text["Is the first sentence a good opening?"].origin == "elaborated"
    assert not by_text["Is the first sentence a good opening?"].removed
    grammar = {q.text: q for q in checklist.dimensions[1].sub_dimensions[0].questions}
    assert grammar["Are tenses used consistently?"].reason == NO_VERDICT
    assert not grammar["Are tenses used consistently?"].removed
    weights = [q.weight for q in flow.questions if q.origin == "seed"]
    assert weights == [2.0, 1.0]  # seed weights survive
    asked = [q.text for _, _, _, q in checklist.question_ids()]
    assert "Does the summary contain errors?" not in asked and "Are tenses used consistently?" in asked
    assert "removed = true" in out.read_text()


async def test_generation_refuses_a_bad_elaboration_range(tmp_path) -> None:
    seed = tmp_path / "seed.toml"
    seed.write_text(GOOD)
    with pytest.raises(ChecklistError, match="between 3 and 10"):
        await generate_checklist(str(seed), str(tmp_path / "o.toml"), scripted(_generator), elaborate=12)


def test_cli_checklist_flag_sets_the_judge_option(tmp_path, monkeypatch) -> None:
    from qatui import cli

    seen = {}

    def fake_start_run(store, dataset, judges, config, **kw):
        seen["options"] = config.judge_options("checkeval")
        raise SystemExit(0)

    monkeypatch.setattr("qatui.engine.jobs.start_run", fake_start_run)
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"src": "x", "ref_summs": ["y"], "sys_summs": {"a": {"sys_summ": "z",
                                "scores": {"coherence": 1}}}}) + "\n")
    with pytest.raises(SystemExit):
        cli.main(["run", str(data), "--judge", "checkeval", "--checklist", "summeval",
                  "--sessions-dir", str(tmp_path / "s")])
    assert seen["options"] == {"checklist": "summeval"}


def test_a_chinese_item_gets_checkevals_chinese_prompt_and_a_method_without_one_gets_english(tmp_path,
                                                                                             monkeypatch) -> None:
    from qatui.judges import prompts

    assert prompts.load_prompts("checkeval", "zh") != prompts.load_prompts("checkeval", "en")  # its own prompts
    assert prompts.load_prompts("checkeval", "fr") == prompts.load_prompts("checkeval", "en")  # no French prompts
    # a method with an English prompt file only: a Chinese item gets it, never "no prompt file x.zh.toml"
    (tmp_path / "judges" / "prompts").mkdir(parents=True)
    (tmp_path / "judges" / "prompts" / "onlyen.en.toml").write_text('[ask]\nsystem = "Judge."\nuser = "{q}"\n')
    monkeypatch.setattr(prompts, "files", lambda package: tmp_path / "judges")
    prompts.load_prompts.cache_clear()
    try:
        assert prompts.load_prompts("onlyen", "zh") == {"ask": {"system": "Judge.", "user": "{q}"}}
    finally:
        prompts.load_prompts.cache_clear()