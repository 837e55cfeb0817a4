"""The test doubles and waits the tests share: one scripted backbone, a word-overlap NLI, and bounded waits.

`ScriptedLLM` stands for a run's backbone client (`qatui.llm.LLMClient.complete`): it answers
each call with a reply function, emits the call's events as the real client does, and reads a
schema-bound answer with the client's own parser (so an answer that fits no schema raises
`ParseError`, as the real client does after its one repair re-ask). Without a reply function it
answers MinosEval's and the pairwise judge's calls from their prompts alone. The HTTP-level
double, for the real client and LiteLLM, is `llm_server.FakeLLMServer`.

The waits poll a condition with a bound, never sleep a fixed time: `wait_until` for a Pilot
test, `settle` before a snapshot, `poll` for work in threads and processes. `texts_alike_in_length` makes the
adversary's texts the copy check must stay bounded on.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from qatui.config import Config
from qatui.events import LLMCallFinished, LLMToken, emit
from qatui.judges.resources import Resources
from qatui.llm.client import CHECK_PROMPT, LLMResult
from qatui.llm.errors import ParseError
from qatui.llm.fence import block_texts
from qatui.llm.parse import parse_output
from qatui.nli import NLIProbs

# -- the scripted backbone -------------------------------------------------------------------------


@dataclass
class Call:
    """One call as the backbone client got it."""

    purpose: str
    messages: list[dict]
    schema: Any = None
    temperature: float | None = None
    max_tokens: int | None = None
    logprobs: int | None = None
    sample: int = 0
    extra: dict = field(default_factory=dict)

    @property
    def content(self) -> str:
        """The last message's text: the prompt the judge built."""
        return self.messages[-1]["content"]

    @property
    def json_schema(self) -> dict | None:
        """The schema the answer must fit, as JSON schema (None without one)."""
        if self.schema is None or isinstance(self.schema, dict):
            return self.schema
        return self.schema.model_json_schema()

    @property
    def system(self) -> str:
        """The first message's text (the system prompt when there is one)."""
        return self.messages[0]["content"]


Answer = dict | str | ParseError | tuple
"""What a reply gives: a dict (sent as JSON), raw text, a `ParseError` to raise, or (answer, log-probabilities)."""


class Gate:
    """Permits for backbone calls: a test holds the calls, lets them through one by one or all, and sees how
    many went through (`taken`). Thread-safe: the engine's loop takes, the test's releases."""

    def __init__(self, permits: int = 0) -> None:
        self._lock = threading.Lock()
        self.free, self.taken = permits, 0

    def release(self, n: int = 1) -> None:
        with self._lock:
            self.free += n

    def acquire(self, blocking: bool = False) -> bool:
        """Take a permit if one is free (never blocks: the caller polls on its own loop)."""
        with self._lock:
            if not self.free:
                return False
            self.free, self.taken = self.free - 1, self.taken + 1
            return True


class ScriptedLLM:
    """A backbone answering `reply(call)`, or from the prompt (`answer_from_prompt`) without one; records each call.

    With a `gate` (a `Gate`), each call first takes a permit: a test holds calls to see a run
    in progress. With `stream`, the answer is emitted as `LLMToken`s before the call finishes,
    as a streaming backbone does. With `parse_text` False, an answer given as text comes back
    unread (`data` None) even under a schema, for judges that read the text themselves; a dict
    answer is always read against the schema. With `unpriced`, each call is recorded as one whose cost is unknown
    (a served model LiteLLM's price map lacks).
    """

    def __init__(self, reply: Callable[[Call], Answer] | None = None, *, model: str = "scripted/test",
                 gate: Gate | None = None, stream: bool = False, parse_text: bool = True,
                 unpriced: bool = False) -> None:
        self.reply = reply
        self.unpriced = unpriced
        self.parse_text = parse_text
        self.model = model
        self.gate = gate
        self.stream = stream
        self.requests: list[Call] = []

    def purposes(self) -> list[str]:
        """Each call's purpose, in order."""
        return [call.purpose for call in self.requests]

    def answer(self, call: Call) -> Answer:
        """The answer to `call`: the reply function's, else the prompt's rules; subclasses may override."""
        return answer_from_prompt(call) if self.reply is None else self.reply(call)

    async def complete(self, messages, *, purpose, schema=None, temperature=None, max_tokens=None, logprobs=None,
                       sample=0, **extra) -> LLMResult:
        while self.gate is not None and not self.gate.acquire(blocking=False):
            await asyncio.sleep(0.01)
        call = Call(purpose, messages, schema, temperature, max_tokens, logprobs, sample, extra)
        self.requests.append(call)
        n = len(self.requests)
        answer = self.answer(call)
        found = None
        if isinstance(answer, tuple):
            answer, found = answer
        text = answer.text if isinstance(answer, ParseError) else \
            json.dumps(answer, ensure_ascii=False) if isinstance(answer, dict) else answer
        call_id = f"call-{n}"
        if self.stream:
            for start in range(0, len(text), 12):
                emit(LLMToken(call_id=call_id, model=self.model, purpose=purpose, text=text[start:start + 12]))
                await asyncio.sleep(0)
        event = LLMCallFinished(call_id=call_id, model=self.model, purpose=purpose, prompt_hash=f"h{n}",
                                prompt_tokens=len(call.content) // 4, completion_tokens=len(text) // 4,
                                response=text, unpriced=self.unpriced)
        emit(event)
        if isinstance(answer, ParseError):
            raise answer
        read = schema is not None and (self.parse_text or isinstance(answer, dict))
        return LLMResult(text=text, data=parse_output(text, schema) if read else None, event=event, logprobs=found)


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if len(w) > 2}


def prompt_field(content: str, name: str) -> str:
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


def answer_from_prompt(call: Call) -> dict:
    """MinosEval's and the pairwise judge's calls answered from the question, the reference and the responses."""
    purpose, content = call.purpose, call.content
    question, reference = prompt_field(content, "Question"), prompt_field(content, "Reference answer")
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


def scripted_resources(config: Config | None = None, gate: Gate | None = None, *,
                       llm: Any = None, nli: Any = None, **names: Any) -> Resources:
    """Resources whose backbone answers from the prompts (streaming, behind `gate`) and whose NLI counts
    shared words, unless `llm` or `nli` is given; `names`: Resources' other arguments (backbone_name...)."""
    return Resources(config or Config(), **names, llm=llm or ScriptedLLM(model="scripted/tui", gate=gate, stream=True),
                     nli=nli or OverlapNLI())


def is_preflight(body: dict) -> bool:
    """Whether a request body (as an OpenAI-compatible server gets it) is the preflight's check request."""
    return body.get("messages", [{}])[-1].get("content") == CHECK_PROMPT


# -- waits -----------------------------------------------------------------------------------------


async def wait_until(pilot, predicate: Callable[[], object], what: str = "the app", timeout: float = 20.0) -> None:
    """Let the app run (its message queues drained each round) until `predicate()` holds; fail after `timeout` s."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause()
        await asyncio.sleep(0.02)  # the engine's thread and the workers' threads get the CPU too


async def laid_out(pilot, widget) -> None:
    """Wait until `widget` has been given its size and has answered the resize that came with it.

    A widget shown once its data is read (the session screen's browser) is laid out a refresh later, and rules
    that go by its size (the transcript hidden below 30 rows) are applied on that first resize: a state read
    before it is a moment, not the screen the user gets."""
    await wait_until(pilot, lambda: widget.size.height > 0, f"{type(widget).__name__} laid out")
    await pilot.pause()  # the Resize posted with the size is handled


def poll(what: Callable[[], object], timeout_s: float = 60.0, interval_s: float = 0.02) -> object:
    """Poll `what` from plain code (threads, processes) until it is truthy; its value. Fails after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while not (value := what()):
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(interval_s)
    return value


def palette_offers(app, typed: str, command: str) -> bool:
    """The command palette holds `typed`, has finished searching for it, and highlights `command` (what enter runs)."""
    from textual.command import CommandInput, CommandList, CommandPalette

    palette = app.screen
    if not isinstance(palette, CommandPalette) or palette.query_one(CommandInput).value != typed:
        return False
    if any(not w.is_finished for w in app.workers if w.group == CommandPalette._GATHER_COMMANDS_GROUP):  # noqa: SLF001
        return False
    found = palette.query_one(CommandList)
    return found.highlighted is not None and command in str(found.get_option_at_index(found.highlighted).prompt)


async def run_from_palette(pilot, typed: str, command: str | None = None) -> None:
    """Open the command palette, type `typed`, and press enter once the command (`command`, else what was typed)
    is the highlighted one."""
    await pilot.press("ctrl+p")
    await pilot.press(*typed)
    await wait_until(pilot, lambda: palette_offers(pilot.app, typed, command or typed), f"the palette to offer {typed!r}")
    await pilot.press("enter")


def busy(app) -> str:
    """What the app is still doing ('' at rest): a worker running, an animation, a refresh or layout pending."""
    running = [w.description or w.name for w in app.workers if w.group != "_loader" and not w.is_finished]
    if running:  # a directory tree's loader waits for folders to open for as long as it lives: not work to wait for
        return f"workers {running}"
    if app.animator._animations or app.animator._scheduled:  # noqa: SLF001 - no public view of what runs
        return "an animation"
    screen = app.screen
    pending = ("_layout_required", "_repaint_required", "_scroll_required", "_recompose_required")
    for node in (screen, *screen.walk_children()):
        if any(getattr(node, flag, False) for flag in pending):
            return f"a refresh of {node!r}"
    if screen._dirty_widgets or screen._callbacks:  # noqa: SLF001 - as above
        return "a repaint"
    return ""


async def settle(pilot, ready: Callable[[], object] = lambda: True, what: str = "the screen",
                 timeout: float = 60.0, *, drop_toasts: bool = True) -> None:
    """Wait until `ready()` holds and the app is at rest, so a snapshot draws a state, never a moment.

    At rest: no worker running (a finished one may start another, and a screen pushed by the
    last key starts its loading worker once it mounts), no animation, no refresh or layout
    pending, and two frames drawn one after the other the same (a scroll to the end after a
    refresh, say, has landed). Text cursors are made steady and (with `drop_toasts`) toasts
    dropped first: a blinking cursor is caught on or off by chance, and a toast shows timing.
    """
    deadline = time.monotonic() + timeout
    app, previous = pilot.app, None
    while True:
        for text_field in app.screen.query("Input, TextArea"):
            text_field.cursor_blink = False
        if drop_toasts:
            app.clear_notifications()
        await pilot.pause()
        await asyncio.gather(*(w.wait() for w in app.workers if w.group != "_loader"), return_exceptions=True)
        await pilot.wait_for_scheduled_animations()
        state = "" if ready() else f"{what} to be ready"
        state = state or busy(app)
        frame = None if state else app.export_screenshot()
        if frame is not None and frame == previous:
            return
        previous = frame
        assert time.monotonic() < deadline, f"timed out waiting for {state or 'two equal frames'}"


def pressing(*keys: str, ready: Callable[[Any], object] = lambda pilot: True, what: str = "the first screen"):
    """A snapshot's `run_before`: settle with `ready(pilot)` holding, then press each key and settle again, so what
    a key starts has finished before the next."""
    async def run(pilot) -> None:
        await settle(pilot, lambda: ready(pilot), what)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)

    return run


def texts_alike_in_length(words: int, seed: int) -> str:
    """`words` words of 2 to 8 letters from one 500-word vocabulary (the same for every seed): texts of one length
    that copy nothing, the case whose comparison grows as the square of their length (`data.leaks.check_copies`)."""
    import random

    vocabulary_draw, draw = random.Random(0), random.Random(seed)
    vocabulary = ["".join(vocabulary_draw.choice("abcdefghij") for _ in range(vocabulary_draw.randint(2, 8)))
                  for _ in range(500)]
    return " ".join(draw.choice(vocabulary) for _ in range(words))
