"""Keeping credentials out of session files: `scrub` drops every key that could hold one."""

from __future__ import annotations

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
