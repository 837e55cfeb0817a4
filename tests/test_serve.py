"""`qatui serve`: the real command in a subprocess on 127.0.0.1, fetched over HTTP and its websocket, then stopped."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest

from test_cli import DEMO, run_cli, run_json

from qatui.cli.serve_cmd import loopback_only, public_url

REPO = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _page_and_screen(port: int, deadline: float) -> tuple[str, str]:
    """The index page, then what the workbench paints over the websocket until the saved session shows."""
    async with aiohttp.ClientSession() as http:
        while True:
            try:
                async with http.get(f"http://127.0.0.1:{port}/") as response:
                    assert response.status == 200
                    page = await response.text()
                    break
            except aiohttp.ClientConnectionError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.2)
        screen = ""
        async with http.ws_connect(f"http://127.0.0.1:{port}/ws?width=100&height=30") as ws:
            while "served-session" not in screen and time.monotonic() < deadline:
                try:
                    message = await ws.receive(timeout=2)
                except asyncio.TimeoutError:
                    continue
                if message.type == aiohttp.WSMsgType.BINARY:
                    screen += message.data.decode("utf-8", "replace")
                elif message.type == aiohttp.WSMsgType.TEXT:
                    screen += message.data
                else:
                    break
        return page, screen


def test_serve_answers_on_loopback_runs_the_workbench_and_stops_cleanly(tmp_path, capsys) -> None:
    sessions = tmp_path / "sessions"
    run_json(capsys, "run", str(DEMO), "--judge", "length", "--session", "served-session",
             "--sessions-dir", str(sessions))
    port = _free_port()
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    proc = subprocess.Popen([sys.executable, "-m", "qatui", "serve", "--port", str(port), "--sessions-dir",
                             str(sessions)], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        page, screen = asyncio.run(_page_and_screen(port, time.monotonic() + 60))
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            output = proc.communicate(timeout=20)[0]
        except subprocess.TimeoutExpired:
            proc.kill()
            output = proc.communicate()[0]
            pytest.fail(f"serve did not stop on SIGTERM: {output}")
    # textual-serve's page for qatui: its terminal script, the app's title, the websocket on loopback
    assert "js/textual.js" in page and "<div>qatui</div>" in page
    assert f'data-session-websocket-url="ws://127.0.0.1:{port}/ws"' in page
    # the workbench itself ran behind the websocket: Home lists the saved session
    assert "served-session" in screen and "length" in screen
    assert proc.returncode == 0, output
    assert f"http://127.0.0.1:{port}" in output and "warning" not in output  # loopback: no warning


def test_serve_refuses_a_bad_port_or_host_in_one_line_before_starting(capsys) -> None:
    for port in ("0", "70000", "http"):
        code, _, err = run_cli(capsys, "serve", "--port", port)
        assert code == 2 and "--port" in err and err.count("\n") == 1, err
    code, _, err = run_cli(capsys, "serve", "--host", "no-such-host.invalid", "--port", str(_free_port()))
    assert code == 2 and "--host 'no-such-host.invalid': not an address of this machine" in err
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        code, _, err = run_cli(capsys, "serve", "--port", str(taken))
    assert code == 2 and f"cannot listen on 127.0.0.1:{taken}" in err and err.count("\n") == 1


def test_only_loopback_addresses_go_without_a_warning() -> None:
    assert loopback_only(["127.0.0.1"]) and loopback_only(["::1", "127.0.0.2"])
    assert not loopback_only(["0.0.0.0"]) and not loopback_only(["127.0.0.1", "192.168.1.20"])
    assert public_url("127.0.0.1", 8000, None) == "http://127.0.0.1:8000"
    assert public_url("::1", 8000, None) == "http://[::1]:8000"
    assert public_url("0.0.0.0", 8000, "https://qa.example.org/") == "https://qa.example.org"
