"""`run --plan --offline`: a run priced before its key or its network exists, sending nothing.

The provider is the scripted OpenAI-compatible server on 127.0.0.1 (tests/llm_server.py) serving
`openai/gpt-4o-mini`, a model LiteLLM's bundled price map holds; it counts every request it is sent, so "nothing
sent" is read from the server, never assumed. The offline plan's price is compared with the plan made afterwards
with the key set and the backbone checked live.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llm_server import FakeLLMServer

from qatui.cli import main
from qatui.judges import resources as resources_module

KEY_ENV = "QATUI_OFFLINE_PLAN_KEY"
MODEL = "gpt-4o-mini"


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.delenv(KEY_ENV, raising=False)
    from qatui.llm import client as client_module

    client_module._backbones.clear()
    resources_module._SERVED.clear()
    answer = json.dumps({"rationale": "A names the capital the reference gives.", "choice": "A"})
    with FakeLLMServer(lambda body: answer, model=MODEL, max_lifetime_s=110) as running:
        yield running
    client_module._backbones.clear()
    resources_module._SERVED.clear()


def setup(tmp_path: Path, server: FakeLLMServer, model: str = f"openai/{MODEL}", embedder: bool = False
          ) -> tuple[Path, list[str]]:
    """A dataset of 6 pairs and a config whose backbone `mini` (and, with `embedder`, embedder `vectors`) is the
    server; (dataset, leading CLI args)."""
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps({
        "id": f"q{i}", "question": f"What is the capital of country number {i}?",
        "references": [f"The capital of country {i} is City {i}."],
        "candidates": {"a": f"City {i} is its capital.", "b": f"Probably Town {i}."}}) + "\n" for i in range(6)),
        encoding="utf-8")
    config = tmp_path / "config.toml"
    uses = 'embedder = "vectors"\n' if embedder else ""
    text = (f'[models]\ndefault_backbone = "mini"\n{uses}'
            f'[cache]\ndir = "{tmp_path / "cache"}"\n'
            f'[backbones.mini]\nmodel = "{model}"\napi_base = "{server.base_url}"\napi_key_env = "{KEY_ENV}"\n')
    if embedder:
        text += (f'[embedders.vectors]\nmodel = "openai/text-embedding-3-small"\napi_base = "{server.base_url}"\n'
                 f'api_key_env = "{KEY_ENV}"\n')
    config.write_text(text, encoding="utf-8")
    return data, ["--config", str(config), "--sessions-dir", str(tmp_path / "sessions")]


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_offline_plan_sends_nothing_needs_no_key_and_prices_as_the_checked_plan(server, tmp_path, capsys,
                                                                                     monkeypatch) -> None:
    data, common = setup(tmp_path, server)
    plan = [*common, "run", str(data), "--judge", "pairwise", "--plan"]
    code, out, err = cli(capsys, *plan, "--offline", "--json")
    assert code == 0, err
    assert server.n_requests == 0  # no probe, no call
    offline = json.loads(out)
    (line,) = offline["offline"]["backbones"]
    assert f"{KEY_ENV} is not set" in line and "a run is refused until it is set" in line and "nothing sent" in line
    code, out, err = cli(capsys, *plan, "--offline")
    assert code == 0, err
    assert "not checked live (--offline: nothing sent)" in " ".join(out.split())
    assert server.n_requests == 0

    code, out, err = cli(capsys, *plan)
    assert code == 2 and f"{KEY_ENV} is not set" in err  # checked, the missing key is refused as a run's would be
    monkeypatch.setenv(KEY_ENV, "sk-offline-plan-test")
    code, out, err = cli(capsys, *plan, "--json")
    assert code == 0, err
    assert server.n_requests == 1  # the checked plan's live request
    checked = json.loads(out)
    assert "offline" not in checked
    ours, theirs = offline["cost"]["pairwise"], checked["cost"]["pairwise"]
    assert ours["usd"] is not None and ours["usd"] > 0
    assert {k: ours[k] for k in ("calls", "prompts_counted", "prompt_tokens", "completion_tokens", "usd")} == \
        {k: theirs[k] for k in ("calls", "prompts_counted", "prompt_tokens", "completion_tokens", "usd")}
    assert not (tmp_path / "sessions").exists() or not any((tmp_path / "sessions").iterdir())


def test_offline_without_plan_is_refused_before_any_work(server, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-offline-plan-test")
    data, common = setup(tmp_path, server)
    code, out, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--offline")
    assert code == 2 and "--offline only goes with --plan" in err
    assert server.n_requests == 0
    assert not (tmp_path / "sessions").exists() or not any((tmp_path / "sessions").iterdir())


def test_the_offline_plan_still_refuses_a_provider_litellm_does_not_know(server, tmp_path, capsys) -> None:
    data, common = setup(tmp_path, server, model="nosuchprovider/some-model")
    code, out, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--plan", "--offline")
    assert code == 2 and "knows no provider" in " ".join(err.split())
    assert server.n_requests == 0


def test_the_offline_plan_leaves_a_served_embedder_unprobed_and_prices_every_text(server, tmp_path, capsys) -> None:
    data, common = setup(tmp_path, server, embedder=True)
    code, out, err = cli(capsys, *common, "run", str(data), "--judge", "ragas-answer-relevance", "--plan",
                         "--offline", "--json")
    assert code == 0, err
    assert server.n_requests == 0 and server.embedding_requests == []
    plan = json.loads(out)
    assert plan["offline"]["not_probed"] == ["embedder 'vectors'"]
    embed = plan["cost"]["ragas-answer-relevance"]["embeddings"]
    assert embed["tokens_counted"] > 0 and embed["texts_cached"] == 0
    code, out, err = cli(capsys, *common, "run", str(data), "--judge", "ragas-answer-relevance", "--plan", "--offline")
    assert code == 0, err
    assert "embedder 'vectors': not probed (--offline)" in " ".join(out.split())


def test_the_offline_plan_names_each_deployment_whose_key_is_not_set(server, tmp_path, capsys, monkeypatch) -> None:
    """A backbone over two deployments (LiteLLM's Router), the second's key not set: the line names that
    deployment and its variable; nothing is sent to either."""
    monkeypatch.setenv(KEY_ENV, "sk-offline-plan-test")
    data, _ = setup(tmp_path, server)
    config = tmp_path / "pool.toml"
    config.write_text(f'[models]\ndefault_backbone = "pool"\n[cache]\ndir = "{tmp_path / "cache"}"\n[backbones.pool]\n'
                      + "".join(f'[[backbones.pool.deployments]]\nname = "{name}"\nmodel = "openai/{MODEL}"\n'
                                f'api_base = "{server.base_url}"\napi_key_env = "{env}"\n'
                                for name, env in (("east", KEY_ENV), ("west", "QATUI_OFFLINE_PLAN_WEST_KEY"))),
                      encoding="utf-8")
    monkeypatch.delenv("QATUI_OFFLINE_PLAN_WEST_KEY", raising=False)
    code, out, err = cli(capsys, "--config", str(config), "--sessions-dir", str(tmp_path / "sessions"), "run",
                         str(data), "--judge", "pairwise", "--plan", "--offline", "--json")
    assert code == 0, err
    (line,) = json.loads(out)["offline"]["backbones"]
    assert "pool/west:" in line and "QATUI_OFFLINE_PLAN_WEST_KEY is not set" in line and "pool/east" not in line
    assert server.n_requests == 0
