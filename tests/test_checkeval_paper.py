"""CheckEval as the paper has it: call granularity, failing silent responses, seed lists, equal weights."""

from __future__ import annotations

import json
import re

import pytest
from fakes import ScriptedLLM

from qatui.config import Config
from qatui.data.model import Item
from qatui.engine.runner import Engine
from qatui.errors import JudgeError
from qatui.events import ChecklistAnswered, LLMCallFinished, Verdict, emit
from qatui.judges.checkeval.checklist import load_checklist, parse_checklist
from qatui.judges.registry import make_judge
from qatui.judges.resources import Resources
from qatui.llm.fence import block_texts

CHECKLIST = """
name = "two-level"
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
[[dimensions.sub_dimensions]]
name = "Focus"
questions = ["Does it stay on topic?"]
[[dimensions]]
name = "fluency"
definition = "Well written."
[[dimensions.sub_dimensions]]
name = "Grammar"
questions = ["Is the grammar correct?"]
[[dimensions.sub_dimensions]]
name = "Spelling"
questions = ["Are words spelled right?", "Are names capitalised?"]
"""

ITEM = Item(id="doc", question="Summarize.", context=["The council approved a park."],
            candidates={"good": "The council approved a park.", "bad": "park park the"})

# the answer a response gets to each question, by question text: the same whatever the grouping
ANSWERS = {
    "good": {"Is the order logical?": "yes", "Do sentences connect?": "yes", "Does it stay on topic?": "yes",
             "Is the grammar correct?": "yes", "Are words spelled right?": "yes", "Are names capitalised?": "no"},
    "bad": {"Is the order logical?": "no", "Do sentences connect?": "no", "Does it stay on topic?": "yes",
            "Is the grammar correct?": "no", "Are words spelled right?": "yes", "Are names capitalised?": "no"},
}


class Backbone(ScriptedLLM):
    """Answers each checklist call from the question texts it shows, as JSON keyed Q1..Qn; records the calls."""

    def __init__(self, silent: set[str] = frozenset()) -> None:
        super().__init__(model="scripted/checkeval", parse_text=False)
        self.silent = silent
        self.calls: list[dict] = []

    def answer(self, call):
        user = call.content
        text = list(block_texts(user).values())[-1]  # the text under evaluation: the last fenced block
        cid = next(c for c, t in ITEM.candidates.items() if t == text)
        numbered = re.findall(r"^Q(\d+): (.*)$", user, re.MULTILINE)
        self.calls.append({"cid": cid, "questions": [q for _, q in numbered], "user": user,
                           "groups": re.findall(r"^\[(.*)\]$", user, re.MULTILINE), "max_tokens": call.max_tokens})
        return "No idea." if cid in self.silent else json.dumps({f"Q{k}": ANSWERS[cid][q] for k, q in numbered})


def _judge(llm, path, **options):
    return make_judge("checkeval", {"checklist": str(path), **options}, Resources(Config(), llm=llm))


@pytest.fixture
def checklist_path(tmp_path):
    path = tmp_path / "two-level.toml"
    path.write_text(CHECKLIST)
    return path


async def _events(judge, items=(ITEM,)):
    return [e async for e in Engine(list(items), [judge], seed=0, concurrency=1).run()]


# -- granularity -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("granularity", "per_response", "groups"), [
    (None, 4, [["Flow"], ["Focus"], ["Grammar"], ["Spelling"]]),  # the paper's default: one call per sub-dimension
    ("sub-dimension", 4, [["Flow"], ["Focus"], ["Grammar"], ["Spelling"]]),
    ("dimension", 2, [["Flow", "Focus"], ["Grammar", "Spelling"]]),
])
async def test_calls_follow_the_granularity_and_expected_calls_match(checklist_path, granularity, per_response,
                                                                     groups) -> None:
    llm = Backbone()
    options = {"granularity": granularity} if granularity else {}
    judge = _judge(llm, checklist_path, **options)
    events = await _events(judge)
    assert len(llm.calls) == 2 * per_response == judge.expected_calls(ITEM)[0] == judge.expected_calls(ITEM)[1]
    good_calls = [c for c in llm.calls if c["cid"] == "good"]
    assert sorted(c["groups"] for c in good_calls) == sorted(groups)  # questions under their sub-dimension
    for call in good_calls:
        assert call["max_tokens"] == 24 + 16 * len(call["questions"])
        dimension = "coherence" if call["groups"][0] in ("Flow", "Focus") else "fluency"
        assert f"Quality aspect: {dimension}." in call["user"]
    verdict = next(e for e in events if isinstance(e, Verdict))
    assert verdict.details["granularity"] == (granularity or "sub-dimension")


async def test_both_granularities_map_every_answer_to_its_question(checklist_path) -> None:
    results = {}
    for granularity in ("sub-dimension", "dimension"):
        events = await _events(_judge(Backbone(), checklist_path, granularity=granularity))
        verdict = next(e for e in events if isinstance(e, Verdict))
        cid = {f"Response {i + 1}": c for i, c in enumerate(verdict.order)}
        answers = {(cid[e.response], e.question_id): (e.question, e.answer)
                   for e in events if isinstance(e, ChecklistAnswered)}
        assert len(answers) == 2 * 6
        for (c, _), (question, answer) in answers.items():
            assert ANSWERS[c][question] == answer  # Q numbering across a dimension is mapped back right
        assert answers[("good", "fluency/Spelling/Q2")] == ("Are names capitalised?", "no")
        assert answers[("bad", "coherence/Focus/Q1")] == ("Does it stay on topic?", "yes")
        results[granularity] = (verdict.scores, verdict.details["dimension_scores"])
    assert results["sub-dimension"][0] == results["dimension"][0] == {"good": 5 / 6, "bad": 2 / 6}
    assert results["sub-dimension"][1] == results["dimension"][1]


def test_granularity_is_validated(checklist_path) -> None:
    with pytest.raises(JudgeError, match="granularity"):
        make_judge("checkeval", {"checklist": str(checklist_path), "granularity": "question"})


# -- responses without any answer --------------------------------------------------------------------


@pytest.mark.parametrize("granularity", ["sub-dimension", "dimension"])
async def test_one_silent_response_fails_the_item_and_is_named(checklist_path, granularity) -> None:
    events = await _events(_judge(Backbone(silent={"bad"}), checklist_path, granularity=granularity))
    assert not [e for e in events if isinstance(e, Verdict)]  # never scored as 0.0
    (failure,) = [e for e in events if e.type == "item_failed"]
    label = next(e.response for e in events if isinstance(e, ChecklistAnswered) and e.answer is None)
    assert failure.reason.startswith(f"{label}: none of the 6 checklist questions got a readable yes or no")
    assert sum(isinstance(e, ChecklistAnswered) for e in events) == 12  # every answer was still shown


async def test_a_dimension_without_answers_is_none_but_the_item_is_scored(checklist_path) -> None:
    class FluencySilent(Backbone):
        def answer(self, call):
            reply = super().answer(call)
            return "Hard to say." if "Quality aspect: fluency" in call.content else reply

    events = await _events(_judge(FluencySilent(), checklist_path, granularity="dimension"))
    verdict = next(e for e in events if isinstance(e, Verdict))
    dims = verdict.details["dimension_scores"]
    assert all(per["fluency"] is None for per in dims.values())
    assert verdict.scores == {"good": 1.0, "bad": 1 / 3}  # coherence only: the unanswered are not no


# -- seed lists and weights --------------------------------------------------------------------------


def test_stage_is_read_or_inferred_from_the_origins() -> None:
    assert parse_checklist(CHECKLIST, "x").stage == "seed"
    assert parse_checklist('stage = "augmented"\n' + CHECKLIST, "x").stage == "augmented"
    augmented = CHECKLIST.replace('questions = ["Is the grammar correct?"]',
                                  '[[dimensions.sub_dimensions.questions]]\ntext = "Is the grammar correct?"\n'
                                  'origin = "elaborated"\nparent = "Is it fluent?"')
    assert parse_checklist(augmented, "x").stage == "augmented"
    for name in ("qa", "summeval", "topical_chat"):
        assert load_checklist(name).stage == "seed"


async def test_the_bundled_qa_list_counts_every_question_the_same(checklist_path) -> None:
    def all_but_first(call):
        """No to the first question of each call, yes to the rest."""
        n = len(re.findall(r"^Q\d+: ", call.content, re.MULTILINE))
        return json.dumps({f"Q{k}": "no" if k == 1 else "yes" for k in range(1, n + 1)})

    item = Item(id="qa1", question="Which gas do plants take in?", references=["Carbon dioxide."],
                candidates={"a": "Carbon dioxide."})
    resources = Resources(Config(), llm=ScriptedLLM(all_but_first, model="scripted/qa", parse_text=False))
    judge = make_judge("checkeval", {}, resources)  # the default: the bundled qa seed list
    verdict = next(e for e in await _events(judge, [item]) if isinstance(e, Verdict))
    qa = load_checklist("qa")
    calls = sum(1 for d in qa.dimensions for s in d.sub_dimensions if s.active)
    questions = len(qa.question_ids())
    assert verdict.scores["a"] == pytest.approx((questions - calls) / questions)  # plain share of yes
    assert verdict.details["stage"] == "seed" and verdict.details["checklist"] == "qa"


def test_qatui_judges_names_the_bundled_lists_as_seed_lists(capsys) -> None:
    from qatui.cli import main

    assert main(["judges"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "seed lists" in out and "w/o augmentation" in out
    assert "calf" in out  # the pairwise judge names its protocols
