"""Backbone access through LiteLLM: cache, concurrency, retries, cost, parsing, the embedded model.

Judges use `make_client(backbone, config)` and `await client.complete(messages, purpose=...,
schema=...)`. Importing this package does not import LiteLLM (a 3 s import): that happens
on the first call, through `qatui.llm._lazy.get_litellm()`.
"""

from qatui.llm.client import LLMClient, LLMResult, make_client
from qatui.llm.errors import LLMCallError, ParseError

__all__ = ["LLMCallError", "LLMClient", "LLMResult", "ParseError", "make_client"]
