"""LiteLLM on first use: the only place qatui imports it (docs/LIBRARIES.md#lazy-imports).

`import litellm` costs about 3 s, and without `LITELLM_LOCAL_MODEL_COST_MAP` it also tries
to fetch a price map from the network. Everything in `qatui.llm` reaches LiteLLM through
`get_litellm()`, so importing `qatui.llm` (or the CLI) stays fast and offline.

OpenAI and OpenAI-compatible backbones that LiteLLM sends (not the `openai/` and `hosted_vllm/` ones
with an `api_base`, which `llm.direct` posts itself) go through LiteLLM's own HTTP handler
(`EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER`) rather than the OpenAI SDK, which re-walks every
request's parameters: measured 5.3 -> 3.0 ms of CPU per call (bench/NOTES.md), with
the same errors, streams and retries (tests/test_llm_server.py, test_faults.py over HTTP).
Set the variable to `false` to go back to the SDK.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from types import ModuleType

# LiteLLM's own types trip a pydantic UserWarning on their first streaming call; not ours to fix.
warnings.filterwarnings("ignore", message=".*is using the `ReadOnly` qualifier.*", category=UserWarning)

HTTP_HANDLER_FLAG = "EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER"
"""LiteLLM's switch from the OpenAI SDK to its own HTTP client for OpenAI-style providers; on unless set."""

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
        os.environ.setdefault(HTTP_HANDLER_FLAG, "true")
        import litellm

        litellm.suppress_debug_info = True  # no "Provider List: ..." banners on stdout
        litellm.telemetry = False
        # Its counter fetches a Llama or Command R tokenizer from the Hugging Face hub on each count (23 s of retries a
        # count with no network): qatui hands it the tokenizer itself, found offline first (`qatui.llm.tokens`).
        litellm.disable_hf_tokenizer_download = True
        litellm.disable_streaming_logging = True  # no callbacks to feed: a streamed call cost 30% more CPU without it
        # Its OpenAI embedding call reads `max_retries=0` as unset and retried twice on its own, under ours.
        litellm.DEFAULT_MAX_RETRIES = 0
        for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm"):
            logging.getLogger(name).setLevel(logging.ERROR)
        if not _ready:
            from qatui.llm.local import register_local

            register_local(litellm)  # cheap: the model itself loads on its first call
            _ready = True
    return litellm
