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
    """Serve the workbench until SIGINT or SIGTERM (both end it cleanly); blocks."""
    from textual_serve.server import Server

    Server(command, host=host, port=port, title="qatui", public_url=public_url).serve()
