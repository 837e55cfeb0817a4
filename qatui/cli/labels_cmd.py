"""People's labels from the shell: `qatui annotate` opens the Label screen, `qatui labels` exports, imports, agrees."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from qatui.cli.common import make_console, open_store, print_json
from qatui.errors import QatuiError

if TYPE_CHECKING:
    from qatui.config import Config


def cmd_annotate(args: argparse.Namespace, config: Config) -> int:
    """`qatui annotate DATASET_OR_SESSION --annotator NAME`: the Label screen, over Home; checked before the TUI opens."""
    from qatui.data.labels import check_annotator
    from qatui.report.annotation import resolve_source
    from qatui.tui.app import QatuiApp
    from qatui.tui.screens.label_prompt import LabelRequest

    store = open_store(args, config)
    check_annotator(args.annotator)
    resolve_source(args.source, store, args.fmt)  # a bad dataset or session is refused here, in one line
    QatuiApp(config, store, annotate=LabelRequest(args.source, args.annotator, args.fmt, args.limit,
                                                  blind=not args.no_blind)).run()
    return 0


def cmd_labels(args: argparse.Namespace, config: Config) -> int:
    """`qatui labels export|import|agreement`."""
    from qatui.store.labels import LabelStore

    store = open_store(args, config)
    labels = LabelStore(store.root)
    stderr = make_console(stderr=True)
    if args.action == "export":
        from qatui.report.label_files import export_rows, write_rows
        from qatui.store.output_file import check_output

        out = check_output(args.output, "labels.jsonl")
        rows = export_rows(labels, list(dict.fromkeys(args.annotators)))
        write_rows(rows, out)
        stderr.print(f"wrote {len(rows)} labels to {args.output}", markup=False)
        return 0
    if args.action == "import":
        from qatui.data.loaders import load_dataset
        from qatui.report.label_files import import_labels

        dataset = load_dataset(args.dataset, args.fmt) if args.dataset else None
        counts = import_labels(labels, Path(args.file), dataset, args.scale)
        stderr.print(f"imported {counts['rows']} labels ({counts['new']} new, {counts['replaced']} replaced) "
                     f"into {counts['files']} label files under {labels.root}", markup=False)  # a folder's name: text
        return 0
    if args.action == "agreement":
        from qatui.report.annotation import resolve_source
        from qatui.report.label_agreement import agreement_data, print_agreement

        data = agreement_data(resolve_source(args.source, store, args.fmt), store, store.root, epsilon=args.epsilon)
        print_json(data) if args.json else print_agreement(make_console(), data)
        return 0
    raise QatuiError("usage: qatui labels export|import|agreement (see `qatui labels --help`)")
