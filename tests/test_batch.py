"""Batch mode (`--batch`): backbone calls through the provider's files and batches API, in waves.

The provider is the scripted OpenAI-compatible server on 127.0.0.1 (tests/llm_server.py) with its
files and batches endpoints (tests/llm_batches.py): it answers a batch's lines with the same responder
as its completions, and can delay a batch, fail some of its lines, cut an answer off or expire a batch
half-done. Every run is qatui's real CLI, through LiteLLM's real files and batches calls over HTTP.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from fakes import is_preflight, poll
from llm_server import FakeLLMServer
from test_plan_calls import answer, schema_instance

from qatui.cli import main
from qatui.data.loaders import demo_dataset
from qatui.store.session import SessionStore

ITEMS = ("en-01", "en-02", "en-05", "en-06", "zh-03")


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("FAKE_KEY", "sk-batch-test-not-a-real-key")
    from qatui.llm import client as client_module

    client_module._backbones.clear()
    with FakeLLMServer(answer, max_lifetime_s=110.0, max_requests=2_000) as server:
        yield server
    client_module._backbones.clear()


def config(tmp_path: Path, server: FakeLLMServer, cache: str, *, model: str = "openai/fake-model",
           retry: str = "batch", poll_s: float = 0.05) -> Path:
    """A config whose backbone `fake` is the server, its cache in `tmp_path/cache`, batches gathered briefly."""
    path = tmp_path / f"config-{cache}-{retry}.toml"
    path.write_text(f'[backbones.fake]\nmodel = "{model}"\napi_base = "{server.base_url}"\napi_key_env = "FAKE_KEY"\n'
                    f'max_attempts = 2\ntimeout_s = 20\n[cache]\ndir = "{tmp_path / cache}"\n'
                    f'[batch]\nwindow_s = 0.3\npoll_s = {poll_s}\nretry = "{retry}"\nmax_attempts = 3\n')
    return path


def dataset(tmp_path: Path) -> Path:
    demo = {item.id: item for item in demo_dataset().items}
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(demo[i].model_dump(mode="json", exclude_none=True), ensure_ascii=False) + "\n"
                            for i in ITEMS))
    return path


def run(capsys, conf: Path, sessions: Path, data: Path, *args: str) -> dict:
    code = main(["--config", str(conf), "--sessions-dir", str(sessions), "run", str(data), "--backbone", "fake",
                 "--json", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def verdicts(sessions: Path, session_id: str, judge: str) -> dict[str, tuple]:
    session = SessionStore(sessions).open(session_id)
    return {item_id: (v.ranking, v.scores, v.preference) for item_id, v in session.verdicts(judge).items()}


def completions(server: FakeLLMServer) -> int:
    """Completion requests the server answered directly, the preflight's check left out."""
    return sum(1 for body in server.requests if not is_preflight(body))


@pytest.mark.parametrize("judge", ["minos", "pairwise"])
def test_a_batch_run_gives_the_direct_runs_verdicts_in_waves_and_fills_the_cache(server, tmp_path, capsys,
                                                                              judge) -> None:
    data, sessions = dataset(tmp_path), tmp_path / "sessions"
    direct = run(capsys, config(tmp_path, server, "direct-cache"), sessions, data, "--judge", judge)
    asked_directly = completions(server)
    assert asked_directly > 0 and server.n_batches == 0

    batched = run(capsys, config(tmp_path, server, "batch-cache"), sessions, data, "--judge", judge, "--batch")
    assert batched["status"] == "completed" and batched["judges"][judge]["n_failed"] == 0
    assert completions(server) == asked_directly, "a call of the batch run went around its batches"
    assert verdicts(sessions, batched["session"], judge) == verdicts(sessions, direct["session"], judge)
    n_items = len([i for i in verdicts(sessions, direct["session"], judge)])
    first = [body for body in server.batch_bodies[: server.batches["batch_fake_0"]["request_counts"]["total"]]]
    assert len(first) >= n_items, "the first batch does not hold every item's first request"
    if judge == "minos":  # routes, then statements, then ranks: one batch per wave
        assert server.n_batches >= 2
    meta = SessionStore(sessions).open(batched["session"]).meta
    assert [b["id"] for b in meta["batches"]] == list(server.batches)
    assert all(b["status"] == "completed" and b["collected"] for b in meta["batches"])

    rerun = run(capsys, config(tmp_path, server, "batch-cache"), sessions, data, "--judge", judge)
    assert completions(server) == asked_directly, "a rerun without --batch asked what the batches answered"
    assert rerun["llm"]["cached"] == rerun["llm"]["calls"] > 0
    assert verdicts(sessions, rerun["session"], judge) == verdicts(sessions, direct["session"], judge)


@pytest.mark.parametrize("retry", ["batch", "direct"])
def test_failed_and_expired_requests_are_asked_again_and_recorded(server, tmp_path, capsys, retry) -> None:
    data, sessions = dataset(tmp_path), tmp_path / "sessions"
    direct = run(capsys, config(tmp_path, server, "direct-cache"), sessions, data, "--judge", "pairwise")
    asked_directly = completions(server)
    server.script_batches(faults=lambda index, body: "500" if index % 3 == 0 else "429" if index % 3 == 1 else "ok",
                          expire={0}, only={0})
    batched = run(capsys, config(tmp_path, server, "batch-cache", retry=retry), sessions, data, "--judge", "pairwise",
                  "--batch")
    assert batched["status"] == "completed" and batched["judges"]["pairwise"]["n_failed"] == 0
    assert verdicts(sessions, batched["session"], "pairwise") == verdicts(sessions, direct["session"], "pairwise")
    meta = SessionStore(sessions).open(batched["session"]).meta
    first = meta["batches"][0]
    assert first["status"] == "expired" and first["completed"] < first["requests"] // 2  # half expired, 500s, 429s
    assert first["retried"] == first["requests"] - first["completed"] and "gave_up" not in first
    reasons = {reason.split(":")[0]: n for reason, n in first["reasons"].items()}
    assert reasons["batch_expired"] == first["requests"] - first["requests"] // 2
    assert reasons["HTTP 500"] + reasons["HTTP 429"] == first["failed"] > 0
    if retry == "batch":
        assert completions(server) == asked_directly and len(meta["batches"]) >= 2
        assert max(server.batch_submitted.values()) >= 2  # a failed request went into a later batch
    else:
        assert completions(server) - asked_directly == first["retried"]  # each failed one asked directly, once
        assert len(meta["batches"]) == 1


def test_an_answer_cut_off_in_a_batch_is_never_a_verdict_and_not_asked_again(server, tmp_path, capsys) -> None:
    data, sessions = dataset(tmp_path), tmp_path / "sessions"
    server.script_batches(faults=lambda index, body: "length")
    code = main(["--config", str(config(tmp_path, server, "cache")), "--sessions-dir", str(sessions), "run",
                 str(data), "--backbone", "fake", "--json", "--judge", "pairwise", "--batch"])
    result = json.loads(capsys.readouterr().out)
    assert code != 0 and result["judges"]["pairwise"]["coverage"]["scored"] == 0
    session = SessionStore(sessions).open(result["session"])
    reasons = {doc["failure"]["reason"] for doc in session.results().values()}
    assert reasons and all("cut off at max_tokens" in reason for reason in reasons), reasons
    assert set(server.batch_submitted.values()) == {1}


def answer_any(body: dict) -> str:
    """A valid answer whether the schema is in the prompt or sent as the response format (a model that takes one)."""
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
    if schema is None:
        return answer(body)
    return json.dumps(schema_instance(schema, schema.get("$defs", {}), len(json.dumps(body["messages"]))))


def test_the_batch_price_is_what_the_session_records(monkeypatch, tmp_path, capsys) -> None:
    """gpt-4o-mini has batch prices in LiteLLM's map: half its list price, recorded per call and per batch."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("FAKE_KEY", "sk-batch-test-not-a-real-key")
    from qatui.llm import client as client_module

    client_module._backbones.clear()
    with FakeLLMServer(answer_any, model="gpt-4o-mini", max_lifetime_s=60.0) as server:
        data, sessions = dataset(tmp_path), tmp_path / "sessions"
        plans = [run(capsys, config(tmp_path, server, "d", model="openai/gpt-4o-mini"), sessions, data,
                     "--judge", "pairwise", "--plan", *flag)["cost"]["pairwise"] for flag in ([], ["--batch"])]
        direct = run(capsys, config(tmp_path, server, "d", model="openai/gpt-4o-mini"), sessions, data,
                     "--judge", "pairwise")
        batched = run(capsys, config(tmp_path, server, "b", model="openai/gpt-4o-mini"), sessions, data,
                      "--judge", "pairwise", "--batch")
    client_module._backbones.clear()
    assert direct["llm"]["cost_usd"] > 0
    assert plans[1]["usd"] == pytest.approx(plans[0]["usd"] / 2, rel=1e-6) and plans[1]["usd"] > 0  # --plan --batch
    assert batched["llm"]["prompt_tokens"] == direct["llm"]["prompt_tokens"]
    assert batched["llm"]["cost_usd"] == pytest.approx(direct["llm"]["cost_usd"] / 2, rel=1e-6)
    (batch,) = SessionStore(sessions).open(batched["session"]).meta["batches"]
    assert batch["cost_usd"] == pytest.approx(batched["llm"]["cost_usd"], rel=1e-6)
    assert batch["list_price_usd"] == pytest.approx(direct["llm"]["cost_usd"], rel=1e-6)
    assert batch["price"] == "LiteLLM's batch price"
    code = main(["--sessions-dir", str(sessions), "sessions", "show", batched["session"]])
    shown = " ".join(capsys.readouterr().out.split())
    n = batch["requests"]
    assert code == 0 and f"batch_fake_0 completed {n}/{n}; ${batch['cost_usd']:.4f}, list price" in shown, shown
    assert "LiteLLM's batch price" in shown


def test_a_backbone_without_a_batch_api_is_refused_before_any_work(server, tmp_path, capsys) -> None:
    sessions = tmp_path / "sessions"
    code = main(["--sessions-dir", str(sessions), "run", str(dataset(tmp_path)), "--judge", "pairwise",
                 "--backbone", "local/smollm2", "--batch"])
    err = capsys.readouterr().err
    assert code == 2 and "cannot be batched: an embedded model has no batch API" in err, err
    assert not sessions.exists() or not any(sessions.iterdir())


def test_sigkill_with_batches_pending_then_resume_submits_nothing_twice(server, tmp_path) -> None:
    data, sessions = dataset(tmp_path), tmp_path / "sessions"
    conf = config(tmp_path, server, "cache", poll_s=0.1)
    server.script_batches(hold=True)  # submitted, then left pending until the run is killed
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1]), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "qatui", "--config", str(conf), "--sessions-dir", str(sessions)]
    proc = subprocess.Popen([*cmd, "run", str(data), "--judge", "minos", "--backbone", "fake", "--batch"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        def recorded() -> list:
            if proc.poll() is not None:
                pytest.fail(f"the run ended before it was killed: {proc.stderr.read().decode()[-2000:]}")
            found = list(sessions.glob("*/session.json")) if sessions.is_dir() else []
            meta = json.loads(found[0].read_text())["meta"]["1"] if found else {}
            return meta.get("batches") or []

        poll(recorded, timeout_s=60)
        poll(lambda: server.n_batch_polls >= 2, timeout_s=30)  # the run is waiting on its batch
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(30)
    (session_dir,) = sessions.iterdir()
    submitted = dict(server.batch_submitted)
    assert server.n_batches == 1 and submitted
    server.release_batches()  # the provider works on it meanwhile; the resume polls it
    done = subprocess.run([*cmd, "sessions", "resume", session_dir.name, "--json"], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["status"] == "completed" and result["judges"]["minos"]["n_failed"] == 0
    assert all(server.batch_submitted[key] == 1 for key in submitted), "a request was submitted twice"
    assert max(server.batch_submitted.values()) == 1
    meta = SessionStore(sessions).open(session_dir.name).meta
    assert meta["batches"][0]["id"] == "batch_fake_0" and meta["batches"][0]["collected"]


async def test_new_run_sends_a_batch_run_with_its_cost_cap_and_the_header_shows_both(monkeypatch, tmp_path) -> None:
    """The TUI's New run: the cost cap typed and the batch switch ticked start the run as `--max-cost 5 --batch`
    would; the run header shows spend against the cap and the batch's state while it is pending."""
    from fakes import settle, wait_until
    from textual.widgets import Checkbox
    from tui_support import new_run_with

    from qatui.config import parse_config
    from qatui.tui.app import QatuiApp
    from qatui.tui.screens.run import RunScreen
    from qatui.tui.widgets.run_header import RunHeader

    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("FAKE_KEY", "sk-batch-test-not-a-real-key")
    from qatui.llm import client as client_module

    client_module._backbones.clear()
    with FakeLLMServer(answer_any, model="gpt-4o-mini", max_lifetime_s=100.0) as server:
        server.script_batches(hold=True)
        settings = parse_config(config(tmp_path, server, "cache", model="openai/gpt-4o-mini").read_text(), "test.toml")
        store = SessionStore(tmp_path / "sessions")
        app = QatuiApp(settings, store)
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await new_run_with(app, pilot, "pairwise")
            await pilot.press("f4")
            screen.query_one("#backbone").value = "fake"
            screen.query_one("#limit").value = "2"
            for bad in ("0", "nan", "1e9", "five"):  # refused as --max-cost refuses them, before any work
                screen.query_one("#max-cost").value = bad
                await settle(pilot, lambda bad=bad: f"✗ cost cap: {bad}" in str(screen.query_one("#plan").content).replace("'", ""),
                             f"the refusal of {bad}")
            screen.query_one("#max-cost").value = "5"
            screen.query_one("#batch", Checkbox).value = True
            await settle(pilot, lambda: "batch · cap $5" in str(screen.query_one("#plan").content), "the plan line")
            await pilot.press("ctrl+s")
            await wait_until(pilot, lambda: isinstance(app.screen, RunScreen), timeout=60)
            header = app.screen.query_one(RunHeader)
            await wait_until(pilot, lambda: "batch validating 0/" in header.limits, "the pending batch", timeout=60)
            assert "of $5 cap" in header.limits
            server.release_batches()
            await wait_until(pilot, lambda: app.screen.ended is not None, "the run's end", timeout=60)
            (entry,) = store.list()
    client_module._backbones.clear()
    assert entry["batch"] is True and entry["max_cost_usd"] == 5 and entry["status"] == "completed"
    assert server.n_batches >= 1 and sum(server.batch_submitted.values()) == entry["batches"][0]["requests"]


def test_ctrl_c_with_a_batch_pending_ends_at_once_and_resume_collects_it(server, tmp_path) -> None:
    """Ctrl-C stops a batch run without waiting for its pending batch (a provider may take hours), keeps the batch
    recorded, and a resume collects it: nothing submitted twice."""
    data, sessions = dataset(tmp_path), tmp_path / "sessions"
    conf = config(tmp_path, server, "cache", poll_s=0.1)
    server.script_batches(hold=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1]), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "qatui", "--config", str(conf), "--sessions-dir", str(sessions)]
    proc = subprocess.Popen([*cmd, "run", str(data), "--judge", "pairwise", "--backbone", "fake", "--batch"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        poll(lambda: server.n_batch_polls >= 2 or proc.poll() is not None, timeout_s=60)
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        proc.send_signal(signal.SIGINT)
        code = proc.wait(20)  # the batch is still pending at the provider: not waited for
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    assert code == 130
    (session_dir,) = sessions.iterdir()
    meta = SessionStore(sessions).open(session_dir.name).meta
    assert meta["status"] == "cancelled" and [b["id"] for b in meta["batches"]] == ["batch_fake_0"]
    server.release_batches()
    done = subprocess.run([*cmd, "sessions", "resume", session_dir.name, "--json"], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["judges"]["pairwise"]["n_failed"] == 0
    assert server.n_batches == 1 and max(server.batch_submitted.values()) == 1


async def test_a_request_asked_while_its_batch_runs_waits_for_it_and_is_sent_once(server, tmp_path) -> None:
    """Two items asking the same request, the second after the first's batch was submitted: one line, one answer."""
    import asyncio

    from qatui.config import parse_config
    from qatui.llm.batch import BATCH, Batcher
    from qatui.llm.client import make_client

    settings = parse_config(config(tmp_path, server, "cache").read_text(), "test.toml")
    client = make_client("fake", settings)
    recorded: list[dict] = []
    batcher = Batcher(settings.batch, lambda doc, keys: recorded.append(doc))
    server.script_batches(hold=True)
    messages = [{"role": "user", "content": "Which answer is better, 1 or 2?"}]
    token = BATCH.set(batcher)
    try:
        first = asyncio.create_task(client.complete(messages, purpose="same"))
        while server.n_batches < 1:  # the first request's batch is submitted, and held at the server
            assert not first.done()
            await asyncio.sleep(0.02)
        second = asyncio.create_task(client.complete(messages, purpose="same"))
        while server.n_batch_polls < 3:
            await asyncio.sleep(0.02)
        server.release_batches()
        answers = await asyncio.wait_for(asyncio.gather(first, second), 60)
    finally:
        BATCH.reset(token)
        await batcher.close()
    assert answers[0].text == answers[1].text and not answers[0].event.cached
    # the second shared the first's line: free, counted as a cache hit is, though not answered from the cache (0 sends)
    assert answers[1].event.cached and answers[1].event.attempts == 1 and answers[1].event.cost_usd == 0
    assert server.n_batches == 1 and list(server.batch_submitted.values()) == [1]
    assert recorded[0]["id"] == "batch_fake_0"


def _line(custom_id: str, code: int, body: dict) -> str:
    return json.dumps({"custom_id": custom_id, "response": {"status_code": code, "body": body}})


def test_two_lines_for_one_request_never_pick_one_answer_by_their_order_nor_lose_a_paid_one() -> None:
    """The provider's files named one request twice: the last line won, so two different answers scored whichever
    came last, and a failure line after an answered one threw the paid answer away (asked and paid again). Now an
    answer wins over a failure, the same answer twice is one, and two different answers are neither: asked again,
    both counted in what the batch cost."""
    from qatui.llm.batch import _merged, _read_lines

    a = {"choices": [{"message": {"content": '{"choice": "A"}'}}], "usage": {"prompt_tokens": 5}}
    b = {"choices": [{"message": {"content": '{"choice": "B"}'}}], "usage": {"prompt_tokens": 5}}
    failed = {"error": {"code": "server_error", "message": "try again"}}

    def read(*lines: str):
        return _read_lines("batch_1", "\n".join(lines).encode(), "completed")["r1"]

    for order in ((a, b), (b, a)):
        both = read(*(_line("r1", 200, body) for body in order))
        assert both.body is None and "two different answers" in both.reason and both.retried
        assert list(both.paid) == list(order)
    assert read(_line("r1", 200, a), _line("r1", 200, a)).body == a
    assert read(_line("r1", 200, a), _line("r1", 500, failed)).body == a
    assert read(_line("r1", 500, failed), _line("r1", 200, a)).body == a
    output, errors = read(_line("r1", 200, a)), read(_line("r1", 500, failed))
    assert _merged(output, errors).body == a  # the error file read after the output file
    c = {"choices": [{"message": {"content": '{"choice": "C"}'}}], "usage": {"prompt_tokens": 5}}
    three = read(_line("r1", 200, a), _line("r1", 200, b), _line("r1", 200, c), _line("r1", 200, a))
    assert three.body is None and list(three.paid) == [a, b, c]  # a third answer is never chosen by its order


def test_an_answer_holding_a_line_separator_unescaped_is_read_whole() -> None:
    """A batch runner that writes its JSON unescaped (as `json.dumps(..., ensure_ascii=False)` does) may put a U+2028
    in an answer's text: the file was split there too, both halves were unreadable and skipped, and the paid
    answer was missing (asked and paid again)."""
    import json as json_module

    from qatui.llm.batch import _read_lines

    body = {"choices": [{"message": {"content": '{"rationale": "one\u2028two", "choice": "A"}'}}],
            "usage": {"prompt_tokens": 5}}
    line = json_module.dumps({"custom_id": "r1", "response": {"status_code": 200, "body": body}}, ensure_ascii=False)
    assert "\u2028" in line
    assert _read_lines("batch_1", (line + "\n").encode(), "completed")["r1"].body == body


def test_a_batch_file_naming_a_request_twice_neither_scores_a_guess_nor_pays_an_answer_twice(monkeypatch, tmp_path,
                                                                                              capsys) -> None:
    """The provider's output and error files name some requests twice, through qatui's real CLI and LiteLLM's real
    batch calls: the same answer twice, and an answer beside a failure line, are one answer (never asked again);
    two different answers are neither (asked again in the next batch, both counted in what the first one cost)."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("FAKE_KEY", "sk-batch-test-not-a-real-key")
    from qatui.llm import client as client_module

    client_module._backbones.clear()
    kinds = ("same", "error", "other")
    with FakeLLMServer(answer_any, model="gpt-4o-mini", max_lifetime_s=90.0) as server:
        data, sessions = dataset(tmp_path), tmp_path / "sessions"
        model = "openai/gpt-4o-mini"
        direct = run(capsys, config(tmp_path, server, "d", model=model), sessions, data, "--judge", "pairwise")
        clean = run(capsys, config(tmp_path, server, "c", model=model), sessions, data, "--judge", "pairwise",
                    "--batch")
        server.script_batches(duplicates=lambda index, body: kinds[index % 3], only={1})
        submitted_before = dict(server.batch_submitted)
        doubled = run(capsys, config(tmp_path, server, "x", model=model), sessions, data, "--judge", "pairwise",
                      "--batch")
    client_module._backbones.clear()
    assert doubled["status"] == "completed" and doubled["judges"]["pairwise"]["n_failed"] == 0
    assert verdicts(sessions, doubled["session"], "pairwise") == verdicts(sessions, direct["session"], "pairwise")
    first, *later = SessionStore(sessions).open(doubled["session"]).meta["batches"]
    (clean_batch,) = SessionStore(sessions).open(clean["session"]).meta["batches"]
    n = first["requests"]
    others = [k for k in range(n) if kinds[k % 3] == "other"]
    assert server.counts["batch-duplicate-other"] == len(others) > 0
    assert server.counts["batch-duplicate-same"] > 0 and server.counts["batch-duplicate-error"] > 0
    asked = {custom_id: count - submitted_before.get(custom_id, 0) for custom_id, count in server.batch_submitted.items()}
    again = sorted(custom_id for custom_id, count in asked.items() if count == 2)
    assert len(again) == len(others) and set(asked.values()) <= {0, 1, 2}, asked
    assert first["retried"] == len(others) and later, "the two-answer requests were not asked again"
    assert any("two different answers" in reason for reason in first["reasons"]), first["reasons"]
    assert first["cost_usd"] > clean_batch["cost_usd"] * (1 + 0.5 * len(others) / n), "a paid answer was not counted"
    spent = sum(b["cost_usd"] for b in [first, *later])  # the second answers billed reach the session's spend too
    assert doubled["llm"]["cost_usd"] == pytest.approx(spent, rel=1e-9) and spent > clean["llm"]["cost_usd"]


def _cli_run(conf: Path, sessions: Path, data: Path, *args: str, timeout_s: float = 120) -> dict:
    """qatui's CLI `run --json` in its own process, bounded in time: a run that hangs fails the test."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1]), os.environ.get("PYTHONPATH", "")])}
    try:
        done = subprocess.run([sys.executable, "-m", "qatui", "--config", str(conf), "--sessions-dir", str(sessions),
                               "run", str(data), "--backbone", "fake", "--json", *args], capture_output=True,
                              text=True, timeout=timeout_s, env=env)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the run did not end within {timeout_s:.0f} s: {(e.stderr or b'')[-1500:]!r}")
    assert done.stdout.strip(), done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("usage", ["not-a-dict", [1, 2]])
def test_a_batch_line_whose_usage_is_no_object_is_answered_without_its_tokens_and_the_run_ends(server, tmp_path,
                                                                                                usage) -> None:
    """A batch output line whose `usage` was a string or a list stopped the batch's collection with an AttributeError,
    and every request waiting on the batch waited for good: the run hung. Now such a usage reads as absent (as a
    direct reply's unreadable counts do): the answers are used, their tokens counted as none."""
    data, sessions = dataset(tmp_path), tmp_path / "sessions"
    direct = _cli_run(config(tmp_path, server, "direct-cache"), sessions, data, "--judge", "pairwise")
    server.script_batches(reshape=lambda index, body: {**body, "usage": usage})
    batched = _cli_run(config(tmp_path, server, "cache"), sessions, data, "--judge", "pairwise", "--batch")
    assert batched["status"] == "completed" and batched["judges"]["pairwise"]["n_failed"] == 0, batched
    assert verdicts(sessions, batched["session"], "pairwise") == verdicts(sessions, direct["session"], "pairwise")
    assert batched["llm"]["prompt_tokens"] == 0 < direct["llm"]["prompt_tokens"]
    (batch,) = SessionStore(sessions).open(batched["session"]).meta["batches"]
    assert batch["collected"] and batch["status"] == "completed"


async def test_a_batch_that_cannot_be_read_to_its_end_fails_its_calls_in_one_line_instead_of_hanging(server,
                                                                                                   tmp_path) -> None:
    """Whatever goes wrong while a batch is read (here: its record cannot be written as it is collected, the disk
    full for a moment), every call waiting on it ends, failed with the reason in one line, and is not submitted
    again; before, the reading task died and its calls waited for good."""
    import asyncio

    from qatui.config import parse_config
    from qatui.llm.batch import BATCH, Batcher
    from qatui.llm.client import make_client
    from qatui.llm.errors import LLMCallError

    refused: list[dict] = []

    def record(doc: dict, keys: list[str] | None) -> None:
        if doc.get("collected") and not refused:
            refused.append(doc)
            raise OSError(28, "No space left on device")

    settings = parse_config(config(tmp_path, server, "cache").read_text(), "test.toml")
    client = make_client("fake", settings)
    batcher = Batcher(settings.batch, record)
    token = BATCH.set(batcher)
    try:
        calls = [client.complete([{"role": "user", "content": f"Which answer is better, 1 or 2? ({n})"}],
                                 purpose="same") for n in range(3)]
        done = await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 60)
    finally:
        BATCH.reset(token)
        await batcher.close()
    assert all(isinstance(e, LLMCallError) for e in done), done
    reasons = {str(e) for e in done}
    assert all("\n" not in r and "could not be read" in r and "No space left on device" in r for r in reasons), reasons
    assert server.n_batches == 1 and set(server.batch_submitted.values()) == {1} and refused


MALFORMED = {
    "null choice": lambda body: {**body, "choices": [None]},
    "null message": lambda body: {**body, "choices": [{**body["choices"][0], "message": None}]},
    "choices text": lambda body: {**body, "choices": "x"},
    "empty": lambda body: {"usage": body["usage"]},
    "token count text": lambda body: {**body, "usage": {**body["usage"], "prompt_tokens": "abc"}},
}


def _batch_spend(sessions: Path, session_id: str) -> float:
    """What a session's batch records say its batches cost."""
    return sum(b["cost_usd"] for b in SessionStore(sessions).open(session_id).meta["batches"])


def test_a_batch_line_that_is_no_chat_completion_fails_its_call_in_one_line_and_its_cost_is_spent(monkeypatch,
                                                                                                   tmp_path,
                                                                                                   capsys) -> None:
    """Answer lines with status 200 whose body is no chat completion (`choices: [null]`, `message: null`, `choices:
    "x"`, `{}`) made LiteLLM's converter raise a bare Exception: its call's failure was a traceback with the response
    dumped, no call was recorded, and the line the provider billed was missing from the session's spend. Now each
    fails its call in one line, not asked again, its cost recorded on the call; a line whose token count is text is
    answered, that count read as none. The session's spend is what its batch records say."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("FAKE_KEY", "sk-batch-test-not-a-real-key")
    from qatui.llm import client as client_module

    client_module._backbones.clear()
    kinds = list(MALFORMED)
    with FakeLLMServer(answer_any, model="gpt-4o-mini", max_lifetime_s=90.0) as server:
        data, sessions = dataset(tmp_path), tmp_path / "sessions"
        server.script_batches(reshape=lambda index, body: MALFORMED[kinds[index % 7]](body) if index % 7 < 5 else body)
        code = main(["--config", str(config(tmp_path, server, "c", model="openai/gpt-4o-mini")), "--sessions-dir",
                     str(sessions), "run", str(data), "--backbone", "fake", "--json", "--judge", "pairwise", "--batch"])
        result = json.loads(capsys.readouterr().out)
    client_module._backbones.clear()
    assert code in (0, 1) and result["status"] in ("completed", "failed")
    session = SessionStore(sessions).open(result["session"])
    calls = [call for doc in session.results().values() for call in doc.get("calls") or []]
    failed = [call for call in calls if not call.get("ok", True)]
    assert failed and all(call["cost_usd"] > 0 for call in failed)
    errors = {call["error"] for call in failed}
    assert all("\n" not in e and "Traceback" not in e and "is no chat completion" in e for e in errors), errors
    assert {e.rsplit(": ", 1)[1] for e in errors} == {"a choice is no object", "a choice has no message",
                                                      "its choices are no list", "it has no choices"}
    reasons = {doc["failure"]["reason"] for doc in session.results().values() if doc.get("failure")}
    assert reasons and all("\n" not in r and "Traceback" not in r for r in reasons), reasons
    assert set(server.batch_submitted.values()) == {1}, "a line that is no chat completion was asked again"
    assert len(calls) == sum(server.batch_submitted.values())
    assert result["llm"]["cost_usd"] == pytest.approx(_batch_spend(sessions, result["session"]), rel=1e-9)


def test_identical_requests_sharing_one_batch_line_are_charged_once(monkeypatch, tmp_path, capsys) -> None:
    """Four items asking the same requests share each batch line (one line per request, billed once); each was
    charged the whole line, so the session's spend was four times what the provider billed and `--max-cost` stopped
    the run early. Now the first call reading a line pays for it, and those sharing it cost nothing, counted as cache
    hits are (with what the line cost as their `cached_cost_usd`): the session's spend is what its batch cost."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("FAKE_KEY", "sk-batch-test-not-a-real-key")
    from qatui.llm import client as client_module

    client_module._backbones.clear()
    with FakeLLMServer(answer_any, model="gpt-4o-mini", max_lifetime_s=90.0) as server:
        data, sessions = dataset(tmp_path), tmp_path / "sessions"
        first = json.loads(data.read_text().splitlines()[0])
        data.write_text("".join(json.dumps({**first, "id": f"copy-{i}"}, ensure_ascii=False) + "\n" for i in range(4)))
        result = run(capsys, config(tmp_path, server, "c", model="openai/gpt-4o-mini"), sessions, data,
                     "--judge", "pairwise", "--batch")
    client_module._backbones.clear()
    assert result["status"] == "completed" and result["judges"]["pairwise"]["n_failed"] == 0
    billed = sum(server.batch_answered.values())
    assert result["llm"]["calls"] == 4 * billed and result["llm"]["cached"] == 3 * billed > 0
    (batch,) = SessionStore(sessions).open(result["session"]).meta["batches"]
    assert batch["requests"] == billed
    assert result["llm"]["cost_usd"] == pytest.approx(batch["cost_usd"], rel=1e-9) and batch["cost_usd"] > 0
    assert result["llm"]["cached_cost_usd"] == pytest.approx(3 * batch["cost_usd"], rel=1e-9)


def test_a_batch_line_whose_usage_no_model_could_report_costs_nothing_in_its_record(monkeypatch) -> None:
    """A line a batch's record sums (one no call reads, an answer billed twice) is held to the bounds a usage report
    is held to without its request: a trillion prompt tokens, or two million answer tokens, is no cost to add."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from qatui.llm.batch import _line_cost
    from qatui.llm.spend import price

    def line(prompt: int, completion: int) -> dict:
        return {"choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion}}

    sane = _line_cost("openai/gpt-4o-mini", line(1_000, 200))
    assert sane[0] > 0 and sane[1] == pytest.approx(price("openai/gpt-4o-mini", 1_000, 200))
    for broken in (line(10 ** 12, 200), line(1_000, 2_000_000)):
        assert _line_cost("openai/gpt-4o-mini", broken)[:2] == (0.0, 0.0)


def test_a_request_given_up_in_a_batch_is_counted_once_however_often_its_item_is_resumed(server, tmp_path,
                                                                                        capsys) -> None:
    """Every line a 400: each request is given up (not asked again). A resume judges the failed items again and reads
    the same lines: the batch's record counted each given up request again (6, 12, 18...); now once."""
    data, sessions = dataset(tmp_path), tmp_path / "sessions"
    conf = config(tmp_path, server, "cache")
    server.script_batches(faults=lambda index, body: "400")
    args = ["--config", str(conf), "--sessions-dir", str(sessions)]
    code = main([*args, "run", str(data), "--backbone", "fake", "--json", "--judge", "pairwise", "--batch"])
    first = json.loads(capsys.readouterr().out)
    assert code == 1 and first["judges"]["pairwise"]["coverage"]["failed"] == len(ITEMS)
    batches = SessionStore(sessions).open(first["session"]).meta["batches"]
    counted = [doc.get("gave_up") for doc in batches]
    assert sum(counted) == sum(doc["requests"] for doc in batches)  # each request given up, once
    submitted = dict(server.batch_submitted)
    for _ in range(2):
        code = main([*args, "sessions", "resume", first["session"], "--json"])
        capsys.readouterr()
        assert code == 1
    again = [doc.get("gave_up") for doc in SessionStore(sessions).open(first["session"]).meta["batches"]]
    assert again == counted and dict(server.batch_submitted) == submitted  # nothing submitted twice either
