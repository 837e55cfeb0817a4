"""`qatui sessions import`: another tool's results as a session, every row checked before anything is written."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from qatui.cli.common import make_console, print_json

if TYPE_CHECKING:
    from qatui.config import Config
    from qatui.store.session import SessionStore


def cmd_import(args: argparse.Namespace, config: Config, store: SessionStore) -> int:
    """Load the dataset, import FILE into a new session, print its metrics (or its JSON) and its id."""
    from qatui.text import escaped

    from qatui.data.loaders import load_dataset
    from qatui.engine.importing import ImportRequest, check_judge_name, import_results
    from qatui.engine.jobs import session_json
    from qatui.report import print_session
    from qatui.text import plural

    check_judge_name(args.judge_name)  # before the dataset loads: the cheapest refusal first
    dataset = load_dataset(args.dataset, args.dataset_fmt)
    request = ImportRequest(path=args.file, judge=args.judge_name, kind=args.kind, format=args.fmt,
                            metric=args.metric, partial=args.partial, name=args.name)
    session = import_results(store, dataset, request, config.general.seed)
    meta, summary = session.meta, session.summary()
    if args.json:
        print_json(session_json(meta, summary))
        return 0
    imported = meta["imported"]
    line = (f"imported {plural(imported['rows'], 'row')} of {escaped(imported['source'])} as judge "
            f"[bold]{escaped(args.judge_name)}[/] ({imported['kind']}) on {escaped(dataset.name)}")
    if imported["not_judged"]:
        line += f"; {plural(imported['not_judged'], 'item')} without a row left not judged"
    make_console(stderr=True).print(line)
    print_session(make_console(), meta, summary)
    return 0
