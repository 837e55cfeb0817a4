"""`qatui checklist generate`'s filter as the paper has it: one call per dimension over seeds and new questions."""

from __future__ import annotations

import re

import pytest
from fakes import ScriptedLLM

from qatui.config import Config
from qatui.events import LLMCallFinished, emit
from qatui.judges.checkeval.checklist import load_checklist
from qatui.judges.checkeval.generate import DUPLICATE, EMPTIED, REASONS, generate_checklist, parse_verdicts
from qatui.judges.registry import make_judge
from qatui.judges.resources import Resources

SEED = """
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
[[dimensions.sub_dimensions]]
name = "Focus"
questions = ["Does it stay on topic?"]
[[dimensions]]
name = "fluency"
definition = "Well written."
[[dimensions.sub_dimensions]]
name = "Grammar"
questions = ["Is the grammar correct?"]
"""

DIVERSIFIED = {
    "Flow": ["Is it dramatically perfect in every possible way?"],
    "Focus": ["Do sentences connect?", "Do the sentences follow each other smoothly?"],  # a Flow seed, word for word
    "Grammar": ["Is the comma before 'and' placed right?", "Do subjects agree with their verbs?"],
}
VERDICTS = {  # by question text; anything else is kept
    "Is the order logical?": "REMOVE misaligned",  # a seed: reviewed like the others
    "Is it dramatically perfect in every possible way?": "REMOVE exaggerated",
    "Do the sentences follow each other smoothly?": "REMOVE redundant",  # with Flow's seed, across sub-dimensions
    "Is the comma before 'and' placed right?": "REMOVE minor",
}


class Generator(ScriptedLLM):
    """Diversifies from `DIVERSIFIED`, elaborates nothing, filters by `verdict(text)`."""

    def __init__(self, verdict=lambda text: VERDICTS.get(text, "KEEP")) -> None:
        super().__init__(model="scripted/generator", parse_text=False)
        self.verdict = verdict

    def answer(self, call):
        purpose, user = call.purpose, call.content
        if purpose == "diversify":
            sub = re.search(r"^Sub-dimension: (.*)$", user, re.MULTILINE)[1]
            reply = "\n".join(f"- {q}" for q in DIVERSIFIED[sub])
        elif purpose == "elaborate":
            reply = "Nothing narrower."
        else:
            reply = "\n".join(f"Q{k}: {self.verdict(q)}" for k, q in re.findall(r"^Q(\d+): (.*)$", user, re.MULTILINE))
        return reply

    def filter_prompts(self) -> list[list[dict]]:
        return [call.messages for call in self.requests if call.purpose == "filter"]


async def _generate(tmp_path, llm) -> tuple[str, dict]:
    seed = tmp_path / "seed.toml"
    seed.write_text(SEED)
    out = tmp_path / "out.toml"
    report = await generate_checklist(str(seed), str(out), llm, diversify=2, elaborate=3)
    checklist = load_checklist(str(out))
    questions = {q.text: q for d in checklist.dimensions for s in d.sub_dimensions for q in s.questions}
    return report, {"checklist": checklist, "questions": questions, "path": out}


async def test_one_filter_call_per_dimension_reviews_seeds_and_new_questions_together(tmp_path) -> None:
    llm = Generator()
    await _generate(tmp_path, llm)
    coherence, fluency = llm.filter_prompts()  # one per dimension, not per sub-dimension
    user = coherence[-1]["content"]
    numbered = re.findall(r"^Q(\d+): (.*)$", user, re.MULTILINE)
    assert [q for _, q in numbered] == ["Is the order logical?", "Do sentences connect?",
                                        "Is it dramatically perfect in every possible way?",
                                        "Does it stay on topic?", "Do the sentences follow each other smoothly?"]
    assert [int(k) for k, _ in numbered] == [1, 2, 3, 4, 5]  # one sequence across the sub-dimensions
    assert re.findall(r"^\[(.*)\]$", user, re.MULTILINE) == ["Flow", "Focus"]
    assert "- fluency: Well written." in user and "Dimension: coherence. Well organised." in user
    system = coherence[0]["content"]
    for reason in REASONS:  # every criterion of the paper is asked for
        assert f"REMOVE {reason}" in system
    assert "EARLIER question" in system and "any sub-dimension" in system
    assert "Is the grammar correct?" in fluency[-1]["content"]


async def test_verdicts_apply_to_seeds_and_across_sub_dimensions(tmp_path) -> None:
    report, out = await _generate(tmp_path, Generator())
    questions = out["questions"]
    seed = questions["Is the order logical?"]
    assert seed.origin == "seed" and seed.removed and seed.reason == "misaligned"
    redundant = questions["Do the sentences follow each other smoothly?"]
    assert redundant.origin == "diversified" and redundant.removed and redundant.reason == "redundant"
    assert questions["Is it dramatically perfect in every possible way?"].reason == "exaggerated"
    assert questions["Is the comma before 'and' placed right?"].reason == "minor"
    assert not questions["Do subjects agree with their verbs?"].removed
    focus = out["checklist"].dimensions[0].sub_dimensions[1]
    repeat = [q for q in focus.questions if q.text == "Do sentences connect?"]
    assert len(repeat) == 1 and repeat[0].removed and repeat[0].reason == DUPLICATE  # never shown to the filter
    asked = [q.text for _, _, _, q in out["checklist"].question_ids()]
    assert asked == ["Do sentences connect?", "Does it stay on topic?", "Is the grammar correct?",
                     "Do subjects agree with their verbs?"]
    assert "removed 5 (1 seed)" in report and "kept 4" in report


async def test_the_output_is_an_augmented_list_the_judge_reports_as_such(tmp_path) -> None:
    _, out = await _generate(tmp_path, Generator())
    assert 'stage = "augmented"' in out["path"].read_text()
    assert out["checklist"].stage == "augmented"
    judge = make_judge("checkeval", {"checklist": str(out["path"])}, Resources(Config()))
    assert judge.checklist.stage == "augmented"


async def test_a_dimension_the_filter_empties_keeps_its_seeds(tmp_path) -> None:
    report, out = await _generate(tmp_path, Generator(lambda text: "REMOVE off-dimension"))
    for dimension in out["checklist"].dimensions:
        kept = [q for s in dimension.sub_dimensions for q in s.active]
        assert kept and {q.origin for q in kept} == {"seed"} and {q.reason for q in kept} == {EMPTIED}
    assert out["questions"]["Do subjects agree with their verbs?"].removed
    assert "seeds kept back" in report


@pytest.mark.parametrize(("text", "expected"), [
    ("Q1: REMOVE exaggerated\nQ2: remove minor\nQ3: KEEP", [(True, "exaggerated"), (True, "minor"), (False, "")]),
    ("Q1: REMOVE off-dimension\nQ2: REMOVE vague", [(True, "off-dimension"), (True, "removed (no reason given)")]),
])
def test_every_reason_of_the_paper_is_read(text, expected) -> None:
    assert parse_verdicts(text, len(expected)) == expected
