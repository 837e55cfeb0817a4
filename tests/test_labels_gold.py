"""People's labels as the gold of every view: `table`, `sessions compare`, a jury's members, `qatui report`,
each checked against figures computed by hand; and `labels import` all or nothing across files.

The dataset: three items whose gold is c1 > c2 > c3, with c1 the reference, c2 a part of it and
c3 unrelated but longest, so rouge-l ranks c1 > c2 > c3 and length c3 > c1 > c2 on every item.
People: ana ranks q1 c1 > c2 > c3, q2 c2 > c1 > c3, q3 c3 > c2 > c1; bo ranks q1 and q2 c1 > c2 > c3; di ranks
only q2, c1 > c2 > c3. Their majority (mean grades): q1 c1 > c2 > c3, q2 c1 > c2 > c3 (c1 2.5/3, c2 2/3; without
di, ana and bo split on it: no reference), q3 (ana alone) c3 > c2 > c1.
"""

from __future__ import annotations

import json

import pytest
from test_labels import held_open
from tui_support import run_headless

from qatui.cli import main
from qatui.cli.common import with_jury
from qatui.config import Config
from qatui.data.labels import Label
from qatui.data.loaders import load_dataset
from qatui.engine.jobs import start_run
from qatui.errors import LabelError
from qatui.report.label_files import export_rows, import_labels, write_rows
from qatui.store.labels import LabelStore
from qatui.store.session import SessionStore

REFERENCE = "the quick brown fox jumps over the lazy dog near the river bank"
CANDIDATES = {"c1": REFERENCE, "c2": "the quick brown fox jumps",
              "c3": "cats sleep all day long in the warm sunny kitchen window of an old house far away"}
ANA = {"q1": ["c1", "c2", "c3"], "q2": ["c2", "c1", "c3"], "q3": ["c3", "c2", "c1"]}
BO = {"q1": ["c1", "c2", "c3"], "q2": ["c1", "c2", "c3"]}
DI = {"q2": ["c1", "c2", "c3"]}
# Kendall tau-b per item, by hand: (concordant - discordant) / 3 between strict rankings of three;
ROUGE_ANA = (1 + 1 / 3 - 1) / 3            # c1>c2>c3 against ana: q1 +1, q2 +1/3, q3 -1
LENGTH_ANA = (-1 / 3 - 1 + 1 / 3) / 3      # c3>c1>c2 against ana: q1 -1/3, q2 -1, q3 +1/3
ROUGE_MAJORITY = (1 + 1 - 1) / 3           # q1 +1, q2 +1, q3 -1
LENGTH_MAJORITY = (-1 / 3 - 1 / 3 + 1 / 3) / 3


def ranking(item_id: str, order: list[str]) -> Label:
    return Label(item_id=item_id, kind="ranking", tiers=[[cid] for cid in order])


@pytest.fixture
def three(tmp_path):
    """The dataset, its store, finished rouge-l, length and jury (rouge-l + length) sessions, ana's and bo's labels."""
    path = tmp_path / "three.jsonl"
    items = [{"id": f"q{n}", "question": f"Question {n}?", "references": [REFERENCE], "candidates": CANDIDATES,
              "gold": {"kind": "ranking", "tiers": [["c1"], ["c2"], ["c3"]]}} for n in (1, 2, 3)]
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    dataset = load_dataset(str(path))
    store = SessionStore(tmp_path / "sessions")
    ids = {}
    for judge in ("rouge-l", "length"):
        job = start_run(store, dataset, [judge], Config(), name=judge)
        run_headless(job)
        ids[judge] = job.session.id
    job = start_run(store, dataset, ["jury"], with_jury(Config(), ["jury"], "rouge-l,length"), name="jury")
    run_headless(job)
    ids["jury"] = job.session.id
    meta = {"name": dataset.name, "path": dataset.path, "format": dataset.format, "content_hash": dataset.content_hash}
    for annotator, labels in (("ana", ANA), ("bo", BO), ("di", DI)):
        with LabelStore(store.root).open_pass(annotator, meta) as labelled:
            labelled.put_many([ranking(item_id, order) for item_id, order in labels.items()])
    return dataset, store, ids, meta


def run_json(capsys, *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_the_judges_rank_as_the_figures_assume(three) -> None:
    _, store, ids, _ = three
    assert {"".join(v.ranking) for v in store.open(ids["rouge-l"]).verdicts("rouge-l").values()} == {"c1c2c3"}
    assert {"".join(v.ranking) for v in store.open(ids["length"]).verdicts("length").values()} == {"c3c1c2"}
    assert {"".join(v.ranking) for v in store.open(ids["jury"]).verdicts("jury").values()} == {"c1c3c2"}


def test_table_against_one_annotator_equals_the_hand_computation(three, capsys) -> None:
    dataset, store, _, _ = three
    root = str(store.root)
    table = run_json(capsys, "--sessions-dir", root, "table", dataset.path, "--judge", "rouge-l", "--judge", "length",
                     "--gold", "annotator:ana", "--json")
    assert table["gold_source"] == "annotator:ana"
    rouge, length = table["rows"]
    assert rouge["reused"] and length["reused"]  # measured again, never run again
    assert rouge["metrics"]["kendall"] == pytest.approx(ROUGE_ANA)  # 1/9
    assert length["metrics"]["kendall"] == pytest.approx(LENGTH_ANA)  # -1/3
    assert length["vs_baseline"]["key"] == "kendall"
    assert length["vs_baseline"]["delta"] == pytest.approx(LENGTH_ANA - ROUGE_ANA)  # -4/9, paired on 3 items
    assert rouge["coverage"]["scored"] == 3
    bo = run_json(capsys, "--sessions-dir", root, "table", dataset.path, "--judge", "rouge-l",
                  "--gold", "annotator:bo", "--json")
    assert bo["rows"][0]["metrics"]["kendall"] == pytest.approx(1.0)  # bo agrees with rouge-l on both his items
    assert bo["rows"][0]["n"]["kendall"] == 2  # q3 unlabelled by bo: not scored
    assert main(["--sessions-dir", root, "table", dataset.path, "--judge", "rouge-l", "--gold", "annotator:cy"]) == 2
    assert "annotator 'cy' has labelled no item of three" in capsys.readouterr().err


def test_compare_against_the_majority_equals_the_hand_computation(three, capsys) -> None:
    _, store, ids, _ = three
    root = str(store.root)
    data = run_json(capsys, "--sessions-dir", root, "sessions", "compare", ids["rouge-l"], ids["length"],
                    "--gold", "majority", "--json")
    assert data["gold"] == "gold: the annotators' majority of 3 annotators, 3 of 3 items labelled"
    rouge, length = data["runs"]
    assert rouge["metrics"]["kendall"] == pytest.approx(ROUGE_MAJORITY)  # +1/3
    assert length["metrics"]["kendall"] == pytest.approx(LENGTH_MAJORITY)  # -1/9
    rows = data["table"]["rows"]
    assert [row["metrics"]["kendall"] for row in rows] == pytest.approx([ROUGE_MAJORITY, LENGTH_MAJORITY])
    assert data["agreement"][0]["stats"]["kendall"] == pytest.approx(-1 / 3)  # between the runs: no gold involved
    assert main(["--sessions-dir", root, "sessions", "compare", ids["rouge-l"], ids["length"], "--gold", "majority"]) == 0
    assert "the annotators' majority of 3 annotators" in capsys.readouterr().out
    dataset = run_json(capsys, "--sessions-dir", root, "sessions", "compare", ids["rouge-l"], ids["length"], "--json")
    assert [run["metrics"]["kendall"] for run in dataset["runs"]] == pytest.approx([1.0, -1 / 3])


def test_a_jurys_members_are_measured_against_the_chosen_gold(three, capsys) -> None:
    _, store, ids, _ = three
    root = str(store.root)
    stored = run_json(capsys, "--sessions-dir", root, "sessions", "show", ids["jury"], "--json")["judges"]["jury"]
    ana = run_json(capsys, "--sessions-dir", root, "sessions", "show", ids["jury"], "--gold", "annotator:ana",
                   "--json")["judges"]["jury"]
    assert stored["members"]["rouge-l"]["metrics"]["kendall"] == pytest.approx(1.0)
    assert ana["members"]["rouge-l"]["metrics"]["kendall"] == pytest.approx(ROUGE_ANA)
    assert ana["members"]["length"]["metrics"]["kendall"] == pytest.approx(LENGTH_ANA)
    # the jury c1 > c3 > c2 against ana: q1 +1/3, q2 -1/3, q3 -1/3
    assert ana["metrics"]["kendall"] == pytest.approx(-1 / 9)
    assert ana["members_agreement"] == stored["members_agreement"]  # between members: no gold involved
    majority = run_json(capsys, "--sessions-dir", root, "sessions", "show", ids["jury"], "--gold", "majority",
                        "--json")["judges"]["jury"]
    assert majority["members"]["length"]["metrics"]["kendall"] == pytest.approx(LENGTH_MAJORITY)


def test_the_report_measures_against_the_gold_it_names(three, tmp_path, capsys) -> None:
    _, store, ids, _ = three
    root = str(store.root)
    out = tmp_path / "ana.html"
    assert main(["--sessions-dir", root, "report", ids["rouge-l"], ids["length"], "--gold", "annotator:ana",
                 "-o", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert "measured against annotator ana" in html  # the subtitle
    assert "<td>gold</td><td>annotator ana, 3 of 3 items labelled</td>" in html  # each session's settings
    assert "gold: annotator ana, 3 of 3 items labelled" in html  # the comparison
    kendall = '<td>kendall</td><td class="num">{:.3f}</td>'.format
    assert kendall(ROUGE_ANA) in html and kendall(1.0) not in html  # rouge-l: 0.111, not the dataset's 1.000
    plain = tmp_path / "dataset.html"
    assert main(["--sessions-dir", root, "report", ids["rouge-l"], "-o", str(plain)]) == 0
    assert kendall(1.0) in plain.read_text(encoding="utf-8")
    refused = tmp_path / "refused.html"
    capsys.readouterr()
    assert main(["--sessions-dir", root, "report", ids["rouge-l"], "--gold", "annotator:cy", "-o", str(refused)]) == 2
    assert "annotator 'cy' has labelled no item" in capsys.readouterr().err and not refused.exists()
    assert main(["--sessions-dir", root, "report", ids["rouge-l"], "--gold", "people", "-o", str(refused)]) == 2
    assert not refused.exists()


def label_file(three, tmp_path, *annotators: str) -> object:
    """ana's labels exported, then given to each of `annotators` in turn (their rows in that order)."""
    _, store, _, _ = three
    rows = export_rows(LabelStore(store.root), ["ana"])
    path = tmp_path / "labels.jsonl"
    write_rows([{**row, "annotator": name} for name in annotators for row in rows], path)
    return path


def snapshot(root) -> dict[str, bytes]:
    """Every file under the labels folder, with its bytes, but the writers' lock files (empty, kept: no labels)."""
    folder = root / "labels"
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.relative_to(folder).parts[0] != ".locks"}


def test_an_import_failing_on_its_second_file_leaves_no_new_label_file(three, tmp_path, capsys) -> None:
    """new-1's file is created and bo's rewritten before cy's cannot be opened: both are put back as they were."""
    dataset, store, _, _ = three
    path = label_file(three, tmp_path, "new-1", "bo", "cy")
    (store.root / "labels" / "cy").write_text("not a folder")  # cy's labels cannot be written
    before = snapshot(store.root)
    with pytest.raises(LabelError, match="nothing was imported"):
        import_labels(LabelStore(store.root), path)
    assert snapshot(store.root) == before  # bo's file byte for byte, and no file of new-1
    assert not (store.root / "labels" / "new-1").exists()
    assert main(["--sessions-dir", str(store.root), "labels", "import", str(path)]) == 2
    assert "nothing was imported" in capsys.readouterr().err
    assert snapshot(store.root) == before
    (store.root / "labels" / "cy").unlink()
    assert import_labels(LabelStore(store.root), path) == {"rows": 9, "new": 7, "replaced": 2, "files": 3}
    labels = LabelStore(store.root).labels_of(dataset.content_hash)
    assert labels["new-1"] == labels["cy"] == labels["ana"]
    assert labels["bo"]["q2"].tiers == [["c2"], ["c1"], ["c3"]]  # replaced by ana's


def test_an_import_meeting_a_live_writer_touches_no_file(three, tmp_path) -> None:
    """bo's labels are open in another live process: refused with its pid, new-1's new file removed."""
    _, store, _, meta = three
    path = label_file(three, tmp_path, "new-1", "bo")
    with held_open(store.root, "bo", meta) as pid:
        before = snapshot(store.root)
        with pytest.raises(LabelError, match=f"open in process {pid}.*nothing was imported"):
            import_labels(LabelStore(store.root), path)
        assert snapshot(store.root) == before
        assert not (store.root / "labels" / "new-1").exists()
