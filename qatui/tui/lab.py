"""The Judge Lab's work away from the screen: open a judge, check its text, run two versions, save one.

"Before" is the version saved in the file (what the lab opened, or last saved), "after" the
text in the editor. A run chooses labelled items (`alignment.choose_items`: all, a seeded
sample, or the N where the saved version disagrees with people most), evaluates both versions
on them through the shared evaluation core (`alignment.evaluate`: real sessions, so every
verdict keeps its transcript and the call cache answers what was asked before) and compares
them (`alignment.compare`: the paired difference with its CI, the items that flipped). An
evaluation is kept in memory per (text, items), so running again after an edit asks only for
the edited version. Saving writes the file (`lab_file`) and keeps the version and its figures
in the judge's history (`store.judge_versions`). Blocking: screens call these from threads.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qatui.errors import DatasetError, QatuiError
from qatui.paths import tilde
from qatui.tui.lab_file import LabFile, new_lab_file, open_lab_file, save_lab_file

if TYPE_CHECKING:
    from qatui.config import Config
    from qatui.data.model import Dataset
    from qatui.engine.alignment import Comparison, Evaluation
    from qatui.engine.runner import Engine
    from qatui.judges.files import JudgeFile
    from qatui.judges.resources import Resources
    from qatui.store.session import SessionStore
    from qatui.tui.roots import Roots

HOWS = [("all labelled items", "all"), ("a seeded sample of N", "sample"), ("the N most disagreeing", "disagreeing")]
"""The item choices the Run tab offers, as (label, value)."""
MAX_ITEMS = 10_000
MAX_SEED = 2**31 - 1


@dataclass(frozen=True)
class LabRequest:
    """Which labelled items a run uses."""

    how: str
    n: int
    seed: int

    def describe(self) -> str:
        """In words, for the status line."""
        if self.how == "all":
            return "all labelled items"
        if self.how == "sample":
            return f"a sample of {self.n} labelled items (seed {self.seed})"
        return f"the {self.n} labelled items the saved version gets most wrong"


def parse_request(how: object, n: str, seed: str) -> LabRequest:
    """The Run tab's fields as a request; a one-line QatuiError for a value out of range."""
    if how not in dict((value, label) for label, value in HOWS):
        raise QatuiError(f"pick which items: {', '.join(value for _, value in HOWS)}")
    values = []
    for name, text, low, high in (("N", n, 1, MAX_ITEMS), ("seed", seed, 0, MAX_SEED)):
        try:
            value = int(text.strip())
        except ValueError:
            raise QatuiError(f"{name} must be a whole number from {low} to {high}, not {text!r}") from None
        if not low <= value <= high:
            raise QatuiError(f"{name} must be from {low} to {high}, not {value}")
        values.append(value)
    return LabRequest(str(how), values[0], values[1])


# -- opening ---------------------------------------------------------------------------------------


def open_judge(spec: str, roots: Roots, config: Config) -> LabFile:
    """What the lab edits for `spec`: a judge file's path; the name of a judge file qatui finds (the user's
    judges folder, a `[judges.NAME] file` entry); else a copy of that built-in, to be saved in the user's folder.

    A built-in's copy whose file already exists in the user's folder opens that file: it is the
    user's own edited copy, and editing it is what the lab is for.
    """
    from qatui.judges.files.find import found_files, is_judge_path, user_judges_dir

    if is_judge_path(spec) or Path(spec).expanduser().is_file():
        return open_lab_file(Path(roots.checked(Path(spec).expanduser())).absolute())
    if (path := found_files(config).get(spec)) is not None:
        return open_lab_file(path)
    text = exported_text(spec)
    target = user_judges_dir() / f"{check_text(text, 'built-in').name}.toml"
    return open_lab_file(target) if target.exists() else new_lab_file(target, text)


def exported_text(name: str) -> str:
    """A built-in single-prompt judge written as a judge file (as `qatui judges export NAME` writes it)."""
    from qatui.judges.files.export import EXPORTABLE, export_text

    if name not in EXPORTABLE:
        raise QatuiError(f"{name}: no such judge file, and no built-in to copy: give a path ending .toml, a judge "
                         f"file of your judges folder, or one of {', '.join(EXPORTABLE)}")
    return export_text(name)


def load_labelled(spec: str, roots: Roots) -> Dataset:
    """The dataset at `spec` ('demo' for the bundled one); refused in one line when no item has people's labels of a
    kind a judge is compared on (`alignment.labelled_kind`)."""
    from qatui.data.loaders import demo_dataset, load_dataset

    if not spec:
        raise DatasetError("type a dataset path (or demo)")
    from qatui.engine.alignment import labelled_kind

    dataset = demo_dataset() if spec == "demo" else load_dataset(roots.checked(spec))
    labelled_kind(dataset)  # no gold, or a kind without a paired figure: refused here, before any run
    return dataset


def check_text(text: str, source: str) -> JudgeFile:
    """The text loaded as its file would be: `JudgeFileError` ("FILE:LINE: KEY: what") when it would be refused."""
    from qatui.judges.files import parse_judge_text

    return parse_judge_text(text, source)


# -- running ---------------------------------------------------------------------------------------


@dataclass
class LabResult:
    """One run: the items, the saved version's evaluation (None when the editor holds it), the edited one's."""

    text: str
    """The editor's text this run evaluated."""
    request: LabRequest
    items: list[str]
    edited: Evaluation
    saved: Evaluation | None = None
    comparison: Comparison | None = None
    questions: dict[str, str] = field(default_factory=dict)
    """Item id -> question, for the flipped items' rows."""

    def summary(self) -> str:
        """One line: this version's agreement, and against the version before it (the saved one) the paired difference."""
        measured, total, failed = self.edited.n, len(self.items), len(self.edited.failed)
        on = f"on {total} items" if measured == total else f"on {measured} of {total} items" + (
            f" ({failed} failed)" if failed else "")  # the figure's own count: a failed item is in no figure
        now = f"{self.edited.metric} {fmt(self.edited.value)} {fmt_ci(self.edited.ci)} {on}"
        if self.comparison is None:
            return f"this version: {now}; edit the prompt and run again to compare"
        c = self.comparison
        return (f"this version: {now}; Δ {fmt(c.delta, signed=True)} {fmt_ci(c.ci, signed=True)} against the one before"
                f"{verdict_of(c)}; {len(c.now_right)} now right, {len(c.now_wrong)} now wrong")


def verdict_of(comparison: Comparison) -> str:
    """What the paired CI says in words: clearly better, clearly worse, or not clearly either (it holds 0)."""
    if comparison.ci is None:
        return ""
    low, high = comparison.ci
    if low > 0:
        return " (better: the CI is above 0)"
    if high < 0:
        return " (worse: the CI is below 0)"
    return " (not clearly different: the CI holds 0)"


def fmt(value: float | None, *, signed: bool = False) -> str:
    """A figure with 3 decimals ('–' when missing)."""
    if value is None:
        return "–"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def fmt_ci(ci: Any, *, signed: bool = False) -> str:
    """'[low, high]' ('' when there is none)."""
    if not ci:
        return ""
    return f"[{fmt(ci[0], signed=signed)}, {fmt(ci[1], signed=signed)}]"


def text_key(text: str) -> str:
    """What evaluations are remembered under: the text's digest."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


Evaluations = dict[tuple[str, tuple[str, ...]], "Evaluation"]
"""(text digest, item ids) -> the evaluation of that text on those items: what a lab has run (its backbone's)."""


STOPPING_LINE = "stopping: waiting for the model calls in flight, whose answers are kept (esc again stops without them)"
"""The Lab's status line while a stop waits for the calls in flight (`Progress.stop`)."""


@dataclass
class Progress:
    """What a run has done so far, counted on the engine's loop and read by the screen's timer."""

    done: int = 0
    """Items judged (a verdict, a failure or not applicable) in the evaluations run so far."""
    total: int = 0
    """Items the evaluations started so far will judge."""
    what: str = ""
    """Which version is being evaluated, in words."""
    stopping: bool = False
    """Set by `stop` (esc): the engine running starts nothing new and the run ends once its calls in flight are
    back (`run_lab` then raises CancelledError); no evaluation starts after it."""
    engine: Engine | None = None
    """The engine of the evaluation running, which `stop` stops."""

    def line(self) -> str:
        """'evaluating the edited version: 3 of 20 items'."""
        if self.stopping:
            return STOPPING_LINE
        if not self.total:
            return "choosing the items and checking the backbone… (esc cancels)"
        return f"evaluating {self.what}: {self.done} of {self.total} items (esc cancels)"

    def stop(self) -> None:
        """Stop the run as the CLI's first Ctrl-C does (`Engine.stop_calls`): no new item or call starts and the
        calls in flight are waited for, their cost recorded and their answers cached. Call on the engine's loop."""
        self.stopping = True
        if self.engine is not None:
            self.engine.stop_calls()

    def attach(self, engine: Engine) -> None:
        """The engine of the evaluation starting (`evaluate_async`'s `on_engine`): stopped at once after a stop."""
        self.engine = engine
        if self.stopping:
            engine.stop_calls()

    def check_not_stopped(self) -> None:
        """CancelledError once a stop was asked: the run ends cancelled, its sessions kept as cancelled."""
        if self.stopping:
            raise asyncio.CancelledError

    def on_event(self, event: object) -> None:
        """Count an engine event that closes an item."""
        from qatui.events import ItemFailed, ItemNotApplicable, Verdict

        if isinstance(event, (Verdict, ItemFailed, ItemNotApplicable)):
            self.done += 1


async def _evaluate(text: str, what: str, source: str, dataset: Dataset, item_ids: list[str], config: Config,
                    store: SessionStore, resources: Resources, progress: Progress, known: Evaluations) -> Evaluation:
    """The evaluation of the judge `text` on the items: one `known` already, else a new session (then known)."""
    from qatui.engine.alignment import evaluate_async
    from qatui.judges.registry import make_judge

    key = (text_key(text), tuple(item_ids))
    if key not in known:
        judge_file = check_text(text, source)
        judge = make_judge(judge_file.name, config.judge_options(judge_file.name), resources, file=judge_file)
        progress.check_not_stopped()
        progress.what, progress.total = what, progress.total + len(item_ids)
        evaluation = await evaluate_async(judge, dataset, item_ids, config, store=store, resources=resources,
                                          on_event=progress.on_event, on_engine=progress.attach)
        progress.check_not_stopped()  # stopped: its items left pending, no figures of it
        known[key] = evaluation
    return known[key]


async def run_lab(opened: LabFile, text: str, dataset: Dataset, request: LabRequest, config: Config,
                  store: SessionStore, resources: Resources, progress: Progress, known: Evaluations) -> LabResult:
    """Evaluate the saved version and the edited text on the chosen labelled items, and compare them.

    Runs on the engine's loop (`tui.background.EngineLoop`), where the backbone's clients live;
    cancelling it, or a stop (`Progress.stop`, which waits for the calls in flight), leaves the session being
    written stored as cancelled.
    """
    from qatui.engine.alignment import choose_items, compare

    source = opened.source
    saved_text = opened.text or text  # a built-in's copy not saved yet: its text as exported is the saved version
    baseline = None
    if request.how == "disagreeing":  # where the saved version is wrong: it must be measured on every labelled item
        every = choose_items(dataset, "all", 0, request.seed)
        baseline = await _evaluate(saved_text, "the saved version on every labelled item", source, dataset, every,
                                   config, store, resources, progress, known)
    item_ids = list(choose_items(dataset, request.how, request.n, request.seed, evaluation=baseline))
    if not item_ids:
        raise QatuiError("the saved version agrees with people on every labelled item: nothing disagrees")
    questions = {item.id: item.question for item in dataset.items}
    saved = None
    if text != saved_text:
        saved = await _evaluate(saved_text, "the saved version", source, dataset, item_ids, config, store,
                                resources, progress, known)
    edited = await _evaluate(text, "the edited version" if saved else "the saved version", source, dataset,
                             item_ids, config, store, resources, progress, known)
    if saved is None:
        return LabResult(text, request, item_ids, edited, questions=questions)
    items = [item for item in dataset.items if item.id in set(item_ids)]
    return LabResult(text, request, item_ids, edited, saved, compare(items, saved, edited), questions)


def figures_of(result: LabResult) -> list[list[str]]:
    """The figures table: the saved version, the edited one, and their paired difference."""
    rows = []
    for label, ev in (("before", result.saved), ("this", result.edited)):
        if ev is not None:
            rows.append([label, ev.version, ev.metric, fmt(ev.value), fmt_ci(ev.ci), str(ev.n),
                         str(len(ev.failed))])
    if (c := result.comparison) is not None:
        rows.append(["Δ paired", "this − before", result.edited.metric, fmt(c.delta, signed=True),
                     fmt_ci(c.ci, signed=True), str(c.n), ""])
    return rows


def flips_of(result: LabResult) -> list[tuple[str, str, str]]:
    """(item id, "right" | "wrong", question) for each item the edit flipped, now-right first."""
    if result.comparison is None:
        return []
    return ([(i, "right", result.questions.get(i, "")) for i in result.comparison.now_right]
            + [(i, "wrong", result.questions.get(i, "")) for i in result.comparison.now_wrong])


# -- saving and history ----------------------------------------------------------------------------


def figures_record(result: LabResult | None, text: str) -> dict | None:
    """The figures a saved version keeps: its own evaluation's when the last run evaluated this very text."""
    if result is None or result.text != text:
        return None
    ev = result.edited
    found: dict[str, Any] = {"metric": ev.metric, "value": ev.value, "ci": list(ev.ci) if ev.ci else None,
                             "items": len(result.items), "failed": len(ev.failed), "how": result.request.describe()}
    if result.comparison is not None:
        c = result.comparison
        found.update(difference=c.delta, difference_ci=list(c.ci) if c.ci else None,
                     now_right=len(c.now_right), now_wrong=len(c.now_wrong))
    return found


def judge_version(judge_file: JudgeFile, config: Config) -> str:
    """The version a judge file's judge has (`Judge.version`): what its sessions and verdicts record."""
    from qatui.judges.registry import make_judge

    return make_judge(judge_file.name, config.judge_options(judge_file.name), file=judge_file).version


def save_version(opened: LabFile, text: str, result: LabResult | None, config: Config, *,
                 overwrite: bool = False) -> tuple[LabFile, str]:
    """Write the file (atomic; `ChangedOutside` when it changed meanwhile) and record the version; (file, version)."""
    from qatui.store.judge_versions import JudgeHistory

    judge_file = check_text(text, opened.source)
    version = judge_version(judge_file, config)
    saved = save_lab_file(opened, text, overwrite=overwrite)
    JudgeHistory().save(judge_file.name, text, figures_record(result, text), note=tilde(saved.path), version=version)
    return saved, version


def history_rows(name: str) -> list[list[str]]:
    """The judge's saved versions, newest first: version, when, the figures it had, the note."""
    from qatui.store.judge_versions import JudgeHistory

    rows = []
    for record in reversed(JudgeHistory().records(name)):
        figures = record.figures or {}
        shown = (f"{figures.get('metric', '')} {fmt(figures.get('value'))} {fmt_ci(figures.get('ci'))}"
                 if figures else "not run")
        if figures.get("difference") is not None:
            shown += f" · Δ {fmt(figures['difference'], signed=True)}"
        rows.append([record.version, str(record.saved_at)[:19], shown, record.note])
    return rows
