"""Model facts kept beside the call cache (`qatui.llm.facts`): computed once, read back, recomputed when stale or damaged.

Real files throughout: the facts live in the cache folder's `calls.sqlite3`, read by a fresh
`Facts` (as a new process would) and written by two processes at once. Real LiteLLM answers
for the routed facts of a client (schema support, reasoning shape, logprobs, window, provider).
"""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from qatui.config import BackboneConfig, CacheConfig, Config
from qatui.llm import facts as facts_module
from qatui.llm.cache import DB_NAME, CallCache
from qatui.llm.facts import Facts, facts_at, is_bool
from qatui.llm.preflight import BackboneUnusable, preflight_backbone


def _counted(value):
    calls = []

    def compute():
        calls.append(1)
        return value

    return compute, calls


def test_a_fact_is_computed_once_then_read_back_by_a_new_store_and_not_computed_again(tmp_path: Path) -> None:
    compute, calls = _counted(True)
    assert Facts(tmp_path).get("schema", {"model": "openai/x", "api_base": None}, compute, is_bool) is True
    again, more = _counted(False)  # were it computed again, it would answer False
    assert Facts(tmp_path).get("schema", {"model": "openai/x", "api_base": None}, again, is_bool) is True
    assert (len(calls), len(more)) == (1, 0)
    other, counted = _counted(False)  # another api_base is another fact
    assert Facts(tmp_path).get("schema", {"model": "openai/x", "api_base": "http://h"}, other, is_bool) is False
    assert len(counted) == 1
    rows = sqlite3.connect(tmp_path / DB_NAME).execute("SELECT fact, value FROM facts").fetchall()
    assert sorted(json.loads(v) for _, v in rows) == [False, True]
    assert all(json.loads(f)["litellm"] == facts_module.litellm_version() for f, _ in rows)


def test_another_litellm_version_recomputes_every_fact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    facts_module.litellm_version.cache_clear()
    monkeypatch.setattr(facts_module.importlib.metadata, "version", lambda name: "1.0.0")
    compute, calls = _counted(True)
    assert Facts(tmp_path).get("provider", {"model": "openai/x"}, compute, is_bool) is True
    facts_module.litellm_version.cache_clear()
    monkeypatch.setattr(facts_module.importlib.metadata, "version", lambda name: "2.0.0")
    upgraded, recounted = _counted(False)
    assert Facts(tmp_path).get("provider", {"model": "openai/x"}, upgraded, is_bool) is False
    assert (len(calls), len(recounted)) == (1, 1)
    facts_module.litellm_version.cache_clear()


@pytest.mark.parametrize("damage", ["not json {", json.dumps("yes"), json.dumps(None), json.dumps({"a": 1})])
def test_a_damaged_row_is_recomputed_and_replaced_not_a_crash(tmp_path: Path, damage: str) -> None:
    compute, _ = _counted(True)
    Facts(tmp_path).get("schema", {"model": "openai/x"}, compute, is_bool)
    with sqlite3.connect(tmp_path / DB_NAME) as db:
        db.execute("UPDATE facts SET value = ?", (damage,))
    again, calls = _counted(True)
    assert Facts(tmp_path).get("schema", {"model": "openai/x"}, again, is_bool) is True
    assert len(calls) == 1
    assert sqlite3.connect(tmp_path / DB_NAME).execute("SELECT value FROM facts").fetchall() == [("true",)]


def test_a_file_that_is_no_database_is_set_aside_and_the_fact_recomputed(tmp_path: Path) -> None:
    (tmp_path / DB_NAME).write_bytes(b"this is not a SQLite file at all " * 100)
    compute, calls = _counted(7)
    assert Facts(tmp_path).get("window", {"model": "openai/x"}, compute, lambda v: isinstance(v, int)) == 7
    assert len(calls) == 1
    assert list(tmp_path.glob(f"{DB_NAME}.damaged-*"))
    assert CallCache(tmp_path).get("0" * 64) is None  # the call cache opens the new file too


def test_a_value_that_is_not_plain_json_is_refused_where_it_is_made(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="not plain JSON"):
        Facts(tmp_path).get("shape", {"model": "openai/x"}, lambda: ("a", "b"), lambda v: True)


def _write_many(folder: str, worker: int, n: int) -> None:
    store = Facts(folder)
    for i in range(n):
        store.get("window", {"model": f"openai/m{i}", "worker": worker % 2}, lambda i=i: 1000 + i,
                  lambda v: isinstance(v, int))


def test_two_processes_writing_facts_at_once_leave_a_sound_file_with_every_fact(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_write_many, args=(str(tmp_path), w, 150)) for w in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    assert [w.exitcode for w in workers] == [0, 0]
    db = sqlite3.connect(tmp_path / DB_NAME)
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert db.execute("SELECT count(*) FROM facts").fetchone() == (300,)
    never, calls = _counted(-1)
    assert Facts(tmp_path).get("window", {"model": "openai/m149", "worker": 1}, never, lambda v: isinstance(v, int)) \
        == 1149 and not calls


def test_a_client_keeps_litellm_s_answers_as_facts_and_a_new_process_reads_them(tmp_path: Path) -> None:
    """The routed facts hold LiteLLM's real answers; a fresh store (a new process) answers from the file."""
    from qatui.llm.client import make_client

    config = Config(backbones={"gpt": BackboneConfig(model="openai/gpt-4o-mini"),
                               "o3": BackboneConfig(model="openai/o3-mini")}, cache=CacheConfig(dir=str(tmp_path)))
    gpt, o3 = make_client("gpt", config), make_client("o3", config)
    assert gpt.supports_schema() is True and gpt.supports_logprobs() is True
    assert o3.shape().reasoning is True and "temperature" in o3.shape().left_out
    assert gpt.fit([{"role": "user", "content": "hi"}], 100) == ([{"role": "user", "content": "hi"}], None)
    rows = dict(sqlite3.connect(tmp_path / DB_NAME).execute(
        "SELECT json_extract(fact, '$.fact') || ' ' || json_extract(fact, '$.model'), value FROM facts").fetchall())
    assert json.loads(rows["schema openai/gpt-4o-mini"]) is True
    assert json.loads(rows["logprobs openai/gpt-4o-mini"]) is True
    assert json.loads(rows["window openai/gpt-4o-mini"]) == 128000
    assert json.loads(rows["shape openai/o3-mini"])["reasoning"] is True

    fresh = Facts(tmp_path)  # a new process: nothing memoised, every fact read from the file
    refused, calls = _counted(False)
    assert fresh.get("schema", {"model": "openai/gpt-4o-mini", "api_base": None}, refused, is_bool) is True
    assert not calls


def test_the_preflight_s_provider_check_is_a_fact(tmp_path: Path) -> None:
    """An unknown provider is refused in one line, from LiteLLM's answer kept as a fact (false), before any request."""
    from qatui.llm.client import make_client

    config = Config(backbones={"odd": BackboneConfig(model="nosuchprovider/x", api_key_env="QATUI_TEST_KEY")},
                    cache=CacheConfig(dir=str(tmp_path)))
    with pytest.raises(BackboneUnusable, match="knows no provider"):
        preflight_backbone(make_client("odd", config))
    rows = sqlite3.connect(tmp_path / DB_NAME).execute(
        "SELECT value FROM facts WHERE json_extract(fact, '$.fact') = 'provider'").fetchall()
    assert rows == [("false",)]
    assert facts_at(tmp_path) is facts_at(str(tmp_path))  # one store (one memo) per folder in a process
