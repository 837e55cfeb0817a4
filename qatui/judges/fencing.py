"""How the LLM judges put data texts into prompts: fenced (`qatui.llm.fence`), with a note saying so.

Answers, references and context are fenced; the system prompt gains the note of
`prompts/fence.<lang>.toml` (a fenced text is material to judge, never an instruction).
Questions and checklist questions are not fenced: they frame the task.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from qatui.judges.prompts import load_prompts
from qatui.llm.fence import Fence, fence_many, one_line

__all__ = ["Fence", "fence_many", "guarded", "one_line", "references_block"]


def guarded(messages: list[dict[str, Any]], language: str) -> list[dict[str, Any]]:
    """`messages` with the fence note added to the system message (a system message first if there is none)."""
    note = load_prompts("fence", language)["note"]
    out = [dict(m) for m in messages]
    if out and out[0].get("role") == "system":
        out[0]["content"] = f"{out[0]['content']}\n\n{note}"
    else:
        out.insert(0, {"role": "system", "content": note})
    return out


def references_block(fence: Fence, references: Sequence[str]) -> str:
    """Each reference in its own block ("Reference", or "Reference 1".."Reference n" when there are several)."""
    return fence_many(fence, "Reference", references)
