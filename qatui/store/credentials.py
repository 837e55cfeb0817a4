"""Credentials: `key_from_env` reads an API key when a request needs it, `scrub` keeps every key out of session files."""

from __future__ import annotations

import os
import re
from typing import Any

_SECRET_NAME = re.compile(r"api_?key|secret|password|passwd|(^|_)token$")


def scrub(value: Any) -> Any:
    """A copy of `value` without any key that could hold a credential, so no session file ever holds one.

    At any depth of dicts and lists, drops keys whose lower-cased name contains "api_key",
    "apikey", "secret", "password" or "passwd", or is "token" or ends in "_token". Names ending
    in "_env" stay ("api_key_env" names an environment variable, not its value), and so do
    counters such as "max_tokens".
    """
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items() if not _is_secret_name(str(k))}
    if isinstance(value, (list, tuple)):
        return [scrub(v) for v in value]
    return value


def _is_secret_name(name: str) -> bool:
    """Whether a key of this name may hold a credential (see `scrub`)."""
    name = name.lower()
    return not name.endswith("_env") and _SECRET_NAME.search(name) is not None


def key_from_env(variable: str | None, who: str, table: str, error: type[Exception]) -> str | None:
    """The value of `$variable`, read at the moment of the request and never kept; None when no variable is named.

    A named variable that is not set raises `error` saying who needs it and which table names it
    (`openai/gpt-4o: the environment variable OPENAI_KEY is not set (api_key_env of backbone 'judge')`),
    before any request: a provider would answer the missing key with an error that looks transient.
    """
    if not variable:
        return None
    if value := os.environ.get(variable):
        return value
    raise error(f"{who}: the environment variable {variable} is not set (api_key_env of {table}): "
                f"export {variable}=... and retry")
