"""How a judge file's answers are read: the verdict of a score, a pair, a label or a checklist, strictly.

One home for the readers, used by the judge on every answer (`files.judge`) and by the file's own check of its
few-shot examples (`files.spec`): an example the judge could not read from a real answer is refused. They take a
parsed spec (`files.spec.JudgeSpec`) and import nothing of it, so both can use them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from qatui.judges.brackets import Unreadable, last_bracketed, read_choice, read_score


def answer_format(spec: Any) -> str:
    """`bracketed` or `plain` (scores are always bracketed; pairs and labels plain unless the file says)."""
    return spec.answer.format or ("bracketed" if spec.kind == "score" else "plain")


def choices(spec: Any) -> tuple[str, ...]:
    """A pair judge's answers: A, B and (unless the file says no) tie."""
    return ("A", "B", "tie") if spec.pair is None or spec.pair.tie else ("A", "B")


def score_reader(scale: Any) -> Callable[[str], float]:
    """Reads `[[x]]` on the scale: at most `digits` decimals, within the bounds."""
    def read(text: str) -> float:
        value = read_score(text, float(scale.min), float(scale.max))
        inside = last_bracketed(text)
        decimals = len(inside.partition(".")[2])
        if decimals > scale.digits:
            raise Unreadable(f"[[{inside}]] has {decimals} decimals; the scale takes {scale.digits}")
        return value
    return read


def choice_reader(spec: Any) -> Callable[[str], str]:
    """Reads a pair's choice: `[[A]]` when bracketed, else A / B / tie as CALF's reader takes them."""
    allowed = choices(spec)
    if answer_format(spec) == "bracketed":
        return lambda text: read_choice(text, allowed)

    def read(text: str) -> str:
        from qatui.judges.pairwise.judge import read_choice as plain_choice

        try:
            choice = plain_choice(text)
        except ValueError as e:
            raise Unreadable(str(e)) from None
        if choice not in allowed:
            raise Unreadable(f"{choice!r} is not one of {', '.join(allowed)}")
        return choice
    return read


def label_reader(spec: Any) -> Callable[[str], str]:
    """Reads one of the labels (case ignored), `[[label]]` when bracketed."""
    values = tuple(spec.labels.values if spec.labels else ())
    if answer_format(spec) == "bracketed":
        return lambda text: read_choice(text, values)

    def read(text: str) -> str:
        said = text.strip().strip("\"'`*. ").lower()
        for value in values:
            if said == value.lower():
                return value
        raise Unreadable(f"{text.strip()[:60]!r} is not one of {', '.join(values)}")
    return read


def checklist_reader(n: int) -> Callable[[str], list[str]]:
    """Reads a yes or no for every question Q1..Qn (CheckEval's reader); any unanswered one is unreadable."""
    from qatui.judges.checkeval.checklist import parse_answers

    def read(text: str) -> list[str]:
        answers = parse_answers(text, n)
        if missing := [f"Q{k}" for k, a in enumerate(answers, 1) if a is None]:
            raise Unreadable(f"no yes or no for {', '.join(missing)}")
        return [str(a) for a in answers]
    return read
