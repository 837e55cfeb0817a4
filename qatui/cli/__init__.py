"""The `qatui` command: runs, datasets, judges and sessions from the shell; with no command, the TUI.

Every foreseeable error is a `QatuiError` and is printed as one line on stderr with exit
status 2; Ctrl-C during a run flushes the session and says how to resume it (exit 130).
`--json` output goes to stdout as exactly one JSON object; progress goes to stderr.
"""

from __future__ import annotations

import sys

from qatui.cli.commands import (
    cmd_checklist,
    cmd_datasets,
    cmd_judges,
    cmd_models,
    cmd_report,
    cmd_sessions,
)
from qatui.cli.common import make_console, print_json
from qatui.cli.labels_cmd import cmd_annotate, cmd_labels
from qatui.cli.parser import EXIT_INTERRUPTED, EXIT_REFUSED, build_parser
from qatui.cli.running import cmd_demo, cmd_lab, cmd_open, cmd_run, open_tui
from qatui.cli.serve_cmd import cmd_serve
from qatui.cli.table_cmd import cmd_table
from qatui.errors import QatuiError

COMMANDS = {
    "run": cmd_run, "demo": cmd_demo, "open": cmd_open, "checklist": cmd_checklist, "judges": cmd_judges, "models": cmd_models,
    "datasets": cmd_datasets, "sessions": cmd_sessions, "table": cmd_table, "serve": cmd_serve,
    "report": cmd_report, "annotate": cmd_annotate, "labels": cmd_labels, "lab": cmd_lab,
    None: open_tui,
}


def main(argv: list[str] | None = None) -> int:
    """The `qatui` command on `argv` (default: the process's own); returns the exit status. The console script and
    `python -m qatui` call it through `console`."""
    argv = sys.argv[1:] if argv is None else list(argv)
    as_json = "--json" in argv
    try:
        args = build_parser().parse_args(argv)
        as_json = bool(getattr(args, "json", False))
        from qatui.config import load_config
        from qatui.judges.registry import check_judge_tables

        config = check_judge_tables(load_config(args.config))
        return COMMANDS[args.command](args, config)
    except QatuiError as e:
        report_error(e, as_json)
        return EXIT_REFUSED
    except KeyboardInterrupt:
        make_console(stderr=True).print("[yellow]interrupted[/]")
        return EXIT_INTERRUPTED


def console() -> int:
    """The `qatui` console script and `python -m qatui`: `main` in a process of its own, its garbage collector tuned
    for one (`engine.heap.tune_process_collector`; never in a process that calls `main` among its own work, such as
    a test's, whose collector is its own)."""
    from qatui.engine.heap import tune_process_collector

    tune_process_collector()
    return main()


def report_error(error: QatuiError, as_json: bool) -> None:
    """One line on stderr, or with `--json` one `{"error": ...}` object on stdout (a script reads stdout)."""
    if as_json:
        print_json({"error": str(error), "kind": type(error).__name__})
        return
    from rich.text import Text

    from qatui.text import plain

    make_console(stderr=True).print(Text.assemble(("error:", "bold red"), " ", plain(error)), soft_wrap=True)
