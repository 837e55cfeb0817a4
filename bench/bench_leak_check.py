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
Then a dataset's check as the commands make it (`check_copies`, bounded in steps): an adversary's file of 3 items,
each a 1.7 MB candidate against a 1.7 MB reference of one vocabulary (about 10 MB), timed against the rule alone
(unbounded, as every command ran it before the bound) on its first pair; and the steps a second rapidfuzz makes on pairs of one length, the
rate `comparison_steps` is written against.
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
sys.path.insert(0, str(ROOT / "tests"))

from fakes import texts_alike_in_length  # noqa: E402
from qatui.data.leaks import check_copies, comparison_steps, near_copy  # noqa: E402
from qatui.data.model import Item  # noqa: E402

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


def steps_a_second() -> float:
    """Steps (`comparison_steps`) rapidfuzz makes a second on pairs of 2,000 to 60,000 words of one length."""
    from rapidfuzz.distance import Indel

    rates = []
    for words in (2_000, 20_000, 60_000):
        a, b = texts_alike_in_length(words, 1), texts_alike_in_length(words, 2)
        most = (len(a) + len(b)) // 20
        started = time.perf_counter()
        Indel.distance(a, b, score_cutoff=most)
        rates.append(comparison_steps(a, b) / (time.perf_counter() - started))
        print(f"  {words:6d} words a text: {rates[-1] / 1e6:5.0f} million steps a second")
    return min(rates)


def adversary(items: int, words: int) -> float:
    """`check_copies` of the adversary's file, against the rule alone on one of its pairs; returns the check's seconds."""
    dataset = [Item(id=f"q{k}", question="?", references=[texts_alike_in_length(words, 2 * k + 3)],
                    candidates={"a": texts_alike_in_length(words, 2 * k + 4), "b": "a short answer"})
               for k in range(items)]
    size = sum(len(t) for item in dataset for t in [*item.references, *item.candidates.values()])
    started = time.perf_counter()
    check = check_copies(dataset)
    took = time.perf_counter() - started
    started = time.perf_counter()
    near_copy(dataset[0].candidates["a"], dataset[0].references[0])
    alone = time.perf_counter() - started
    print(f"adversary's file ({size / 1e6:.1f} MB, {items} items)  check {took:6.3f} s  the rule alone on one pair "
          f"{alone:6.2f} s ({alone * items:.0f} s for the file)  not compared: {len(check.not_compared)} candidates")
    return took


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
    took = adversary(3, 290_000)
    print(f"goal the check of an adversary's 10 MB file of texts alike in length under 2 s, saying what it did not "
          f"compare: {'met' if took < 2 else 'missed'} ({took:.3f} s)")
    print("rapidfuzz's rate, which `comparison_steps` counts in (its docstring says 380 to 480 million a second):")
    steps_a_second()


if __name__ == "__main__":
    main()
