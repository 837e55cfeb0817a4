"""`qatui serve`: the workbench in a browser, after checking the address in one line before starting."""

from __future__ import annotations

import argparse
import ipaddress
import socket
from pathlib import Path
from typing import TYPE_CHECKING

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
    """The URL browsers are sent to for the websocket: --public-url, else http://HOST:PORT (this machine's name
    for a wildcard host)."""
    if given:
        return given.rstrip("/")
    shown = socket.getfqdn() if host in WILDCARDS else host
    return f"http://[{shown}]:{port}" if ":" in shown else f"http://{shown}:{port}"


def cmd_serve(args: argparse.Namespace, config: Config) -> int:
    """Check the host and port, warn when others can reach it, then serve until Ctrl-C."""
    from qatui.tui.serve import app_command, serve

    addresses = check_address(args.host, args.port)
    stderr = make_console(stderr=True)
    if not loopback_only(addresses):
        stderr.print(f"[bold yellow]warning:[/] listening on {args.host}:{args.port}, beyond this machine: there is "
                     "no authentication, so anyone who can reach it can use the workbench and read every session")
    sessions_dir = open_store(args, config).root.resolve()  # the app processes start elsewhere: named whole
    config_path = Path(args.config).resolve() if args.config else None
    url = public_url(args.host, args.port, args.public_url)
    stderr.print(f"qatui in a browser: {url}  (sessions in {sessions_dir}; Ctrl-C stops it)")
    serve(app_command(config_path, sessions_dir), args.host, args.port, url)
    return 0
