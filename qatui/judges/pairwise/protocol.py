"""Which ordered comparisons the pairwise judge asks: qatui's both-orders variant, or CALF as published.

- `both-orders` (qatui's variant, the default): every unordered pair of responses is asked
  twice, each answer once as A (or once, in presentation order, with `both_orders = false`);
  orders that disagree make a tie, so a preference for a position never passes for a
  preference for an answer.
- `calf` (Fan et al., CALF): every pair is asked once, and which answer is shown as A
  alternates, so that position bias spreads evenly over the two sides instead of adding
  to one of them. The rule is fixed and depends on the item alone, never on its place in
  the file, so a `--limit` run, a resume or a spot check asks the very same calls (and
  hits the cache): an item is *flipped* when the SHA-256 of `"calf-order"`, a NUL and its
  id is odd; the k-th pair of an item (0-based, pairs in presentation order: (1, 2),
  (1, 3), ..., (2, 3), ...) is asked in presentation order when k + flipped is even, and
  swapped when it is odd. So the order alternates from pair to pair within an item, and
  from item to item by the flip (about half of all items each way). The presentation order
  itself is the engine's seeded shuffle, so which of the file's answers comes first is
  independent of both.
"""

from __future__ import annotations

import hashlib
from itertools import combinations
from typing import Literal

Protocol = Literal["both-orders", "calf"]

CALF_TEMPERATURE = 1.0
"""CALF samples every LLM judge at temperature 1.0."""


def calf_flipped(item_id: str) -> bool:
    """Whether CALF's alternation starts this item swapped: the parity of SHA-256("calf-order" NUL id)."""
    digest = hashlib.sha256(f"calf-order\x00{item_id}".encode()).digest()
    return bool(digest[-1] & 1)


def asked_orders(labels: list[str], protocol: Protocol, both_orders: bool, item_id: str) -> list[tuple[str, str]]:
    """The (A, B) label pairs to ask, in the order they are sent (see the module docstring)."""
    asked: list[tuple[str, str]] = []
    flipped = calf_flipped(item_id)
    for k, (x, y) in enumerate(combinations(labels, 2)):
        if protocol == "calf":
            asked.append((y, x) if (k + flipped) % 2 else (x, y))
            continue
        asked.append((x, y))
        if both_orders:
            asked.append((y, x))
    return asked


def asks_both(protocol: Protocol, both_orders: bool) -> bool:
    """Whether each pair is asked in both orders."""
    return protocol == "both-orders" and both_orders


def calls_per_item(n_candidates: int, protocol: Protocol, both_orders: bool) -> int:
    """Calls for an item of n candidates: n(n-1) in both orders, n(n-1)/2 once per pair."""
    pairs = n_candidates * (n_candidates - 1) // 2
    return 2 * pairs if asks_both(protocol, both_orders) else pairs
