"""`qatui checklist generate` through a real backbone client: the scripted server on loopback.

The written file must load back whatever text the backbone returns (an emoji is outside
the Basic Multilingual Plane, which a JSON writer escapes as a surrogate pair TOML refuses),
and the elaboration asks for the paper's 3 to 10 questions unless told otherwise.
"""

from __future__ import annotations

import json
import re

from qatui.cli import main
from qatui.judges.checkeval.checklist import load_checklist

SEED = """
name = "tiny"
task = "Judge a summary."
target = "Summary"
[[dimensions]]
name = "coherence"
definition = "Well organised."
[[dimensions.sub_dimensions]]
name = "Flow"
questions = ["Is the order logical?"]
"""

EMOJI_QUESTION = "Does the summary keep a friendly tone \N{HUGGING FACE}?"


def _backbone(body: dict, emoji: bool = True) -> str:
    """Diversify and elaborate: new questions (one with an emoji); filter: keep every numbered question."""
    system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
    if "review all the questions" in system:
        return json.dumps({f"Q{k}": "KEEP" for k in re.findall(r"^Q(\d+):", user, flags=re.M)})
    if "Break a broad" in system:
        return json.dumps({"questions": ["Does each sentence follow from the one before it?",
                                         "Is the first sentence a good opening?", *[EMOJI_QUESTION][:emoji]]})
    return json.dumps({"questions": ["Are the transitions between sentences smooth?"]})


def _generate(llm_server, tmp_path, capsys, monkeypatch, *extra: str, emoji: bool = True,
              out: str = "out.toml") -> tuple[int, str]:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{llm_server.base_url}"\n'
                      f'api_key_env = "FAKE_KEY"\nmax_attempts = 1\n[cache]\ndir = "{tmp_path / "cache"}"\n')
    (tmp_path / "seed.toml").write_text(SEED)
    llm_server.script(lambda body: _backbone(body, emoji))
    code = main(["--config", str(config), "checklist", "generate", str(tmp_path / "seed.toml"),
                 "-o", str(tmp_path / out), "--backbone", "fake", *extra])
    return code, capsys.readouterr().err


def test_a_question_with_an_emoji_is_written_as_valid_toml(llm_server, tmp_path, capsys, monkeypatch) -> None:
    code, err = _generate(llm_server, tmp_path, capsys, monkeypatch)
    assert code == 0, err
    written = load_checklist(str(tmp_path / "out.toml"))
    texts = [q.text for q in written.dimensions[0].sub_dimensions[0].questions]
    assert EMOJI_QUESTION in texts and "Is the order logical?" in texts


def test_elaboration_asks_for_the_papers_three_to_ten_by_default(llm_server, tmp_path, capsys, monkeypatch) -> None:
    code, err = _generate(llm_server, tmp_path, capsys, monkeypatch, emoji=False)
    assert code == 0, err
    asked = [m["content"] for body in llm_server.requests for m in body["messages"]
             if m["role"] == "user" and "Broad question:" in m["content"]]
    assert len(asked) == 1 and "between 3 and 10 " in asked[0], asked


def test_the_report_names_the_output_file_as_typed(llm_server, tmp_path, capsys, monkeypatch) -> None:
    """The closing line names the file written: a name holding markup is shown as typed, never read as markup."""
    out = "[bold red]R [link=https:evil]L.toml"
    code, err = _generate(llm_server, tmp_path, capsys, monkeypatch, emoji=False, out=out)
    assert code == 0, err
    said = " ".join(err.split())
    assert f"wrote {tmp_path / out}: " in said and "seed, " in said, said
