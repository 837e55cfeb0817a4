"""LiteLLM on first use: the only place qatui imports it (STYLE.md §5).

`import litellm` costs about 3 s, and without `LITELLM_LOCAL_MODEL_COST_MAP` it also tries
to fetch a price map from the network. Everything in `qatui.llm` reaches LiteLLM through
`get_litellm()`, so importing `qatui.llm` (or the CLI) stays fast and offline.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from types import ModuleType

# LiteLLM's own types trip a pydantic UserWarning on their first streaming call; not ours to fix.
warnings.filterwarnings("ignore", message=".*is using the `ReadOnly` qualifier.*", category=UserWarning)

_lock = threading.Lock()
_ready = False


def get_litellm() -> ModuleType:
    """The `litellm` module, imported offline and quiet, with the embedded `local/` provider registered."""
    global _ready
    if _ready:
        import litellm

        return litellm
    with _lock:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        os.environ.setdefault("LITELLM_LOG", "ERROR")
        import litellm

        litellm.suppress_debug_info = True  # no "Provider List: ..." banners on stdout
        litellm.telemetry = False
        for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm"):
            logging.getLogger(name).setLevel(logging.ERROR)
        if not _ready:
            from qatui.llm.local import register_local

            register_local(litellm)  # cheap: the model itself loads on its first call
            _ready = True
    return litellm
