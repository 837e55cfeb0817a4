"""What the judges advertise to the backbone as JSON schema, and the token budget that fits it: one home for the shapes.

Every cap here is advertised only, so that constrained decoding (the embedded model's grammar)
always closes its JSON and a small model that loops still stops; validation stays lenient
(a provider that ignores a cap still yields a usable answer), and each judge's reader decides
what an answer it cannot use means. The shapes:

- `bounded_text`: one string of at most n characters;
- `capped_strings`: a list of such strings, at most (and at least) so many;
- `one_of`: one string among fixed values (A / B / tie, `[[1]]`..`[[5]]`);
- `exactly_n_of`: a list of exactly n values, each among fixed ones (a ranking of the labels shown,
  one entailment label per statement);
- `numbered_answers`: an object `{"Q1": ..., "Qn": ...}` with every key required, each value among
  fixed ones (a checklist's yes / no, the filter's KEEP / REMOVE <reason>).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import WithJsonSchema


def token_budget(items: int, chars: int, overhead: int = 12) -> int:
    """max_tokens for a JSON list of `items` strings of at most `chars` characters each.

    Half a token per character (English runs about a quarter; repeats, digits and escapes
    run higher), so the advertised caps bind before the token limit cuts the JSON off.
    """
    return 32 + items * (chars // 2 + overhead)


def bounded_text(max_length: int) -> WithJsonSchema:
    """A string advertised with a length cap, so constrained decoding cannot loop forever.

    Only the advertised schema carries the cap; validation accepts any length, so a provider
    that ignores it still yields a usable answer.
    """
    return WithJsonSchema({"type": "string", "maxLength": max_length})


def capped_strings(max_items: int, max_length: int, min_items: int = 0, min_length: int = 0) -> WithJsonSchema:
    """A list of strings advertised with at most `max_items` items of `max_length` characters each."""
    item: dict[str, Any] = {"type": "string", "maxLength": max_length}
    if min_length:
        item["minLength"] = min_length
    schema: dict[str, Any] = {"type": "array", "items": item, "maxItems": max_items}
    if min_items:
        schema["minItems"] = min_items
    return WithJsonSchema(schema)


def one_of(values: Iterable[str]) -> WithJsonSchema:
    """A string advertised as one of `values` (an enum for constrained decoding; validation takes any string)."""
    return WithJsonSchema({"type": "string", "enum": list(values)})


def exactly_n_of(values: Sequence[str], n: int) -> WithJsonSchema:
    """A list advertised as exactly `n` entries, each one of `values`."""
    return WithJsonSchema({"type": "array", "items": {"type": "string", "enum": list(values)}, "minItems": n,
                           "maxItems": n})


def numbered_answers(n: int, values: Sequence[str]) -> dict[str, Any]:
    """`{"Q1": v, ..., "Qn": v}`, every key required and no other, each value one of `values`."""
    keys = [f"Q{k}" for k in range(1, n + 1)]
    return {"type": "object", "properties": {key: {"type": "string", "enum": list(values)} for key in keys},
            "required": keys, "additionalProperties": False}


def schema_document(shape: Any) -> Any:
    """A judge's answer shape as its JSON schema: a pydantic model's, a callable's result's (a model or a schema)."""
    if callable(shape) and not isinstance(shape, type):
        shape = shape()
    if isinstance(shape, type) and hasattr(shape, "model_json_schema"):
        return shape.model_json_schema()
    return shape
