"""Sessions on TinyDB: finding sessions, batching, shards, supersession, damage and SIGKILL safety."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from qatui.events import LLMCallFinished, Verdict
from qatui.errors import SessionError
from qatui.store import Session, SessionStore, scrub


def verdict(item_id: str, judge: str = "minoseval", pad: int = 0) -> Verdict:
    """A small verdict for (item_id, judge); `pad` adds that many bytes of details."""
    return Verdict(
        item_id=item_id,
        judge=judge,
        scores={"c1": 0.9, "c2": 0.1},
        ranking=["c1", "c2"],
        order=["c2", "c1"],
        pair=("c1", "c2"),
        preference="A",
        details={"pad": "x" * pad},
    )


CALL = LLMCallFinished(item_id="q0", judge="minoseval", model="local/smollm2", purpose="rank", prompt_hash="ab12")


def shard_files(session: Session) -> list[str]:
    """Names of the session's shard files, sorted."""
    return sorted(p.name for p in session.path.glob("results-*.json"))


def test_create_open_by_id_name_prefix_and_list(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    first = store.create({"dataset": {"name": "demo"}, "seed": 7}, name="baseline")
    second = store.create({"dataset": {"name": "demo"}})
    assert first.meta["name"] == "baseline" and second.meta["name"] == second.id
    assert first.meta["status"] == "running" and first.meta["qatui_version"]
    assert len(first.id) == len("YYYYMMDD-HHMMSS-xxxx")
    assert store.open(first.id).id == first.id
    assert store.open("baseline").id == first.id
    assert store.open(second.id[:-1]).id == second.id  # unique prefix
    with pytest.raises(SessionError, match="ambiguous") as ambiguous:
        store.open(first.id[:4])
    assert first.id in str(ambiguous.value) and second.id in str(ambiguous.value)
    with pytest.raises(SessionError, match="no session 'nope'") as missing:
        store.open("nope")
    assert "baseline" in str(missing.value)
    with pytest.raises(SessionError, match="already exists"):
        store.create({}, name="baseline")
    for alike in ("base\u200bline", "baseline\u00ad"):  # a zero-width space, a soft hyphen: shown as "baseline"
        with pytest.raises(SessionError, match="already exists .*show as the same name"):
            store.create({}, name=alike)
    listed = store.list()
    assert [e["id"] for e in listed] == [second.id, first.id]  # newest first
    assert listed[1]["seed"] == 7 and listed[1]["summary"] == {}
    second.close()  # its writer lets go: deleting a session a live writer holds is refused
    store.delete(second.id)
    assert [e["id"] for e in store.list()] == [first.id]
    with pytest.raises(SessionError):
        store.delete(first.id[:6])  # delete takes exact ids only


def test_scrub_keeps_credentials_out_of_session_files(tmp_path: Path) -> None:
    meta = {
        "api_key": "sk-TOP",
        "judges": {"ragas": {"api_key": "sk-TOP", "api_key_env": "OPENAI_API_KEY", "max_tokens": 64}},
        "backbones": [{"model": "openai/gpt-4o-mini", "client_secret": "sk-TOP", "token": "sk-TOP"}],
    }
    assert scrub(meta) == {
        "judges": {"ragas": {"api_key_env": "OPENAI_API_KEY", "max_tokens": 64}},
        "backbones": [{"model": "openai/gpt-4o-mini"}],
    }
    session = SessionStore(tmp_path).create(meta)
    session.update_meta(hf_token="sk-TOP", status="completed")
    session.flush()
    assert "sk-TOP" not in (session.path / "session.json").read_text()
    assert session.meta["judges"]["ragas"]["api_key_env"] == "OPENAI_API_KEY"


def test_writes_wait_for_flush_then_reopen_sees_them(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create({})
    v = verdict("q0")
    session.record_verdict(v, [CALL])
    session.record_failure("q1", "minoseval", "unparseable ranking", "ParseError", [CALL])
    assert shard_files(session) == []  # batched in memory: nothing on disk yet
    assert store.open(session.id).results() == {}
    assert set(session.results()) == {("q0", "minoseval"), ("q1", "minoseval")}  # the writer sees its own
    session.flush()
    reopened = store.open(session.id)
    assert reopened.verdicts("minoseval") == {"q0": v}
    assert reopened.finished_keys() == {("q0", "minoseval")}
    assert reopened.failed_keys() == {("q1", "minoseval")}
    failed = reopened.results()[("q1", "minoseval")]
    assert failed["failure"] == {"reason": "unparseable ranking", "error_type": "ParseError"}
    assert failed["calls"][0]["prompt_hash"] == "ab12" and failed["verdict"] is None


def test_shards_roll_over_and_full_shards_are_never_rewritten(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, shard_size=5)
    session = store.create({})
    for i in range(5):
        session.record_verdict(verdict(f"q{i}"), [])
    session.flush()
    first_inode = (session.path / "results-0000.json").stat().st_ino
    for i in range(5, 12):
        session.record_verdict(verdict(f"q{i}"), [])
    session.close()
    assert shard_files(session) == ["results-0000.json", "results-0001.json", "results-0002.json"]
    sizes = [len(json.loads((session.path / n).read_text())["results"]) for n in shard_files(session)]
    assert sizes == [5, 5, 2]
    assert (session.path / "results-0000.json").stat().st_ino == first_inode  # a full shard stays put
    reopened = store.open(session.id)
    for i in range(12, 16):  # fills the last shard, then opens another
        reopened.record_verdict(verdict(f"q{i}"), [])
    reopened.flush()
    assert shard_files(reopened)[-1] == "results-0003.json"
    assert set(store.open(session.id).verdicts("minoseval")) == {f"q{i}" for i in range(16)}


def test_a_later_verdict_supersedes_a_failure_across_shards(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, shard_size=1)
    session = store.create({})
    session.record_failure("q0", "calf", "timeout", "Timeout", [])
    session.record_verdict(verdict("q0", "checkeval"), [])
    session.flush()
    resumed = store.open(session.id)
    assert resumed.failed_keys() == {("q0", "calf")}
    resumed.record_verdict(verdict("q0", "calf"), [CALL])
    resumed.flush()
    final = store.open(session.id)
    assert final.failed_keys() == set()
    assert final.finished_keys() == {("q0", "calf"), ("q0", "checkeval")}
    assert final.results()[("q0", "calf")]["status"] == "done"
    assert len(shard_files(final)) == 3  # append-only: the failure is still on disk, superseded


def test_summary_and_meta_updates_reach_the_listing(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create({"judges": {"minoseval": {}}})
    session.set_summary("minoseval", {"done": 3, "failed": 1, "metrics": {"spearman": 0.5}})
    session.set_summary("minoseval", {"done": 4, "failed": 0, "metrics": {"spearman": 0.6}})
    session.update_meta(status="completed")
    with pytest.raises(ValueError, match="status"):
        session.update_meta(status="finished")
    assert store.list()[0]["status"] == "running"  # not flushed yet
    session.flush()
    entry = store.list()[0]
    assert entry["status"] == "completed"
    assert entry["summary"] == {"minoseval": {"done": 4, "failed": 0, "metrics": {"spearman": 0.6}}}
    assert store.open(session.id).summary() == entry["summary"]


def test_listing_reads_no_shard(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, shard_size=2)
    session = store.create({}, name="run")
    for i in range(3):
        session.record_verdict(verdict(f"q{i}"), [])
    session.close()
    (session.path / "results-0000.json").write_bytes(b"\x00\xff garbage")
    assert [(e["name"], e["status"]) for e in store.list()] == [("run", "interrupted")]  # its writer let go before the run ended
    opened = store.open("run")  # opening reads session.json and the open (last) shard only
    with pytest.raises(SessionError, match="results-0000.json"):
        opened.results()
    with pytest.raises(SessionError, match="results-0000.json"):
        store.open("run").finished_keys()  # what a resume asks first
    first, second, check = store.open("run").result_pages()  # shard 0 on disk, shard 1 open; the count check
    with pytest.raises(SessionError, match="results-0000.json"):
        first()
    assert [doc["item_id"] for doc in second()] == ["q2"]  # the damaged shard does not stop the others
    assert check() == []  # a shard unread: nothing to check


def test_result_pages_come_in_sequence_order_and_agree_with_results(tmp_path: Path) -> None:
    session = SessionStore(tmp_path, shard_size=2).create({})
    for i in range(5):
        session.record_failure(f"q{i}", "j", "boom", "X", [])
    session.flush()
    session.record_verdict(verdict("q1", "j"), [])  # supersedes the failure in shard 0; stays in memory
    pages = [read() for read in session.result_pages()]
    assert [len(page) for page in pages] == [2, 2, 2, 0]  # the last reader reads no shard: it checks the count
    seqs = [doc["seq"] for page in pages for doc in page]
    assert seqs == sorted(seqs) == list(range(6))
    latest_by_pages = {}
    for doc in (doc for page in pages for doc in page):
        latest_by_pages[(doc["item_id"], doc["judge"])] = doc
    assert latest_by_pages == session.results()
    assert latest_by_pages[("q1", "j")]["status"] == "done"


def test_a_viewer_reads_the_open_shard_when_asked_and_a_writer_gets_its_unflushed_docs(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, shard_size=2)
    session = store.create({}, name="run")
    for i in range(3):
        session.record_verdict(verdict(f"q{i}"), [])
    session.close()
    first, last, _ = store.open("run").result_pages()  # opened to view: nothing copied, each shard read when called
    whole = (session.path / "results-0001.json").read_bytes()
    (session.path / "results-0001.json").write_bytes(b"\x00\xff garbage")  # damaged after the pages were listed
    assert [doc["item_id"] for doc in first()] == ["q0", "q1"]
    with pytest.raises(SessionError, match="results-0001.json"):
        last()
    (session.path / "results-0001.json").write_bytes(whole)  # put back from a copy
    writer = store.open("run")
    writer.record_verdict(verdict("q9"), [])  # in memory, in the open shard
    assert [[doc["item_id"] for doc in read()] for read in writer.result_pages()] == [["q0", "q1"], ["q2", "q9"], []]
    writer.flush()
    assert [[doc["item_id"] for doc in read()] for read in writer.result_pages()] == [["q0", "q1"], ["q2", "q9"], []]


@pytest.mark.parametrize(
    "content",
    [b'{"meta": {"1": {"id": "x"', b"\x89PNG\x00\xff", b"[1, 2]", b'{"meta": {}}', b'{"meta": {"1": 5}}', b""],
    ids=["truncated", "binary", "list", "no-meta", "meta-not-a-doc", "empty"],
)
def test_damaged_session_json_fails_open_and_shows_in_listing(tmp_path: Path, content: bytes) -> None:
    store = SessionStore(tmp_path)
    good = store.create({}, name="good")
    bad = store.create({}, name="bad")
    (bad.path / "session.json").write_bytes(content)
    with pytest.raises(SessionError, match=r"session\.json"):
        store.open(bad.id)
    entries = {e["id"]: e for e in store.list()}
    assert entries[good.id]["status"] == "running"
    assert entries[bad.id]["status"] == "damaged" and "session.json" in entries[bad.id]["error"]


@pytest.mark.parametrize(
    "content",
    [b'{"results": {"1": {"seq": 0', b'{"results": {"1": 3}}', b'{"results": {"1": {"seq": 0, "item_id": "q"}}}',
     b"", b"\n  \n"],
    ids=["truncated", "not-a-doc", "missing-fields", "empty", "blank"],
)
def test_damaged_shard_fails_open_naming_it(tmp_path: Path, content: bytes) -> None:
    """A shard cut to nothing (0 bytes) was read as no results: `sessions show` said "scored 0 of 40" and a resume
    judged every item again. qatui writes whole files only, so it is damage, named as the others are."""
    store = SessionStore(tmp_path)
    session = store.create({})
    (session.path / "results-0000.json").write_bytes(content)
    with pytest.raises(SessionError, match="results-0000.json"):
        store.open(session.id)


def test_missing_session_json_is_listed_as_damaged(tmp_path: Path) -> None:
    (tmp_path / "stray").mkdir()
    (entry,) = SessionStore(tmp_path).list()
    assert entry["status"] == "damaged" and "missing" in entry["error"]


def test_open_removes_a_killed_writers_orphans_but_not_a_live_writers(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create({})
    orphan = session.path / ".results-0000.json.k3j4.tmp"
    live = session.path / ".session.json.a1b2.tmp"
    for tmp in (orphan, live):
        tmp.write_text('{"results": {')
    an_hour_ago = time.time() - 3600
    os.utime(orphan, (an_hour_ago, an_hour_ago))
    store.open(session.id)
    assert not orphan.exists() and live.exists()


CHILD = """
import sys
from pathlib import Path
from qatui.events import Verdict
from qatui.store import SessionStore
session = SessionStore(Path(sys.argv[1]), shard_size=7).open(sys.argv[2])
n = len(session.results())
print("ready", n, flush=True)
while True:
    for _ in range(3):
        session.record_verdict(
            Verdict(item_id=f"q{n}", judge="j", scores={"a": 1.0}, ranking=["a"], order=["a"],
                    details={"pad": "x" * 2000}), [])
        n += 1
    session.flush()
    print(n, flush=True)
"""


def test_sigkill_never_loses_a_flushed_result(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, shard_size=7)
    session_id = store.create({}).id
    rng = random.Random(20261122)
    for _ in range(5):
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(tmp_path), session_id], stdout=subprocess.PIPE, text=True
        )
        assert child.stdout is not None
        ready = child.stdout.readline().split()
        assert ready[0] == "ready", ready
        time.sleep(rng.uniform(0.05, 0.3))
        child.kill()
        printed = [int(line) for line in child.stdout.read().split()]
        child.wait()
        flushed = printed[-1] if printed else int(ready[1])
        keys = set(store.open(session_id).results())
        n = len(keys)
        assert flushed <= n <= flushed + 3  # at most the batch being flushed at the kill got in unreported
        assert keys == {(f"q{i}", "j") for i in range(n)}
    assert n > 15, "the child never got far enough to cross shards"


def test_a_temp_file_left_by_an_earlier_process_with_the_same_pid_is_not_reused(tmp_path: Path) -> None:
    """Containers reuse pids: a killed writer's `.name.<pid>-<n>.tmp` must neither block nor corrupt a new write."""
    from qatui.store import atomic

    target = tmp_path / "session.json"
    serial = next(atomic._serial) + 1
    left = tmp_path / f".session.json.{os.getpid()}-{serial}.tmp"
    left.write_text("half a file", encoding="utf-8")
    atomic.atomic_write_text(target, '{"ok": 1}')
    assert json.loads(target.read_text(encoding="utf-8")) == {"ok": 1}
    assert left.read_text(encoding="utf-8") == "half a file"  # someone else's: left for remove_orphans
    assert oct(target.stat().st_mode & 0o777) == "0o600"


def test_a_batch_keys_file_that_is_a_fifo_or_nested_too_deep_is_a_session_error_naming_it(tmp_path) -> None:
    """What a resume reads to collect its batches: a FIFO in its place is refused at once (it blocked the read),
    absurd nesting is damage (it was a RecursionError), each a SessionError naming the file."""
    session = SessionStore(tmp_path).create({"dataset": {"name": "demo"}})
    keys = session.path / "batch-keys.json"
    os.mkfifo(keys)
    with pytest.raises(SessionError, match=r"batch-keys.json: damaged: is a named pipe \(FIFO\)"):
        session.batch_keys()
    keys.unlink()
    keys.write_text('{"b1": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(SessionError, match=r"batch-keys.json: damaged: line 1 column \d+: .*nested deeper than"):
        session.batch_keys()
    session.close()


@pytest.mark.parametrize("name, expected", [
    ("x" * 501, "at most 500 characters; this one has 501"),
    ("x" * 100_000, "at most 500 characters; this one has 100,000"),
    (" \t ", "must not be blank"),
    ("run \udc9b2J", "holds bytes that are not UTF-8"),  # what Python makes of $'run \x9b2J' typed in a shell
])
def test_a_session_name_too_long_or_blank_is_refused_in_one_short_line_before_any_work(
        tmp_path, capsys, name, expected) -> None:
    """`--session NAME` is shown on every list, header and error line: a 100,000-character name filled 1,300 lines
    of the terminal at the run's end and at every `sessions show`. It is refused before the run starts (no session
    folder), in one line that quotes only its start."""
    from qatui.cli import main

    data = tmp_path / "data.jsonl"
    data.write_text('{"id": "q", "question": "?", "references": ["x"], "candidates": {"a": "x", "b": "y z"}}\n')
    sessions = tmp_path / "sessions"
    code = main(["run", str(data), "--judge", "length", "--session", name, "--sessions-dir", str(sessions)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and expected in err and len(err) < 200, err
    assert not sessions.exists() or not any(sessions.iterdir())
    longest = "y" * 500
    assert main(["run", str(data), "--judge", "length", "--session", longest, "--sessions-dir", str(sessions)]) == 0
    assert SessionStore(sessions).open(longest).meta["name"] == longest


@pytest.mark.parametrize(("score", "said"), [('"x"', "Input should be a valid number"),
                                             ("NaN", "Input should be a finite number")])
def test_views_of_a_damaged_verdict_say_so_in_one_line(tmp_path: Path, capsys, score: str, said: str) -> None:
    """A stored score edited to "x" failed `sessions show --item` with a format traceback and `sessions export`
    with pydantic's; one edited to NaN was shown and exported as a done score. Each view now names the judge, the
    item and the field, in one line."""
    from qatui.cli import main

    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "question": "?", "references": ["the cat sat"],
                                        "candidates": {"a": "the cat", "b": "a dog"}}) + "\n" for i in range(2)))
    sessions = tmp_path / "sessions"
    assert main(["run", str(data), "--judge", "bleu", "--sessions-dir", str(sessions), "--session", "s"]) == 0
    shard = next((sessions).glob("*/results-0000.json"))
    text = shard.read_text()
    doc = json.loads(text)
    [first] = [d for d in doc["results"].values() if d["item_id"] == "q1"]
    first["verdict"]["scores"]["a"] = "SCORE"
    shard.write_text(json.dumps(doc).replace('"SCORE"', score))
    capsys.readouterr()
    for view in (["sessions", "show", "s", "--item", "q1"], ["sessions", "export", "s", "--format", "csv"],
                 ["sessions", "export", "s", "--format", "jsonl"]):
        assert main([*view, "--sessions-dir", str(sessions)]) == 2, view
        err = capsys.readouterr().err
        assert "damaged verdict of bleu on q1: scores.a: " + said in err and len(err.strip().splitlines()) == 1, err


def test_a_shard_that_is_a_link_to_nowhere_is_damage_never_no_results(tmp_path: Path) -> None:
    """A results file replaced by a symlink loop (or a link to a file gone) was read as no results: `sessions
    export` wrote every item as pending and a resume judged them all again, replacing the link."""
    store = SessionStore(tmp_path)
    session = store.create({})
    (session.path / "results-0000.json").symlink_to(session.path / "results-0000.json")
    with pytest.raises(SessionError, match="results-0000.json"):
        store.open(session.id)
    (session.path / "results-0000.json").unlink()
    (session.path / "results-0000.json").symlink_to(tmp_path / "gone.json")
    with pytest.raises(SessionError, match="results-0000.json"):
        store.open(session.id)


def test_a_results_file_missing_before_a_later_one_is_damage_never_not_judged_yet(tmp_path: Path, capsys) -> None:
    """450 items judged (shards 0000-0002), then results-0000.json removed: `sessions show` said "scored 250 of
    450 · 200 not judged yet" beside `list`'s 450/450, and a resume would judge those 200 again. Now show and
    resume name the missing file, in one line, and the other shards are left as they are."""
    from qatui.cli import main

    data = tmp_path / "many.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{n}", "question": f"Question {n}?", "references": [f"ref {n}"],
                                        "candidates": {"a": f"ref {n}", "b": "other"}}) + "\n" for n in range(450)),
                    encoding="utf-8")
    sessions = tmp_path / "s"
    assert main(["--sessions-dir", str(sessions), "run", str(data), "--judge", "rouge-l", "--json"]) == 0
    session_id = json.loads(capsys.readouterr().out)["session"]
    folder = sessions / session_id
    assert sorted(p.name for p in folder.glob("results-*.json")) == [
        "results-0000.json", "results-0001.json", "results-0002.json"]
    (folder / "results-0000.json").unlink()
    kept = {p.name: p.read_bytes() for p in folder.glob("results-*.json")}
    for command in (["sessions", "show", session_id], ["sessions", "resume", session_id],
                    ["sessions", "export", session_id]):
        assert main(["--sessions-dir", str(sessions), *command]) == 2, command
        out, err = capsys.readouterr()
        (line,) = err.strip().splitlines()
        assert "results-0000.json: damaged: this results file is missing, though results-0001.json is there" in line
        assert "not judged" not in out
    assert {p.name: p.read_bytes() for p in folder.glob("results-*.json")} == kept


@pytest.mark.parametrize("shards", [1, 3])
def test_a_completed_session_whose_last_or_only_results_file_is_gone_or_older_is_damage_in_every_view(
        tmp_path: Path, capsys, shards: int) -> None:
    """A completed session copied without its last (or only) results file: `sessions show`, `list`, the export and
    the report showed its stored figures ("scored 20 of 20", kendall 0.590) beside no verdict, and `qatui table`
    reused it as 0 of 20. Only a gap in the numbering was damage. Now every view names the missing file, and one put
    back from an older copy (fewer results than session.json records) is damage too."""
    from qatui.cli import main

    n = 200 * (shards - 1) + 50
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "question": f"Question {i}?", "references": [f"ref {i}"],
                                        "candidates": {"a": f"ref {i}", "b": "other"}}) + "\n" for i in range(n)),
                    encoding="utf-8")
    sessions = tmp_path / "s"
    assert main(["--sessions-dir", str(sessions), "run", str(data), "--judge", "rouge-l", "--json"]) == 0
    session_id = json.loads(capsys.readouterr().out)["session"]
    folder = sessions / session_id
    last = folder / f"results-{shards - 1:04d}.json"
    whole = last.read_text(encoding="utf-8")
    last.unlink()
    views = (["sessions", "show", session_id], ["sessions", "export", session_id, "--format", "md"],
             ["report", session_id, "-o", str(tmp_path / "r.html")], ["sessions", "resume", session_id],
             ["table", str(data), "--judge", "rouge-l"])
    for command in views[:-1]:
        assert main(["--sessions-dir", str(sessions), *command]) == 2, command
        out, err = capsys.readouterr()
        (line,) = err.strip().splitlines()
        assert f"{last.name}: damaged: this results file is missing" in line, command
        assert "scored" not in out
    assert main(["--sessions-dir", str(sessions), "sessions", "list", "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert listed["status"] == "damaged" and last.name in listed["error"]
    assert main(["--sessions-dir", str(sessions), *views[-1]]) == 0  # judged again, never reused
    out = capsys.readouterr().out
    assert "reused" not in out and f"{n}/{n}" in out
    assert main(["--sessions-dir", str(sessions), "sessions", "list", "--json"]) == 0
    newest = json.loads(capsys.readouterr().out)[0]
    assert newest["id"] != session_id
    shutil.rmtree(sessions / newest["id"])  # the table's own run: left, the next table would reuse it

    older = json.loads(whole)  # the file back, from a copy made before its last 10 results
    older["results"] = dict(list(older["results"].items())[:-10])
    last.write_text(json.dumps(older), encoding="utf-8")
    for command in views[1:]:  # a table reuses it no more: it reads the results, and says they are damaged
        assert main(["--sessions-dir", str(sessions), *command]) == 2, command
        out, err = capsys.readouterr()
        (line,) = err.strip().splitlines()
        assert f"session.json records {n} finished items of rouge-l, the results files hold {n - 10}" in line, command
    assert not (tmp_path / "r.html").exists()
    last.write_text(whole, encoding="utf-8")
    assert main(["--sessions-dir", str(sessions), "sessions", "show", session_id]) == 0
    assert f"scored {n} of {n}" in capsys.readouterr().out


def test_a_session_is_made_though_another_process_s_write_check_removed_the_empty_root(tmp_path, monkeypatch) -> None:
    """Two `run`s starting together in a new sessions folder: the first's write check made the folder, probed it and
    removed it again, as the second, which had seen it, listed it (FileNotFoundError: a traceback) and made its
    session in it. Both now stand on a folder gone between a look and its use: the listing finds no session, and
    the session's folder is made with its parents."""
    store = SessionStore(tmp_path / "new" / "sessions")
    real_is_dir = Path.is_dir
    monkeypatch.setattr(Path, "is_dir", lambda self: True if self == store.root else real_is_dir(self))
    assert store.list() == []  # seen as a folder, gone when listed
    monkeypatch.undo()
    session = store.create({})  # the root is gone: made with the session's folder
    assert session.path.parent == store.root and session.path.is_dir()
