"""`qatui serve`: the real command in a subprocess on 127.0.0.1, fetched over HTTP and its websocket, then stopped.

The gate in front of it (Host, Origin, token, the cap on tabs) is tested in test_serve_gate.py."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import threading
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


class Served:
    """A real `qatui serve` process on 127.0.0.1 and the lines it printed (read as they come)."""

    def __init__(self, home: Path, sessions: Path, *options: str) -> None:
        self.port = _free_port()
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HOME": str(home),
               "XDG_CONFIG_HOME": str(home / "config"), "XDG_CACHE_HOME": str(home / "cache")}
        self.proc = subprocess.Popen([sys.executable, "-m", "qatui", "serve", "--port", str(self.port),
                                      "--sessions-dir", str(sessions), *options], cwd=REPO, env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self.reader = threading.Thread(target=lambda: self.lines.extend(self.proc.stdout), daemon=True)
        self.reader.start()
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 60
        while not (found := re.search(r"\?token=([\w-]+)", "".join(self.lines))):
            assert self.proc.poll() is None and time.monotonic() < deadline, "".join(self.lines)
            time.sleep(0.05)
        self.token = found.group(1)
        self.url = f"{self.base}/?token={self.token}"

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.reader.join(timeout=10)


def browser() -> aiohttp.ClientSession:
    """A client that keeps cookies for 127.0.0.1 as a browser does (aiohttp's default jar refuses IP hosts)."""
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def open_page(http: aiohttp.ClientSession, url: str, deadline: float) -> tuple[int, str]:
    """GET `url` once the server answers; its status and text."""
    while True:
        try:
            async with http.get(url) as response:
                return response.status, await response.text()
        except aiohttp.ClientConnectionError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


async def watch(ws: aiohttp.ClientWebSocketResponse, wanted: str, deadline: float) -> str:
    """What the workbench paints over `ws` until `wanted` shows (or the socket closes, or time runs out)."""
    screen = ""
    while wanted not in screen and time.monotonic() < deadline:
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
    return screen


async def _visit_then_stop(served: Served, deadline: float) -> tuple[str, str, set[int], bool, float]:
    """Fetch the page, watch the workbench paint over the websocket, then SIGTERM the server with the tab open.

    Returns the page, the screen, the tab's processes, whether the server closed the websocket itself, and when
    the signal went.
    """
    async with browser() as http:
        status, page = await open_page(http, served.url, deadline)
        assert status == 200, page
        async with http.ws_connect(f"ws://127.0.0.1:{served.port}/ws?width=100&height=30",
                                   origin=served.base) as ws:
            screen = await watch(ws, "served-session", deadline)
            tab = _descendants(served.proc.pid)
            served.proc.send_signal(signal.SIGTERM)  # the tab is still open
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
    served = Served(tmp_path / "home", sessions)
    port = served.port
    try:
        page, screen, tab, closed, signalled = asyncio.run(_visit_then_stop(served, time.monotonic() + 60))
        served.proc.wait(timeout=20)
        stopped_in = time.monotonic() - signalled
    finally:
        served.stop()
    output = served.output
    # textual-serve's page for qatui: its terminal script, the app's title, the websocket on loopback
    assert "js/textual.js" in page and "<div>qatui</div>" in page
    assert f'data-session-websocket-url="ws://127.0.0.1:{port}/ws"' in page
    # the workbench itself ran behind the websocket: Home lists the saved session
    assert "served-session" in screen and "length" in screen
    # SIGTERM with a tab open: the server closes it, its workbench ends, and the server exits 0 at once
    assert tab and closed and not any(Path(f"/proc/{pid}").exists() for pid in tab)
    assert served.proc.returncode == 0 and stopped_in < 10, output
    assert f"http://127.0.0.1:{port}/?token=" in output and "warning" not in output  # loopback: no warning
    # the token is shown once, on the start line, and written nowhere (no log line, no file)
    assert output.count(served.token) == 1
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and served.token.encode() in p.read_bytes()]


def test_serve_refuses_a_bad_port_or_host_in_one_line_before_starting(capsys) -> None:
    for port in ("0", "70000", "http"):
        code, _, err = run_cli(capsys, "serve", "--port", port)
        assert code == 2 and "--port" in err and err.count("\n") == 1, err
    for option, value in (("--max-sessions", "0"), ("--max-sessions", "33"), ("--root", "/no/such/folder"),
                          ("--root", str(DEMO)), ("--public-url", "ftp://host"), ("--public-url", "http://:80"),
                          ("--public-url", "http://host:99999"), ("--public-url", "http://[x/"),
                          ("--public-url", "https://a[b]c/")):
        code, _, err = run_cli(capsys, "serve", option, value, "--port", str(_free_port()))
        assert code == 2 and option in err and err.count("\n") == 1, err
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
