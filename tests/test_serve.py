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
from test_cli import DEMO, run_cli, run_json

from qatui.cli.serve_cmd import loopback_only, public_url

REPO = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _descendants(pid: int) -> set[int]:
    """The processes under `pid` (Linux /proc): the workbench each open tab runs."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


async def _visit_then_stop(proc: subprocess.Popen, port: int,
                           deadline: float) -> tuple[str, str, set[int], bool, float]:
    """Fetch the page, watch the workbench paint over the websocket, then SIGTERM the server with the tab open.

    Returns the page, the screen, the tab's processes, whether the server closed the websocket itself, and when
    the signal went.
    """
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
                except TimeoutError:
                    continue
                if message.type == aiohttp.WSMsgType.BINARY:
                    screen += message.data.decode("utf-8", "replace")
                elif message.type == aiohttp.WSMsgType.TEXT:
                    screen += message.data
                else:
                    break
            tab = _descendants(proc.pid)
            proc.send_signal(signal.SIGTERM)  # the tab is still open
            signalled = time.monotonic()
            closed = False
            while time.monotonic() < deadline:
                message = await ws.receive(timeout=30)
                if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSING):
                    closed = True
                    break
        return page, screen, tab, closed, signalled


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
        page, screen, tab, closed, signalled = asyncio.run(_visit_then_stop(proc, port, time.monotonic() + 60))
        output = proc.communicate(timeout=20)[0]
        stopped_in = time.monotonic() - signalled
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    # textual-serve's page for qatui: its terminal script, the app's title, the websocket on loopback
    assert "js/textual.js" in page and "<div>qatui</div>" in page
    assert f'data-session-websocket-url="ws://127.0.0.1:{port}/ws"' in page
    # the workbench itself ran behind the websocket: Home lists the saved session
    assert "served-session" in screen and "length" in screen
    # SIGTERM with a tab open: the server closes it, its workbench ends, and the server exits 0 at once
    assert tab and closed and not any(Path(f"/proc/{pid}").exists() for pid in tab)
    assert proc.returncode == 0 and stopped_in < 10, output
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
