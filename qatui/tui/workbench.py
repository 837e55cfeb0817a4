"""What screens, widgets and the palette may ask of the app, as a protocol.

They reach the running app through Textual's `self.app`, typed as `Workbench`, so no screen
imports `qatui.tui.app` (which imports every screen): the dependency points one way only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from qatui.config import Config
    from qatui.judges.resources import Resources
    from qatui.store.session import SessionStore
    from qatui.tui.background import EngineLoop
    from qatui.tui.roots import Roots


class Workbench(Protocol):
    """The qatui app as its screens see it: its config and store, and the moves between screens."""

    config: Config
    store: SessionStore
    engine_loop: EngineLoop
    own_themes: list[str]
    roots: Roots
    just_ran: str | None
    """The session of the run shown last (Home highlights it once it is back)."""
    theme: str

    def go_home(self) -> None:
        """Back to Home, closing the screens above it."""

    def open_new_run(self) -> None:
        """The New run screen."""

    def start_demo(self) -> None:
        """A live MinosEval run of the bundled demo set."""

    def open_spot_check(self) -> None:
        """The Spot check form."""

    def open_session(self, session_id: str, item: str | None = None) -> None:
        """A saved session's screen (at `item`, its transcript shown, when given)."""

    def open_lab(self, judge: str = "", data: str = "") -> None:
        """The Judge Lab over a judge file (or a built-in to copy) and a labelled dataset."""

    def compare_sessions(self, session_ids: list[str]) -> None:
        """The Compare screen for these sessions."""

    def compare_marked(self) -> None:
        """Compare the sessions marked on Home."""

    def resume_session(self, session_id: str) -> None:
        """Finish a saved session: skip what is done, retry what failed."""

    def ask_labels(self, source: str = "") -> None:
        """Ask for a dataset or session and an annotator, then open the Label screen."""

    def _resources(self, backbone: str | None = None, nli: str | None = None,
                   embedder: str | None = None) -> Resources:
        """The models runs started here use (the app's factory in tests, else the config's)."""

    def action_help(self) -> None:
        """The keys of the current screen."""
