"""The other commands: checklist generation, judges, models, datasets, sessions."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from qatui.cli.common import make_console, open_store, print_json, run_resources
from qatui.cli.running import run_job
from qatui.errors import QatuiError

if TYPE_CHECKING:

    from qatui.config import Config


def cmd_checklist(args: argparse.Namespace, config: Config) -> int:
    """`qatui checklist generate`: diversify and elaborate a checklist's seed questions, then filter them."""
    from qatui.judges.checkeval.generate import generate_checklist

    if args.action != "generate":
        raise QatuiError("usage: qatui checklist generate SEED.toml -o OUT.toml [--backbone M]")
    resources = run_resources(args, config)
    resources.check_backbone()
    report = asyncio.run(generate_checklist(args.seed, args.output, resources.llm,
                                            diversify=args.diversify, elaborate=args.elaborate))
    make_console(stderr=True).print(report)
    return 0


def cmd_judges(args: argparse.Namespace, config: Config) -> int:
    """`qatui judges`: every judge, what it needs, and what it does."""
    from rich.table import Table

    from qatui.judges.registry import JUDGES, judge_class

    table = Table("judge", "needs", "what it does", "reproduces", box=None)
    for name in JUDGES:
        cls = judge_class(name)
        needs = [w for w, flag in (("reference", cls.needs.reference), ("context", cls.needs.context),
                                   ("backbone", cls.uses_llm)) if flag]
        table.add_row(name, ", ".join(needs) or "-", cls.summary, ", ".join(cls.reproduces) or "-")
    console = make_console()
    console.print(table)
    console.print("reproduces: the papers' rows, by id, that docs/FIDELITY.md marks reproduced, step by step")
    return 0


def cmd_models(args: argparse.Namespace, config: Config) -> int:
    """`qatui models [--check]`: the backbones, NLI models and embedders, optionally checked live."""
    from qatui.report.models import run_models

    return run_models(make_console(), config, args.check)


def cmd_datasets(args: argparse.Namespace, config: Config) -> int:
    """`qatui datasets inspect`: load a dataset (every error named) and preview it."""
    from qatui.data.loaders import load_dataset
    from qatui.report import dataset_overview, print_dataset

    if args.action != "inspect":
        raise QatuiError("usage: qatui datasets inspect PATH [--format F]")
    dataset = load_dataset(args.path, args.fmt)
    if args.json:
        print_json(dataset_overview(dataset))
    else:
        print_dataset(make_console(), dataset)
    return 0


def cmd_sessions(args: argparse.Namespace, config: Config) -> int:
    """`qatui sessions ACTION`: list, show, export, compare, resume, import or delete saved sessions."""
    from qatui import report

    store = open_store(args, config)
    console = make_console()
    if args.action in (None, "list"):
        rows = store.list()
        if getattr(args, "json", False):
            print_json(rows, default=str)
        else:
            report.print_session_list(console, rows, store.root)
        return 0
    if args.action == "show":
        session = store.open(args.id)
        if args.item:
            data = report.item_detail(session, args.item)
            print_json(data) if args.json else report.print_item_detail(console, data)
            return 0
        from qatui.engine.jobs import judges_json, session_json
        from qatui.report.gold import parse_gold
        from qatui.report.leak_figures import session_leak_split

        split, gold = session_leak_split(session, parse_gold(args.gold), store.root, args.without_leaks)
        if args.json:
            leaks = split.json(judges_json)
            print_json({**session_json(session.meta, split.headline), "gold": args.gold,
                        **({"leaks": leaks} if leaks else {})})
        else:
            console.print(gold, style="dim", markup=False)
            report.print_session(console, session.meta, split.headline, failures=report.stored_failures(session))
            if note := split.note():
                console.print(note, markup=False, style="dim" if split.chosen else "yellow")
        return 0
    if args.action == "export":
        from qatui.report.export import export_session

        text = export_session(store.open(args.id), args.fmt)
        if args.output:
            Path(args.output).write_text(text, encoding="utf-8")
            make_console(stderr=True).print(f"wrote {args.output}", markup=False)
        else:
            sys.stdout.write(text)
        return 0
    if args.action == "compare":
        from qatui.report.compare import compare_sessions

        from qatui.report.gold import parse_gold

        data = compare_sessions([store.open(i) for i in args.ids], gold=parse_gold(args.gold), sessions_root=store.root)
        print_json(data) if args.json else report.print_comparison(console, data)
        return 0
    if args.action == "resume":
        from qatui.engine.jobs import NothingToResume, resume_run, session_json

        try:
            job = resume_run(store, args.id, config, max_cost=args.max_cost, batch=args.batch)
        except NothingToResume as e:
            make_console(stderr=True).print(str(e))
            if args.json:
                session = store.open(args.id)
                print_json(session_json(session.meta, session.summary()))
            return 0
        return run_job(job, args.json)
    if args.action == "import":
        from qatui.cli.import_cmd import cmd_import

        return cmd_import(args, config, store)
    if args.action == "delete":
        session = store.open(args.id)
        if not args.yes:
            store.check_deletable(session.id)  # a live run's session: refused before asking (delete refuses too)
            if not _confirm(f"Delete session {session.id} ({session.path})?"):
                return 1
        store.delete(session.id)
        console.print(f"deleted {session.id}", markup=False)
        return 0
    raise QatuiError(f"unknown sessions action {args.action!r}")


def cmd_report(args: argparse.Namespace, config: Config) -> int:
    """`qatui report ID [ID ...] -o FILE`: the sessions as one self-contained HTML file (output and ids checked first)."""
    from qatui.report.html import ITEMS_SHOWN, build_report, check_output, write_report

    from qatui.report.gold import parse_gold

    out, gold = check_output(args.output), parse_gold(args.gold)
    store = open_store(args, config)
    sessions = [store.open(key) for key in args.ids]
    text = build_report(sessions, ITEMS_SHOWN if args.items is None else args.items, gold, store.root)
    path = write_report(out, text)
    make_console(stderr=True).print(f"wrote {path} ({len(text.encode()) // 1024 + 1} KB)", soft_wrap=True, markup=False)
    return 0


def _confirm(question: str) -> bool:
    if not sys.stdin.isatty():
        raise QatuiError("refusing to delete without confirmation: pass --yes")
    return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")
