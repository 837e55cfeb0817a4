"""What the papers' prompts show and ask, kept in qatui's prompts (each checked on the request sent).

The requests go through qatui's real client to the scripted server on loopback.
"""

from __future__ import annotations

import json

import pytest
from fakes import is_preflight

from qatui.cli import main
from qatui.judges.prompts import load_prompts

ITEM = {"id": "doc", "question": "Summarise the article.", "references": ["The council approved the new park."],
        "context": ["ARTICLE: On Monday the town council voted 7-2 to approve a new riverside park."],
        "candidates": {"a": "The council approved a park.", "b": "A park was rejected."},
        "gold": {"kind": "ranking", "tiers": [["a"], ["b"]]}}


def _run(llm_server, tmp_path, capsys, monkeypatch, judge: str, answer, options: str = "",
         item: dict | None = None) -> list[dict]:
    """Run `judge` on ITEM against the scripted server; the completion requests it sent."""
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{llm_server.base_url}"\n'
                      f'api_key_env = "FAKE_KEY"\nmax_attempts = 1\n[cache]\ndir = "{tmp_path / "cache"}"\n{options}')
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(item or ITEM) + "\n")
    llm_server.script(answer)
    code = main(["--config", str(config), "run", str(data), "--judge", judge, "--backbone", "fake", "--json",
                 "--sessions-dir", str(tmp_path / "s")])
    out = capsys.readouterr()
    assert code == 0, out.err
    return [body for body in llm_server.requests if not is_preflight(body)]  # the backbone check left out


def _text(body: dict) -> str:
    return "\n".join(str(m["content"]) for m in body["messages"])


def test_geval_shows_the_items_context_when_it_has_one(llm_server, tmp_path, capsys, monkeypatch) -> None:
    """G-Eval's own prompts show the source text (SummEval's article); a rating without it judges blind."""
    def answer(body: dict) -> str:
        return "1. Read the answer." if "Evaluation steps (" in _text(body) else json.dumps({"score": "[[3]]"})

    requests = _run(llm_server, tmp_path, capsys, monkeypatch, "geval", answer,
                    '[judges.geval]\ndimensions = "accuracy"\nmethod = "samples"\nsamples = 1\n')
    ratings = [b for b in requests if "Evaluation form" in _text(b)]
    assert len(ratings) == 2 and all("voted 7-2 to approve a new riverside park" in _text(b) for b in ratings)


def test_listwise_asks_as_the_papers_listwise_prompt_with_no_criteria(llm_server, tmp_path, capsys, monkeypatch) -> None:
    """MinosEval's listwise baseline asks for an order by quality alone; its criteria belong to MinosEval's ranking."""
    requests = _run(llm_server, tmp_path, capsys, monkeypatch, "listwise",
                    lambda body: json.dumps({"rank": ["Response 1", "Response 2"]}))
    assert len(requests) == 1
    system = requests[0]["messages"][0]["content"].lower()
    assert "reference answer" in system and "quality" in system
    assert not any(word in system for word in ("accuracy", "logic", "completeness", "conciseness", "clarity"))


@pytest.mark.parametrize(("language", "leaning"), [("en", ("only when", "only if", "clearly", "unless")),
                                                   ("zh", ("只有", "明确", "才回答"))])
def test_checkeval_answering_prompt_leans_to_neither_answer(language: str, leaning: tuple[str, ...]) -> None:
    """CheckEval's prompt asks for yes or no on a clear rationale; a bar only "yes" must clear biases to "no"."""
    system = load_prompts("checkeval", language)["answer"]["system"]
    assert "yes" in system and "no" in system
    assert not [word for word in leaning if word in system]


def test_calf_shows_the_reference_and_answers_and_the_question_only_without_a_reference(
        llm_server, tmp_path, capsys, monkeypatch) -> None:
    """CALF's prompt (its Table 19) gives the teacher the reference, answer A and answer B: no question."""
    def answer(body: dict) -> str:
        return json.dumps({"rationale": "A matches the reference.", "choice": "A"})

    calf = '[judges.pairwise]\nprotocol = "calf"\n'
    (tmp_path / "ref").mkdir()
    with_reference = _run(llm_server, tmp_path / "ref", capsys, monkeypatch, "pairwise", answer, calf)
    assert len(with_reference) == 1
    text = _text(with_reference[0])
    assert "The council approved the new park." in text and ITEM["question"] not in text
    (tmp_path / "noref").mkdir()
    without = _run(llm_server, tmp_path / "noref", capsys, monkeypatch, "pairwise", answer, calf,
                   {**ITEM, "id": "noref", "references": []})
    assert ITEM["question"] in _text(without[-1])  # nothing else to judge by
