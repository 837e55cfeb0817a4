"""A backbone over several deployments (`[[backbones.NAME.deployments]]`, LiteLLM's Router), end to end.

Two scripted OpenAI-compatible servers on 127.0.0.1 are the deployments; qatui's real client and
CLI run against them: a deployment answering 429 hands its calls to the other and no item is
lost; when every deployment fails, qatui's own backoff applies and the call fails naming each;
the preflight names a dead deployment; no key reaches a file or an output; the cache answers a
rerun whichever deployment answered first.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path

import pytest
from llm_server import FakeLLMServer

from qatui.cli import main
from qatui.config import parse_config
from qatui.errors import ConfigError
from qatui.events import EVENT_SINK, LLMCallFinished
from qatui.llm import LLMCallError, make_client

KEYS = {"POOL_KEY_A": "sk-pool-a-3c9e1f7b2d5a8e4c", "POOL_KEY_B": "sk-pool-b-9a1d7e3f5c2b8a6d"}
ANSWER = json.dumps({"rationale": "A states the reference's fact.", "choice": "A"})


@pytest.fixture
def servers(monkeypatch):
    """Deployments a and b: two scripted servers answering a valid pairwise verdict, their keys set."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    with FakeLLMServer(lambda body: ANSWER, max_lifetime_s=90) as a, \
            FakeLLMServer(lambda body: ANSWER, max_lifetime_s=90) as b:
        yield a, b


def pool_toml(tmp_path: Path, first: tuple[str, str, str], second: tuple[str, str, str], extra: str = "") -> Path:
    """A config whose default backbone `pool` has two deployments, each (name, api_base, key variable)."""
    deployments = "".join(f'[[backbones.pool.deployments]]\nname = "{name}"\nmodel = "openai/fake-model"\n'
                          f'api_base = "{base}"\napi_key_env = "{env}"\n' for name, base, env in (first, second))
    path = tmp_path / "config.toml"
    path.write_text(f'[models]\ndefault_backbone = "pool"\n[cache]\ndir = "{tmp_path / "cache"}"\n'
                    f'[backbones.pool]\nmax_concurrency = 4\n{extra}{deployments}', encoding="utf-8")
    return path


def pairs(tmp_path: Path, n: int = 6) -> Path:
    """N two-answer items with a reference and a human label."""
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps({
        "id": f"q{i}", "question": f"What is {i} doubled?", "references": [f"{2 * i}"],
        "candidates": {"a": f"{2 * i}", "b": f"{2 * i + 1}"},
        "gold": {"kind": "pairwise", "a": "a", "b": "b", "labels": ["A"]}}) + "\n" for i in range(n)), encoding="utf-8")
    return path


def cli(capsys, config: Path, tmp_path: Path, *args: str) -> tuple[int, str, str]:
    """`qatui --config ... --sessions-dir ... ARGS`: exit status, stdout, stderr."""
    code = main(["--config", str(config), "--sessions-dir", str(tmp_path / "sessions"), *args])
    out, err = capsys.readouterr()
    return code, out, err


def stored_calls(tmp_path: Path) -> list[dict]:
    """Every call record in every session's result shards."""
    calls = []
    for shard in (tmp_path / "sessions").rglob("*.json"):
        for table in json.loads(shard.read_text(encoding="utf-8")).values():
            for doc in table.values():
                calls.extend(doc.get("calls") or [])
    return calls


@pytest.mark.parametrize(("toml", "message"), [
    ('[backbones.p]\n[[backbones.p.deployments]]\nmodel = "openai/a"\nrpm = 0\n',
     "key 'backbones.p.deployments[0].rpm': Input should be greater than or equal to 1"),
    ('[backbones.p]\n[[backbones.p.deployments]]\nmodel = "openai/a"\napi_key = "sk-1"\n',
     "unknown key 'backbones.p.deployments[0].api_key' (API keys are never stored"),
    ('[backbones.p]\n[[backbones.p.deployments]]\nmodel = "openai/a"\napi_key_env = "sk-live-1"\n',
     "key 'backbones.p.deployments[0].api_key_env': Value error, must be the NAME of an environment variable"),
    ('[backbones.p]\n[[backbones.p.deployments]]\nmodel = "openai/a"\n[[backbones.p.deployments]]\nmodel = "openai/b"\n',
     "key 'backbones.p.model': the deployments name different model strings; set model"),
    ('[backbones.p]\napi_base = "http://127.0.0.1:1"\n[[backbones.p.deployments]]\nmodel = "openai/a"\n',
     "key 'backbones.p.api_base': with deployments, set it in each [[deployments]] table instead"),
    ('[backbones.p]\n[[backbones.p.deployments]]\nname = "x"\nmodel = "openai/a"\n'
     '[[backbones.p.deployments]]\nname = "x"\nmodel = "openai/a"\n', "key 'backbones.p.deployments': the name 'x' is used twice"),
    ('[backbones.p]\nrouting_strategy = "fastest"\n[[backbones.p.deployments]]\nmodel = "openai/a"\n',
     "key 'backbones.p.routing_strategy': Input should be 'simple-shuffle', 'least-busy'"),
    ('[backbones.p]\nmodel = "openai/a"\ncooldown_s = 1\n',
     "key 'backbones.p.cooldown_s': only a backbone with [[deployments]] is routed"),
    ('[backbones.p]\n[[backbones.p.deployments]]\nmodel = "local/smollm2"\n',
     "key 'backbones.p.deployments[0].model': Value error, an embedded local/ model runs in this process"),
    ('[backbones.p]\n[[backbones.p.deployments]]\napi_base = "http://127.0.0.1:1"\n',
     "key 'backbones.p.deployments[0].model': Field required"),
])
def test_bad_deployments_are_one_line_errors_naming_table_and_key(toml: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(toml, "c.toml")
    assert str(caught.value).startswith(f"c.toml: {message}") and "\n" not in str(caught.value)


def test_a_good_table_reads_with_its_defaults() -> None:
    config = parse_config('[backbones.p]\nrouting_strategy = "least-busy"\n[[backbones.p.deployments]]\n'
                          'model = "openai/m"\nrpm = 60\nweight = 2\n[[backbones.p.deployments]]\nname = "spare"\n'
                          'model = "openai/m"\norder = 2\n', "c.toml")
    table = config.backbones["p"]
    assert (table.model, table.deployment_names(), table.cooldown_s) == ("openai/m", ["d1", "spare"], 5.0)


def test_a_deployment_answering_429_hands_its_calls_to_the_other(servers, tmp_path, capsys) -> None:
    a, b = servers
    a.script(faults=lambda index, body: "429")  # a rate-limits everything, the preflight's probe included
    config = pool_toml(tmp_path, ("a", a.base_url, "POOL_KEY_A"), ("b", b.base_url, "POOL_KEY_B"))
    code, out, err = cli(capsys, config, tmp_path, "run", str(pairs(tmp_path)), "--judge", "pairwise", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["judges"]["pairwise"]["coverage"]["scored"] == 6 and result["judges"]["pairwise"]["n_failed"] == 0
    llm = result["llm"]
    assert llm["calls"] == 12 and b.n_requests == 12 + 1  # both orders of 6 pairs, plus b's preflight probe
    assert a.n_requests >= 2  # its probe, and at least one call of the run before its cooldown
    assert llm["deployments"]["pool/b"]["calls"] == 12 and llm["deployments"]["pool/b"]["tokens"] > 0
    assert llm["deployments"]["pool/a"] == {"calls": 0, "rate_limited": a.n_requests - 1, "failures": 0, "tokens": 0}
    calls = stored_calls(tmp_path)
    assert len(calls) == 12 and {c["deployment"] for c in calls} == {"pool/b"}
    assert sum(c["hop_errors"].count("pool/a 429") for c in calls) == a.n_requests - 1
    code, out, _ = cli(capsys, config, tmp_path, "sessions", "show", result["session"])
    assert code == 0 and f"pool/a 0 calls, 0 tokens, {a.n_requests - 1}×429 · pool/b 12 calls" in " ".join(out.split())


def test_a_deployment_answering_an_unnamed_server_error_hands_its_calls_to_the_other(servers, tmp_path, capsys) -> None:
    """A 200 whose error object has a word for its code (LiteLLM's bare APIError) is transient for the Router's turns
    as for a plain backbone (`llm.errors.is_transient`): the other deployment answers, no item is lost. (LiteLLM's
    Router itself fails on that word status with a TypeError; the deployment's error is what is read.)"""
    from llm_server import Fault

    a, b = servers
    word = {"message": "overloaded (fake LLM server)", "type": "server_error", "code": "overloaded"}
    a.script(lambda body: ANSWER, faults=lambda index, body: "ok" if index == 0 else Fault("error-200", error=word))
    # (its preflight probe answered: a deployment failing that would be refused before any work)
    config = pool_toml(tmp_path, ("a", a.base_url, "POOL_KEY_A"), ("b", b.base_url, "POOL_KEY_B"))
    code, out, err = cli(capsys, config, tmp_path, "run", str(pairs(tmp_path)), "--judge", "pairwise", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["judges"]["pairwise"]["coverage"]["scored"] == 6 and result["judges"]["pairwise"]["n_failed"] == 0
    calls = stored_calls(tmp_path)
    assert len(calls) == 12 and {c["deployment"] for c in calls} == {"pool/b"}


def test_when_every_deployment_fails_qatui_backs_off_then_fails_naming_each(servers, tmp_path) -> None:
    a, b = servers
    a.script(faults=lambda index, body: "429")
    b.script(faults=lambda index, body: "503")
    config = parse_config(pool_toml(tmp_path, ("a", a.base_url, "POOL_KEY_A"), ("b", b.base_url, "POOL_KEY_B"),
                                    extra="max_attempts = 2\ncooldown_s = 0\n").read_text(), "c.toml")
    client = make_client("pool", config)
    waits: list[float] = []

    async def wait(seconds: float) -> None:
        waits.append(seconds)

    client.backbone.sleep = wait
    events: list[LLMCallFinished] = []

    async def ask() -> None:
        EVENT_SINK.set(events.append)
        await client.complete([{"role": "user", "content": "Is water wet?"}], purpose="test", stream=False)

    with pytest.raises(LLMCallError) as caught:
        asyncio.run(ask())
    message = str(caught.value)
    assert "rate limited (429) at pool/a ×2" in message and "service unavailable (503) at pool/b ×2" in message
    assert (a.n_requests, b.n_requests, len(waits)) == (2, 2, 1)  # each deployment once per try, one backoff between
    assert not events[0].ok and sorted(events[0].hop_errors) == ["pool/a 429", "pool/a 429", "pool/b 503", "pool/b 503"]
    assert KEYS["POOL_KEY_A"] not in message and KEYS["POOL_KEY_B"] not in message


DRAFT = "The better answer is [[A]], although on reflection B is more complete, so [[B]]."


def test_a_pool_s_stream_that_ends_mid_answer_is_never_an_answer(servers, tmp_path) -> None:
    """A pool's stream is read through the Router's own wrapper, which records no finish_reason: one that ended in
    order half-way (no finish_reason, no [DONE]) was taken whole, its draft "[[A]]" the verdict. It is asked again,
    and fails when every try ends so; a whole stream from the pool is still the answer."""
    a, b = servers
    config = parse_config(pool_toml(tmp_path, ("a", a.base_url, "POOL_KEY_A"), ("b", b.base_url, "POOL_KEY_B"),
                                    extra="max_attempts = 3\n").read_text(), "c.toml")
    client = make_client("pool", config)

    async def no_wait(seconds: float) -> None:
        return None

    client.backbone.sleep = no_wait

    async def ask(question: str) -> str | LLMCallError:
        EVENT_SINK.set(lambda event: None)
        try:
            return (await client.complete([{"role": "user", "content": question}], purpose="test", stream=True)).text
        except LLMCallError as e:
            return e

    for server in servers:
        server.script(lambda body: DRAFT, faults=lambda index, body: "end-mid-stream")
    failed = asyncio.run(ask("Which is better?"))
    assert isinstance(failed, LLMCallError) and "the stream ended before its answer finished" in str(failed), failed
    assert "connection failed at pool/" in str(failed) and a.n_requests + b.n_requests == 3
    for server in servers:
        server.script(lambda body: DRAFT, faults=["end-mid-stream"])  # each deployment's first answer only: 3 tries do
    assert asyncio.run(ask("Which is better, again?")) == DRAFT
    for server in servers:
        server.script(lambda body: DRAFT)
    assert asyncio.run(ask("And a third time?")) == DRAFT


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_preflight_names_a_dead_deployment_before_a_session(servers, tmp_path, capsys, monkeypatch) -> None:
    a, _ = servers
    dead = f"http://127.0.0.1:{_closed_port()}/v1"
    config = pool_toml(tmp_path, ("a", a.base_url, "POOL_KEY_A"), ("b", dead, "POOL_KEY_B"))
    code, _, err = cli(capsys, config, tmp_path, "run", str(pairs(tmp_path)), "--judge", "pairwise")
    assert code == 2 and "backbone 'pool': deployment 'pool/b'" in err and dead in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "sessions").exists()
    monkeypatch.delenv("POOL_KEY_A")
    config = pool_toml(tmp_path, ("a", a.base_url, "POOL_KEY_A"), ("b", a.base_url, "POOL_KEY_B"))
    code, _, err = cli(capsys, config, tmp_path, "run", str(pairs(tmp_path)), "--judge", "pairwise")
    assert code == 2 and "deployment 'pool/a'" in err and "POOL_KEY_A is not set" in err
    assert not (tmp_path / "sessions").exists()


def test_no_deployment_key_reaches_a_file_or_an_output(servers, tmp_path, capsys) -> None:
    a, b = servers
    config = pool_toml(tmp_path, ("a", a.base_url, "POOL_KEY_A"), ("b", b.base_url, "POOL_KEY_B"))
    outputs = []
    code, out, err = cli(capsys, config, tmp_path, "run", str(pairs(tmp_path)), "--judge", "pairwise", "--json")
    outputs += [out, err]
    assert code == 0
    session = json.loads(out)["session"]
    for args in (["sessions", "show", session], ["sessions", "show", session, "--json"],
                 ["sessions", "show", session, "--item", "q1", "--json"], ["models", "--check"]):
        outputs += list(cli(capsys, config, tmp_path, *args)[1:])
    assert any(KEYS["POOL_KEY_A"] in " ".join(h.values()) for h in a.headers)  # each deployment got its own key
    assert any(KEYS["POOL_KEY_B"] in " ".join(h.values()) for h in b.headers)
    a.script(faults=["401"] * 50)  # a rejected key: the refusal quotes no key either
    outputs += list(cli(capsys, config, tmp_path, "run", str(pairs(tmp_path)), "--judge", "pairwise", "--no-cache")[1:])
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any("cache" in p.parts for p in written) and any("sessions" in p.parts for p in written)
    leaks = [str(p) for p in written for key in KEYS.values() if key in p.read_text(encoding="utf-8", errors="replace")]
    leaks += [f"output {i}" for i, text in enumerate(outputs) for key in KEYS.values() if key in text]
    assert leaks == []


def test_a_rerun_hits_the_cache_whichever_deployment_answered(servers, tmp_path, capsys) -> None:
    a, b = servers
    a.script(faults=lambda index, body: "429")  # first run: b answers everything
    data = pairs(tmp_path)
    config = pool_toml(tmp_path, ("a", a.base_url, "POOL_KEY_A"), ("b", b.base_url, "POOL_KEY_B"))
    code, out, _ = cli(capsys, config, tmp_path, "run", str(data), "--judge", "pairwise", "--json")
    assert code == 0 and json.loads(out)["llm"]["deployments"]["pool/b"]["calls"] == 12
    a.script(lambda body: ANSWER)
    b.script(faults=lambda index, body: "429")  # now only a would answer, under other names and in another order
    before = (a.n_requests, b.n_requests)
    config = pool_toml(tmp_path, ("east", b.base_url, "POOL_KEY_B"), ("west", a.base_url, "POOL_KEY_A"))
    started = time.perf_counter()
    code, out, _ = cli(capsys, config, tmp_path, "run", str(data), "--judge", "pairwise", "--json")
    llm = json.loads(out)["llm"]
    assert code == 0 and llm["calls"] == llm["cached"] == 12 and "deployments" not in llm
    assert (a.n_requests - before[0], b.n_requests - before[1]) == (1, 1)  # the preflight probes only
    assert time.perf_counter() - started < 30


async def test_the_run_header_shows_what_each_deployment_did(servers, tmp_path) -> None:
    from fakes import settle

    from qatui.data.loaders import load_dataset
    from qatui.engine.jobs import start_run
    from qatui.store.session import SessionStore
    from qatui.tui.app import QatuiApp
    from qatui.tui.screens.run import RunScreen
    from qatui.tui.widgets.run_header import RunHeader

    a, b = servers
    a.script(faults=lambda index, body: "429")
    config = parse_config(pool_toml(tmp_path, ("a", a.base_url, "POOL_KEY_A"),
                                    ("b", b.base_url, "POOL_KEY_B")).read_text(), "c.toml")
    store = SessionStore(tmp_path / "sessions")
    job = await asyncio.to_thread(start_run, store, load_dataset(pairs(tmp_path, 3)), ["pairwise"], config,
                                  concurrency=2)  # its preflight runs a loop of its own
    app = QatuiApp(config, store, job=job)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.ended is not None, "the run's end")
        header = "\n".join(str(s.render()) for s in app.screen.query_one(RunHeader).query("Static"))
    assert "deployments: pool/a 0 calls, 0 tokens" in header and "pool/b 6 calls" in header
    run_asked_a = a.n_requests - 1  # its one 429 to the preflight's probe is no call of the run
    # LiteLLM's router may send every call of the run to b (a cooling down after its first 429, or by its shuffle;
    # seen once, in a full suite on a loaded machine): the header counts a's 429s exactly when the run met some
    assert ("×429 · pool/b" in header) == (run_asked_a > 0), (run_asked_a, header)


def test_the_documented_example_reads() -> None:
    page = (Path(__file__).resolve().parent.parent / "docs" / "BACKBONES.md").read_text(encoding="utf-8")
    start = page.index("[backbones.pool]", page.index("## Many endpoints"))
    config = parse_config(page[start:page.index("```", start)], "docs/BACKBONES.md")
    assert config.backbones["pool"].deployment_names() == ["east", "west", "spare"]
