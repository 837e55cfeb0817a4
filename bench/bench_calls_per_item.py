"""Calls per item: every judge on the bundled demo set, counted at the server, against the judge table (docs/JUDGES.md) and `--plan`.

Run: .venv/bin/python bench/bench_calls_per_item.py [JUDGE ...]   (default: every registered judge)
Each judge runs on the demo set (20 items, English and Chinese) through `start_run` and the
engine, on a fresh cache, against the loopback server of bench/loopback.py (answers from the
request alone, no latency), with the bundled NLI model and embedders. Three counts per judge:
the completion requests the server received during the run (the preflight excluded), the
minimum of the judge table in docs/JUDGES.md for each item (its formula, in `MINIMUM` below, over each
item's n responses, r references, contexts, route and the models used), and what `run --plan`
prints (`expected_calls`, fewest-most). Goal: measured = README minimum, inside the plan.
A judge that cannot run on the demo set (its needs unmet) is listed with the reason.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from loopback import serve_in_child

from qatui.config import BackboneConfig, CacheConfig, Config, GeneralConfig, ModelsConfig
from qatui.data.language import item_language
from qatui.data.loaders import demo_dataset
from qatui.data.model import Item
from qatui.engine.jobs import calls_text, expected_calls, finish_run, start_run
from qatui.errors import QatuiError
from qatui.events import Verdict
from qatui.judges.registry import JUDGES
from qatui.store import SessionStore

KEY_ENV = "QATUI_BENCH_FAKE_KEY"
JURY = {"members": ["pointwise", "listwise"]}
"""The jury judged here (its README minimum is its members' calls)."""


Minimum = Callable[[list[tuple[Item, Verdict]], Any], int]
"""A README judge-table formula over a run: (each item with its verdict, the judge) -> calls."""


def n(item: Item) -> int:
    """Responses of the item."""
    return len(item.candidates)


def r(item: Item) -> int:
    """References of the item."""
    return len(item.references)


def llm_nli(verdict: Verdict) -> bool:
    """Whether the item's NLI was the backbone (Chinese items, the English-only bundled model)."""
    return verdict.details.get("nli") == "llm"


def minos(item: Item, verdict: Verdict, route: bool) -> int:
    """MinosEval: 1 route (when routed) + r key-point calls (+ r·n with the LLM as NLI), or 2 listwise."""
    if verdict.details.get("strategy") == "key_points":
        calls = r(item) + (r(item) * n(item) if llm_nli(verdict) else 0)
    else:
        calls = 2
    return route + calls


def ragas(item: Item, verdict: Verdict) -> int:
    """RAGAS: faithfulness 2n, answer relevance n, context relevance 1 per context (+1 for the item's own)."""
    d = verdict.details
    return (2 * n(item) * ("faithfulness" in d) + n(item) * ("answer_relevance" in d)
            + n(item) * ("context_relevance" in d) + ("context_relevance_of_context" in d))


def per_item(formula: Callable[[Item, Verdict], int]) -> Minimum:
    """A formula of one item summed over the run."""
    return lambda run, judge: sum(formula(item, verdict) for item, verdict in run)


def geval(run: list[tuple[Item, Verdict]], judge: Any) -> int:
    """G-Eval: d steps calls per language of the run (shared by its items), then n·d ratings: one call each where
    the backbone gave log-probabilities (the loopback server gives them when asked), else `samples` calls.

    Read from each rating's recorded method, so the count follows what the judge did, rating by rating."""
    d = len(judge.options.names)
    languages = {item_language(item) for item, _ in run}
    ratings = [a for _, verdict in run for a in verdict.artifacts if getattr(a, "type", "") == "dimension_rated"]
    assert len(ratings) == sum(n(item) * d for item, _ in run), "a rating of every response on every dimension"
    return d * len(languages) + sum(1 if a.method == "logprobs" else judge.options.samples for a in ratings)


def geval_shared(run: list[tuple[Item, Verdict]], judge: Any) -> int:
    """The steps calls `--plan` counts per item that the run makes once per language (the others cache hits)."""
    d = len(judge.options.names)
    return d * len(run) - d * len({item_language(item) for item, _ in run})


PLAN_EXTRA: dict[str, Minimum] = {"geval": geval_shared}
"""Calls `--plan` counts that are answered by the cache within the run (counted before the cache, as the plan
says): added to the requests before they are set against the plan's range."""


MINIMUM: dict[str, Minimum] = {
    **{name: per_item(lambda item, verdict: 0) for name in ("bleu", "rouge-l", "bertscore", "length")},
    "minos": per_item(lambda item, verdict: minos(item, verdict, route=True)),
    "minos-akps": per_item(lambda item, verdict: minos(item, verdict, route=False)),
    "minos-ialr": per_item(lambda item, verdict: 2),
    "listwise": per_item(lambda item, verdict: 1),
    "checkeval": lambda run, judge: sum(n(item) * len(judge.calls) for item, _ in run),
    "pairwise": per_item(lambda item, verdict: n(item) * (n(item) - 1)),
    "ragas": per_item(ragas),
    "ragas-faithfulness": per_item(ragas),
    "ragas-answer-relevance": per_item(ragas),
    "nli-ra": per_item(lambda item, verdict: r(item) if llm_nli(verdict) else 0),
    "nli-ar": per_item(lambda item, verdict: n(item) if llm_nli(verdict) else 0),
    "pointwise": per_item(lambda item, verdict: n(item)),
    "pairwise-ab": per_item(lambda item, verdict: n(item) * (n(item) - 1) // 2
                            + sum(1 for a in verdict.artifacts if getattr(a, "rematch", False))),
    "linkage": per_item(lambda item, verdict: n(item) + (verdict.details.get("reference_source") == "llm")),
    "geval": geval,
    "jury": lambda run, judge: sum(n(item) + 1 for item, _ in run),  # members pointwise (n) and listwise (1)
}


def make_config(base_url: str, cache_dir: Path) -> Config:
    """The loopback backbone `fake` as the default, on a fresh cache."""
    fake = BackboneConfig(model="openai/fake-model", api_base=base_url, api_key_env=KEY_ENV, timeout_s=60.0)
    return Config(general=GeneralConfig(concurrency=8), cache=CacheConfig(dir=str(cache_dir)),
                  models=ModelsConfig(default_backbone="fake"), backbones={"fake": fake})


def run_judge(name: str, served: Any, root: Path) -> dict[str, Any]:
    """One judge over the demo set: the server's count, the plan's, and each item's verdict."""
    config = make_config(served.base_url, root / f"cache-{name}")
    if name == "jury":
        config = config.model_copy(update={"judges": {**config.judges, "jury": JURY}})
    dataset = demo_dataset()
    try:
        job = start_run(SessionStore(root / "sessions"), dataset, [name], config)
    except QatuiError as e:
        return {"error": str(e)}
    plan = expected_calls([j for j in job.engine.judges], dataset)[name]
    verdicts: dict[str, Verdict] = {}

    async def drive() -> None:
        async for event in job.engine.run():
            if isinstance(event, Verdict):
                verdicts[event.item_id] = event

    before, started = served.count(), time.perf_counter()
    asyncio.run(drive())
    seconds = time.perf_counter() - started
    finish_run(job, "completed")
    counts = job.engine.counts
    return {"requests": served.count() - before, "calls": counts.calls, "plan": plan, "verdicts": verdicts,
            "items": {item.id: item for item in dataset.items}, "judge": job.engine.judges[0],
            "failed": counts.failed, "seconds": seconds,
            "failure": counts.failures[0].reason if counts.failures else ""}


def main(names: list[str]) -> None:
    """Print one row per judge and the goal's verdict."""
    os.environ[KEY_ENV] = "sk-bench-loopback"
    rows, missed = [], []
    with serve_in_child() as served, tempfile.TemporaryDirectory() as folder:
        for name in names:
            result = run_judge(name, served, Path(folder))
            if "error" in result:
                print(f"{name:<24} cannot run on the demo set: {result['error']}")
                continue
            formula = MINIMUM.get(name)
            run = [(result["items"][item_id], verdict) for item_id, verdict in result["verdicts"].items()]
            minimum = None if formula is None else formula(run, result["judge"])
            plan = result["plan"]
            scored = len(result["verdicts"])
            planned = minimum + PLAN_EXTRA[name](run, result["judge"]) if minimum is not None and name in PLAN_EXTRA \
                else minimum
            ok = minimum is not None and result["requests"] == minimum and plan and plan[0] <= planned <= plan[1]
            rows.append(name)
            if not ok:
                missed.append(name)
            print(f"{name:<24} {scored:>3} items  requests {result['requests']:>4} "
                  f"({result['requests'] / max(scored, 1):5.2f}/item)  README minimum "
                  f"{'?' if minimum is None else minimum:>4}  plan {calls_text(plan):>9}  "
                  f"failed {result['failed']}  {result['seconds']:5.1f} s  {'equal' if ok else 'DIFFERS'}")
            if result["failure"]:
                print(f"    e.g. {result['failure'][:300]}")
    print(f"goal calls per item = README minimum and plan agrees: {len(rows) - len(missed)} of {len(rows)} judges"
          + (f"; differs: {', '.join(missed)}" if missed else ""))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or list(JUDGES)))
