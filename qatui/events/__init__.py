"""The event spine: every step of a run is one of these typed, serialisable events.

Judges yield them (in label space: "Response 1"...), the engine stamps `item_id` and
`judge` on them and turns a judge's closing `Judgement` into a `Verdict` in candidate-id
space. The TUI, the CLI and the session store are three subscribers to the same stream.
The root `Event` lives in `events.base`, the baselines' step events in `events.baselines`;
every event is importable from here.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationInfo, field_validator, model_validator

from qatui.events.base import Event, Preference
from qatui.events.baselines import (
    CandidatePlaced,
    DimensionRated,
    PointScored,
    ReferenceListBuilt,
    StepsWritten,
)
from qatui.events.labels import candidates_by_label, label_of, response_labels
from qatui.ties import ranking_tiers, stored_digits


class RunStarted(Event):
    """The first event of a run: how many items and (item, judge) tasks, and how many a resume skips."""

    type: Literal["run_started"] = "run_started"
    session_id: str
    n_items: int
    n_tasks: int
    n_skipped: int = 0


class RunFinished(Event):
    """The last event of a run: completed, cancelled, capped (stopped at its cost cap, `--max-cost`), or stopped
    (a backbone failed the live check put off to its first call the cache could not answer: `reason` says why),
    with the counts of done and failed tasks."""

    type: Literal["run_finished"] = "run_finished"
    status: Literal["completed", "cancelled", "capped", "stopped"]
    n_done: int
    n_failed: int
    reason: str = ""


class ItemStarted(Event):
    """A judge began one item (stamped with both by the engine)."""

    type: Literal["item_started"] = "item_started"


class LLMCallFinished(Event):
    """One backbone call: what it cost, whether the cache answered it, and what came back.

    `prompt_hash` is the cache key: the full request is in the call cache under that key.
    `ok` is False for a call that failed after its retries (`error` says why). With deployments: the one that
    answered (`deployment`, "BACKBONE/NAME"), each that failed on the way (`hop_errors`: "BACKBONE/NAME 429").
    """

    type: Literal["llm_call_finished"] = "llm_call_finished"
    call_id: str = ""
    model: str
    purpose: str
    prompt_hash: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    """What this call spent: 0 for one the cache answered (see `cached_cost_usd`)."""
    unpriced: bool = False
    """Its cost is unknown, so `cost_usd` (0) is a floor: LiteLLM's price map lacks the model, or the provider's
    usage report cannot be true (`llm.response.usage_problem`). For a cache hit: what its answer cost when it was
    bought is unknown (`cached_cost_usd` is a floor). Never set for an embedded model."""
    latency_s: float = 0.0
    cached: bool = False
    cached_cost_usd: float = 0.0
    """For a call the cache answered, what its answer cost when it was bought: `qatui table` counts it, so a judge
    whose answers were cached does not look free beside one that bought them (0 for a session stored before)."""
    attempts: int = 1
    ok: bool = True
    error: str = ""
    response: str = ""
    thinking: str = ""
    """What a reasoning model wrote apart from its answer (`<think>` sections, `reasoning_content`); never the answer."""
    reasoning_tokens: int = 0
    """Of `completion_tokens`, those the model spent thinking, where the provider says (OpenAI's
    `usage.completion_tokens_details.reasoning_tokens`); 0 where it does not."""
    options: dict = Field(default_factory=dict)
    """The request options as sent (temperature, max_tokens, seed, reasoning_effort, thinking; `llm.reasoning`)."""
    left_out: list[str] = Field(default_factory=list)
    """Options set for the call or its backbone that were not sent: the model refuses them (`llm.reasoning`)."""
    trimmed: dict = Field(default_factory=dict)
    """What was cut to fit the context window (`qatui.llm.trim.Trimmed.record`); empty when nothing was."""
    deployment: str = ""
    """Which deployment of a backbone with several answered (`[backbones.NAME.deployments]`); empty otherwise."""
    hop_errors: list[str] = Field(default_factory=list)


class InputTrimmed(Event):
    """Texts of a call's prompt were cut to fit the backbone's context window (`qatui.llm.trim`)."""

    type: Literal["input_trimmed"] = "input_trimmed"
    call_id: str
    purpose: str
    model: str
    trimmed: dict


class LLMToken(Event):
    """A streamed piece of a call's answer, for live transcript panes; never stored."""

    type: Literal["llm_token"] = "llm_token"
    call_id: str
    model: str
    purpose: str
    text: str


class QuestionClassified(Event):
    """MinosEval's router: factoid or not, decided by the LLM or taken from the dataset."""

    type: Literal["question_classified"] = "question_classified"
    question_type: Literal["factoid", "non-factoid"]
    rationale: str = ""
    source: Literal["llm", "gold"] = "llm"


class KeyPointsExtracted(Event):
    """Key points drawn from one reference (`reference_index`, 0-based)."""

    type: Literal["key_points_extracted"] = "key_points_extracted"
    points: list[str]
    reference_index: int = 0


class EntailmentScored(Event):
    """NLI of (response as premise, key point as hypothesis)."""

    type: Literal["entailment_scored"] = "entailment_scored"
    response: str
    key_point: str
    reference_index: int = 0
    p_entail: float
    p_neutral: float
    p_contradict: float


class InstancesGenerated(Event):
    """Silver answers of graded quality (Excellent ... Bad) written from the reference."""

    type: Literal["instances_generated"] = "instances_generated"
    levels: dict[str, str]


class RankingProduced(Event):
    """A ranking of the labels, best first; `repaired` says the raw output had to be fixed, and how."""

    type: Literal["ranking_produced"] = "ranking_produced"
    ranking: list[str]
    scores: dict[str, float] = Field(default_factory=dict)
    repaired: bool = False
    repair: str = ""
    raw: list[str] = Field(default_factory=list)


class ChecklistAnswered(Event):
    """CheckEval: one checklist question answered (or not) for one response.

    `response` is the label ("Response k"); `answer` is None when the backbone gave no
    usable `Qk: yes|no` line for it (excluded from the score, never counted as no).
    """

    type: Literal["checklist_answered"] = "checklist_answered"
    dimension: str
    sub_dimension: str
    question: str
    question_id: str
    response: str
    answer: Literal["yes", "no"] | None = None
    position: int = 0
    """The question's 0-based place in the checklist, so a grid can list questions in checklist order."""


class PairJudged(Event):
    """One comparison of two responses shown as A (`first`) and B (`second`), by either pairwise judge.

    `choice` is the position the backbone preferred ("A", "B" or "tie"), None when its answer
    could not be parsed (never counted). `ranked_by` says how the judge uses it: "pair_votes"
    (CALF's `pairwise`: a pair asked in both orders, or alternated, its votes combined; a
    `rationale`) or "win_rate" (MinosEval's `pairwise-ab`: every pair once, A or B, ranked by
    win rate; `raw` is the answer the choice was read from, `rematch` a re-comparison of a
    win-rate tie with the order swapped). Sessions written before the two were one event
    stored MinosEval's as "pair_chosen": they load as this event (`upgrade_stored_artifact`).
    """

    type: Literal["pair_judged", "pair_chosen"] = "pair_judged"
    first: str
    second: str
    choice: Literal["A", "B", "tie"] | None = None
    rationale: str = ""
    ranked_by: Literal["pair_votes", "win_rate"] = "pair_votes"
    raw: str = ""
    rematch: bool = False
    reasked: bool = False

    @model_validator(mode="before")
    @classmethod
    def _old_name(cls, data: Any) -> Any:
        """A stored "pair_chosen" (the old name of MinosEval's choice) read as the one pairwise event."""
        return upgrade_stored_artifact(data) if isinstance(data, dict) else data

    @property
    def winner(self) -> str | None:
        """The preferred label, "tie", or None when unparsed."""
        return {"A": self.first, "B": self.second, "tie": "tie"}.get(self.choice or "")


def upgrade_stored_artifact(data: dict) -> dict:
    """A stored artifact in today's form: a "pair_chosen" (MinosEval's A / B choice, before both pairwise judges
    shared `PairJudged`) becomes a "pair_judged" ranked by win rate; anything else is returned as it is."""
    if data.get("type") != "pair_chosen":
        return data
    return {**data, "type": "pair_judged", "ranked_by": "win_rate"}


class StatementsExtracted(Event):
    """RAGAS faithfulness: the self-contained statements drawn from one response."""

    type: Literal["statements_extracted"] = "statements_extracted"
    response: str
    statements: list[str]


class StatementVerdict(BaseModel):
    """Whether one statement can be inferred from the context; None when unanswered."""

    model_config = ConfigDict(frozen=True)

    statement: str
    supported: bool | None = None
    reason: str = ""


class StatementsVerified(Event):
    """RAGAS faithfulness: each statement of one response checked against the context."""

    type: Literal["statements_verified"] = "statements_verified"
    response: str
    verdicts: list[StatementVerdict]


class QuestionsGenerated(Event):
    """RAGAS answer relevance: questions written back from one response, with each one's
    cosine similarity to the item's question."""

    type: Literal["questions_generated"] = "questions_generated"
    response: str
    questions: list[str]
    similarities: list[float] = Field(default_factory=list)


class ContextSentencesSelected(Event):
    """RAGAS context relevance: the context's sentences and which of them the backbone
    found needed to answer the question. `response` names the candidate when the
    candidates are contexts, else it is empty (the item's own context)."""

    type: Literal["context_sentences_selected"] = "context_sentences_selected"
    response: str = ""
    sentences: list[str]
    relevant: list[int] = Field(default_factory=list)


class Judgement(Event):
    """A judge's last word, in label space. The engine turns it into a `Verdict`.

    `ranking` (labels, best first) is derived from `scores` when the judge gives none;
    `winner` ("Response k" or "tie") is for judges that compare two responses natively.
    """

    type: Literal["judgement"] = "judgement"
    scores: dict[str, float]
    ranking: list[str] | None = None
    winner: str | None = None
    details: dict = Field(default_factory=dict)


class MemberVerdict(Event):
    """A jury: one member's verdict on the item in label space, or why it gave none (`status`, `reason`).
    `ranking` is strict (the member's own tie rule, `tie_digits`); `winner` ("Response k" or "tie") is set on
    two-response items; `artifacts` are the member's own steps (JSON), kept for `sessions show --item`.
    """

    type: Literal["member_verdict"] = "member_verdict"
    member: str
    status: Literal["done", "failed", "n/a"] = "done"
    scores: dict[str, float] = Field(default_factory=dict)
    ranking: list[str] = Field(default_factory=list)
    winner: str | None = None
    tie_digits: int = 4
    reason: str = ""
    details: dict = Field(default_factory=dict)
    artifacts: list[dict] = Field(default_factory=list)

    @field_validator("artifacts")
    @classmethod
    def _today_s_artifacts(cls, artifacts: list[dict]) -> list[dict]:
        """The member's stored steps in today's form (an old "pair_chosen" read as "pair_judged")."""
        return [upgrade_stored_artifact(a) for a in artifacts]


class ItemFailed(Event):
    """The item could not be judged; it is recorded, never scored, and retried on resume."""

    type: Literal["item_failed"] = "item_failed"
    reason: str
    error_type: str = ""


class ItemNotApplicable(Event):
    """The judge cannot judge this item (too few candidates, no reference...): recorded, never scored or failed."""

    type: Literal["item_not_applicable"] = "item_not_applicable"
    reason: str


ArtifactEvent = Annotated[
    Union[
        LLMCallFinished, QuestionClassified, KeyPointsExtracted, EntailmentScored, InstancesGenerated,
        RankingProduced, ChecklistAnswered, PairJudged, StatementsExtracted, StatementsVerified,
        QuestionsGenerated, ContextSentencesSelected, PointScored, ReferenceListBuilt, CandidatePlaced,
        StepsWritten, DimensionRated, MemberVerdict, Judgement, ItemFailed, InputTrimmed,
    ],
    Field(discriminator="type"),
]


class Verdict(Event):
    """A judge's result on one item, in candidate-id space, with everything it produced.

    `order` is the presentation permutation (candidate ids as Response 1..n);
    `preference` is relative to (`pair[0]`, `pair[1]`) = (A, B) for two-candidate items.
    `ranking` is strict, for display: candidates the judge scored equal keep presentation order.
    `tiers` is what the judge said, and what the metrics read: the same candidates best first,
    those it scored equal (`qatui.ties`) in one group. A verdict stored before `tiers` was kept
    gets it from its scores and ranking under the tie digits in the validation context
    (`{"tie_digits": n}`: the judge's stored option), else `ties.DEFAULT_DIGITS`.
    """

    type: Literal["verdict"] = "verdict"
    scores: dict[str, Annotated[float, Field(allow_inf_nan=False)]]
    """Finite: no judge gives NaN (one read back from an edited file was shown and exported as a done score)."""
    ranking: list[str]
    order: list[str]
    pair: tuple[str, str] | None = None
    preference: Preference | None = None
    tiers: list[list[str]] = Field(default_factory=list)
    details: dict = Field(default_factory=dict)
    artifacts: list[ArtifactEvent] = Field(default_factory=list)
    elapsed_s: float = 0.0
    version: str | None = None
    """The judge's version when it gave this verdict (`Judge.version`); None in a session stored before versions."""

    @model_validator(mode="before")
    @classmethod
    def _derived_tiers(cls, data: Any, info: ValidationInfo) -> Any:
        """`tiers` from the scores and ranking when absent (a verdict stored before it was kept)."""
        if not isinstance(data, dict) or data.get("tiers"):
            return data
        scores, ranking = data.get("scores"), data.get("ranking")
        if (not isinstance(scores, dict) or not isinstance(ranking, list)
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in scores.values())
                or not all(isinstance(cid, str) for cid in ranking)):
            return data  # field validation reports what is wrong
        digits = stored_digits(info.context if isinstance(info.context, dict) else None)
        return {**data, "tiers": ranking_tiers(scores, ranking, digits)}

    @property
    def labels(self) -> list[str]:
        """The labels the judge saw, in presentation order ("Response 1" is `order[0]`)."""
        return response_labels(self.order)

    @property
    def by_label(self) -> dict[str, str]:
        """Label -> candidate id: how the judge's label-space artifacts and details map back to candidates."""
        return candidates_by_label(self.order)

    def label_of(self, candidate: str) -> str | None:
        """The label `candidate` was shown under; None when it is not one of this item's candidates."""
        return label_of(self.order, candidate)

    @model_validator(mode="after")
    def _tiers_match_ranking(self) -> Verdict:
        """Refuse tiers that do not hold exactly the ranked candidates, each once."""
        flat = [cid for tier in self.tiers for cid in tier]
        if sorted(flat) != sorted(self.ranking) or len(set(flat)) != len(flat) or not all(self.tiers):
            raise ValueError("tiers must group exactly the ranked candidates, each once")
        return self


AnyEvent = Annotated[
    Union[
        RunStarted, RunFinished, ItemStarted, LLMCallFinished, LLMToken, QuestionClassified, KeyPointsExtracted,
        EntailmentScored, InstancesGenerated, RankingProduced, ChecklistAnswered, PairJudged, StatementsExtracted,
        StatementsVerified, QuestionsGenerated, ContextSentencesSelected, PointScored,
        ReferenceListBuilt, CandidatePlaced, StepsWritten, DimensionRated, MemberVerdict, Judgement, ItemFailed,
        InputTrimmed, ItemNotApplicable, Verdict,
    ],
    Field(discriminator="type"),
]

EVENT_ADAPTER: TypeAdapter[AnyEvent] = TypeAdapter(AnyEvent)


def event_from_dict(data: dict) -> Event:
    """Rebuild a stored event from its JSON form."""
    return EVENT_ADAPTER.validate_python(data)


EVENT_SINK: ContextVar[Callable[[Event], None] | None] = ContextVar("qatui_event_sink", default=None)
"""Where `emit` sends events; the engine binds it for each (item, judge) it runs."""


def emit(event: Event) -> None:
    """Send an event from deep inside a judge (an LLM call, an NLI batch) to the run's stream; outside a run
    (no sink bound: `qatui models --check`, a test) it is dropped."""
    if (sink := EVENT_SINK.get()) is not None:
        sink(event)


TOKENS_WATCHED: ContextVar[bool | Callable[[], bool]] = ContextVar("qatui_tokens_watched", default=True)
"""Whether the bound sink shows `LLMToken`s, or a function that says so at each call; the engine sets it
per (item, judge): the CLI watches none, the TUI the one task whose transcript is on screen."""


def tokens_watched() -> bool:
    """Whether anyone would see streamed tokens here, now: a sink is bound and it watches them."""
    watched = TOKENS_WATCHED.get()
    return EVENT_SINK.get() is not None and (watched() if callable(watched) else watched)
