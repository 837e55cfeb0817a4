"""The judges qatui knows, by name, imported only when asked for."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from qatui.errors import JudgeError, first_problem
from qatui.judges.names import JUDGES
from qatui.text import did_you_mean

if TYPE_CHECKING:
    from qatui.config import Config
    from qatui.judges.base import Judge
    from qatui.judges.files.spec import JudgeFile
    from qatui.judges.resources import Resources

__all__ = ["JUDGES", "available_judges", "check_judge_tables", "judge_class", "make_judge", "stored_options"]


PREMISE_BEFORE_THE_SWAP: dict[str, str] = {"nli-ra": "reference", "nli-ar": "response"}
"""The NLI premise `nli-ra` and `nli-ar` took before they were named as MinosEval writes its rows:
a session saved then stored no `premise` option and ran this one."""


def stored_options(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """A saved session's options for judge `name`, completed so the judge runs as it ran then.

    `nli-ra` and `nli-ar` once had each other's premise and stored none; a stored option set
    without `premise` gets the old one back (a jury's members too), so resuming such a session
    never mixes two directions under one name. Other judges' options come back unchanged.
    """
    if name == "jury" and isinstance(members := options.get("member_options"), dict):
        return {**options, "member_options": {m: stored_options(m, o) for m, o in members.items()}}
    if name in PREMISE_BEFORE_THE_SWAP and "premise" not in options:
        return {**options, "premise": PREMISE_BEFORE_THE_SWAP[name]}
    return options


def judge_class(name: str, config: Config | None = None) -> type[Judge]:
    """The class registered under `name`, or the class of a judge file (`qatui.judges.files.find`); an unknown name
    lists the known ones."""
    if name in JUDGES:
        module, _, attr = JUDGES[name].partition(":")
        return getattr(import_module(module), attr)
    from qatui.judges.files.find import judge_file_for
    from qatui.judges.files.judge import file_judge_class

    if (file := judge_file_for(name, config)) is not None:
        return file_judge_class(file)
    known = available_judges(config)
    raise JudgeError(f"unknown judge {name!r}{did_you_mean(name, known)}; known judges: {', '.join(sorted(known))}")


def available_judges(config: Config | None = None) -> dict[str, str]:
    """Every judge that can be chosen: the built-ins ("built-in"), then the judge files found (name -> path)."""
    from qatui.judges.files.find import found_files

    found = dict.fromkeys(JUDGES, "built-in")
    for name, path in found_files(config).items():
        found.setdefault(name, str(path))
    return found


def make_judge(name: str, options: dict[str, Any] | None = None, resources: Resources | None = None, *,
               file: JudgeFile | None = None, config: Config | None = None, strict: bool = False) -> Judge:
    """A judge with its options validated; a bad option is a JudgeError naming it. `strict`: the options as a
    config file types them, each of its field's type (`true` or "2" for a number refused); else text is read (the
    TUI's form gives every value as typed).

    `name` is a built-in's name, a judge file's path (`.toml`) or the name of a judge file found in the
    config (`config`, else the resources' config) or the user folder; `file` (a session's stored judge file)
    builds that file's judge whatever the name.
    A `[judges.NAME]` table's `file` key is where its file is, not an option.
    """
    from pydantic import ValidationError

    options = {k: v for k, v in (options or {}).items() if k != "file"}
    if file is not None:
        from qatui.judges.files.judge import file_judge_class

        cls: type[Judge] = file_judge_class(file)
    else:
        cls = judge_class(name, config if config is not None or resources is None else resources.config)
    try:  # strict: as a config file wrote it (`tie_digits = true` is no number); the TUI's form gives text
        opts = cls.Options.model_validate(options, strict=strict)
    except ValidationError as e:
        where, _, message = first_problem(e)
        raise JudgeError(f"judge {cls.name!r}: option {where or 'options'}: {message}") from None
    return cls(opts, resources)


def check_judge_tables(config: Config) -> Config:
    """Each `[judges.NAME]` must name a known judge and hold only its options, each `[juries.NAME]` make a jury.

    Lives here, not in `config`, so the bottom layer never imports the judges.
    """
    from qatui.errors import ConfigError
    from qatui.judges.resources import Resources

    source = config.source or "the config"
    if "jury" in config.judges:
        raise ConfigError(f"{source}: [judges.jury]: a jury is a [juries.NAME] table (members, aggregation, quorum), "
                          "chosen with --judge jury --jury NAME")
    tables = [(f"judges.{name}", name, options) for name, options in config.judges.items()]
    tables += [(f"juries.{name}", "jury", config.jury_options(name)) for name in config.juries]
    from qatui.judges.files import JudgeFileError

    for where, name, options in tables:
        if name in JUDGES and "file" in options:
            raise ConfigError(f"{source}: [{where}]: file: {name!r} is a built-in judge; a judge file needs a name of "
                              "its own")
        try:
            make_judge(name, options, Resources(config), strict=True)
        except JudgeFileError:
            raise  # already `FILE:LINE: KEY: message`, naming the judge file
        except JudgeError as e:
            raise ConfigError(f"{source}: [{where}]: {e}") from None
    return config
