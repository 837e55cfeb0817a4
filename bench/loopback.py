"""What the benchmarks' loopback backbone answers: any judge's request, from the request alone.

qatui asks a backbone that LiteLLM does not know to take a JSON schema (`openai/fake-model`)
for JSON by appending the schema to the last user message (`qatui.llm.client.JSON_INSTRUCTION`).
`answer(body)` reads that schema back and returns a valid instance of it: MinosEval's and the
pairwise judges' calls get the prompt-aware answers of `tests/fakes.answer_from_prompt` (so
rankings follow the texts), every other schema its smallest valid instance, with distinct
choices where an array's items are an enum (a ranking is a permutation). A request without a
schema gets a bare rating, "4". `serve_in_child` runs `tests/llm_server.FakeLLMServer` with
this responder in a child process, so the server's CPU is never counted as the client's.
`serve_lean_in_child` runs a server with none of FakeLLMServer's scripting (faults, rate limits, token counts,
request logs): aiohttp's low-level server answering every chat request with one fixed text after the latency, the
least a Python server spends on a request, to tell the harness's own cost from the client's (bench_harness_ceiling.py).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import time
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


def _serve_lean(text: str, latency_s: float, pipe: Any) -> None:
    """Child process: aiohttp's low-level server (no application, router or middleware) until told to stop."""
    import asyncio

    from aiohttp import web

    served = [0]

    async def handler(request: web.BaseRequest) -> web.Response:
        body = await request.json()
        served[0] += 1
        await asyncio.sleep(latency_s)
        words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages") or [])
        answer = {"id": f"chatcmpl-lean-{served[0]}", "object": "chat.completion", "created": int(time.time()),
                  "model": body.get("model"), "choices": [{"index": 0, "finish_reason": "stop",
                                                           "message": {"role": "assistant", "content": text}}],
                  "usage": {"prompt_tokens": words, "completion_tokens": 20, "total_tokens": words + 20}}
        return web.Response(body=json.dumps(answer).encode(), content_type="application/json")

    async def main() -> None:
        runner = web.ServerRunner(web.Server(handler), handle_signals=False, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        pipe.send(f"http://127.0.0.1:{runner.addresses[0][1]}/v1")
        loop = asyncio.get_running_loop()
        while await loop.run_in_executor(None, pipe.recv) != "stop":
            pipe.send((served[0], 0))
        pipe.send({"requests": served[0], "embeddings": 0, "streamed": 0})
        await runner.cleanup()

    asyncio.run(main())


class Served:
    """The child server's address and its request count, read over a pipe."""

    def __init__(self, pipe: Any, base_url: str, pid: int = 0) -> None:
        self.pipe = pipe
        self.base_url = base_url
        self.pid = pid
        self.totals: dict[str, int] = {}
        """What the server served in all ({"requests", "embeddings", "streamed"}), once it has stopped."""

    def count(self) -> int:
        """Completion requests the server has received so far."""
        return self.counts()[0]

    def counts(self) -> tuple[int, int]:
        """Completion and embedding requests the server has received so far."""
        self.pipe.send("count")
        return self.pipe.recv()

    def cpu_s(self) -> float:
        """CPU seconds (user + system) the server's process has spent so far (Linux: from /proc)."""
        fields = (Path("/proc") / str(self.pid) / "stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def serve_in_child(responder: Callable[[dict[str, Any]], str] = answer, latency_s: float = 0.0) -> Iterator[Served]:
    """A loopback FakeLLMServer in a spawned child process, answering with `responder` (picklable)."""
    with _child(_serve, responder, latency_s) as served:
        yield served


@contextmanager
def serve_lean_in_child(text: str, latency_s: float = 0.0) -> Iterator[Served]:
    """The lean loopback server (`_serve_lean`) in a spawned child process, answering `text` to every request."""
    with _child(_serve_lean, text, latency_s) as served:
        yield served


@contextmanager
def _child(target: Callable[..., None], answer_with: Any, latency_s: float) -> Iterator[Served]:
    """`target(answer_with, latency_s, pipe)` in a spawned child; its Served until the block ends, then stopped."""
    ctx = multiprocessing.get_context("spawn")
    here, there = ctx.Pipe()
    child = ctx.Process(target=target, args=(answer_with, latency_s, there), daemon=True)
    child.start()
    served = Served(here, here.recv(), child.pid or 0)
    try:
        yield served
    finally:
        here.send("stop")
        served.totals = here.recv()
        child.join(10)
