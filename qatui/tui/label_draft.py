"""The label being made on one item, before it is saved: the Label screen's state, kept apart from drawing.

Rankings are an order of the responses in which a response may be tied with the one above
it (the same tier); pairs a choice A / B / tie; ratings a value per response and dimension.
"""

from __future__ import annotations

from qatui.data.labels import Label, pair_of, rating_dimensions
from qatui.data.model import GoldKind, Item, Preference
from qatui.text import plural


class Draft:
    """One item's label in the making: `order` shown top to bottom, a cursor on it, and the kind's choices."""

    def __init__(self, item: Item, kind: GoldKind, order: list[str], saved: Label | None = None,
                 scale: tuple[int, int] = (1, 5)) -> None:
        """Start from `saved` when the item has a label, else from the presentation `order`, nothing chosen."""
        self.item, self.kind, self.scale = item, kind, scale
        self.order = list(order)
        self.tied: set[str] = set()
        """Responses tied with the one above them (sharing its tier)."""
        self.preference: Preference | None = None
        self.dimensions = rating_dimensions(item)
        self.dimension = 0
        self.ratings: dict[str, dict[str, float]] = {}
        self.cursor = 0
        if saved is not None and saved.kind == kind:
            self._load(saved)

    def _load(self, saved: Label) -> None:
        """Take a saved label's choices."""
        if saved.kind == "ranking":
            self.order = [cid for tier in saved.tiers or [] for cid in tier]
            self.tied = {cid for tier in saved.tiers or [] for cid in tier[1:]}
        elif saved.kind == "pairwise":
            self.preference = saved.preference
        else:
            self.ratings = {cid: dict(dims) for cid, dims in (saved.ratings or {}).items()}

    @property
    def current(self) -> str:
        """The candidate id under the cursor."""
        return self.order[self.cursor]

    def step(self, delta: int) -> None:
        """Move the cursor, staying on the list."""
        self.cursor = max(0, min(len(self.order) - 1, self.cursor + delta))

    def move(self, delta: int) -> None:
        """Move the response under the cursor up (-1) or down (+1) the ranking, the cursor with it."""
        target = self.cursor + delta
        if self.kind != "ranking" or not 0 <= target < len(self.order):
            return
        self.order[self.cursor], self.order[target] = self.order[target], self.order[self.cursor]
        self.cursor = target
        self.tied.discard(self.order[0])

    def toggle_tie(self) -> None:
        """Tie the response under the cursor with the one above it, or untie it."""
        if self.kind == "ranking" and self.cursor > 0:
            self.tied ^= {self.current}

    def choose(self, preference: Preference) -> None:
        """A pair's choice: A, B or tie."""
        self.preference = preference

    def rate(self, value: int) -> None:
        """Rate the response under the cursor on the current dimension, within the scale."""
        if self.scale[0] <= value <= self.scale[1]:
            self.ratings.setdefault(self.current, {})[self.dimensions[self.dimension]] = float(value)

    def next_dimension(self) -> None:
        """Rate the next dimension (ratings items with several)."""
        self.dimension = (self.dimension + 1) % len(self.dimensions)

    def tiers(self) -> list[list[str]]:
        """The ranking as tiers, best first."""
        tiers: list[list[str]] = []
        for cid in self.order:
            if tiers and cid in self.tied:
                tiers[-1].append(cid)
            else:
                tiers.append([cid])
        return tiers

    def missing(self) -> str | None:
        """What the label still lacks before it can be saved, None when complete."""
        if self.kind == "pairwise" and self.preference is None:
            return "choose A, B or tie"
        if self.kind == "ratings":
            unrated = [(cid, dim) for cid in self.order for dim in self.dimensions if dim not in self.ratings.get(cid, {})]
            if unrated:
                return f"{plural(len(unrated), 'rating')} to give"
        return None

    def label(self) -> Label:
        """The finished label (check `missing` first)."""
        if self.kind == "ranking":
            return Label(item_id=self.item.id, kind="ranking", tiers=self.tiers())
        if self.kind == "pairwise":
            a, b = pair_of(self.item)
            return Label(item_id=self.item.id, kind="pairwise", a=a, b=b, preference=self.preference)
        return Label(item_id=self.item.id, kind="ratings", ratings=self.ratings)
