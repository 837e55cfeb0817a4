"""What a failed call really met on the wire: LiteLLM names many different faults "500".

LiteLLM maps every error of the OpenAI SDK that carries no HTTP status to
`InternalServerError` (status 500): a dropped connection, a body that is not JSON, and a
reply it could not turn into a chat completion (a choice without a message, a content that
is a number or an object), whose message then holds a Python traceback. The exception chain
(`__cause__` / `__context__`) still says what happened, so it is read here, once, for the
retry loop (`backbone`) and the deployment hops (`router`):

- an HTTP status in the chain: the provider answered with that status; LiteLLM's class is right;
- a connection error (the OpenAI SDK's, httpx's, aiohttp's, the OS's): "connection failed";
- a JSON decoding error: the body is not JSON (LiteLLM raises `APIError`, not retried);
- LiteLLM's "Invalid response object": the reply is no chat completion. Never retried: the
  same request gets the same shape back.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

CONNECTION = "connection"
NOT_JSON = "not-json"
MALFORMED = "malformed"

_CONNECTION_NAMES = {"APIConnectionError", "ConnectError", "ReadError", "WriteError", "RemoteProtocolError",
                     "ServerDisconnectedError", "ClientConnectionError", "ClientOSError", "ClientPayloadError",
                     "TransferEncodingError", "ContentLengthError"}
_STATUS_NAMES = {"HTTPStatusError", "APIStatusError"}


def chain(error: BaseException | None, limit: int = 12) -> Iterator[BaseException]:
    """`error`, then what caused it (`__cause__`, else `__context__`), at most `limit` deep."""
    seen = 0
    while error is not None and seen < limit:
        yield error
        error = error.__cause__ or error.__context__
        seen += 1


def _outside_litellm(error: BaseException) -> Iterator[BaseException]:
    """The links of the chain that LiteLLM did not make: its own classes subclass the SDK's and prove nothing."""
    return (link for link in chain(error) if not type(link).__module__.startswith("litellm"))


def _has_status(error: BaseException) -> bool:
    """Whether the provider sent an HTTP status for this error (the SDK's status error in the chain)."""
    return any(any(c.__name__ in _STATUS_NAMES for c in type(link).__mro__) for link in _outside_litellm(error))


def wire_fault(error: BaseException) -> str | None:
    """CONNECTION, NOT_JSON or MALFORMED when the chain says so and no HTTP status was sent; else None."""
    if _has_status(error):
        return None
    links = list(chain(error))
    if any(str(link).startswith("Invalid response object") for link in links):
        return MALFORMED
    if any(isinstance(link, json.JSONDecodeError) for link in links):
        return NOT_JSON
    if any(isinstance(link, ConnectionError) or type(link).__name__ in _CONNECTION_NAMES
           for link in _outside_litellm(error)):
        return CONNECTION
    return None


def not_json_reason(error: BaseException) -> str:
    """A body that is not JSON, with its first characters (what a proxy's error page says)."""
    body = next((link.doc for link in chain(error) if isinstance(link, json.JSONDecodeError)), "")
    flat = " ".join(str(body).split())
    return "the provider's reply is not JSON" + (f": {flat[:80]!r}" if flat else "")


def malformed_reason(error: BaseException) -> str:
    """What is wrong with a reply LiteLLM could not read, in one line without its traceback."""
    for link in chain(error):
        errors = getattr(link, "errors", None)
        if type(link).__name__ == "ValidationError" and callable(errors):
            parts = [f"{'.'.join(str(p) for p in e.get('loc', ())) or 'value'}: {str(e.get('msg', '')).lower()}, "
                     f"got {type(e.get('input')).__name__}" for e in errors()[:2]]
            return "the provider's reply is no chat completion: message " + "; ".join(parts)
    return "the provider's reply is no chat completion: a choice without a message, or a message LiteLLM cannot read"


def root_text(error: BaseException) -> str:
    """The message of the deepest error in the chain that has one (what the wire said, not LiteLLM's wrapping)."""
    texts = [str(link) for link in chain(error) if str(link).strip()]
    return texts[-1] if texts else type(error).__name__
