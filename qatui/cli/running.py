"""Runs from the shell: `run`, `run --plan`, `demo`, and driving a run to its end with a progress bar and Ctrl-C."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
from collections.abc import Callable
from typing import TYPE_CHECKING

from qatui.cli.common import (
    jury_backbones,
    make_console,
    open_store,
    print_json,
    reasoning_asked,
    run_resources,
    warn_hidden,
    with_jury,
    with_reasoning,
)
from qatui.cli.parser import EXIT_CAPPED, EXIT_INTERRUPTED, EXIT_RUN_FAILED, EXIT_STOPPED
from qatui.errors import ConfigError, QatuiError
from qatui.text import plain, plural

if TYPE_CHECKING:
    from rich.table import Table

    from qatui.config import Config
    from qatui.data.model import Dataset
    from qatui.engine.jobs import RunJob
    from qatui.engine.pricing import Priced


INTERRUPTED = "interrupted-by-user"
"""The status `consume` returns when Ctrl-C stopped the run (the session itself is stored as cancelled)."""


def consume(job: RunJob, quiet: bool) -> tuple[str, dict[str, dict]]:
    """Drive the engine with a progress bar on stderr, then summarise; returns (status, summary).

    The first Ctrl-C says at once what happens (nothing new starts, finished items are kept,
    the model calls in flight are being waited for) and does it (`Engine.stop_calls`: the calls in flight return,
    are recorded and cached, and their items are left pending; it cancelled them, and a resume paid for them
    again); a second one exits at once. Either way the session is resumable. The summary after a stop is computed
    in a worker thread: on the event loop it held the second Ctrl-C's handler back until it was
    done (seconds on a large session, since the handler runs on the loop).
    """
    from qatui.cli.progress import run_progress
    from qatui.engine.jobs import finish_run
    from qatui.engine.live import limits_line
    from qatui.events import ItemFailed, LLMCallFinished, RunFinished, Verdict

    engine = job.engine
    stderr = make_console(stderr=True)
    progress = run_progress(stderr, transient=quiet)
    presses = 0

    def on_interrupt(main: asyncio.Task) -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            progress.stop()
            stderr.print("[yellow]Stopping[/]: no new item starts and every finished item is saved; waiting for "
                         "the model calls in flight to return. Press Ctrl-C again to quit now.")
            if engine.batcher is not None:  # a batch in flight is the provider's: collected by the resume
                main.cancel()
            else:
                engine.stop_calls()
            return
        quit_now(job)

    async def drive() -> tuple[str, dict[str, dict]]:
        main = asyncio.current_task()
        try:
            asyncio.get_running_loop().add_signal_handler(signal.SIGINT, on_interrupt, main)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
            pass
        status = "cancelled"
        ticking: asyncio.Task | None = None
        try:
            with progress:
                bar = progress.add_task(job.session.id, total=len(engine.tasks), failed=0, limits="")
                if engine.batcher is not None:  # a batch's state changes with no event: the line is drawn anew
                    ticking = asyncio.create_task(_tick(lambda: progress.update(bar, limits=limits_line(engine))))
                async for event in engine.run():
                    if isinstance(event, (Verdict, ItemFailed)):
                        progress.update(bar, advance=1, failed=engine.counts.failed, limits=limits_line(engine))
                    elif isinstance(event, LLMCallFinished):
                        progress.update(bar, limits=limits_line(engine))
                    elif isinstance(event, RunFinished):
                        status = INTERRUPTED if engine.stopping else event.status
        except asyncio.CancelledError:
            if not presses:
                raise
            main.uncancel()
            status = INTERRUPTED
        finally:
            if ticking is not None:
                ticking.cancel()
        if status != INTERRUPTED:
            return status, finish_run(job, status)
        return status, await asyncio.to_thread(finish_run, job, "cancelled")  # the loop stays free for a second Ctrl-C

    return asyncio.run(drive())


def record_reasoning(job: RunJob, asked: dict[str, object]) -> None:
    """Store --reasoning-effort / --thinking-budget in the new session (`reasoning`), on disk before any result,
    so that a resume asks every backbone the same way."""
    if asked:
        job.session.update_meta(reasoning=asked)
        job.session.flush()


def quit_now(job: RunJob) -> None:
    """The second Ctrl-C: say so, write what is finished (waiting for a flush under way in another thread), exit 130.

    `os._exit`: the executor's threads (a local model mid-generation, a summary) are not waited for.
    """
    make_console(stderr=True).print(f"[yellow]Quit.[/] Finished items are saved. Resume with: qatui sessions resume "
                                    f"{job.session.id}")
    job.session.flush()
    os._exit(EXIT_INTERRUPTED)


async def _tick(draw: Callable[[], object], every_s: float = 1.0) -> None:
    """Call `draw` every `every_s` seconds until cancelled."""
    while True:
        await asyncio.sleep(every_s)
        draw()


def run_job(job: RunJob, as_json: bool, without_leaks: bool = False) -> int:
    """Run to the end, summarise, print; Ctrl-C leaves a flushed, resumable session (exit 130).

    The figures are also measured without the items whose candidates copy a reference
    (`report.leak_figures`): shown instead with `without_leaks`, and in the JSON whenever such items exist.
    """
    from qatui.text import escaped

    from qatui.engine.jobs import finish_run, judges_json, session_json
    from qatui.engine.repeats import judged_once_line
    from qatui.report.leak_figures import split_by_leaks

    saved = job.session.path.absolute()  # named whole: a relative path means nothing from another directory
    if line := judged_once_line(job.session.meta.get("judged_once") or []):
        make_console(stderr=True).print(line, markup=False, style="dim")
    try:
        status, summary = consume(job, quiet=as_json)
    except KeyboardInterrupt:  # before the handler was installed, or where signals cannot be handled
        status, summary = INTERRUPTED, finish_run(job, "cancelled")
    if status == INTERRUPTED:  # what is left (the leak-free figures, printing) is no reason to ignore a Ctrl-C
        with contextlib.suppress(ValueError):  # not the main thread: signals are not this code's to handle
            signal.signal(signal.SIGINT, lambda *_: quit_now(job))
        done, failed = job.engine.counts.done, job.engine.counts.failed
        make_console(stderr=True).print(
            f"[yellow]Interrupted.[/] {done} finished and {failed} failed in this run are saved in "
            f"{escaped(str(saved))}. Resume with: qatui sessions resume {job.session.id}", soft_wrap=True
        )
    split = split_by_leaks(job.session, job.dataset, summary, without_leaks)
    out = {**session_json(job.session.meta, split.headline), "path": str(saved)}
    if (leaks := split.json(judges_json)) is not None:
        out["leaks"] = leaks
    if status == INTERRUPTED:
        if as_json:
            print_json(out)
        return EXIT_INTERRUPTED
    if status == "capped":
        from qatui.engine.capping import capped_message

        cap = job.engine.spend_cap
        left = len(job.engine.tasks) - job.engine.counts.done - job.engine.counts.failed
        make_console(stderr=True).print(capped_message(job.session.id, cap, left), style="yellow", markup=False)
    if status == "stopped":
        make_console(stderr=True).print(stopped_message(job), style="yellow", markup=False)
    if as_json:
        print_json(out)
    else:
        from qatui.report import print_session

        console = make_console()
        print_session(console, job.session.meta, split.headline, failures=job.engine.counts.failures)
        if note := split.note():
            console.print(note, markup=False, style="yellow" if split.left_out and not split.chosen else "dim")
        if warning := split.not_compared():
            console.print(warning, markup=False, style="yellow")
        console.print(f"[dim]saved in {escaped(str(saved))}[/]", soft_wrap=True)
    if status == "capped":
        return EXIT_CAPPED
    if status == "stopped":
        return EXIT_STOPPED
    return EXIT_RUN_FAILED if job.session.meta.get("status") == "failed" else 0


def stopped_message(job: RunJob) -> str:
    """What a run that stopped on a backbone (or served model) that failed its put-off live check says: why, what is
    saved, and how to finish it (plain text: the reason quotes the server)."""
    counts = job.engine.counts
    left = len(job.engine.tasks) - counts.done - counts.failed
    return (f"Stopped: {job.engine.stopped}. {counts.done} done ({counts.cached} calls answered from the call cache) "
            f"and {counts.failed} failed in this run are saved; {left} left to judge (none failed by this). Resume once "
            f"it answers: qatui sessions resume {job.session.id}")


def cmd_run(args: argparse.Namespace, config: Config) -> int:
    """`qatui run`: judge a dataset into a new session (or, with --plan, say what it would call)."""
    from qatui.data.loaders import load_dataset
    from qatui.engine.jobs import check_batch_retry, start_run

    check_batch_retry(args.batch, args.batch_retry)
    if args.offline and not args.plan:
        raise ConfigError("--offline only goes with --plan: a run sends its calls (run --plan --offline prices it "
                         "without a key or a network)")
    config = with_jury(config, args.judges, args.jury)
    asked = reasoning_asked(args)
    config = with_reasoning(config, asked, [args.backbone, *jury_backbones(config)])
    dataset = load_dataset(args.dataset, args.fmt)
    if args.checklist:
        options = config.judge_options("checkeval") | {"checklist": args.checklist}
        config = config.model_copy(update={"judges": {**config.judges, "checkeval": options}})
    warn_hidden(dataset.limited(args.limit))
    if args.plan:
        return _plan(args, config, dataset)
    job = start_run(
        open_store(args, config), dataset, args.judges, config,
        seed=args.seed, concurrency=args.concurrency, limit=args.limit, name=args.name, convention=args.convention,
        resources=run_resources(args, config), max_cost=args.max_cost, repeats=args.repeats, batch=args.batch,
        batch_retry=args.batch_retry,
    )
    record_reasoning(job, asked)
    return run_job(job, args.json, args.without_leaks)


def _plan(args: argparse.Namespace, config: Config, dataset: Dataset) -> int:
    """`run --plan`: what a run would do (judges refused as a run would refuse them), with no session and no call."""
    from qatui.data.language import item_language
    from qatui.engine.pricing import embedding_note, embedding_plan, price_notes, price_run
    from qatui.engine.jobs import (
        build_judges,
        check_models,
        expected_calls,
        judge_once_when_fixed,
        member_calls,
        request_notes,
        run_backbones,
        total_calls,
    )
    from qatui.engine.repeats import judged_once_line

    subset = dataset.limited(args.limit)
    resources = run_resources(args, config)
    judges = build_judges(args.judges, config, subset, resources, repeats=args.repeats)
    once = judge_once_when_fixed(judges, resources, subset)
    checked = check_models(judges, resources, subset, offline=args.offline)
    calls = expected_calls(judges, subset)
    members = member_calls(judges, subset)
    total = total_calls(calls)
    languages = [item_language(item) for item in subset.items]
    nli = resources.nli_names(languages) if any(j.uses_nli for j in judges) else {}
    backbones = run_backbones(judges, resources, subset) or [resources.backbone]
    if args.batch:
        from qatui.engine.backbones import check_batchable

        check_batchable(judges, resources, subset)  # refused as the run would be
    prices = price_run(judges, subset, resources, config.general.seed if args.seed is None else args.seed,
                       batch=args.batch)
    plan = {"dataset": dataset.name, "items": len(subset.items), "backbone": resources.backbone, "nli": nli,
            "backbones": backbones, "calls": {name: list(c) if c else None for name, c in calls.items()},
            "member_calls": {jury: {m: list(c) if c else None for m, c in found.items()} for jury, found in members.items()},
            "total_calls": list(total) if total else None, "cost": {k: row.json() for k, row in prices.items()},
            "repeats": {judge.name: judge.options.repeats for judge in judges}, "judged_once": once,
            **({"batch": True} if args.batch else {}),
            **({"offline": checked} if args.offline else {})}
    if embedding := embedding_plan(judges, resources, prices):
        plan["embeddings"] = embedding
    if requests := request_notes(judges, resources, subset):
        plan["requests"] = requests
    if args.json:
        print_json(plan)
        return 0
    from rich.text import Text

    console = make_console()
    console.print(Text.assemble((plain(dataset.name), "bold"), plain(
        f": {plural(len(subset.items), 'item')}, {'backbone' if len(backbones) == 1 else 'backbones'} "
        f"{', '.join(backbones)}")))
    for note in requests.values():
        console.print(f"  {note}", markup=False)
    if args.offline:
        for line in checked["backbones"]:
            console.print(f"  {line}", markup=False)
        for name in checked["not_probed"]:
            console.print(f"  {name}: not probed (--offline); its stored vectors not read, every text priced", markup=False)
    if nli:
        console.print("  NLI: " + ", ".join(f"{language} items → {name}" for language, name in nli.items()), markup=False)
    console.print(plan_table(calls, members, total, prices, {judge.name: judge.options.repeats for judge in judges}))
    console.print("[dim]backbone calls, counted before the cache; re-asks of malformed answers not counted[/]")
    if line := judged_once_line(once):
        console.print(line, style="dim", markup=False)
    for note in price_notes(prices):
        console.print(note, style="dim", markup=False)
    if embedding:
        console.print(embedding_note(embedding), style="dim", markup=False)
    if args.batch:
        console.print("prices: the batch price (LiteLLM's where its map has one, else half the list price)",
                      style="dim", markup=False)
    return 0


def plan_table(calls: dict[str, tuple[int, int] | None], members: dict[str, dict[str, tuple[int, int] | None]],
               total: tuple[int, int] | None, prices: dict[str, Priced], repeats: dict[str, int]) -> Table:
    """The plan's rows: each judge (its jury's members under it, dim), then the total when there are several;
    calls in a column of their own, tokens and cost beside them, wrapped inside their column at 80 columns
    (printed as one line each, they broke across the row's start)."""
    from rich.table import Table
    from rich.text import Text

    from qatui.engine.jobs import calls_text
    from qatui.engine.pricing import cost_text

    table = Table(box=None, padding=(0, 1), pad_edge=False, header_style="dim", show_edge=False)
    table.add_column("  judge", no_wrap=True)
    table.add_column("calls", justify="right", no_wrap=True)
    table.add_column("tokens and cost")

    def row(label: str, count: tuple[int, int] | None, key: str, note: str = "", style: str = "") -> None:
        cost = cost_text(prices[key]) if key in prices else ""
        table.add_row(Text(label), Text(calls_text(count)), Text(" · ".join(p for p in (note, cost) if p)),
                      style=style)

    for name, count in calls.items():
        row(f"  {name}", count, name, f"{repeats[name]} repeats each" if repeats.get(name, 1) > 1 else "")
        for member, member_count in members.get(name, {}).items():
            row(f"    {member}", member_count, f"{name} {member}", style="dim")
    if len(calls) > 1:
        row("  total", total, "total")
    return table


def cmd_demo(args: argparse.Namespace, config: Config) -> int:
    """`qatui demo`: MinosEval live on the bundled demo set in the TUI (headless: rouge-l and bleu)."""
    from qatui.data.loaders import demo_dataset
    from qatui.engine.jobs import start_run

    if args.headless or args.json:
        job = start_run(open_store(args, config), demo_dataset(), ["rouge-l", "bleu"], config,
                        resources=run_resources(args, config))
        return run_job(job, args.json)
    job = start_run(open_store(args, config), demo_dataset(), ["minos"], config, resources=run_resources(args, config))
    return open_tui(args, config, job=job)


def cmd_open(args: argparse.Namespace, config: Config) -> int:
    """`qatui open ID`: one saved session in the TUI."""
    session = open_store(args, config).open(args.id)
    return open_tui(args, config, open_id=session.id)


def cmd_lab(args: argparse.Namespace, config: Config) -> int:
    """`qatui lab [JUDGE_FILE] [DATA]`: the Judge Lab over Home; a missing file or dataset is refused before the TUI."""
    from pathlib import Path

    from qatui.data.loaders import load_dataset
    from qatui.safe_read import Refused, check_regular

    if args.judge_file.endswith(".toml"):
        try:
            check_regular(Path(args.judge_file).expanduser(), folder=False)  # a FIFO or a folder, named as one
        except Refused as e:
            raise QatuiError(f"{args.judge_file}: {e}") from None
        if not Path(args.judge_file).expanduser().is_file():
            raise QatuiError(f"{args.judge_file}: no such judge file")
        from qatui.tui.lab_file import open_lab_file

        open_lab_file(Path(args.judge_file).expanduser().absolute())  # one the editor cannot show: refused here
    if args.data and args.data != "demo":
        load_dataset(args.data)  # a bad dataset is refused here, in one line
    return open_tui(args, config, lab=(args.judge_file, args.data))


def open_tui(args: argparse.Namespace, config: Config, **where: object) -> int:
    """Run the Textual app (Home, plus a session or a run when given) until the user quits."""
    from qatui.tui.app import QatuiApp
    from qatui.tui.roots import Roots

    QatuiApp(config, open_store(args, config), roots=Roots.of(getattr(args, "roots", None)), **where).run()
    return 0
