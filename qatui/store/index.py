"""Which result is current: the latest doc per (item_id, judge) wins, by sequence number.

A success recorded after a failure so supersedes it without rewriting the shard that holds the failure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable


class ResultIndex:
    """In memory, the (seq, status) of the latest result per (item_id, judge), and the next sequence number."""

    def __init__(self) -> None:
        """An empty index; `note` every stored doc to fill it."""
        self._latest: dict[tuple[str, str], tuple[int, str]] = {}
        self._counts: dict[str, Counter[str]] = {}  # judge -> status -> items whose latest result has it
        self.next_seq = 0

    def note(self, doc: dict) -> None:
        """Note a result doc if it is the latest for its (item_id, judge)."""
        key = (doc["item_id"], doc["judge"])
        if key not in self._latest or doc["seq"] > self._latest[key][0]:
            counts = self._counts.setdefault(doc["judge"], Counter())
            if key in self._latest:
                counts[self._latest[key][1]] -= 1
            counts[doc["status"]] += 1
            self._latest[key] = (doc["seq"], doc["status"])
        self.next_seq = max(self.next_seq, doc["seq"] + 1)

    def progress(self) -> dict[str, dict[str, int]]:
        """Per judge, how many items' latest result is done, failed, not applicable (kept as results are noted)."""
        return {judge: {"n_done": c["done"], "n_failed": c["failed"], "n_not_applicable": c["n/a"]}
                for judge, c in self._counts.items()}

    def keys_with(self, status: str) -> set[tuple[str, str]]:
        """The (item_id, judge) pairs whose latest result has this status ("done", "failed" or "n/a")."""
        return {key for key, (_, current) in self._latest.items() if current == status}


def latest(docs: Iterable[dict]) -> dict[tuple[str, str], dict]:
    """The latest of `docs` per (item_id, judge): the one with the highest sequence number."""
    found: dict[tuple[str, str], dict] = {}
    for doc in docs:
        key = (doc["item_id"], doc["judge"])
        if key not in found or doc["seq"] > found[key]["seq"]:
            found[key] = doc
    return found
