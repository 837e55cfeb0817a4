"""What a new user meets first: options in any position, refusals before any work, plain words.

Every refusal here must happen before a session exists (the sessions dir stays absent) and
in one line, exit 2; with `--json` the error is one JSON object on stdout.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tui_support import write_doubled, write_rated

from qatui.cli import main
from qatui.store.session import SessionStore

DEMO = Path(__file__).resolve().parents[1] / "qatui" / "data" / "demo" / "demo.jsonl"


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def bad_config(tmp_path: Path) -> Path:
    path = tmp_path / "bad.toml"
    path.write_text("[general]\nconcurency = 3\n")
    return path


# -- 1. global options before or after the command --------------------------------------------------

COMMANDS = [
    ["run", str(DEMO), "--judge", "rouge-l", "--limit", "2"],
    ["run", str(DEMO), "--judge", "rouge-l", "--plan"],
    ["demo", "--headless"],
    ["open", "nosuch"],
    ["checklist", "generate", "seed.toml", "-o", "out.toml"],
    ["judges"],
    ["models"],
    ["datasets", "inspect", str(DEMO)],
    ["sessions", "list"],
    ["sessions", "show", "nosuch"],
    ["sessions", "export", "nosuch"],
    ["sessions", "compare", "a", "b"],
    ["sessions", "resume", "nosuch"],
    ["sessions", "delete", "nosuch", "--yes"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("before", [True, False], ids=["before", "after"])
def test_config_is_read_wherever_it_is_placed(tmp_path, capsys, command, before) -> None:
    config = bad_config(tmp_path)
    args = ["--config", str(config), *command] if before else [*command, "--config", str(config)]
    code, out, err = cli(capsys, *args)
    assert code == 2
    assert "bad.toml" in err and "concurency" in err


def test_sessions_dir_before_the_command_is_where_the_session_goes(tmp_path, capsys) -> None:
    here = tmp_path / "here"
    code, out, err = cli(capsys, "--sessions-dir", str(here), "run", str(DEMO), "--judge", "rouge-l", "--limit", "2",
                         "--json")
    assert code == 0, err
    session = json.loads(out)["session"]
    assert (here / session / "session.json").exists()
    code, out, _ = cli(capsys, "--sessions-dir", str(here), "sessions", "list", "--json")
    assert [row["id"] for row in json.loads(out)] == [session]
    code, out, _ = cli(capsys, "sessions", "--sessions-dir", str(here), "show", session, "--json")
    assert code == 0 and json.loads(out)["session"] == session
    code, out, _ = cli(capsys, "sessions", "show", session, "--json", "--sessions-dir", str(here))
    assert code == 0 and json.loads(out)["session"] == session


def test_a_configured_backbone_is_known_when_config_comes_first(tmp_path, capsys) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[backbones.tiny]\nmodel = "local/smollm2"\n')
    code, out, err = cli(capsys, "--config", str(config), "run", str(DEMO), "--judge", "minos", "--limit", "1",
                         "--backbone", "tiny", "--plan", "--json")
    assert code == 0, err
    assert json.loads(out)["backbone"] == "tiny"


# -- 2. a backbone that cannot work is refused before a session exists ------------------------------


def _refused(capsys, tmp_path, *args: str) -> str:
    sessions = tmp_path / "sessions"
    code, out, err = cli(capsys, "run", str(DEMO), "--judge", "minos", "--limit", "2", "--sessions-dir",
                         str(sessions), *args)
    assert code == 2, (out, err)
    assert not sessions.exists(), "a refused run must not create a session"
    assert "Traceback" not in err
    return " ".join(err.split())


@pytest.mark.parametrize("plan", [[], ["--plan"]], ids=["run", "plan"])
def test_unknown_backbone_name_is_refused(tmp_path, capsys, plan) -> None:
    err = _refused(capsys, tmp_path, "--backbone", "gpt4o-mini", *plan)
    assert "unknown backbone 'gpt4o-mini'" in err


@pytest.mark.parametrize("plan", [[], ["--plan"]], ids=["run", "plan"])
def test_provider_key_not_set_is_refused_with_the_variable(tmp_path, capsys, monkeypatch, plan) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    err = _refused(capsys, tmp_path, "--backbone", "openai/gpt-4o-mini", *plan)
    assert "OPENAI_API_KEY" in err and "cannot be used" in err


def test_provider_litellm_does_not_know_is_refused(tmp_path, capsys) -> None:
    err = _refused(capsys, tmp_path, "--backbone", "nosuchprovider/model-x")
    assert "knows no provider" in err


def test_unreachable_local_server_is_refused_quickly(tmp_path, capsys) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.box]\nmodel = "ollama/qwen2.5"\napi_base = "http://127.0.0.1:{port}"\n')
    started = time.monotonic()
    err = _refused(capsys, tmp_path, "--config", str(config), "--backbone", "box")
    assert time.monotonic() - started < 30
    assert "cannot be reached" in err and f"127.0.0.1:{port}" in err


def test_a_lexical_run_needs_no_backbone(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, out, err = cli(capsys, "run", str(DEMO), "--judge", "rouge-l", "--limit", "2", "--backbone",
                         "openai/gpt-4o-mini", "--sessions-dir", str(tmp_path), "--json")
    assert code == 0, err


# -- 3. numbers --------------------------------------------------------------------------------------


@pytest.mark.parametrize("option, value, allowed", [
    ("--limit", "-3", "1 or more"),
    ("--limit", "0", "1 or more"),
    ("--limit", "ten", "1 or more"),
    ("--concurrency", "0", "from 1 to 256"),
    ("--concurrency", "1000", "from 1 to 256"),
    ("--seed", "-1", "from 0 to 4294967295"),
])
def test_out_of_range_numbers_are_refused_with_the_range(tmp_path, capsys, option, value, allowed) -> None:
    sessions = tmp_path / "s"
    code, out, err = cli(capsys, "run", str(DEMO), "--judge", "rouge-l", option, value, "--sessions-dir", str(sessions))
    assert code == 2 and allowed in err and option in err
    assert not sessions.exists()
    code, out, err = cli(capsys, "run", str(DEMO), "--judge", "rouge-l", option, value, "--json")
    assert code == 2 and err == ""
    error = json.loads(out)
    assert allowed in error["error"]


def test_checklist_elaborate_range(tmp_path, capsys) -> None:
    code, _, err = cli(capsys, "checklist", "generate", "x.toml", "-o", "y.toml", "--elaborate", "2")
    assert code == 2 and "from 3 to 10" in err


# -- 4. errors that point the right way --------------------------------------------------------------


def test_truncated_json_names_line_and_column(tmp_path, capsys) -> None:
    path = tmp_path / "cut.json"
    path.write_text('[{"id": "1", "question": "q?", "candidates": {"a": "x", "b"')
    code, _, err = cli(capsys, "datasets", "inspect", str(path))
    assert code == 2 and "cut.json line 1 column" in err and "invalid JSON" in err
    assert "cannot tell its format" not in err


def test_broken_jsonl_line_is_named(tmp_path, capsys) -> None:
    path = tmp_path / "d.jsonl"
    good = json.dumps({"id": "1", "question": "q?", "candidates": {"a": "x", "b": "y"}})
    path.write_text(good + "\n" + good[:-9] + "\n")
    code, _, err = cli(capsys, "run", str(path), "--judge", "rouge-l")
    assert code == 2 and "d.jsonl line 2" in err


def test_jsonl_read_as_csv_says_it_is_json(tmp_path, capsys) -> None:
    code, _, err = cli(capsys, "datasets", "inspect", str(DEMO), "--format", "csv")
    assert code == 2 and "is JSON, not a CSV header" in err
    assert len(err) < 300


def test_folder_is_reported_as_a_folder(tmp_path, capsys) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "a.json").write_text('[{"whatever": 1}]')
    code, _, err = cli(capsys, "run", str(folder), "--judge", "rouge-l")
    flat = " ".join(err.split())
    assert code == 2 and f"{folder}: is a folder" in flat and "pass one dataset file" in flat


def test_json_errors_are_json_on_stdout(tmp_path, capsys) -> None:
    code, out, err = cli(capsys, "run", str(tmp_path / "missing.jsonl"), "--judge", "rouge-l", "--json")
    assert code == 2 and err == ""
    assert "no such file" in json.loads(out)["error"]
    code, out, err = cli(capsys, "sessions", "show", "nosuch", "--json", "--sessions-dir", str(tmp_path))
    assert code == 2 and "error" in json.loads(out)
    code, out, err = cli(capsys, "run", str(DEMO), "--judge", "rouge-l", "--json", "--no-such-flag")
    assert code == 2 and "unrecognized arguments" in json.loads(out)["error"]


def test_clip_cuts_at_a_word() -> None:
    from qatui.text import clip

    text = "the backbone returned an answer that was not valid JSON after one repair re-ask"
    short = clip(text, 40)
    assert short.endswith("…") and len(short) <= 40
    assert short[:-1] in text and text[len(short) - 1] == " "  # cut where a word ends


def test_failure_reasons_in_the_summary_are_whole(tmp_path) -> None:
    from rich.console import Console

    from qatui.events import ItemFailed
    from qatui.report import print_failures

    reason = "openai/gpt-4o-mini: authentication failed (401): the API key in $MY_KEY was rejected by the provider"
    failures = [ItemFailed(item_id=f"q{i}", judge="minos", reason=reason, error_type="LLMCallError") for i in range(7)]
    console = Console(width=80, record=True)
    print_failures(console, failures)
    text = " ".join(console.export_text().split())
    assert "7 items of minos (q0, q1, q2 and 4 more)" in text and "rejected by the provider" in text


@pytest.mark.parametrize("width", [80, 100, 120])
def test_the_run_line_keeps_its_counts_whole_beside_a_long_limits_line(width: int) -> None:
    """A batch run at 80 columns read "━╺ 2… 0 failed 0:… 0… batch validating 0/20, 2 batches done": the limits line
    took the counts' width. It now has a row of its own."""
    from rich.console import Console

    from qatui.cli.progress import run_progress

    console = Console(width=width, record=True)
    limits = ("$0.0123 of $0.05 cap · openai/gpt-4o-mini 3/8 at once (of 16; 12×429, waiting 0.4 s) · "
              "batch in_progress 12/40 (1 failed), 2 batches done · [bold]not markup[/]")
    progress = run_progress(console, transient=False)
    task = progress.add_task("20261128-143214-a75f", total=1000, failed=3, limits=limits)
    progress.update(task, advance=120)
    console.print(progress.get_renderable())
    bar, under = console.export_text().splitlines()
    assert "120/1000" in bar and "3 failed" in bar and "0:00:00" in bar and "-:--:--" in bar and "…" not in bar
    assert under.startswith("$0.0123 of $0.05 cap · openai/gpt-4o-mini 3/8 at once") and len(under) <= width
    assert under.endswith("…") or under.endswith("[bold]not markup[/]")  # cut where the row ends, printed as typed
    progress.update(task, limits="")
    console.print(progress.get_renderable())
    assert len(console.export_text().splitlines()) == 1  # no limits, no second row


# -- 5. Ctrl-C says at once what happens ----------------------------------------------------------


def _big_dataset(path: Path, n: int) -> Path:
    with path.open("w") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"q{i}", "question": f"question {i}?", "references": [f"answer {i} is blue"],
                                "candidates": {"a": f"answer {i} is blue", "b": "green " * 50, "c": "red"}}) + "\n")
    return path


def test_ctrl_c_says_at_once_what_happens_and_keeps_the_session(tmp_path) -> None:
    data = _big_dataset(tmp_path / "big.jsonl", 20_000)
    sessions = tmp_path / "s"
    env = dict(os.environ, COLUMNS="100")
    proc = subprocess.Popen([sys.executable, "-m", "qatui", "run", str(data), "--judge", "rouge-l", "--concurrency", "2",
                             "--sessions-dir", str(sessions)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not list(sessions.glob("*/results-0000.json")):
            time.sleep(0.2)
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    text = err.decode()
    assert proc.returncode == 130, text
    assert "Stopping" in text and "Ctrl-C again" in text and "qatui sessions resume" in text
    from qatui.store.session import SessionStore

    [row] = SessionStore(sessions).list()
    session = SessionStore(sessions).open(row["id"])
    assert session.meta["status"] == "cancelled"
    assert 0 < len(session.finished_keys()) < 20_000


def test_the_first_ctrl_c_waits_for_the_calls_in_flight_and_keeps_their_answers(llm_server, tmp_path) -> None:
    """The first Ctrl-C says it waits for the model calls in flight to return, but it cancelled them: a real
    process exited before its calls came back, their answers were neither recorded nor cached, and the resume paid
    for them again. It waits now: the process ends after the answers arrive, the item is left pending (never
    failed), and the resume takes its answers from the call cache, asking the server nothing."""
    from fakes import is_preflight, poll
    from llm_server import Fault

    hang_s = 3.0
    llm_server.script(lambda body: json.dumps({"rationale": "A is right", "choice": "A"}),
                      faults=lambda index, body: "ok" if is_preflight(body) else Fault("hang", seconds=hang_s))
    data = tmp_path / "one.jsonl"
    data.write_text(json.dumps({"id": "q0", "question": "Which is right?", "references": ["A."],
                                "candidates": {"a": "A.", "b": "B."}}) + "\n")
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{llm_server.base_url}"\n'
                      f'api_key_env = "FAKE_KEY"\ntimeout_s = 60\n[cache]\ndir = "{tmp_path / "cache"}"\n')
    sessions = tmp_path / "s"
    command = [sys.executable, "-m", "qatui", "--config", str(config), "--sessions-dir", str(sessions)]
    env = dict(os.environ, FAKE_KEY="sk-test", LITELLM_LOCAL_MODEL_COST_MAP="True", COLUMNS="100")
    proc = subprocess.Popen([*command, "run", str(data), "--judge", "pairwise", "--backbone", "fake"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        judged = lambda: [b for b in llm_server.requests if not is_preflight(b)]  # noqa: E731
        poll(lambda: len(judged()) == 2)  # both orders asked, both answers on their way
        asked_at = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        ended_after = time.monotonic() - asked_at
    finally:
        proc.kill()
    text = err.decode()
    assert proc.returncode == 130, text
    assert "waiting for the model calls in flight to return" in " ".join(text.split())
    assert ended_after >= hang_s - 0.5, ended_after  # it waited for the answers (cancelled, it ended at once)
    [row] = SessionStore(sessions).list()
    session = SessionStore(sessions).open(row["id"])
    assert session.meta["status"] == "cancelled" and session.failed_keys() == set()  # pending, never failed
    asked = len(judged())
    resumed = subprocess.run([*command, "sessions", "resume", row["id"], "--json"], capture_output=True, text=True,
                             env=env, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["judges"]["pairwise"]["coverage"]["scored"] == 1
    assert len(judged()) == asked  # both answers came from the call cache: nothing paid twice


def test_the_first_ctrl_c_sends_no_call_that_was_waiting_for_a_slot(llm_server, tmp_path) -> None:
    """A backbone with one slot: one call in flight, the others queued for the slot. The first Ctrl-C checked
    for a stop before the wait, not after it: each queued call was sent once the slot freed, calls made after the
    stop (paid, and their items left pending). Now the call in flight returns and nothing else is sent."""
    from fakes import is_preflight, poll
    from llm_server import Fault

    hang_s = 2.0
    llm_server.script(lambda body: json.dumps({"rationale": "A is right", "choice": "A"}),
                      faults=lambda index, body: "ok" if is_preflight(body) else Fault("hang", seconds=hang_s))
    data = tmp_path / "three.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "question": f"Which is right, {i}?", "references": ["A."],
                                        "candidates": {"a": "A.", "b": "B."}}) + "\n" for i in range(3)))
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{llm_server.base_url}"\n'
                      f'api_key_env = "FAKE_KEY"\ntimeout_s = 60\nmax_concurrency = 1\n[general]\nconcurrency = 3\n'
                      f'[cache]\ndir = "{tmp_path / "cache"}"\n')
    command = [sys.executable, "-m", "qatui", "--config", str(config), "--sessions-dir", str(tmp_path / "s")]
    env = dict(os.environ, FAKE_KEY="sk-test", LITELLM_LOCAL_MODEL_COST_MAP="True", COLUMNS="100")
    proc = subprocess.Popen([*command, "run", str(data), "--judge", "pairwise", "--backbone", "fake"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        judged = lambda: [b for b in llm_server.requests if not is_preflight(b)]  # noqa: E731
        poll(lambda: len(judged()) == 1)  # the one slot taken; five calls queued behind it
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err.decode()
    assert len(judged()) == 1  # the queued calls were never sent
    [row] = SessionStore(tmp_path / "s").list()
    session = SessionStore(tmp_path / "s").open(row["id"])
    assert session.meta["status"] == "cancelled" and session.failed_keys() == set()
    assert session.meta["llm"]["calls"] == 1  # the one sent, paid and kept; none that was not sent


# -- 6. names and comparisons --------------------------------------------------------------------------


def test_session_names_show_everywhere(tmp_path, capsys) -> None:
    code, out, err = cli(capsys, "run", str(DEMO), "--judge", "rouge-l", "--limit", "2", "--session", "baseline-run",
                         "--sessions-dir", str(tmp_path))
    assert code == 0 and "baseline-run" in out
    code, out, _ = cli(capsys, "sessions", "list", "--sessions-dir", str(tmp_path))
    assert "baseline-run" in out
    code, out, _ = cli(capsys, "sessions", "show", "baseline-run", "--sessions-dir", str(tmp_path))
    assert "baseline-run" in out


def test_compare_letters_runs_names_pairs_and_warns_about_item_sets(tmp_path, capsys) -> None:
    def run(limit: str, judge: str) -> str:
        code, out, err = cli(capsys, "run", str(DEMO), "--judge", judge, "--limit", limit, "--json",
                             "--sessions-dir", str(tmp_path))
        assert code == 0, err
        return json.loads(out)["session"]

    a, b = run("3", "rouge-l"), run("20", "bleu")
    code, out, _ = cli(capsys, "sessions", "compare", a, b, "--json", "--sessions-dir", str(tmp_path))
    data = json.loads(out)
    assert [r["letter"] for r in data["runs"]] == ["A", "B"]
    assert data["common_items"] == 3 and "3 items all of them judged" in data["note"]
    assert all(d["pair"] == ["A", "B"] for d in data["disagreements"])
    assert data["agreement"][0]["n"]["kendall"] <= 3
    code, out, _ = cli(capsys, "sessions", "compare", a, b, "--sessions-dir", str(tmp_path))
    lines = [" ".join(line.split()) for line in out.splitlines()]
    assert any(line.startswith(f"A {a} rouge-l") for line in lines), out  # whole ids, not one shared prefix
    assert any(line.startswith(f"B {b} bleu") for line in lines), out
    assert "note: the runs judged different items" in " ".join(lines)
    # the note comes first, above the runs and every figure: the figures shrank to the common items
    assert lines[0].startswith("note: the runs judged different items"), out


# -- 7. small words -----------------------------------------------------------------------------------


def test_resume_of_a_complete_session_says_nothing_to_resume(tmp_path, capsys) -> None:
    code, out, err = cli(capsys, "run", str(DEMO), "--judge", "rouge-l", "--limit", "2", "--json",
                         "--sessions-dir", str(tmp_path))
    session = json.loads(out)["session"]
    code, out, err = cli(capsys, "sessions", "resume", session, "--sessions-dir", str(tmp_path))
    assert code == 0 and "nothing to resume" in err and "0/0" not in err


def test_markdown_export_is_in_natural_order_and_counts_agree(tmp_path, capsys) -> None:
    data = tmp_path / "d.jsonl"
    with data.open("w") as f:
        for i in (1, 2, 10, 100, 3):
            f.write(json.dumps({"id": f"q{i}", "question": "q?", "references": ["blue sky"],
                                "candidates": {"a": "blue sky", "b": "red"}}) + "\n")
    code, out, err = cli(capsys, "run", str(data), "--judge", "rouge-l", "--json", "--sessions-dir", str(tmp_path))
    session = json.loads(out)["session"]
    code, out, _ = cli(capsys, "sessions", "export", session, "--format", "md", "--sessions-dir", str(tmp_path))
    rows = [line.split("|")[1].strip() for line in out.splitlines() if line.startswith("| q")]
    assert rows == ["q1", "q2", "q3", "q10", "q100"]
    one = tmp_path / "one.jsonl"
    one.write_text(data.read_text().splitlines()[0] + "\n")
    code, out, err = cli(capsys, "run", str(one), "--judge", "rouge-l", "--sessions-dir", str(tmp_path))
    assert "1 item)" in out and "1 items" not in out


# -- a misspelt name is answered with the close one -------------------------------------------------

@pytest.mark.parametrize(("args", "meant"), [
    (["--judge", "rouge_l"], "'rouge-l'"),
    (["--judge", "pairwise", "--backbone", "smollm"], None),  # no table is close: no guess
    (["--judge", "rouge-l", "--format", "jsnl"], "'jsonl'"),
    (["--judge", "jury", "--jury", "rouge_l,bleu"], "'rouge-l'"),
], ids=["judge", "no guess", "format", "jury member"])
def test_a_misspelt_name_is_refused_with_the_close_one(tmp_path, capsys, args, meant) -> None:
    code, out, err = cli(capsys, "run", str(DEMO), *args, "--sessions-dir", str(tmp_path / "s"))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert (f"did you mean {meant}?" in err) if meant else ("did you mean" not in err)
    assert not (tmp_path / "s").exists()


def test_a_misspelt_backbone_table_is_answered_with_the_close_one(tmp_path, capsys) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[backbones.gpt4-mini]\nmodel = "openai/gpt-4o-mini"\n')
    code, out, err = cli(capsys, "--config", str(config), "run", str(DEMO), "--judge", "pointwise",
                         "--backbone", "gpt4_mini", "--sessions-dir", str(tmp_path / "s"))
    assert code == 2 and "did you mean 'gpt4-mini'?" in err, err


def test_compare_lists_the_items_where_one_run_made_no_decision_and_the_other_did(tmp_path, capsys) -> None:
    """Length tied every pair, ROUGE-L chose on each: they agree on no item (preference agreement 0), yet compare
    said "no item where they disagree", since tau is undefined where a run ties every response. Each such item is
    a disagreement, listed with no tau ("–") in the JSON, the terminal and the HTML report, and a no decision in
    the runs' agreement (tau and top-1 0: top-1 had credited each tie 1 in 2)."""
    data = write_doubled(tmp_path / "pairs.jsonl", 6, lambda i: f"{2 * i}", lambda i: f"{2 * i + 1}")  # one word each
    for judge in ("length", "rouge-l"):  # length ties every pair; ROUGE-L prefers the answer that is the reference
        assert main(["run", str(data), "--judge", judge, "--json", "--sessions-dir", str(tmp_path / "s")]) == 0
    undecided, decided = (m["id"] for m in sorted(SessionStore(tmp_path / "s").list(), key=lambda m: m["created"]))
    capsys.readouterr()
    code, out, _ = cli(capsys, "sessions", "compare", undecided, decided, "--json", "--sessions-dir",
                       str(tmp_path / "s"))
    data = json.loads(out)
    # the judge that told nothing apart agrees with no one: before, top-1 credited each of its ties 1 in 2
    assert code == 0 and data["agreement"][0]["stats"] == {"kendall": 0.0, "top1": 0.0, "preference": 0.0}
    assert data["agreement"][0]["no_decision"] == {"kendall": 6, "top1": 6}
    assert sorted(d["item_id"] for d in data["disagreements"]) == [f"q{i}" for i in range(6)]
    assert all(d["tau"] is None and d["rankings"][1] == "a > b" for d in data["disagreements"])
    code, out, _ = cli(capsys, "sessions", "compare", undecided, decided, "--sessions-dir", str(tmp_path / "s"))
    rows = [line.split() for line in out.splitlines() if line.split()[:1] in ([f"q{i}"] for i in range(6))]
    assert code == 0 and len(rows) == 6 and all(row[1:3] == ["A–B", "–"] for row in rows), out
    assert "kendall 0.000, top1 0.000, preference 0.000 · kendall and top1: 6/6 no decision" in " ".join(out.split())
    again = main(["run", str(tmp_path / "pairs.jsonl"), "--judge", "length", "--json",
                  "--sessions-dir", str(tmp_path / "s")])
    capsys.readouterr()
    code, out, _ = cli(capsys, "sessions", "compare", undecided, *(m["id"] for m in SessionStore(tmp_path / "s").list()
                                                                 if m["id"] not in (undecided, decided)),
                       "--sessions-dir", str(tmp_path / "s"))  # two runs that tied every pair: no order to agree on
    assert again == 0 and code == 0 and ("agreement A–B: preference 1.000 · 6 items where neither run told any "
                                         "response apart, left out of kendall and top1") in " ".join(out.split()), out
    report = tmp_path / "compare.html"
    assert main(["report", undecided, decided, "-o", str(report), "--sessions-dir", str(tmp_path / "s")]) == 0
    html = report.read_text(encoding="utf-8")
    row = re.search(r"<tr><td>A–B</td>(.*?)</tr>", html)
    assert row and re.findall(r">([^<]*)</td>", row.group(1)) == ["0.000", "0.000", "0.000", "6", "6/6", "–"], row


def test_sessions_show_table_and_report_say_how_many_scored_items_a_figure_left_out(tmp_path, capsys) -> None:
    """Six rated documents, every one scored by the length judge; on three, people rated every response alike, so
    the summary-level correlations have no order to agree with there and average the other three. `sessions show`
    said `kendall 1.000, n 3` beside "scored 6 of 6" with no word why; now its n reads "3 of 6" with a line under
    the table, `qatui table`'s caption says so, and the HTML report's metrics table too; the session screen's
    headline reads "3 of 6 items (3 no gold order)" (tests/test_tui.py). Where every scored item is left out, the
    reason no figure shows is that, never "no gold labels"."""
    write_rated(tmp_path / "rated.jsonl", 6, rated_alike=3)
    sessions = str(tmp_path / "s")
    code, out, _ = cli(capsys, "run", str(tmp_path / "rated.jsonl"), "--judge", "length", "--json", "--sessions-dir",
                       sessions)
    summary = json.loads(out)
    session = summary["session"]
    code, out, _ = cli(capsys, "sessions", "show", session, "--json", "--sessions-dir", sessions)
    judge = json.loads(out)["judges"]["length"]
    assert judge["n"]["kendall"] == 3 and judge["left_out"] == {"kendall": 3, "spearman": 3, "pearson": 3}
    code, out, _ = cli(capsys, "sessions", "show", session, "--sessions-dir", sessions)
    shown = " ".join(out.split())
    assert code == 0 and re.search(r"kendall 1\.000 3 of 6", shown) and re.search(r"kendall_sample \S+ 18", shown)
    assert "n of m: of m items scored, the figure leaves out those whose gold puts no response above another" in shown
    code, out, _ = cli(capsys, "table", str(tmp_path / "rated.jsonl"), "--judge", "length", "--sessions-dir", sessions)
    assert code == 0 and ("length: pearson on 3 of 6 items, 3 left out whose gold puts no response above another"
                          in " ".join(out.split())), out
    report = tmp_path / "report.html"
    assert main(["report", session, "-o", str(report), "--sessions-dir", sessions]) == 0
    html = report.read_text(encoding="utf-8")
    assert "<td>kendall</td><td>1.000</td><td></td><td>3 of 6</td>" in html.replace(' class="num"', "")
    assert "<caption>n of m: of m items scored" in html
    # the first three alone: every scored item left out, no figure at all; it said "no gold labels to compare with"
    code, out, _ = cli(capsys, "run", str(tmp_path / "rated.jsonl"), "--judge", "length", "--limit", "3", "--json",
                       "--sessions-dir", sessions)
    code, out, _ = cli(capsys, "sessions", "show", json.loads(out)["session"], "--sessions-dir", sessions)
    assert code == 0 and ("no figure: the gold of all 3 scored items puts no response above another"
                          in " ".join(out.split())), out
    code, out, _ = cli(capsys, "table", str(tmp_path / "rated.jsonl"), "--judge", "length", "--limit", "3",
                       "--sessions-dir", sessions)
    assert code == 0 and "length: no pearson, all 3 scored items left out, whose gold" in " ".join(out.split()), out
