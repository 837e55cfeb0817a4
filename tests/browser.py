"""A real headless Chromium (Debian's `chromium` package) for tests: screenshots, the parsed DOM, and the page's requests.

Every run gets a fresh profile and has its host resolver pointed at nothing, so even a
request that slipped out could not reach anyone. The report's Content-Security-Policy would
block a request before the network log sees it, so the page is opened from a copy without
that policy: whatever the page asks for is logged. The log also holds the browser's own
background requests (initiator "not an origin"); a request a page makes carries the page's
origin ("null" for file://), which is how the two are told apart (tests/test_report.py shows
the check catching an image and a stylesheet).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

CSP = re.compile(r'<meta http-equiv="Content-Security-Policy"[^>]*>')
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run", "--disable-sync",
    "--disable-background-networking", "--disable-component-update", "--disable-default-apps",
    "--host-resolver-rules=MAP * ~NOTFOUND", "--virtual-time-budget=5000",
]
BACKGROUND = "not an origin"
"""The initiator the browser gives its own requests (update checks, time sync), never a page's."""


def chromium() -> str:
    """The Chromium binary; the test is skipped with the reason when it is not installed."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("chromium is not on PATH: the headless-browser checks need it (Debian: apt-get install chromium)")
    return found


def _run(args: list[str], timeout: float = 90.0) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        return subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True,
                              text=True, timeout=timeout, check=False)


def _probe(page: Path, workdir: Path) -> Path:
    """A copy of `page` without its Content-Security-Policy, so any request it makes is really attempted."""
    probe = workdir / f"probe-{page.stem}.html"
    probe.write_text(CSP.sub("", page.read_text(encoding="utf-8"), count=1), encoding="utf-8")
    return probe


def page_requests(net_log: Path) -> list[str]:
    """Every URL the page (not the browser itself) asked for, from a Chromium network log."""
    log = json.loads(net_log.read_text(encoding="utf-8"))
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    found = set()
    for event in log["events"]:
        params = event.get("params") or {}
        if event["type"] == start and "url" in params and params.get("initiator") != BACKGROUND:
            found.add(params["url"])  # the event's begin carries the URL; its end only the result
    return sorted(found)


def screenshot(page: Path, workdir: Path, width: int = 1200, height: int = 1600) -> tuple[Path, list[str]]:
    """Open `page` from file://, screenshot its top `width` x `height`; (the PNG, the URLs the page requested)."""
    probe, png, net_log = _probe(page, workdir), workdir / f"{page.stem}.png", workdir / f"{page.stem}.netlog.json"
    result = _run([f"--screenshot={png}", f"--window-size={width},{height}", f"--log-net-log={net_log}",
                   probe.resolve().as_uri()])
    assert png.is_file(), result.stderr[-2000:]
    return png, page_requests(net_log)


def dump_dom(page: Path, workdir: Path) -> str:
    """The DOM as Chromium parsed `page`, serialised: what the markup became, not what the file says."""
    result = _run(["--dump-dom", _probe(page, workdir).resolve().as_uri()])
    assert result.returncode == 0 and "<body" in result.stdout, result.stderr[-2000:]
    return result.stdout
