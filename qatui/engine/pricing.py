"""`run --plan`'s prices: each judge's tokens and cost before a run, from the prompts it would send.

- Prompt tokens: each judge runs on each item (the first `SAMPLE_ITEMS` it can judge; the rest
  are priced at the sample's mean per call) with its calls captured (`qatui.llm.capture`): every
  request is built as the run builds it (instructions, fenced texts, JSON schema, trimming) and
  counted with the backbone's tokenizer. A call a judge asks only once it has an answer
  (MinosEval's second step, pairwise-ab's rematch) cannot be built without that answer: the
  item's planned calls (`expected_calls`, the most) past those captured are *estimated* at the
  mean prompt of the calls captured on that item, and counted as such.
- Completion tokens: the mean of the answers the call cache holds for that model and purpose,
  else for that model, else the call's `max_tokens` (the most an answer can take).
- Price: LiteLLM's price map (`qatui.llm.spend.price`); a call the cache answers costs nothing;
  `local/` models are free; a model the map lacks is named, never guessed. `usd_most` prices every
  planned call answered in full (`max_tokens`): the figure to set `--max-cost` from.
- A served embedder's requests (`[embedders.NAME]`): the texts a judge embeds, counted or estimated
  (`qatui.engine.embedding_pricing`), are in the judge's `embed` and its cost. On an embedded backbone
  (`free`) they are the whole cost: its calls are captured the same way (the embedder's texts need their
  cache keys and cached answers) but neither counted nor priced, and the model is never loaded.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from qatui.engine.embedding_pricing import EmbedPlanner, EmbedPriced
from qatui.text import usd

if TYPE_CHECKING:
    from qatui.data.model import Dataset, Item
    from qatui.judges.base import Judge
    from qatui.judges.resources import Resources
    from qatui.llm.capture import Captured
    from qatui.llm.client import LLMClient

SAMPLE_ITEMS = 300
"""Items each judge is run on to count its prompts; past them, calls are priced at the sample's mean."""
IDLE_SPINS = 20
"""Loop turns with no new request after which a judge's first calls are taken to be all held."""


@dataclass
class Priced:
    """One judge's (or jury member's) planned tokens and cost."""

    backbone: str
    calls: int = 0
    counted: int = 0
    """Calls whose prompt was built and counted."""
    estimated: int = 0
    """Calls whose prompt was estimated (asked only after an answer, or past the sample)."""
    cached: int = 0
    """Calls the cache answers already (free)."""
    prompt_tokens: float = 0.0
    completion_tokens: float = 0.0
    measured: int = 0
    """Calls whose answer length is the cache's measured mean (else their max_tokens)."""
    usd: float | None = 0.0
    usd_most: float | None = 0.0
    unpriced: str = ""
    """Why its backbone has no price ("not in LiteLLM's price map"), else ""."""
    free: bool = False
    """Its backbone is an embedded model (`local/`): its calls cost nothing and their tokens are not counted; what
    the row costs is its served embedder's (`embed`), if any."""
    embed: EmbedPriced | None = None
    """Its served embedder's planned requests (in `usd` and `usd_most`); None when it uses none."""
    model: str = ""
    """Its backbone's model string (LiteLLM's), for the notes."""
    approximate: str = ""
    """Why its backbone's prompts were counted with tiktoken, not the model's own tokenizer (`llm.tokens`), else ""."""

    def add(self, other: Priced) -> None:
        """Sum `other` into this one (a price missing from either is missing from the sum)."""
        for name in ("calls", "counted", "estimated", "cached", "prompt_tokens", "completion_tokens", "measured"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.usd = None if self.usd is None or other.usd is None else self.usd + other.usd
        self.usd_most = None if self.usd_most is None or other.usd_most is None else self.usd_most + other.usd_most
        if other.embed is not None:
            if self.embed is None:
                self.embed = EmbedPriced(other.embed.embedder, other.embed.model)
            self.embed.add(other.embed)

    def json(self) -> dict[str, Any]:
        """The JSON form `run --plan --json` prints."""
        return {"backbone": self.backbone, "calls": self.calls, "prompts_counted": self.counted,
                "prompts_estimated": self.estimated, "cached": self.cached,
                "prompt_tokens": round(self.prompt_tokens), "completion_tokens": round(self.completion_tokens),
                "completion_measured": self.measured, "usd": self.usd, "usd_most": self.usd_most,
                **({"unpriced": self.unpriced} if self.unpriced else {}),
                **({"approximate": self.approximate} if self.approximate else {}),
                **({"backbone_free": "embedded model"} if self.free else {}),
                **({"embeddings": self.embed.json()} if self.embed is not None else {})}


def price_run(judges: list[Judge], dataset: Dataset, resources: Resources, seed: int,
              batch: bool = False) -> dict[str, Priced]:
    """Each judge's (and jury member's, as "jury MEMBER") planned tokens and cost, and their "total" when several;
    with `batch` (`--batch`), at the batch price (`qatui.llm.batch.batch_cost`)."""
    return asyncio.run(_price_all(judges, dataset, resources, seed, batch))


async def _price_all(judges: list[Judge], dataset: Dataset, resources: Resources, seed: int,
                     batch: bool = False) -> dict[str, Priced]:
    from qatui.engine.backbones import calls_backbone
    from qatui.llm.client import LLMClient

    priced: dict[str, Priced] = {}
    means: dict[str, dict] = {}
    embeds = EmbedPlanner(resources)
    for label, part, models, counts, repeats in _units(judges, resources, dataset):
        if not calls_backbone(part, models, dataset):
            continue
        client = models.llm
        row = priced[label] = Priced(backbone=models.backbone, model=str(getattr(client, "model", "")),
                                     free=getattr(client, "is_local", False))
        if not isinstance(client, LLMClient) or (row.free and not embeds.uses(part, models)):
            row.calls = sum(c[1] for c in counts if c) * repeats
            row.unpriced = "" if row.free else "scripted backbone"
            row.usd = row.usd_most = 0.0 if row.free else None
            continue
        from qatui.llm.spend import unpriced

        row.unpriced = "" if row.free else unpriced(client.model) or ""
        key = str(client.cache.db_path)
        if key not in means:
            means[key] = client.cache.completion_means() if client.use_cache else {}
        if embeds.uses(part, models):
            row.embed = embeds.new_row(models)
        await _price_unit(row, part, client, dataset.items, counts, seed, means[key], batch,
                          (embeds, models) if row.embed is not None else None, repeats)
        if row.free:  # its calls were captured for the embedder's texts: their tokens are neither counted nor paid
            row.prompt_tokens = row.completion_tokens = 0.0
            row.measured = 0
        else:
            from qatui.llm.tokens import approximate

            row.approximate = approximate(client.model) or ""
    if len(priced) > 1:
        total = Priced(backbone="")
        for label, row in priced.items():
            total.add(row)
        priced["total"] = total
    return priced


def _units(judges: list[Judge], resources: Resources, dataset: Dataset
           ) -> Iterator[tuple[str, Judge, Resources, list[tuple[int, int] | None], int]]:
    """(label, the judge that calls, its models, its planned calls per item asked once, how many times each is
    asked: its `repeats`): a jury's members one by one, each asked as often as the jury is."""
    from qatui.engine.runner import Engine
    from qatui.judges.jury.judge import Jury

    for judge in judges:
        repeats = Engine.repeats(judge)
        if isinstance(judge, Jury):
            per_item = [judge.member_calls(item) for item in dataset.items]
            for member in judge.members:
                yield (f"{judge.name} {member.name}", member.judge, member.judge.resources,
                       [c[member.name] for c in per_item], repeats)
        else:
            yield judge.name, judge, resources, [(0, 0) if judge.item_problem(item) else judge.expected_calls(item)
                                                  for item in dataset.items], repeats


async def _price_unit(row: Priced, judge: Judge, client: LLMClient, items: list[Item], counts: list[tuple[int, int] | None],
                seed: int, means: dict[tuple[str, str], tuple[float, int]], batch: bool = False,
                embeds: tuple[EmbedPlanner, Resources] | None = None, repeats: int = 1) -> None:
    """Fill `row`: the sampled items' prompts captured and priced (at $0 on a `free` row), each of its `repeats`
    (its own seed and cache key, so a call the cache holds for one repeat is not taken for another's), the rest at
    the sample's mean per call; with `embeds` (the planner, the judge's models), what it embeds on its served
    embedder too (once: the texts are the same in every repeat)."""
    from qatui.llm.batch import batch_cost
    from qatui.llm.spend import price

    def cost(prompt: float, completion: float) -> float | None:
        if row.free:
            return 0.0
        listed = price(client.model, round(prompt), round(completion))
        return batch_cost(client.model, round(prompt), round(completion))[0] if batch and listed is not None else listed

    sample = Priced(backbone=row.backbone,
                    embed=EmbedPriced(row.embed.embedder, row.embed.model) if row.embed is not None else None)
    rest = 0
    sampled = 0
    for item, count in zip(items, counts):
        most = count[1] if count else 0
        if not most:
            continue
        if sampled >= SAMPLE_ITEMS:
            rest += most * repeats
            continue
        sampled += 1
        for repeat in range(repeats):
            calls = await _capture(judge, item, seed, repeat)
            if repeat == 0 and embeds is not None and sample.embed is not None:
                embeds[0].add_item(sample.embed, judge, embeds[1], item, calls, client)
            later = max(0, most - len(calls))
            prompt_each = sum(c.prompt_tokens for c in calls) / len(calls) if calls else 0.0
            answer_most = max((c.max_tokens for c in calls), default=client.settings.max_tokens)
            for call in calls:
                _add_call(sample, call.prompt_tokens, call.max_tokens, means.get((client.model, call.purpose)) or
                          means.get((client.model, "")), call.cached, cost)
            sample.counted += len(calls)
            all_cached = bool(calls) and all(c.cached for c in calls)
            for _ in range(later):
                _add_call(sample, prompt_each, answer_most, means.get((client.model, "")), all_cached, cost)
            sample.estimated += later
    row.add(sample)  # its embedder's texts with it
    if rest and sample.calls:
        scale = rest / sample.calls
        row.calls += rest
        row.estimated += rest
        row.cached += round(sample.cached * scale)
        row.prompt_tokens += sample.prompt_tokens * scale
        row.completion_tokens += sample.completion_tokens * scale
        row.measured += round(sample.measured * scale)
        row.usd = None if row.usd is None else row.usd + (sample.usd or 0.0) * scale
        row.usd_most = None if row.usd_most is None else row.usd_most + (sample.usd_most or 0.0) * scale
        if row.embed is not None and sample.embed is not None:
            row.embed.add(sample.embed, scale)
    if row.unpriced:
        row.usd = row.usd_most = None
    if row.embed is not None:
        embed = row.embed.priced()
        row.usd = None if row.usd is None or embed.usd is None else row.usd + embed.usd
        row.usd_most = None if row.usd_most is None or embed.usd_most is None else row.usd_most + embed.usd_most


def _add_call(row: Priced, prompt: float, max_tokens: int, mean: tuple[float, int] | None, cached: bool,
              cost: Any) -> None:
    """One planned call: its tokens, and its price unless the cache answers it."""
    completion = min(mean[0], max_tokens) if mean else float(max_tokens)
    row.calls += 1
    row.measured += mean is not None
    row.cached += cached
    row.prompt_tokens += prompt
    row.completion_tokens += completion
    if cached:
        return
    expected, most = cost(prompt, completion), cost(prompt, max_tokens)
    row.usd = None if row.usd is None or expected is None else row.usd + expected
    row.usd_most = None if row.usd_most is None or most is None else row.usd_most + most


async def _capture(judge: Judge, item: Item, seed: int, repeat: int = 0) -> list[Captured]:
    """The requests `judge` builds on `item` as repeat `repeat` (its seed and cache key: `llm.repeat`) before it
    needs an answer, each held, none sent."""
    from qatui.data.presentation import present
    from qatui.llm.capture import CAPTURE, Capture
    from qatui.llm.repeat import REPEAT

    view, _ = present(item, seed)
    capture = Capture()
    token, repeat_token = CAPTURE.set(capture), REPEAT.set(repeat)
    try:
        task = asyncio.ensure_future(_drain(judge.judge(view)))  # the task runs in a copy of this context
    finally:
        CAPTURE.reset(token)
        REPEAT.reset(repeat_token)
    idle = 0
    while not task.done() and idle < IDLE_SPINS:
        before = len(capture.calls)
        await asyncio.sleep(0)
        idle = 0 if len(capture.calls) != before else idle + 1
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return capture.calls


async def _drain(events: AsyncIterator[Any]) -> None:
    async for _ in events:
        pass



def cost_text(row: Priced) -> str:
    """'12.3k+640 tokens · $0.0022 (at most $0.0071)', or the reason there is no price; on an embedded backbone,
    '$0 (embedded model: free)' and, when it has a served embedder, what that one costs after it."""
    if row.free:
        free = "backbone $0 (embedded model: free)"
        if row.embed is None:
            return "$0 (embedded model: free)"
        paid = f"{free} + embedder {row.embed.embedder}: {_short(row.embed.tokens)} embedding tokens"
        if row.usd is None:
            return f"{paid} · no price ({row.embed.unpriced or 'not in LiteLLM price map'})"
        return f"{paid} · {usd(row.usd)} (at most {usd(row.usd_most)})"
    tokens = f"{_short(row.prompt_tokens)}+{_short(row.completion_tokens)} tokens"
    if row.embed is not None:
        tokens += f", {_short(row.embed.tokens)} embedding tokens"
    if row.usd is None:
        why = row.unpriced or (f"embedder: {row.embed.unpriced}" if row.embed is not None and row.embed.unpriced
                               else "not in LiteLLM price map")
        return f"{tokens} · no price ({why})"
    return f"{tokens} · {usd(row.usd)} (at most {usd(row.usd_most)})"


def price_notes(priced: dict[str, Priced]) -> list[str]:
    """How the figures were made: prompts counted or estimated, answers measured or at max_tokens (on the backbones
    that are not free), what has no price (an embedded backbone's served embedder included)."""
    rows = [row for label, row in priced.items() if label != "total" and not row.free]
    calls = sum(r.calls for r in rows)
    notes = []
    if calls:
        counted, estimated = sum(r.counted for r in rows), sum(r.estimated for r in rows)
        measured, cached = sum(r.measured for r in rows), sum(r.cached for r in rows)
        notes += [f"prompts: {counted} of {calls} built and counted with the backbone's tokenizer"
                  + (f", {estimated} estimated from them (asked only after an answer, or past the first "
                     f"{SAMPLE_ITEMS} items)" if estimated else ""),
                  f"answers: {measured} of {calls} at the mean length of the cache's answers, the rest at max_tokens"]
        if cached:
            notes.append(f"{cached} calls are answered by the cache already: free")
    for label, row in priced.items():
        if label != "total" and row.approximate:
            notes.append(f"token counts of {label} on {row.backbone} ({row.model}) are approximate: {row.approximate}")
        if label != "total" and row.usd is None and row.unpriced:
            notes.append(f"no price for {label} on {row.backbone}: {row.unpriced}")
        if label != "total" and row.embed is not None and row.embed.unpriced:
            notes.append(f"no price for {label}'s embedder {row.embed.embedder} ({row.embed.model}): "
                         f"{row.embed.unpriced}")
    return notes


def embedding_plan(judges: list[Judge], resources: Resources, priced: dict[str, Priced]) -> dict[str, Any] | None:
    """The served embedder (`[embedders.NAME]`) the judges use, with LiteLLM's price per million tokens (None when
    its map has none) and, from `priced`, its planned tokens and cost over every judge; None when they use none."""
    name = resources.embedder_name
    if not any(judge.uses_embedder for judge in judges) or name not in resources.config.embedders:
        return None
    from qatui.llm.spend import price

    model = resources.config.embedders[name].model
    found: dict[str, Any] = {"embedder": name, "model": model, "usd_per_million_tokens": price(model, 1_000_000, 0)}
    total = EmbedPriced(name, model)
    rows = [row.embed for label, row in priced.items() if label != "total" and row.embed is not None]
    for row in rows:
        total.add(row)
    if rows:
        found |= {key: value for key, value in total.json().items() if key not in ("embedder", "model")}
    return found


def embedding_note(found: dict[str, Any]) -> str:
    """The plan's line on a served embedder: its price per million tokens, and which of its tokens are counted
    from real texts and which estimated."""
    rate = found["usd_per_million_tokens"]
    priced = (f"${rate:g} per million tokens" if rate is not None else "no price in LiteLLM's price map")
    line = f"embedder {found['embedder']} ({found['model']}, {priced})"
    if "tokens" not in found:
        return line + ": no judge's texts to embed were found"
    cached = f", {found['texts_cached']} of them embedded already (free)" if found["texts_cached"] else ""
    estimated = (f"; {_short(found['tokens_estimated'])} tokens estimated for the texts the run writes "
                 f"({found['answers_estimated']} answers, {found['answers_measured']} of them at the mean of the "
                 "cache's answers, the rest at their max_tokens)" if found["answers_estimated"] else "")
    return (f"{line}: {_short(found['tokens_counted'])} tokens counted with its tokenizer from "
            f"{found['texts_counted']} texts known before the run or in cached answers{cached}{estimated}")


def _short(tokens: float) -> str:
    """1234 -> '1,234'; 1234567 -> '1.23M'."""
    n = round(tokens)
    return f"{n / 1e6:.2f}M" if n >= 10**6 else f"{n:,}"
