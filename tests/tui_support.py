"""What the TUI tests share: sessions with fixed ids and times, runs driven without the TUI, small datasets.

The scripted backbone and NLI these runs use are in `fakes` (they answer from the prompts alone;
nothing here loads a model).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
import json
import threading
from datetime import datetime, timezone
from pathlib import Path

from fakes import ScriptedLLM, answer_from_prompt, scripted_resources, wait_until

from qatui.config import Config
from qatui.data.loaders import demo_dataset
from qatui.data.model import Dataset
from qatui.engine.jobs import RunJob, finish_run, start_run
from qatui.judges.resources import Resources
from qatui.store.session import SessionStore

FIXED_NOW = datetime(2026, 11, 22, 9, 30, tzinfo=timezone.utc)


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

    def reply(call):
        if word in call.content:
            raise RuntimeError(f"scripted failure on {word!r}")
        return answer_from_prompt(call)

    return scripted_resources(config, llm=ScriptedLLM(reply, model="scripted/tui", stream=True))


def write_sums(path: Path, n: int, *, gold: bool = False) -> Path:
    """`n` two-answer items "What is i plus i?" (a right and a wrong sum), as native JSONL; with `gold`, people
    prefer the right one (pairwise gold A)."""
    with path.open("w") as f:
        for i in range(n):
            item = {"id": f"q{i}", "question": f"What is {i} plus {i}?", "references": [f"{2 * i}"],
                    "candidates": {"a": f"It is {2 * i}.", "b": f"It is {2 * i + 1}."}}
            if gold:
                item["gold"] = {"kind": "pairwise", "a": "a", "b": "b", "labels": ["A"]}
            f.write(json.dumps(item) + "\n")
    return path


def write_doubled(path: Path, n: int, answer_a: Callable[[int], str], answer_b: Callable[[int], str],
                  label: str = "A") -> Path:
    """`n` two-answer items "What is i doubled?" (reference 2i), answers `answer_a(i)` and `answer_b(i)`, people's
    label `label` (pairwise gold), as native JSONL: the small sets on which lexical judges' figures are known."""
    path.write_text("".join(json.dumps({
        "id": f"q{i}", "question": f"What is {i} doubled?", "references": [f"{2 * i}"],
        "candidates": {"a": answer_a(i), "b": answer_b(i)},
        "gold": {"kind": "pairwise", "a": "a", "b": "b", "labels": [label]}}) + "\n" for i in range(n)), encoding="utf-8")
    return path


def write_rated(path: Path, n: int, rated_alike: int) -> Path:
    """`n` three-answer documents of lengths 1, 4 and 8 words, rated 1, 2 and 5 by people, except the first
    `rated_alike`, which people rated 3 throughout (no order to agree with), as native JSONL (ratings gold)."""
    answers = {"a": "short", "b": "a somewhat longer answer", "c": "the longest answer of the three by a margin"}
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            rated = dict.fromkeys("abc", 3.0) if i < rated_alike else {"a": 1.0, "b": 2.0, "c": 5.0}
            f.write(json.dumps({"id": f"d{i}", "question": f"Question number {i} about the topic?",
                                "references": ["A reference answer."], "candidates": answers,
                                "gold": {"kind": "ratings", "ratings": {c: {"overall": v} for c, v in rated.items()}}})
                    + "\n")
    return path


def exact_interval(successes: int, trials: int) -> list[float]:
    """Clopper and Pearson's 95% interval as SciPy computes it (`binomtest`): what qatui's closed form must equal."""
    from scipy.stats import binomtest

    found = binomtest(successes, trials).proportion_ci(0.95, method="exact")
    return [pytest_approx(found.low), pytest_approx(found.high)]


def pytest_approx(value: float):
    """`pytest.approx` to 1e-9: SciPy's beta quantile and the closed form differ in the 14th digit."""
    import pytest

    return pytest.approx(value, rel=1e-9, abs=1e-12)


def long_right(i: int) -> str:
    """The longer answer, which holds the reference 2i."""
    return f"The answer is {2 * i}, because doubling {i} gives it."


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


async def open_the_only_session(pilot) -> Callable[[], str]:
    """From Home listing one session, open it; the Session header's lines as text, read anew at each call."""
    from qatui.tui.screens.session import SessionScreen
    from qatui.tui.widgets.session_header import SessionHeader

    app = pilot.app
    await wait_until(pilot, lambda: app.screen.query("DataTable") and app.screen.query_one("DataTable").row_count == 1)
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None)
    header = app.screen.query_one(SessionHeader)
    return lambda: "\n".join(str(static.render()) for static in header.query("Static"))


async def new_run_with(app, pilot, judge: str):
    """From Home: New run on the demo set, its judges listed, `judge` ticked alone (MinosEval unticked); the
    screen."""
    from textual.widgets import SelectionList

    from qatui.tui.screens.home import HomeScreen
    from qatui.tui.screens.new_run import NewRunScreen

    await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
    await pilot.press("n")
    screen = app.screen
    assert isinstance(screen, NewRunScreen)
    listing = screen.query_one("#judges", SelectionList)
    await wait_until(pilot, lambda: judge in screen.judges and screen.dataset is not None, "New run's judges")
    listing.deselect("minos")
    listing.select(judge)
    return screen


def panel_host(panel_class):
    """An app showing one task panel alone (with the theme variable qatui's CSS adds), for a panel's own test."""
    from textual.app import App

    class Host(App[None]):
        def get_theme_variable_defaults(self) -> dict[str, str]:
            return {"panel-border": "#808080"}

        def compose(self):
            yield panel_class()

    return Host()
