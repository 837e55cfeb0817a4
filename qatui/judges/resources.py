"""The models a run's judges share: one backbone client, one NLI scorer, one embedder.

Each is built on first use, so a run of lexical judges never imports torch or litellm,
and every judge of a run talks to the same cached client.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qatui.config import Config
    from qatui.embed import Embedder
    from qatui.llm import LLMClient
    from qatui.nli import NLIScorer


@dataclass
class Resources:
    """Which backbone / NLI model / embedder a run uses; None means the config's default."""

    config: Config
    backbone_name: str | None = None
    nli_spec: str | None = None
    embedder_spec: str | None = None
    use_cache: bool | None = None

    @property
    def backbone(self) -> str:
        """The backbone's name: the run's choice, else the config's default."""
        return self.backbone_name or self.config.models.default_backbone

    @property
    def nli_name(self) -> str:
        """The NLI model's name: the run's choice, else the config's default."""
        return self.nli_spec or self.config.models.nli

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

    @cached_property
    def nli(self) -> NLIScorer:
        """The NLI scorer: the bundled cross-encoder, a transformers model, or the backbone."""
        if self.nli_name == "llm":
            from qatui.judges.llm_nli import LLMNLIScorer

            return LLMNLIScorer(self.llm)
        from qatui.nli import load_nli

        return load_nli(self.nli_name)

    @cached_property
    def embedder(self) -> Embedder:
        """The sentence embedder, loaded on first use."""
        from qatui.embed import load_embedder

        return load_embedder(self.embedder_name)

    def check_backbone(self) -> str:
        """Refuse now (`BackboneUnusable`) a backbone that cannot answer: before a session, never after."""
        from qatui.llm.preflight import preflight_backbone

        return preflight_backbone(self.llm)

    def describe(self) -> dict[str, object]:
        """What a session records about its models (names only, never keys)."""
        return {"backbone": self.backbone, "nli": self.nli_name, "embedder": self.embedder_name,
                "cache": self.cache_enabled}
