"""Which API-key variables a backbone's provider still needs, as facts: a cached rerun asks no LiteLLM.

A backbone that names neither `api_key_env` nor `api_base` relies on the provider's own variables
(`OPENAI_API_KEY`, `ANTHROPIC_API_KEY` or `ANTHROPIC_AUTH_TOKEN`, AWS's several ways): LiteLLM's
`validate_environment` says which are missing, and a missing key is refused before any work
(`LLMClient.precheck`), since a provider answers it with an error that looks transient.

`validate_environment` only tests whether variables are *present*, each named in its own source.
So its answer is kept as two facts (`llm.facts`, keyed by LiteLLM's version like the others):
- "environment-names": the variable names its source tests (the same for every model);
- "missing-keys": for a model and which of those names are set now (names only, never values), the
  missing variables that hold a key or a token.
A rerun from the same environment reads both and imports nothing; a variable set or unset since then
is another row of the second fact, computed (importing LiteLLM) and kept in its turn.
"""

from __future__ import annotations

import os
import re
from typing import Any

from qatui.llm.facts import Facts

_NAME = re.compile(r"""["']([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)["']""")
"""A quoted environment variable name in LiteLLM's source (`"OPENAI_API_KEY"`)."""


def missing_keys(model: str, facts: Facts) -> list[str]:
    """The key or token variables LiteLLM says `model`'s provider needs and this environment lacks ([] when none,
    or when LiteLLM knows no provider for it: the call itself says so)."""
    names = set(facts.get("environment-names", {}, _environment_names, _is_names))
    if "/" in model:  # a name its source builds from the provider (`f"{provider.upper()}_API_KEY"`), not quoted
        names.add(f"{model.split('/', 1)[0].upper()}_API_KEY")
    present = sorted(name for name in names if name in os.environ)
    missing = facts.get("missing-keys", {"model": model, "present": present}, lambda: _missing(model), _is_names)
    if any(name in os.environ for name in missing):  # set since the fact was kept, under a name not watched above:
        return _missing(model)                       # never refuse a key that is there
    return missing


def _environment_names() -> list[str]:
    """The variable names LiteLLM's `validate_environment` tests, read from its source (sorted)."""
    import inspect

    from qatui.llm._lazy import get_litellm

    get_litellm()
    from litellm.utils import validate_environment

    return sorted(set(_NAME.findall(inspect.getsource(validate_environment))))


def _missing(model: str) -> list[str]:
    """LiteLLM's `validate_environment` for `model` now: its missing variables that hold a key or a token."""
    from qatui.llm._lazy import get_litellm

    try:
        missing = get_litellm().validate_environment(model=model).get("missing_keys") or []
    except Exception:  # noqa: BLE001 - unknown provider: the call itself will say
        return []
    return [str(k) for k in missing if str(k).endswith(("_KEY", "_TOKEN"))]


def _is_names(value: Any) -> bool:
    """A fact that is a list of variable names."""
    return isinstance(value, list) and all(isinstance(v, str) and _NAME.fullmatch(f'"{v}"') for v in value)
