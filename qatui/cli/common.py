"""What every command shares: the models a run uses, the consoles, the sessions store."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from qatui.config import Config
    from qatui.judges.resources import Resources
    from qatui.store.session import SessionStore


def run_resources(args: argparse.Namespace, config: Config) -> Resources:
    """The models a run uses: the config's defaults, overridden by --backbone, --nli, --embedder, --no-cache."""
    from qatui.judges.resources import Resources

    return Resources(config, backbone_name=args.backbone, nli_spec=args.nli, embedder_spec=args.embedder,
                     use_cache=False if args.no_cache else None)


def print_json(value: object, **options: object) -> None:
    """What `--json` prints, one object on one stdout line: strict JSON, a non-finite figure as null with its reason."""
    from qatui.report.strict_json import strict_dumps

    print(strict_dumps(value, **options))


def make_console(stderr: bool = False) -> Console:
    """A Rich console on stdout (results) or stderr (progress and errors), without syntax highlighting, that
    shows every control character in data as its escape (`qatui.cli.shown`)."""
    from rich.console import Console

    from qatui.cli.shown import PlainText

    console = Console(stderr=stderr, highlight=False)
    console.push_render_hook(PlainText())
    return console


def open_store(args: argparse.Namespace, config: Config) -> SessionStore:
    """The sessions dir: --sessions-dir (before or after the command), else $QATUI_SESSIONS_DIR, the config, ./sessions."""
    from qatui.store.session import SessionStore

    return SessionStore(config.sessions_dir(args.sessions_dir))


def with_jury(config: Config, judges: list[str], spec: str | None) -> Config:
    """The config with `--jury SPEC` as the jury's options (a `[juries.NAME]` name, or members); refused without --judge jury."""
    if spec is None:
        return config
    from qatui.cli.parser import UsageError

    if "jury" not in judges:
        raise UsageError("--jury names the members of --judge jury: add --judge jury")
    return config.model_copy(update={"judges": {**config.judges, "jury": config.jury_options(spec)}})
