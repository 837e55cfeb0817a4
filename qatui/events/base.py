"""The root of every event, and the A / B / tie of a pair: what every event module builds on."""

from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Preference = Literal["A", "B", "tie"]
"""A verdict on a pair: the first answer, the second, or neither (also the gold's labels)."""


class Event(BaseModel):
    """Fields every event carries; the engine fills `item_id`, `judge` and `repeat`."""

    model_config = ConfigDict(frozen=True)

    item_id: str = ""
    judge: str = ""
    at: float = Field(default_factory=time.time)
    repeat: int = 0
    """Which asking of a judge with `repeats` K > 1 the event came from, 0 to K-1 (0 for a judge asked once, and in
    sessions stored before events said it): the item view and the TUI show each repeat's work apart by it."""

