"""What a judge is: a named async generator over one `ItemView`, with declared needs.

A judge yields events as it works and ends with one `Judgement`. It declares what the
data must give it (references, context) so that asking for a judge the dataset cannot
feed fails before any work, and it takes options validated by its own pydantic model.
A judge's calls for one item are asked at once and taken as they finish (`as_they_finish`;
an error waits for the calls in flight, `calls_paid_for`).
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from qatui.events import Event
from qatui.text import plural
from qatui.ties import DEFAULT_DIGITS, MAX_DIGITS

if TYPE_CHECKING:
    from qatui.data.model import Dataset, Item
    from qatui.data.presentation import ItemView
    from qatui.judges.resources import Resources


T = TypeVar("T")

MAX_TIE_DIGITS = MAX_DIGITS
"""The most digits a tie rule rounds to (`qatui.ties`, the one home of the rule and its bounds)."""
MAX_REPEATS = 20
"""The most times one judgement may be asked (`repeats`): each repeat is a full set of backbone calls."""


class JudgeOptions(BaseModel):
    """Options every judge accepts; subclasses add their own. Unknown keys are an error."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True, allow_inf_nan=False)

    tie_digits: int = Field(DEFAULT_DIGITS, ge=0, le=MAX_TIE_DIGITS)  # the rule itself: qatui/ties.py
    """Two scores equal once rounded to this many digits are a tie: the judge said they are equal, in its
    tied groups and in an A / B / tie preference alike (presentation order only for display)."""
    repeats: int = Field(1, ge=1, le=MAX_REPEATS)
    """Ask each judgement this many times with distinct seeds; the verdict is their aggregate (mean of scores,
    majority of choices, Borda of rankings) and the judge's agreement with itself is reported. A judge that
    calls no backbone answers the same every time: it is judged once."""


@dataclass(frozen=True)
class Needs:
    """What a judge needs from each item."""

    reference: bool = False
    context: bool = False
    min_candidates: int = 1


class Judge(ABC):
    """Base of every judge. Subclasses set `name`, `summary`, `needs`, `Options`."""

    name: ClassVar[str]
    summary: ClassVar[str]
    needs: ClassVar[Needs] = Needs()
    Options: ClassVar[type[JudgeOptions]] = JudgeOptions
    reproduces: ClassVar[tuple[str, ...]] = ()
    """The papers' rows this judge reproduces, by their id in the fidelity ledger (`docs/FIDELITY.md`),
    where each is marked reproduced; `qatui judges` prints them and a test holds the two to each other."""

    uses_llm: ClassVar[bool] = False
    """True when the judge calls the run's backbone (its calls are cached and counted)."""
    uses_nli: ClassVar[bool] = False
    """True when the judge scores with the run's NLI model."""
    uses_embedder: ClassVar[bool] = False
    """True when the judge embeds with the run's sentence embedder."""
    extras: ClassVar[tuple[str, ...]] = ()
    """The pip extras (`qatui.extras`) the judge needs whatever the run's models; those of the backbone, NLI
    model and embedder it uses are worked out from the run (`Resources.needed_extras`)."""

    prompt_methods: ClassVar[tuple[str, ...]] = ()
    """The prompt files this judge loads (`qatui.judges.prompts.load_prompts` methods, e.g. `("pointwise", "fence")`):
    their texts, in every language, are its `definition`. A test runs each judge and fails on a method it loads
    without declaring it."""
    answer_schemas: ClassVar[tuple[Any, ...]] = ()
    """The shapes of the backbone's answers it asks for: pydantic models, or callables of no argument returning
    a model or a JSON schema (a schema sized by the item, at a fixed size). Part of its `version`."""
    revision: ClassVar[int] = 1
    """Bumped by hand when a change to the judge's code changes its verdicts: part of its `version`."""

    def __init__(self, options: JudgeOptions | None = None, resources: Resources | None = None) -> None:
        self.options = options if options is not None else self.Options()
        self._resources = resources

    @property
    def resources(self) -> Resources:
        """The run's shared models; a judge built without them gets the config defaults."""
        if self._resources is None:
            from qatui.config import Config
            from qatui.judges.resources import Resources

            self._resources = Resources(Config())
        return self._resources

    @abstractmethod
    def judge(self, view: ItemView) -> AsyncIterator[Event]:
        """Yield this judge's events for one item, ending with a `Judgement`."""

    def item_problem(self, item: Item) -> str | None:
        """Why this judge cannot judge `item` (None when it can): such an item is *not applicable*.

        A not-applicable item is recorded with this reason, never judged, never scored and
        never counted as a failure; the run goes on with the others. Subclasses add their own.
        """
        if self.needs.reference and not item.references:
            return "needs a reference answer, and the item has none"
        if self.needs.context and not item.context:
            return "needs retrieved context, and the item has none"
        if len(item.candidates) < self.needs.min_candidates:
            return (f"needs at least {self.needs.min_candidates} candidates, and the item has "
                    f"{len(item.candidates)}")
        return None

    def unmet_needs(self, dataset: Dataset) -> list[str]:
        """Why this judge cannot run on `dataset` at all: no item it can judge (each reason with its count).

        Empty when at least one item is applicable: the others are recorded as not applicable.
        """
        items = dataset.items
        reasons = Counter(problem for item in items if (problem := self.item_problem(item)) is not None)
        if not items or sum(reasons.values()) < len(items):
            return []
        return [f"{reason} ({n} of {plural(len(items), 'item')})" for reason, n in reasons.most_common()]

    def not_applicable(self, dataset: Dataset) -> dict[str, str]:
        """Item id -> the reason, for every item of `dataset` this judge cannot judge."""
        return {item.id: problem for item in dataset.items if (problem := self.item_problem(item)) is not None}

    def expected_calls(self, item: Item) -> tuple[int, int] | None:
        """Backbone calls this judge makes on `item`, as (fewest, most), before any cache.

        Shown before a run starts; None when the judge cannot say. Judges that never call
        the backbone make none; LLM judges override this with their own count.
        """
        return None if self.uses_llm else (0, 0)

    def parts(self) -> list[Judge]:
        """The judges whose models this one uses, each with its own `resources`: itself; a jury's members."""
        return [self]

    embeds_answers_of: ClassVar[str] = ""
    """The `purpose` of the backbone call whose answer holds texts the judge then embeds ("" when none): what
    `run --plan` reads in a cached answer (`embedded_from`) or estimates from that call's answer length."""

    def embedded_texts(self, item: Item) -> list[str]:
        """The texts of `item` the judge embeds that are known before the run (`run --plan` counts them): none here;
        a judge that uses the embedder says which."""
        return []

    def embedded_from(self, answer: str) -> list[str]:
        """The texts the judge embeds out of one answer of its `embeds_answers_of` call (as the run reads them)."""
        return []

    def definition(self) -> dict[str, str]:
        """Every text that defines the judge's prompts, by file name: each prompt file it loads, in every language
        (`prompt_methods`, and the NLI prompt when its NLI model is the backbone). {} for a judge with no prompt."""
        from qatui.judges.prompts import prompt_texts

        return prompt_texts(self._methods())

    def _methods(self) -> tuple[str, ...]:
        """The prompt methods the judge loads on this run's models: its own, and `nli` when the backbone is its NLI."""
        through_backbone = self.uses_nli and "llm" in self.model_names().values()
        return tuple(dict.fromkeys((*self.prompt_methods, *(("nli", "fence") if through_backbone else ()))))

    def model_names(self) -> dict[str, str]:
        """The models, other than the backbone, whose answers are the judge's verdicts: its NLI models (English and
        Chinese items) and its sentence embedder, by role. Part of its `version`; the backbone is recorded apart."""
        names: dict[str, str] = {}
        if self.uses_nli:
            names |= {"nli": self.resources.nli_name, "nli_zh": self.resources.nli_name_for("zh")}
        if self.uses_embedder:
            names["embedder"] = self.resources.embedder_name
        return names

    def schema_documents(self) -> list[Any]:
        """The JSON schemas of the answers it asks for (`answer_schemas`, and NLI's through the backbone)."""
        from qatui.judges.schemas import schema_document

        shapes = list(self.answer_schemas)
        if "nli" in self._methods():
            from qatui.judges.llm_nli import labels_schema

            shapes.append(lambda: labels_schema(3))
        return [schema_document(shape) for shape in shapes]

    def version_document(self) -> dict[str, Any]:
        """Everything the version hashes: name, `revision`, the options as stored, `definition`, the answer schemas
        and `model_names`."""
        return {"judge": self.name, "revision": self.revision, "options": self.describe_options(),
                "definition": self.definition(), "schemas": self.schema_documents(), "models": self.model_names()}

    @property
    def version(self) -> str:
        """12 hex characters naming what can change this judge's verdicts (`version_document`): one word changed in
        one of its prompt files, an option, an answer schema or its `revision` gives another version."""
        from qatui.store.judge_versions import version_of

        return version_of(self.version_document())

    def earlier_versions(self) -> set[str]:
        """The versions this very judge had under an earlier rule of what a version hashes (none for most): a session
        stored then resumes as one of this judge, not of a changed one."""
        return set()

    def describe_options(self) -> dict:
        """The options as stored in a session (JSON-safe); `repeats` only when above 1, so the options of a
        session stored before repeats existed still match a run without them (`qatui table` reuses it)."""
        options = self.options.model_dump(mode="json")
        if options.get("repeats") == 1:
            del options["repeats"]
        return options


@asynccontextmanager
async def calls_paid_for(tasks: list[asyncio.Future]) -> AsyncIterator[None]:
    """The rule for a judge's calls running at once (`tasks`), around the code that takes their results.

    An error there ends the item, but only once the item's other calls have ended: a request in flight is
    paid for, so its answer must reach the call cache (a resume then asks it no more) and its cost the
    item's record (the cost cap refusing one order of a pair while the other was answered asked that one
    twice, and its cost went unrecorded). Cancelled from outside (pause, Ctrl-C), or closed by the consumer,
    the calls still running are cancelled at once.
    """
    try:
        yield
    except asyncio.CancelledError:
        raise
    except Exception:
        if pending := [task for task in tasks if not task.done()]:
            await asyncio.gather(*pending, return_exceptions=True)
        raise
    finally:
        for task in tasks:
            task.cancel()


async def as_they_finish(calls: Iterable[Awaitable[T]]) -> AsyncIterator[T]:
    """Each call's result as soon as it is ready. The backbone's own semaphore bounds how many run at once.

    A failed call ends the item once the others have ended (`calls_paid_for`, the rule's one home).
    """
    tasks = [asyncio.ensure_future(call) for call in calls]
    async with calls_paid_for(tasks):
        for next_done in asyncio.as_completed(tasks):
            yield await next_done
