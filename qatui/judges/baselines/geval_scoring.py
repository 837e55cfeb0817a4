"""G-Eval's two ways to turn a 1-5 rating into a score: weigh it by token probabilities, or average samples.

Liu et al. (G-Eval) score a form-filling answer as the sum over the possible scores of
score × p(score), where p is the probability the model gave the score's token; CALF and
CheckEval use it where log-probabilities are available, else the mean of several sampled
answers (CALF samples five). Here:

- `digit_probabilities` finds the token that wrote the digit of the answer's verdict (the tokens'
  text joined must locate it, and that token must be the digit alone, as GPT and Llama tokenizers
  write single digits), and reads the digits 1-5 among its top log-probabilities (the token itself
  when no alternatives came back), summing variants such as "3" and " 3". The verdict's `[[d]]` is
  looked for in the answer only, never in a thinking section the tokens also hold
  (`llm.response.answer_positions`): the one that is the value of the verdict field (`field`), else
  the answer's last; and it must be the digit that was read as the verdict (`verdict`), else the
  distribution is another text's (a draft's `[[1]]` weighed a final `[[5]]` as 1.13). Nothing
  usable: None, and the caller samples instead.
- `weighted_score`: sum of d × p(d) over the digits found, divided by their total
  probability (the top alternatives rarely cover all of it, so they are renormalised).
- `sample_mean`: the plain mean of the sampled ratings.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

DIGITS = ("1", "2", "3", "4", "5")
_RATING = re.compile(r"\[\[\s*([1-5])\s*\]\]")


def digit_probabilities(logprobs: Sequence[dict[str, Any]] | None, digits: Sequence[str] = DIGITS, *,
                        verdict: float | None = None, field: str | None = None) -> dict[str, float] | None:
    """Renormalised probabilities of the `digits` (1-5: G-Eval's) at the verdict's token, or None when they cannot
    be read (the module docstring): `verdict` is the rating read from the answer, `field` its JSON key."""
    if not logprobs:
        return None
    from qatui.llm.response import answer_positions

    tokens = [str(t.get("token", "")) for t in logprobs]
    text = "".join(tokens)
    positions, _ = answer_positions(text)
    answer = "".join(text[i] for i in positions)
    rating = _RATING if tuple(digits) == DIGITS else re.compile(r"\[\[\s*([%s])\s*\]\]" % "".join(digits))
    found = list(rating.finditer(answer))
    if field is not None:
        key = re.compile(r'"%s"\s*:\s*"\s*\Z' % re.escape(field))
        found = [m for m in found if key.search(answer, max(0, m.start() - len(field) - 64), m.start())] or found
    if not found or (verdict is not None and float(found[-1][1]) != float(verdict)):
        return None
    offset = positions[found[-1].start(1)]
    end = 0
    for entry, token in zip(logprobs, tokens, strict=True):
        start, end = end, end + len(token)
        if start <= offset < end:
            if token.strip() != text[offset]:
                return None  # the digit shares its token with other text: no clean distribution
            alternatives = entry.get("top_logprobs") or [entry]
            return _renormalised(alternatives, digits)
    return None


def _renormalised(alternatives: Sequence[dict[str, Any]], digits: Sequence[str] = DIGITS) -> dict[str, float] | None:
    mass = dict.fromkeys(digits, 0.0)
    for alt in alternatives:
        digit = str(alt.get("token", "")).strip()
        if digit in mass:
            mass[digit] += math.exp(float(alt.get("logprob", -math.inf)))
    total = sum(mass.values())
    if total <= 0.0:
        return None
    return {digit: p / total for digit, p in mass.items() if p > 0.0}


def weighted_score(probabilities: dict[str, float]) -> float:
    """Sum of d × p(d) over the digits (the probabilities already sum to 1)."""
    return sum(int(digit) * p for digit, p in probabilities.items())


def sample_mean(ratings: Sequence[int]) -> float:
    """The mean of the sampled ratings."""
    return sum(ratings) / len(ratings)
