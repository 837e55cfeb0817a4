"""`--max-cost`: a run's cost cap, made before any work, and what is said when a run stops at it.

The cap covers the session's whole spend: a resume starts from what its calls recorded. It is
kept call by call (`qatui.llm.spend.SpendCap`); it needs a price for every backbone the run
calls (an embedded `local/` model is free) and every served embedder its judges ask, so one LiteLLM's price map
lacks is refused before any work. The cap is stored with the session: a resume keeps it unless given a new one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qatui.errors import CostError
from qatui.text import usd

if TYPE_CHECKING:
    from qatui.judges.resources import Resources
    from qatui.llm.spend import SpendCap


MAX_COST_USD = 1_000_000.0
"""The largest cap (`--max-cost`, New run's cost cap): above any run's budget, so a typo of a few zeros is caught."""


def parse_cap(text: str) -> float | None:
    """A cap as typed in a form: None when blank, else a number of USD more than 0 and below `MAX_COST_USD`;
    `CostError` in one line otherwise (the range `--max-cost` takes)."""
    import math

    text = text.strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise CostError(f"cost cap: {text!r} is not a number of USD") from None
    if not math.isfinite(value) or not 0 < value < MAX_COST_USD:
        raise CostError(f"cost cap: {text} is out of range: more than 0 and less than {MAX_COST_USD:,.0f} USD")
    return value


def make_cap(max_cost: float | None, spent_usd: float, users: list[Resources], session_id: str = "",
             embedders: dict[str, str] | None = None) -> SpendCap | None:
    """The cap for a run whose judges call the backbones of `users` and the served `embedders` (name -> model),
    `spent_usd` already spent; None without one.

    Raises `CostError` for a backbone or served embedder with no price (what its requests cost could not be
    counted, so the cap could be passed without a sign), or a cap the session has already spent.
    """
    if max_cost is None:
        return None
    from qatui.llm.spend import SpendCap, unpriced

    for models in users:
        client = models.llm
        if not getattr(client, "is_local", False) and (why := unpriced(client.model)):
            raise CostError(f"--max-cost: backbone {models.backbone!r} ({client.model}) is {why}, so what its calls "
                            "cost cannot be counted; run it without --max-cost")
    for name, model in (embedders or {}).items():
        if why := unpriced(model):
            raise CostError(f"--max-cost: embedder {name!r} ({model}) is {why}, so what its requests cost cannot be "
                            "counted; run it without --max-cost")
    if spent_usd >= max_cost:
        raise CostError(f"session {session_id} has spent {usd(spent_usd)}, which a cap of ${max_cost:g} leaves no room "
                        f"for: resume with a higher cap, e.g. qatui sessions resume {session_id} --max-cost "
                        f"{suggest(spent_usd, max_cost)}")
    return SpendCap(max_cost, spent_usd)


def suggest(spent_usd: float, cap_usd: float) -> str:
    """A higher cap to suggest: twice the old one, and more than what is spent."""
    return f"{max(cap_usd * 2, spent_usd * 2, 0.01):.2f}"


def capped_message(session_id: str, cap: SpendCap, left: int) -> str:
    """What a run stopped at its cap says: spent against the cap, what is left, and the command that goes on."""
    return (f"Stopped at the cost cap: {usd(cap.spent_usd)} spent of ${cap.cap_usd:g}; {left} left to judge "
            f"(none failed by the cap). Resume with a higher cap: qatui sessions resume {session_id} --max-cost "
            f"{suggest(cap.spent_usd, cap.cap_usd)}")
