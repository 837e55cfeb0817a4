"""What the TUI tests share: a scripted backbone and NLI for MinosEval, and sessions with fixed ids and times.

The scripted backbone answers from the prompt alone (the question, the reference, the
responses), streams each answer as tokens like a real backbone, and can be held at a gate so
a test sees a run in progress. Nothing here loads a model.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace

from qatui.config import Config
from qatui.data.model import Dataset
from qatui.data.loaders import demo_dataset
from qatui.events import LLMCallFinished, LLMToken, emit
from qatui.engine.jobs import RunJob, finish_run, start_run
from qatui.judges.resources import Resources
from qatui.llm.fence import block_texts
from qatui.llm.parse import parse_output
from qatui.nli import NLIProbs
from qatui.store.session import SessionStore

FIXED_NOW = datetime(2026, 11, 22, 9, 30, tzinfo=timezone.utc)


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if len(w) > 2}


def _field(content: str, name: str) -> str:
    """A `Name: value` line of a prompt; "Reference answer" is read from the fenced reference block."""
    if name == "Reference answer":  # as the line read before fencing: the first reference, "(1) "-numbered when several
        blocks = block_texts(content)
        first = blocks.get("Reference") or (f"(1) {blocks['Reference 1']}" if "Reference 1" in blocks else "")
        return first.split("\n", 1)[0]
    match = re.search(rf"^{name}: (.*)$", content, re.MULTILINE)
    return match[1] if match else ""


def pair_answers(content: str) -> tuple[str, str]:
    """The texts shown as Answer A and Answer B in a pairwise (CALF) prompt (their fenced blocks)."""
    blocks = block_texts(content)
    assert "Answer A" in blocks and "Answer B" in blocks, content
    return blocks["Answer A"], blocks["Answer B"]


class ScriptedLLM:
    """MinosEval's and the pairwise judge's backbone calls answered from their prompts.

    With a `gate`, each call first takes a permit. An answer is a dict (sent as JSON) or raw
    text; either is read by the client's own parser, so text that does not fit the schema
    raises `ParseError` as the real client does after its repair re-ask.
    """

    model = "scripted/tui"

    def __init__(self, gate: threading.Semaphore | None = None) -> None:
        self.gate = gate
        self.calls = 0

    async def complete(self, messages, *, purpose, schema=None, temperature=None, **_):
        while self.gate is not None and not self.gate.acquire(blocking=False):
            await asyncio.sleep(0.01)
        self.calls += 1
        content = messages[-1]["content"]
        answer = self.answer(purpose, content, schema)
        text = answer if isinstance(answer, str) else json.dumps(answer)
        call_id = f"call-{self.calls}"
        for start in range(0, len(text), 12):
            emit(LLMToken(call_id=call_id, model=self.model, purpose=purpose, text=text[start:start + 12]))
            await asyncio.sleep(0)
        emit(LLMCallFinished(call_id=call_id, model=self.model, purpose=purpose, prompt_hash=f"h{self.calls}",
                             prompt_tokens=len(content) // 4, completion_tokens=len(text) // 4, response=text))
        return SimpleNamespace(text=text, data=parse_output(text, schema), event=None)

    @staticmethod
    def answer(purpose: str, content: str, schema) -> dict | str:
        question, reference = _field(content, "Question"), _field(content, "Reference answer")
        if purpose == "pair":  # the answer sharing more words with the reference (else the question) wins
            target = _words(reference or question)
            a, b = (len(target & _words(text)) for text in pair_answers(content))
            return {"rationale": f"A shares {a} words with the reference, B {b}",
                    "choice": "tie" if a == b else "A" if a > b else "B"}
        if purpose == "classify":
            factoid = bool(re.match(r"(What|Which|When|Who|Where|How many|A |In which)", question))
            return {"reason": "asks for a checkable fact" if factoid else "open-ended advice", "factoid": factoid}
        if purpose == "key_points":
            points = [p.strip() for p in re.split(r"[;.]", reference) if len(p.split()) > 2]
            return {"key_points": points[:3] or [reference]}
        if purpose == "instances":
            return {"excellent": reference, "good": reference.split(".")[0] + ".", "fair": "Partly right.",
                    "poor": "Mostly unhelpful.", "bad": "Off-topic."}
        blocks = [(name, text.split("\n", 1)[0]) for name, text in block_texts(content).items()
                  if name.startswith("Response")]
        ref = _words(reference)
        ranked = sorted(blocks, key=lambda b: (-len(ref & _words(b[1])), b[0]))
        return {"rank": [label for label, _ in ranked]}


class OverlapNLI:
    """Entailment = share of the key point's words in the response; contradiction when 'not' differs."""

    async def apredict(self, pairs):
        out = []
        for premise, hypothesis in pairs:
            words = _words(hypothesis) or {"?"}
            cover = len(words & _words(premise)) / len(words)
            contra = 0.5 if ("not" in premise.lower().split()) != ("not" in hypothesis.lower().split()) else 0.0
            entail = cover * (1 - contra)
            out.append(NLIProbs(entail=entail, contradict=contra, neutral=max(0.0, 1 - entail - contra)))
        return out


def scripted_resources(config: Config | None = None, gate: threading.Semaphore | None = None) -> Resources:
    """Resources whose backbone and NLI are the scripted ones above."""
    resources = Resources(config or Config())
    resources.__dict__["llm"] = ScriptedLLM(gate)  # cached_property slots: the run's shared models
    resources.__dict__["nli"] = OverlapNLI()
    return resources


def demo_workdir(tmp_path, monkeypatch) -> Dataset:
    """A fresh working directory holding demo.jsonl, no user config, frozen time: the demo dataset, loaded from it."""
    import shutil

    from qatui.data.loaders import demo_path, load_dataset

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    freeze_time(monkeypatch)
    shutil.copy(demo_path(), tmp_path / "demo.jsonl")
    return load_dataset("demo.jsonl")


def freeze_time(monkeypatch) -> None:
    """Session ids 20261122-093000-0001, -0002, ... and every timestamp at FIXED_NOW, in UTC."""
    import time

    import qatui.engine.jobs
    import qatui.store.session

    class Frozen(datetime):
        @classmethod
        def now(cls, tz=None):
            return FIXED_NOW if tz is None else FIXED_NOW.astimezone(tz)

    tokens = iter(f"{n:04d}" for n in range(1, 10_000))
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    monkeypatch.setattr(qatui.store.session, "datetime", Frozen)
    monkeypatch.setattr(qatui.engine.jobs, "datetime", Frozen)
    monkeypatch.setattr(qatui.store.session.secrets, "token_hex", lambda n: next(tokens))


def run_headless(job: RunJob) -> None:
    """Drive a job to its end without the TUI, and summarise it."""

    async def drive() -> None:
        async for _ in job.engine.run():
            pass

    asyncio.run(drive())
    finish_run(job, "completed")


def lexical_sessions(store: SessionStore, config: Config) -> list[str]:
    """Two finished sessions on the demo set: rouge-l + bleu on all items (named), and bleu on five."""
    first = start_run(store, demo_dataset(), ["rouge-l", "bleu"], config, name="lexical-baseline")
    run_headless(first)
    second = start_run(store, demo_dataset(), ["bleu"], config, limit=5)
    run_headless(second)
    return [first.session.id, second.session.id]


def minos_job(store: SessionStore, config: Config, gate: threading.Semaphore | None = None, limit: int = 4) -> RunJob:
    """A MinosEval job on the demo set with the scripted models, one item at a time (a fixed event order)."""
    return start_run(store, demo_dataset(), ["minos"], config, limit=limit, concurrency=1,
                     resources=scripted_resources(config, gate))


def failing_on(word: str, config: Config | None = None) -> Resources:
    """Scripted resources whose backbone fails every call about an item whose prompt holds `word`."""

    class Failing(ScriptedLLM):
        async def complete(self, messages, **kwargs):
            if word in messages[-1]["content"]:
                raise RuntimeError(f"scripted failure on {word!r}")
            return await super().complete(messages, **kwargs)

    resources = scripted_resources(config)
    resources.__dict__["llm"] = Failing()
    return resources


def write_sums(path: Path, n: int) -> Path:
    """`n` two-answer items "What is i plus i?" (a right and a wrong sum), as native JSONL."""
    with path.open("w") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"q{i}", "question": f"What is {i} plus {i}?", "references": [f"{2 * i}"],
                                "candidates": {"a": f"It is {2 * i}.", "b": f"It is {2 * i + 1}."}}) + "\n")
    return path


async def wait_until(pilot, predicate: Callable[[], bool], timeout: float = 20.0) -> None:
    """Let the app run until `predicate()` holds; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting for the app"
        await pilot.pause(0.05)


async def pairwise_job_on_server(tmp_path: Path, base_url: str,
                                 n_items: int) -> tuple[Path, Config, SessionStore, RunJob]:
    """A `pairwise` run of `write_sums` items against a loopback backbone "fake" (key in $FAKE_KEY), one call
    at a time: the config file written for it (a resume may read it), its config, the store, the started job."""
    from qatui.config import load_config
    from qatui.data.loaders import load_dataset

    config_path = tmp_path / "c.toml"
    config_path.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{base_url}"\n'
                           f'api_key_env = "FAKE_KEY"\n[models]\ndefault_backbone = "fake"\n'
                           f'[cache]\ndir = "{tmp_path / "cache"}"\n')
    config = load_config(config_path)
    store = SessionStore(tmp_path / "sessions")
    data = write_sums(tmp_path / "sums.jsonl", n_items)
    job = await asyncio.to_thread(start_run, store, load_dataset(data), ["pairwise"], config,
                                  concurrency=1, resources=Resources(config, backbone_name="fake"))
    return config_path, config, store, job
