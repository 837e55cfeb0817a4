"""Every numeric option has a range, and a value outside it (or not finite) is refused in one line naming its key.

A tie rule of -5 digits turned accuracy 1.0 into 0.0 with every item scored, and `timeout_s = inf`
passed the config and the preflight, then failed every call: both must stop at the config.
"""

from __future__ import annotations

import math
import typing
from pathlib import Path

import annotated_types
import pytest
from pydantic import BaseModel, ValidationError

from qatui.cli import main
from qatui.config import (
    BackboneConfig, BatchConfig, CacheConfig, DeploymentConfig, EmbedderConfig, GeneralConfig, JuryConfig, ModelsConfig,
    NLIServerConfig,
)
from qatui.judges.base import JudgeOptions
from qatui.judges.registry import JUDGES, judge_class


def _option_models() -> list[type[BaseModel]]:
    """Every table of the config and every judge's options."""
    judges = {judge_class(name).Options for name in JUDGES} | {JudgeOptions}  # the base, whatever judges subclass it
    return [GeneralConfig, CacheConfig, DeploymentConfig, BackboneConfig, ModelsConfig, JuryConfig, EmbedderConfig,
            NLIServerConfig, BatchConfig,
            *sorted(judges, key=lambda m: m.__name__)]


def _numeric_members(annotation: object, metadata: list) -> list[tuple[type, list]]:
    """Each int or float a field's type admits, with the constraints that apply to it."""
    if annotation in (int, float):
        return [(annotation, metadata)]
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        inner, *extra = typing.get_args(annotation)
        found = []
        for item in extra:  # a pydantic Field inside Annotated carries its constraints as metadata
            found.extend(getattr(item, "metadata", [item]))
        return _numeric_members(inner, metadata + found)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return [m for arg in typing.get_args(annotation) for m in _numeric_members(arg, metadata)]
    return []


NUMERIC = [(model, name, kind, constraints) for model in _option_models()
           for name, field in model.model_fields.items()
           for kind, constraints in _numeric_members(field.annotation, list(field.metadata))]


def test_there_are_numeric_options_to_check() -> None:
    names = {f"{model.__name__}.{name}" for model, name, _, _ in NUMERIC}
    assert {"JudgeOptions.tie_digits", "LexicalOptions.tie_digits", "BackboneConfig.timeout_s",
            "GeneralConfig.seed", "JuryConfig.quorum"} <= names
    assert len(NUMERIC) > 20


@pytest.mark.parametrize(("model", "name", "kind", "constraints"), NUMERIC,
                         ids=[f"{m.__name__}.{n}" for m, n, _, _ in NUMERIC])
def test_every_numeric_option_has_both_bounds_and_refuses_what_lies_outside(model, name, kind, constraints) -> None:
    lows = [c for c in constraints if isinstance(c, (annotated_types.Ge, annotated_types.Gt))]
    highs = [c for c in constraints if isinstance(c, (annotated_types.Le, annotated_types.Lt))]
    assert lows and highs, f"{model.__name__}.{name} has no {'lower' if not lows else 'upper'} bound"
    low = lows[0].ge if isinstance(lows[0], annotated_types.Ge) else lows[0].gt
    high = highs[0].le if isinstance(highs[0], annotated_types.Le) else highs[0].lt
    required = {k: v for k, v in {"model": "openai/x", "members": ["a", "b"], "url": "http://127.0.0.1:1"}.items()
                if k in model.model_fields}
    bad = [low - 1, high + 1] + ([math.inf, -math.inf, math.nan] if kind is float else [])
    for value in bad:
        with pytest.raises(ValidationError) as refused:
            model.model_validate({**required, name: value})
        assert name in str(refused.value)


@pytest.mark.parametrize("value", ["-5", "400"])
def test_a_tie_rule_out_of_range_is_refused_naming_the_table_and_key(tmp_path: Path, capsys, value: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f"[judges.pairwise]\ntie_digits = {value}\n")
    assert main(["judges", "--config", str(config)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{config}: [judges.pairwise]" in err and "tie_digits" in err, err
    assert ("greater than or equal to 0" if value == "-5" else "less than or equal to 12") in err


@pytest.mark.parametrize(("table", "key", "value"), [("judges.rouge-l", "tie_digits", "true"),
                                                     ("judges.rouge-l", "tie_digits", '"2"'),
                                                     ("judges.pairwise", "max_candidates", '"3"')])
def test_a_judge_option_of_another_type_than_its_own_is_refused(tmp_path: Path, capsys, table, key, value) -> None:
    """`[general]` refused `concurrency = true`; a judge's table took `tie_digits = true` as 1 and "2" as 2, and
    the session stored the 1. A config's judge options are read as written."""
    config = tmp_path / "config.toml"
    config.write_text(f"[{table}]\n{key} = {value}\n")
    assert main(["judges", "--config", str(config)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{config}: [{table}]" in err and f"option {key}: Input should be a valid integer" in err, err


def test_a_judge_file_option_of_another_type_than_its_own_is_refused_with_its_line(tmp_path: Path, capsys) -> None:
    """A judge file's `[options] max_tokens = true` was stored as max_tokens 1."""
    judge = tmp_path / "mine.toml"
    judge.write_text('name = "mine"\nkind = "score"\n[scale]\nmin = 1\nmax = 5\n[options]\nmax_tokens = true\n'
                     '[prompts]\nsystem = "Score it."\nuser = "{question} {answer}"\n')
    assert main(["judges", "show", str(judge)]) == 2
    err = capsys.readouterr().err
    assert f"{judge}:7: options.max_tokens: Input should be a valid integer" in err, err


@pytest.mark.parametrize("value", ["inf", "nan", "-1.0", "1e9"])
def test_a_timeout_not_finite_or_out_of_range_is_refused_naming_its_key(tmp_path: Path, capsys, value: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[backbones.fake]\nmodel = "openai/fake"\ntimeout_s = {value}\n')
    assert main(["judges", "--config", str(config)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{config}: key 'backbones.fake.timeout_s'" in err, err


def test_a_seed_flag_past_the_range_is_refused(tmp_path: Path, capsys) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "q", "question": "?", "candidates": {"a": "x", "b": "y"}}\n')
    assert main(["run", str(data), "--judge", "bleu", "--seed", str(2**40), "--sessions-dir", str(tmp_path / "s")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--seed" in err and f"must be from 0 to {2**32 - 1}" in err, err
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize(("flag", "value", "allowed"), [
    ("--rounds", "0", "from 1 to 20"), ("--rounds", "21", "from 1 to 20"), ("--shown", "0", "from 1 to 50"),
    ("--shown", "51", "from 1 to 50"), ("--train-share", "0", "between 0 and 1"), ("--train-share", "1", "between 0 and 1"),
    ("--train-share", "nan", "between 0 and 1"), ("--seed", "-1", f"from 0 to {2**32 - 1}"),
])
def test_judges_align_flags_out_of_range_are_refused_before_any_work(tmp_path: Path, capsys, flag, value,
                                                                      allowed) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "q", "question": "?", "candidates": {"a": "x", "b": "y"}}\n')
    assert main(["judges", "align", "pointwise", str(data), flag, value, "--sessions-dir", str(tmp_path / "s")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert flag in err and allowed in err, err
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("flag", ["--limit", "--max-cost", "--seed"])
def test_a_number_of_5000_digits_is_refused_in_one_short_line(tmp_path: Path, capsys, flag: str) -> None:
    """Past Python's 4,300-digit limit `int` fails too: the refusal names the flag and shows the start of what was
    given, not all 5,000 digits."""
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "q", "question": "?", "candidates": {"a": "x", "b": "y"}}\n')
    assert main(["run", str(data), "--judge", "bleu", flag, "9" * 5000, "--sessions-dir", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and f"argument {flag}: must be" in err and len(err) < 300, err[:300]
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("argv", [
    ["run", "demo", "--judge", "pointwise", "--backbone", "", "--plan", "--offline"],
    ["run", "demo", "--judge", "minos-akps", "--nli", " ", "--plan", "--offline"],
    ["run", "demo", "--judge", "ragas-relevance", "--embedder", "", "--plan", "--offline"],
    ["table", "demo", "--judge", "pointwise", "--backbone", "", "--offline"],
    ["--sessions-dir", "", "sessions", "list"],
    ["sessions", "list", "--sessions-dir", " "],
])
def test_an_empty_option_value_is_refused_never_read_as_not_given(tmp_path: Path, capsys, monkeypatch, argv) -> None:
    """`--backbone "$BB"` with BB unset ran the whole set on the default backbone, and `--sessions-dir "$DIR"` wrote
    into the personal folder (a blank one into a folder named ' '): an empty value is refused before any work."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("QATUI_SESSIONS_DIR", str(tmp_path / "s"))
    assert main(argv) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "is empty: give a value, or leave the option out for the default" in err, err
    assert list(tmp_path.iterdir()) == []  # no session, no folder named ' '


def test_an_empty_sessions_variable_or_config_folder_is_refused(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("QATUI_SESSIONS_DIR", "")
    assert main(["sessions", "list"]) == 2
    assert "$QATUI_SESSIONS_DIR is set but empty" in capsys.readouterr().err
    monkeypatch.delenv("QATUI_SESSIONS_DIR")
    for table, key in (("general", "sessions_dir"), ("cache", "dir")):
        config = tmp_path / "c.toml"
        config.write_text(f'[{table}]\n{key} = " "\n')
        assert main(["--config", str(config), "sessions", "list"]) == 2
        err = " ".join(capsys.readouterr().err.split())
        assert f"{table}.{key}" in err and "names no folder" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.toml"]


@pytest.mark.parametrize(("names", "said"), [
    (["fake", "fa\u200bke"], "read alike on screen"),
    (["fake", ""], "a table's name is not blank"),
])
def test_config_table_names_that_read_alike_or_blank_are_refused(tmp_path: Path, capsys, names, said) -> None:
    """`[backbones."fake"]` beside `[backbones."fa\\u200bke"]` loaded, and `qatui table` printed two rows that read
    as one judge on one backbone with different figures."""
    config = tmp_path / "c.toml"
    config.write_text("".join(f'[backbones."{name}"]\nmodel = "openai/m"\n' for name in names))
    assert main(["--config", str(config), "sessions", "list", "--sessions-dir", str(tmp_path / "s")]) == 2
    assert said in " ".join(capsys.readouterr().err.split())


@pytest.mark.parametrize("value", ["0", "100", "true", '"most"'])
def test_a_jury_quorum_out_of_range_is_refused_naming_every_allowed_value(tmp_path: Path, capsys, value) -> None:
    """`quorum = 0` was refused as "Input should be 'majority' or 'all'": never saying 1 to 64 is allowed."""
    config = tmp_path / "c.toml"
    config.write_text(f'[juries.p]\nmembers = ["rouge-l", "length"]\nquorum = {value}\n')
    assert main(["--config", str(config), "judges"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "quorum is 'majority', 'all' or a whole number of members from 1 to 64" in err, err


@pytest.mark.parametrize("value", ['""', '"not a url"', '"ftp://x"', '"http://"'])
def test_a_backbone_address_that_is_no_http_address_is_refused_when_the_config_loads(tmp_path: Path, capsys,
                                                                                   value) -> None:
    """`api_base = "not a url"` passed the config and `--plan --offline`, and failed at the live check as "Name or
    service not known"."""
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.b]\nmodel = "openai/m"\napi_base = {value}\n')
    assert main(["--config", str(config), "run", "demo", "--judge", "pointwise", "--backbone", "b", "--plan",
                 "--offline", "--sessions-dir", str(tmp_path / "s")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "api_base" in err and "must be the server's http:// or https:// address" in err, err
