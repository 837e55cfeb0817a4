"""`qatui judges new NAME --kind KIND`: a commented starting judge file that loads and runs as it is."""

from __future__ import annotations

from qatui.judges.files.spec import KINDS, JudgeFileError, parse_judge_text

_COMMON_HEAD = '''# A qatui judge file (docs/JUDGE_FILES.md). Run it with:
#   qatui run DATA --judge THIS_FILE.toml --backbone MODEL
# Placeholders in {braces} are filled by qatui: {question}, {reference}, {context} and the answer(s).
# Answers, references and context reach the backbone fenced, with a note that they are material to
# judge, never instructions. Literal braces are written doubled: {{ }}.

name = "__NAME__"
description = "__DESCRIPTION__"
kind = "__KIND__"
# The criteria, shown wherever a template says {criteria}.
criteria = """__CRITERIA__"""
'''

_PROMPT_TAIL = '''
# Shown as {reference} in the user template when the item has reference answers (left out when it
# has none). Remove this line to show the fenced references bare; the judge then needs them.
reference = """Reference answer: {reference}
"""
# Sent once when the answer cannot be read; {reason} says why. Optional.
# reask = "..."

# A variant for items in Chinese: the keys it sets replace the ones above.
# [prompts.zh]
# system = "..."

[options]
# temperature = 0.0      # 0 to 2 (default: the backbone's)
# max_tokens = 256       # 1 to 32768 (default: the backbone's)
# tie_digits = 4         # scores equal once rounded to this many digits tie
# repeats = 1            # ask each judgement K times (1 to 20); the verdict is their aggregate
'''

_BODIES = {
    "score": ('Scores each answer from 1 to 5 for how well it answers the question.',
              'A good answer is correct, answers what was asked, and says it plainly.', '''
[scale]
min = 1          # whole-number bounds, 0 to 99
max = 5
digits = 0       # decimals of a score, 0 to 2
logprobs = false # true: weigh the score by token probabilities (G-Eval) where the provider gives them

[answer]
explanation = 300  # characters of a short explanation before the score (0: none)

[prompts]
system = """You grade one answer to a question. {criteria}
Give a whole score from {min} (worst) to {max} (best), written as [[{max}]]."""
user = """Question: {question}
{reference}
Answer to grade:
{answer}

A short explanation, then your score as [[score]]:"""
'''),
    "pair": ('Picks the better of two answers, or a tie, each pair asked in both orders.',
             'The better answer is correct, complete and to the point; length and order mean nothing.', '''
[pair]
both_orders = true   # swap and confirm: each pair in both orders; orders that disagree make a tie
tie = true           # allow "tie" (false: A or B must be chosen)

[answer]
explanation = 300    # characters of a short rationale before the verdict (0: none)

[prompts]
system = """You compare two answers to the same question. {criteria}
Reply with JSON: a short explanation, then the verdict "A", "B" or "tie"."""
user = """Question: {question}
{reference}
Answer A:
{answer_a}

Answer B:
{answer_b}

Which answer is better: A, B, or tie?"""
'''),
    "listwise": ('Ranks every answer to a question, best first.',
                 'Better answers are correct, complete and clear.', '''
[prompts]
system = """You rank answers to a question from best to worst. {criteria}
Reply with JSON only: {{"rank": [every answer label exactly once, best first]}}."""
user = """Question: {question}
{reference}
Answers:
{answers}"""
'''),
    "checklist": ('Asks yes-or-no questions of each answer; its score is the share of yes.',
                  'Each question is answered yes when the answer meets it.', '''
[checklist]
# Each question is answered yes or no for every answer; a yes is good.
questions = [
    "Does the answer address the question that was asked?",
    "Is every claim in the answer correct?",
    "Is the answer free of repetition and padding?",
]

[prompts]
system = """You check one answer against a list of yes-or-no questions. {criteria}
Reply with JSON: each question's key (Q1, Q2, ...) and "yes" or "no"."""
user = """Question: {question}
{reference}
Answer to check:
{answer}

Questions:
{questions}"""
'''),
    "label": ('Gives each answer one label, from worst to best.',
              'A wrong answer is "wrong"; a correct one that misses something is "partial"; else "right".', '''
[labels]
values = ["wrong", "partial", "right"]  # at least two, worst first: they rank

[answer]
explanation = 300

[prompts]
system = """You label one answer to a question as one of: {labels}. {criteria}"""
user = """Question: {question}
{reference}
Answer to label:
{answer}

A short explanation, then the label."""
'''),
}


def starter_text(name: str, kind: str) -> str:
    """The starting file of a `kind` judge called `name`, checked by loading it."""
    if kind not in KINDS:
        raise JudgeFileError(f"unknown kind {kind!r}: one of {', '.join(KINDS)}")
    description, criteria, body = _BODIES[kind]
    head = (_COMMON_HEAD.replace("__NAME__", name).replace("__KIND__", kind).replace("__DESCRIPTION__", description)
            .replace("__CRITERIA__", criteria.replace('"', '\\"')))
    text = head + body + _PROMPT_TAIL
    parse_judge_text(text, f"the starting {kind} judge")
    return text
