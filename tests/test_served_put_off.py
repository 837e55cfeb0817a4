"""A served model's probe is put off when the model-output store already holds its outputs, as a backbone's live
check is when the call cache holds its answers (tests/test_preflight.py, tests/test_cached_rerun.py).

Real `qatui run` processes; the backbone on one loopback server (tests/llm_server.py), the served embedder
(`[embedders.tei]`, its `/v1/embeddings`) or NLI model (`[nli_servers.mnli]`, its `/info` and `/predict`) on
another, so that one can be stopped while the other answers. What must hold:

- a rerun whose inputs the store holds sends that server nothing: no probe, no `/info`, no label check;
- a rerun with one new item sends the probe (for NLI: `/info` and the probe pairs) and then that item's inputs;
- with the server down, a rerun the store answers completes; one that needs the server stops at its first miss:
  status "stopped" with the reason, exit 4, the new item pending (never failed), the others saved;
- a server that now reports another model than the one whose outputs are stored (another vector length;
  another `/info`) stops the run with that reason, its stored outputs never mixed with the new model's; a server
  whose labels now read the wrong way stops it before any of its scores is used;
- a served model the store holds nothing of (another URL: a typo) is still probed before any session exists.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import llm_server
import pytest
from llm_server import EMBED_DIM, FakeLLMServer

from qatui.embed.remote import PROBE_TEXT
from qatui.judges import resources as resources_module
from qatui.nli.served import PROBE_PAIRS
from qatui.store.session import SessionStore

pytestmark = pytest.mark.timeout(600)


def _item(i: int) -> dict:
    """Item `i`: its question, reference and candidates share no word with another item's."""
    return {"id": f"obs{i}", "question": f"Where was observatory{i} built?",
            "references": [f"Observatory{i} was built on hill{i} in 1890."],
            "candidates": {"echo": f"Observatory{i} was built on hill{i}.", "off": f"Bananas{i} taste sweet."}}


QUESTIONS = {text: [f"Which question does {word} answer?"] * 2
             for i in range(1, 4) for word, text in ((f"hill{i}", _item(i)["candidates"]["echo"]),
                                                     (f"bananas{i}", _item(i)["candidates"]["off"]))}
"""The backbone's written questions for each candidate (answer relevance embeds them beside the item's question)."""


def _questions(body: dict) -> str:
    text = body["messages"][-1]["content"]
    found = [QUESTIONS[c] for c in QUESTIONS if c in text]
    return json.dumps({"questions": found[0]}) if found else "ok"  # "ok": the backbone's own preflight


def _texts_of(i: int) -> set[str]:
    """Every text answer relevance embeds for item `i`."""
    item = _item(i)
    return {item["question"], *(q for c in item["candidates"].values() for q in QUESTIONS[c])}


@pytest.fixture(autouse=True)
def _no_served_models_kept() -> None:
    """Each test builds its own served models: none of an earlier test is reused in this process."""
    resources_module._SERVED.clear()
    yield
    resources_module._SERVED.clear()


def _config(tmp_path: Path, llm: FakeLLMServer, models: FakeLLMServer, *, embed_base: str | None = None,
            nli_url: str | None = None) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{llm.base_url}"\napi_key_env = "FAKE_KEY"\n'
                    f'[embedders.tei]\nmodel = "openai/fake-embedder"\napi_base = "{embed_base or models.base_url}"\n'
                    'api_key_env = "FAKE_KEY"\nmax_attempts = 1\n'
                    f'[nli_servers.mnli]\nurl = "{nli_url or models.root_url}"\nmax_attempts = 1\n'
                    f'[cache]\ndir = "{tmp_path / "cache"}"\n[models]\nembedder = "tei"\nnli = "mnli"\n')
    return path


def _run(config: Path, tmp_path: Path, items: int, judge: str) -> tuple[int, dict, str]:
    """`qatui run --json` on items 1..`items` in a new process: (exit status, its JSON, stderr)."""
    data = tmp_path / f"items{items}.jsonl"
    data.write_text("".join(json.dumps(_item(i)) + "\n" for i in range(1, items + 1)))
    done = subprocess.run([sys.executable, "-m", "qatui", "--config", str(config), "--sessions-dir",
                           str(tmp_path / "sessions"), "run", str(data), "--backbone", "fake", "--judge", judge, "--json"],
                          capture_output=True, text=True, timeout=180,
                          env={**os.environ, "FAKE_KEY": "sk-test", "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else {}, done.stderr


def _statuses(tmp_path: Path, session_id: str) -> dict[str, str]:
    """Item -> its stored status, read from disk as another process would."""
    results = SessionStore(tmp_path / "sessions").open(session_id).results()
    return {doc["item_id"]: doc["status"] for doc in results.values()}


def _scores(tmp_path: Path, session_id: str) -> dict[str, dict]:
    results = SessionStore(tmp_path / "sessions").open(session_id).results()
    return {doc["item_id"]: doc["verdict"]["scores"] for doc in results.values() if doc["verdict"]}


def _stopped(code: int, said: dict, err: str, judge: str, why: str) -> None:
    """The run stopped on the served model: exit 4, the reason, item 3 pending and none failed."""
    assert code == 4, (said, err[-2000:])
    assert said["status"] == "stopped" and why in said["stopped"], said.get("stopped")
    assert said["judges"][judge]["coverage"] == {"items": 3, "scored": 2, "not_applicable": 0, "failed": 0,
                                                 "pending": 1}
    assert "Traceback" not in err


def _sessions(tmp_path: Path) -> int:
    return len(SessionStore(tmp_path / "sessions").list())


def test_a_served_embedder_is_probed_only_at_the_first_text_the_store_cannot_answer(tmp_path, monkeypatch) -> None:
    judge = "ragas-answer-relevance"
    with FakeLLMServer(_questions, max_lifetime_s=300.0) as llm, FakeLLMServer(max_lifetime_s=300.0) as models:
        config = _config(tmp_path, llm, models)
        code, first, err = _run(config, tmp_path, 1, judge)
        assert code == 0, err
        sent = [t for body in models.embedding_requests for t in body["input"]]
        assert sent[0] == PROBE_TEXT and set(sent[1:]) == _texts_of(1)

        asked = len(models.embedding_requests)
        code, again, err = _run(config, tmp_path, 1, judge)
        assert code == 0, err
        assert len(models.embedding_requests) == asked  # the store answers every text: not even the probe
        assert _scores(tmp_path, again["session"]) == _scores(tmp_path, first["session"])

        code, two, err = _run(config, tmp_path, 2, judge)
        assert code == 0, err
        sent = [body["input"] for body in models.embedding_requests[asked:]]
        assert sent[0] == [PROBE_TEXT] and {t for texts in sent[1:] for t in texts} == _texts_of(2)
        assert _statuses(tmp_path, two["session"]) == {"obs1": "done", "obs2": "done"}

        # The server now answers vectors of another length: another model. The run stops at the probe.
        monkeypatch.setattr(llm_server, "EMBED_DIM", 8)
        asked = len(models.embedding_requests)
        code, other, err = _run(config, tmp_path, 3, judge)
        _stopped(code, other, err, judge, f"embedder 'tei' now answers vectors of 8 numbers, but its vectors in the "
                                          f"model-output store have {EMBED_DIM}: they came from another model")
        assert [body["input"] for body in models.embedding_requests[asked:]] == [[PROBE_TEXT]]  # no item's text
        assert _statuses(tmp_path, other["session"]) == {"obs1": "done", "obs2": "done"}  # obs3 left pending
        monkeypatch.setattr(llm_server, "EMBED_DIM", EMBED_DIM)

        models.stop()  # the embedding server is down; the backbone's answers
        code, down, err = _run(config, tmp_path, 2, judge)
        assert code == 0 and down["status"] == "completed", err  # the store answers every text
        assert _scores(tmp_path, down["session"]) == _scores(tmp_path, two["session"])

        code, miss, err = _run(config, tmp_path, 3, judge)
        _stopped(code, miss, err, judge, "embedder 'tei' cannot be used: ")
        assert _statuses(tmp_path, miss["session"]) == {"obs1": "done", "obs2": "done"}

        # Another URL (a typo) is a model the store holds nothing of: probed, and refused, before any session.
        before = _sessions(tmp_path)
        code, typo, err = _run(_config(tmp_path, llm, models, embed_base="http://127.0.0.1:9/v1"), tmp_path, 1, judge)
        assert code == 2 and typo["error"].startswith("embedder 'tei' cannot be used: "), (typo, err)
        assert _sessions(tmp_path) == before


def _pairs(server: FakeLLMServer, since: int = 0) -> list[tuple[str, str]]:
    return [tuple(p) for body in server.predict_requests[since:] for p in body["inputs"]]


def test_a_served_nli_model_is_checked_only_at_the_first_pair_the_store_cannot_answer(tmp_path) -> None:
    judge = "nli-ar"
    with FakeLLMServer(max_lifetime_s=300.0) as llm, FakeLLMServer(max_lifetime_s=300.0) as models:
        config = _config(tmp_path, llm, models)
        code, first, err = _run(config, tmp_path, 1, judge)
        assert code == 0, err
        assert models.n_info == 1 and _pairs(models)[:2] == list(PROBE_PAIRS) and len(_pairs(models)) == 4

        asked = len(models.predict_requests)
        code, again, err = _run(config, tmp_path, 1, judge)
        assert code == 0, err
        assert (models.n_info, len(models.predict_requests)) == (1, asked)  # no /info, no label check, no pair
        assert _scores(tmp_path, again["session"]) == _scores(tmp_path, first["session"])

        code, two, err = _run(config, tmp_path, 2, judge)
        assert code == 0, err
        reference = _item(2)["references"][0]
        sent = _pairs(models, asked)
        assert models.n_info == 2 and sent[:2] == list(PROBE_PAIRS)  # /info and the label check, then item 2's pairs
        assert len(sent) == 4 and all(premise == reference for premise, _ in sent[2:])

        # The server's labels now read the wrong way round (its /info unchanged): stopped before any score is used.
        models.script_nli(classes=("contradict", "neutral", "entail"))
        asked = len(models.predict_requests)
        code, swapped, err = _run(config, tmp_path, 3, judge)
        _stopped(code, swapped, err, judge, "reads an obvious entailment as contradict")
        assert _pairs(models, asked) == list(PROBE_PAIRS)  # the check alone: no item's pair sent

        # The server now reports another model (no /info: no model id, no labels): its stored outputs are not its.
        models.script_nli(info=False)
        asked = len(models.predict_requests)
        code, other, err = _run(config, tmp_path, 3, judge)
        _stopped(code, other, err, judge, "NLI server 'mnli' (")
        assert "but its outputs in the model-output store came from model fake/nli-model" in other["stopped"]
        assert _pairs(models, asked) == []  # refused on /info: no pair sent
        models.script_nli()

        models.stop()  # the NLI server is down
        code, down, err = _run(config, tmp_path, 2, judge)
        assert code == 0 and down["status"] == "completed", err  # the store answers every pair
        assert _scores(tmp_path, down["session"]) == _scores(tmp_path, two["session"])

        code, miss, err = _run(config, tmp_path, 3, judge)
        _stopped(code, miss, err, judge, "NLI server 'mnli'")
        assert "GET /info failed" in miss["stopped"]
        assert _statuses(tmp_path, miss["session"]) == {"obs1": "done", "obs2": "done"}

        before = _sessions(tmp_path)
        code, typo, err = _run(_config(tmp_path, llm, models, nli_url="http://127.0.0.1:9"), tmp_path, 1, judge)
        assert code == 2 and typo["error"].startswith("NLI server 'mnli'"), (typo, err)
        assert _sessions(tmp_path) == before
