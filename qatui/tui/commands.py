"""The app's own commands in the palette (Ctrl+P): runs, sessions, themes, help."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from qatui.tui.format import literal_markup

if TYPE_CHECKING:
    from qatui.tui.workbench import Workbench

Command = tuple[str, Callable[[], object], str]
"""(title, callback, help)."""


class QatuiCommands(Provider):
    """New run, the demo, every saved session, every theme, going home and the key list."""

    async def startup(self) -> None:
        self._sessions = await asyncio.to_thread(self.qatui.store.list)

    @property
    def qatui(self) -> Workbench:
        """The app, as the palette may use it."""
        return cast("Workbench", self.app)

    def commands(self) -> list[Command]:
        """Everything the palette offers here, in the order it lists them."""
        app = self.qatui
        found: list[Command] = [
            ("New run…", app.open_new_run, "Pick a dataset, judges and a backbone, then watch them work"),
            ("Demo: MinosEval on the bundled demo set", app.start_demo, "A live run with the embedded models"),
            ("Spot check…", app.open_spot_check, "Type or load one item with a few responses and run one judge on it"),
            ("Judge lab…", app.open_lab,
             "Edit a judge file's prompt and rubric, run it on labelled items, keep it if people agree more"),
            ("Label a dataset…", app.ask_labels,
             "Rank, pick A / B / tie or rate responses yourself: a gold layer the judges are measured against"),
            ("Compare marked sessions", app.compare_marked,
             "Metrics, agreement and disagreements of the sessions marked on Home (space marks)"),
            ("Home", app.go_home, "Back to the list of sessions"),
            ("Keys of this screen", app.action_help, "Every key binding, with what it does"),
        ]
        if (export := getattr(self.screen, "action_export_report", None)) is not None:
            found.insert(0, ("Export report", export, "Write what this screen shows as one self-contained HTML file"))
        for meta in self._sessions:
            label = meta["name"] if meta.get("name") and meta["name"] != meta["id"] else meta["id"]
            what = f"{meta.get('dataset', {}).get('name', '?')} · {', '.join(meta.get('judges', {}))}"
            found.append((literal_markup(f"Open session {label}"), partial(app.open_session, meta["id"]),
                          literal_markup(what)))
        for name in app.own_themes:  # a user's theme file names its theme
            found.append((literal_markup(f"Theme: {name}"), partial(setattr, app, "theme", name), "Switch and remember the theme"))
        return found

    async def discover(self) -> Hits:
        for title, callback, help_text in self.commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, callback, help_text in self.commands():
            if (score := matcher.match(title)) > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)
