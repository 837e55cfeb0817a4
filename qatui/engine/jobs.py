"""Runs as the CLI and the TUI start them: plan, create or resume a session, finish it.

This is where a dataset, judge names and a config become an `Engine` bound to a session,
and where a finished (or interrupted) session gets its meta-evaluation summary. Both the
CLI and the TUI call these functions; neither builds an engine by hand.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from qatui import __version__
from qatui.data.language import language_reading, read_as_recorded, reading_change
from qatui.errors import ConfigError, DatasetError, JudgeError, SessionError
from qatui.engine.backbones import (
    check_batchable,
    check_models,
    judge_once_when_fixed,
    request_notes,
    run_backbones,
    run_cap,
)
from qatui.judges.files.find import file_meta, stored_file
from qatui.judges.registry import make_judge, stored_options
from qatui.engine.spend import CALL_TALLIES, deferred_spend, llm_totals
from qatui.engine.versions import changed_judge, judge_entry
from qatui.store.index import latest
from qatui.store.judge_versions import entry_options, entry_version
from qatui.store.session_file import INTERVAL_RULE
from qatui.ties import TIE_RULE


class NothingToResume(SessionError):
    """`resume` on a session with no item left to judge (not an error for the data, but no run either)."""


if TYPE_CHECKING:
    from qatui.config import BatchConfig, Config
    from qatui.data.model import Dataset, Item
    from qatui.engine.runner import Engine
    from qatui.judges.base import Judge
    from qatui.judges.resources import Resources
    from qatui.llm.spend import SpendCap
    from qatui.store.session import Session, SessionStore


def now_iso() -> str:
    """UTC timestamp for session metadata."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def build_judges(names: list[str], config: Config, dataset: Dataset, resources: Resources,
                 options: dict[str, dict[str, Any]] | None = None, repeats: int | None = None) -> list[Judge]:
    """Judges by name, refused before any work if the data can't feed them.

    A judge's options are `options[name]` when given (the TUI's form), else its config table;
    `repeats` (`--repeats`), when given, replaces each judge's own `repeats` option.
    """
    if not names:
        raise JudgeError("no judge chosen: pass --judge NAME (see `qatui judges`)")
    if len(set(names)) != len(names):
        raise JudgeError(f"a judge is named twice: {names}")
    options = options or {}
    asked = {} if repeats is None else {"repeats": repeats}
    judges = [make_judge(name, {**options.get(name, config.judge_options(name)), **asked}, resources) for name in names]
    if len({j.name for j in judges}) != len(judges):  # a judge file's name is the name of another judge asked
        raise JudgeError(f"two judges asked are both called {_twice([j.name for j in judges])!r}: a session keeps "
                         "one judge per name")
    for judge in judges:
        if problems := judge.unmet_needs(dataset):
            raise JudgeError(f"judge {judge.name!r} cannot run on {dataset.name} ({dataset.format}): {'; '.join(problems)}")
    return judges


def _twice(names: list[str]) -> str:
    return next(name for name in names if names.count(name) > 1)


def expected_calls(judges: list[Judge], dataset: Dataset) -> dict[str, tuple[int, int] | None]:
    """Backbone calls each judge will make over the dataset, as (fewest, most); None when it cannot say.

    An item the judge cannot judge (not applicable) costs nothing: it is recorded, never asked. A judge
    with `repeats` K asks each item K times.
    """
    return {judge.name: _times(_summed([(0, 0) if judge.item_problem(item) else judge.expected_calls(item)
                                        for item in dataset.items]), judge.options.repeats) for judge in judges}


def member_calls(judges: list[Judge], dataset: Dataset) -> dict[str, dict[str, tuple[int, int] | None]]:
    """Jury -> member -> the backbone calls that member makes over the dataset, as (fewest, most)."""
    from qatui.judges.jury.judge import Jury

    found = {}
    for judge in judges:
        if isinstance(judge, Jury):
            per_item = [judge.member_calls(item) for item in dataset.items]
            found[judge.name] = {m.name: _times(_summed([calls[m.name] for calls in per_item]), judge.options.repeats)
                                 for m in judge.members}
    return found


def _times(count: tuple[int, int] | None, k: int) -> tuple[int, int] | None:
    """A (fewest, most) call count for a judgement asked `k` times."""
    return None if count is None else (count[0] * k, count[1] * k)


def _summed(counts: list[tuple[int, int] | None]) -> tuple[int, int] | None:
    """(fewest, most) counts added up; None when any is unknown."""
    if any(c is None for c in counts):
        return None
    return sum(c[0] for c in counts if c), sum(c[1] for c in counts if c)


def total_calls(calls: dict[str, tuple[int, int] | None]) -> tuple[int, int] | None:
    """The sum of `expected_calls`' counts; None when any judge cannot say."""
    return _summed(list(calls.values()))


def calls_text(count: tuple[int, int] | None) -> str:
    """A call count as people read it: '12', '10–15', or '?' when unknown."""
    if count is None:
        return "?"
    return str(count[0]) if count[0] == count[1] else f"{count[0]}–{count[1]}"


@dataclass
class RunJob:
    """An engine bound to its session and dataset, ready to be consumed."""

    session: Session
    dataset: Dataset
    engine: Engine


def _engine(dataset: Dataset, judges: list[Judge], session: Session, seed: int, concurrency: int,
            spend_cap: SpendCap | None = None, batch: BatchConfig | None = None, *, submit: bool = True) -> Engine:
    """The engine over `session`; in batch mode (`batch` given) with its batcher, judging as many items at once as
    a batch holds (an item in flight only awaits its batch), and the batches the session submitted before known.
    With `submit` False (a batch session resumed with `--no-batch`) the batcher submits nothing: the batches the
    session submitted are cancelled and collected, and every other call goes directly at the run's concurrency."""
    from qatui.engine.runner import Engine

    batcher = None
    if batch is not None:
        from qatui.llm.batch import Batcher

        batcher = Batcher(batch, session.record_batch, session.meta.get("batches") or [], session.batch_keys(),
                          submit=submit)
        if submit:
            concurrency = max(concurrency, min(len(dataset.items) * len(judges), batch.max_requests))
    return Engine(dataset.items, judges, seed=seed, concurrency=concurrency, session=session,
                  skip=session.finished_keys(), spend_cap=spend_cap, batcher=batcher)


def check_batch_retry(batch: bool, retry: str | None, session_id: str = "") -> None:
    """Refuse `--batch-retry` where no batch runs (`ConfigError`, one line): it would be silently ignored."""
    if retry is not None and not batch:
        where = f"; session {session_id} resumes directly" if session_id else ""
        raise ConfigError(f"--batch-retry says how a batch run asks its failed requests again{where}: add --batch")


def batch_settings(config: Config, retry: str | None) -> BatchConfig:
    """`[batch]` with `--batch-retry` (or the session's stored choice) over its `retry`; `ConfigError` for another
    word than "batch" or "direct"."""
    from qatui.config import RETRY_MODES

    if retry is None:
        return config.batch
    if retry not in RETRY_MODES:
        raise ConfigError(f"--batch-retry: {retry!r} is not one of {', '.join(RETRY_MODES)}")
    return config.batch.model_copy(update={"retry": retry})


def start_run(
    store: SessionStore,
    dataset: Dataset,
    judge_names: list[str],
    config: Config,
    *,
    seed: int | None = None,
    concurrency: int | None = None,
    limit: int | None = None,
    name: str | None = None,
    resources: Resources | None = None,
    judge_options: dict[str, dict[str, Any]] | None = None,
    convention: str = "strict",
    max_cost: float | None = None,
    repeats: int | None = None,
    judges: list[Judge] | None = None,
    item_ids: list[str] | None = None,
    batch: bool = False,
    batch_retry: str | None = None,
) -> RunJob:
    """A new session for `dataset` (its first `limit` items) and the engine that fills it.

    `judges`, when given, are the judges to run, built already (a judge from a text being edited,
    which no name finds); `item_ids` keeps only those items, stored so a resume judges the same ones.

    `max_cost` (USD) caps what the session's backbone calls may cost (`engine.capping`).
    `convention` (`strict` or `paper`, see `metrics.ranking.CONVENTIONS`) is stored with the
    session and decides how questions with fewer than two candidates count in its figures.
    `repeats` (`--repeats`) asks every judge that calls a backbone that many times per item
    (None: each judge's own option); the judges that call none are named in `judged_once`.
    `batch` (`--batch`) sends the backbone calls through the provider's batch API (`qatui.llm.batch`);
    `batch_retry` (`--batch-retry`, only with it) says how its failed requests are asked again, over `[batch] retry`,
    and is stored with the session.
    """
    from qatui.judges.resources import Resources

    subset = dataset.limited(limit) if item_ids is None else dataset.limited(limit).chosen(item_ids)
    if not subset.items:
        raise DatasetError(f"{dataset.path}: the dataset has no items to run")
    store.check_writable()  # a read-only or full folder is refused before the preflight costs a call
    store.check_new_name(name)  # and so is a name taken or too long
    resources = resources or Resources(config)
    if judges is None:
        judges = build_judges(judge_names, config, subset, resources, judge_options, repeats)
    else:
        for judge in judges:
            if problems := judge.unmet_needs(subset):
                raise JudgeError(f"judge {judge.name!r} cannot run on {dataset.name}: {'; '.join(problems)}")
    once = judge_once_when_fixed(judges, resources, subset)
    check_models(judges, resources, subset, defer_live=not batch)
    spend_cap = run_cap(max_cost, 0.0, judges, resources, subset)
    check_batch_retry(batch, batch_retry)
    batching = batch_settings(config, batch_retry)
    if batch:
        check_batchable(judges, resources, subset)
    seed = config.general.seed if seed is None else seed
    concurrency = concurrency or config.general.concurrency
    meta: dict[str, Any] = {
        "created": now_iso(),
        "updated": now_iso(),
        "status": "running",
        "pid": os.getpid(),
        "dataset": {
            "path": dataset.path,
            "name": dataset.name,
            "format": dataset.format,
            "content_hash": dataset.content_hash,
            "n_items": len(subset.items),
            "limit": limit,
            **({"item_ids": list(item_ids)} if item_ids is not None else {}),
            "languages": language_reading(subset.items),
        },
        "seed": seed,
        "concurrency": concurrency,
        "convention": convention,
        "judges": {j.name: judge_entry(j) for j in judges},
        **({"judge_files": files} if (files := file_meta(judges)) else {}),
        **({"judged_once": once} if once else {}),
        "backbones": run_backbones(judges, resources, subset),
        "models": resources.describe(),
        "qatui_version": __version__,
        **({"max_cost_usd": max_cost} if max_cost is not None else {}),
        **({"batch": True, "batch_retry": batching.retry} if batch else {}),
    }
    if notes := request_notes(judges, resources, subset):
        meta["requests"] = notes
    session = store.create(meta, name=name)
    return RunJob(session, subset, _engine(subset, judges, session, seed, concurrency, spend_cap,
                                           batching if batch else None))


def resume_run(store: SessionStore, session_id: str, config: Config, *, resources: Resources | None = None,
               max_cost: float | None = None, batch: bool | None = None, batch_retry: str | None = None) -> RunJob:
    """The engine that finishes a saved session: its dataset reloaded and checked unchanged.

    `resources` defaults to the models the session ran with (`resources_from_meta`). The session's cost cap
    holds unless `max_cost` gives a new one; either counts what the session has spent already. Batch mode is the
    session's (stored) unless `batch` says (`--batch`: True, `--no-batch`: False); in it, its submitted batches are
    collected, never submitted again. Resumed directly, a session with batches still cancels and collects them
    (`qatui.llm.batch.Batcher` with `submit` False): a request whose batch answered it is never asked again, one
    whose batch ended without its line is asked directly. `batch_retry` (only in batch mode) overrides the stored
    retry mode, and is stored.
    """
    session = store.open_writer(session_id)  # before any work, or any read: a second process is refused, named
    try:
        return _resumed(session, config, resources, max_cost, batch, batch_retry)
    except BaseException:
        session.release_writer()
        raise


def _resumed(session: Session, config: Config, resources: Resources | None, max_cost: float | None,
             batch: bool | None = None, batch_retry: str | None = None) -> RunJob:
    """`resume_run` once its caller holds the session's writer lock."""
    from qatui.data.loaders import load_dataset

    session.check_writable()
    meta = session.meta
    batch = bool(meta.get("batch")) if batch is None else batch
    check_batch_retry(batch, batch_retry, session.id)
    if imported := meta.get("imported"):
        raise SessionError(f"session {session.id} holds {imported['judge']!r}, imported from {imported['source']}: "
                           "qatui cannot run that judge, so there is nothing to resume; import the file again "
                           "(`qatui sessions import`) to replace it")
    ds = meta["dataset"]
    try:
        dataset = load_dataset(ds["path"], ds["format"])
    except DatasetError as e:
        raise SessionError(f"session {session.id}: its dataset cannot be reloaded: {e}") from None
    if dataset.content_hash != ds["content_hash"]:
        raise SessionError(
            f"session {session.id}: {ds['path']} changed since the run started (content hash differs); "
            "resume would mix results from two datasets"
        )
    subset = dataset.of_session(ds)
    if not read_as_recorded(ds.get("languages"), subset.items):
        raise SessionError(
            f"session {session.id}: its items' languages are read otherwise now than when it ran "
            f"({reading_change(ds.get('languages'), language_reading(subset.items))}); resuming would judge the rest "
            "under other prompts, NLI models or tokenizers than the items done; start a new run")
    resources = resources or resources_from_meta(meta, config)
    judges = [make_judge(name, stored_options(name, entry_options(entry)), resources, file=stored_file(meta, name))
              for name, entry in meta["judges"].items()]
    done = session.finished_keys() | session.not_applicable_keys()
    if all((item.id, j.name) in done for item in subset.items for j in judges):
        if meta.get("status") == "running" or any(doc.get("unfinished") for doc in session.summary().values()):
            # killed between the last item's flush and the figures (SIGKILL, a closed terminal, a second Ctrl-C
            # during the summary of a big run): every item is saved, so the figures are all that is left to do
            store_summary(session, subset, "completed")
            raise NothingToResume(f"session {session.id}: every item of every judge was done, but the run ended before "
                                  "its figures were computed; computed them now (see them with `qatui sessions show "
                                  f"{session.id}`)")
        raise NothingToResume(f"session {session.id} is complete: every item of every judge is done, nothing to resume "
                              f"(see it with `qatui sessions show {session.id}`)")
    for judge in judges:
        if (changed := changed_judge(session.id, judge, meta["judges"][judge.name])) is not None:
            raise SessionError(changed)
    session.every_verdict()  # a damaged verdict is refused now, naming it, not at the summary after the calls
    check_models(judges, resources, subset, defer_live=not batch)
    max_cost = meta.get("max_cost_usd") if max_cost is None else max_cost
    spent = (llm_totals(session.every_result(keep=summarized_fields), deferred_spend(meta))[
        "cost_usd"] if max_cost is not None else 0.0)
    spend_cap = run_cap(max_cost, spent, judges, resources, subset, session.id)
    batching = batch_settings(config, batch_retry or meta.get("batch_retry"))
    if batch:
        check_batchable(judges, resources, subset)
    session.update_meta(status="running", pid=os.getpid(), updated=now_iso(),
                        **({"max_cost_usd": max_cost} if max_cost is not None else {}),
                        **({"batch": True, "batch_retry": batching.retry} if batch
                           else {"batch": False} if meta.get("batch") else {}))
    collect = not batch and bool(meta.get("batches"))  # direct, but what its batches hold is still theirs
    return RunJob(session, subset, _engine(subset, judges, session, meta["seed"], meta["concurrency"], spend_cap,
                                           batching if batch or collect else None, submit=batch))


def resources_from_meta(meta: dict, config: Config) -> Resources:
    """The models a saved session ran with, so a resume uses the same ones."""
    from qatui.judges.resources import Resources

    models = meta.get("models") or {}
    return Resources(config, backbone_name=models.get("backbone"), nli_spec=models.get("nli"),
                     embedder_spec=models.get("embedder"), use_cache=models.get("cache"))


def finish_run(job: RunJob, status: str) -> dict[str, dict]:
    """Summarise every judge of the session against the gold and store it; returns the summary.

    A run that ended with every item of every judge failed is stored as `failed`, not `completed`; one that ended
    `stopped` (a backbone failed the live check put off to its first call the cache could not answer) keeps why.
    """
    if status == "stopped":
        job.session.update_meta(stopped=job.engine.stopped)
    return store_summary(job.session, job.dataset, status)


def store_summary(session: Session, dataset: Dataset, status: str) -> dict[str, dict]:
    """`summarize_session` against `dataset`'s gold, stored with `status`; returns the summary.

    What `finish_run` does after a run, and what an import (`engine.importing`) does after writing its verdicts.
    """
    try:
        attempts = session.every_result(keep=summarized_fields)  # each attempt's paid calls are the session's spend
        results = latest(attempts)
        summary = summarize_session(session, dataset.items, results)
        for judge, doc in summary.items():
            session.set_summary(judge, doc)
        if status == "completed" and summary and all(doc["n_done"] == 0 and doc["n_failed"] for doc in summary.values()):
            status = "failed"  # nothing was judged: not a result anyone should read as one
        session.update_meta(status=status, updated=now_iso(), pid=None,
                            llm=llm_totals(attempts, deferred_spend(session.meta)))
        session.flush()
    finally:
        session.release_writer()  # the run has ended, however: another process may resume it now
    return summary


def summarize_session(session: Session, items: list[Item], results: dict | None = None) -> dict[str, dict]:
    """Each judge's summary doc: coverage counts and metrics against the gold of `items`, under both conventions,
    and a jury's members measured the same way with their agreement. Stores nothing.

    `items` carry the gold to measure against: the dataset's, or people's labels (`report.gold`).
    """
    from qatui.engine.repeats import self_agreement_doc
    from qatui.metrics import summarize

    results = session.results() if results is None else results
    convention = session.meta.get("convention", "strict")
    seed = session.meta["seed"]
    other = "paper" if convention == "strict" else "strict"
    summary: dict[str, dict] = {}
    ids = {item.id for item in items}  # the counts are of these items: a subset (`--without-leaks`) said 20 of 19
    for judge, options in session.meta["judges"].items():
        verdicts = {item_id: v for item_id, v in session.verdicts(judge, results).items() if item_id in ids}
        mine = {item_id: doc for (item_id, name), doc in results.items() if name == judge and item_id in ids}
        not_applicable = {item_id: doc.get("not_applicable", "") for item_id, doc in mine.items()
                          if doc["status"] == "n/a"}
        metrics = summarize(items, verdicts, seed=seed, convention=convention, not_applicable=not_applicable)
        alternative = summarize(items, verdicts, convention=other, not_applicable=not_applicable, ci=False)
        summary[judge] = {
            "n_items": len(items),
            "n_done": len(verdicts),
            "n_failed": sum(1 for doc in mine.values() if doc["status"] == "failed"),
            "n_not_applicable": len(not_applicable),
            "convention": convention,
            "by_convention": {convention: {"metrics": metrics.metrics, "n": metrics.n,
                                           "no_decision": metrics.no_decision, "left_out": metrics.left_out},
                              other: {"metrics": alternative.metrics, "n": alternative.n,
                                      "no_decision": alternative.no_decision, "left_out": alternative.left_out}},
            "metrics": metrics.metrics,
            "ci": {k: list(v) for k, v in metrics.ci.items()},
            "n": metrics.n,
            "no_decision": metrics.no_decision,
            "left_out": metrics.left_out,
            "breakdown": metrics.breakdown,
            "breakdown_n": metrics.breakdown_n,
            "tie_rule": TIE_RULE,
            "interval_rule": INTERVAL_RULE,
            **({"classes": metrics.classes} if metrics.classes else {}),
        }
        if (repeated := self_agreement_doc(session.meta, judge, verdicts, seed)) is not None:
            summary[judge]["self_agreement"] = repeated
        if judge == "jury" and (members := (options or {}).get("members")):
            from qatui.metrics.jury import members_agreement, members_summary

            summary[judge]["members"] = members_summary(items, verdicts, list(members), seed=seed,
                                                        convention=convention)
            summary[judge]["members_agreement"] = members_agreement(verdicts, list(members), seed=seed)
    return summary


def summarized_fields(doc: dict) -> dict:
    """What `summarize_session` and `llm_totals` read of a stored result doc: its key and sequence, status, verdict
    and reason for n/a, and its calls' `CALL_TALLIES` (their answers, prompts' hashes and options left out: 44% of a
    pairwise doc). The summary of a run reads every result (its figures come from what was stored, never from what
    the run held), so this is what it holds of each (`Session.results(keep=...)`)."""
    return {"seq": doc["seq"], "item_id": doc["item_id"], "judge": doc["judge"], "status": doc["status"],
            "verdict": doc.get("verdict"), "not_applicable": doc.get("not_applicable", ""),
            "calls": [{key: call[key] for key in CALL_TALLIES if key in call} for call in doc.get("calls") or []]}


def coverage(doc: dict) -> dict[str, int]:
    """What a judge's figures stand on: items in the run, scored, not applicable, failed, not yet judged."""
    items, done = doc["n_items"], doc.get("n_done", 0)
    na, failed = doc.get("n_not_applicable", 0), doc.get("n_failed", 0)
    return {"items": items, "scored": done, "not_applicable": na, "failed": failed,
            "pending": max(0, items - done - na - failed)}


def judges_json(summary: dict[str, dict]) -> dict[str, dict[str, Any]]:
    """The `judges` member of `session_json`: each judge's coverage, metrics, CIs and breakdown."""
    return {
        name: {
            "n_items": doc["n_items"],
            "n_failed": doc["n_failed"],
            "coverage": coverage(doc),
            "convention": doc.get("convention", "strict"),
            "metrics": doc["metrics"],
            "by_convention": doc.get("by_convention", {}),
            "n": doc.get("n", {}),
            "no_decision": doc.get("no_decision", {}),
            "left_out": doc.get("left_out", {}),
            "ci": doc.get("ci", {}),
            "breakdown": doc.get("breakdown", {}),
            "breakdown_n": doc.get("breakdown_n", {}),
            **{key: doc[key] for key in ("members", "members_agreement", "stale", "classes", "self_agreement",
                                         "human_ceiling") if key in doc},
        }
        for name, doc in summary.items()
    }


def session_json(meta: dict, summary: dict[str, dict]) -> dict[str, Any]:
    """The JSON contract of `run`, `sessions show` and `resume`: one object per session (`imported` for an import).

    Each judge carries its `version` (null for a session stored before versions were kept).
    """
    entries = meta.get("judges") or {}
    return {
        "session": meta["id"],
        "name": meta.get("name"),
        "status": meta.get("status"),
        "dataset": meta["dataset"],
        "judges": {name: {**doc, "version": entry_version(entries.get(name))}
                   for name, doc in judges_json(summary).items()},
        "llm": meta.get("llm") or llm_totals([]),
        **({"requests": meta["requests"]} if meta.get("requests") else {}),
        **({"imported": meta["imported"]} if meta.get("imported") else {}),
        **({"stopped": meta.get("stopped", "")} if meta.get("status") == "stopped" else {}),
        **({"batches": meta["batches"]} if meta.get("batches") else {}),
        **({"batch": meta["batch"]} if "batch" in meta else {}),
        **({"batch_retry": meta["batch_retry"]} if meta.get("batch_retry") else {}),
    }
