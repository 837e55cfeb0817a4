"""`qatui judges align JUDGE DATA`: a judge's prompt revised from people's labels, kept only if train agreement rose.

Everything that could stop it (the judge, the data and its gold, the split, the output file, both
backbones) is checked before the first call; `--plan` stops there and prints the calls. Ctrl-C stops
the loop: each evaluation is a session of its own, so what finished is kept (versions stored, sessions
resumable), and the command says which.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qatui.cli.common import make_console, open_store, print_json, warn_hidden
from qatui.cli.parser import EXIT_INTERRUPTED, EXIT_RUN_FAILED
from qatui.errors import QatuiError

if TYPE_CHECKING:
    from rich.console import Console

    from qatui.config import Config
    from qatui.engine.aligning import AlignState, Plan


def _output(args: argparse.Namespace, source: Path | None) -> Path | None:
    """The -o file, refused before any work when it is a folder, or an existing file (the judge file being
    aligned above all) without --force."""
    if args.output is None:
        return None
    out = Path(args.output).expanduser()
    if out.is_dir():
        raise QatuiError(f"-o {args.output}: is a folder; name the judge file to write")
    if out.exists() and not args.force:
        what = "the judge file being aligned" if source is not None and out.resolve() == source.resolve() \
            else "an existing file"
        raise QatuiError(f"-o {args.output}: {what}; pass --force to overwrite it")
    if not out.parent.is_dir():
        raise QatuiError(f"-o {args.output}: no folder {out.parent}")
    return out


def cmd_align(args: argparse.Namespace, config: Config) -> int:
    """`qatui judges align`: split, evaluate, let the writer revise, keep the best on train, report on test."""
    from qatui.data.loaders import load_dataset
    from qatui.engine.aligning import Aligner, AlignState, Settings, plan_calls, split_items
    from qatui.judges.editable import editable_judge
    from qatui.judges.resources import Resources
    from qatui.report.gold import parse_gold, with_gold
    from qatui.store.judge_versions import JudgeHistory

    editable = editable_judge(args.judge, config)
    dataset = load_dataset(args.dataset, args.fmt)
    warn_hidden(dataset)
    store = open_store(args, config)
    dataset, gold_line = with_gold(dataset, parse_gold(args.gold), store.root)
    seed = config.general.seed if args.seed is None else args.seed
    settings = Settings(rounds=args.rounds, train_share=args.train_share, seed=seed, shown=args.shown)
    train_ids, test_ids, stratified_by = split_items(dataset, settings.train_share, seed)
    out = _output(args, editable.path)
    use_cache = False if args.no_cache else None
    resources = Resources(config, backbone_name=args.backbone, use_cache=use_cache)
    judge = editable.build(editable.text, resources)
    plan = plan_calls(judge, dataset, train_ids, test_ids, settings.rounds)
    writer = Resources(config, backbone_name=args.writer or resources.backbone, use_cache=use_cache)
    if args.plan:
        _print_plan(args, plan, resources.backbone, writer.backbone, len(train_ids), len(test_ids), stratified_by)
        return 0
    store.check_writable()
    resources.check_backbone()
    writer.check_backbone()
    stderr = make_console(stderr=True)
    stderr.print(gold_line, markup=False, style="dim")
    state = AlignState(name=editable.name, train_ids=train_ids, test_ids=test_ids, stratified_by=stratified_by)
    progress = _Progress(stderr)
    aligner = Aligner(editable=editable, dataset=dataset, config=config, resources=resources, writer=writer.llm,
                      store=store, history=JudgeHistory(), settings=settings, on_event=progress.on_event,
                      on_step=progress.step)
    with progress.bar:
        finished = _drive(aligner, state)
    if not finished:
        _report_interrupted(stderr, state, aligner.history.root)
        if args.json:
            print_json({**_doc(state, resources.backbone, writer.backbone), "interrupted": True})
        return EXIT_INTERRUPTED
    kept = state.candidates[state.best]
    if state.candidates[0].train is not None and state.candidates[0].train.value is None:
        stderr.print(state.stopped, markup=False, style="red")
        if args.json:
            print_json(_doc(state, resources.backbone, writer.backbone))
        return EXIT_RUN_FAILED  # nothing measured: no file written, no figure to read
    if out is not None:
        from qatui.store.output_file import write_output

        write_output(out, kept.text)
    doc = {**_doc(state, resources.backbone, writer.backbone), "output": str(out) if out else None,
           "history": str(aligner.history.root / editable.name)}
    if args.json:
        print_json(doc)
    else:
        _print_result(make_console(), doc)
    return 0


class _Progress:
    """Each step as a line on stderr, and the run in progress as a bar of its items (gone when it ends)."""

    def __init__(self, console: Console) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=console, transient=True)
        self.task: Any = None
        self.label = ""

    def step(self, line: str) -> None:
        """A step begins: say so, and name the bar of its run after it."""
        self.bar.console.print(line, markup=False, style="dim", highlight=False)
        self.label = line.split(":", 1)[0]

    def on_event(self, event: Any) -> None:
        """A run's events: its start sizes the bar, each verdict or failure moves it."""
        from qatui.events import ItemFailed, RunFinished, RunStarted, Verdict

        if isinstance(event, RunStarted):
            self.task = self.bar.add_task(self.label, total=event.n_tasks)
        elif isinstance(event, (Verdict, ItemFailed)) and self.task is not None:
            self.bar.advance(self.task)
        elif isinstance(event, RunFinished) and self.task is not None:
            self.bar.remove_task(self.task)
            self.task = None


def _drive(aligner: Any, state: AlignState) -> bool:
    """Run the loop; False when Ctrl-C stopped it (what finished is in `state`, every session saved)."""
    stopped = False

    async def drive() -> None:
        main = asyncio.current_task()

        def on_interrupt() -> None:
            nonlocal stopped
            stopped = True
            make_console(stderr=True).print("[yellow]Stopping[/]: what finished is kept; waiting for the calls in "
                                            "flight to return.")
            main.cancel()

        try:
            asyncio.get_running_loop().add_signal_handler(signal.SIGINT, on_interrupt)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
            pass
        try:
            await aligner.run(state)
        except asyncio.CancelledError:
            if not stopped:
                raise

    try:
        asyncio.run(drive())
    except KeyboardInterrupt:  # before the handler was installed, or where signals cannot be handled
        return False
    return not stopped


def _figure(evaluation: Any) -> dict | None:
    return evaluation.figures() if evaluation is not None else None


def _doc(state: AlignState, backbone: str, writer: str) -> dict[str, Any]:
    """The result as one JSON object: the split, every candidate, start and final on train and test, the test delta."""
    start = state.candidates[0] if state.candidates else None
    kept = state.candidates[state.best] if state.candidates else None
    return {
        "judge": state.name, "backbone": backbone, "writer": writer,
        "split": {"train": state.train_ids, "test": state.test_ids, "stratified_by": state.stratified_by},
        "start": {"version": start.version if start else None, "train": _figure(start.train if start else None),
                  "test": _figure(state.start_test)},
        "final": {"round": kept.round if kept else None, "version": kept.version if kept else None,
                  "train": _figure(kept.train if kept else None), "test": _figure(state.final_test)},
        "test_difference": state.comparison.figures() if state.comparison else None,
        "candidates": [c.doc() for c in state.candidates],
        "stopped": state.stopped or None,
        "sessions": state.sessions,
    }


def _cell(figure: dict | None) -> str:
    """A figure ×100 with its CI, or '–'; with the items the judge failed on, which the figure leaves out."""
    failed = f" · {figure['failed']} failed" if figure and figure.get("failed") else ""
    if not figure or figure.get("value") is None:
        return "–" + failed
    ci = figure.get("ci")
    return f"{figure['value'] * 100:.1f}" + (f" [{ci[0] * 100:.1f}, {ci[1] * 100:.1f}]" if ci else "") + failed


def _print_result(console: Console, doc: dict) -> None:
    """The rounds, the start and final figures on train and test, the paired test difference, where things are.

    Plain strings, never markup: the console makes them plain before it lays them out (a reason quotes a backbone)."""
    start, final = doc["start"], doc["final"]
    metric = (start.get("train") or {}).get("metric", "agreement")
    for c in doc["candidates"][1:]:
        what = _cell(c["train"]) + f" on train (version {c['version']})" if c["status"] in ("scored", "failed") else ""
        reason = f": {c['reason']}" if c["reason"] else ""
        console.print(f"round {c['round']}: {c['status']}{reason}" + (f" · {what}" if what else ""), markup=False)
    if doc["stopped"]:
        console.print(doc["stopped"], markup=False, style="dim")
    kept = "the start (no proposal beat it on train)" if final["round"] == 0 else f"round {final['round']}"
    console.print(f"kept: {kept}, version {final['version']}", markup=False)
    console.print(f"{metric} ×100 with 95% CIs    start                  final", markup=False)
    for side in ("train", "test"):
        console.print(f"  {side:<5} ({(start[side] or {}).get('items', 0)} items)   "
                      f"{_cell(start[side]):<22} {_cell(final[side])}", markup=False)
    delta = doc["test_difference"]
    if delta and delta["delta"] is not None:
        ci = delta["ci"]
        tested = max((start["test"] or {}).get("items", 0), (final["test"] or {}).get("items", 0))
        left = f" ({tested - delta['n']} test item(s) one of them failed on left out)" if tested > delta["n"] else ""
        console.print(f"test difference (final − start): {delta['delta'] * 100:+.1f}"
                      + (f" [{ci[0] * 100:+.1f}, {ci[1] * 100:+.1f}]" if ci else "")
                      + f", paired CI over {delta['n']} items{left} (an interval across 0 is noise); "
                      f"{len(delta['now_right'])} item(s) now agree more, {len(delta['now_wrong'])} less", markup=False)
    console.print(f"every candidate that ran is a version: `qatui judges versions {doc['judge']}` lists them, "
                  f"`qatui judges show {doc['judge']} --version V` prints one (kept in {doc['history']}); "
                  f"sessions: {', '.join(doc['sessions'])}", markup=False, style="dim")
    if doc.get("output"):
        console.print(f"wrote {doc['output']}", markup=False, style="dim")


def _print_plan(args: argparse.Namespace, plan: Plan, backbone: str, writer: str, n_train: int, n_test: int,
                stratified_by: str) -> None:
    """`judges align --plan`: the split and the calls of each step, before any work."""
    from qatui.engine.jobs import calls_text

    if args.json:
        print_json({"backbone": backbone, "writer": writer, "train": n_train, "test": n_test,
                    "stratified_by": stratified_by, "calls": plan.doc()})
        return
    console = make_console()
    lines = [f"split: {n_train} train, {n_test} test items, stratified by {stratified_by}",
             f"start on train and test: {calls_text(plan.start)} calls to {backbone}",
             f"each of {plan.rounds} round(s): {plan.per_round_writer} call to the writer {writer}, then "
             f"{calls_text(plan.per_round_judge)} to {backbone} when the proposal is valid",
             f"end, the kept judge on test: {calls_text(plan.end)} calls (none when the start is kept)",
             f"total: {calls_text(plan.total)} calls, counted before the cache; re-asks of malformed answers and "
             "the backbones' one check each are not counted"]
    for line in lines:
        console.print(line, markup=False)


def _report_interrupted(console: Console, state: AlignState, history: Path) -> None:
    """What a Ctrl-C left: the candidates kept as versions, the sessions (the last one resumable)."""
    kept = [c for c in state.candidates if c.version]
    from rich.text import Text

    from qatui.text import plain

    console.print(Text.assemble(("Interrupted.", "yellow"), plain(f" {len(kept)} candidate(s) kept as versions in "
                                f"{history / state.name}; sessions: {', '.join(state.sessions) or 'none'} (the last "
                                "one, if unfinished, resumes with `qatui sessions resume ID`)")), soft_wrap=True)
