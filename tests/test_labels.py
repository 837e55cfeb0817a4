"""People's labels: the store (atomic, locked, kill-safe), the gold layer, agreement figures, label files."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import pytest
from tui_support import run_headless

from qatui.cli import main
from qatui.config import Config
from qatui.data.labels import DEFAULT_SCALE, Label, LabelRules, majority_gold, parse_label
from qatui.data.loaders import load_dataset
from qatui.data.model import RankingGold
from qatui.engine.jobs import start_run
from qatui.errors import LabelError
from qatui.metrics import summarize
from qatui.metrics.people import gold_decisions, rater_agreement, verdict_decisions
from qatui.report.gold import with_gold
from qatui.report.label_files import export_rows, import_labels, write_rows
from qatui.store.labels import LabelPass, LabelStore
from qatui.store.session import SessionStore

REFERENCE = "the cat sat on the mat"
ITEMS = [
    {"id": "q1", "question": "Where did the cat sit?", "references": [REFERENCE],
     "candidates": {"c1": REFERENCE, "c2": "the cat sat", "c3": "dogs bark loudly"},
     "gold": {"kind": "ranking", "tiers": [["c1"], ["c2"], ["c3"]]}},
    {"id": "q2", "question": "Which is better?", "references": [REFERENCE],
     "candidates": {"a": REFERENCE, "b": "dogs bark"},
     "gold": {"kind": "pairwise", "a": "a", "b": "b", "labels": ["A"]}},
]


@pytest.fixture
def data(tmp_path):
    """A two-item dataset (a 3-response ranking, a pair), its store, and a finished rouge-l session of it."""
    path = tmp_path / "small.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in ITEMS), encoding="utf-8")
    dataset = load_dataset(str(path))
    store = SessionStore(tmp_path / "sessions")
    job = start_run(store, dataset, ["rouge-l"], Config())
    run_headless(job)
    meta = {"name": dataset.name, "path": dataset.path, "format": dataset.format, "content_hash": dataset.content_hash}
    return dataset, store, job.session, meta


def ranking(item_id: str, *tiers: list[str]) -> Label:
    return Label(item_id=item_id, kind="ranking", tiers=list(tiers))


def pair(preference: str) -> Label:
    return Label(item_id="q2", kind="pairwise", a="a", b="b", preference=preference)


def give(store: SessionStore, meta: dict, annotator: str, *labels: Label) -> None:
    with LabelStore(store.root).open_pass(annotator, meta) as labelled:
        labelled.put_many(list(labels))


def test_labels_persist_per_annotator_and_the_labels_folder_is_no_session(data) -> None:
    dataset, store, session, meta = data
    give(store, meta, "ana", ranking("q1", ["c2"], ["c1"], ["c3"]))
    give(store, meta, "ana", ranking("q1", ["c1", "c2"], ["c3"]), pair("B"))  # a later label replaces the earlier
    labels = LabelStore(store.root).labels_of(dataset.content_hash)
    assert labels["ana"]["q1"].tiers == [["c1", "c2"], ["c3"]] and labels["ana"]["q2"].preference == "B"
    assert [entry["id"] for entry in store.list()] == [session.id]  # labels/ is not listed as a damaged session
    with pytest.raises(LabelError, match="letters, digits"):
        LabelStore(store.root).open_pass("../evil", meta)
    # "Ana" would share ana's folder on a case-insensitive disk: her labels read as ana's
    with pytest.raises(LabelError, match="'Ana' differs from 'ana' only in case"):
        LabelStore(store.root).open_pass("Ana", meta)
    with pytest.raises(LabelError, match="only in case"), LabelStore(store.root).writing([("bo", meta), ("Bo", meta)]):
        pass
    assert LabelStore(store.root).annotators() == ["ana"]  # the refused pair wrote nothing


HOLDER = textwrap.dedent("""
    import sys
    from qatui.store.labels import LabelStore
    meta = {"name": sys.argv[3], "path": "x", "format": "jsonl", "content_hash": sys.argv[4]}
    labels = LabelStore(sys.argv[1]).open_pass(sys.argv[2], meta)
    print("open", flush=True)
    sys.stdin.read()  # held until the test lets go (or kills it)
""")


@contextmanager
def held_open(root: Path, annotator: str, meta: dict) -> Iterator[int]:
    """`annotator`'s labels of `meta`'s dataset open for writing in another live process (its pid), SIGKILLed on
    leaving: however it dies, the OS lets its lock go."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(root), annotator, meta["name"],
                               meta["content_hash"]], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              cwd=Path(__file__).parents[1])
    try:
        assert holder.stdout.readline().strip() == "open"
        yield holder.pid
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
        holder.stdin.close()
        holder.stdout.close()


def test_a_second_writer_is_refused_while_the_first_lives_and_a_dead_one_leaves_no_lock(data) -> None:
    _, store, _, meta = data
    give(store, meta, "ana", pair("A"))
    with held_open(store.root, "ana", meta) as pid:
        with pytest.raises(LabelError, match=f"open in process {pid}, which is still running"):
            LabelStore(store.root).open_pass("ana", meta)
        with pytest.raises(LabelError, match=f"open in process {pid}"), LabelStore(store.root).writing([("ana", meta)]):
            pass
    LabelStore(store.root).open_pass("ana", meta).close()
    assert LabelStore(store.root).annotators() == ["ana"]  # the lock files are no annotator


SYNCED = textwrap.dedent("""
    import sys
    import qatui.cli, qatui.report.label_files, qatui.store.labels, qatui.data.loaders  # imported before the start
    sys.argv = ["qatui", *sys.argv[1:]]
    print("ready", flush=True)
    sys.stdin.readline()  # the start: given to both once both are ready
    raise SystemExit(qatui.cli.console())
""")


def test_two_label_imports_at_the_same_moment_never_lose_one_s_labels(tmp_path) -> None:
    """Two `qatui labels import` of one person's labels of one dataset, started at the same instant, eight times:
    each either imports all its labels or is refused naming the other (the lock was a pid in the file's meta, read
    then written: both read before either wrote, both said "imported 20", and the file held one's 20)."""
    from qatui.data.loaders import load_dataset

    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps({"id": f"q{n}", "question": f"Question {n}?", "references": ["r"],
                                        "candidates": {"a": "x", "b": "y"}}) + "\n" for n in range(40)),
                    encoding="utf-8")
    dataset = load_dataset(str(path))
    halves = []
    for half, label in ((range(20), "A"), (range(20, 40), "B")):
        rows = [{"annotator": "ana", "dataset": dataset.content_hash, "dataset_name": dataset.name,
                 "dataset_path": str(path), "format": dataset.format, "item_id": f"q{n}", "kind": "pairwise",
                 "label": label, "a": "a", "b": "b", "updated": ""} for n in half]
        halves.append(tmp_path / f"labels-{label}.jsonl")
        halves[-1].write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    refused = 0
    for trial in range(8):
        sessions = tmp_path / f"sessions-{trial}"
        imports = [subprocess.Popen([sys.executable, "-c", SYNCED, "--sessions-dir", str(sessions), "labels",
                                     "import", str(half)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, cwd=Path(__file__).parents[1])
                   for half in halves]
        assert [child.stdout.readline() for child in imports] == ["ready\n"] * 2  # both have imported qatui
        for child in imports:  # then both start at once
            child.stdin.write("go\n")
            child.stdin.flush()
        done = [(child.wait(timeout=120), *child.communicate()) for child in imports]
        imported = set()
        for (code, out, err), label in zip(done, "AB"):
            assert code in (0, 2) and "Traceback" not in err, (code, out, err)
            if code == 0:
                imported.add(label)
            else:
                refused += 1
                assert "two writers would lose labels" in err and len(err.strip().splitlines()) == 1, err
        assert imported, done  # one of the two at least
        labels = LabelStore(sessions).labels_of(dataset.content_hash)["ana"]
        assert sorted({label.preference for label in labels.values()}) == sorted(imported), (trial, done)
        assert len(labels) == 20 * len(imported), (trial, done)
    print(f"refused {refused} of 16 imports")


WRITER = textwrap.dedent("""
    import sys
    from datetime import datetime, timedelta, timezone
    from qatui.data.labels import Label
    from qatui.store.labels import LabelStore
    meta = {"name": "x", "path": "x", "format": "jsonl", "content_hash": "h" * 64}
    labels = LabelStore(sys.argv[1]).open_pass("ana", meta)
    n = 0
    while True:  # the label's time counts the labels saved: second n after the start of 2026
        when = (datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=n)).isoformat()
        labels.put(Label(item_id=f"i{n % 400}", kind="pairwise", a="a", b="b", preference="AB"[n % 2] ,
                         updated=when))
        print(n, flush=True)
        n += 1
""")


def test_kill_9_mid_write_leaves_every_saved_label_loadable(tmp_path) -> None:
    """A writer saving labels as fast as it can, SIGKILLed 6 times: the file always loads with every reported label."""
    for kill in range(6):
        child = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], stdout=subprocess.PIPE, text=True,
                                 cwd=Path(__file__).parents[1])
        reported = -1
        deadline = time.monotonic() + 0.3 + 0.2 * kill
        while time.monotonic() < deadline or reported < 5:
            reported = int(child.stdout.readline())
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        child.stdout.close()
        reader = LabelPass(LabelStore(tmp_path).path("ana", "h" * 64), "ana")
        labels = reader.labels()
        reader.close()
        last = labels[f"i{reported % 400}"]
        saved = datetime.fromisoformat(last.updated) - datetime(2026, 1, 1, tzinfo=timezone.utc)
        assert int(saved.total_seconds()) >= reported  # the last label reported saved is there (or a newer one)
        assert len(labels) >= min(reported + 1, 400)


def test_gold_layer_metrics_against_hand_computation(data) -> None:
    """rouge-l ranks c1 > c2 > c3; against a person's c2 > c1 > c3, tau = (2 - 1) / 3; against c1 = c2 > c3, tau-b = 2 / sqrt(6)."""
    dataset, store, session, meta = data
    verdicts = session.verdicts("rouge-l")
    assert verdicts["q1"].ranking == ["c1", "c2", "c3"]
    give(store, meta, "ana", ranking("q1", ["c2"], ["c1"], ["c3"]), pair("B"))
    give(store, meta, "bo", ranking("q1", ["c1", "c2"], ["c3"]), pair("A"))
    give(store, meta, "cy", pair("A"))
    ana, line = with_gold(dataset, "annotator:ana", store.root)
    assert line == "gold: annotator ana, 2 of 2 items labelled"
    metrics = summarize(ana.items, verdicts, ci=False).metrics
    assert metrics["kendall"] == pytest.approx(1 / 3) and metrics["accuracy"] == 0.0  # rouge-l prefers a: A
    assert summarize(with_gold(dataset, "annotator:bo", store.root)[0].items, verdicts).metrics["kendall"] == \
        pytest.approx(2 / 6 ** 0.5)
    majority, line = with_gold(dataset, "majority", store.root)
    assert line == "gold: the annotators' majority of 3 annotators, 2 of 2 items labelled"
    assert majority.items[1].gold.labels == ["A"]  # B, A, A
    # ranking majority: mean grades c1 (0.5 + 1) / 2, c2 (1 + 1) / 2, c3 0: c2 > c1 > c3
    assert majority.items[0].gold.tiers == [["c2"], ["c1"], ["c3"]]
    assert main(["--sessions-dir", str(store.root), "sessions", "show", session.id, "--gold", "annotator:ana",
                 "--json"]) == 0
    with pytest.raises(LabelError, match="has labelled no item"):
        with_gold(dataset, "annotator:nobody", store.root)


def test_majority_of_rankings_ties_equal_means_people_tied_and_gives_none_where_they_split() -> None:
    item = load_item()
    apart = [ranking("q1", ["c1"], ["c2"], ["c3"]), ranking("q1", ["c2"], ["c1"], ["c3"])]
    assert majority_gold(item, apart) is None  # c1 = c2 would be nobody's ranking
    tied = [ranking("q1", ["c1", "c2"], ["c3"]), ranking("q1", ["c2", "c1"], ["c3"])]
    assert majority_gold(item, tied) == RankingGold(tiers=[["c1", "c2"], ["c3"]])


def load_item():
    from qatui.data.model import Item

    return Item.model_validate(ITEMS[0])


def test_agreement_figures_against_hand_computation() -> None:
    """Units: 3 pairs of q1 and the pair of q2. X codes 0,0,0,0; Y 2,0,0,0; Z as X.

    Two raters, Cohen's kappa: po = 3/4, pe = 1 * 3/4 (X always 0, Y 0 three times in four), kappa = 0. (Fleiss'
    would be Scott's pi: P = 3/4, p0 = 7/8, p2 = 1/8, Pe = 50/64, (0.75 - 50/64) / (14/64) = -1/7, another figure
    under the name kappa, beside the human ceiling's Cohen's kappa on the same units.)
    Three raters, Fleiss' kappa: P = (1/3 + 1 + 1 + 1) / 4 = 5/6, p0 = 11/12, p2 = 1/12, Pe = 122/144,
    kappa = (120/144 - 122/144) / (22/144) = -1/11.
    Krippendorff (nominal), X and Y: o00 = 6, o02 = o20 = 1, n = 8, Do = 2/8, De = 2*7*1 / (8*7) = 1/4, alpha = 0.
    """
    x = gold_decisions("q1", RankingGold(tiers=[["c1"], ["c2"], ["c3"]])) | gold_decisions("q2", pair("A").as_gold())
    y = gold_decisions("q1", RankingGold(tiers=[["c2"], ["c1"], ["c3"]])) | gold_decisions("q2", pair("A").as_gold())
    assert x[("q1", "c1", "c2")] == 0.0 and y[("q1", "c1", "c2")] == 2.0
    figures = rater_agreement({"x": x, "y": y})
    assert figures["kappa"] == pytest.approx(0.0) and figures["kappa_of"] == "Cohen"
    assert figures["alpha"] == pytest.approx(0.0)
    assert figures["n_units"] == 4 and figures["n_complete"] == 4
    three = rater_agreement({"x": x, "y": y, "z": dict(x)})
    assert three["kappa"] == pytest.approx(-1 / 11) and three["kappa_of"] == "Fleiss"


def test_people_and_judges_agreement_command(data, capsys) -> None:
    dataset, store, session, meta = data
    item = dataset.items[0]
    assert verdict_decisions(item, session.verdicts("rouge-l")["q1"]) == {
        ("q1", "c1", "c2"): 0.0, ("q1", "c1", "c3"): 0.0, ("q1", "c2", "c3"): 0.0}
    give(store, meta, "ana", ranking("q1", ["c1"], ["c2"], ["c3"]), pair("A"))
    give(store, meta, "bo", ranking("q1", ["c1"], ["c2"], ["c3"]), pair("A"))
    assert main(["--sessions-dir", str(store.root), "labels", "agreement", dataset.path, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["annotators"] == {"ana": 2, "bo": 2}
    assert out["people"]["n_units"] == 4  # every decision the same: alpha is undefined (one value), kappa too
    rows = {(r["judge"], r["annotator"]): r for r in out["judges"]}
    assert rows[("rouge-l", "ana")]["metric"] == "kendall" and rows[("rouge-l", "ana")]["value"] == 1.0


def test_a_judge_s_kappa_with_a_person_is_the_kappa_of_the_ceiling_beside_it(data, capsys) -> None:
    """Three people who agree with each other; each one's references (the others' majority) are their own labels.
    The judge's kappa with each person was Fleiss' (Scott's pi, with two raters) while the line above it gave
    Cohen's "against the same references": two statistics under one name on one screen. Both are Cohen's now."""
    dataset, store, _, meta = data
    for name in ("ana", "bo", "cy"):  # rouge-l ranks c1 > c2 > c3 and prefers a: people differ on one decision
        give(store, meta, name, ranking("q1", ["c2"], ["c1"], ["c3"]), pair("A"))
    assert main(["--sessions-dir", str(store.root), "labels", "agreement", dataset.path, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    beside = out["beside_people"][0]
    assert {row["kappa_of"] for row in out["judges"]} == {"Cohen"} and out["people"]["kappa_of"] == "Fleiss"
    assert [row["kappa"] for row in out["judges"]] == pytest.approx([beside["kappa"]] * 3)
    # the judge says "first better" on all 4 units, people on 3: po 3/4, pe 3/4 (Fleiss' would give -1/7)
    assert beside["kappa"] == pytest.approx(0.0)
    assert main(["--sessions-dir", str(store.root), "labels", "agreement", dataset.path]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "each judge with each person (kappa: Cohen's)" in text and "people: alpha" in text
    assert f"Cohen's kappa {beside['kappa']:.3f}, accuracy" in text, text


def test_export_import_round_trip_in_both_formats(data, tmp_path) -> None:
    dataset, store, _, meta = data
    give(store, meta, "ana", ranking("q1", ["c2", "c1"], ["c3"]), pair("tie"))
    for suffix in ("csv", "jsonl"):
        out = tmp_path / f"ana.{suffix}"
        assert main(["--sessions-dir", str(store.root), "labels", "export", "--annotator", "ana", "-o", str(out)]) == 0
        other = SessionStore(tmp_path / f"other-{suffix}")
        assert import_labels(LabelStore(other.root), out) == {"rows": 2, "new": 2, "replaced": 0, "files": 1}
        mine = LabelStore(store.root).labels_of(dataset.content_hash)["ana"]
        theirs = LabelStore(other.root).labels_of(dataset.content_hash)["ana"]
        assert theirs == mine


@pytest.mark.parametrize(("change", "message"), [
    ({"item_id": "q9"}, "line 2: item_id 'q9' is not an item of small"),
    ({"label": "c1>c2"}, "line 2: label of item q1: a ranking must name every response once"),
    ({"label": "c1>c1>c3"}, "line 2: label of item q1: "),
    ({"kind": "stars"}, "line 2: label of item q1: kind is ranking, pairwise or ratings"),
    ({"dataset": "0" * 64}, "line 2: dataset 0000000000000000… is not small as it is now"),
    ({"annotator": "a b"}, "line 2: annotator 'a b'"),
    ({"label": ""}, "line 2: missing label"),
    # `updated` is shown and exported: a time, never an escape sequence or a formula that rides along
    ({"updated": "\x1b]0;pwned\x07"}, "line 2: label of item q1: "),
    ({"updated": "=HYPERLINK(\"http://x\")"}, "updated is an ISO 8601 time"),
])
def test_a_bad_row_is_named_and_nothing_is_imported(data, tmp_path, change, message) -> None:
    dataset, store, _, meta = data
    give(store, meta, "ana", ranking("q1", ["c1"], ["c2"], ["c3"]), pair("A"))
    rows = export_rows(LabelStore(store.root), ["ana"])
    rows = sorted(({**row, "annotator": "new"} for row in rows), key=lambda row: row["item_id"] == "q1")
    rows[1] = {**rows[1], **change}  # line 2 of the JSONL file: the ranking item, changed
    path = tmp_path / "bad.jsonl"
    write_rows(rows, path)
    fresh = SessionStore(tmp_path / "fresh")
    with pytest.raises(LabelError) as error:
        import_labels(LabelStore(fresh.root), path)
    assert str(path) in str(error.value) and message in str(error.value)
    assert LabelStore(fresh.root).labels_of(dataset.content_hash) == {}  # the good row went nowhere either
    assert main(["--sessions-dir", str(fresh.root), "labels", "import", str(path)]) == 2


@pytest.mark.parametrize("edit", ["extra", "short"])
def test_a_csv_row_with_more_or_fewer_cells_than_the_header_is_refused(data, tmp_path, capsys, edit) -> None:
    """A CSV row's cells past the header were dropped without a word (an unquoted label cut short imported as
    something else), and a short row read its last columns as empty: both refused, naming the line."""
    dataset, store, _, meta = data
    give(store, meta, "ana", ranking("q1", ["c1"], ["c2"], ["c3"]), pair("A"))
    path = tmp_path / "ana.csv"
    write_rows(export_rows(LabelStore(store.root), ["ana"]), path)
    lines = path.read_text().splitlines()
    lines[2] = lines[2] + ",c1>c3" if edit == "extra" else lines[2].rsplit(",", 1)[0]
    path.write_text("\n".join(lines) + "\n")
    fresh = SessionStore(tmp_path / "fresh")
    assert main(["--sessions-dir", str(fresh.root), "labels", "import", str(path)]) == 2
    cells = 12 if edit == "extra" else 10
    assert f"ana.csv, line 3: {cells} cells where the header names 11 columns" in capsys.readouterr().err
    assert LabelStore(fresh.root).labels_of(dataset.content_hash) == {}


def test_parse_label_reads_every_kind() -> None:
    from qatui.data.model import Item

    rated = Item.model_validate({"id": "d", "question": "q", "candidates": {"s1": "x", "s2": "y"},
                                 "gold": {"kind": "ratings", "ratings": {"s1": {"coherence": 4.0}}}})
    rules = LabelRules(None, DEFAULT_SCALE)
    label = parse_label(rated, "ratings", '{"s1": {"coherence": 2}, "s2": {"coherence": 5}}', rules)
    assert label.as_gold().ratings["s2"]["coherence"] == 5.0
    assert parse_label(load_item(), "ranking", "c3 > c1=c2", rules).tiers == [["c3"], ["c1", "c2"]]
    with pytest.raises(ValueError, match="unknown responses"):
        parse_label(rated, "ratings", '{"s9": {"coherence": 2}}', rules)


def test_an_import_names_a_sessions_folder_holding_markup_as_typed(data, tmp_path, capsys) -> None:
    """`labels import` says where it wrote: a sessions folder named `[bold red]...` or `[link=...]` is shown as its
    name, never read as markup (a bold word, a hyperlink to a file)."""
    dataset, store, _, meta = data
    give(store, meta, "ana", ranking("q1", ["c2", "c1"], ["c3"]), pair("tie"))
    out = tmp_path / "ana.jsonl"
    assert main(["--sessions-dir", str(store.root), "labels", "export", "--annotator", "ana", "-o", str(out)]) == 0
    folder = tmp_path / "theirs [bold red]R [link=https:evil]L"
    capsys.readouterr()
    assert main(["--sessions-dir", str(folder), "labels", "import", str(out)]) == 0
    said = " ".join(capsys.readouterr().err.split())
    assert "imported 2 labels (2 new, 0 replaced)" in said and "theirs [bold red]R [link=https:evil]L" in said, said


@pytest.mark.parametrize(("bad", "message"), [
    (ranking("q1", ["c1"], ["c2"]), "label of item 'q1': a ranking must name every response once"),
    (Label(item_id="q2", kind="ranking", tiers=[["a"], ["b"]]),
     "label of item 'q2': item 'q2' is labelled with a pairwise label, not a ranking one"),
    (Label(item_id="q2", kind="pairwise", a="b", b="a", preference="A"), "label of item 'q2': the pair is"),
    (ranking("q9", ["c1"], ["c2"], ["c3"]), "label of item 'q9', which small has not"),
])
def test_a_stored_label_that_does_not_fit_its_item_is_refused_by_every_measure(data, capsys, bad, message) -> None:
    """A label file is only checked as labels when read; one edited by hand or written by another tool could leave
    a response out of a ranking (its mean grade then counts it last), rank a pair's two responses (measured as a
    ranking against judges that said A or B), flip a pair, or label an item the dataset has not: each measure
    against people refuses it, naming the file and the item, before any figure."""
    dataset, store, session, meta = data
    give(store, meta, "bo", ranking("q1", ["c1"], ["c2"], ["c3"]), pair("A"))
    give(store, meta, "ana", bad)
    where = str(LabelStore(store.root).path("ana", dataset.content_hash))
    for gold in ("majority", "annotator:bo"):  # bo's own labels are fine, yet ana's file is read with them
        with pytest.raises(LabelError) as error:
            with_gold(dataset, gold, store.root)
        assert where in str(error.value) and message in str(error.value)
    capsys.readouterr()
    assert main(["--sessions-dir", str(store.root), "labels", "agreement", dataset.path]) == 2
    assert message in " ".join(capsys.readouterr().err.split())
    assert main(["--sessions-dir", str(store.root), "sessions", "show", session.id, "--gold", "majority"]) == 2
    assert message in " ".join(capsys.readouterr().err.split())
    # against the dataset's gold the session and the table are still read, saying the ceiling beside them is not
    for command in (["sessions", "show", session.id], ["table", dataset.path, "--judge", "rouge-l"]):
        assert main(["--sessions-dir", str(store.root), *command]) == 0
        out, err = capsys.readouterr()
        assert "rouge-l" in out and f"humanceilingnotshown:{where}" in "".join(err.split()), err  # wrapped lines


def test_a_run_on_the_first_items_reads_the_labels_of_the_rest_as_fitting(data) -> None:
    """A session's items are the first `--limit` of its file: people's labels of the items past them are labels of
    that file, not strays (`Dataset.whole`), and the rules a label follows are the whole file's."""
    dataset, store, _, meta = data
    give(store, meta, "ana", ranking("q1", ["c2"], ["c1"], ["c3"]), pair("B"))
    relabelled, line = with_gold(dataset.limited(1), "annotator:ana", store.root)
    assert [item.id for item in relabelled.items] == ["q1"] and relabelled.items[0].gold.tiers == [["c2"], ["c1"],
                                                                                                    ["c3"]]
    assert "1 of 1 items labelled" in line


TWO_RATED = [{"id": f"r{n}", "question": f"Summarise text {n}.", "references": ["a text"],
              "candidates": {"s1": "one", "s2": "two"},
              "gold": {"kind": "ratings", "ratings": {"s1": {"coherence": 1.6, "fluency": 4.0},
                                                      "s2": {"coherence": 4.4, "fluency": 7.2}}}} for n in (1, 2)]


@pytest.mark.parametrize(("ratings", "scale", "message"), [
    ({"s1": {"coherence": 44}}, None, "line 1: label of item r1: response s1's coherence rating 44 is off the "
                                      "scale 1-8"),
    ({"s1": {"coherence": 0.5}}, None, "rating 0.5 is off the scale 1-8"),
    ({"s1": {"coherence": 9}}, None, "rating 9 is off the scale 1-8"),  # the gold's 7.2 widens 1-5 to 1-8, no more
    ({"s1": {"coherence": 44}}, "1-10", "rating 44 is off the scale 1-10"),
    ({"s1": {"relevance": 3}}, None, "line 1: label of item r1: response s1 is rated on 'relevance', not a "
                                     "dimension of this item (coherence, fluency)"),
    ({"s1": {"coherence": 5}}, "5-1", "a scale's LOW is below its HIGH"),
    ({"s1": {"coherence": 5}}, "1-1e9", "a scale is LOW-HIGH"),
    ({"s1": {"coherence": 5}}, "0-2000", "HIGH at most 1000"),
])
def test_an_imported_rating_is_on_the_scale_and_its_dimensions_are_the_items(tmp_path, capsys, ratings, scale,
                                                                            message) -> None:
    """`labels import` took any finite number as a rating (a 44 for a 4 moved every mean against people) and any
    dimension name (a rating nobody measures against): the scale is 1-5 widened to hold the dataset's gold ratings
    in whole numbers (up to 7.2: 1-8) unless `--scale LOW-HIGH` says another, and the dimensions are the item's;
    its ends, 1 and 8, are on it."""
    path = tmp_path / "rated.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in TWO_RATED), encoding="utf-8")
    dataset = load_dataset(str(path))
    labels = tmp_path / "theirs.jsonl"
    labels.write_text(json.dumps({"annotator": "ana", "dataset": dataset.content_hash, "dataset_path": str(path),
                                  "item_id": "r1", "kind": "ratings", "label": json.dumps(ratings)}) + "\n")
    store = tmp_path / "sessions"
    command = ["--sessions-dir", str(store), "labels", "import", str(labels)] + (["--scale", scale] if scale else [])
    capsys.readouterr()
    assert main(command) == 2
    assert message in " ".join(capsys.readouterr().err.split())
    assert LabelStore(store).labels_of(dataset.content_hash) == {}
    if scale is None and "scale" in message:  # the same rating on a scale that holds it is imported
        wide = command + ["--scale", "0-50"]
        assert main(wide) == 0
        assert LabelStore(store).labels_for(dataset)["ana"]["r1"].ratings == {
            "s1": {"coherence": float(ratings["s1"]["coherence"])}}
    ends = {"s1": {"coherence": 1, "fluency": 8}, "s2": {"coherence": 8, "fluency": 1}}
    labels.write_text(json.dumps({"annotator": "bo", "dataset": dataset.content_hash, "dataset_path": str(path),
                                  "item_id": "r2", "kind": "ratings", "label": json.dumps(ends)}) + "\n")
    assert main(["--sessions-dir", str(store), "labels", "import", str(labels)]) == 0
    assert LabelStore(store).labels_for(dataset)["bo"]["r2"].ratings == ends


def test_an_imported_label_of_another_kind_than_its_items_is_refused(data, tmp_path, capsys) -> None:
    """A pair's two responses ranked (`a>b`, kind ranking) would be measured as a ranking against judges that said A
    or B: the kind a row gives is the item's, or the row is refused."""
    dataset, store, _, meta = data
    labels = tmp_path / "theirs.jsonl"
    labels.write_text(json.dumps({"annotator": "ana", "dataset": dataset.content_hash, "dataset_path": dataset.path,
                                  "item_id": "q2", "kind": "ranking", "label": "a>b"}) + "\n")
    capsys.readouterr()
    assert main(["--sessions-dir", str(store.root), "labels", "import", str(labels)]) == 2
    assert "line 1: label of item q2: item 'q2' is labelled with a pairwise label, not a ranking one" in " ".join(
        capsys.readouterr().err.split())


@pytest.mark.parametrize("people", [
    {"ana": [["c1"], ["c2"], ["c3"]], "bo": [["c2"], ["c1"], ["c3"]]},
    {"ana": [["c1"], ["c2"], ["c3"]], "bo": [["c2"], ["c1"], ["c3"]], "cy": [["c1", "c2"], ["c3"]]},
    # two of three put c1 above c2, yet the mean grades tie them (2/3 each): a tie against most people
    {"ana": [["c1"], ["c2"], ["c3"]], "bo": [["c1"], ["c2"], ["c3"]], "cy": [["c2"], ["c3"], ["c1"]]},
])
def test_a_ranking_majority_never_ties_responses_people_ranked_apart(data, people) -> None:
    """ana c1 > c2 > c3, bo c2 > c1 > c3: equal mean grades made the majority c1 = c2 > c3, nobody's ranking, and a
    judge that tied c1 and c2 scored tau 1 against it, above one that agreed with ana exactly (0.82). With a third
    person who tied them, still no majority ties them (one of three). The item has no reference, as a split pair."""
    dataset, store, _, meta = data
    for name, tiers in people.items():
        give(store, meta, name, ranking("q1", *tiers), pair("A"))
    majority, line = with_gold(dataset, "majority", store.root)
    assert majority.items[0].gold is None and majority.items[1].gold.labels == ["A"]
    assert line.endswith(f"of {len(people)} annotators, 2 of 2 items labelled, 1 of them split (people disagree with "
                         "no majority: no reference, not scored)")
    from qatui.events import Verdict

    def ranked(*tiers: list[str]) -> Verdict:
        scores = {cid: float(len(tiers) - i) for i, tier in enumerate(tiers) for cid in tier}
        return Verdict(judge="j", item_id="q1", scores=scores, ranking=[c for t in tiers for c in t],
                       order=["c1", "c2", "c3"])

    for judge in (ranked(["c1", "c2"], ["c3"]), ranked(["c1"], ["c2"], ["c3"])):
        assert "kendall" not in summarize(majority.items[:1], {"q1": judge}, ci=False).metrics


def test_a_ranking_majority_ties_what_most_people_tied(data) -> None:
    """Equal mean grades of responses most annotators tied are a tie they gave: kept, not read as a split."""
    dataset, store, _, meta = data
    for name in ("ana", "bo"):
        give(store, meta, name, ranking("q1", ["c1", "c2"], ["c3"]))
    give(store, meta, "cy", ranking("q1", ["c3"], ["c1", "c2"]))
    majority, line = with_gold(dataset, "majority", store.root)
    assert majority.items[0].gold.tiers == [["c1", "c2"], ["c3"]] and "split" not in line


def test_majority_gold_leaves_out_pairs_people_split_on_so_a_judge_that_always_ties_scores_none(tmp_path) -> None:
    """Four pairs of two equal texts (rouge-l ties every one). Ana and Bo split on three (A / B, A / tie, B / A) and
    agree on one (A). Against the majority only the agreed pair is a reference: the tie misses it, accuracy 0 of 1.
    Read as ties, the splits made the judge's ties hits: 3 of 4, a tie nobody gave."""
    items = [{"id": f"p{i}", "question": "Which is better?", "references": ["the cat sat on the mat"],
              "candidates": {"a": "the cat sat", "b": "the cat sat"}} for i in range(4)]
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    dataset = load_dataset(str(path))
    store = SessionStore(tmp_path / "sessions")
    run_headless(start_run(store, dataset, ["rouge-l"], Config()))
    meta = {"name": dataset.name, "path": dataset.path, "format": dataset.format, "content_hash": dataset.content_hash}
    said = {"ana": "AAAB", "bo": "BtAA"}
    for name, choices in said.items():
        give(store, meta, name, *(Label(item_id=f"p{i}", kind="pairwise", a="a", b="b",
                                        preference="tie" if c == "t" else c) for i, c in enumerate(choices)))
    majority, line = with_gold(dataset, "majority", store.root)
    assert [item.gold for item in majority.items[:2]] == [None, None] and majority.items[3].gold is None
    assert majority.items[2].gold.labels == ["A"]
    assert line.endswith("4 of 4 items labelled, 3 of them split (people disagree with no majority: no reference, "
                         "not scored)")
    session = store.list()[0]["id"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["--sessions-dir", str(store.root), "sessions", "show", session, "--gold", "majority",
                     "--json"]) == 0
    doc = json.loads(out.getvalue())["judges"]["rouge-l"]
    assert doc["metrics"]["accuracy"] == 0.0 and doc["n"]["accuracy"] == 1


def test_an_annotator_named_like_a_judge_is_compared_with_it(data, capsys) -> None:
    """A person named `rouge-l` (a valid annotator name) labelling a dataset a rouge-l session judged: the two
    were one key of the raters, and `labels agreement` failed with a traceback ("needs at least two raters")."""
    dataset, store, _, meta = data
    give(store, meta, "rouge-l", ranking("q1", ["c1"], ["c2"], ["c3"]), pair("A"))
    give(store, meta, "bo", ranking("q1", ["c2"], ["c1"], ["c3"]), pair("A"))
    assert main(["--sessions-dir", str(store.root), "labels", "agreement", dataset.path, "--json"]) == 0
    rows = {(r["judge"], r["annotator"]): r for r in json.loads(capsys.readouterr().out)["judges"]}
    assert rows[("rouge-l", "rouge-l")]["n_units"] == 4 and rows[("rouge-l", "rouge-l")]["value"] == 1.0


RATED = {"id": "d1", "question": "Sum up.", "references": ["a summary"], "candidates": {"a": "a summary", "b": "b"},
         "gold": {"kind": "ratings", "ratings": {"a": {"overall": 4}, "b": {"overall": 2}}}}


@pytest.mark.parametrize("ratings", ['"NaN"', '"Infinity"', "true", '"2"'])
def test_a_rating_that_is_no_json_number_is_refused_with_its_field(tmp_path, ratings) -> None:
    """A gold rating written as the string "NaN" (or "Infinity", `true`, "2") was read as a number: the session's
    figures stood on fewer items, saying their gold 'puts no response above another'. Refused, naming the field."""
    from qatui.errors import DatasetError

    path = tmp_path / "rated.jsonl"
    path.write_text(json.dumps(RATED) + "\n" + json.dumps(RATED | {"id": "d2"}).replace('"overall": 2', f'"overall": {ratings}')
                    + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"line 2: field 'gold.ratings.b.overall': Input should be a valid number"):
        load_dataset(str(path))


def test_a_ratings_label_given_as_the_object_itself_imports_as_its_json_text_does(tmp_path, capsys) -> None:
    """LABELS.md shows a ratings `label` as a JSON object; an export writes it as the object's JSON text. Both
    import, to the same label."""
    path = tmp_path / "rated.jsonl"
    path.write_text(json.dumps(RATED) + "\n", encoding="utf-8")
    dataset = load_dataset(str(path))
    base = {"dataset": dataset.content_hash, "dataset_name": dataset.name, "dataset_path": str(path),
            "format": "jsonl", "item_id": "d1", "kind": "ratings", "a": "", "b": "", "updated": ""}
    ratings = {"a": {"overall": 5}, "b": {"overall": 1}}
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps(base | {"annotator": "ana", "label": ratings}) + "\n"
                      + json.dumps(base | {"annotator": "bo", "label": json.dumps(ratings)}) + "\n", encoding="utf-8")
    sessions = tmp_path / "sessions"
    assert main(["--sessions-dir", str(sessions), "labels", "import", str(labels)]) == 0
    found = LabelStore(sessions).labels_of(dataset.content_hash)
    assert found["ana"]["d1"].ratings == found["bo"]["d1"].ratings == {"a": {"overall": 5.0}, "b": {"overall": 1.0}}


@pytest.mark.parametrize(("change", "said"), [
    ({"foo": "x"}, "line 1: unknown field 'foo'"),
    ({"annotator": 5}, "line 1: field 'annotator' must be a string in quotes, not a number"),
    ({"label": {"a": {"overall": "5"}}}, "ratings.a.overall: Input should be a valid number"),
    ({"label": '{"a": {"overall": "NaN"}}'}, "ratings.a.overall: Input should be a valid number"),
    ({"label": "{}"}, "ratings rate at least one response on at least one dimension"),
    ({"label": '{"a": {}}'}, "ratings rate at least one response on at least one dimension"),
])
def test_a_label_row_is_refused_whole_where_it_is_not_what_an_export_writes(tmp_path, capsys, change, said) -> None:
    """A label file is another person's: its rows are what `labels export` writes, each field a string. An unknown
    field was dropped unseen, a number made into a name, a "NaN" rating and an empty one imported; each is refused
    with the file and line, and nothing is imported."""
    path = tmp_path / "rated.jsonl"
    path.write_text(json.dumps(RATED) + "\n", encoding="utf-8")
    dataset = load_dataset(str(path))
    row = {"annotator": "ana", "dataset": dataset.content_hash, "dataset_name": dataset.name,
           "dataset_path": str(path), "format": "jsonl", "item_id": "d1", "kind": "ratings",
           "label": '{"a": {"overall": 5}}', "a": "", "b": "", "updated": ""} | change
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps(row) + "\n", encoding="utf-8")
    sessions = tmp_path / "sessions"
    assert main(["--sessions-dir", str(sessions), "labels", "import", str(labels)]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1, err
    assert LabelStore(sessions).annotators() == []


@pytest.mark.parametrize(("name", "ok"), [("ana", True), ("a" * 64, True), ("a.b_c-d", True), ("9x", True),
                                          ("_ana", False), (".ana", False), ("-ana", False), ("a" * 65, False),
                                          ("", False), ("an a", False)])
def test_an_annotator_name_is_what_the_refusal_and_the_docs_say(name, ok) -> None:
    """1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit: the message said only '.' or '-'
    could not start one, while `_ana` was refused too."""
    from qatui.data.labels import check_annotator

    if ok:
        assert check_annotator(name) == name
    else:
        with pytest.raises(LabelError, match="1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"):
            check_annotator(name)


@pytest.mark.parametrize("suffix", ["jsonl", "csv"])
def test_labels_of_responses_whose_ids_hold_the_ranking_marks_read_back(tmp_path, capsys, suffix) -> None:
    """A ranking's label is `r2>r4=r1>r3`: the labels of responses named `temp=0.8` or `a>b` were exported as text
    their import split into other ids and refused. Such a ranking is written as its tiers in JSON, and read back."""
    path = tmp_path / "temps.jsonl"
    ids = ["temp=0.2", "temp=0.8", "a>b", "[x]"]
    path.write_text(json.dumps({"id": "q1", "question": "Which?", "references": ["r"],
                                "candidates": {cid: f"answer {i}" for i, cid in enumerate(ids)},
                                "gold": {"kind": "ranking", "tiers": [[cid] for cid in ids]}}) + "\n")
    dataset = load_dataset(str(path))
    store = SessionStore(tmp_path / "mine")
    meta = {"name": dataset.name, "path": dataset.path, "format": dataset.format, "content_hash": dataset.content_hash}
    give(store, meta, "ana", ranking("q1", ["temp=0.8", "a>b"], ["[x]"], ["temp=0.2"]))
    out = tmp_path / f"ana.{suffix}"
    assert main(["--sessions-dir", str(store.root), "labels", "export", "--annotator", "ana", "-o", str(out)]) == 0
    theirs = tmp_path / "theirs"
    assert main(["--sessions-dir", str(theirs), "labels", "import", str(out)]) == 0, capsys.readouterr().err
    back = LabelStore(theirs).labels_for(dataset)["ana"]["q1"]
    assert back.tiers == [["temp=0.8", "a>b"], ["[x]"], ["temp=0.2"]]
