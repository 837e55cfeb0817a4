"""Judge files (qatui/judges/files): written as TOML, refused when bad before any work, run over a loopback
backbone and on the embedded model, swap and confirm, exported built-ins equal to the built-ins."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fakes import is_preflight
from llm_server import FakeLLMServer

from qatui.cli import main
from qatui.llm.fence import block_texts

ITEMS = [
    {"id": "q1", "question": "What is table salt made of?", "references": ["Sodium chloride, NaCl."],
     "candidates": {"r1": "Sodium chloride, NaCl: sodium and chlorine.", "r2": "Sugar.", "r3": "It is NaCl."},
     "gold": {"kind": "ranking", "tiers": [["r1"], ["r3"], ["r2"]]}},
    {"id": "q2", "question": "What is 2 plus 2?", "references": ["4"],
     "candidates": {"r1": "It is 5.", "r2": "It is 4, since two and two make four.", "r3": "4."},
     "gold": {"kind": "ranking", "tiers": [["r2"], ["r3"], ["r1"]]}},
]

SCORE = '''name = "concise"
description = "How directly an answer answers the question, 1 to 5."
kind = "score"
criteria = "A direct, correct answer is best."

[scale]
min = 1
max = 5

[prompts]
system = """Grade one answer for concision. {criteria} Score from {min} to {max}, written as [[3]]."""
user = """Question: {question}
{reference}
Answer to grade:
{answer}

Your score, as [[score]]:"""
reference = """Reference answer: {reference}
"""
'''

PAIR = '''name = "swapper"
description = "A / B / tie, each pair in both orders."
kind = "pair"

[pair]
both_orders = true

[answer]
explanation = 200

[prompts]
system = "Compare two answers; reply with a short explanation and the verdict A, B or tie."
user = """Question: {question}
{reference}
Answer A:
{answer_a}

Answer B:
{answer_b}

Which is better?"""
reference = """Reference answer: {reference}
"""
'''

CHECKLIST = '''name = "checks"
description = "Two yes-or-no questions per answer."
kind = "checklist"

[checklist]
questions = ["Does the answer mention the right result?", "Is the answer one sentence?"]

[prompts]
system = "Answer each question yes or no about the answer, as JSON with keys Q1, Q2."
user = """Question: {question}
{reference}
Answer:
{answer}

Questions:
{questions}"""
reference = """Reference answer: {reference}
"""
'''


def _data(tmp_path: Path) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in ITEMS))
    return path


def _reference(content: str) -> str:
    return block_texts(content).get("Reference", "")


def _good(answer: str, reference: str) -> bool:
    """The scripted backbone's taste: an answer sharing a word with the reference is good."""
    words = {w.strip(".,:").lower() for w in reference.split()}
    return bool(words & {w.strip(".,:").lower() for w in answer.split()})


def responder(flip_with_order: bool = False):
    """Answers every kind of judge file from its prompt; `flip_with_order`: a pair judge always gets "A"."""
    def reply(body: dict) -> str:
        if is_preflight(body):
            return "OK"
        content = body["messages"][-1]["content"]
        blocks, reference = block_texts(content), _reference(content)
        if "Answer A" in blocks:
            if flip_with_order:
                return json.dumps({"explanation": "the first one", "verdict": "A"})
            a, b = (_good(blocks[k], reference) for k in ("Answer A", "Answer B"))
            return json.dumps({"explanation": "by the reference", "verdict": "tie" if a == b else "A" if a else "B"})
        answer = blocks.get("Answer", "")
        if "Questions:" in content:
            return json.dumps({"Q1": "yes" if _good(answer, reference) else "no",
                               "Q2": "yes" if answer.count(".") <= 1 else "no"})
        return json.dumps({"score": "[[5]]" if _good(answer, reference) else "[[2]]"})
    return reply


def _config(tmp_path: Path, server: FakeLLMServer, extra: str = "") -> Path:
    path = tmp_path / "c.toml"
    path.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{server.base_url}"\n'
                    f'api_key_env = "FAKE_KEY"\n[models]\ndefault_backbone = "fake"\n'
                    f'[cache]\ndir = "{tmp_path / "cache"}"\n{extra}')
    return path


def _run(capsys, config: Path, tmp_path: Path, *argv: str) -> dict:
    code = main(["--config", str(config), "--sessions-dir", str(tmp_path / "s"), *argv, "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def _show(capsys, tmp_path: Path, server: FakeLLMServer, session_id: str, item_id: str) -> str:
    """What `qatui sessions show ID --item ITEM` prints."""
    code = main(["--config", str(_config(tmp_path, server)), "--sessions-dir", str(tmp_path / "s"),
                 "sessions", "show", session_id, "--item", item_id])
    out = capsys.readouterr().out
    assert code == 0, out
    return " ".join(out.split())


def _session(tmp_path: Path, session_id: str):
    from qatui.store.session import SessionStore

    return SessionStore(tmp_path / "s").open(session_id)


@pytest.mark.parametrize(("text", "name"), [(SCORE, "concise"), (PAIR, "swapper"), (CHECKLIST, "checks")],
                         ids=["score", "pair", "checklist"])
def test_a_judge_file_runs_over_a_loopback_backbone_and_its_verdicts_and_text_are_stored(
        tmp_path, capsys, monkeypatch, llm_server, text, name) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    llm_server.script(responder())
    judge = tmp_path / f"{name}.toml"
    judge.write_text(text)
    done = _run(capsys, _config(tmp_path, llm_server), tmp_path, "run", str(_data(tmp_path)), "--judge", str(judge))
    coverage = done["judges"][name]["coverage"]
    assert coverage == {"items": 2, "scored": 2, "not_applicable": 0, "failed": 0, "pending": 0}
    session = _session(tmp_path, done["session"])
    assert session.meta["judge_files"][name] == {"path": str(judge), "text": text}
    verdicts = session.verdicts(name)
    assert set(verdicts) == {"q1", "q2"}
    # the scripted backbone prefers the answers sharing a word with the reference: so does every verdict
    for item in ITEMS:
        scores = verdicts[item["id"]].scores
        good = {c for c, t in item["candidates"].items() if _good(t, item["references"][0])}
        assert min(scores[c] for c in good) > max(scores[c] for c in item["candidates"] if c not in good), scores


def test_swap_and_confirm_turns_orders_that_disagree_into_a_tie_and_reports_consistency(
        tmp_path, capsys, monkeypatch, llm_server) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    llm_server.script(responder(flip_with_order=True))  # "A" whatever is shown first: pure position bias
    judge = tmp_path / "swapper.toml"
    judge.write_text(PAIR)
    done = _run(capsys, _config(tmp_path, llm_server), tmp_path, "run", str(_data(tmp_path)), "--judge", str(judge))
    verdicts = _session(tmp_path, done["session"]).verdicts("swapper")
    for verdict in verdicts.values():
        details = verdict.details
        assert [p["result"] for p in details["pairs"]] == ["tie", "tie", "tie"]
        assert details["position_consistency"] == {"agreed": 0, "judged_both": 3, "one_order": 0}  # CALF's key
        assert details["positions"] == {"A": 6, "B": 0, "tie": 0, "unparsed": 0}
        assert set(verdict.scores.values()) == {0.5}
    pair_calls = [b for b in llm_server.requests if not is_preflight(b)]
    assert len(pair_calls) == 2 * 3 * 2  # every pair of every item asked in both orders
    assert done["judges"]["swapper"]["metrics"]["position_consistency"] == 0.0  # the run summary carries it
    assert done["judges"]["swapper"]["n"]["position_consistency"] == 6
    shown = _show(capsys, tmp_path, llm_server, done["session"], "q1")
    assert "0 of 3 pairs judged in both orders agree" in shown
    assert "positions chosen A 6, B 0, tie 0" in shown


def test_swap_and_confirm_reports_full_consistency_when_the_orders_agree(
        tmp_path, capsys, monkeypatch, llm_server) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    llm_server.script(responder())
    judge = tmp_path / "swapper.toml"
    judge.write_text(PAIR)
    done = _run(capsys, _config(tmp_path, llm_server), tmp_path, "run", str(_data(tmp_path)), "--judge", str(judge))
    verdicts = _session(tmp_path, done["session"]).verdicts("swapper")
    for verdict in verdicts.values():
        assert verdict.details["position_consistency"] == {"agreed": 3, "judged_both": 3, "one_order": 0}
    assert done["judges"]["swapper"]["metrics"]["position_consistency"] == 1.0
    assert "3 of 3 pairs judged in both orders agree" in _show(capsys, tmp_path, llm_server, done["session"], "q2")


def test_a_session_stored_when_swap_and_confirm_had_its_own_key_still_shows_its_position_consistency(
        tmp_path, capsys, monkeypatch, llm_server) -> None:
    """A judge file's verdicts stored before it wrote CALF's key (`swap_and_confirm`: agreed, judged_both,
    consistency) still give the run summary's position consistency and the item view's line."""
    from qatui.data.loaders import load_dataset
    from qatui.metrics.summary import summarize
    from qatui.report.artifact_views import print_pairs
    from rich.console import Console

    monkeypatch.setenv("FAKE_KEY", "sk-test")
    llm_server.script(responder(flip_with_order=True))
    judge = tmp_path / "swapper.toml"
    judge.write_text(PAIR)
    done = _run(capsys, _config(tmp_path, llm_server), tmp_path, "run", str(_data(tmp_path)), "--judge", str(judge))
    old = {}
    for item_id, verdict in _session(tmp_path, done["session"]).verdicts("swapper").items():
        details = {k: v for k, v in verdict.details.items() if k not in ("position_consistency", "positions",
                                                                        "both_orders")}
        agreed = 1 if item_id == "q1" else 0  # as if one pair of q1 had agreed
        details["swap_and_confirm"] = {"agreed": agreed, "judged_both": 3, "consistency": agreed / 3}
        old[item_id] = verdict.model_copy(update={"details": details})
    summary = summarize(load_dataset(_data(tmp_path)).items, old, ci=False)
    assert summary.metrics["position_consistency"] == pytest.approx(1 / 6)
    console = Console(width=120, record=True)
    print_pairs(console, [], old["q1"].details, {})
    assert "1 of 3 pairs judged in both orders agree" in console.export_text()


def test_sessions_resume_rebuilds_the_file_judge_from_the_stored_text_when_the_file_is_gone(
        tmp_path, capsys, monkeypatch, llm_server) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    answer = responder()
    llm_server.script(answer, faults=lambda index, body: "500" if "2 plus 2" in json.dumps(body["messages"]) else "ok")
    judge = tmp_path / "concise.toml"
    judge.write_text(SCORE)
    config = _config(tmp_path, llm_server)
    code = main(["--config", str(config), "--sessions-dir", str(tmp_path / "s"), "run", str(_data(tmp_path)),
                 "--judge", str(judge), "--json"])
    first = json.loads(capsys.readouterr().out)
    assert code == 0 and first["judges"]["concise"]["coverage"]["failed"] == 1  # q2 could not be asked
    judge.unlink()  # the session holds the text: the judge is rebuilt from it
    llm_server.script(answer)
    done = _run(capsys, config, tmp_path, "sessions", "resume", first["session"])
    assert done["judges"]["concise"]["coverage"]["scored"] == 2
    assert _session(tmp_path, first["session"]).verdicts("concise")["q2"].scores["r2"] == 5.0


# -- exported built-ins ----------------------------------------------------------------------------

EXPORT_ITEMS = [
    {"id": f"e{i}", "question": f"Name {i} facts about the number {i}.", "references": [f"{i} is a number; {i} + {i} = {2 * i}."],
     "candidates": {f"c{k}": f"Answer {k} about {i}: " + " ".join(f"w{(i * k + j) % 7}" for j in range(k + 2))
                    for k in range(4)}}
    for i in range(1, 5)
]


def _digest(body: dict) -> int:
    import hashlib

    return int(hashlib.sha256(json.dumps(body["messages"], sort_keys=True).encode()).hexdigest(), 16)


def builtin_responder(body: dict) -> str:
    """Answers pointwise, pairwise-ab, listwise and CALF pairwise by the schema asked, varied by the prompt's hash."""
    if is_preflight(body):
        return "OK"
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name") or ""
    text = "\n".join(str(m.get("content")) for m in body["messages"])  # the schema is in the prompt without one
    h = _digest(body)
    if schema == "PointScore" or '"title": "PointScore"' in text:
        return json.dumps({"score": f"[[{h % 10}.{h % 97 % 10}{h % 89 % 10}]]"})
    if schema == "ABVerdict" or '"title": "ABVerdict"' in text:
        return json.dumps({"explanation": "scripted", "verdict": "[[A]]" if h % 2 else "[[B]]"})
    if schema == "PairChoice" or '"title": "PairChoice"' in text:
        return json.dumps({"rationale": "scripted", "choice": ("A", "B", "tie")[h % 3]})
    labels = sorted(set(__import__("re").findall(r"Response \d+", body["messages"][-1]["content"])))
    ranked = sorted(labels, key=lambda label: _digest({"messages": [label, h]}))
    return json.dumps({"rank": ranked})


@pytest.mark.parametrize("builtin", ["pointwise", "pairwise-ab", "listwise", "pairwise"])
def test_an_exported_builtin_run_as_a_file_sends_the_same_requests_and_gives_the_same_verdicts(
        tmp_path, capsys, monkeypatch, llm_server, builtin) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    llm_server.script(builtin_responder)
    data = tmp_path / "e.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in EXPORT_ITEMS))
    config = _config(tmp_path, llm_server)
    exported = tmp_path / "exported.toml"
    assert main(["--config", str(config), "judges", "export", builtin, "-o", str(exported)]) == 0
    first = _run(capsys, config, tmp_path, "run", str(data), "--judge", builtin)
    asked = [b for b in llm_server.requests if not is_preflight(b)]
    second = _run(capsys, config, tmp_path, "run", str(data), "--judge", str(exported))
    assert [b for b in llm_server.requests if not is_preflight(b)] == asked  # no new request reached the backbone
    assert second["llm"]["calls"] == second["llm"]["cached"] == first["llm"]["calls"] > 0
    ours = _session(tmp_path, first["session"]).verdicts(builtin)
    theirs = _session(tmp_path, second["session"]).verdicts(f"my-{builtin}")
    assert set(ours) == set(theirs) == {item["id"] for item in EXPORT_ITEMS}
    for item_id, verdict in ours.items():
        other = theirs[item_id]
        assert (other.scores, other.ranking, other.tiers) == (verdict.scores, verdict.ranking, verdict.tiers), item_id
    assert len({tuple(v.ranking) for v in ours.values()}) > 1  # the verdicts differ from item to item
    if builtin == "pairwise-ab":  # win-count ties were compared again, swapped: the rematch rule ran too
        assert any(v.details["tied_groups"] for v in ours.values())


# -- bad judge files -------------------------------------------------------------------------------

BAD = {  # name -> (the SCORE file changed, the text on the line that must be named, the key named)
    "invalid TOML": (SCORE.replace("max = 5", "max = 5\nbroken == 1"), "broken == 1", "toml"),
    "unknown kind": (SCORE.replace('kind = "score"', 'kind = "grade"'), 'kind = "grade"', "kind"),
    "unknown placeholder": (SCORE.replace("Answer to grade:", "Answer to grade ({answr}):"),
                            "Answer to grade ({answr}):", "prompts.user"),
    "placeholder the kind cannot fill": (SCORE.replace("Answer to grade:", "Against {answer_b}:"),
                                         "Against {answer_b}:", "prompts.user"),
    "template never shows the answer": (SCORE.replace("{answer}\n", "(the answer)\n"), 'user = """Question',
                                        "prompts.user"),
    "scale without bounds": (SCORE.replace("min = 1\nmax = 5", "min = 1"), "[scale]", "scale.max"),
    "scale min not below max": (SCORE.replace("max = 5", "max = 1"), "max = 1", "scale.max"),
    "scale bound a boolean": (SCORE.replace("min = 1", "min = true"), "min = true", "scale.min"),
    "a switch given as a number": (SCORE.replace("max = 5", "max = 5\nlogprobs = 1"), "logprobs = 1", "scale.logprobs"),
    "a switch given as a string": (PAIR.replace("both_orders = true", 'both_orders = "yes"'), 'both_orders = "yes"',
                                   "pair.both_orders"),
    "a built-in's name": (SCORE.replace('name = "concise"', 'name = "pointwise"'), 'name = "pointwise"', "name"),
    "a built-in's name in capitals": (SCORE.replace('name = "concise"', 'name = "Pointwise"'), 'name = "Pointwise"',
                                      "name"),
    "label set of one": (SCORE.replace('kind = "score"', 'kind = "label"').replace("[scale]\nmin = 1\nmax = 5",
                                                                                   '[labels]\nvalues = ["ok"]'),
                         'values = ["ok"]', "labels.values"),
    "unknown key": (SCORE.replace("[scale]", "[scale]\nstep = 1"), "step = 1", "scale.step"),
    "option out of range": (SCORE + "\n[options]\ntemperature = 7.5\n", "temperature = 7.5", "options.temperature"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_judge_file_is_refused_before_any_work_naming_file_line_and_key(tmp_path, llm_server, case) -> None:
    text, marked, key = BAD[case]
    judge = tmp_path / "bad.toml"
    judge.write_text(text)
    line = next(n for n, row in enumerate(text.splitlines(), 1) if row.startswith(marked))
    env = {**os.environ, "FAKE_KEY": "sk-test", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run([sys.executable, "-m", "qatui", "--config", str(_config(tmp_path, llm_server)),
                           "--sessions-dir", str(tmp_path / "s"), "run", str(_data(tmp_path)), "--judge", str(judge)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2 and done.stdout == "", done
    (said,) = done.stderr.strip().splitlines()  # one line, no traceback
    assert said.startswith(f"error: {judge}:{line}: {key}: "), said
    assert llm_server.n_requests == 0 and not (tmp_path / "s").exists()  # nothing was asked, no session made


def test_a_bad_judge_file_named_in_the_config_is_refused_naming_the_file_not_the_config(tmp_path, llm_server) -> None:
    from qatui.config import load_config
    from qatui.judges.files import JudgeFileError
    from qatui.judges.registry import check_judge_tables

    (tmp_path / "judges").mkdir()
    (tmp_path / "judges" / "concise.toml").write_text(BAD["unknown kind"][0])
    config = _config(tmp_path, llm_server, '[judges.concise]\nfile = "judges/concise.toml"\n')
    with pytest.raises(JudgeFileError, match=rf"^{tmp_path / 'judges' / 'concise.toml'}:3: kind: unknown kind 'grade'"):
        check_judge_tables(load_config(config))


# -- the embedded model ----------------------------------------------------------------------------

ONE_ITEM = {"id": "ice", "question": "Why does ice float on water?",
            "references": ["Ice is less dense than liquid water, because its molecules lock into an open lattice."],
            "candidates": {"good": "Ice is less dense than water, as freezing locks its molecules into a lattice.",
                           "bad": "Ice floats because it is cold."},
            "gold": {"kind": "ranking", "tiers": [["good"], ["bad"]]}}


@pytest.mark.slow
@pytest.mark.parametrize(("text", "name"), [(SCORE, "concise"), (PAIR.replace("explanation = 200", "explanation = 0"),
                                                                 "swapper"), (CHECKLIST, "checks")],
                         ids=["score", "pair", "checklist"])
def test_a_judge_file_runs_offline_on_the_embedded_model(tmp_path, capsys, monkeypatch, text, name) -> None:
    from qatui import extras

    if not extras.has("local"):
        pytest.skip(f"the embedded model is not installed: {extras.install_hint('local')}")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # every call reaches the model
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    data = tmp_path / "one.jsonl"
    data.write_text(json.dumps(ONE_ITEM) + "\n")
    judge = tmp_path / f"{name}.toml"
    judge.write_text(text)
    config = tmp_path / "qatui.toml"
    config.write_text("")
    done = _run(capsys, config, tmp_path, "run", str(data), "--judge", str(judge), "--backbone", "local/smollm2")
    assert done["judges"][name]["coverage"]["scored"] == 1 and done["judges"][name]["n_failed"] == 0
    assert done["llm"]["calls"] == 2  # constrained decoding: read at the first answer, never re-asked
    (verdict,) = _session(tmp_path, done["session"]).verdicts(name).values()
    assert set(verdict.scores) == {"good", "bad"}


# -- what the docs show and what qatui writes ------------------------------------------------------


@pytest.mark.parametrize("page", ["README.md", "docs/JUDGE_FILES.md"])
def test_the_complete_example_of_the_docs_is_a_judge_file_that_loads(page) -> None:
    import re

    from qatui.judges.files import parse_judge_text
    from qatui.judges.files.judge import file_judge_class

    text = (Path(__file__).resolve().parents[1] / page).read_text()
    block = re.search(r"```toml\n(.*?)```", text, re.S)
    assert block is not None, f"{page} has no TOML example"
    file = parse_judge_text(block[1], page)
    assert file.name == "concise" and file_judge_class(file).needs.reference is False


@pytest.mark.parametrize("kind", ["score", "pair", "listwise", "checklist", "label"])
def test_judges_new_writes_a_starting_file_that_runs_as_it_is(tmp_path, capsys, monkeypatch, llm_server, kind) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    target = tmp_path / f"{kind}.toml"
    assert main(["judges", "new", f"my-{kind}", "--kind", kind, "-o", str(target)]) == 0
    assert target.read_text().startswith("# A qatui judge file")
    assert main(["judges", "new", f"my-{kind}", "--kind", kind, "-o", str(target)]) == 2  # never over a file
    capsys.readouterr()

    def answer(body: dict) -> str:
        if is_preflight(body):
            return "OK"
        content = body["messages"][-1]["content"]
        labels = sorted(set(__import__("re").findall(r"Response \d+", content)))
        return json.dumps({"score": "[[4]]", "explanation": "fine", "verdict": "A", "label": "partial",
                           "Q1": "yes", "Q2": "no", "Q3": "yes", "rank": labels})

    llm_server.script(answer)
    done = _run(capsys, _config(tmp_path, llm_server), tmp_path, "run", str(_data(tmp_path)), "--judge", str(target))
    assert done["judges"][f"my-{kind}"]["coverage"]["scored"] == 2


def test_a_judge_file_s_version_is_of_its_text_not_its_file_name_and_diff_reads_the_file_now(
        tmp_path, capsys, monkeypatch, llm_server) -> None:
    """One text under two file names had two versions (the definition was keyed by the file's name), so `compare`
    said two runs of it were "not of one judge", and `judges align` stored versions no session of its file had.
    And `sessions diff ID` of a session run by a file's path failed: "unknown judge". Now the version is the
    text's, a session stored under the old keying still resumes as the same judge, and the diff reads the file
    at its path now."""
    from qatui.engine.versions import changed_judge
    from qatui.judges.registry import make_judge

    first, copy = tmp_path / "concise.toml", tmp_path / "elsewhere.toml"
    first.write_text(SCORE)
    copy.write_text(SCORE)
    one, other = make_judge(str(first)), make_judge(str(copy))
    assert one.version == other.version
    [earlier] = other.earlier_versions()  # keyed by "elsewhere.toml", as a session of it stored before
    assert earlier != other.version and changed_judge("s", other, {"version": earlier}) is None
    assert changed_judge("s", other, {"version": "0" * 12}) is not None  # another text is still another judge
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    llm_server.script(responder())
    config = _config(tmp_path, llm_server)
    session = _run(capsys, config, tmp_path, "run", str(_data(tmp_path)), "--judge", str(first))["session"]
    first.write_text(SCORE.replace("A direct, correct answer is best.", "A short answer is best."))
    code = main(["--config", str(config), "--sessions-dir", str(tmp_path / "s"), "sessions", "diff", session])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "-criteria = \"A direct, correct answer is best.\"" in out and "+criteria = \"A short answer is best.\"" in out


def test_a_pair_judge_asked_in_one_order_is_shown_so(tmp_path, capsys, monkeypatch, llm_server) -> None:
    """A judge file's pair judge without `both_orders` was shown as "each pair in both orders" with "0 of 0 pairs
    judged in both orders agree": what was asked, once per pair, now says so."""
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    llm_server.script(responder())
    judge = tmp_path / "once.toml"
    judge.write_text(PAIR.replace("both_orders = true", "both_orders = false").replace('"swapper"', '"once"'))
    config = _config(tmp_path, llm_server)
    session = _run(capsys, config, tmp_path, "run", str(_data(tmp_path)), "--judge", str(judge))["session"]
    item = ITEMS[0]["id"]
    assert main(["--config", str(config), "--sessions-dir", str(tmp_path / "s"), "sessions", "show", session,
                 "--item", item]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "pairwise comparisons, each pair in one order" in text, text
    assert "in both orders" not in text, text


def test_table_refuses_two_judge_files_of_one_name_before_any_work(tmp_path, capsys, monkeypatch, llm_server) -> None:
    """Two judge files both named "swapper" made two table rows both labelled `swapper@fake`, which `--baseline`
    could not tell apart. As `run` does, `table` refuses them in one line naming both, before any call."""
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    llm_server.script(responder())
    first, second = tmp_path / "one.toml", tmp_path / "two.toml"
    first.write_text(PAIR)
    second.write_text(PAIR.replace("Which is better?", "Which one is better?"))
    config = _config(tmp_path, llm_server)
    code = main(["--config", str(config), "--sessions-dir", str(tmp_path / "s"), "table", str(_data(tmp_path)),
                 "--judge", str(first), "--judge", str(second)])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2 and "both called 'swapper'" in err and str(first) in err and str(second) in err, err
    assert llm_server.n_requests == 0


def test_a_score_judge_files_steps_read_on_its_own_scale(tmp_path, capsys, monkeypatch, llm_server) -> None:
    """Every step of a scored response read `/ 10` on the Session screen, whatever the judge file's scale: a 1-5
    judge's 5 read as half marks."""
    from qatui.events import PointScored
    from qatui.tui.baseline_steps import baseline_line

    monkeypatch.setenv("FAKE_KEY", "sk-test")
    llm_server.script(responder())
    judge = tmp_path / "concise.toml"
    judge.write_text(SCORE)
    done = _run(capsys, _config(tmp_path, llm_server), tmp_path, "run", str(_data(tmp_path)), "--judge", str(judge))
    verdict = _session(tmp_path, done["session"]).verdicts("concise")["q1"]
    steps = [step for step in verdict.artifacts if isinstance(step, PointScored)]
    assert steps and all(step.top == 5 for step in steps)
    assert {baseline_line(step).split(": ")[1] for step in steps} == {"2.00 / 5", "5.00 / 5"}
