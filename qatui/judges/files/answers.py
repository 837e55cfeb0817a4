"""What a judge file's backbone answers with: the JSON schema derived from its kind, and the strict readers.

The schema is a pydantic model named by `[answer] schema` (an explanation field first when
`[answer] explanation` asks for one, the verdict field last), so a file can send exactly the
schema a built-in sends (`qatui judges export`). Advertised shapes come from `qatui.judges.schemas`
and `qatui.judges.brackets`: a score as `[[8.12]]` under a pattern of its scale, a choice or a
label as an enum, a checklist as `{"Q1": "yes" | "no", ...}`, a ranking as a list of the labels.
Each reader raises `brackets.Unreadable` for an answer it cannot use, so `brackets.ask_bracketed`
re-asks once, exactly as for the built-in baselines.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, WithJsonSchema, create_model

from qatui.judges.brackets import bracket_enum
from qatui.judges.files.readers import answer_format, choices
from qatui.judges.files.spec import JudgeSpec, ScaleSpec, answer_keys, verdict_key
from qatui.judges.schemas import bounded_text, exactly_n_of, numbered_answers, one_of

DEFAULT_SCHEMA = {"score": "Score", "pair": "PairVerdict", "label": "LabelVerdict", "checklist": "Checklist",
                  "listwise": "Ranking"}
"""The schema's name when the file gives none."""
__all__ = ["answer_format", "answer_keys", "answer_schema", "verdict_key"]


def scale_pattern(scale: ScaleSpec) -> str:
    """The JSON-schema pattern of `[[min]]`..`[[max]]` with exactly `digits` decimals (0-10 with 2: pointwise's)."""
    def whole(low: int, high: int) -> str:
        if high < 10:
            return f"[{low}-{high}]" if low < high else str(low)
        return "(" + "|".join(str(v) for v in range(low, high + 1)) + ")"

    if not scale.digits:
        return rf"^\[\[{whole(scale.min, scale.max)}\]\]$"
    decimals = "[0-9]" * scale.digits
    return rf"^\[\[({scale.max}[.]{'0' * scale.digits}|{whole(scale.min, scale.max - 1)}[.]{decimals})\]\]$"


def _verdict_shape(spec: JudgeSpec) -> WithJsonSchema:
    if spec.kind == "score":
        assert spec.scale is not None
        return WithJsonSchema({"type": "string", "pattern": scale_pattern(spec.scale)})
    values = choices(spec) if spec.kind == "pair" else tuple(spec.labels.values if spec.labels else ())
    return one_of(bracket_enum(values) if answer_format(spec) == "bracketed" else values)


def _model(title: str, fields: tuple[tuple[str, Any], ...]) -> type[BaseModel]:
    return create_model(title, **{key: (annotation, ...) for key, annotation in fields})


def answer_schema(spec: JudgeSpec, labels: tuple[str, ...] = ()) -> type[BaseModel] | dict[str, Any]:
    """The schema sent with each call (`labels`: the responses shown, for a ranking); the judge keeps what it built."""
    title = spec.answer.schema_name or DEFAULT_SCHEMA[spec.kind]
    if spec.kind == "checklist":
        assert spec.checklist is not None
        return {"title": title, **numbered_answers(len(spec.checklist.questions), ("yes", "no"))}
    if spec.kind == "listwise":
        return _model(title, (("rank", Annotated[list[str], exactly_n_of(labels, len(labels))]),))
    fields: list[tuple[str, Any]] = []
    if spec.answer.explanation:
        fields.append((spec.answer.explanation_key, Annotated[str, bounded_text(spec.answer.explanation)]))
    fields.append((verdict_key(spec), Annotated[str, _verdict_shape(spec)]))
    return _model(title, tuple(fields))
