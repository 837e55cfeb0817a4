"""What the benchmarks' loopback backbone answers: any judge's request, from the request alone.

qatui asks a backbone that LiteLLM does not know to take a JSON schema (`openai/fake-model`)
for JSON by appending the schema to the last user message (`qatui.llm.client.JSON_INSTRUCTION`).
`answer(body)` reads that schema back and returns a valid instance of it: MinosEval's and the
pairwise judges' calls get the prompt-aware answers of `tests/fakes.answer_from_prompt` (so
rankings follow the texts), every other schema its smallest valid instance, with distinct
choices where an array's items are an enum (a ranking is a permutation). A request without a
schema gets a bare rating, "4". `serve_in_child` runs `tests/llm_server.FakeLLMServer` with
this responder in a child process, so the server's CPU is never counted as the client's.
"""

from __future__ import annotations

import json
import multiprocessing
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

SCHEMA_MARK = "matches this JSON schema, with no other text:\n"
"""The line before the schema in a prompt (JSON_INSTRUCTION)."""
SCRIPTED = {"Classification": "classify", "KeyPoints": "key_points", "Instances": "instances",
            "PairChoice": "pair"}
"""Schema titles answered by tests/fakes.answer_from_prompt, and the purpose each stands for."""
SENTENCE = "The answer is supported by the context"
PATTERN_TRIES = ("[[4]]", "[[4.00]]", "4", "yes", "A")
"""Strings tried, in order, against a schema's `pattern` (pointwise asks for `[[8.12]]`)."""


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the request's last message."""
    content = (body.get("messages") or [{}])[-1].get("content") or ""
    return content if isinstance(content, str) else " ".join(str(p.get("text", "")) for p in content)


def instance(schema: dict[str, Any], defs: dict[str, Any], index: int = 0) -> Any:
    """The smallest valid instance of `schema` (the `index`-th choice for an enum)."""
    if "$ref" in schema:
        return instance(defs[schema["$ref"].rsplit("/", 1)[-1]], defs, index)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return instance(options[0], defs, index)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][index % len(schema["enum"])]
    kind = schema.get("type", "object")
    if kind == "object":
        return {name: instance(sub, defs) for name, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        count = max(schema.get("minItems", 1), 1)
        count = min(count, schema.get("maxItems", count))
        return [instance(schema.get("items") or {"type": "string"}, defs, i) for i in range(count)]
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0) + 1)
        return min(max(low, 1), schema.get("maximum", low if low > 1 else 1))
    if "pattern" in schema:
        return next((t for t in PATTERN_TRIES if re.fullmatch(schema["pattern"], t)), PATTERN_TRIES[0])
    text = f"{SENTENCE} ({index + 1})."
    text = text.ljust(schema.get("minLength", 0), ".")
    return text[:schema["maxLength"]] if "maxLength" in schema else text


def sentences(text: str) -> list[str]:
    """The sentences of `text` (the statements a faithfulness extractor would list)."""
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()] or [text]


def ragas_answer(text: str) -> str:
    """The ragas library's prompts (JSON schema named in the text, the input as JSON after the last `Input:`)."""
    title = json.JSONDecoder().raw_decode(text.split("JSON Schema:\n", 1)[1])[0].get("title")
    given = json.loads(re.split(r"(?i)\binput: ", text)[-1].rsplit("Output:", 1)[0])
    if title == "StatementGeneratorOutput":
        return json.dumps({"statements": sentences(given["answer"])})
    if title == "NLIStatementOutput":
        return json.dumps({"statements": [{"statement": s, "reason": "The context says so.", "verdict": 1}
                                          for s in given["statements"]]})
    if title == "ResponseRelevanceOutput":
        return json.dumps({"question": "What does " + " ".join(given["response"].split()[:8]) + "?",
                           "noncommittal": 0})
    raise ValueError(f"no scripted answer for the ragas prompt {title!r}")


def answer(body: dict[str, Any]) -> str:
    """The loopback backbone's answer to one chat request (qatui's or the ragas library's)."""
    text = last_user_text(body)
    if "JSON Schema:\n" in text:
        return ragas_answer(text)
    if SCHEMA_MARK not in text:
        return "4"
    prompt, raw = text.rsplit(SCHEMA_MARK, 1)
    schema = json.loads(raw)
    if schema.get("title") == "Statements":  # the same statements the ragas library is given: one a sentence
        found = re.search(r"^Answer: (.*)$", prompt, re.MULTILINE)
        items = (schema.get("properties") or {}).get("statements") or {}
        listed = sentences(found[1] if found else prompt)[:items.get("maxItems", 1000)]
        return json.dumps({"statements": listed})
    purpose = SCRIPTED.get(schema.get("title", ""))
    if purpose:
        from fakes import Call, answer_from_prompt

        try:
            return json.dumps(answer_from_prompt(Call(purpose, [{"role": "user", "content": prompt}], schema)))
        except AssertionError:  # a prompt it cannot read (the Chinese pairwise prompt): any valid answer
            pass
    return json.dumps(instance(schema, schema.get("$defs", {})))


def _serve(responder: Callable[[dict[str, Any]], str], latency_s: float, pipe: Any) -> None:
    """Child process: serve until told to stop; on each message, reply with the requests served so far."""
    from llm_server import FakeLLMServer

    with FakeLLMServer(responder, latency_s=latency_s, max_requests=1_000_000, max_lifetime_s=3600) as server:
        pipe.send(server.base_url)
        while pipe.recv() != "stop":
            pipe.send((server.n_requests, server.n_embeddings))
        pipe.send({"requests": server.n_requests, "embeddings": server.n_embeddings, "streamed": server.n_streamed})


class Served:
    """The child server's address and its request count, read over a pipe."""

    def __init__(self, pipe: Any, base_url: str) -> None:
        self.pipe = pipe
        self.base_url = base_url
        self.totals: dict[str, int] = {}
        """What the server served in all ({"requests", "embeddings", "streamed"}), once it has stopped."""

    def count(self) -> int:
        """Completion requests the server has received so far."""
        return self.counts()[0]

    def counts(self) -> tuple[int, int]:
        """Completion and embedding requests the server has received so far."""
        self.pipe.send("count")
        return self.pipe.recv()


@contextmanager
def serve_in_child(responder: Callable[[dict[str, Any]], str] = answer, latency_s: float = 0.0) -> Iterator[Served]:
    """A loopback FakeLLMServer in a spawned child process, answering with `responder` (picklable)."""
    ctx = multiprocessing.get_context("spawn")
    here, there = ctx.Pipe()
    child = ctx.Process(target=_serve, args=(responder, latency_s, there), daemon=True)
    child.start()
    served = Served(here, here.recv())
    try:
        yield served
    finally:
        here.send("stop")
        served.totals = here.recv()
        child.join(10)
