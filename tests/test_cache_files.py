"""The cache's SQLite files deleted mid-run: noticed at the next use (by inode) and made again, so what is
computed after the deletion is cached, and a rerun pays only for what was deleted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from llm_server import FakeLLMServer
from tui_support import write_sums

from qatui.llm.cache import CallCache
from qatui.store.model_outputs import ModelOutputs

N_ITEMS = 40
CONCURRENCY = 4


def _delete(path: Path) -> None:
    """The database and its write-ahead log, as `rm calls.sqlite3*` does."""
    for part in ("", "-wal", "-shm"):
        path.with_name(path.name + part).unlink(missing_ok=True)


def test_a_deleted_call_cache_is_made_again_in_the_same_process(tmp_path: Path) -> None:
    cache = CallCache(tmp_path)
    cache.put("k1", {"model": "m"}, {"text": "one"})
    _delete(cache.db_path)
    cache.put("k2", {"model": "m"}, {"text": "two"})
    assert cache.db_path.exists()
    # the new file says whose answers it holds (before any read, which would note them): a rerun on it may put
    # its backbone's live check off (`llm.preflight`)
    assert CallCache(tmp_path).holds_answers_of("m", None)
    assert CallCache(tmp_path).get("k2") == {"text": "two"}  # a new process reads what was written after


def test_a_replaced_model_outputs_file_is_opened_again(tmp_path: Path) -> None:
    store = ModelOutputs(tmp_path)
    store.put_many("id", [("a", b"1")])
    _delete(store.db_path)
    store.put_many("id", [("b", b"2")])
    assert ModelOutputs(tmp_path).get_many("id", ["a", "b"]) == [None, b"2"]


def test_deleting_the_cache_mid_run_costs_a_rerun_only_the_deleted_calls(tmp_path: Path) -> None:
    data = write_sums(tmp_path / "d.jsonl", N_ITEMS, gold=True)
    cache_dir = tmp_path / "cache"
    env = {**os.environ, "FAKE_KEY": "sk-test", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    answer = json.dumps({"rationale": "scripted", "choice": "A"})
    with FakeLLMServer(lambda body: answer, latency_s=0.05, max_lifetime_s=200.0) as server:
        config = tmp_path / "c.toml"
        config.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{server.base_url}"\n'
                          f'api_key_env = "FAKE_KEY"\nmax_concurrency = {CONCURRENCY}\n'
                          f'[cache]\ndir = "{cache_dir}"\n[general]\nconcurrency = {CONCURRENCY}\n')
        command = [sys.executable, "-m", "qatui", "--config", str(config), "--sessions-dir", str(tmp_path / "s"),
                   "run", str(data), "--judge", "pairwise", "--backbone", "fake", "--json"]
        first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        deadline = time.monotonic() + 120
        while server.n_requests < 12 and first.poll() is None:
            assert time.monotonic() < deadline, "the run never started calling"
            time.sleep(0.01)
        _delete(cache_dir / "calls.sqlite3")
        before = server.n_requests  # everything asked later is answered into the cache made again
        out, _ = first.communicate(timeout=180)
        total = server.n_requests
        assert first.returncode == 0 and json.loads(out)["judges"]["pairwise"]["coverage"]["scored"] == N_ITEMS
        assert total - before > N_ITEMS  # most of the run came after the deletion
        assert (cache_dir / "calls.sqlite3").exists()
        second = subprocess.run(command, capture_output=True, text=True, env=env, timeout=180)
        asked_again = server.n_requests - total
    assert second.returncode == 0
    # only the calls answered before the deletion (and those in flight then) are paid for again
    assert asked_again <= before + 2 * CONCURRENCY, (asked_again, before, total)
