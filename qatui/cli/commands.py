"""The other commands: checklist generation, judges, models, datasets, sessions."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from qatui.cli.common import make_console, open_store, print_json, run_resources, warn_hidden
from qatui.cli.running import run_job
from qatui.errors import QatuiError

if TYPE_CHECKING:
    from rich.console import Console

    from qatui.config import Config
    from qatui.store.session import SessionStore


def cmd_checklist(args: argparse.Namespace, config: Config) -> int:
    """`qatui checklist generate`: diversify and elaborate a checklist's seed questions, then filter them."""
    from qatui.judges.checkeval.generate import generate_checklist

    if args.action != "generate":
        raise QatuiError("usage: qatui checklist generate SEED.toml -o OUT.toml [--backbone M]")
    from qatui.store.output_file import check_output

    check_output(args.output, "checklist.toml")  # before any call: the answers would be lost to a folder
    resources = run_resources(args, config)
    resources.check_backbone()
    report = asyncio.run(generate_checklist(args.seed, args.output, resources.llm,
                                            diversify=args.diversify, elaborate=args.elaborate))
    make_console(stderr=True).print(report, markup=False)  # it names the output file as typed: text
    return 0


def cmd_judges(args: argparse.Namespace, config: Config) -> int:
    """`qatui judges`: every judge, what it needs and what it does, then the judge files found, each with its file;
    `new` and `export` write judge files; `versions NAME` and `show NAME` its versions; `align` revises its prompt
    from people's labels."""
    if getattr(args, "action", None) in ("new", "export"):
        return _write_judge_file(args)
    if getattr(args, "action", None) == "align":
        from qatui.cli.align_cmd import cmd_align

        return cmd_align(args, config)
    if getattr(args, "action", None) in ("versions", "show"):
        from qatui.report.judge_history import print_definition, print_versions

        console = make_console()
        if args.action == "versions":
            print_versions(console, args.name)
        else:
            print_definition(console, args.name, args.version, config)
        return 0
    from qatui.text import escaped
    from rich.table import Table

    from qatui.judges.files import JudgeFileError
    from qatui.judges.registry import available_judges, judge_class
    from qatui.paths import tilde

    def needs(cls: type) -> str:
        return ", ".join(w for w, flag in (("reference", cls.needs.reference), ("context", cls.needs.context),
                                           ("backbone", cls.uses_llm)) if flag) or "-"

    table = Table("judge", "needs", "what it does", "reproduces", box=None)
    files = Table(box=None)
    for heading in ("judge file", "needs", "what it does", "file"):
        files.add_column(heading, overflow="fold")  # a path is never cut short
    for name, where in available_judges(config).items():
        if where == "built-in":
            cls = judge_class(name)
            table.add_row(name, needs(cls), cls.summary, ", ".join(cls.reproduces) or "-")
            continue
        try:
            cls = judge_class(name, config)
        except JudgeFileError as e:  # a bad file in the user folder is listed with its problem, not fatal
            files.add_row(escaped(name), "-", f"[red]not usable:[/] {escaped(str(e))}", escaped(tilde(where)))
            continue
        files.add_row(escaped(name), needs(cls), escaped(f"{cls.file.kind}: {cls.summary}"), escaped(tilde(where)))
    console = make_console()
    console.print(table)
    console.print("reproduces: the papers' rows, by id, that docs/FIDELITY.md marks reproduced, step by step")
    if files.row_count:
        console.print()
        console.print(files)
    console.print("your own judges as TOML files: qatui judges new NAME --kind KIND -o FILE (docs/JUDGE_FILES.md)")
    return 0


def _write_judge_file(args: argparse.Namespace) -> int:
    """`qatui judges new` / `export`: the file written atomically, never over an existing one."""
    from qatui.judges.files.export import export_text
    from qatui.judges.files.starters import starter_text
    from qatui.paths import tilde, user_path
    from qatui.store.atomic import atomic_write_text

    target = user_path(args.output)
    if target.exists():
        raise QatuiError(f"{tilde(target)} exists: choose another file or remove it first")
    if not target.parent.is_dir():
        raise QatuiError(f"{tilde(target.parent)}: no such folder")
    text = starter_text(args.name, args.kind) if args.action == "new" else export_text(args.name, args.new_name)
    try:
        atomic_write_text(target, text)
    except OSError as e:
        raise QatuiError(f"{tilde(target)}: cannot write it: {e}") from None
    make_console(stderr=True).print(f"wrote {escape_path(target)}; run it with: qatui run DATA --judge "
                                    f"{escape_path(target)} --backbone MODEL", markup=False)
    return 0


def escape_path(path: Path) -> str:
    """A path as people read it (`~` for the home folder)."""
    from qatui.paths import tilde

    return tilde(path)


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

        from qatui.report.beside_people import or_why_not, session_beside_people, with_ceiling

        split, gold = session_leak_split(session, parse_gold(args.gold), store.root, args.without_leaks)
        beside, why_not = or_why_not(lambda: session_beside_people(session, store.root))
        if why_not:
            make_console(stderr=True).print(why_not, markup=False, style="yellow")
        shown = with_ceiling(split.headline, beside)
        if args.json:
            leaks = split.json(judges_json)
            print_json({**session_json(session.meta, shown), "gold": args.gold,
                        **({"leaks": leaks} if leaks else {})})
        else:
            console.print(gold, style="dim", markup=False)
            report.print_session(console, session.meta, shown, failures=report.stored_failures(session))
            if note := split.note():
                console.print(note, markup=False, style="dim" if split.chosen else "yellow")
            if warning := split.not_compared():
                console.print(warning, markup=False, style="yellow")
        return 0
    if args.action == "export":
        from qatui.report.export import export_session
        from qatui.store.output_file import check_output, write_output

        out = check_output(args.output, f"results.{args.fmt}") if args.output else None
        text = export_session(store.open(args.id), args.fmt)
        if out:
            write_output(out, text)
            make_console(stderr=True).print(f"wrote {args.output}", markup=False)
        else:  # to the terminal: a control character in the data shown as its escape, never obeyed
            from qatui.text import plain

            sys.stdout.write(plain(text))
        return 0
    if args.action == "compare":
        from qatui.report.compare import compare_sessions

        from qatui.report.gold import parse_gold

        data = compare_sessions([store.open(i) for i in args.ids], gold=parse_gold(args.gold), sessions_root=store.root)
        print_json(data) if args.json else report.print_comparison(console, data)
        return 0
    if args.action == "diff":
        return _sessions_diff(args, config, store, console)
    if args.action == "resume":
        from qatui.engine.jobs import NothingToResume, resume_run, session_json

        from qatui.cli.common import with_reasoning

        meta = store.open(args.id).meta  # asked as the run asked: its --reasoning-effort / --thinking-budget
        config = with_reasoning(config, meta.get("reasoning") or {},
                                [(meta.get("models") or {}).get("backbone"), *meta.get("backbones", [])])
        try:
            job = resume_run(store, args.id, config, max_cost=args.max_cost, batch=args.batch,
                             batch_retry=args.batch_retry)
        except NothingToResume as e:
            make_console(stderr=True).print(str(e))
            if args.json:
                session = store.open(args.id)
                print_json(session_json(session.meta, session.summary()))
            return 0
        warn_hidden(job.dataset)
        return run_job(job, args.json)
    if args.action == "import":
        from qatui.cli.import_cmd import cmd_import

        return cmd_import(args, config, store)
    if args.action == "delete":
        session = store.open(args.id)
        if session.id != args.id:  # a name or a prefix: one slip of a script deleted another session, asking nothing
            raise QatuiError(f"sessions delete takes a session's exact id, since it cannot be undone: {args.id!r} is "
                             f"the name or the start of session {session.id}; delete it with `qatui sessions delete "
                             f"{session.id}`")
        if not args.yes:
            store.check_deletable(session.id)  # a live run's session: refused before asking (delete refuses too)
            if not _confirm(f"Delete session {session.id} ({session.path})?"):
                return 1
        store.delete(session.id)
        console.print(f"deleted {session.id}", markup=False)
        return 0
    raise QatuiError(f"unknown sessions action {args.action!r}")


def _sessions_diff(args: argparse.Namespace, config: Config, store: SessionStore, console: Console) -> int:
    """`qatui sessions diff A [B]`: per judge both share, "same version" or the unified diff of its definitions;
    with one session, its judges as stored against the same judges now (what a resume would refuse)."""
    from qatui.engine.jobs import resources_from_meta
    from qatui.engine.versions import current_entries
    from qatui.report.versions import definition_diff, print_diff

    if len(args.ids) > 2:
        raise QatuiError("sessions diff takes one session (against its judges now) or two")
    first = store.open(args.ids[0])
    if len(args.ids) == 2:
        second = store.open(args.ids[1])
        names, right = (first.id, second.id), second.meta.get("judges") or {}
    else:
        names, right = (first.id, "now"), current_entries(first.meta, resources_from_meta(first.meta, config))
    diffs = definition_diff(first.meta.get("judges") or {}, right, names)
    if args.json:
        print_json({"sessions": list(names), "judges": diffs})
    else:
        print_diff(console, diffs, names)
    return 0


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
