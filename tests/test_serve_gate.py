"""`qatui serve` refuses what a page from another site could send, and runs a bounded number of workbenches.

A real `qatui serve` on 127.0.0.1 and real HTTP and websocket clients (aiohttp's, with the
headers a browser sends: Host, Origin, the token's cookie). Every refusal is checked on the page
and on the websocket, since the websocket is what drives a workbench.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator

import aiohttp
import pytest
from test_cli import DEMO
from test_serve import Served, _descendants, browser, open_page, watch

from qatui.cli import main
from qatui.tui.serve import Gate

SESSION = "gate-session"


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[Served]:
    """One server for the refusals, its sessions folder holding one session Home lists."""
    root = tmp_path_factory.mktemp("gate")
    sessions = root / "sessions"
    assert main(["run", str(DEMO), "--judge", "length", "--session", SESSION, "--sessions-dir", str(sessions),
                 "--json"]) == 0
    (root / "secret.csv").write_text("SECRET-FIRST-LINE,b\n1,2\n")  # outside the served folder (the repository)
    server = Served(root / "home", sessions)
    server.secret = root / "secret.csv"

    async def answering() -> None:
        async with aiohttp.ClientSession() as http:
            await open_page(http, f"{server.base}/static/js/textual.js", time.monotonic() + 60)

    asyncio.run(answering())
    yield server
    server.stop()


async def _status(served: Served, path: str, **headers: str) -> tuple[int, str]:
    """The status and text a plain GET of `path` gets (no cookie unless given as a header)."""
    async with aiohttp.ClientSession() as http, http.get(served.base + path, headers=headers,
                                                         allow_redirects=False) as response:
        return response.status, await response.text()


async def _handshake(served: Served, query: str = "", **headers: str) -> int:
    """The status of a websocket handshake (101 when accepted, then closed at once)."""
    async with aiohttp.ClientSession() as http:
        try:
            async with http.ws_connect(f"ws://127.0.0.1:{served.port}/ws?width=80&height=24{query}",
                                       headers=headers):
                return 101
        except aiohttp.WSServerHandshakeError as e:
            return e.status


def _cookie(served: Served, token: str | None = None) -> str:
    return f"qatui-token-{served.port}={served.token if token is None else token}"


def test_a_foreign_host_is_refused_on_the_page_and_the_websocket(served) -> None:
    """DNS rebinding: a site's own name resolved to 127.0.0.1 sends its name as Host."""
    async def check() -> None:
        for host in ("evil.example", f"evil.example:{served.port}", f"127.0.0.1:{served.port + 1}"):
            status, text = await _status(served, f"/?token={served.token}", Host=host)
            assert status == 403 and "is not an address of this server" in text, (host, status, text)
            status, _ = await _status(served, "/", Host=host, Cookie=_cookie(served))
            assert status == 403
            assert await _handshake(served, f"&token={served.token}", Host=host) == 403
            assert await _handshake(served, Host=host, Cookie=_cookie(served)) == 403
    asyncio.run(check())


def test_a_foreign_origin_is_refused_on_the_page_and_the_websocket(served) -> None:
    """Another site's script (or a sandboxed one, Origin: null) may not open the workbench, token or not."""
    async def check() -> None:
        for origin in ("http://evil.example", f"http://evil.example:{served.port}", "null",
                       f"https://127.0.0.1:{served.port}"):
            status, text = await _status(served, "/", Origin=origin, Cookie=_cookie(served))
            assert status == 403 and "may not use this workbench" in text, (origin, status, text)
            assert await _handshake(served, Origin=origin, Cookie=_cookie(served)) == 403
            assert await _handshake(served, f"&token={served.token}", Origin=origin) == 403
    asyncio.run(check())


def test_no_token_or_a_wrong_one_is_refused_on_the_page_and_the_websocket(served) -> None:
    wrong = served.token[:-1] + ("A" if served.token[-1] != "A" else "B")

    async def check() -> None:
        for path, headers in (("/", {}), (f"/?token={wrong}", {}), ("/?token=", {}), ("/", {"Cookie": _cookie(served, wrong)}),
                              ("/download/x", {})):
            status, text = await _status(served, path, **headers)
            assert status == 403 and "no valid token" in text, (path, headers, status, text)
        assert await _handshake(served) == 403
        assert await _handshake(served, f"&token={wrong}") == 403
        assert await _handshake(served, Cookie=_cookie(served, wrong)) == 403
        assert await _handshake(served, Origin=served.base) == 403  # its own Origin is not enough
    asyncio.run(check())


def test_the_right_token_host_and_origin_get_the_workbench(served) -> None:
    async def visit() -> tuple[int, str, str, str, str]:
        async with aiohttp.ClientSession() as http, http.get(served.url + "&fontsize=18",
                                                             allow_redirects=False) as response:
            moved_to = response.headers.get("Location", "")
            cookie = response.headers.get("Set-Cookie", "")
        async with browser() as http:
            local = f"localhost:{served.port}"  # loopback's other name is this server too
            status, page = await open_page(http, f"http://{local}/?token={served.token}", time.monotonic() + 30)
            async with http.ws_connect(f"ws://{local}/ws?width=250&height=30",
                                       origin=f"http://localhost:{served.port}") as ws:
                screen = await watch(ws, SESSION, time.monotonic() + 90)
                await ws.send_json(["stdin", "n"])  # New run, its path field focused
                await watch(ws, "empty: the demo set", time.monotonic() + 60)
                await ws.send_json(["stdin", str(served.secret)])
                new_run = await watch(ws, "outside the folders", time.monotonic() + 60)
        return status, page, screen, moved_to + " | " + cookie, new_run

    status, page, screen, redirect, new_run = asyncio.run(visit())
    # the token leaves the address bar at once: a redirect keeps the other parameters, a cookie keeps the token
    assert redirect.startswith("./?fontsize=18 | ") and "HttpOnly" in redirect and "SameSite=Lax" in redirect
    assert status == 200 and "js/textual.js" in page and served.token not in page
    assert SESSION in screen  # Home listed the session: the workbench answered
    # and it is confined to the folder it was served from: a file outside is refused, its first line unshown
    assert "outside the folders" in new_run and "SECRET" not in new_run


def test_tabs_past_the_cap_are_refused_in_words_while_the_open_ones_keep_working(tmp_path) -> None:
    served = Served(tmp_path / "home", tmp_path / "sessions", "--max-sessions", "2")
    ready = "No sessions yet"  # Home, painted by a workbench

    async def visit() -> None:
        deadline = time.monotonic() + 120
        async with browser() as http, contextlib.AsyncExitStack() as tabs:
            status, _ = await open_page(http, served.url, deadline)
            assert status == 200
            ws_url = f"ws://127.0.0.1:{served.port}/ws?width=90&height=25"
            first = await tabs.enter_async_context(http.ws_connect(ws_url, origin=served.base))  # the cookie
            second = await tabs.enter_async_context(http.ws_connect(ws_url + f"&token={served.token}"))  # none
            for ws in (first, second):
                assert ready in await watch(ws, ready, deadline)
            workbenches = _descendants(served.proc.pid)

            status, text = await open_page(http, served.base + "/", deadline)  # a third tab: its page
            assert status == 503 and "2 workbenches are open already" in text and "--max-sessions" in text, text
            third = await tabs.enter_async_context(http.ws_connect(ws_url, origin=served.base))  # its page was older
            assert "refused: 2 workbenches are open already" in await watch(third, "reload this page", time.monotonic() + 30)
            closing = await third.receive(timeout=30)
            assert closing.type == aiohttp.WSMsgType.CLOSE and third.close_code == aiohttp.WSCloseCode.TRY_AGAIN_LATER
            assert _descendants(served.proc.pid) == workbenches  # the refused tab started no workbench

            for ws in (first, second):  # still served: a resize is answered with a repaint
                await ws.send_json(["resize", {"width": 100, "height": 30}])
                assert ready in await watch(ws, ready, deadline)
            await first.close()
            while (await open_page(http, served.base + "/", deadline))[0] == 503 and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            fourth = await tabs.enter_async_context(http.ws_connect(ws_url, origin=served.base))  # room again
            assert ready in await watch(fourth, ready, deadline)

    try:
        asyncio.run(asyncio.wait_for(visit(), 180))
    finally:
        served.stop()


def test_a_public_url_names_the_server_too_with_its_default_port_left_out() -> None:
    """Behind a reverse proxy the browser names the public URL; the proxy may pass on either name."""
    gate = Gate.of("https://qa.example.org/qatui", "127.0.0.1", 8000, "t")
    for host, origin in (("qa.example.org", "https://qa.example.org"), ("QA.example.org:443", None),
                         ("127.0.0.1:8000", "http://127.0.0.1:8000"), ("[::1]:8000", "http://[::1]:8000"),
                         ("localhost:8000", "http://localhost:8000")):
        assert gate.foreign(host, origin) is None, (host, origin)
    for host, origin in (("qa.example.org:8000", None), ("qa.example.org", "http://qa.example.org"),
                         ("evil.example", None), (None, None), ("qa.example.org", "https://qa.example.org.evil")):
        assert gate.foreign(host, origin) is not None, (host, origin)
    assert not gate.holds_token(None) and not gate.holds_token("u") and gate.holds_token("t")
    assert gate.secure and Gate.of("http://10.0.0.5:8000", None, 8000, "t").foreign("10.0.0.5:8000", None) is None
