"""How the baselines write an item's reference answers into a prompt (one job, shared by them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def references_text(references: Sequence[str]) -> str:
    """One reference as it is; several numbered `(1) ...` one per line."""
    if len(references) == 1:
        return references[0]
    return "\n".join(f"({i}) {ref}" for i, ref in enumerate(references, 1))


def reference_line(section: dict[str, Any], references: Sequence[str]) -> str:
    """The section's `reference` template filled with the references, or "" when the item has none."""
    return section["reference"].format(reference=references_text(references)) if references else ""
