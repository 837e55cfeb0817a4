"""The one model of evaluation data: items, their candidates and their human gold labels.

Every loader produces `Dataset` objects of these types, every judge reads them through
`ItemView` (see `qatui.data.presentation`), and the metrics compare verdicts with `Gold`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from qatui.events import Preference
from qatui.text import as_shown
from qatui.ties import plurality

QuestionType = Literal["factoid", "non-factoid"]
GoldKind = Literal["ranking", "pairwise", "ratings"]


Rating = Annotated[float, Field(strict=True, allow_inf_nan=False)]
"""A person's rating: a finite JSON number, never a string ("NaN", "2") or a boolean (`true` read as 1), which lax
parsing let into the gold, the figures then standing on fewer items for a reason they did not give."""


class _Strict(BaseModel):
    """A data record: unknown fields are errors, so a typo in a dataset never passes silently."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class RankingGold(_Strict):
    """A human ranking, best first; each tier holds candidate ids that are tied."""

    kind: Literal["ranking"] = "ranking"
    tiers: list[list[str]] = Field(min_length=1)

    @field_validator("tiers")
    @classmethod
    def _no_empty_or_repeated(cls, tiers: list[list[str]]) -> list[list[str]]:
        seen: set[str] = set()
        for tier in tiers:
            if not tier:
                raise ValueError("a tier of the ranking is empty")
            for cid in tier:
                if cid in seen:
                    raise ValueError(f"candidate {cid!r} appears twice in the ranking")
                seen.add(cid)
        return tiers

    def grade(self) -> dict[str, int]:
        """Higher is better: the best tier gets len(tiers) - 1, the worst 0."""
        top = len(self.tiers) - 1
        return {cid: top - i for i, tier in enumerate(self.tiers) for cid in tier}

    @property
    def candidate_ids(self) -> list[str]:
        """The candidate ids in gold order, best tier first."""
        return [cid for tier in self.tiers for cid in tier]


class PairwiseGold(_Strict):
    """Human preference between candidates `a` and `b`; one label per annotator."""

    kind: Literal["pairwise"] = "pairwise"
    a: str
    b: str
    labels: list[Preference] = Field(min_length=1)
    pair_type: str | None = None

    @model_validator(mode="after")
    def _distinct(self) -> PairwiseGold:
        if self.a == self.b:
            raise ValueError("a pairwise label needs two different candidates")
        return self

    @property
    def label(self) -> Preference:
        """The label most annotators gave; a tie when two or more share the most (`ties.plurality`)."""
        return plurality(self.labels)


class RatingsGold(_Strict):
    """Human ratings per candidate per dimension (e.g. SummEval's coherence 1-5)."""

    kind: Literal["ratings"] = "ratings"
    ratings: dict[str, dict[str, Rating]] = Field(min_length=1)

    @property
    def dimensions(self) -> list[str]:
        """The rating dimensions any candidate has, in first-seen order."""
        dims: dict[str, None] = {}
        for per_dim in self.ratings.values():
            dims.update(dict.fromkeys(per_dim))
        return list(dims)


Gold = Annotated[Union[RankingGold, PairwiseGold, RatingsGold], Field(discriminator="kind")]


def same_when_shown(names: Iterable[str]) -> tuple[str, str] | None:
    """The first two of `names` that are different strings shown alike (`as_shown`), else None."""
    seen: dict[str, str] = {}
    for name in names:
        shown = as_shown(name)
        if shown in seen and seen[shown] != name:
            return seen[shown], name
        seen.setdefault(shown, name)
    return None


class Item(_Strict):
    """One question with its references, optional RAG context and candidate responses."""

    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    references: list[str] = Field(default_factory=list)
    context: list[str] = Field(default_factory=list)
    candidates: dict[str, str] = Field(min_length=1)
    question_type: QuestionType | None = None
    language: str | None = None
    gold: Gold | None = None
    meta: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id")
    @classmethod
    def _id_without_edge_spaces(cls, item_id: str) -> str:
        """An id that starts or ends with whitespace shows as the id without it: "q1 " beside "q1" read as one item
        on every screen, and a results file's row for one (its cells read stripped) was scored on the other."""
        if item_id != item_id.strip():
            raise ValueError(f"an item id must not start or end with whitespace ({ascii(item_id)}): it shows as "
                             f"{ascii(item_id.strip())}; remove it")
        return item_id

    @field_validator("references", "context")
    @classmethod
    def _no_blank_texts(cls, texts: list[str]) -> list[str]:
        return [t for t in texts if t and t.strip()]

    @field_validator("candidates")
    @classmethod
    def _names_shown_apart(cls, candidates: dict[str, str]) -> dict[str, str]:
        """Two names that differ only in how their Unicode is composed ("café" as one letter é, or as e and a
        combining accent) or in an invisible character (a zero-width space) show as one name on every screen: a
        verdict between them could not be read."""
        if "" in candidates or any(not cid.strip() for cid in candidates):  # as an item id: shown blank everywhere
            raise ValueError("a candidate's name (its key) must not be empty or blank")
        if edged := next((cid for cid in candidates if cid != cid.strip()), None):  # "r1 " shows as "r1"
            raise ValueError(f"a candidate's name must not start or end with whitespace ({ascii(edged)}): it shows "
                             f"as {ascii(edged.strip())}; remove it")
        clash = same_when_shown(candidates)
        if clash:
            raise ValueError(f"candidates {ascii(clash[0])} and {ascii(clash[1])} differ only in how their Unicode "
                             "is composed or in invisible characters, so they show as the same name; rename one")
        return candidates

    @model_validator(mode="after")
    def _gold_names_known_candidates(self) -> Item:
        gold = self.gold
        if gold is None:
            return self
        if isinstance(gold, RankingGold):
            named = gold.candidate_ids
        elif isinstance(gold, PairwiseGold):
            named = [gold.a, gold.b]
        else:
            named = list(gold.ratings)
        unknown = [cid for cid in named if cid not in self.candidates]
        if unknown:
            raise ValueError(f"gold names unknown candidate(s) {unknown}; candidates are {list(self.candidates)}")
        return self

    @property
    def pair(self) -> tuple[str, str] | None:
        """(A, B), the two candidates a preference is about: the pairwise gold's, in its orientation, else a
        two-candidate item's in the file's order; None for an item of more candidates without a pairwise gold.
        A judge's preference, people's labels and an imported A / B verdict all read this one orientation."""
        if isinstance(self.gold, PairwiseGold):
            return (self.gold.a, self.gold.b)
        if len(self.candidates) == 2:
            first, second = self.candidates
            return (first, second)
        return None


class Dataset(BaseModel):
    """A loaded dataset: its items plus where they came from."""

    model_config = ConfigDict(frozen=True)

    name: str
    path: str
    format: str
    content_hash: str
    items: list[Item]
    _whole: Dataset | None = PrivateAttr(default=None)

    def __len__(self) -> int:
        return len(self.items)

    @property
    def gold_kinds(self) -> Counter[str]:
        """How many items have each kind of gold (ranking, pairwise, ratings)."""
        return Counter(item.gold.kind for item in self.items if item.gold is not None)

    @property
    def gold_kind(self) -> GoldKind | None:
        """The gold kind most of its items have (ranking before pairwise before ratings on a draw), None without gold:
        the kind the table's columns follow and the kind people label on an item without gold of its own."""
        counts = self.gold_kinds
        kind = max(("ranking", "pairwise", "ratings"), key=lambda k: counts[k])  # the first of the most
        return kind if counts[kind] else None

    @property
    def languages(self) -> Counter[str]:
        """How many items are in each language (given or detected)."""
        from qatui.data.language import item_language

        return Counter(item_language(item) for item in self.items)

    @property
    def whole(self) -> Dataset:
        """The dataset file all of whose items this one is, or some of (`subset`): what a rule of the whole file reads
        (people's labels of items past a session's `--limit`, the main gold kind a label follows)."""
        return self._whole or self

    def subset(self, items: list[Item]) -> Dataset:
        """The dataset with only `items` (some of its own), knowing its `whole`."""
        part = self.model_copy(update={"items": items})
        part._whole = self.whole
        return part

    def limited(self, limit: int | None) -> Dataset:
        """The first `limit` items (all when None)."""
        if limit is None or limit >= len(self.items):
            return self
        return self.subset(self.items[:limit])

    def chosen(self, item_ids: Iterable[str]) -> Dataset:
        """Only the items named in `item_ids`, in the dataset's order (an evaluation on chosen labelled items)."""
        wanted = set(item_ids)
        return self.subset([item for item in self.items if item.id in wanted])

    def of_session(self, ds: Mapping[str, Any]) -> Dataset:
        """The items a session ran on, from its `meta["dataset"]`: the first `limit`, and of those only its
        `item_ids` when it ran on chosen items; every reader of a session's items goes through here."""
        subset = self.limited(ds.get("limit"))
        return subset if ds.get("item_ids") is None else subset.chosen(ds["item_ids"])
