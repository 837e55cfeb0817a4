"""One checklist-generation call (`qatui checklist generate`), its answer as one entry per line."""

from __future__ import annotations

from typing import Any


async def ask_lines(llm: Any, section: dict, purpose: str, schema: dict, max_tokens: int = 600, **fields: Any) -> str:
    """The answer's text; with JSON as asked, rewritten as one line per entry for the line parsers."""
    from qatui.llm.errors import ParseError

    messages = [{"role": "system", "content": section["system"].format()},
                {"role": "user", "content": section["user"].format(**fields)}]
    try:
        result = await llm.complete(messages, purpose=purpose, schema=schema, max_tokens=max_tokens)
    except ParseError as e:  # not the JSON asked for: read its lines as they are
        return e.text
    data = result.data if isinstance(result.data, dict) else None
    if data is None:
        return result.text
    if isinstance(data.get("questions"), list):
        return "\n".join(str(q) for q in data["questions"])
    return "\n".join(f"{k}: {v}" for k, v in data.items())
