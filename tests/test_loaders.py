"""Dataset loaders: every format on small synthetic files, malformed input, detection, real files."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from qatui.data.loaders import FORMATS, detect_format, iter_items, load_dataset
from qatui.data.model import PairwiseGold, RankingGold, RatingsGold
from qatui.errors import DatasetError

BOM = "\ufeff"


def write(folder: Path, name: str, text: str, bom: bool = False) -> Path:
    path = folder / name
    path.write_text((BOM if bom else "") + text, encoding="utf-8")
    return path


def write_json(folder: Path, name: str, data: Any, bom: bool = False) -> Path:
    return write(folder, name, json.dumps(data, ensure_ascii=False, indent=2), bom)


def write_jsonl(folder: Path, name: str, records: list[Any], bom: bool = False) -> Path:
    return write(folder, name, "\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", bom)


def error_of(path: Path, format: str | None = None, **kwargs: Any) -> str:
    with pytest.raises(DatasetError) as caught:
        load_dataset(path, format, **kwargs)
    return str(caught.value)


def assert_names(message: str, *parts: str) -> None:
    for part in parts:
        assert part in message, f"{part!r} not in {message!r}"


# --- native jsonl / json ---------------------------------------------------------------

NATIVE = [
    {"id": 1, "question": "Which is best?", "reference": "c2", "context": "some passage",
     "candidates": {"c1": "one", "c2": "two", "c3": "three"}, "question_type": "factoid",
     "gold": {"kind": "ranking", "tiers": [["c2"], ["c1", "c3"]]}},
    {"id": "p", "question": "A or B?", "references": ["r1", "r2"],
     "candidates": {"x": "ex", "y": "why"},
     "gold": {"kind": "pairwise", "a": "x", "b": "y", "labels": ["A"], "pair_type": "human_vs_model"}},
    {"id": "r", "question": "Rate", "candidates": {"c1": "t"}, "language": "en", "meta": {"src": 1},
     "gold": {"kind": "ratings", "ratings": {"c1": {"coherence": 3.0}}}},
]


def test_jsonl_reads_every_gold_kind_and_the_shorthands(tmp_path: Path) -> None:
    text = BOM + json.dumps(NATIVE[0]) + "\n\n" + "\n".join(json.dumps(r) for r in NATIVE[1:]) + "\n"
    path = write(tmp_path, "demo.jsonl", text)
    ds = load_dataset(path)
    assert (ds.name, ds.format, ds.path) == ("demo", "jsonl", str(path.resolve()))
    assert ds.content_hash == hashlib.sha256(path.read_bytes()).hexdigest()
    first, pair, rated = ds.items
    assert (first.id, first.references, first.context) == ("1", ["c2"], ["some passage"])
    assert first.gold == RankingGold(tiers=[["c2"], ["c1", "c3"]])
    assert first.question_type == "factoid"
    assert isinstance(pair.gold, PairwiseGold) and pair.gold.pair_type == "human_vs_model"
    assert isinstance(rated.gold, RatingsGold) and rated.meta == {"src": 1}


def test_jsonl_with_a_line_or_paragraph_separator_inside_a_string_loads(tmp_path: Path) -> None:
    """JSON allows U+2028, U+2029 and U+0085 unescaped inside a string (`json.dumps(..., ensure_ascii=False)`
    writes them so), but the file was split at them too: a valid file was refused as "Unterminated string"."""
    records = [{**NATIVE[0], "question": "Line one\u2028line two\u2029and three\x85?"}, NATIVE[1]]
    path = write_jsonl(tmp_path, "sep.jsonl", records)
    assert "\u2028" in path.read_text(encoding="utf-8")
    ds = load_dataset(path)
    assert ds.format == "jsonl" and ds.items[0].question == records[0]["question"] and len(ds) == 2


@pytest.mark.parametrize("field", ["id", "candidate"])
def test_an_id_or_candidate_name_with_whitespace_at_an_edge_is_refused(tmp_path: Path, field: str) -> None:
    """"q1" and "q1 " were two items that show as one on every screen, and a results file's row for "q1 " (its
    cells read stripped) was scored against q1's gold: a judge perfectly right read as perfectly wrong."""
    spaced = {"id": "q1 ", "question": "Spain?", "candidates": {"r1": "a", "r2": "b"}} if field == "id" else \
        {"id": "q2", "question": "Spain?", "candidates": {"r1": "a", "r1 ": "b"}}
    path = write_jsonl(tmp_path, "ws.jsonl", [{"id": "q1", "question": "France?", "candidates": {"r1": "a", "r2": "b"}},
                                              spaced])
    assert_names(error_of(path), "ws.jsonl line 2", "must not start or end with whitespace")


def test_json_list_of_native_records(tmp_path: Path) -> None:
    ds = load_dataset(write_json(tmp_path, "demo.json", NATIVE, bom=True))
    assert ds.format == "json" and [i.id for i in ds.items] == ["1", "p", "r"]


BAD_JSONL = {
    "bad json": ('{"id": "a", "question": "q", "candidates": {"c": "t"}}\n{"id": "b", "question": }\n',
                 ["demo.jsonl line 2 column", "invalid JSON"]),
    "missing field": ('{"id": "a", "question": "q"}\n', ["demo.jsonl line 1", "field 'candidates'", "is required"]),
    "wrong type": ('{"id": "a", "question": "q", "candidates": ["t"]}\n',
                   ["demo.jsonl line 1", "field 'candidates'", "must be a non-empty object of id -> text"]),
    "empty candidates": ('\n\n{"id": "a", "question": "q", "candidates": {}}\n',
                         ["demo.jsonl line 3", "field 'candidates'"]),
    "bad candidate text": ('{"id": "a", "question": "q", "candidates": {"c": 5}}\n',
                           ["line 1", "field 'candidates.c'", "string"]),
    "unknown gold candidate": (
        '{"id": "a", "question": "q", "candidates": {"c1": "t"}, "gold": {"kind": "ranking", "tiers": [["c9"]]}}\n',
        ["demo.jsonl line 1", "field 'gold'", "'c9'"]),
    "bad gold kind": ('{"id": "a", "question": "q", "candidates": {"c": "t"}, "gold": {"kind": "stars"}}\n',
                      ["line 1", "field 'gold'", "stars"]),
    "gold without kind": ('{"id": "a", "question": "q", "candidates": {"c": "t"}, "gold": {"tiers": [["c"]]}}\n',
                          ["demo.jsonl line 1", "field 'gold'", "needs a kind: ranking, pairwise or ratings"]),
    "duplicate id": ('{"id": "a", "question": "q", "candidates": {"c": "t"}}\n'
                     '{"id": "a", "question": "q2", "candidates": {"c": "t"}}\n',
                     ["demo.jsonl line 2", "field 'id'", "duplicate item id 'a'", "line 1"]),
    # "café" written as one letter é and as e with a combining accent: one name on every screen
    "names composed two ways": ('{"id": "a", "question": "q", "candidates": {"caf\\u00e9": "x", "cafe\\u0301": "y"}}\n',
                                ["demo.jsonl line 1", "field 'candidates'", "'caf\\xe9' and 'cafe\\u0301'",
                                 "show as the same name"]),
    "ids composed two ways": ('{"id": "caf\\u00e9", "question": "q", "candidates": {"c": "t"}}\n'
                              '{"id": "cafe\\u0301", "question": "q2", "candidates": {"c": "t"}}\n',
                              ["demo.jsonl line 2", "field 'id'", "'cafe\\u0301'", "'caf\\xe9' (at demo.jsonl line 1)",
                               "show as the same id"]),
    "names apart by a zero-width space": ('{"id": "a", "question": "q", "candidates": {"gpt": "x", "gpt\\u200b": "y"}}\n',
                                          ["demo.jsonl line 1", "'gpt' and 'gpt\\u200b'", "invisible characters"]),
    "unknown field": ('{"id": "a", "question": "q", "candidates": {"c": "t"}, "score": 1}\n',
                      ["line 1", "field 'score'", "not a field"]),
    "not an object": ('["a"]\n', ["demo.jsonl line 1", "must be a JSON object"]),
    "reference not text": ('{"id": "a", "question": "q", "candidates": {"c": "t"}, "reference": 3}\n',
                           ["line 1", "field 'reference'"]),
    "empty file": ("  \n", ["demo.jsonl", "empty"]),
}


@pytest.mark.parametrize("case", BAD_JSONL, ids=list(BAD_JSONL))
def test_jsonl_errors_name_file_record_and_field(tmp_path: Path, case: str) -> None:
    text, parts = BAD_JSONL[case]
    assert_names(error_of(write(tmp_path, "demo.jsonl", text), "jsonl"), *parts)


@pytest.mark.parametrize("format", ["jsonl", "json"])
def test_iter_items_gives_the_loaded_items_and_each_error_where_it_is_reached(tmp_path: Path, format: str) -> None:
    records = [{"id": f"q{i}", "question": f"Q{i}?", "candidates": {"a": "x"}} for i in range(5)]
    write_file = write_jsonl if format == "jsonl" else write_json
    good = write_file(tmp_path, f"good.{format}", records)
    assert list(iter_items(good, format)) == load_dataset(good, format).items
    bad = write_file(tmp_path, f"bad.{format}", [*records[:3], {"id": "q1", "question": "again?", "candidates": {}}])
    items = iter_items(bad, format)
    assert [next(items).id for _ in range(3)] == ["q0", "q1", "q2"]  # the items before the bad record come
    with pytest.raises(DatasetError, match="candidates"):
        next(items)
    dup = write_file(tmp_path, f"dup.{format}", [*records[:2], records[0]])
    assert error_of(dup, format) == next_error(iter_items(dup, format))  # the same message as a whole load
    with pytest.raises(DatasetError, match="no such file"):
        next(iter_items(tmp_path / "missing.jsonl", format))


def next_error(items: Any) -> str:
    """The message of the DatasetError reading `items` to its end raises."""
    with pytest.raises(DatasetError) as caught:
        list(items)
    return str(caught.value)


def test_json_list_errors(tmp_path: Path) -> None:
    bad = [NATIVE[0], {"id": "b", "question": "", "candidates": {"c": "t"}}]
    assert_names(error_of(write_json(tmp_path, "demo.json", bad)), "demo.json item 2 (id 'b')", "field 'question'")
    path = write(tmp_path, "broken.json", '[\n  {"id": "a",\n   "question" "q"}\n]')
    assert_names(error_of(path, "json"), "broken.json line 3 column", "invalid JSON")
    assert_names(error_of(write_json(tmp_path, "obj.json", {"a": 1}), "json"), "obj.json", "JSON list")
    assert_names(error_of(write_json(tmp_path, "none.json", []), "json"), "none.json", "empty")


def test_missing_file_and_wrong_encoding(tmp_path: Path) -> None:
    assert_names(error_of(tmp_path / "nowhere.jsonl"), "nowhere.jsonl", "no such file")
    assert_names(error_of(tmp_path / "nowhere.jsonl", "jsonl"), "no such file")
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes('{"question": "caf\xe9"}\n'.encode("latin-1"))
    assert_names(error_of(latin, "jsonl"), "latin.jsonl", "UTF-8")


# --- csv --------------------------------------------------------------------------------

CSV = (
    "id,question,reference,context,candidate:c1,candidate:c2,response:c3,gold_ranking,question_type\n"
    'q1,What?,ref one,ctx,"first\nline two",second,third,c2>c1=c3,factoid\n'
    ",,,,,,,,\n"
    "q2,Why?,,,a,,b,,\n"
)


def test_csv_default_convention(tmp_path: Path) -> None:
    ds = load_dataset(write(tmp_path, "table.csv", CSV, bom=True))
    assert ds.format == "csv" and len(ds) == 2
    first, second = ds.items
    assert first.candidates == {"c1": "first\nline two", "c2": "second", "c3": "third"}
    assert first.gold == RankingGold(tiers=[["c2"], ["c1", "c3"]])
    assert (first.references, first.context, first.question_type) == (["ref one"], ["ctx"], "factoid")
    assert second.candidates == {"c1": "a", "c3": "b"} and second.gold is None and second.references == []


def test_csv_candidate_columns_are_read_whatever_the_case_of_their_prefix(tmp_path: Path) -> None:
    """A `Candidate:c` or `RESPONSE:d` column was ignored: that answer vanished from every row, and `inspect` gave
    the smaller count with no warning."""
    path = write(tmp_path, "t.csv", "id,question,candidate:a,Candidate:c,RESPONSE:d,notes\nq1,What?,x,y,z,n\n")
    assert load_dataset(path).items[0].candidates == {"a": "x", "c": "y", "d": "z"}


def test_csv_mapping_renames_columns(tmp_path: Path) -> None:
    path = write(tmp_path, "t.csv", "prompt,gold_answer,gpt,llama\nWhat?,ref,g,l\n")
    mapping = {"question": "prompt", "reference": "gold_answer", "candidate:gpt": "gpt", "candidate:llama": "llama"}
    item = load_dataset(path, csv_mapping=mapping).items[0]
    assert (item.id, item.question, item.references) == ("row1", "What?", ["ref"])
    assert item.candidates == {"gpt": "g", "llama": "l"}


BAD_CSV = {
    "missing question": ("id,candidate:a\n1,x\n", None, ["t.csv", "missing column 'question'"]),
    "mapped column missing": ("question,candidate:a\nq,x\n", {"reference": "gold"}, ["missing column 'gold'"]),
    "no candidates": ("id,question\n1,q\n", None, ["t.csv", "no candidate column"]),
    "bad ranking": ("id,question,candidate:a,candidate:b,gold_ranking\n1,q,x,y,a>>b\n", None,
                    ["t.csv line 2", "field 'gold_ranking'"]),
    "unknown gold candidate": ("id,question,candidate:a,gold_ranking\n1,q,x,a>z\n", None,
                               ["t.csv line 2", "field 'gold_ranking'", "'z'"]),
    "cell count": ("id,question,candidate:a\n1,q,x\n2,q\n", None, ["t.csv line 3", "2 cells"]),
    "names composed two ways": ("id,question,candidate:caf\u00e9,candidate:cafe\u0301\n1,q,x,y\n", None,
                                ["t.csv line 2", "field 'candidates'", "show as the same name"]),
    "duplicate id": ('id,question,candidate:a\n1,q,"multi\nline"\n1,q,x\n', None,
                     ["t.csv line 4", "field 'id'", "duplicate item id '1'", "line 2"]),
    "bad question type": ("id,question,candidate:a,question_type\n1,q,x,yes\n", None,
                          ["t.csv line 2", "field 'question_type'"]),
    "header only": ("id,question,candidate:a\n", None, ["t.csv", "no items"]),
    # one candidate named by two columns: the later column's answer replaced the earlier's, unseen
    "a candidate twice": ("id,question,candidate:a,response:a\n1,q,x,y\n", None,
                          ["t.csv line 1", "'candidate:a'", "'response:a'", "both name candidate 'a'"]),
    "a candidate twice, spaced": ("id,question,candidate:a,candidate:a \n1,q,x,y\n", None,
                                  ["t.csv line 1", "'candidate:a'", "more than once"]),
    "a mapped candidate twice": ("id,question,candidate:a,answer_a\n1,q,x,y\n", {"candidate:a": "answer_a"},
                                 ["t.csv line 1", "both name candidate 'a'"]),
    "unknown mapping key": ("id,question,candidate:a\n1,q,x\n", {"answer": "a"}, ["unknown field", "answer"]),
}


@pytest.mark.parametrize("case", BAD_CSV, ids=list(BAD_CSV))
def test_csv_errors_name_file_line_and_column(tmp_path: Path, case: str) -> None:
    text, mapping, parts = BAD_CSV[case]
    assert_names(error_of(write(tmp_path, "t.csv", text), "csv", csv_mapping=mapping), *parts)


# --- minos ------------------------------------------------------------------------------

MINOS = [
    {"id": 1, "question": "老工业区如何转型", "answer": "工业遗产资源", "label": 0,
     "response": {"gpt4o": "回答一", "qwen": "回答二", "llama": "回答三"}, "rank": ["qwen", "gpt4o", "llama"]},
    {"id": 2, "question": "What is 2+2?", "answer": "['4', 'four']", "label": "1",
     "response": "{'a': '4', 'b': '5'}", "rank": "['a', 'b']"},
    {"id": 3, "question": "Q?", "answer": "[see the figure] it is 4", "label": 1, "response": {"a": "x"}},
]


def test_minos_json_values_and_python_literal_strings(tmp_path: Path) -> None:
    ds = load_dataset(write_json(tmp_path, "GaoKao_Minos.json", MINOS, bom=True))
    assert ds.format == "minos"
    zh, literal, plain = ds.items
    assert zh.gold == RankingGold(tiers=[["qwen"], ["gpt4o"], ["llama"]])
    assert (zh.id, zh.question_type, zh.language, zh.references) == ("1", "non-factoid", "zh", ["工业遗产资源"])
    assert literal.references == ["4", "four"] and literal.candidates == {"a": "4", "b": "5"}
    assert literal.gold == RankingGold(tiers=[["a"], ["b"]]) and literal.question_type == "factoid"
    assert literal.language is None
    assert plain.references == ["[see the figure] it is 4"] and plain.gold is None


BAD_MINOS = {
    "missing response": ({"id": 7, "question": "q", "answer": "a"}, ["m.json item 1 (id '7')", "field 'response'"]),
    "code in a literal": ({"id": 7, "question": "q", "answer": "a", "response": "{'a': __import__('os').getcwd()}"},
                          ["item 1 (id '7')", "field 'response'", "literal"]),
    "response not a dict": ({"id": 7, "question": "q", "answer": "a", "response": ["x"]},
                            ["item 1", "field 'response'"]),
    "bad label": ({"id": 7, "question": "q", "answer": "a", "response": {"a": "x"}, "label": 2},
                  ["item 1", "field 'label'"]),
    "rank names unknown": ({"id": 7, "question": "q", "answer": "a", "response": {"a": "x"}, "rank": ["a", "z"]},
                           ["item 1 (id '7')", "field 'rank'", "'z'"]),
    "rank repeats": ({"id": 7, "question": "q", "answer": "a", "response": {"a": "x"}, "rank": ["a", "a"]},
                     ["item 1", "field 'rank", "twice"]),
    # Python's literal reader keeps the last of a repeated key: the first answer was lost, unseen
    "a literal's key twice": ({"id": 7, "question": "q", "answer": "a", "response": "{'a': 'x', 'b': 'y', 'a': 'z'}"},
                              ["item 1 (id '7')", "field 'response'", "'a' twice"]),
}


@pytest.mark.parametrize("case", BAD_MINOS, ids=list(BAD_MINOS))
def test_minos_errors(tmp_path: Path, case: str) -> None:
    record, parts = BAD_MINOS[case]
    assert_names(error_of(write_json(tmp_path, "m.json", [record]), "minos"), *parts)


def test_minos_duplicate_id(tmp_path: Path) -> None:
    records = [MINOS[2], {**MINOS[2], "question": "again"}]
    assert_names(error_of(write_json(tmp_path, "m.json", records)), "m.json item 2 (id '3')", "duplicate item id '3'")


# --- linkage ----------------------------------------------------------------------------

LINKAGE = {
    "How do tides work?": [
        {"doc_id": "d1", "passage": "best one", "label": 3},
        {"docid": "d2", "passage": "good", "label": 2},
        {"doc_id": "d3", "passage": "also good", "label": 2},
        {"doc_id": "d4", "passage": "poor", "label": 0},
        {"doc_id": "d5", "passage": "also best", "label": 3},
    ],
    "Why is the sky blue?": [{"doc_id": "a", "passage": "top", "label": 2},
                             {"doc_id": "b", "passage": "x", "label": 1}],
    "All equal?": [{"doc_id": "a", "passage": "one", "label": 1}, {"doc_id": "b", "passage": "two", "label": 1}],
}


def test_linkage_top_grades_become_references_and_ties_share_a_tier(tmp_path: Path) -> None:
    ds = load_dataset(write_json(tmp_path, "linkage.json", LINKAGE))
    assert ds.format == "linkage" and [i.id for i in ds.items] == ["q1", "q2", "q3"]
    tides, sky, equal = ds.items
    assert tides.question == "How do tides work?" and tides.references == ["best one", "also best"]
    assert list(tides.candidates) == ["d2", "d3", "d4"]
    assert tides.gold == RankingGold(tiers=[["d2", "d3"], ["d4"]])
    assert sky.references == ["top"] and sky.candidates == {"b": "x"} and sky.gold is None
    assert "only 1 candidate" in sky.meta["note"]
    assert equal.references == [] and equal.gold == RankingGold(tiers=[["a", "b"]])


def test_linkage_errors(tmp_path: Path) -> None:
    no_label = {"Why?": [{"doc_id": "a", "passage": "p", "label": 1}, {"doc_id": "b", "passage": "p"}]}
    assert_names(error_of(write_json(tmp_path, "l.json", no_label), "linkage"),
                 "l.json key 'Why?' passage 2", "field 'label'")
    twice = {"Why?": [{"doc_id": "a", "passage": "p", "label": 1}, {"doc_id": "a", "passage": "q", "label": 0}]}
    assert_names(error_of(write_json(tmp_path, "l.json", twice), "linkage"), "passage 2", "field 'doc_id'", "twice")
    assert_names(error_of(write_json(tmp_path, "l.json", {"Why?": "text"}), "linkage"), "key 'Why?'", "passages")


# --- linkage-webglm ---------------------------------------------------------------------

def webglm_entry(labels: tuple[int, int, int], extra: bool = False) -> dict[str, Any]:
    models = ("mistral", "gpt", "llama")
    docs = [{"answer": f"{m} says", "model": m, "label": g} for m, g in zip(models, labels, strict=True)]
    grounds = {f"ground{k}": f"reference {k}" for k in range(5 if extra else 4)}
    return {"doc_list": docs, **grounds}


def test_webglm_reference_is_ground3_and_labels_rank_models(tmp_path: Path) -> None:
    data = {"How To Cook Pork": webglm_entry((3, 2, 1)), "Tie?": webglm_entry((2, 2, 1), extra=True)}
    ds = load_dataset(write_json(tmp_path, "WEBGLM.json", data))
    assert ds.format == "linkage-webglm"
    strict, tied = ds.items
    assert strict.references == ["reference 3"] and list(strict.candidates) == ["mistral", "gpt", "llama"]
    assert strict.gold == RankingGold(tiers=[["mistral"], ["gpt"], ["llama"]])
    assert tied.gold == RankingGold(tiers=[["mistral", "gpt"], ["llama"]])
    assert sorted(tied.meta["llm_references"]) == ["ground0", "ground1", "ground2", "ground4"]


def test_webglm_errors(tmp_path: Path) -> None:
    entry = webglm_entry((3, 2, 1))
    del entry["ground3"]
    assert_names(error_of(write_json(tmp_path, "w.json", {"Q?": entry}), "linkage-webglm"), "w.json key 'Q?'",
                 "field 'ground3'")
    entry = webglm_entry((3, 2, 1))
    entry["doc_list"][1]["label"] = "high"
    assert_names(error_of(write_json(tmp_path, "w.json", {"Q?": entry}), "linkage-webglm"),
                 "key 'Q?' doc_list 2", "field 'label'")


# --- lfqa-e -----------------------------------------------------------------------------

def lfqa_e_record(n: int, label: str) -> dict[str, Any]:
    return {"id": f"e{n}", "question": "为什么天空是蓝色的", "context": "瑞利散射", "reference": "因为散射。",
            "response_a": "甲", "response_b": "乙", "compare_type": "human_vs_model", "label": label}


def test_lfqa_e_labels_become_pairwise_gold(tmp_path: Path) -> None:
    records = [lfqa_e_record(1, "response_a"), lfqa_e_record(2, "response_b"), lfqa_e_record(3, "same")]
    ds = load_dataset(write_json(tmp_path, "lfqa_e.json", records, bom=True))
    assert ds.format == "lfqa-e"
    assert [i.gold.labels for i in ds.items] == [["A"], ["B"], ["tie"]]
    first = ds.items[0]
    assert first.candidates == {"response_a": "甲", "response_b": "乙"} and first.language == "zh"
    assert first.gold.pair_type == "human_vs_model" and first.references == ["因为散射。"]
    assert first.context == ["瑞利散射"]


def test_lfqa_e_errors(tmp_path: Path) -> None:
    bad = [lfqa_e_record(1, "response_c")]
    assert_names(error_of(write_json(tmp_path, "e.json", bad), "lfqa-e"), "e.json item 1 (id 'e1')", "field 'label'")
    missing = [{k: v for k, v in lfqa_e_record(1, "same").items() if k != "response_b"}]
    assert_names(error_of(write_json(tmp_path, "e.json", missing), "lfqa-e"), "item 1", "field 'response_b'")


# --- lfqa-eval --------------------------------------------------------------------------

def judgement(q_id: str, a1: str, a2: str, better: str, kind: str = "HMh[3][0]", annotator: int = 1) -> dict:
    return {"q_id": q_id, "question_text": "Why?<br />Really?", "answer1": a1, "answer2": a2, "answer1_label": kind,
            "BetterAnswer": better, "DifficultToChoose": "No.", "comments": "c", "annotator": annotator, "id": 1}


def lfqa_eval_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "LFQA"
    folder.mkdir()
    write_json(folder, "Biology_1_Common20.json",
               [judgement("q", "x", "y", "Answer A"), judgement("q", "u", "v", "Answer B", "HHH[9][1]")])
    write_json(folder, "Physics_2_Common20.json", [judgement("q", "x", "y", "Answer B", annotator=2)])
    write(folder, "SOURCE.md", "not data")
    return folder


def test_lfqa_eval_folder_groups_judgements_by_pair(tmp_path: Path) -> None:
    folder = lfqa_eval_folder(tmp_path)
    ds = load_dataset(folder)
    assert (ds.format, ds.name, len(ds)) == ("lfqa-eval", "LFQA", 2)
    files = sorted(folder.glob("*.json"))
    assert ds.content_hash == hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()
    judged_twice, other = ds.items
    assert (judged_twice.id, other.id) == ("q-1", "q-2")
    assert judged_twice.question == "Why?\nReally?" and judged_twice.references == []
    assert judged_twice.gold == PairwiseGold(a="answer1", b="answer2", labels=["A", "B"], pair_type="human_vs_model")
    assert judged_twice.meta["annotator"] == [1, 2] and judged_twice.meta["answer1_label"] == ["HMh[3][0]"] * 2
    assert other.gold.pair_type == "human_vs_human" and other.candidates == {"answer1": "u", "answer2": "v"}
    one = load_dataset(folder / "Physics_2_Common20.json")
    assert one.format == "lfqa-eval" and one.items[0].gold.labels == ["B"]


def test_lfqa_eval_errors(tmp_path: Path) -> None:
    bad = [judgement("q", "x", "y", "Answer C")]
    assert_names(error_of(write_json(tmp_path, "e.json", bad), "lfqa-eval"), "e.json item 1", "field 'BetterAnswer'")
    bad = [judgement("q", "x", "y", "Answer A", kind="MM")]
    assert_names(error_of(write_json(tmp_path, "e.json", bad), "lfqa-eval"), "item 1", "field 'answer1_label'")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_names(error_of(empty), "empty", "no .json files")


def test_lfqa_eval_refuses_a_second_judgement_of_a_pair_by_one_expert(tmp_path: Path) -> None:
    """A copy of one expert's file in the folder ("Economics_18 (copy).json") added that expert's vote again: a 1-1
    split of two experts became a 2-1 majority gold, with no word. A second judgement of a pair by one annotator is
    refused, naming both records; records that name no annotator are told apart by their file (one per expert)."""
    folder = lfqa_eval_folder(tmp_path)
    original = folder / "Physics_2_Common20.json"
    (folder / "Physics_2_Common20 (copy).json").write_bytes(original.read_bytes())
    assert_names(error_of(folder), "Physics_2_Common20.json item 1", "field 'annotator'", "annotator 2",
                 "Physics_2_Common20 (copy).json item 1", "one label per expert")
    unnamed = [{k: v for k, v in judgement("q", "x", "y", "Answer A").items() if k != "annotator"}] * 2
    assert_names(error_of(write_json(tmp_path, "one.json", unnamed), "lfqa-eval"), "one.json item 2",
                 "the file one.json judged this pair already (at one.json item 1 ")


# --- summeval, topical-chat, qags, wikieval --------------------------------------------

def summeval_line(n: int) -> dict[str, Any]:
    scores = {"coherence": 1.0 * n, "consistency": 5.0, "fluency": 3.0, "relevance": 2.0}
    return {"src": f"article {n}", "ref_summs": ["r1", "r2"], "ref_summ": "r1",
            "sys_summs": {"M0": {"sys_summ": "s0", "scores": scores}, "M1": {"sys_summ": "s1", "scores": scores}}}


def test_summeval_documents_become_rated_items(tmp_path: Path) -> None:
    ds = load_dataset(write_jsonl(tmp_path, "summeval.jsonl", [summeval_line(1), summeval_line(2)]))
    assert ds.format == "summeval" and [i.id for i in ds.items] == ["doc1", "doc2"]
    item = ds.items[1]
    assert item.question == "Summarize the news article."
    assert (item.context, item.references) == (["article 2"], ["r1", "r2"])
    assert item.candidates == {"M0": "s0", "M1": "s1"} and item.gold.ratings["M1"]["coherence"] == 2.0


def test_summeval_errors(tmp_path: Path) -> None:
    line = summeval_line(1)
    del line["sys_summs"]["M1"]["sys_summ"]
    assert_names(error_of(write_jsonl(tmp_path, "s.jsonl", [summeval_line(2), line]), "summeval"),
                 "s.jsonl line 2 system 'M1'", "field 'sys_summ'")
    line = summeval_line(1)
    line["sys_summs"]["M0"]["scores"]["fluency"] = "good"
    assert_names(error_of(write_jsonl(tmp_path, "s.jsonl", [line]), "summeval"),
                 "line 1", "field 'gold.ratings.M0.fluency'")


def topical_record(dialog: int, system: str) -> dict[str, Any]:
    return {"source": f"hi \n hello {dialog} \n\n", "system_id": system, "system_output": f"{system} says",
            "context": f"fact {dialog}", "scores": {"naturalness": 2.0, "overall": 4.0}}


def test_topical_chat_groups_systems_by_dialogue(tmp_path: Path) -> None:
    records = [topical_record(2, "Argmax Decoding"), topical_record(1, "Argmax Decoding"),
               topical_record(2, "Original Ground Truth"), topical_record(1, "Original Ground Truth")]
    ds = load_dataset(write_json(tmp_path, "topical_chat.json", records))
    assert ds.format == "topical-chat" and [i.id for i in ds.items] == ["dialog1", "dialog2"]
    first = ds.items[0]
    assert first.question == "hi \n hello 2" and first.context == ["fact 2"] and first.references == []
    assert list(first.candidates) == ["Argmax Decoding", "Original Ground Truth"]
    assert first.gold.dimensions == ["naturalness", "overall"]


def test_topical_chat_errors(tmp_path: Path) -> None:
    records = [topical_record(1, "A"), topical_record(1, "A")]
    assert_names(error_of(write_json(tmp_path, "t.json", records), "topical-chat"),
                 "t.json item 2", "field 'system_id'")
    other = {**topical_record(1, "B"), "context": "another fact"}
    assert_names(error_of(write_json(tmp_path, "t.json", [topical_record(1, "A"), other]), "topical-chat"),
                 "item 2", "field 'context'", "item 1")


def qags_record(n: int) -> dict[str, Any]:
    return {"doc_id": n, "system_id": 0, "source": f"article {n}", "reference": f"article {n}",
            "system_output": "summary", "scores": {"consistency": 0.5}}


def test_qags_records_become_single_candidate_items(tmp_path: Path) -> None:
    ds = load_dataset(write_json(tmp_path, "qags_xsum.json", [qags_record(0), qags_record(1)]))
    assert ds.format == "qags" and [i.id for i in ds.items] == ["qags_xsum-1", "qags_xsum-2"]
    item = ds.items[1]
    assert item.references == [] and item.context == ["article 1"] and item.candidates == {"system": "summary"}
    assert item.gold == RatingsGold(ratings={"system": {"consistency": 0.5}})
    assert item.meta == {"doc_id": 1, "system_id": 0}


def test_qags_errors(tmp_path: Path) -> None:
    record = qags_record(0)
    del record["system_output"]
    assert_names(error_of(write_json(tmp_path, "q.json", [record]), "qags"), "q.json item 1", "field 'system_output'")


def test_a_unieval_set_with_a_human_reference_is_not_read_as_qags(tmp_path: Path) -> None:
    """UniEval's other sets (SummEval at summary level, data-to-text) share QAGS's shape but hold a real reference:
    such a file was detected as QAGS, its reference dropped and its coherence and relevance ratings read as QAGS's.
    It is not claimed as QAGS now, and read as QAGS it is refused at the record whose reference is not its article."""
    summaries = [{**qags_record(n), "reference": f"a human summary {n}",
                  "scores": {"coherence": 1.33, "relevance": 1.67}} for n in range(2)]
    path = write_json(tmp_path, "summeval_unieval.json", summaries)
    assert detect_format(path) != "qags"
    assert_names(error_of(path, "qags"), "summeval_unieval.json item 1", "field 'reference'",
                 "differs from the source article")
    later = write_json(tmp_path, "mixed.json", [qags_record(0), summaries[1]])
    assert_names(error_of(later, "qags"), "mixed.json item 2", "field 'reference'")


def wikieval_row() -> dict[str, Any]:
    return {"question": "Who?", "context": "line one \\nline two", "answer": "good", "ungrounded_answer": "made up",
            "poor_answer": "vague", "context_v1": "line one \\nline two", "context_v2": "off topic",
            "src_rows": {}, "derivation": {}}


def test_wikieval_rows_become_three_pairs(tmp_path: Path) -> None:
    ds = load_dataset(write_jsonl(tmp_path, "wikieval.jsonl", [wikieval_row(), wikieval_row()]))
    assert ds.format == "wikieval" and len(ds) == 6
    faith, relevance, context = ds.items[3:]
    assert [faith.id, relevance.id, context.id] == ["2-faithfulness", "2-answer_relevance", "2-context_relevance"]
    assert faith.candidates == {"answer": "good", "ungrounded_answer": "made up"}
    assert faith.context == ["line one \nline two"] and faith.references == []
    assert faith.gold == PairwiseGold(a="answer", b="ungrounded_answer", labels=["A"], pair_type="faithfulness")
    assert relevance.gold.b == "poor_answer" and relevance.gold.pair_type == "answer_relevance"
    assert context.candidates == {"context_v1": "line one \nline two", "context_v2": "off topic"}
    assert context.meta == {"compares": "context"} and context.gold.pair_type == "context_relevance"


def test_wikieval_errors(tmp_path: Path) -> None:
    row = wikieval_row()
    del row["poor_answer"]
    assert_names(error_of(write_jsonl(tmp_path, "w.jsonl", [wikieval_row(), row]), "wikieval"),
                 "w.jsonl line 2", "field 'poor_answer'")


# --- detection and dispatch -------------------------------------------------------------

@pytest.mark.parametrize(
    ("name", "writer", "expected"),
    [
        ("d.jsonl", lambda p: write_jsonl(p, "d.jsonl", NATIVE), "jsonl"),
        ("d.json", lambda p: write_json(p, "d.json", NATIVE), "json"),
        ("d.csv", lambda p: write(p, "d.csv", CSV), "csv"),
        ("m.json", lambda p: write_json(p, "m.json", MINOS, bom=True), "minos"),
        ("l.json", lambda p: write_json(p, "l.json", LINKAGE), "linkage"),
        ("w.json", lambda p: write(p, "w.json", json.dumps({"Q": webglm_entry((3, 2, 1))})), "linkage-webglm"),
        ("e.json", lambda p: write_json(p, "e.json", [lfqa_e_record(1, "same")]), "lfqa-e"),
        ("x.json", lambda p: write_json(p, "x.json", [judgement("q", "a", "b", "Answer A")]), "lfqa-eval"),
        ("s.jsonl", lambda p: write_jsonl(p, "s.jsonl", [summeval_line(1)]), "summeval"),
        ("t.json", lambda p: write_json(p, "t.json", [topical_record(1, "A")]), "topical-chat"),
        ("q.json", lambda p: write_json(p, "q.json", [qags_record(1)]), "qags"),
        ("k.jsonl", lambda p: write_jsonl(p, "k.jsonl", [wikieval_row()]), "wikieval"),
    ],
)
def test_detect_format(tmp_path: Path, name: str, writer: Any, expected: str) -> None:
    assert detect_format(writer(tmp_path)) == expected
    assert expected in FORMATS


def test_undetectable_and_unknown_formats(tmp_path: Path) -> None:
    text = write(tmp_path, "notes.txt", "just words")
    assert_names(error_of(text), "notes.txt", "cannot tell its format", *FORMATS)
    assert_names(error_of(write_json(tmp_path, "odd.json", {"a": 1})), "odd.json", "valid JSON, but not a shape qatui knows", "--format")
    assert_names(error_of(text, "yaml"), "unknown dataset format 'yaml'", "jsonl", "wikieval")
    assert_names(error_of(text, "jsonl", csv_mapping={"question": "q"}), "only to the csv format")
    assert_names(error_of(write(tmp_path, "empty.json", "")), "empty.json", "empty")
    folder = tmp_path / "folder"
    folder.mkdir()
    write_json(folder, "a.json", NATIVE)
    assert_names(error_of(folder), "folder", "lfqa-eval")
    assert_names(error_of(folder, "json"), "folder", "only the lfqa-eval format")


# --- the real files in ../shared/data ---------------------------------------------------

def real(shared_data: Path, relative: str) -> Path:
    path = shared_data / relative
    if not path.exists():
        pytest.skip(f"../shared/data/{relative} is not on this machine")
    return path


@pytest.mark.shared_data
def test_real_webglm(shared_data: Path) -> None:
    ds = load_dataset(real(shared_data, "LINKAGE_WebGLM/WEBGLM_50.json"))
    assert ds.format == "linkage-webglm" and len(ds) == 100
    assert all(len(i.candidates) == 3 and len(i.references) == 1 for i in ds.items)
    assert sum(len(i.gold.tiers) == 3 for i in ds.items) == 94
    assert sum("ground4" in i.meta["llm_references"] for i in ds.items) == 13


@pytest.mark.shared_data
def test_real_lfqa_eval(shared_data: Path) -> None:
    ds = load_dataset(real(shared_data, "LFQA-Eval_Xu2023"))
    assert ds.format == "lfqa-eval" and len(ds) == 140
    labels = [label for i in ds.items for label in i.gold.labels]
    assert (len(labels), labels.count("A"), labels.count("B")) == (260, 140, 120)
    per_pair = [len(i.gold.labels) for i in ds.items]
    assert (per_pair.count(1), per_pair.count(2), per_pair.count(3)) == (60, 40, 40)
    assert len({i.meta["q_id"] for i in ds.items}) == 124 and all(not i.references for i in ds.items)


@pytest.mark.shared_data
def test_real_summeval(shared_data: Path) -> None:
    ds = load_dataset(real(shared_data, "SummEval/summeval.jsonl"))
    assert ds.format == "summeval" and len(ds) == 100
    assert all(len(i.candidates) == 16 and len(i.references) == 11 for i in ds.items)
    assert ds.items[0].gold.dimensions == ["coherence", "consistency", "fluency", "relevance"]


@pytest.mark.shared_data
def test_real_topical_chat(shared_data: Path) -> None:
    ds = load_dataset(real(shared_data, "Topical-Chat/topical_chat.json"))
    assert ds.format == "topical-chat" and len(ds) == 60
    assert all(len(i.candidates) == 6 and len(i.gold.dimensions) == 6 for i in ds.items)


@pytest.mark.shared_data
@pytest.mark.parametrize(("name", "count"), [("qags_cnndm", 235), ("qags_xsum", 239)])
def test_real_qags(shared_data: Path, name: str, count: int) -> None:
    ds = load_dataset(real(shared_data, f"QAGS/{name}.json"))
    assert ds.format == "qags" and len(ds) == count
    assert all(i.references == [] and list(i.gold.ratings) == ["system"] for i in ds.items)


@pytest.mark.shared_data
def test_real_wikieval(shared_data: Path) -> None:
    ds = load_dataset(real(shared_data, "WikiEval/wikieval_by_construction.derived.jsonl"))
    assert ds.format == "wikieval" and len(ds) == 150
    assert sorted(i.gold.pair_type for i in ds.items)[::50] == ["answer_relevance", "context_relevance", "faithfulness"]


@pytest.mark.shared_data
def test_real_gaokao_minos(shared_data: Path) -> None:
    ds = load_dataset(real(shared_data, "GaokaoBench_Minos_v0_NO_RANK/GaoKao_Minos.json"))
    assert ds.format == "minos" and len(ds) == 405
    assert sum(i.question_type == "factoid" for i in ds.items) == 158
    assert all(i.gold is None and len(i.candidates) == 6 for i in ds.items)
    assert ds.languages.most_common(1)[0][0] == "zh"
