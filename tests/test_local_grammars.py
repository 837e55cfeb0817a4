"""Every schema a judge sends becomes a grammar the embedded model decodes under, and none crashes it.

The embedded model's answers are held to the judge's JSON schema by an llguidance grammar. Each
judge's schema here drives a few tokens of the real model under its grammar. A `maxLength` is a
bounded repeat in llguidance's lexer; the runtime before it (llama.cpp) nested one optional repeat
per character and died of a stack overflow past about 1,400 characters, with no Python error. The
guard kept for the new runtime: long caps run in a child process, so a crash would fail a test
instead of killing the suite, and a schema past llguidance's limits is a clear, permanent error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from qatui import extras
from qatui.judges import llm_nli
from qatui.judges.baselines import linkage
from qatui.judges.minos import judge as minos
from qatui.judges.pairwise import ab as pairwise_ab
from qatui.judges.pairwise import judge as pairwise
from qatui.judges.ragas import answer_relevance, faithfulness
from qatui.llm.parse import json_schema_of

pytestmark = pytest.mark.skipif(not extras.has("local"),
                                reason=f"the embedded model is not installed: {extras.install_hint('local')}")

LABELS = [f"Response {i}" for i in range(1, 9)]
SCHEMAS = {
    "minos.Classification": minos.Classification,
    "minos.KeyPoints": minos.KeyPoints,
    "minos.Instances": minos.Instances,
    "minos.ranking": minos.ranking_schema(tuple(LABELS)),
    "pairwise.PairChoice": pairwise.PairChoice,
    "llm_nli.labels": llm_nli.labels_schema(8),
    "ragas.Statements": faithfulness.Statements,
    "ragas.verdicts": faithfulness.verdicts_schema(8),
    "ragas.questions": answer_relevance.questions_schema(3),
}
for module in (linkage, pairwise_ab):  # the baselines' schema classes, whatever their names
    for name, value in vars(module).items():
        if isinstance(value, type) and hasattr(value, "model_json_schema") and value.__module__ == module.__name__ \
                and not name.endswith("Options"):
            SCHEMAS[f"{module.__name__.rsplit('.', 1)[1]}.{name}"] = value


def _format(schema: dict) -> dict:
    return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_schema_becomes_a_grammar_the_model_decodes_under(name) -> None:
    from qatui.llm.local import get_model

    schema = json_schema_of(SCHEMAS[name])
    result = get_model("smollm2").generate([{"role": "user", "content": "Answer in JSON."}],
                                           {"max_tokens": 4, "response_format": _format(schema)})
    assert result["usage"]["completion_tokens"] >= 1
    assert result["text"].lstrip().startswith(("{", "["))  # the grammar held the first token to JSON


LONG_CAPS = """
import json, sys
from qatui.llm.local import get_model
model = get_model("smollm2")
for cap in (1500, 20000):  # 1,500 crashed llama.cpp; 20,000 is past any cap a judge sends
    schema = {"type": "object", "properties": {"text": {"type": "string", "maxLength": cap}}, "required": ["text"]}
    fmt = {"type": "json_schema", "json_schema": {"name": "t", "schema": schema}}
    result = model.generate([{"role": "user", "content": "Write a long text."}], {"max_tokens": 6, "response_format": fmt})
    print(json.dumps({"cap": cap, "text": result["text"]}))
"""


@pytest.mark.slow
def test_long_max_length_caps_decode_without_crashing() -> None:
    root = Path(__file__).parents[1]
    done = subprocess.run([sys.executable, "-c", LONG_CAPS], capture_output=True, text=True, timeout=300, cwd=root,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, f"the runtime died on a long maxLength (exit {done.returncode}): {done.stderr[-500:]}"
    runs = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [r["cap"] for r in runs] == [1500, 20000]
    assert all(r["text"].lstrip().startswith("{") for r in runs)


async def test_a_schema_the_grammar_cannot_hold_is_a_clear_permanent_error() -> None:
    """A schema llguidance refuses reaches LiteLLM as a BadRequestError (never retried), saying why."""
    from qatui.llm._lazy import get_litellm

    ll = get_litellm()
    bad = {"type": "object", "properties": {"x": {"type": "string", "pattern": "(unclosed"}}}
    with pytest.raises(ll.BadRequestError, match="the JSON schema cannot become a grammar: regex parse error"):
        await ll.acompletion(model="local/smollm2", messages=[{"role": "user", "content": "hi"}], max_tokens=3,
                             response_format=_format(bad), max_retries=0)


def test_an_object_admits_only_its_listed_keys() -> None:
    """As llama.cpp's grammars did: unlisted keys are refused (a small model otherwise adds keys until cut off),
    at every depth, unless the schema allows them itself."""
    from qatui.llm.local import get_model
    from qatui.llm.local_runtime import grammar_of

    model = get_model("smollm2")
    model.load()
    runtime = model._runtime
    score = {"type": "object", "properties": {"score": {"type": "string"}}, "required": ["score"]}
    schema = {"type": "object", "properties": {"inner": score}, "required": ["inner"]}
    open_schema = {**score, "additionalProperties": True}

    def accepted(schema: dict, text: str) -> bool:
        tokens = runtime.text_ids(text)
        return runtime.matcher(grammar_of(_format(schema))).validate_tokens(tokens) == len(tokens)

    assert accepted(schema, '{"inner": {"score": "[[7]]"}}')
    assert not accepted(schema, '{"inner": {"score": "[[7]]", "score_again": "[[7]]"}}')
    assert not accepted(schema, '{"inner": {"score": "[[7]]"}, "more": 1}')
    assert accepted(open_schema, '{"score": "[[7]]", "more": 1}')
