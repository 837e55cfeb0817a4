"""A judge whose definition is a text someone edits: the judge file `judges align` rewrites.

`editable_judge` finds the text: a judge file (a `.toml` path, a `[judges.NAME] file` entry, the user
folder), or a built-in single-prompt judge exported as a file (`judges export`: run as a file it
sends the built-in's very requests). `Editable.build` turns a revised text into a judge through the
judge-file checks (`parse_judge_text`), and also refuses a text that renames the judge or changes
its kind, before it is ever run. A session of such a judge stores the text, so it resumes as it ran.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qatui.errors import JudgeError

if TYPE_CHECKING:
    from qatui.config import Config
    from qatui.judges.base import Judge
    from qatui.judges.resources import Resources


@dataclass(frozen=True)
class Editable:
    """A judge file's name, kind and text, where the text came from (`path`: None for an export), and its options."""

    name: str
    kind: str
    text: str
    source: str
    options: dict[str, Any]
    path: Path | None = None

    def build(self, text: str, resources: Resources, source: str | None = None) -> Judge:
        """The judge `text` defines, with these options; a JudgeError (naming `source`, line and key) when the
        text is not a valid judge file, or names another judge or kind."""
        from qatui.judges.files import parse_judge_text
        from qatui.judges.registry import make_judge

        where = source or self.source
        file = parse_judge_text(text, where)
        if file.name != self.name:
            raise JudgeError(f"{where}: name: the text defines judge {file.name!r}, not {self.name!r}")
        if file.kind != self.kind:
            raise JudgeError(f"{where}: kind: the text makes a {file.kind} judge, not a {self.kind} one")
        return make_judge(file.name, self.options, resources, file=file)


def editable_judge(name: str, config: Config) -> Editable:
    """The judge `name` as an editable judge file; refused for a built-in that no judge file expresses."""
    from qatui.judges.files.export import EXPORTABLE, export_text
    from qatui.judges.files.find import found_files, is_judge_path, judge_file_for
    from qatui.paths import user_path

    file = judge_file_for(name, config)
    if file is not None:
        path = user_path(name) if is_judge_path(name) else found_files(config).get(name)
        options = config.judge_options(file.name)
        return Editable(file.name, file.kind, file.text, file.source, options, path)
    if name not in EXPORTABLE:
        raise JudgeError(f"judge {name!r} cannot be aligned: give a judge file (.toml, `qatui judges new`) or a "
                         f"built-in single-prompt judge ({', '.join(EXPORTABLE)}), which starts from its export")
    from qatui.judges.files import parse_judge_text

    text = export_text(name)
    file = parse_judge_text(text, f"the export of {name}")
    return Editable(file.name, file.kind, text, f"the export of built-in {name}", {}, None)
