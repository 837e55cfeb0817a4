"""Models named by a Hugging Face hub id: the local cache first, the hub only when it answers.

qatui runs offline by default; a hub id works when its snapshot is already cached, and is
downloaded only when the user has a network and the offline variables are unset. Shared by
the NLI and embedding loaders.
"""

from __future__ import annotations

import os
import re
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from urllib.parse import urlparse

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?$")
_TRUE = {"1", "true", "yes", "on"}
_TRANSFORMERS_LOCK = threading.Lock()
_TRANSFORMERS_NAMES = ("AutoConfig", "AutoModel", "AutoModelForSequenceClassification", "AutoTokenizer")


def import_transformers() -> ModuleType:
    """transformers with the classes the loaders use resolved, under one process-wide lock.

    Its lazy module is not thread-safe: an NLI model and an embedder loading at once in two
    worker threads made one of them fail with "cannot import name 'AutoConfig'". Loaders
    call this before their own `from transformers import ...`.
    """
    with _TRANSFORMERS_LOCK:
        import transformers
        from transformers.utils import logging  # noqa: F401 - resolved here, under the lock

        for name in _TRANSFORMERS_NAMES:
            getattr(transformers, name)
        return transformers


@contextmanager
def quiet_loading() -> Iterator[None]:
    """transformers' load reports and progress bars off (they would tear the TUI / CLI output), then as they were.

    Call `import_transformers` first.
    """
    from transformers.utils import logging as hf_logging

    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


class HubMiss(Exception):
    """The model is not cached and could not be fetched; `unreachable` says whether the hub was down."""

    def __init__(self, reason: str, unreachable: bool) -> None:
        super().__init__(reason)
        self.unreachable = unreachable


def is_hub_id(spec: str) -> bool:
    """"name" or "org/name", as the hub spells repository ids; anything else is a path."""
    return bool(HUB_ID.match(spec)) and not spec.startswith((".", "~"))


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the hub (or `HF_ENDPOINT`) accepts a TCP connection now; False when told to stay offline."""
    if any(os.environ.get(v, "").strip().lower() in _TRUE for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")):
        return False
    url = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    host = url.hostname or "huggingface.co"
    port = url.port or (80 if url.scheme == "http" else 443)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def findable(spec: str) -> bool:
    """Whether hub id `spec` could load now: its snapshot is in the local cache, or the hub answers (`snapshot`'s
    two ways), checked before a session exists so that a name no machine has fails there, not on every item."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError:  # pragma: no cover - transformers always brings huggingface_hub
        return False
    try:
        snapshot_download(spec, local_files_only=True)
        return True
    except Exception:  # noqa: BLE001 - not in the cache, whatever the reason: the hub might have it
        return hub_reachable()


def snapshot(spec: str, patterns: list[str]) -> Path:
    """The snapshot folder of hub id `spec`: cached, else downloaded (only `patterns`) if the hub answers."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError:  # pragma: no cover - transformers always brings huggingface_hub
        raise HubMiss("huggingface_hub is not installed", unreachable=True) from None
    try:
        return Path(snapshot_download(spec, local_files_only=True))
    except Exception:  # noqa: BLE001 - not in the cache, whatever the reason: try the hub
        pass
    if not hub_reachable():
        raise HubMiss("not in the local cache and the hub cannot be reached", unreachable=True)
    try:
        return Path(snapshot_download(spec, allow_patterns=patterns))
    except Exception as e:  # noqa: BLE001 - unknown repo, gated repo, network drop
        raise HubMiss(f"{type(e).__name__}: {e}", unreachable=False) from None
