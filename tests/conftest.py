"""Shared fixtures: where the real datasets live (../shared/data beside the repo)."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    """The shared data folder; the test is skipped with a reason when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"../shared/data is not on this machine: {SHARED_DATA} does not exist")
    return SHARED_DATA
