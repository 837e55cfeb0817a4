"""The leak check's cost: every candidate against its references, by the rule's old form (difflib) and by the rule.

Run: .venv/bin/python bench/bench_leak_check.py [N_ITEMS] [WORDS]   (defaults 50 and 300)

`datasets inspect`, New run's preview, `qatui run`'s figures without leaks, `qatui table` and the HTML report
all ask which candidates copy a reference (`qatui.data.leaks.near_copy`: the two share 95% of their characters in
order, 2 LCS / T, read as rapidfuzz's Indel distance in C++). The rule's old form, difflib's ratio >= 0.95 (a greedy
match, never longer than the LCS), compared two texts in time quadratic in their length or worse, in pure Python.
Timed in one process, one after the other, on
- long answers: N_ITEMS items of four WORDS-word candidates drawn from one vocabulary, none a copy, the
  reference of the same length (the case difflib cannot be spared by lengths alone),
- long copies: 10 references of 1,500 words, each with a copy one word changed, and
- SummEval as qatui loads it (100 documents, 16 summaries each against 11 references), when ../shared/data
  is beside the checkout.
Every copy difflib finds must be found by the rule (its match is a common subsequence); printed: seconds each, the
ratio, and the copies each found.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from difflib import SequenceMatcher
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from qatui.data.leaks import near_copy  # noqa: E402

SUMMEVAL = ROOT.parent / "shared" / "data" / "SummEval" / "summeval.jsonl"


def difflib_alone(candidate: str, reference: str) -> bool:
    """The rule's old form, as `near_copy` read it until 2026-12-01: normalised texts equal, or difflib's ratio at
    least 0.95 (with its length shortcut)."""
    a, b = (" ".join(t.lower().split()) for t in (candidate, reference))
    if a == b:
        return True
    if min(len(a), len(b)) < 0.9 * max(len(a), len(b)):
        return False
    return SequenceMatcher(None, a, b, autojunk=False).ratio() >= 0.95


def long_answers(n: int, words: int) -> list[tuple[str, str]]:
    """(candidate, reference) pairs of n items with four candidates each, all of `words` words."""
    rng = random.Random(0)
    vocabulary = [f"word{i}" for i in range(400)] + "the of and a to in is was that for on with as".split()

    def text() -> str:
        return " ".join(rng.choice(vocabulary) for _ in range(words))

    return [(text(), reference) for reference in (text() for _ in range(n)) for _ in range(4)]


def long_copies(n: int, words: int) -> list[tuple[str, str]]:
    """(candidate, reference) pairs of n references of `words` words, each with a copy one word changed."""
    rng = random.Random(1)
    pairs = []
    for _ in range(n):
        text = [f"word{rng.randrange(400)}" for _ in range(words)]
        copy = text[:]
        copy[rng.randrange(words)] = "changed"
        pairs.append((" ".join(copy), " ".join(text)))
    return pairs


def summeval_pairs() -> list[tuple[str, str]]:
    from qatui.data.loaders import load_dataset

    dataset = load_dataset(str(SUMMEVAL))
    return [(text, ref) for item in dataset.items for text in item.candidates.values() for ref in item.references]


def timed(rule: Callable[[str, str], bool], pairs: list[tuple[str, str]]) -> tuple[float, list[bool]]:
    started = time.perf_counter()
    verdicts = [rule(c, r) for c, r in pairs]
    return time.perf_counter() - started, verdicts


def compare(label: str, pairs: list[tuple[str, str]]) -> float:
    near_copy(*pairs[0])  # rapidfuzz's import out of the timing
    old, old_verdicts = timed(difflib_alone, pairs)
    new, new_verdicts = timed(near_copy, pairs)
    if missed := sum(o and not n for o, n in zip(old_verdicts, new_verdicts)):
        raise SystemExit(f"{label}: {missed} copies difflib finds are not found by the rule")
    print(f"{label:<34} {len(pairs):6d} pairs  difflib {old:7.2f} s  the rule {new:6.3f} s  {old / new:6.1f}x  "
          f"(copies: difflib {sum(old_verdicts)}, the rule {sum(new_verdicts)})")
    return new


def main() -> None:
    args = [int(a) for a in sys.argv[1:3]]
    n, words = (args + [50, 300][len(args):])[:2]
    took = compare(f"long answers ({n} items, {words} words)", long_answers(n, words))
    print(f"goal the leak check of {n} items of four {words}-word answers under 1 s, every copy difflib finds found: "
          f"{'met' if took < 1 else 'missed'} ({took:.3f} s)")
    compare("long copies (10 items, 1,500 words)", long_copies(10, 1500))
    if SUMMEVAL.is_file():
        compare("SummEval (100 documents)", summeval_pairs())
    else:
        print(f"SummEval skipped: {SUMMEVAL} is not on this machine")


if __name__ == "__main__":
    main()
