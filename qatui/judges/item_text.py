"""How the LLM judges write an item's reference answers and context into a prompt (one job, shared by them): fenced."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from qatui.judges.fencing import Fence, fence_many, references_block


def reference_line(section: dict[str, Any], references: Sequence[str], fence: Fence) -> str:
    """The section's `reference` template filled with the fenced references, or "" when the item has none."""
    return section["reference"].format(reference=references_block(fence, references)) if references else ""


def context_line(section: dict[str, Any], context: Sequence[str], fence: Fence) -> str:
    """The section's `context` template filled with the fenced context passages, or "" when the item has none."""
    return section["context"].format(context=fence_many(fence, "Context", context)) if context else ""
