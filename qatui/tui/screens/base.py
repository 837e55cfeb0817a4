"""What every full screen of the app shares: a typed handle on the app, and workers that fail out loud."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from textual.app import App
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from qatui.errors import QatuiError

if TYPE_CHECKING:
    from qatui.tui.workbench import Workbench


def report_failure(app: App, worker: Worker) -> None:
    """A toast saying which background task failed and why (a QatuiError's message is meant for users)."""
    error = worker.error
    message = str(error) if isinstance(error, QatuiError) else f"{type(error).__name__}: {error}"
    app.notify(message, title=f"Failed: {worker.description}", severity="error", timeout=10)


class QatuiScreen(Screen):
    """A screen whose workers' errors become notifications (worker messages do not bubble to the app)."""

    @property
    def qatui(self) -> Workbench:
        """The app, as screens may use it (`Workbench`)."""
        return cast("Workbench", self.app)

    def leave(self, then: Callable[[], object]) -> None:
        """Call `then`, which closes this screen: at once here; a screen holding what closing would lose asks first
        (the Judge Lab's edits not saved). Every way out calls it (esc, the palette's Home and Compare, ctrl+q)."""
        then()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            report_failure(self.app, event.worker)
