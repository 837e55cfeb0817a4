"""`qatui table`: run or reuse one session per (judge, backbone), then print the papers' table.

Everything that could stop a row (unknown judge, data it cannot feed, a backbone that cannot
answer) is checked for every row before the first one runs, so a refusal costs nothing.
"""

from __future__ import annotations

import argparse
import io
from pathlib import Path
from typing import TYPE_CHECKING

from qatui.cli.common import (
    jury_backbones,
    make_console,
    open_store,
    reasoning_asked,
    warn_hidden,
    with_jury,
    with_reasoning,
)
from qatui.cli.parser import EXIT_CAPPED, EXIT_INTERRUPTED, EXIT_STOPPED
from qatui.errors import JudgeError

if TYPE_CHECKING:
    from qatui.config import Config
    from qatui.data.model import Dataset
    from qatui.judges.base import Judge
    from qatui.judges.resources import Resources
    from qatui.store.session import Session, SessionStore


def _rows_to_build(args: argparse.Namespace, config: Config, subset: Dataset,
                   store: SessionStore) -> tuple[list[tuple[Judge | Session, Resources | None]], list[str]]:
    """Each (judge, its models) the table needs, every one checked before any work, and the judges
    asked to repeat that call no backbone (judged once).

    A name that is none of qatui's judges is a judge imported for this dataset (`qatui sessions
    import`): its row is that session, never run.
    """
    from qatui.engine.backbones import calls_backbone, check_models, judge_once_when_fixed
    from qatui.engine.jobs import build_judges
    from qatui.judges.files.find import is_judge_path
    from qatui.judges.registry import available_judges
    from qatui.judges.resources import Resources
    from qatui.report.table import find_imported

    if not args.judges:
        raise JudgeError("no judge chosen: pass --judge NAME for each row (see `qatui judges`)")
    if len(set(args.judges)) != len(args.judges):
        raise JudgeError(f"a judge is named twice: {args.judges}")
    backbones = list(dict.fromkeys(args.backbones)) or [None]
    planned, once = [], []
    asked_as: dict[str, str] = {}  # a judge's name -> the --judge that asked for it
    known = available_judges(config)
    for name in args.judges:
        if name not in known and not is_judge_path(name):
            session = find_imported(store, subset, name)
            if session is None:
                raise JudgeError(f"unknown judge {name!r}: not one of qatui's judges ({', '.join(sorted(known))}) "
                                 f"nor a judge imported for {subset.name} (`qatui sessions import`)")
            planned.append((session, None))
            continue
        for i, backbone in enumerate(backbones):
            resources = Resources(config, backbone_name=backbone, nli_spec=args.nli, embedder_spec=args.embedder,
                                  use_cache=False if args.no_cache else None)
            (judge,) = build_judges([name], config, subset, resources, repeats=args.repeats)
            if asked_as.setdefault(judge.name, name) != name:  # two judge files, one name: rows alike
                raise JudgeError(f"two judges asked are both called {judge.name!r} ({asked_as[judge.name]} and "
                                 f"{name}): their rows could not be told apart, nor picked with --baseline; give "
                                 "one judge file another name")
            if i and not calls_backbone(judge, resources, subset):
                break  # a judge that never calls a backbone gets one row, whatever --backbone says
            planned.append((judge, resources))
    for judge, resources in planned:  # every row built and named first: a refusal above costs no preflight
        if resources is not None:
            once += judge_once_when_fixed([judge], resources, subset)
            check_models([judge], resources, subset, defer_live=not args.batch)
    return planned, once


def _chosen_as(judge: Judge) -> str:
    """The name that builds `judge` again: a judge file's path when it was given as one, else its name."""
    from qatui.judges.files.find import is_judge_path

    source = getattr(getattr(judge, "file", None), "source", "")
    return source if is_judge_path(source) else judge.name


def cmd_table(args: argparse.Namespace, config: Config) -> int:
    """`qatui table`: one row per (judge, backbone), from sessions reused or run now."""
    from qatui.cli.running import INTERRUPTED, consume, record_reasoning
    from qatui.data.loaders import load_dataset
    from qatui.engine.jobs import check_batch_retry, start_run
    from qatui.engine.repeats import judged_once_line
    from qatui.data.leaks import not_compared_warning, without_leaks
    from qatui.report.gold import parse_gold, with_gold
    from qatui.report.leak_figures import leak_note, leaks_json
    from qatui.store.output_file import check_output
    from qatui.report.table import find_reusable

    check_batch_retry(args.batch, args.batch_retry)
    if args.output:
        check_output(args.output, "table." + {"text": "txt", "latex": "tex"}.get(args.to, args.to))  # before any run
    config = with_jury(config, args.judges, args.jury)
    asked = reasoning_asked(args)
    config = with_reasoning(config, asked, [*args.backbones, *jury_backbones(config)])
    dataset = load_dataset(args.dataset, args.fmt)
    subset = dataset.limited(args.limit)
    warn_hidden(subset)
    store, stderr = open_store(args, config), make_console(stderr=True)
    measured, gold_line = with_gold(subset, parse_gold(args.gold), store.root)  # refused before any run
    planned, once = _rows_to_build(args, config, subset, store)
    if line := judged_once_line(once):
        stderr.print(line, markup=False, style="dim")
    left_usd = args.max_cost  # what --max-cost leaves for the rows still to run: one cap over all of them
    built: list[tuple[Session, str, bool]] = []  # (session, judge name, reused) of each row
    for judge, resources in planned:
        if resources is None:  # an imported judge: its session is the row
            built.append((judge, judge.meta["imported"]["judge"], True))
            continue
        session = find_reusable(store, subset, judge, resources)
        reused = session is not None
        if session is None and left_usd is not None and left_usd <= 0:
            stderr.print(f"Stopped at the cost cap of ${args.max_cost:g} before the row {judge.name!r}: run the same "
                         "`qatui table` with a higher --max-cost; it reuses finished sessions", markup=False,
                         style="yellow")
            return EXIT_CAPPED
        if session is None:
            job = start_run(store, dataset, [_chosen_as(judge)], config, limit=args.limit, resources=resources,
                            convention=args.convention, judge_options={judge.name: judge.describe_options()},
                            max_cost=left_usd, batch=args.batch,
                            batch_retry=args.batch_retry)
            record_reasoning(job, asked)
            status, _ = consume(job, quiet=True)
            if status == INTERRUPTED:
                stderr.print(f"[yellow]Interrupted.[/] Resume with: qatui sessions resume {job.session.id}, then run "
                             "the same `qatui table` again: it reuses finished sessions")
                return EXIT_INTERRUPTED
            if status == "capped":
                from qatui.engine.capping import capped_message

                left = len(job.engine.tasks) - job.engine.counts.done - job.engine.counts.failed
                stderr.print(capped_message(job.session.id, job.engine.spend_cap, left) + ", then run the same "
                             "`qatui table` again: it reuses finished sessions", markup=False, style="yellow")
                return EXIT_CAPPED
            if status == "stopped":
                from qatui.cli.running import stopped_message

                stderr.print(stopped_message(job) + ", then run the same `qatui table` again: it reuses finished "
                             "sessions", markup=False, style="yellow")
                return EXIT_STOPPED
            if left_usd is not None:
                left_usd -= job.engine.spend_cap.spent_usd
            session = job.session
        built.append((session, judge.name, reused))
    kept, check = without_leaks(measured)
    left_out = check.items_copying()
    all_rows = _measure(args, config, built, measured, once, store.root)
    for row, (session, _, reused) in zip(all_rows["rows"], built):
        how = "imported" if session.meta.get("imported") else "reused" if reused else "ran"
        stderr.print(f"{row['label']}: {how} session {session.id}", markup=False, style="dim")
    stderr.print(gold_line, markup=False, style="dim")
    free_rows = _measure(args, config, built, kept, once, store.root) if left_out else None
    chosen = free_rows if args.without_leaks and free_rows is not None else all_rows
    table = {"dataset": dataset.name, "items": len(kept.items if chosen is free_rows else measured.items),
             "gold": measured.gold_kind, "gold_source": args.gold, "convention": args.convention,
             "baseline": chosen["baseline"], "rows": chosen["rows"]}
    if leaks := leaks_json(left_out, len(measured.items), check, {
            "left_out": args.without_leaks, "all_items": all_rows, "without_leaks": free_rows}):
        table["leaks"] = leaks
    if note := leak_note(left_out, len(measured.items), args.without_leaks, not_compared=bool(check.not_compared)):
        stderr.print(note, markup=False, style="dim" if args.without_leaks else "yellow")
    if note := not_compared_warning(check):
        stderr.print(note, markup=False, style="yellow")
    _write(args, table)
    return 0


def _measure(args: argparse.Namespace, config: Config, built: list[tuple[Session, str, bool]],
             measured: Dataset, once: list[str], sessions_root: Path) -> dict:
    """Each row's figures on `measured`'s items, with the deltas against the baseline row: {"rows", "baseline"}.

    A judge in `once` (asked to repeat, calling no backbone) shows its self-agreement as not applicable.
    Where two or more people labelled the items, each row has the human ceiling beside it (`report.beside_people`).
    """
    from qatui.engine.repeats import judged_once_doc
    from qatui.report.beside_people import KEY, beside_people, or_why_not
    from qatui.report.table import KEYS, add_baseline_deltas, label, table_row

    rows, verdicts = [], []
    for session, name, reused in built:
        row = table_row(session, name, measured, convention=args.convention, seed=config.general.seed, reused=reused)
        row["label"] = label(row)
        if name in once:
            row["self_agreement"] = judged_once_doc()
        rows.append(row)
        verdicts.append(session.verdicts(name))
    beside, why_not = or_why_not(lambda: beside_people(measured, {str(i): mine for i, mine in enumerate(verdicts)},
                                                       sessions_root))
    if why_not:
        make_console(stderr=True).print(why_not, markup=False, style="yellow")
    for i, row in enumerate(rows):
        if str(i) in beside:
            row[KEY] = beside[str(i)]
    kind = measured.gold_kind
    baseline = _baseline_index(args.baseline, rows)
    if kind in ("ranking", "pairwise"):
        add_baseline_deltas(rows, verdicts, measured, baseline, KEYS[kind][0], convention=args.convention,
                            seed=config.general.seed)
    return {"rows": rows, "baseline": rows[baseline]["label"] if kind in ("ranking", "pairwise") else None}


def _baseline_index(wanted: str | None, rows: list[dict]) -> int:
    """The row named by --baseline (a label, or a judge with a single row), else the first."""
    if wanted is None:
        return 0
    for i, row in enumerate(rows):
        if wanted in (row["label"], row["judge"]):
            return i
    raise JudgeError(f"--baseline {wanted!r} names no row; rows are: {', '.join(r['label'] for r in rows)}")


def _write(args: argparse.Namespace, table: dict) -> None:
    """The table as JSON, Markdown, CSV, LaTeX or a terminal table, to stdout or -o FILE."""
    from qatui.report.strict_json import strict_dumps
    from qatui.store.output_file import write_output
    from qatui.report.table import print_terminal, to_csv, to_latex, to_markdown

    if args.json or args.to != "text":
        text = strict_dumps(table) + "\n" if args.json else {"md": to_markdown, "csv": to_csv, "latex": to_latex}[args.to](table)
        if args.output:
            write_output(args.output, text)
            make_console(stderr=True).print(f"wrote {args.output}", markup=False)
        else:  # to the terminal: a dataset's name quoted in a note shown with its control characters escaped
            from qatui.text import plain

            print(plain(text), end="")
        return
    if args.output:
        drawn = io.StringIO()
        print_terminal(make_console(file=drawn, width=200), table)
        write_output(args.output, drawn.getvalue())
        make_console(stderr=True).print(f"wrote {args.output}", markup=False)
    else:
        print_terminal(make_console(), table)

