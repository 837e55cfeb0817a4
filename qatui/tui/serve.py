"""The workbench in a web browser: textual-serve runs `qatui` once per browser tab and relays its screen.

textual-serve (an aiohttp server) answers `/` with a page holding a terminal emulator, and for
each page's websocket starts the command given here as a child process under Textual's web
driver, so every tab gets its own workbench on the same sessions folder and config.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path


def app_command(config_path: Path | None, sessions_dir: Path) -> str:
    """The shell command each browser tab runs: this interpreter's qatui on the same config and sessions."""
    argv = [sys.executable, "-m", "qatui", "--sessions-dir", str(sessions_dir)]
    if config_path is not None:
        argv += ["--config", str(config_path)]
    return shlex.join(argv)


def serve(command: str, host: str, port: int, public_url: str) -> None:
    """Serve the workbench until SIGINT or SIGTERM (both end it cleanly, open tabs included); blocks."""
    from typing import Any

    from textual_serve.server import Server

    class WorkbenchServer(Server):
        """textual-serve's server, which also ends the open tabs' workbenches on shutdown.

        Unchanged, aiohttp would wait for every open websocket (up to a minute) and leave their
        `qatui` processes running meanwhile; `_process_messages` is the one hook (textual-serve
        1.1.3, pinned) that sees each tab's websocket beside its process.
        """

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.tabs: set[tuple[Any, Any]] = set()

        async def _process_messages(self, websocket: Any, app_service: Any) -> None:
            self.tabs.add((websocket, app_service))
            try:
                await super()._process_messages(websocket, app_service)
            finally:
                self.tabs.discard((websocket, app_service))

        async def on_shutdown(self, app: Any) -> None:
            for websocket, app_service in list(self.tabs):
                await app_service.stop()  # asks the workbench to quit and waits for its process
                await websocket.close()

    WorkbenchServer(command, host=host, port=port, title="qatui", public_url=public_url).serve()
