"""Shared fixtures: where the real datasets live (../shared/data beside the repo), a scripted LLM server, an own ONNX
cache, and a data folder of each test's own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(autouse=True)
def own_data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`$XDG_DATA_HOME` in this test's own folder and no `$QATUI_SESSIONS_DIR`: a command that saves sessions in
    the default folder never writes the user's real data folder, nor sees another test's sessions."""
    data = tmp_path / "xdg-data"
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.delenv("QATUI_SESSIONS_DIR", raising=False)
    return data


@pytest.fixture
def shared_data() -> Path:
    """The shared data folder; the test is skipped with a reason when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"../shared/data is not on this machine: {SHARED_DATA} does not exist")
    return SHARED_DATA


@pytest.fixture(scope="module")
def litellm_imported() -> None:
    """Import LiteLLM (about 3 s) once for a module, outside its tests' own time (`usefixtures` it)."""
    import os

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from qatui.llm._lazy import get_litellm

    get_litellm()


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


@pytest.fixture
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty ONNX cache for this test (`$XDG_CACHE_HOME/qatui/onnx`), and no NLI model or embedder loaded
    before or kept after it."""
    from qatui.embed import clear_cache as clear_embedders
    from qatui.nli import clear_cache as clear_nli

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    clear_nli()
    clear_embedders()
    yield tmp_path / "qatui" / "onnx"
    clear_nli()
    clear_embedders()
