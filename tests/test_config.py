"""Config lookup, validation and error messages."""

import os
from pathlib import Path

import pytest

from qatui.config import Config, load_config, parse_config
from qatui.errors import ConfigError
from qatui.judges.registry import check_judge_tables

ROOT = Path(__file__).resolve().parents[1]


def test_example_config_is_valid_and_equals_the_defaults() -> None:
    config = load_config(ROOT / "config.example.toml")
    assert config.model_dump(exclude={"source"}) == Config().model_dump(exclude={"source"})


def test_xdg_location_is_used(tmp_path, monkeypatch) -> None:
    (tmp_path / "qatui").mkdir()
    (tmp_path / "qatui" / "config.toml").write_text("[general]\nseed = 11\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert load_config().general.seed == 11


def test_no_file_gives_defaults(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert load_config() == Config()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[general]\nsed = 1\n", "unknown key 'general.sed'"),
        ("[general]\nconcurrency = 0\n", "key 'general.concurrency'"),
        ("[backbones.x]\nmodel = 'openai/gpt-4o'\napi_key = 'sk-123'\n", "API keys are never stored"),
        ("[backbones.x]\nmodel = 'openai/gpt-4o'\napi_key_env = 'sk-abc.def'\n", "NAME of an environment variable"),
        ("[judges.rouge-l]\ntie_digit = 2\n", "[judges.rouge-l]"),
        ("[judges.nope]\n", "unknown judge 'nope'"),
        ("[general\n", "not valid TOML"),
        # a name shown on every screen and in every output: no escape in it (this one would set the window's title)
        ('[embedders."e\\u001b]0;x\\u0007"]\nmodel = "openai/text-embedding-3-small"\n',
         "key 'embedders': Value error, 'e\\x1b]0;x\\x07': a table's name may hold no control character"),
        ('[backbones."a\\nb"]\nmodel = "openai/gpt-4o"\n', "key 'backbones': Value error, 'a\\nb': a table's name"),
        # a value of another type is never coerced: `true` was 1 worker, "4" four
        ("[general]\nconcurrency = true\n", "key 'general.concurrency': Input should be a valid integer"),
        ('[general]\nconcurrency = "4"\n', "key 'general.concurrency': Input should be a valid integer"),
        ("[backbones.x]\nmodel = 'openai/m'\ntimeout_s = '30'\n", "key 'backbones.x.timeout_s'"),
        ("[backbones.x]\nmodel = 'openai/m'\nmax_attempts = 2.0\n", "key 'backbones.x.max_attempts'"),
    ],
)
def test_bad_configs_name_the_file_and_key(text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as err:
        check_judge_tables(parse_config(text, "my.toml"))
    assert str(err.value).startswith("my.toml: ") and expected in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(("text", "where"), [
    ("[backbones.x]\nmodel = 'openai/m'\napi_base = 'http://me:sk-LEAK123@127.0.0.1:8000/v1'\n", "backbones.x.api_base"),
    ("[backbones.x]\nmodel = 'openai/m'\napi_base = 'http://sk-LEAK123@host/v1'\n", "backbones.x.api_base"),
    ("[backbones.x]\nmodel = 'azure/m'\napi_base = 'https://h/v1?api-version=1&api-key=sk-LEAK123'\n", "backbones.x.api_base"),
    ("[backbones.x]\nmodel = 'openai/m'\n[[backbones.x.deployments]]\nmodel = 'openai/m'\n"
     "api_base = 'http://h/v1?access_token=sk-LEAK123'\n", "deployments"),
    ("[embedders.e]\nmodel = 'openai/e'\napi_base = 'http://u:sk-LEAK123@h/v1'\n", "embedders.e.api_base"),
    ("[nli_servers.n]\nurl = 'http://h:8080/?sig=sk-LEAK123'\n", "nli_servers.n.url"),
])
def test_an_address_holding_a_key_is_refused_without_quoting_it(text: str, where: str) -> None:
    """A key in an endpoint's address (a user and password before the host, `?api-key=` in the query) was quoted
    in every preflight error and kept in the call cache's facts: the config refuses it, naming the key's place
    and never the key."""
    with pytest.raises(ConfigError) as err:
        parse_config(text, "my.toml")
    message = str(err.value)
    assert where in message and "api_key_env" in message and "LEAK" not in message and "\n" not in message


def test_an_address_without_a_key_passes() -> None:
    config = parse_config("[backbones.x]\nmodel = 'azure/m'\napi_base = 'https://h.example/v1?api-version=2024-06-01'\n"
                          "[backbones.y]\nmodel = 'openai/m'\napi_base = 'http://127.0.0.1:8000/v1'\n", "my.toml")
    assert config.backbones["x"].api_base.endswith("api-version=2024-06-01")


def test_missing_explicit_file_is_an_error(tmp_path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.toml")


def test_sessions_dir_precedence(tmp_path, monkeypatch) -> None:
    """The flag, then the variable, then the config; each made absolute against the working directory."""
    monkeypatch.chdir(tmp_path)
    config = parse_config("[general]\nsessions_dir = 'from-config'\n", "c.toml")
    monkeypatch.delenv("QATUI_SESSIONS_DIR", raising=False)
    assert config.sessions_dir() == tmp_path / "from-config"
    monkeypatch.setenv("QATUI_SESSIONS_DIR", "from-env")
    assert config.sessions_dir() == tmp_path / "from-env"
    assert config.sessions_dir("from-flag") == tmp_path / "from-flag"


def _fifo(folder: Path) -> Path:
    os.mkfifo(folder / "fifo.toml")
    return folder / "fifo.toml"


def _folder(folder: Path) -> Path:
    (folder / "config.toml").mkdir()
    return folder / "config.toml"


def _latin1(folder: Path) -> Path:
    (folder / "latin.toml").write_bytes('[general]\nsessions_dir = "caf\u00e9"\n'.encode("latin-1"))
    return folder / "latin.toml"


def _deep(folder: Path) -> Path:
    (folder / "deep.toml").write_text("x = " + "[" * 10_000 + "]" * 10_000 + "\n")
    return folder / "deep.toml"


@pytest.mark.parametrize(("make", "expected"), [
    (_fifo, "fifo.toml: cannot read the config: is a named pipe (FIFO), not a regular file"),
    (_folder, "config.toml: cannot read the config: is a folder, not a regular file"),
    (lambda folder: Path("/dev/zero"), "/dev/zero: cannot read the config: is a character device"),
    (_deep, "deep.toml line 1: nested deeper than 64 levels"),
    (_latin1, "latin.toml line 2 column 20: not UTF-8 text (byte 0xe9)"),
], ids=["fifo", "folder", "dev-zero", "nested-10000", "latin-1"])
def test_a_hostile_config_file_is_refused_in_one_line_naming_it(tmp_path, capsys, make, expected) -> None:
    """`--config` read through `safe_read`: a FIFO, a device or a folder is named as what it is (it read "config
    file not found"), 10,000 nested arrays are refused (it was a RecursionError traceback)."""
    from qatui.cli import main

    path = make(tmp_path)
    assert main(["judges", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1 and expected in err, err


def test_a_config_with_a_bom_is_read_like_any_other_user_file(tmp_path) -> None:
    """Every other file qatui reads drops a UTF-8 BOM; the config did not ("Invalid statement (at line 1)")."""
    path = tmp_path / "config.toml"
    path.write_bytes(b"\xef\xbb\xbf[general]\nseed = 11\n")
    assert load_config(path).general.seed == 11
