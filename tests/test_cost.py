"""A price before the run (`run --plan`) and a cap during it (`--max-cost`), against a provider that bills.

The provider is the scripted OpenAI-compatible server on 127.0.0.1 (tests/llm_server.py) serving
`openai/gpt-4o-mini`, a model in LiteLLM's bundled price map, and returning `usage` as OpenAI does:
the prompt's tokens (its messages and the JSON schema of its response format) and the answer's,
by the model's tokenizer. qatui's real CLI runs the `pairwise` judge (two calls per item), and
the cost a run records is LiteLLM's price of that usage.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
import zlib
from collections import Counter
from pathlib import Path

import pytest
from fakes import wait_until
from llm_server import FakeLLMServer

from qatui.cli import main
from qatui.store.session import SessionStore

KEY_ENV = "QATUI_COST_KEY"
MODEL = "gpt-4o-mini"


def rationale(body: dict) -> str:
    """A verdict whose rationale's length varies from call to call (10 to 69 words), as a model's does."""
    words = 10 + zlib.crc32(json.dumps(body["messages"]).encode()) % 60
    text = " ".join(("Response A gives the capital the reference names, and B does not " * 10).split()[:words])
    return json.dumps({"rationale": text, "choice": "A"})


def provider_usage(body: dict, text: str) -> tuple[int, int]:
    """Tokens as the provider bills them: the chat and the response format's schema, and the answer."""
    from qatui.llm._lazy import get_litellm

    ll = get_litellm()
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
    prompt = ll.token_counter(model=MODEL, messages=body["messages"])
    prompt += ll.token_counter(model=MODEL, text=json.dumps(schema)) if schema else 0
    return prompt, ll.token_counter(model=MODEL, text=text)


@pytest.fixture
def billing(monkeypatch):
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv(KEY_ENV, "sk-cost-test")
    from qatui.llm import client as client_module

    client_module._backbones.clear()
    with FakeLLMServer(rationale, model=MODEL, usage=provider_usage, max_lifetime_s=110) as server:
        yield server
    client_module._backbones.clear()


def setup(tmp_path: Path, server: FakeLLMServer, n: int = 12, model: str = f"openai/{MODEL}",
          max_tokens: int = 1024) -> tuple[Path, list[str]]:
    """A dataset of N pairs and a config whose default backbone is the server; (dataset, leading CLI args)."""
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps({
        "id": f"q{i}", "question": f"What is the capital of country number {i}?" + " Please be exact." * (i % 5),
        "references": [f"The capital of country {i} is City {i}."],
        "candidates": {"a": f"City {i} is its capital.", "b": f"Probably Town {i}, " + "a big place " * (i % 7)},
        "gold": {"kind": "pairwise", "a": "a", "b": "b", "labels": ["A"]}}) + "\n" for i in range(n)),
        encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text(f'[models]\ndefault_backbone = "mini"\n[cache]\ndir = "{tmp_path / "cache"}"\n'
                      f'[backbones.mini]\nmodel = "{model}"\napi_base = "{server.base_url}"\n'
                      f'api_key_env = "{KEY_ENV}"\nmax_tokens = {max_tokens}\n', encoding="utf-8")
    return data, ["--config", str(config), "--sessions-dir", str(tmp_path / "sessions")]


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_plan_prices_a_run_within_ten_percent_of_what_it_then_records(billing, tmp_path, capsys) -> None:
    data, common = setup(tmp_path, billing)
    code, _, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--limit", "3", "--json")
    assert code == 0, err  # the cache now holds answers: their mean length is what the plan expects of the rest
    code, out, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--plan", "--json")
    assert code == 0, err
    planned = json.loads(out)["cost"]["pairwise"]
    assert (planned["calls"], planned["prompts_counted"], planned["cached"]) == (24, 24, 6)
    assert planned["completion_measured"] == 24 and planned["usd_most"] > planned["usd"] > 0
    code, out, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--json")
    assert code == 0, err
    recorded = json.loads(out)["llm"]
    assert recorded["calls"] == 24 and recorded["cached"] == 6 and recorded["cost_usd"] > 0
    with capsys.disabled():
        print(f"\nplanned ${planned['usd']:.9f} ({planned['prompt_tokens']}+{planned['completion_tokens']} tokens), recorded ${recorded['cost_usd']:.9f} ({recorded['prompt_tokens']}+{recorded['completion_tokens']}): "
              f"{planned['usd'] / recorded['cost_usd']:.4f} of it")
    assert abs(planned["usd"] - recorded["cost_usd"]) <= 0.10 * recorded["cost_usd"], (planned, recorded)
    assert abs(planned["prompt_tokens"] - recorded["prompt_tokens"]) <= 0.05 * recorded["prompt_tokens"]
    code, out, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--plan")
    assert code == 0 and "pairwise" in out and "$" in out and "at most $" in out
    assert "24 of 24 built and counted with the backbone's tokenizer" in " ".join(out.split())


def test_the_plan_of_a_run_asked_k_times_prices_every_repeat(billing, tmp_path, capsys) -> None:
    """`--repeats 2`: the plan priced one repeat (12 calls, half the cost; its "at most", the figure to set
    --max-cost from, below what the run then spent). Each repeat is captured with its own seed and cache key, so
    after repeat 0 alone is cached (a run without repeats) the plan says so of half its calls."""
    data, common = setup(tmp_path, billing, n=6)
    plan = [*common, "run", str(data), "--judge", "pairwise", "--plan", "--json"]
    code, out, err = cli(capsys, *plan)
    once = json.loads(out)["cost"]["pairwise"]
    code, out, err = cli(capsys, *plan, "--repeats", "2")
    assert code == 0, err
    twice = json.loads(out)["cost"]["pairwise"]
    assert (once["calls"], twice["calls"], twice["prompts_counted"], twice["cached"]) == (12, 24, 24, 0)
    assert twice["prompt_tokens"] == 2 * once["prompt_tokens"] and twice["usd_most"] == pytest.approx(
        2 * once["usd_most"])
    code, out, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--json")
    assert code == 0, err  # repeat 0's answers are in the cache now, repeat 1's are not
    code, out, err = cli(capsys, *plan, "--repeats", "2")
    planned = json.loads(out)["cost"]["pairwise"]
    assert (planned["calls"], planned["cached"]) == (24, 12)
    code, out, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--repeats", "2", "--json")
    assert code == 0, err
    recorded = json.loads(out)["llm"]
    assert (recorded["calls"], recorded["cached"]) == (24, 12)
    assert abs(planned["usd"] - recorded["cost_usd"]) <= 0.10 * recorded["cost_usd"], (planned, recorded)
    assert planned["usd_most"] >= recorded["cost_usd"]


def test_the_plan_names_a_model_it_cannot_price(billing, tmp_path, capsys) -> None:
    data, common = setup(tmp_path, billing, model="openai/qatui-unpriced-model")
    code, out, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--plan", "--json")
    assert code == 0, err
    planned = json.loads(out)["cost"]["pairwise"]
    assert planned["usd"] is None and planned["unpriced"] == "not in LiteLLM's price map"
    assert planned["prompt_tokens"] > 0  # still counted
    code, out, _ = cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--plan")
    assert "no price for pairwise on mini: not in LiteLLM's price map" in " ".join(out.split())
    code, _, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--max-cost", "1")
    assert code == 2 and "is not in LiteLLM's price map" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "sessions").exists() or not any((tmp_path / "sessions").iterdir())


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "1e9", "ten"])
def test_a_bad_cap_is_refused_in_one_line(billing, tmp_path, capsys, value) -> None:
    data, common = setup(tmp_path, billing)
    code, _, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise", f"--max-cost={value}")
    assert code == 2 and "--max-cost" in err and len(err.strip().splitlines()) == 1
    assert billing.n_requests == 0


def test_the_cap_stops_the_run_below_it_and_a_higher_cap_finishes_it_asking_nothing_twice(
        billing, tmp_path, capsys) -> None:
    data, common = setup(tmp_path, billing, max_tokens=100)
    code, out, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--plan", "--json")
    whole = json.loads(out)["cost"]["pairwise"]["usd_most"]  # no answer cached yet: every answer at max_tokens
    cap = round(whole / 3, 6)
    code, out, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--max-cost", str(cap), "--json")
    assert code == 3, err
    stopped = json.loads(out)
    session = stopped["session"]
    assert stopped["status"] == "capped"
    meta = SessionStore(tmp_path / "sessions").open(session).meta
    deferred = meta.get("deferred_cost_usd", 0.0)
    assert meta["llm"]["cost_usd"] <= cap  # results and calls cut off at it
    assert meta["llm"].get("deferred_cost_usd", 0.0) == deferred  # what the session spent counts both
    judged = [body for body in billing.requests if body.get("max_tokens") != 8]  # the preflight's aside
    billed = [provider_usage(body, rationale(body)) for body in judged]
    assert meta["llm"]["calls"] - meta["llm"]["cached"] == len(judged)  # the calls of items left pending too
    assert (meta["llm"]["prompt_tokens"], meta["llm"]["completion_tokens"]) == tuple(map(sum, zip(*billed)))
    coverage = stopped["judges"]["pairwise"]["coverage"]
    assert coverage["failed"] == 0 and 0 < coverage["scored"] < 12 and coverage["pending"] == 12 - coverage["scored"]
    message = " ".join(err.split())
    said = re.search(r"Stopped at the cost cap: \$([0-9.]+) spent of \$([0-9.e-]+)", message)
    # spent: the items judged and the answered calls of items left pending (a call in flight is kept, never lost)
    spent = stopped["llm"]["cost_usd"]
    assert said and float(said[1]) == pytest.approx(spent, abs=5e-5) and float(said[2]) == cap, message
    assert f"qatui sessions resume {session} --max-cost" in message
    code, out, err = cli(capsys, *common, "sessions", "show", session)
    assert "capped" in out and f"qatui sessions resume {session} --max-cost" in " ".join(out.split())
    code, _, err = cli(capsys, *common, "sessions", "resume", session, "--json")  # the session keeps its cap
    assert code == 3 or (code == 2 and "leaves no room" in err), err
    code, out, err = cli(capsys, *common, "sessions", "resume", session, "--max-cost", "1", "--json")
    assert code == 0, err
    finished = json.loads(out)
    assert finished["status"] == "completed" and finished["judges"]["pairwise"]["coverage"]["scored"] == 12
    asked = Counter(json.dumps(body["messages"]) for body in billing.requests if body.get("max_tokens") != 8)
    assert len(asked) == 24 and max(asked.values()) == 1  # every call of the 12 items asked once over both runs
    meta = SessionStore(tmp_path / "sessions").open(session).meta
    spent = meta["llm"]["cost_usd"]  # items cut off at the cap paid calls too: counted (deferred_cost_usd)
    results = SessionStore(tmp_path / "sessions").open(session).results().values()
    bought = sum(c["cost_usd"] for doc in results for c in doc["calls"])
    assert spent == pytest.approx(bought + meta.get("deferred_cost_usd", 0.0))
    assert meta["max_cost_usd"] == 1 and 0 < spent <= whole
    # the table's cost of the row: its 24 answers, each bought once over both runs (what was spent), whether the
    # resume took a pending item's answers from the cache or not (counted in both, the row cost more than that)
    code, out, err = cli(capsys, *common, "table", str(data), "--judge", "pairwise", "--json")
    (row,) = json.loads(out)["rows"]
    assert row["session"] == session and row["answers_cost_usd"] == pytest.approx(spent), (row["llm"], deferred)


def test_a_failed_attempt_s_paid_calls_stay_in_the_spend_after_a_resume_judges_the_item_again(
        billing, tmp_path, capsys) -> None:
    """An item whose answer was cut off (finish_reason length: billed, never a verdict) failed; a resume judged it
    again, its new record superseding the failure, and the failed attempt's calls dropped out of the session's
    spend: the session said less than the provider billed, and each resume's cost cap started that much lower
    (five resumes of an always cut-off item spent 1.35 times a cap that is never to be passed). Every attempt's
    calls are the spend now."""
    data, common = setup(tmp_path, billing, n=3)
    asked_q1 = []

    def faults(index: int, body: dict) -> str:  # q1's first two calls (both orders) are cut off, later ones answered
        if "country number 1?" in json.dumps(body["messages"]) and body.get("max_tokens") != 8:
            asked_q1.append(index)
            return "length" if len(asked_q1) <= 2 else "ok"
        return "ok"

    billing.script(rationale, faults=faults)
    code, out, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--json")
    first = json.loads(out)
    assert first["judges"]["pairwise"]["coverage"]["failed"] == 1 and first["llm"]["calls"] == 6, err
    code, out, err = cli(capsys, *common, "sessions", "resume", first["session"], "--json")
    assert code == 0 and json.loads(out)["judges"]["pairwise"]["coverage"]["scored"] == 3, err
    session = SessionStore(tmp_path / "sessions").open(first["session"])
    meta, again = session.meta, session.results()[("q1", "pairwise")]["calls"]
    assert len(asked_q1) == 4 and len(again) == 2 and not any(c["cached"] for c in again)  # cut-off answers: uncached
    assert (meta["llm"]["calls"], meta["llm"]["cached"]) == (8, 0)
    assert meta["llm"]["cost_usd"] == pytest.approx(first["llm"]["cost_usd"] + sum(c["cost_usd"] for c in again))


def test_a_call_in_flight_when_the_cap_refuses_its_sibling_is_kept_and_never_asked_again(
        billing, tmp_path, capsys) -> None:
    """One pair, a cap with room for one order's worst case only: the second order is refused while the
    first is in flight (the server takes 0.5 s). The first is answered, its answer cached and its cost
    recorded with the deferred item; the resume asks the refused order alone."""
    data, common = setup(tmp_path, billing, n=1, max_tokens=100)
    code, out, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--plan", "--json")
    whole = json.loads(out)["cost"]["pairwise"]["usd_most"]
    billing.script(rationale, latency_s=0.5)
    code, out, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--max-cost",
                         str(round(whole * 0.75, 8)), "--json")
    assert code == 3 and json.loads(out)["status"] == "capped", err
    session = json.loads(out)["session"]
    meta = SessionStore(tmp_path / "sessions").open(session).meta
    assert meta.get("deferred_cost_usd", 0.0) > 0  # the answered order's cost, kept with the item left pending
    first = [body["messages"] for body in billing.requests if body.get("max_tokens") != 8]
    assert len(first) == 1  # one order sent, the other refused before it was
    (sent,) = [body for body in billing.requests if body.get("max_tokens") != 8]
    # its call and tokens are the session's too (only its cost was): the capped session said 0 calls, 0 tokens
    assert (meta["llm"]["calls"], meta["llm"]["prompt_tokens"], meta["llm"]["completion_tokens"]) == (
        1, *provider_usage(sent, rationale(sent)))
    assert meta["deferred_calls"]["pairwise"]["calls"] == 1
    code, out, err = cli(capsys, *common, "sessions", "resume", session, "--max-cost", "1", "--json")
    assert code == 0 and json.loads(out)["judges"]["pairwise"]["coverage"]["scored"] == 1, err
    asked = Counter(json.dumps(body["messages"]) for body in billing.requests if body.get("max_tokens") != 8)
    assert len(asked) == 2 and max(asked.values()) == 1  # both orders, each asked once over both runs


async def test_the_run_header_shows_the_spend_against_the_cap_and_the_pace(billing, tmp_path) -> None:
    import asyncio
    import time

    from qatui.config import load_config
    from qatui.data.loaders import load_dataset
    from qatui.engine.jobs import start_run
    from qatui.tui.app import QatuiApp
    from qatui.tui.screens.run import RunScreen
    from qatui.tui.widgets.run_header import RunHeader

    data, common = setup(tmp_path, billing, n=4)
    config = load_config(common[1])
    store = SessionStore(tmp_path / "sessions")
    job = await asyncio.to_thread(start_run, store, load_dataset(str(data)), ["pairwise"], config, max_cost=0.5)
    app = QatuiApp(config, store, job=job)
    seen: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        deadline = time.monotonic() + 60
        while not (isinstance(app.screen, RunScreen) and app.screen.ended is not None):
            if isinstance(app.screen, RunScreen):
                seen.append(str(app.screen.query_one(RunHeader).query_one("#limits").render()))
            await pilot.pause(0.05)
            assert time.monotonic() < deadline
        limits = app.screen.query_one(RunHeader).query_one("#limits")
        await wait_until(pilot, lambda: " of $0.5 cap" in str(limits.render()), "the cap in the ended run's header")
        seen.append(str(limits.render()))
    assert any(" of $0.5 cap" in line for line in seen), seen[-3:]
    assert any("openai/gpt-4o-mini" in line and "at once" in line for line in seen), seen[-3:]


def test_the_table_keeps_one_cap_over_the_rows_it_runs(billing, tmp_path, capsys) -> None:
    data, common = setup(tmp_path, billing, n=6, max_tokens=100)
    code, _, err = cli(capsys, *common, "table", str(data), "--judge", "pairwise", "--max-cost", "0.0004")
    assert code == 3 and "Stopped at the cost cap" in err and "qatui sessions resume" in err, err
    [session] = SessionStore(tmp_path / "sessions").list()
    assert session["status"] == "capped"
    assert session["llm"]["cost_usd"] <= 0.0004  # what it spent: its results' calls and those of items left pending


def test_the_plan_s_rows_stay_whole_at_80_columns(billing, tmp_path, capsys, monkeypatch) -> None:
    """A judge's row (calls, tokens and prices) ran past 80 columns and broke across the line's start: the prices
    read as a line of their own. Each row now keeps its judge and calls in columns, its text wrapped beside them."""
    monkeypatch.setenv("COLUMNS", "80")
    data, common = setup(tmp_path, billing, n=400)
    code, out, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--judge", "pairwise-ab",
                         "--repeats", "2", "--plan")
    assert code == 0, err
    lines = out.splitlines()
    table = lines[1:lines.index(next(line for line in lines if line.startswith("backbone calls, counted")))]
    assert table[0].split() == ["judge", "calls", "tokens", "and", "cost"]
    assert all(len(line.rstrip()) <= 80 and line.startswith("  ") for line in table), table  # none at the line's start
    rows = {line.split()[0]: line for line in table if line[2] != " "}
    assert list(rows) == ["judge", "pairwise", "pairwise-ab", "total"]
    assert re.match(r"  pairwise +1600 +2 repeats each · [\d,.]+[kM]?\+[\d,.]+[kM]? tokens · \$", rows["pairwise"]), rows
    whole = " ".join(" ".join(table).split())
    assert whole.count("(at most $") == 3  # each row's price, wrapped inside its column


def test_a_table_row_served_from_the_cache_costs_what_its_answers_cost(billing, tmp_path, capsys) -> None:
    """A row whose session the call cache answered spent nothing, and its cost column said 0.0000 beside a judge that
    bought its answers: read as a free judge. The row now costs what its answers cost when they were bought (the
    JSON keeps this run's spend, 0, apart), and its calls say how many the cache answered."""
    data, common = setup(tmp_path, billing, n=4, max_tokens=100)
    code, out, err = cli(capsys, *common, "table", str(data), "--judge", "pairwise", "--json")
    assert code == 0, err
    (bought,) = json.loads(out)["rows"]
    paid = bought["llm"]["cost_usd"]
    assert paid > 0 and bought["llm"]["cached"] == 0 and bought["llm"]["cached_cost_usd"] == 0.0
    requests = len(billing.requests)
    [meta] = SessionStore(tmp_path / "sessions").list()
    assert cli(capsys, *common, "sessions", "delete", meta["id"], "--yes")[0] == 0
    code, out, err = cli(capsys, *common, "table", str(data), "--judge", "pairwise", "--json")
    (cached,) = json.loads(out)["rows"]
    assert code == 0 and len(billing.requests) == requests  # every answer from the cache: nothing asked
    assert cached["llm"]["cost_usd"] == 0.0 and cached["llm"]["cached_cost_usd"] == pytest.approx(paid)
    assert cached["llm"]["cached"] == cached["llm"]["calls"] == bought["llm"]["calls"]
    code, out, _ = cli(capsys, *common, "table", str(data), "--judge", "pairwise", "--to", "csv")
    row = next(csv.DictReader(io.StringIO(out)))
    assert float(row["cost $"]) == pytest.approx(paid, abs=1e-4) and row["calls"].endswith(" cached)")


@pytest.mark.parametrize("mode", ["direct", "litellm", "batch"])
def test_a_negative_token_count_is_priced_as_none_and_never_makes_a_cost_negative(billing, tmp_path, capsys,
                                                                                   mode: str) -> None:
    """A provider reporting a negative prompt token count: the tokens were counted as 0 but the cost was LiteLLM's
    price of the raw count (direct) or of `int(...)` of it (a batch line), so the session's spend went negative and
    a resume's cap had that much more room. Now such a reply is priced from the tokens recorded, as a reply reporting
    0 prompt tokens is: never below 0."""
    data, common = setup(tmp_path, billing, n=4)
    config = Path(common[1])
    text = config.read_text().replace(f'api_key_env = "{KEY_ENV}"\n', f'api_key_env = "{KEY_ENV}"\n'
                                      + ("direct_http = false\n" if mode == "litellm" else ""))
    config.write_text(text + "[batch]\nwindow_s = 0.3\npoll_s = 0.05\n", encoding="utf-8")
    spent = {}
    for prompt in (-10_000_000, 0):
        billing.usage = lambda body, text, prompt=prompt: (prompt, provider_usage(body, text)[1])
        code, out, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--no-cache", "--json",
                             *(["--batch"] if mode == "batch" else []))
        assert code == 0, err
        spent[prompt] = json.loads(out)["llm"]
    assert spent[-10_000_000]["prompt_tokens"] == spent[0]["prompt_tokens"] == 0
    assert spent[-10_000_000]["cost_usd"] == pytest.approx(spent[0]["cost_usd"], rel=1e-9)
    assert spent[0]["cost_usd"] > 0  # the completion tokens, priced


@pytest.mark.parametrize("mode", ["direct", "litellm", "batch"])
@pytest.mark.parametrize("report", ["prompt", "inflated", "answer"])
def test_a_usage_report_no_request_could_produce_fails_its_call_and_costs_nothing(billing, tmp_path, capsys,
                                                                                  mode: str, report: str) -> None:
    """A broken server reporting a trillion prompt tokens for a prompt of a few thousand bytes (or half a million: a
    count some model could read, but no tokenizer makes of these bytes), or two million answer tokens: each call was priced as reported, so one call was the run's whole cost (and under a cap it stopped the
    run as spent). Now such a call fails with the reason, costs 0, is not cached (a resume asks again), and a
    batch's record leaves its line out; a server reporting true counts again is priced as before."""
    data, common = setup(tmp_path, billing, n=3)
    config = Path(common[1])
    text = config.read_text().replace(f'api_key_env = "{KEY_ENV}"\n', f'api_key_env = "{KEY_ENV}"\n'
                                      + ("direct_http = false\n" if mode == "litellm" else ""))
    config.write_text(text + "[batch]\nwindow_s = 0.3\npoll_s = 0.05\n", encoding="utf-8")
    batch = ["--batch"] if mode == "batch" else []

    def broken(body: dict, text: str) -> tuple[int, int]:
        prompt, answer = provider_usage(body, text)
        if body.get("max_tokens") == 8:  # the preflight's check is answered truly
            return prompt, answer
        return {"prompt": (10 ** 12, answer), "inflated": (500_000, answer), "answer": (prompt, 2_000_000)}[report]

    billing.usage = broken
    code, out, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--max-cost", "5", "--json", *batch)
    failed = json.loads(out)
    session = failed["session"]
    assert failed["status"] == "failed", err  # every item failed; not stopped at the cap as if a trillion were spent
    assert failed["judges"]["pairwise"]["coverage"]["failed"] == 3
    assert failed["llm"]["cost_usd"] < 0.001 and failed["llm"]["prompt_tokens"] < 10 ** 6
    assert failed["llm"]["unpriced_calls"] == failed["llm"]["calls"] - failed["llm"]["cached"] > 0  # a floor, said
    stored = SessionStore(tmp_path / "sessions").open(session)
    reasons = {call["error"] for doc in stored.results().values() for call in doc["calls"] if not call["ok"]}
    assert reasons and all("usage report cannot be true" in reason for reason in reasons), reasons
    figure = {"prompt": "1,000,000,000,000 prompt tokens", "inflated": "500,000 prompt tokens",
              "answer": "2,000,000 answer tokens"}[report]
    assert all(figure in reason for reason in reasons), reasons
    if mode == "batch":
        docs = stored.meta.get("batches") or []
        assert docs and sum(float(doc.get("cost_usd") or 0) for doc in docs) < 0.001, docs
    code, out, err = cli(capsys, *common, "sessions", "show", session)
    assert "usage report cannot be true" in " ".join(out.split())
    billing.usage = provider_usage
    submitted = billing.n_batches
    code, out, err = cli(capsys, *common, "sessions", "resume", session, "--json", *batch)
    resumed = json.loads(out)
    if mode == "batch":  # the line is read again from its batch, as an unusable line is: nothing submitted twice
        assert code == 1 and billing.n_batches == submitted, err
        assert resumed["judges"]["pairwise"]["coverage"]["failed"] == 3 and resumed["llm"]["cost_usd"] < 0.001
        again = SessionStore(tmp_path / "sessions").open(session).meta["batches"]
        assert [doc.get("gave_up") for doc in again] == [doc.get("gave_up") for doc in docs]  # counted once
        assert sum(float(doc.get("cost_usd") or 0) for doc in again) < 0.001
        return
    assert code == 0, err
    assert resumed["judges"]["pairwise"]["coverage"]["scored"] == 3  # asked again: never cached as an answer
    assert 0 < resumed["llm"]["cost_usd"] < 0.01


@pytest.mark.parametrize("mode", ["direct", "litellm", "batch"])
def test_a_run_on_a_model_without_a_price_says_its_cost_is_a_floor_everywhere(billing, tmp_path, capsys,
                                                                              mode: str) -> None:
    """A served model LiteLLM's price map lacks: its calls cost something, but a session said "cost $0.0000" (and
    the table 0.0000) as if they were free. Now each call made is counted as not priced, the session says "at least"
    how much and how many calls, a rerun from the cache says its answers' cost is unknown, and a priced model's run
    says neither."""
    billing.model = "qatui-unpriced-model"  # as its replies name it (a reply naming a priced model is priced)
    data, common = setup(tmp_path, billing, n=3, model="openai/qatui-unpriced-model")
    config = Path(common[1])
    text = config.read_text().replace(f'api_key_env = "{KEY_ENV}"\n', f'api_key_env = "{KEY_ENV}"\n'
                                      + ("direct_http = false\n" if mode == "litellm" else ""))
    config.write_text(text + "[batch]\nwindow_s = 0.3\npoll_s = 0.05\n", encoding="utf-8")
    batch = ["--batch"] if mode == "batch" else []
    code, out, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--json", *batch)
    assert code == 0, err
    run = json.loads(out)
    made = [c for doc in SessionStore(tmp_path / "sessions").open(run["session"]).results().values()
            for c in doc["calls"] if not c["cached"]]
    assert len(made) == 6 and all(c["unpriced"] for c in made)
    assert run["llm"]["unpriced_calls"] == 6 and run["llm"]["cost_usd"] == 0
    code, out, err = cli(capsys, *common, "sessions", "show", run["session"])
    assert "cost at least $0.0000 (6 calls not priced)" in " ".join(out.split()), out
    code, out, err = cli(capsys, *common, "table", str(data), "--judge", "pairwise", "--json")
    (row,) = json.loads(out)["rows"]
    assert row["answers_unpriced"] == 6
    code, out, err = cli(capsys, *common, "table", str(data), "--judge", "pairwise", "--to", "csv")
    assert next(csv.DictReader(io.StringIO(out)))["cost $"] == "≥0.0000"
    code, out, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--json", *batch)
    rerun = json.loads(out)  # every answer from the cache: nothing spent now, what they cost unknown
    assert rerun["llm"]["unpriced_calls"] == 0 and rerun["llm"]["cached_unpriced"] == 6
    code, out, err = cli(capsys, *common, "sessions", "show", rerun["session"])
    assert "not priced" not in out

    billing.model = MODEL
    (tmp_path / "priced").mkdir()
    priced, common = setup(tmp_path / "priced", billing, n=3)
    code, out, err = cli(capsys, *common, "run", str(priced), "--judge", "pairwise", "--json", *batch)
    paid = json.loads(out)
    assert paid["llm"]["unpriced_calls"] == 0 and paid["llm"]["cost_usd"] > 0
    code, out, err = cli(capsys, *common, "sessions", "show", paid["session"])
    assert "not priced" not in out and "at least" not in out


def test_under_a_cap_a_call_of_unknown_cost_counts_as_its_worst_case(billing, tmp_path, capsys) -> None:
    """Calls whose usage report cannot be true were settled against the cap at 0, so a capped run went on sending
    calls of unknown cost as if free. Now each counts as the most its request could cost: the cap stops the run."""
    data, common = setup(tmp_path, billing, n=6, max_tokens=100)
    config = Path(common[1])
    config.write_text(config.read_text() + "max_concurrency = 1\n[general]\nconcurrency = 1\n", encoding="utf-8")
    code, out, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--plan", "--json")
    most = json.loads(out)["cost"]["pairwise"]["usd_most"]  # every call answered at max_tokens
    billing.usage = lambda body, text: (provider_usage(body, text) if body.get("max_tokens") == 8
                                        else (10 ** 12, provider_usage(body, text)[1]))
    code, out, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--max-cost", str(round(most / 3, 8)),
                         "--json")
    stopped = json.loads(out)
    assert code == 3 and stopped["status"] == "capped", err
    sent = [body for body in billing.requests if body.get("max_tokens") != 8]
    assert 0 < len(sent) < 12 and stopped["llm"]["cost_usd"] == 0  # recorded: unknown, never a guess


def test_the_tui_says_a_spend_of_unpriced_calls_is_a_floor(billing, tmp_path, capsys) -> None:
    """Home's session pane and the Session screen's header read "≥$0.0000 (6 unpriced)", not "$0.0000", for a run on
    a model the price map lacks (the real app, the session a real run wrote)."""
    from tui_support import open_the_only_session

    from qatui.config import parse_config
    from qatui.tui.app import QatuiApp
    from qatui.tui.widgets.session_info import SessionInfo

    billing.model = "qatui-unpriced-model"
    data, common = setup(tmp_path, billing, n=3, model="openai/qatui-unpriced-model")
    code, out, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise", "--json")
    assert code == 0 and json.loads(out)["llm"]["unpriced_calls"] == 6, err
    config = Path(common[1])
    app = QatuiApp(parse_config(config.read_text(), str(config)), SessionStore(tmp_path / "sessions"))

    async def look() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_until(pilot, lambda: "≥$0.0000 (6 unpriced)" in str(app.screen.query_one(SessionInfo).render()),
                             "Home's pane says the cost is a floor")
            shown = await open_the_only_session(pilot)
            await wait_until(pilot, lambda: "≥$0.0000 (6 unpriced)" in shown(), "the Session header says so too")

    asyncio.run(look())


def test_a_backbone_whose_check_reply_reports_impossible_usage_is_refused_before_any_work(billing, tmp_path,
                                                                                          capsys) -> None:
    """The preflight's own reply reports a trillion prompt tokens: the run is refused in one line saying the server
    answered but miscounts (not that it "did not answer"), before any item's call, and no session is written."""
    data, common = setup(tmp_path, billing, n=3)
    billing.usage = lambda body, text: (10 ** 12, 1)
    code, out, err = cli(capsys, *common, "run", str(data), "--judge", "pairwise")
    message = " ".join(err.split())
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "answered a one-line test request, but the provider reported 1,000,000,000,000 prompt tokens" in message
    assert "miscounts tokens" in message and "did not answer" not in message
    assert [body.get("max_tokens") for body in billing.requests] == [8]  # the check's request alone
    assert not (tmp_path / "sessions").exists() or not any((tmp_path / "sessions").iterdir())
