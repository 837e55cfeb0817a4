"""Shared fixtures: where the real datasets live (../shared/data beside the repo)."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    """The shared data folder; the test is skipped with a reason when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"../shared/data is not on this machine: {SHARED_DATA} does not exist")
    return SHARED_DATA


@pytest.fixture
def llm_server(monkeypatch):
    """A scripted OpenAI-compatible server on 127.0.0.1 (tests/llm_server.py), stopped after the test.

    Script it with `llm_server.script(responder, faults=[...])`; point a backbone at
    `llm_server.base_url` with model "openai/fake-model".
    """
    from llm_server import FakeLLMServer  # tests/ is on sys.path, as for tui_support

    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # LiteLLM must not fetch its price map
    with FakeLLMServer(max_lifetime_s=60.0) as server:
        yield server
