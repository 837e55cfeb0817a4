"""The judge file format: a TOML file read, checked whole before any work, and kept with its text.

A judge file (docs/JUDGE_FILES.md) names its `kind`, the scale, pair rule, checklist or
labels the kind needs, its prompt templates with named placeholders, optional few-shot
examples and per-language variants, and its option defaults. Everything that can be checked
without a backbone is checked here, and each problem is one `JudgeFileError` whose message
starts `FILE:LINE: KEY: `: invalid TOML, an unknown key or kind, an unknown placeholder or one
the kind cannot fill, a template that never shows the answer(s), a scale without bounds or with
min >= max, a label set of one, an option out of range. The file is read through
`qatui.safe_read` (regular files only, a size cap, finite numbers, a nesting limit).
"""

from __future__ import annotations

import re
import string
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError, field_validator

from qatui.errors import JudgeError, first_problem
from qatui.judges.base import JudgeOptions
from qatui.judges.files.lines import key_line, line_of_text

Kind = Literal["score", "pair", "listwise", "checklist", "label"]
KINDS: tuple[str, ...] = ("score", "pair", "listwise", "checklist", "label")
MAX_FILE_CHARS = 1_000_000
"""The largest judge file read (a prompt with examples runs to a few thousand characters)."""
MAX_QUESTIONS = 50
"""The most questions of a checklist judge: all of them are asked in one call per answer."""
MAX_LABELS = 20
"""The most labels of a label judge."""

ANSWER_FIELDS: dict[str, tuple[str, ...]] = {
    "score": ("answer",), "label": ("answer",), "checklist": ("answer",),
    "pair": ("answer_a", "answer_b"), "listwise": ("answers",),
}
"""The placeholders that show the judged answer(s): the user template must hold every one of its kind's."""
DATA_FIELDS = ("question", "reference", "context", "answer", "answer_a", "answer_b", "answers")
"""Placeholders filled from the item (answers, references and context fenced)."""
STATIC_FIELDS: dict[str, tuple[str, ...]] = {
    "score": ("criteria", "min", "max"), "label": ("criteria", "labels"), "checklist": ("criteria", "questions"),
    "pair": ("criteria",), "listwise": ("criteria",),
}
"""Placeholders filled from the file itself, allowed in every template of the kind."""
ALL_FIELDS = frozenset(DATA_FIELDS) | {f for fields in STATIC_FIELDS.values() for f in fields} | {"reason"}


class JudgeFileError(JudgeError):
    """A judge file that cannot be used; the message starts `FILE:LINE: KEY: `."""


class _Strict(BaseModel):
    """A table of a judge file: unknown keys refused, values frozen, numbers finite."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class FileJudgeOptions(JudgeOptions):
    """Options of a judge file (`[options]` gives the defaults; `[judges.NAME]` and the TUI override them)."""

    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    """The temperature of the judge's calls (default: the backbone's, 0)."""
    max_tokens: int | None = Field(default=None, ge=1, le=32768)
    """The token limit of each answer (default: the backbone's)."""
    max_candidates: int = Field(default=8, ge=2, le=100)
    """Pair judges: items with more candidates are not judged (n candidates cost up to n(n-1) calls)."""


class ScaleSpec(_Strict):
    """A score judge's scale: whole-number bounds, the decimals asked, and G-Eval weighting."""

    min: StrictInt = Field(ge=0, le=99)
    """Lowest score (the `[[...]]` reader takes at most two integer digits); a whole number, never `true` read as 1."""
    max: StrictInt = Field(ge=0, le=99)
    digits: StrictInt = Field(default=0, ge=0, le=2)
    """Decimals of a score: 0 for whole numbers, at most 2."""
    logprobs: StrictBool = False
    """Weigh the score by the probability of each score token (G-Eval) where the provider returns them."""


class PairSpec(_Strict):
    """How a pair judge asks and combines."""

    both_orders: StrictBool = False
    """Swap and confirm: ask each pair in both orders; orders that disagree make a tie."""
    tie: StrictBool = True
    """Whether the answer may be a tie (A / B / tie) or must pick one (A / B)."""
    rematch_ties: StrictBool = False
    """Answers with equal win counts are compared once more, the order swapped (MinosEval's rule)."""


class ChecklistSpec(_Strict):
    """A checklist judge's questions, each answered yes or no for every answer; a yes is good."""

    questions: list[str] = Field(min_length=1, max_length=MAX_QUESTIONS)

    @field_validator("questions")
    @classmethod
    def _not_blank(cls, value: list[str]) -> list[str]:
        if any(not q.strip() for q in value):
            raise ValueError("a question is blank")
        return value


class LabelsSpec(_Strict):
    """A label judge's labels, worst first, so that they rank."""

    values: list[str] = Field(max_length=MAX_LABELS)

    @field_validator("values")
    @classmethod
    def _two_distinct(cls, value: list[str]) -> list[str]:
        if len(value) < 2:
            raise ValueError(f"a label set of {len(value)}: give at least two labels, worst first")
        if len({v.strip().lower() for v in value}) < len(value) or any(not v.strip() for v in value):
            raise ValueError("labels must be distinct and not blank")
        return value


class AnswerSpec(_Strict):
    """The JSON the backbone answers with: its schema's name, an explanation first, the verdict's key and form."""

    schema_name: str | None = Field(default=None, alias="schema", pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
    format: Literal["bracketed", "plain"] | None = None
    """bracketed: the verdict written `[[A]]` (`[[8.12]]`); plain: `A`. Scores are always bracketed."""
    explanation: int = Field(default=0, ge=0, le=4000)
    """Characters of a short explanation asked before the verdict (0: none)."""
    explanation_key: str = Field(default="explanation", pattern=r"^[a-z][a-z0-9_]{0,31}$")
    verdict_key: str | None = Field(default=None, pattern=r"^[a-z][a-z0-9_]{0,31}$")


class PromptSpec(_Strict):
    """One language's prompt: system, user template, the reference and context lines, the re-ask, examples."""

    system: str | None = None
    user: str | None = None
    reference: str | None = None
    """Inserted as {reference} when the item has references (holding {reference}: the fenced texts); without it,
    {reference} is the fenced references themselves."""
    context: str | None = None
    reask: str | None = None
    """Sent once when an answer cannot be read; {reason} says why."""
    examples: list[dict[str, str]] | None = None


class PromptsSpec(PromptSpec):
    """The default prompt, and variants per item language (`[prompts.zh]`) that replace the keys they set."""

    en: PromptSpec | None = None
    zh: PromptSpec | None = None


class JudgeSpec(_Strict):
    """A whole judge file."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    description: str = ""
    kind: Kind
    criteria: str = ""
    scale: ScaleSpec | None = None
    pair: PairSpec | None = None
    checklist: ChecklistSpec | None = None
    labels: LabelsSpec | None = None
    answer: AnswerSpec = AnswerSpec()
    options: FileJudgeOptions = FileJudgeOptions()
    prompts: PromptsSpec


@dataclass(frozen=True)
class JudgeFile:
    """A judge file read and checked: its name, kind, where it came from and its text exactly as read."""

    name: str
    kind: str
    description: str
    source: str
    """The path it was read from, or "built-in"."""
    text: str
    spec: JudgeSpec = field(compare=False, repr=False)

    @property
    def options(self) -> dict[str, Any]:
        """The `[options]` the file sets (its defaults)."""
        return self.spec.options.model_dump(exclude_unset=True)


def load_judge_file(path: str | Path) -> JudgeFile:
    """The judge file at `path`, read through `safe_read` and checked whole; `JudgeFileError` when it is bad."""
    from qatui.safe_read import Refused, read_text

    where = str(path)
    try:
        text = read_text(path, limit=MAX_FILE_CHARS)
    except FileNotFoundError:
        raise JudgeFileError(f"{where}:1: file: no such judge file") from None
    except Refused as e:  # not UTF-8 says its line; a special file, one too big: line 1
        raise JudgeFileError(f"{where}:{e.line or 1}: file: cannot read it: {e.reason}") from None
    except OSError as e:
        raise JudgeFileError(f"{where}:1: file: cannot read it: {e}") from None
    return parse_judge_text(text, where)


def parse_judge_text(text: str, source: str) -> JudgeFile:
    """`text` checked as a judge file; `source` names it in every error (`SOURCE:LINE: KEY: message`)."""
    from qatui.safe_read import Refused, loads_toml

    try:
        data = loads_toml(text)
    except tomllib.TOMLDecodeError as e:
        line = re.search(r"line (\d+)", str(e))
        raise JudgeFileError(f"{source}:{line[1] if line else 1}: toml: not valid TOML: {e}") from None
    except Refused as e:
        raise JudgeFileError(f"{source}:{e.line or 1}: {e.field or 'toml'}: {e.reason}") from None
    try:
        spec = JudgeSpec.model_validate(data)
    except ValidationError as e:
        raise _validation_error(e, text, source) from None
    try:  # the options as written: `max_tokens = true` or "3" is no number (true was stored as 1)
        FileJudgeOptions.model_validate(data.get("options") or {}, strict=True)
    except ValidationError as e:
        raise _validation_error(e, text, source, within=("options",)) from None
    for path, message, *needle in _problems(spec):
        line = key_line(text, path)
        if needle:  # a placeholder: the line of the template that holds it
            line = line_of_text(text, line, needle[0])
        raise JudgeFileError(f"{source}:{line}: {_dotted(path)}: {message}")
    return JudgeFile(name=spec.name, kind=spec.kind, description=spec.description, source=source, text=text, spec=spec)


def _dotted(path: tuple[str | int, ...]) -> str:
    return ".".join(str(p) for p in path if isinstance(p, str)) or "file"


def _validation_error(error: ValidationError, text: str, source: str,
                      within: tuple[str, ...] = ()) -> JudgeFileError:
    """The first pydantic problem as `SOURCE:LINE: KEY: message` (an unknown key, kind or option range); `within`:
    the keys of the table the validated data was (the error's own path starts inside it)."""
    first = error.errors()[0]
    path = within + tuple(first["loc"])
    _, kind, message = first_problem(error)
    if kind == "extra_forbidden":
        message = "unknown key" + _hint(path)
    elif kind == "missing":
        message = "missing" + (" (a scale needs both bounds, min and max)" if "scale" in path else "")
    elif kind == "literal_error" and path == ("kind",):
        message = f"unknown kind {first.get('input')!r}: one of {', '.join(KINDS)}"
    return JudgeFileError(f"{source}:{key_line(text, path)}: {_dotted(path)}: {message.removeprefix('Value error, ')}")


def _hint(path: tuple[str | int, ...]) -> str:
    if path and path[0] == "options":
        return f" (options: {', '.join(FileJudgeOptions.model_fields)})"
    return ""


# -- the checks pydantic cannot make --------------------------------------------------------------


Problem = tuple[tuple[str | int, ...], str] | tuple[tuple[str | int, ...], str, str]
"""Where (the key path), what, and for a placeholder the text to find its line by."""


def _problems(spec: JudgeSpec) -> list[Problem]:
    """Every problem of a parsed file, in file order; the first is reported."""
    from qatui.judges.names import JUDGES

    found: list[Problem] = []
    if same := next((name for name in JUDGES if name.casefold() == spec.name.casefold()), None):  # Pointwise too
        found.append((("name",), f"{spec.name!r} is a built-in judge's name ({same}); choose another"))
    needed = {"score": "scale", "checklist": "checklist", "label": "labels"}
    for section in ("scale", "pair", "checklist", "labels"):
        given = getattr(spec, section) is not None
        if given and section != needed.get(spec.kind) and not (section == "pair" and spec.kind == "pair"):
            found.append(((section,), f"a {spec.kind} judge has no [{section}] table"))
    if (section := needed.get(spec.kind)) and getattr(spec, section) is None:
        what = {"scale": "min and max", "checklist": "questions", "labels": "values, worst first"}[section]
        found.append(((section,), f"a {spec.kind} judge needs a [{section}] table ({what})"))
    if spec.scale is not None:
        found += _scale_problems(spec.scale)
    if spec.pair is not None and spec.pair.rematch_ties and spec.pair.both_orders:
        found.append((("pair", "rematch_ties"), "a rematch asks the swapped order, which both_orders already asks"))
    found += _answer_problems(spec)
    found += _prompt_problems(spec)
    return found


def _scale_problems(scale: ScaleSpec) -> list[Problem]:
    found: list[Problem] = []
    if scale.min >= scale.max:
        found.append((("scale", "max"), f"min ({scale.min}) must be below max ({scale.max})"))
    if scale.logprobs and (scale.digits or scale.max > 9):
        found.append((("scale", "logprobs"), "log-probability weighting reads one digit: whole scores from 0 to 9"))
    return found


def _answer_problems(spec: JudgeSpec) -> list[Problem]:
    answer = spec.answer
    for key in ("format", "explanation", "verdict_key"):
        if spec.kind in ("listwise", "checklist") and key in answer.model_fields_set:
            return [(("answer", key), f"a {spec.kind} judge answers in a fixed JSON form; remove {key}")]
    if answer.format == "plain" and spec.kind == "score":
        return [(("answer", "format"), "a score is always written bracketed, as [[8]]")]
    if answer.explanation and answer.verdict_key == answer.explanation_key:
        return [(("answer", "verdict_key"), "the verdict and the explanation need different keys")]
    return []


def template_fields(template: str) -> list[str]:
    """The placeholder names of a template; ValueError for a bad template or anything but a plain {name}."""
    names = []
    for _, name, spec, conversion in string.Formatter().parse(template):
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            raise ValueError(f"{{{name}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}}} is not "
                             "a plain {name} placeholder (write literal braces doubled: {{ }})")
        names.append(name)
    return names


def _prompt_problems(spec: JudgeSpec) -> list[Problem]:
    found: list[Problem] = []
    prompts = spec.prompts
    for key in ("system", "user"):
        if getattr(prompts, key) is None:
            found.append((("prompts", key), f"missing: the prompt needs a {key} text"))
    for lang in ("en", "zh"):
        if (variant := getattr(prompts, lang)) is not None:
            found += _section_problems(spec, variant, ("prompts", lang))
    return found + _section_problems(spec, prompts, ("prompts",))


def _section_problems(spec: JudgeSpec, section: PromptSpec, where: tuple[str, ...]) -> list[Problem]:
    kind = spec.kind
    static = set(STATIC_FIELDS[kind])
    fillable = {"question", "reference", "context", *ANSWER_FIELDS[kind]} | static
    allowed = {"system": static, "user": fillable, "reference": {"reference"}, "context": {"context"},
               "reask": {"reason"} | static | ({"labels"} if kind == "listwise" else set())}
    found: list[Problem] = []
    for key, names in allowed.items():
        template = getattr(section, key)
        if template is None:
            continue
        try:
            used = template_fields(template)
        except ValueError as e:
            found.append(((*where, key), f"not a valid template: {e}"))
            continue
        for name in used:
            if name not in ALL_FIELDS:
                found.append(((*where, key), f"unknown placeholder {{{name}}}", f"{{{name}}}"))
            elif name not in names:
                place = "the user template" if name in fillable else f"another kind of judge, not a {kind} judge"
                found.append(((*where, key), f"placeholder {{{name}}} cannot be filled here (it belongs in {place})",
                              f"{{{name}}}"))
        if key == "user":
            shown = ANSWER_FIELDS[kind] + (("questions",) if kind == "checklist" else ())
            if missing := [n for n in shown if n not in used]:
                found.append(((*where, key), f"the template never shows {', '.join('{' + n + '}' for n in missing)}"))
        if key in ("reference", "context") and key not in used:
            found.append(((*where, key), f"the {key} line never shows {{{key}}}"))
    if section.examples and kind == "listwise":
        found.append(((*where, "examples"), "a listwise judge takes no examples"))
    for k, example in enumerate(section.examples or []):
        found += _example_problems(spec, example, (*where, "examples", k), fillable - static)
    return found


def _example_problems(spec: JudgeSpec, example: dict[str, str], where: tuple[str | int, ...],
                      fillable: set[str]) -> list[Problem]:
    keys = answer_keys(spec)
    if unknown := [k for k in example if k not in fillable and k not in keys]:
        return [(where, f"unknown key {unknown[0]!r} in an example (its fields: {', '.join(sorted(fillable))}; "
                        f"its answer: {', '.join(keys)})")]
    if missing := [k for k in (*ANSWER_FIELDS[spec.kind], *keys) if k not in example]:
        return [(where, f"an example needs {', '.join(missing)}")]
    return _example_verdict_problems(spec, example, where)


def _example_verdict_problems(spec: JudgeSpec, example: dict[str, str], where: tuple[str | int, ...]) -> list[Problem]:
    """An example's verdict read as the judge reads a real answer's: an example is shown to the model as an earlier
    answer of its own, so one the judge could not read (`[[9]]` on a 1-5 scale, a pair verdict that is neither
    side) teaches the model an answer the judge then refuses."""
    from qatui.judges.brackets import Unreadable
    from qatui.judges.files import readers

    if spec.kind == "checklist":
        given = {key: example[key] for key in answer_keys(spec)}
        if bad := [key for key, value in given.items() if str(value).strip().lower() not in ("yes", "no")]:
            return [((*where, bad[0]), f"{given[bad[0]]!r} is not yes or no")]
        return []
    read = {"score": lambda: readers.score_reader(spec.scale), "pair": lambda: readers.choice_reader(spec),
            "label": lambda: readers.label_reader(spec)}.get(spec.kind)
    if read is None or (spec.kind == "score" and spec.scale is None):
        return []
    key = verdict_key(spec)
    try:
        read()(str(example[key]))
    except Unreadable as e:
        return [((*where, key), f"the example's verdict cannot be read as this judge reads one: {e}")]
    return []


# -- the answer's keys ----------------------------------------------------------------------------

DEFAULT_VERDICT_KEY = {"score": "score", "pair": "verdict", "label": "label", "listwise": "rank"}


def verdict_key(spec: JudgeSpec) -> str:
    """The JSON key of the verdict."""
    return spec.answer.verdict_key or DEFAULT_VERDICT_KEY.get(spec.kind, "verdict")


def answer_keys(spec: JudgeSpec) -> tuple[str, ...]:
    """The keys of one answer, in order: an example's answer gives exactly these."""
    if spec.kind == "checklist":
        return tuple(f"Q{k}" for k in range(1, len(spec.checklist.questions) + 1)) if spec.checklist else ()
    explanation = (spec.answer.explanation_key,) if spec.answer.explanation else ()
    return (*explanation, verdict_key(spec))
