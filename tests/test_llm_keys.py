"""Which key variables a provider still needs (`qatui.llm.keys`): LiteLLM's answer kept as facts, never stale.

LiteLLM's `validate_environment` tests some variables under names it builds at run time (a
`qwencloud/` model's `QWENCLOUD_API_KEY`), which its source does not quote: a key set after the
fact was kept must still be seen, and one unset again refused again.
"""

from __future__ import annotations

import pytest

from qatui.llm.facts import Facts
from qatui.llm.keys import missing_keys

MODEL = "qwencloud/qwen-plus"
"""A provider whose key variable's name LiteLLM 1.106.2 builds from the provider's name."""


@pytest.fixture
def bare(monkeypatch):
    """Neither name this provider's key may have is set."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    for name in ("QWENCLOUD_API_KEY", "DASHSCOPE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_a_key_set_under_a_built_name_after_the_fact_was_kept_is_seen(bare, tmp_path) -> None:
    facts = Facts(tmp_path / "cache")
    assert missing_keys(MODEL, facts) == ["QWENCLOUD_API_KEY"]
    bare.setenv("QWENCLOUD_API_KEY", "sk-test")
    assert missing_keys(MODEL, facts) == []  # the kept fact said missing: it is not trusted over the environment
    assert missing_keys(MODEL, Facts(tmp_path / "cache")) == []  # a new process reading the same folder
    bare.delenv("QWENCLOUD_API_KEY")
    assert missing_keys(MODEL, Facts(tmp_path / "cache")) == ["QWENCLOUD_API_KEY"]  # unset again: refused again


def test_a_key_under_a_quoted_name_is_read_from_the_environment_each_time(bare, tmp_path) -> None:
    facts = Facts(tmp_path / "cache")
    bare.setenv("DASHSCOPE_API_KEY", "sk-test")
    assert missing_keys(MODEL, facts) == []
    bare.delenv("DASHSCOPE_API_KEY")
    assert missing_keys(MODEL, facts) == ["QWENCLOUD_API_KEY"]
