"""An API key in the environment reaches the backbone and nothing else: no session, cache, export, log or message.

A real run against a loopback backbone (which sees the key in its Authorization header, so we
know it was used), then every command that writes or prints: show, item detail, exports in
every format, compare, table, a failing run's error. Every file under the sessions and cache
folders and every output is searched for the key.
"""

from __future__ import annotations

import json
from pathlib import Path

from fakes import is_preflight

from qatui.cli import main
from qatui.store.session import SessionStore

KEY = "sk-test-7f3a9c1e5b2d4a6f8e0c"


def _pairs(path: Path) -> Path:
    with path.open("w") as f:
        for i in range(4):
            f.write(json.dumps({"id": f"q{i}", "question": f"Sum {i}?", "references": [f"{2 * i}"],
                                "candidates": {"a": f"{2 * i}", "b": f"{2 * i + 1}"},
                                "gold": {"kind": "pairwise", "a": "a", "b": "b", "labels": ["A"]}}) + "\n")
    return path


def test_the_key_is_used_and_never_written_or_shown(llm_server, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("MY_PROVIDER_KEY", KEY)
    llm_server.script(lambda body: json.dumps({"rationale": "A is right.", "choice": "A"}))
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{llm_server.base_url}"\n'
                      f'api_key_env = "MY_PROVIDER_KEY"\n[cache]\ndir = "{tmp_path / "cache"}"\n')
    base = ["--config", str(config), "--sessions-dir", str(tmp_path / "s")]
    data = _pairs(tmp_path / "pairs.jsonl")
    outputs: list[str] = []

    def cli(*args: str) -> int:
        code = main([*base, *args])
        out, err = capsys.readouterr()
        outputs.extend([out, err])
        return code

    assert cli("run", str(data), "--judge", "pairwise", "--backbone", "fake", "--json") == 0
    session = json.loads(outputs[-2])["session"]
    assert any(KEY in value for value in llm_server.headers[-1].values())  # the backbone did get the key
    assert cli("run", str(data), "--judge", "pairwise", "--judge", "bleu", "--backbone", "fake", "--json") == 0
    other = json.loads(outputs[-2])["session"]
    for args in (["sessions", "show", session], ["sessions", "show", session, "--item", "q1", "--json"],
                 ["sessions", "list", "--json"], ["sessions", "compare", session, other, "--json"],
                 ["table", str(data), "--judge", "pairwise", "--backbone", "fake", "--json"],
                 ["run", str(data), "--judge", "pairwise", "--backbone", "fake", "--plan", "--json"],
                 ["models", "--check"]):
        cli(*args)
    for fmt in ("jsonl", "csv", "md"):
        assert cli("sessions", "export", session, "--format", fmt, "-o", str(tmp_path / f"export.{fmt}")) == 0
    llm_server.script(faults=["401"] * 20)  # a rejected key: the refusal must not quote it either
    assert cli("run", str(data), "--judge", "pairwise", "--backbone", "fake", "--no-cache") == 2
    # a provider error that quotes the key (a 400, permanent): the item fails with the message, key masked
    llm_server.script(lambda body: "{}", faults=lambda index, body: "ok" if is_preflight(body) else "400-echo")
    assert cli("run", str(data), "--judge", "pairwise", "--backbone", "fake", "--no-cache", "--json") == 1
    failed = SessionStore(tmp_path / "s").open(json.loads(outputs[-2])["session"]).results().values()
    reasons = [doc["failure"]["reason"] for doc in failed]
    assert reasons and all("request rejected (400)" in r and "key ***" in r for r in reasons)
    written = [p for p in tmp_path.rglob("*") if p.is_file() and (
        p.suffix in (".json", ".jsonl", ".csv", ".md", ".toml") or p.name.startswith("calls.sqlite3"))]
    assert any(p.parent == tmp_path / "cache" for p in written)  # the cache (its database and log) was searched
    leaks = [str(p) for p in written if KEY in p.read_text(encoding="utf-8", errors="replace")]
    leaks += [f"output {i}" for i, text in enumerate(outputs) if KEY in text]
    assert leaks == []
