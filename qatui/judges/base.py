"""What a judge is: a named async generator over one `ItemView`, with declared needs.

A judge yields events as it works and ends with one `Judgement`. It declares what the
data must give it (references, context) so that asking for a judge the dataset cannot
feed fails before any work, and it takes options validated by its own pydantic model.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel, ConfigDict

from qatui.events import Event
from qatui.text import have, plural

if TYPE_CHECKING:
    from qatui.data.model import Dataset, Item
    from qatui.data.presentation import ItemView
    from qatui.judges.resources import Resources


class JudgeOptions(BaseModel):
    """Options every judge accepts; subclasses add their own. Unknown keys are an error."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    tie_digits: int = 4
    """Two scores equal after rounding to this many digits are a tie in pairwise mode."""


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

    uses_llm: ClassVar[bool] = False
    """True when the judge calls the run's backbone (its calls are cached and counted)."""
    uses_nli: ClassVar[bool] = False
    """True when the judge scores with the run's NLI model."""
    uses_embedder: ClassVar[bool] = False
    """True when the judge embeds with the run's sentence embedder."""

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

    def unmet_needs(self, dataset: Dataset) -> list[str]:
        """Why this judge cannot run on `dataset` (empty when it can)."""
        problems = []
        items = dataset.items
        if self.needs.reference and (n := sum(1 for it in items if not it.references)):
            problems.append(f"needs a reference answer, but {n} of {plural(len(items), 'item')} {have(n)} none")
        if self.needs.context and (n := sum(1 for it in items if not it.context)):
            problems.append(f"needs retrieved context, but {n} of {plural(len(items), 'item')} {have(n)} none")
        if (n := sum(1 for it in items if len(it.candidates) < self.needs.min_candidates)):
            problems.append(f"needs at least {self.needs.min_candidates} candidates, but {plural(n, 'item')} "
                            f"{have(n)} fewer")
        return problems

    def expected_calls(self, item: Item) -> tuple[int, int] | None:
        """Backbone calls this judge makes on `item`, as (fewest, most), before any cache.

        Shown before a run starts; None when the judge cannot say. Judges that never call
        the backbone make none; LLM judges override this with their own count.
        """
        return None if self.uses_llm else (0, 0)

    def describe_options(self) -> dict:
        """The options as stored in a session (JSON-safe)."""
        return self.options.model_dump(mode="json")
