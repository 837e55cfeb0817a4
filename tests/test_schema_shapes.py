"""The schema shapes the judges advertise have one home (`qatui.judges.schemas`), and advertise what they did."""

from __future__ import annotations

import re
from pathlib import Path

from qatui.judges.baselines.linkage import WrittenReferences
from qatui.judges.checkeval.checklist import answers_schema
from qatui.judges.checkeval.generate import questions_schema, verdicts_schema
from qatui.judges.minos.judge import Classification, KeyPoints
from qatui.judges.pairwise.ab import ABVerdict
from qatui.judges.pairwise.judge import PairChoice
from qatui.llm.parse import json_schema_of

ROOT = Path(__file__).resolve().parent.parent
HOME = ROOT / "qatui" / "judges" / "schemas.py"
# A string or string-list shape written out in place: what qatui.judges.schemas is for.
BY_HAND = re.compile(r"""WithJsonSchema\(\{\s*["']type["']: ["']string["'], ["'](maxLength|enum)["']"""
                     r"""|["']items["']: \{["']type["']: ["']string["'], ["'](maxLength|enum)["']|def (bounded_text|capped_strings)\(""")


def _field(model, name: str) -> dict:
    """A field's advertised schema without the title pydantic adds."""
    return {k: v for k, v in json_schema_of(model)["properties"][name].items() if k != "title"}


def test_the_judges_advertise_the_shapes_they_always_did() -> None:
    assert _field(ABVerdict, "explanation") == {"type": "string", "maxLength": 400}
    assert _field(ABVerdict, "verdict") == {"type": "string", "enum": ["[[A]]", "[[B]]"]}
    assert _field(PairChoice, "choice") == {"type": "string", "enum": ["A", "B", "tie"]}
    assert _field(Classification, "reason") == {"type": "string", "maxLength": 300}
    assert _field(KeyPoints, "key_points") == {
        "type": "array", "items": {"type": "string", "maxLength": 300}, "maxItems": 16}
    assert _field(WrittenReferences, "answers") == {
        "type": "array", "minItems": 3, "maxItems": 3, "items": {"type": "string", "minLength": 1, "maxLength": 800}}
    assert json_schema_of(answers_schema(2)) == {
        "type": "object", "additionalProperties": False, "required": ["Q1", "Q2"],
        "properties": {"Q1": {"type": "string", "enum": ["yes", "no"]}, "Q2": {"type": "string", "enum": ["yes", "no"]}}}
    keep = ["KEEP", "REMOVE misaligned", "REMOVE off-dimension", "REMOVE redundant", "REMOVE exaggerated", "REMOVE minor"]
    assert verdicts_schema(1) == {"type": "object", "required": ["Q1"], "additionalProperties": False,
                                  "properties": {"Q1": {"type": "string", "enum": keep}}}
    assert questions_schema(4) == {"type": "object", "required": ["questions"], "additionalProperties": False,
                                   "properties": {"questions": {"type": "array", "minItems": 1, "maxItems": 4, "items": {
                                       "type": "string", "minLength": 10, "maxLength": 200}}}}


def test_no_judge_writes_a_capped_string_shape_of_its_own() -> None:
    offenders = [f"{path.relative_to(ROOT)}:{n}" for path in sorted((ROOT / "qatui" / "judges").rglob("*.py"))
                 if path != HOME for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if BY_HAND.search(line)]
    assert not offenders, f"a schema shape written again (use qatui.judges.schemas): {offenders}"
