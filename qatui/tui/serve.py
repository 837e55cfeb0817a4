"""The workbench in a web browser: textual-serve runs `qatui` once per browser tab and relays its screen.

textual-serve (an aiohttp server) answers `/` with a page holding a terminal emulator, and for
each page's websocket starts the command given here as a child process under Textual's web
driver, so every tab gets its own workbench on the same sessions folder and config.

Any page a browser shows can send requests to a server on this machine, so textual-serve is
wrapped: a `Gate` answers only requests that name the served address (Host: no DNS rebinding),
come from its own page when they say where from (Origin: no other site's script), and carry
the token printed at start (as a query parameter once, then a cookie); and at most
`max_tabs` workbenches run at once.
"""

from __future__ import annotations

import hmac
import shlex
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode, urlsplit

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
"""Names a browser on this machine may use for a server listening on loopback."""
DEFAULT_PORTS = {"http": 80, "https": 443}


def app_command(config_path: Path | None, sessions_dir: Path, roots: Iterable[Path] = ()) -> str:
    """The shell command each browser tab runs: this interpreter's qatui on the same config and sessions, its
    file fields kept inside `roots`."""
    argv = [sys.executable, "-m", "qatui", "--sessions-dir", str(sessions_dir)]
    if config_path is not None:
        argv += ["--config", str(config_path)]
    for root in roots:
        argv += ["--root", str(root)]
    return shlex.join(argv)


def _netlocs(scheme: str, host: str, port: int) -> set[str]:
    """How a browser writes `host:port` in a Host header (the port left out when it is the scheme's default)."""
    name = (f"[{host}]" if ":" in host else host).lower()
    return {f"{name}:{port}"} | ({name} if DEFAULT_PORTS.get(scheme) == port else set())


@dataclass(frozen=True)
class Gate:
    """Who may use the served workbench: requests naming its address, from its own page, holding its token."""

    token: str
    hosts: frozenset[str]
    """Host header values (lower case) that name this server."""
    origins: frozenset[str]
    """Origin header values of this server's own page."""
    cookie: str
    """The cookie that keeps the token after the first visit."""
    secure: bool
    """Whether the page is served over https (the cookie is then sent over https only)."""

    @classmethod
    def of(cls, public_url: str, listening: str | None, port: int, token: str) -> Gate:
        """The gate for a server listening on `listening:port` (None: every interface) and reached at `public_url`.

        The public URL's address is accepted, the listening one (a reverse proxy may pass it on), and
        the names a browser on this machine uses for loopback.
        """
        public = urlsplit(public_url)
        scheme, name = public.scheme, public.hostname or ""
        addresses = {(scheme, name, public.port or DEFAULT_PORTS[scheme])}
        addresses |= {("http", n, port) for n in LOOPBACK_NAMES}
        if listening:
            addresses.add(("http", listening, port))
        hosts = {netloc for s, h, p in addresses for netloc in _netlocs(s, h, p)}
        origins = {f"{s}://{netloc}" for s, h, p in addresses for netloc in _netlocs(s, h, p)}
        return cls(token, frozenset(hosts), frozenset(origins), f"qatui-token-{port}", scheme == "https")

    def holds_token(self, given: str | None) -> bool:
        """Whether `given` is the token (compared in constant time)."""
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def foreign(self, host: str | None, origin: str | None) -> str | None:
        """Why a request naming `host` and coming from `origin` is refused whatever it holds; None if it is not."""
        if (host or "").lower() not in self.hosts:
            return f"the Host {host!r} is not an address of this server (open the URL qatui serve printed)"
        if origin is not None and origin.lower() not in self.origins:
            return f"a page from {origin!r} may not use this workbench"
        return None


def serve(command: str, host: str, port: int, public_url: str, *, gate: Gate, max_tabs: int) -> None:
    """Serve the workbench until SIGINT or SIGTERM (both end it cleanly, open tabs included); blocks."""
    import logging
    from typing import Any

    from aiohttp import WSCloseCode, web
    from rich.logging import RichHandler
    from textual_serve.server import Server

    def refuse(status: int, reason: str) -> web.Response:
        return web.Response(status=status, text=f"qatui: refused: {reason}\n")

    @web.middleware
    async def guard(request: web.Request, handler: Any) -> web.StreamResponse:
        """Host and Origin for every request; the token for all but textual-serve's own scripts and styles."""
        if (reason := gate.foreign(request.headers.get("Host"), request.headers.get("Origin"))) is not None:
            return refuse(403, reason)
        if request.path.startswith("/static/"):
            return await handler(request)
        if gate.holds_token(request.query.get("token")):
            if request.path == "/":  # the first visit: the token moves to a cookie, out of the address bar
                rest = {k: v for k, v in request.query.items() if k != "token"}
                response = web.Response(status=303, headers={"Location": "./" + (f"?{urlencode(rest)}" if rest else "")})
                response.set_cookie(gate.cookie, gate.token, path="/", httponly=True, samesite="Lax", secure=gate.secure)
                return response
        elif not gate.holds_token(request.cookies.get(gate.cookie)):
            return refuse(403, "no valid token: open the URL with ?token= that qatui serve printed at start "
                               "(the browser must keep its cookies for this address)")
        return await handler(request)

    class WorkbenchServer(Server):
        """textual-serve's server behind the gate, running at most `max_tabs` workbenches, ending them on shutdown.

        Unchanged, aiohttp would wait for every open websocket (up to a minute) and leave their
        `qatui` processes running meanwhile; `_process_messages` is the one hook (textual-serve
        1.1.3, pinned) that sees each tab's websocket beside its process.
        """

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.tabs: set[tuple[Any, Any]] = set()
            self.open_tabs = 0
            """Websockets being served a workbench (counted before its process starts)."""

        def initialize_logging(self) -> None:
            """textual-serve's log, without the access log (its request lines may hold the token) or
            tracebacks' local variables (a request among them)."""
            logging.basicConfig(level="INFO", format="%(message)s",
                                handlers=[RichHandler(show_path=False, show_time=False, console=self.console)])
            logging.getLogger("aiohttp.access").setLevel(logging.WARNING)

        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            app.middlewares.append(guard)
            return app

        def full(self) -> str | None:
            """Why no further workbench may start now; None while there is room."""
            if self.open_tabs < max_tabs:
                return None
            return (f"{max_tabs} workbenches are open already, the most this server runs at once "
                    f"(qatui serve --max-sessions); close a tab, then reload this page")

        async def handle_index(self, request: web.Request) -> web.StreamResponse:  # type: ignore[override]
            if (reason := self.full()) is not None:
                return refuse(503, reason)
            return await super().handle_index(request)

        async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
            if (reason := self.full()) is not None:  # the page loaded while there was room: say so in its terminal
                websocket = web.WebSocketResponse()
                await websocket.prepare(request)
                await websocket.send_bytes(f"\r\nqatui: refused: {reason}.\r\n".encode())
                await websocket.close(code=WSCloseCode.TRY_AGAIN_LATER, message=b"too many workbenches open")
                return websocket
            self.open_tabs += 1  # no await since the check: two sockets cannot both take the last place
            try:
                return await super().handle_websocket(request)
            finally:
                self.open_tabs -= 1

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
