"""Every schema a judge sends can become a llama.cpp grammar without crashing it.

llama.cpp turns a `maxLength` into nested optional repeats; past about 1,400 characters the
nesting overflows its stack and the process dies (a segfault, no Python error). Each schema drives
three tokens of the embedded model in a child process, so a crash fails this test instead of
killing the suite.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from qatui.judges import llm_nli
from qatui.judges.baselines import linkage
from qatui.judges.minos import judge as minos
from qatui.judges.pairwise import ab as pairwise_ab
from qatui.judges.pairwise import judge as pairwise
from qatui.judges.ragas import answer_relevance, faithfulness
from qatui.llm.parse import json_schema_of

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

CONVERT = """
import sys
from llama_cpp import Llama, LlamaGrammar
from qatui.llm.local import gguf_path
grammar = LlamaGrammar.from_json_schema(sys.stdin.read(), verbose=False)
model = Llama(model_path=str(gguf_path("smollm2")), n_ctx=256, n_threads=1, verbose=False)
model.create_completion("Answer:", max_tokens=3, grammar=grammar)  # the crash comes when the grammar is used
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_schema_becomes_a_grammar(name) -> None:
    schema = json.dumps(json_schema_of(SCHEMAS[name]))
    done = subprocess.run([sys.executable, "-c", CONVERT], input=schema, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{name}: llama.cpp could not build its grammar (exit {done.returncode})"


@pytest.mark.slow
def test_a_long_max_length_would_crash_llama_cpp() -> None:
    """The guard above is real: the same run dies on a 1,500-character cap."""
    schema = json.dumps({"type": "object", "properties": {"text": {"type": "string", "maxLength": 1500}},
                         "required": ["text"]})
    done = subprocess.run([sys.executable, "-c", CONVERT], input=schema, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
