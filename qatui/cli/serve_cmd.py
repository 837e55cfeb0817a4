"""`qatui serve`: the workbench in a browser, after checking the address in one line before starting.

Each start makes a new secret token; the one line that says where to open the workbench is the
only place it is shown (never a file, never a log), and the server refuses every request without it.
"""

from __future__ import annotations

import argparse
import ipaddress
import secrets
import socket
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from qatui.cli.common import make_console, open_store
from qatui.cli.parser import UsageError

if TYPE_CHECKING:
    from qatui.config import Config

WILDCARDS = ("0.0.0.0", "::", "")
"""Hosts that listen on every interface."""


def check_address(host: str, port: int) -> list[str]:
    """The addresses `host` resolves to, after making sure `host:port` can be listened on; UsageError if not."""
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as e:
        raise UsageError(f"--host {host!r}: not an address of this machine ({e})") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as e:
            raise UsageError(f"cannot listen on {host}:{port}: {e.strerror} (pick another --port or --host)") from None
    return [str(info[4][0]) for info in infos]


def loopback_only(addresses: list[str]) -> bool:
    """Whether every address is a loopback one (127.0.0.0/8, ::1): reachable from this machine alone."""
    return all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses)


def public_url(host: str, port: int, given: str | None) -> str:
    """The URL browsers open and the page's websocket goes to: --public-url, else http://HOST:PORT (this machine's
    name for a wildcard host); UsageError for a URL that is not http(s)://NAME[:PORT][/PATH]."""
    if given:
        try:
            parts = urlsplit(given)
            valid = parts.scheme in ("http", "https") and bool(parts.hostname) and (parts.port or 1) > 0
        except ValueError:  # a port that is no number or past 65535, a bracket not closed ('http://[x/')
            valid = False
        if not valid or parts.query or parts.fragment:
            raise UsageError(f"--public-url {given!r}: must be http:// or https:// then a host name, an optional "
                             ":PORT and path")
        return given.rstrip("/")
    shown = socket.getfqdn() if host in WILDCARDS else host
    return f"http://[{shown}]:{port}" if ":" in shown else f"http://{shown}:{port}"


def cmd_serve(args: argparse.Namespace, config: Config) -> int:
    """Check the address and options, warn when others can reach it, print the URL with a new token, serve
    until Ctrl-C."""
    from qatui.tui.serve import Gate, app_command, serve

    url = public_url(args.host, args.port, args.public_url)
    addresses = check_address(args.host, args.port)
    roots = getattr(args, "roots", None) or [Path.cwd().resolve()]
    stderr = make_console(stderr=True)
    if not loopback_only(addresses):
        stderr.print(f"[bold yellow]warning:[/] listening on {args.host}:{args.port}, beyond this machine: the token "
                     "is all that guards the workbench and every session, and plain http shows it to the network; "
                     "prefer an SSH tunnel or an https reverse proxy")
    sessions_dir = open_store(args, config).root.resolve()  # the app processes start elsewhere: named whole
    config_path = Path(args.config).resolve() if args.config else None
    token = secrets.token_urlsafe(32)
    stderr.print(f"qatui in a browser: {url}/?token={token}", markup=False, highlight=False, soft_wrap=True)
    stderr.print(f"  (sessions in {sessions_dir}; datasets from {', '.join(map(str, roots))}; "
                 f"at most {args.max_sessions} tabs; Ctrl-C stops it)", markup=False, highlight=False, soft_wrap=True)
    listening = None if args.host in WILDCARDS else args.host  # a wildcard is no name a browser can use
    serve(app_command(config_path, sessions_dir, roots), args.host, args.port, url,
          gate=Gate.of(url, listening, args.port, token), max_tabs=args.max_sessions)
    return 0
