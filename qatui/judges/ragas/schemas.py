"""Request sizing shared by the RAGAS metrics: capped JSON string lists and the token budget that fits them.

The schemas are advertised with caps so that constrained decoding always closes; validation is lenient.
"""

from __future__ import annotations

from typing import Any

from pydantic import WithJsonSchema


def token_budget(items: int, chars: int, overhead: int = 12) -> int:
    """max_tokens for a JSON list of `items` strings of at most `chars` characters each.

    Half a token per character (English runs about a quarter; repeats, digits and escapes
    run higher), so the advertised caps bind before the token limit cuts the JSON off.
    """
    return 32 + items * (chars // 2 + overhead)


def capped_strings(max_items: int, max_length: int, min_items: int = 0) -> WithJsonSchema:
    """A list of strings advertised with at most `max_items` items of `max_length` characters each."""
    schema: dict[str, Any] = {"type": "array", "items": {"type": "string", "maxLength": max_length},
                              "maxItems": max_items}
    if min_items:
        schema["minItems"] = min_items
    return WithJsonSchema(schema)
