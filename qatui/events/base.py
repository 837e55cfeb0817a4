"""The root of every event, and the A / B / tie of a pair: what every event module builds on."""

from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Preference = Literal["A", "B", "tie"]
"""A verdict on a pair: the first answer, the second, or neither (also the gold's labels)."""


class Event(BaseModel):
    """Fields every event carries; the engine fills `item_id` and `judge`."""

    model_config = ConfigDict(frozen=True)

    item_id: str = ""
    judge: str = ""
    at: float = Field(default_factory=time.time)

