"""CheckEval checklists as data: loading, answer parsing and scoring.

A checklist file (TOML) holds a task description, the name of the text under evaluation
(`target`), which parts of an item to show (`[inputs]`: question / context / reference,
each with its heading), its `stage` and dimensions, each with a definition and
sub-dimensions, each with yes/no questions where "yes" means better quality. A question is
a plain string or a table `{text, weight, origin, parent, removed, reason}` (the form
`qatui checklist generate` writes). Removed questions are kept in the file for review and
skipped when judging.

`stage` says what the list is: `seed` (human-written seed questions only: the paper's
"w/o augmentation" setting; every bundled list) or `augmented` (seeds diversified,
elaborated and filtered by `qatui checklist generate`: the paper's full CheckEval). A file
without it is `augmented` when any question has another origin than seed, else `seed`.

Every question weighs the same, as in the paper (its Appendix C.2 tried learned weights and
found no reliable gain). As a qatui extension a file may weigh questions: `weight = 2` in a
question's table, or `weights = [...]` beside a list of strings, one number per question;
the share of yes is then weighted.

Answers are parsed strictly per question: the keys of a JSON object `{"Q1": "yes", ...}`
(the form the judge asks for), else lines `Qk: yes` / `Qk: no` (case-insensitive, anything
after the word ignored). A question with no such line, or with two lines that
disagree, is unanswered: it is excluded from the score, never counted as "no".
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from qatui.safe_read import Refused, loads_toml, read_text
from qatui.errors import QatuiError, first_problem
from qatui.judges.schemas import numbered_answers
from qatui.llm.fence import without_fenced

Answer = Literal["yes", "no"]
Origin = Literal["seed", "diversified", "elaborated"]
Stage = Literal["seed", "augmented"]
INPUT_FIELDS = ("question", "context", "reference")


MAX_WEIGHT = 1_000_000
"""The largest weight a question may have (relative weights; past this they say nothing more)."""


class ChecklistError(QatuiError):
    """A checklist file is missing or malformed (the message names the file and the key)."""


class _Strict(BaseModel):
    """A checklist table: unknown keys are errors naming the key."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Question(_Strict):
    """One yes/no question; `removed` ones (with the filter's `reason`) are kept only for review."""

    text: str = Field(min_length=1)
    weight: float = Field(1.0, gt=0, le=MAX_WEIGHT, strict=True, allow_inf_nan=False)
    """A number, never a string ("inf" passed every check and failed each item once paid for) nor true."""
    origin: Origin = "seed"
    parent: str | None = None
    removed: bool = False
    reason: str = ""


class SubDimension(_Strict):
    """A named group of yes/no questions ("yes" is better), with optional weights."""

    name: str = Field(min_length=1)
    questions: list[Question] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _plain_questions(cls, data: object) -> object:
        """`questions = ["...", ...]` with optional `weights = [...]` of the same length."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        weights = data.pop("weights", None)
        questions = data.get("questions")
        if isinstance(questions, list):
            if weights is not None and (not isinstance(weights, list) or len(weights) != len(questions)):
                raise ValueError(f"weights must be a list with one number per question ({len(questions)})")
            data["questions"] = [
                ({"text": q} | ({"weight": weights[i]} if weights is not None else {})) if isinstance(q, str) else q
                for i, q in enumerate(questions)
            ]
        return data

    @property
    def active(self) -> list[Question]:
        """The questions asked (the filter's removals left out)."""
        return [q for q in self.questions if not q.removed]


class Dimension(_Strict):
    """A quality dimension: its definition and its sub-dimensions."""

    name: str = Field(min_length=1)
    definition: str = Field(min_length=1)
    sub_dimensions: list[SubDimension] = Field(min_length=1)


class Checklist(_Strict):
    """A whole checklist file."""

    name: str = Field(min_length=1)
    task: str = Field(min_length=1)
    stage: Stage = "seed"
    target: str = "Response"
    inputs: dict[str, str] = Field(default_factory=dict)
    dimensions: list[Dimension] = Field(min_length=1)
    source: str = Field("", exclude=True)

    @field_validator("inputs")
    @classmethod
    def _known_inputs(cls, inputs: dict[str, str]) -> dict[str, str]:
        if unknown := sorted(set(inputs) - set(INPUT_FIELDS)):
            raise ValueError(f"unknown input(s) {unknown}; known: {', '.join(INPUT_FIELDS)}")
        return inputs

    @model_validator(mode="before")
    @classmethod
    def _infer_stage(cls, data: object) -> object:
        """No `stage` key: augmented when any question came from augmentation, else seed."""
        if not isinstance(data, dict) or "stage" in data:
            return data
        def listed(table: object, key: str) -> list:
            value = table.get(key) if isinstance(table, dict) else None
            return value if isinstance(value, list) else []

        origins = [q.get("origin", "seed") for d in listed(data, "dimensions") for s in listed(d, "sub_dimensions")
                   for q in listed(s, "questions") if isinstance(q, dict)]
        return {**data, "stage": "augmented" if any(o != "seed" for o in origins) else "seed"}

    @model_validator(mode="after")
    def _unique_names(self) -> Checklist:
        names = [d.name for d in self.dimensions]
        if dups := sorted({n for n in names if names.count(n) > 1}):
            raise ValueError(f"dimension(s) named twice: {dups}")
        for d in self.dimensions:
            if not any(s.active for s in d.sub_dimensions):
                raise ValueError(f"dimension {d.name!r} has no question left to ask")
        return self

    def question_ids(self) -> list[tuple[str, str, str, Question]]:
        """(dimension, sub-dimension, question id, question) of every active question."""
        return [
            (d.name, s.name, question_id(d.name, s.name, k), q)
            for d in self.dimensions for s in d.sub_dimensions for k, q in enumerate(s.active, 1)
        ]


def question_id(dimension: str, sub_dimension: str, k: int) -> str:
    """A stable id of the k-th (1-based) active question of a sub-dimension."""
    return f"{dimension}/{sub_dimension}/Q{k}"


def bundled_checklists() -> list[str]:
    """Names of the checklists shipped with qatui."""
    folder = files("qatui.judges.checkeval") / "checklists"
    return sorted(p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml"))


def _describe(error: ValidationError) -> str:
    key, _, message = first_problem(error)
    return f"key {key or '(top level)'}: {message}"


def parse_checklist(text: str, where: str) -> Checklist:
    """A checklist from TOML text; errors name `where` and the key."""
    try:
        data = loads_toml(text)
    except Refused as e:
        raise ChecklistError(e.message(f"checklist {where}")) from None
    except tomllib.TOMLDecodeError as e:
        raise ChecklistError(f"checklist {where}: not valid TOML: {e}") from None
    try:
        return Checklist.model_validate(data).model_copy(update={"source": where})
    except ValidationError as e:
        raise ChecklistError(f"checklist {where}: {_describe(e)}") from None


def load_checklist(name_or_path: str) -> Checklist:
    """A bundled checklist by name (`summeval`, `topical_chat`, `qa`), or a checklist file by path."""
    path = Path(name_or_path).expanduser()
    if path.suffix == ".toml" or path.exists() or "/" in name_or_path:
        try:
            text = read_text(path)
        except Refused as e:
            raise ChecklistError(f"checklist {path}: {e}") from None
        except FileNotFoundError:
            raise ChecklistError(f"checklist {path}: no such file") from None
        except OSError as e:
            raise ChecklistError(f"checklist {path}: cannot be read: {e.strerror}") from None
        return parse_checklist(text, str(path))
    bundled = name_or_path.replace("-", "_")
    if bundled not in bundled_checklists():
        raise ChecklistError(f"unknown checklist {name_or_path!r}: bundled ones are "
                             f"{', '.join(bundled_checklists())}; or give the path of a .toml file")
    resource = files("qatui.judges.checkeval") / "checklists" / f"{bundled}.toml"
    return parse_checklist(resource.read_text(encoding="utf-8"), f"{bundled}.toml (bundled)")


_ANSWER = re.compile(r"^[ \t*_#-]*Q\s*(\d+)\s*[*_]*\s*[:.)\-=]\s*[*_\"']*\s*(yes|no)\b", re.IGNORECASE | re.MULTILINE)


@cache
def answers_schema(n: int) -> type[BaseModel]:
    """The reply advertised to the backbone: {"Q1": "yes"|"no", ..., "Qn": ...}, all required.

    Only the advertised schema is strict (constrained decoding fills every key); validation
    accepts any JSON object, so a partial reply reaches `parse_answers` and its missing
    questions become unanswered instead of failing the item.
    """
    advertised = numbered_answers(n, ("yes", "no"))

    class ChecklistReply(BaseModel):
        """The backbone's answers to one sub-dimension's questions, as parsed."""

        model_config = ConfigDict(extra="allow")

        @classmethod
        def model_json_schema(cls, *args: object, **kwargs: object) -> dict:
            return advertised

    return ChecklistReply


def _json_answers(text: str) -> dict[int, set[str]] | None:
    """Qk -> answers from every JSON object in `text` with a Qk key, merged; None when there is none.

    Merged, not the first one: an answer that quotes a `{"Q1": "yes"}` from the text being
    judged beside its own `{"Q1": "no"}` leaves Q1 ambiguous (unanswered), never the quote's.
    """
    from qatui.llm.parse import extract_json_values

    found: dict[int, set[str]] | None = None
    for value in extract_json_values(text):
        if not isinstance(value, dict):
            continue
        if not any(re.fullmatch(r"\s*Q\s*\d+\s*", str(k), re.IGNORECASE) for k in value):
            continue
        found = {} if found is None else found
        for key, answer in value.items():
            if (m := re.fullmatch(r"\s*Q\s*(\d+)\s*", str(key), re.IGNORECASE)) is None:
                continue
            word = re.match(r"\s*(yes|no)\b", answer, re.IGNORECASE) if isinstance(answer, str) else None
            if word:
                found.setdefault(int(m.group(1)), set()).add(word.group(1).lower())
    return found


def parse_answers(text: str, n: int) -> list[Answer | None]:
    """The answer to each of Q1..Qn in `text`; None where a question is unanswered.

    A JSON object with keys "Q1".. (the form asked for) is read key by key: a value that
    does not start with yes or no leaves its question unanswered. Otherwise a line counts
    when it starts with `Qk:` (also `Qk.` / `Qk)` / `Qk -`, markdown emphasis allowed)
    followed by yes or no; the rest of the line is ignored. A `> ` quoted line and a fenced
    block echoed from the prompt are quotes of the text being judged, never answers. Lines may come in any
    order; numbers outside 1..n are ignored; a question answered twice the same way keeps
    that answer, answered both ways it is unanswered (ambiguous).
    """
    text = without_fenced(text)
    found = _json_answers(text)
    if found is None:
        found = {}
        for match in _ANSWER.finditer(text):
            found.setdefault(int(match.group(1)), set()).add(match.group(2).lower())
    out: list[Answer | None] = []
    for k in range(1, n + 1):
        said = found.get(k, set())
        out.append(next(iter(said)) if len(said) == 1 else None)  # type: ignore[arg-type]
    return out


def share_of_yes(answers: list[tuple[Answer | None, float]]) -> float | None:
    """Share of "yes" among the answered questions (weighted, when a file weighs them); None when none was answered."""
    answered = [(a, w) for a, w in answers if a is not None]
    total = sum(w for _, w in answered)
    if not answered or total <= 0:
        return None
    return sum(w for a, w in answered if a == "yes") / total
