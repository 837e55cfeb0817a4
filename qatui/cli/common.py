"""What every command shares: the models a run uses, the consoles, the sessions store."""

from __future__ import annotations

import argparse
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from qatui.config import Config
    from qatui.data.model import Dataset
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


def make_console(stderr: bool = False, file: IO[str] | None = None, width: int | None = None) -> Console:
    """A Rich console on stdout (results) or stderr (progress and errors), without syntax highlighting, that
    shows every control character in data as its escape, laid out at the width it is shown at (`qatui.cli.shown`:
    every string made plain before layout, every segment after), and no `:name:` as an emoji. `file` and `width`:
    a file written as the terminal would be shown it (`table -o FILE`)."""
    from qatui.cli.shown import PlainConsole, PlainText

    console = PlainConsole(stderr=stderr, file=file, width=width, highlight=False,
                           emoji=False)  # `:fire:` in a name or a text is shown as typed
    console.push_render_hook(PlainText())
    return console


def warn_hidden(dataset: Dataset) -> None:
    """Say on stderr, before any work, which texts of `dataset` hide text in tag characters or variation selectors
    (`data.hidden`): the judges read it, the person reading their verdicts does not see it. For every command that
    judges a dataset."""
    from rich.text import Text

    from qatui.data.hidden import hidden_texts, hidden_warning
    from qatui.text import plain

    if warning := hidden_warning(hidden_texts(dataset.items)):
        make_console(stderr=True).print(Text.assemble(("warning:", "yellow"), " ", plain(warning)))


def open_store(args: argparse.Namespace, config: Config) -> SessionStore:
    """The sessions folder: --sessions-dir (before or after the command), else $QATUI_SESSIONS_DIR, the config,
    an existing ./sessions holding qatui's files, the user's data folder (`Config.sessions_folder`).

    When an existing ./sessions is used in place of the data folder, one line on stderr says so, naming both
    folders and how to move the sessions; once per command, however many times the command opens the store.
    """
    from qatui.store.session import SessionStore

    folder = config.sessions_folder(args.sessions_dir)
    if folder.note and not getattr(args, "sessions_noted", False):
        from qatui.text import escaped

        make_console(stderr=True).print(f"[yellow]note:[/] {escaped(folder.note)}", soft_wrap=True)
        args.sessions_noted = True
    if folder.path.is_symlink() and not folder.path.exists():  # a loop or a link to nowhere: never "no sessions"
        from qatui.errors import SessionError
        from qatui.safe_read import why_missing

        raise SessionError(f"sessions folder {folder.path}: {why_missing(folder.path)}")
    return SessionStore(folder.path)


def with_jury(config: Config, judges: list[str], spec: str | None) -> Config:
    """The config with `--jury SPEC` as the jury's options (a `[juries.NAME]` name, or members); refused without --judge jury."""
    if spec is None:
        return config
    from qatui.cli.parser import UsageError

    if "jury" not in judges:
        raise UsageError("--jury names the members of --judge jury: add --judge jury")
    return config.model_copy(update={"judges": {**config.judges, "jury": config.jury_options(spec)}})


def reasoning_asked(args: argparse.Namespace) -> dict[str, object]:
    """The backbone options --reasoning-effort and --thinking-budget ask for ({} when neither is given)."""
    asked = {"reasoning_effort": getattr(args, "reasoning_effort", None),
             "thinking_budget": getattr(args, "thinking_budget", None)}
    return {key: value for key, value in asked.items() if value is not None}


def with_reasoning(config: Config, asked: dict[str, object], names: list[str | None]) -> Config:
    """The config with `asked` (`reasoning_asked`, or a session's `reasoning`) set on every backbone a run may call:
    each `[backbones.NAME]` table, and each LiteLLM model string among `names` (a --backbone, a jury member's
    @backbone), given a table of its own so it is asked the same way."""
    if not asked:
        return config
    from qatui.config import BackboneConfig

    backbones = dict(config.backbones)
    for name in [*names, config.models.default_backbone]:
        if name and name not in backbones and "/" in name:
            backbones[name] = BackboneConfig(model=name)
    from pydantic import ValidationError

    from qatui.errors import ConfigError

    try:
        backbones = {name: BackboneConfig.model_validate({**settings.model_dump(exclude_unset=True), **asked})
                     for name, settings in backbones.items()}
    except ValidationError as e:  # a session's stored options, edited by hand
        raise ConfigError(f"reasoning options {asked}: {e.errors()[0]['msg']}") from None
    return config.model_copy(update={"backbones": backbones})


def jury_backbones(config: Config) -> list[str]:
    """The @backbone of every jury member the config names (the jury's options, and each [juries.NAME] table)."""
    specs: list[str] = []
    for members in [config.judges.get("jury", {}).get("members"), *(j.members for j in config.juries.values())]:
        specs += members.split(",") if isinstance(members, str) else list(members or [])
    return [spec.partition("@")[2].strip() for spec in specs if "@" in spec]
