"""Xu et al. 2023 expert pairwise preferences (LFQA-Eval): a folder of JSON lists, one file
per expert, or one such file.

One item per distinct pair (q_id, answer1, answer2) in file-name order, id `<q_id>-<k>`
(k-th pair of that question); every expert judgement adds a label ("Answer A" -> A,
"Answer B" -> B), one per expert: a second judgement of a pair by one annotator (or, for records naming none, from
one file) is refused, naming both records, since a copy of an expert's file in the folder counted that expert twice
and could turn people's split into a majority. Pair type from `answer1_label`: HH = human vs human, HM = human vs
model; the raw labels, DifficultToChoose, comments and annotators are kept in `meta` as
lists, one entry per judgement. There is no reference answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qatui.data.loaders._common import (
    build_item,
    field_error,
    first_list_element,
    json_records,
    text_field,
    unique_ids,
)
from qatui.data.model import Item
from qatui.errors import DatasetError

_LABELS = {"Answer A": "A", "Answer B": "B"}
_PAIR_TYPES = {"HH": "human_vs_human", "HM": "human_vs_model"}
_KEPT = ("answer1_label", "DifficultToChoose", "comments", "annotator")


def files(path: Path) -> list[Path]:
    """The JSON files to read: the file itself, or a folder's *.json files by name."""
    if not path.is_dir():
        return [path]
    found = sorted(p for p in path.iterdir() if p.suffix.lower() == ".json" and p.is_file())
    if not found:
        raise DatasetError(f"{path}: the folder holds no .json files")
    return found


@dataclass
class _Pair:
    """The judgements of one pair of answers, gathered across files."""

    id: str
    where: str
    question: str
    answers: tuple[str, str]
    pair_type: str
    labels: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    judged_by: dict[str, str] = field(default_factory=dict)
    """Who judged the pair (the record's annotator, else its file: one file per expert) -> where they did."""

    def item(self) -> Item:
        """The pair as one pairwise item, with one label per expert."""
        data = {
            "id": self.id,
            "question": self.question,
            "candidates": {"answer1": self.answers[0], "answer2": self.answers[1]},
            "gold": {
                "kind": "pairwise",
                "a": "answer1",
                "b": "answer2",
                "labels": self.labels,
                "pair_type": self.pair_type,
            },
            "meta": self.meta,
        }
        return build_item(data, self.where, {"question": "question_text"})


def load(path: Path) -> list[Item]:
    """The judgements of every file, grouped into one pairwise item per distinct pair."""
    pairs: dict[tuple[str, str, str], _Pair] = {}
    for file in files(path):
        for where, record in json_records(file):
            _judgement(pairs, record, where, file.name)
    return unique_ids(((pair.where, pair.item()) for pair in pairs.values()), path.name)


def sniff(path: Path, head: str) -> bool:
    """A JSON list whose first record has q_id, answer1, answer2 and BetterAnswer."""
    first = first_list_element(head)
    return isinstance(first, dict) and {"q_id", "answer1", "answer2", "BetterAnswer"} <= first.keys()


def _judgement(pairs: dict[tuple[str, str, str], _Pair], record: dict[str, Any], where: str, file: str) -> None:
    """One expert judgement, added to its pair (created on first sight)."""
    q_id = text_field(record, "q_id", where)
    answers = (text_field(record, "answer1", where), text_field(record, "answer2", where))
    better = record.get("BetterAnswer")
    if not isinstance(better, str) or better not in _LABELS:
        raise field_error(where, "BetterAnswer", f"must be 'Answer A' or 'Answer B', not {better!r}")
    raw_type = text_field(record, "answer1_label", where)
    if raw_type[:2] not in _PAIR_TYPES:
        raise field_error(where, "answer1_label", f"must start with HH or HM, not {raw_type!r}")
    key = (q_id, *answers)
    if key not in pairs:
        number = 1 + sum(1 for other in pairs if other[0] == q_id)
        question = text_field(record, "question_text", where).replace("<br />", "\n")
        pairs[key] = _Pair(
            f"{q_id}-{number}", where, question, answers, _PAIR_TYPES[raw_type[:2]], meta={"q_id": q_id, "files": []}
        )
    pair = pairs[key]
    annotator = record.get("annotator")
    expert = f"annotator {annotator!r}" if annotator not in (None, "") else f"the file {file}"
    if expert in pair.judged_by:  # one label per expert: a file copied into the folder counted one expert twice
        raise field_error(where, "annotator", f"{expert} judged this pair already (at {pair.judged_by[expert]}): "
                                              "one label per expert; remove the copy")
    pair.judged_by[expert] = where
    pair.labels.append(_LABELS[better])
    pair.meta["files"].append(file)
    for name in _KEPT:
        pair.meta.setdefault(name, []).append(record.get(name))
