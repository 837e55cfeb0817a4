"""People's labels on a dataset's items, and how they become the `Gold` the metrics read.

A label is one annotator's judgement of one item: a ranking of its responses in tiers (ties
share a tier), a preference A / B / tie between the two responses of a pair, or ratings of
each response per dimension. `label_gold` turns one label into the item's gold, and
`majority_gold` several annotators' labels into one, so judges are measured against people
by the same code that measures them against the dataset's gold (`metrics.summary`).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from itertools import combinations

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from qatui.data.model import Dataset, Gold, GoldKind, Item, PairwiseGold, Preference, RankingGold, Rating, RatingsGold
from qatui.safe_read import Refused, loads_json
from qatui.errors import LabelError, first_problem
from qatui.ties import plurality

ANNOTATOR = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
"""An annotator's name: letters, digits, '.', '_' and '-', at most 64, starting with a letter or digit (it names a
folder: never a hidden one, nor one a command line reads as an option)."""
OVERALL = "overall"
"""The rating dimension of an item whose dataset names none."""


class Label(BaseModel):
    """One annotator's label on one item: `tiers` (ranking), `preference` of `a` over `b` (pairwise) or `ratings`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    item_id: str = Field(min_length=1)
    kind: GoldKind
    tiers: list[list[str]] | None = None
    a: str | None = None
    b: str | None = None
    preference: Preference | None = None
    ratings: dict[str, dict[str, Rating]] | None = None
    updated: str = ""
    """When it was given: an ISO 8601 time with its offset (`2026-12-02T14:05:00+01:00`), or empty when unknown."""

    @field_validator("updated")
    @classmethod
    def _a_time(cls, value: str) -> str:
        """Only a time: a label file is another person's, and its `updated` is shown and exported (an escape
        sequence or a formula in it was kept as given)."""
        from datetime import datetime

        if not value:
            return value
        try:
            if len(value) > 40:
                raise ValueError(value)
            datetime.fromisoformat(value)
        except ValueError:
            raise ValueError("updated is an ISO 8601 time, e.g. 2026-12-02T14:05:00+01:00, or empty") from None
        return value

    @model_validator(mode="after")
    def _fields_of_its_kind(self) -> Label:
        needed = {"ranking": ("tiers",), "pairwise": ("a", "b", "preference"), "ratings": ("ratings",)}[self.kind]
        missing = [name for name in needed if getattr(self, name) is None]
        if missing:
            raise ValueError(f"a {self.kind} label needs {', '.join(missing)}")
        return self

    def as_gold(self) -> Gold:
        """The label as the gold model of its kind (validated: no empty or repeated tier)."""
        if self.kind == "ranking":
            return RankingGold(tiers=self.tiers or [])
        if self.kind == "pairwise":
            return PairwiseGold(a=self.a or "", b=self.b or "", labels=[self.preference or "tie"])
        return RatingsGold(ratings=self.ratings or {})


def label_kind(item: Item, dataset_kind: str | None = None) -> GoldKind:
    """What people label on `item`: its gold's kind, else ratings on a ratings dataset, a pair, or a ranking."""
    if item.gold is not None:
        return item.gold.kind
    if dataset_kind == "ratings":
        return "ratings"
    return "pairwise" if len(item.candidates) == 2 else "ranking"


def pair_of(item: Item) -> tuple[str, str]:
    """The two candidates a pairwise label compares, as (A, B): `Item.pair`, the orientation of every preference
    (a pairwise label is made only on an item that has one: `label_kind`)."""
    pair = item.pair
    if pair is None:
        raise ValueError(f"item {item.id!r} has {len(item.candidates)} responses and no pairwise gold: no pair")
    return pair


def rating_dimensions(item: Item) -> list[str]:
    """The dimensions people rate on `item`: its gold's, else one `overall`."""
    return item.gold.dimensions if isinstance(item.gold, RatingsGold) else [OVERALL]


DEFAULT_SCALE = (1.0, 5.0)
"""The ratings scale of a dataset whose gold has no ratings, and the least `rating_scale` gives."""
SCALE_BOUND = 1000.0
"""The highest HIGH `--scale` takes."""


def rating_scale(dataset: Dataset) -> tuple[float, float]:
    """The ratings people give on `dataset`: 1-5, widened to hold its gold ratings in whole numbers (means up to 7.2
    make 1-8; a 0-1 gold, 0-5). Never narrowed to the gold's own span: one item rated 2 and 4 is no 2-4 scale, and
    a person's 5 on it is a rating. One rule for the Label screen's keys and `labels import`."""
    values = [v for item in dataset.items if isinstance(item.gold, RatingsGold)
              for dims in item.gold.ratings.values() for v in dims.values()]
    low, high = DEFAULT_SCALE
    return (float(min(low, math.floor(min(values, default=low)))),
            float(max(high, math.ceil(max(values, default=high)))))


def parse_scale(text: str) -> tuple[float, float]:
    """`--scale LOW-HIGH` (`1-10`, `0-100`, `1.5-4.5`): LOW below HIGH, both from 0 to 1000 (a 0-100 slider fits; a
    typo of 1e9 does not); ValueError otherwise."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*-\s*(\d+(?:\.\d+)?)\s*", text or "")
    if not match:
        raise ValueError(f"a scale is LOW-HIGH, e.g. 1-10, not {(text or '')[:40]!r}")
    low, high = float(match[1]), float(match[2])
    if not low < high <= SCALE_BOUND:
        raise ValueError(f"a scale's LOW is below its HIGH, and HIGH at most {SCALE_BOUND:g}: not {text.strip()!r}")
    return low, high


def scale_text(scale: tuple[float, float]) -> str:
    """`1-5`: a scale as people write it."""
    return f"{scale[0]:g}-{scale[1]:g}"


@dataclass(frozen=True)
class LabelRules:
    """What a label on an item of one dataset must be: the dataset's main gold kind (what an item without gold is
    labelled with, `label_kind`) and the ratings scale (`rating_scale`, or one given with `--scale`)."""

    dataset_kind: str | None
    scale: tuple[float, float]

    @classmethod
    def of(cls, dataset: Dataset, scale: tuple[float, float] | None = None) -> LabelRules:
        """The rules of `dataset` (the whole file's, so a pass over its first items checks as its reader does)."""
        return cls(dataset.gold_kind, scale or rating_scale(dataset))


def check_label(item: Item, label: Label, rules: LabelRules) -> Label:
    """`label`, checked against the item it labels and the dataset's rules; ValueError saying what is wrong.

    Its kind is the item's (`label_kind`: a ranking of a pair's two responses would be measured as a ranking against
    judges that said A or B); a ranking names every response once; a pair is the item's, in its order; ratings rate
    the item's responses on its dimensions (`rating_dimensions`), each on the scale."""
    expected = label_kind(item, rules.dataset_kind)
    if label.kind != expected:
        raise ValueError(f"item {item.id!r} is labelled with a {expected} label, not a {label.kind} one")
    ids = set(item.candidates)
    if label.kind == "ranking":
        named = [cid for tier in label.tiers or [] for cid in tier]
        label.as_gold()
        if set(named) != ids or len(named) != len(ids):
            raise ValueError(f"a ranking must name every response once: {sorted(ids)}, got {named}")
    elif label.kind == "pairwise":
        if (label.a, label.b) != pair_of(item):
            raise ValueError(f"the pair is {pair_of(item)}, not {(label.a, label.b)}")
    else:
        unknown = sorted(set(label.ratings or {}) - ids)
        if unknown:
            raise ValueError(f"ratings name unknown responses {unknown}; responses are {sorted(ids)}")
        if not label.ratings or not all(label.ratings.values()):  # {} or {"r1": {}}: a label that rates nothing
            raise ValueError('ratings rate at least one response on at least one dimension: {"r1": {"overall": 4}}')
        dimensions = rating_dimensions(item)
        low, high = rules.scale
        for cid, per_dim in label.ratings.items():
            if stray := sorted(set(per_dim) - set(dimensions)):
                raise ValueError(f"response {cid} is rated on {stray[0]!r}, not a dimension of this item "
                                 f"({', '.join(dimensions)})")
            for dim, value in per_dim.items():
                if not low <= value <= high:
                    raise ValueError(f"response {cid}'s {dim} rating {value:g} is off the scale "
                                     f"{scale_text(rules.scale)}")
    return label


def label_gold(item: Item, label: Label | None) -> Gold | None:
    """One annotator's label as the item's gold; None when the item is unlabelled."""
    return None if label is None else label.as_gold()


def is_split(labels: list[Label]) -> bool:
    """Whether people's labels of an item give no reference: their majority would be a tie nobody (or not most) gave.

    A pair: two or more labels share the most. A ranking: two responses share a mean grade (`majority_gold`) though
    most annotators did not tie them (ana a > b, bo b > a: a = b is nobody's ranking, and a judge that tied them
    scored tau 1 against it, above one that agreed with ana exactly). Never for ratings, whose majority is a mean.
    """
    if not labels:
        return False
    if labels[0].kind == "pairwise":
        return plurality([x.preference for x in labels], tie=SPLIT) is SPLIT
    if labels[0].kind != "ranking":
        return False
    grades = [label.as_gold().grade() for label in labels]
    means = _mean_grades(labels)
    shared = [(x, y) for x, y in combinations(sorted(means), 2) if means[x] == means[y]]
    return any(plurality([(g[x] > g[y]) - (g[x] < g[y]) for g in grades], tie=SPLIT) != 0 for x, y in shared)


SPLIT = object()
"""`plurality`'s answer for labels sharing the most, told apart from a tie most people gave."""


def _mean_grades(labels: list[Label]) -> dict[str, float]:
    """Each response's mean grade over the ranking labels (a grade counts tiers from the bottom, scaled to 0..1),
    rounded to 9 digits so equal sums read equal."""
    grades: Counter[str] = Counter()
    for label in labels:
        gold = label.as_gold()
        top = max(len(gold.tiers) - 1, 1)
        grades.update({cid: grade / top for cid, grade in gold.grade().items()})
    return {cid: round(total / len(labels), 9) for cid, total in grades.items()}


def majority_gold(item: Item, labels: list[Label]) -> Gold | None:
    """Several annotators' labels on one item as one gold; None when nobody labelled it, or people split.

    Pairs: the label most annotators gave (a tie only when most said tie); None when two or more labels share the
    most (A / B, A / tie, A, A, B, B): people split, so there is no reference, as in the human ceiling. Read as a
    tie, it was a tie nobody gave, and a judge that always says tie scored every split item (`is_split`). Rankings:
    responses ordered by their mean grade across annotators, equal means tied where most annotators tied them;
    None where equal means stand for people who split (`is_split`). Ratings: the mean rating per response and
    dimension.
    """
    if not labels or is_split(labels):
        return None
    kind = labels[0].kind
    if kind == "pairwise":
        a, b = pair_of(item)
        return PairwiseGold(a=a, b=b, labels=[plurality([x.preference for x in labels])])
    if kind == "ranking":
        means = _mean_grades(labels)
        return RankingGold(tiers=[[c for c in item.candidates if means[c] == m]  # every response: `check_label`
                                  for m in sorted({means[c] for c in item.candidates}, reverse=True)])
    sums: dict[str, dict[str, list[float]]] = {}
    for label in labels:
        for cid, per_dim in (label.ratings or {}).items():
            for dim, value in per_dim.items():
                sums.setdefault(cid, {}).setdefault(dim, []).append(value)
    return RatingsGold(ratings={cid: {dim: sum(v) / len(v) for dim, v in dims.items()} for cid, dims in sums.items()})


# -- the label file's text form (export / import) ---------------------------------------------------------


def _reads_back(cid: str) -> bool:
    """Whether a response id reads back from `r2>r4=r1>r3`: no `>` or `=` in it, no space around it, no `[` first."""
    return not ({">", "="} & set(cid)) and cid == cid.strip() and not cid.startswith("[")


def label_text(label: Label) -> str:
    """The `label` cell of an export row: `r2>r4=r1>r3`, `A` / `B` / `tie`, or the ratings as JSON.

    A ranking whose ids would not read back from that form (`temp=0.8`, `a>b`, ` r1`) is its tiers as JSON,
    `[["temp=0.8"], ["temp=0.2"]]`: the export of such a dataset's labels was a file its import refused."""
    if label.kind == "ranking":
        tiers = label.tiers or []
        if not all(_reads_back(cid) for tier in tiers for cid in tier):
            return json.dumps(tiers, ensure_ascii=False)
        return ">".join("=".join(tier) for tier in tiers)
    if label.kind == "pairwise":
        return label.preference or ""
    return json.dumps(label.ratings, ensure_ascii=False, sort_keys=True)


def parse_label(item: Item, kind: str, text: str, rules: LabelRules, updated: str = "") -> Label:
    """A label read back from its `label_text`, checked against the item (`check_label`); ValueError saying what is
    wrong."""
    text = text.strip()
    if kind == "ranking" and text.startswith("["):  # tiers as JSON (`label_text`, for ids holding > or =)
        try:
            fields: dict = {"tiers": loads_json(text)}
        except Refused as exc:
            raise ValueError(exc.message("ranking", one_line_text=True)) from None
        except ValueError:
            raise ValueError(f'a ranking in JSON is a list of tiers like [["r2"], ["r4", "r1"]], not {text[:80]!r}'
                             ) from None
    elif kind == "ranking":
        tiers = [[cid.strip() for cid in tier.split("=")] for tier in text.split(">")]
        if any(not cid for tier in tiers for cid in tier):
            raise ValueError(f"a ranking reads like r2>r4=r1>r3, not {text!r}")
        fields = {"tiers": tiers}
    elif kind == "pairwise":
        if text not in ("A", "B", "tie"):
            raise ValueError(f"a pairwise label is A, B or tie, not {text!r}")
        a, b = pair_of(item)
        fields = {"a": a, "b": b, "preference": text}
    elif kind == "ratings":
        try:
            fields = {"ratings": loads_json(text)}
        except Refused as exc:
            raise ValueError(exc.message("ratings", one_line_text=True)) from None
        except ValueError:
            raise ValueError(f'ratings are a JSON object like {{"r1": {{"overall": 4}}}}, not {text!r}') from None
    else:
        raise ValueError(f"kind is ranking, pairwise or ratings, not {kind!r}")
    try:
        label = Label(item_id=item.id, kind=kind, updated=updated, **fields)
        return check_label(item, label, rules)
    except ValidationError as e:
        where, _, message = first_problem(e)
        raise ValueError(f"{where}: {message}" if where else message) from None


def check_annotator(name: str) -> str:
    """`name` if it may name an annotator, else LabelError saying what a name may hold."""
    if not ANNOTATOR.fullmatch(name or ""):
        raise LabelError(f"annotator {name!r}: a name is 1 to 64 letters, digits, '.', '_' or '-', "
                           "starting with a letter or digit")
    return name
