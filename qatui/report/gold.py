"""Which gold judges are measured against: the dataset's, one annotator's labels, or the annotators' majority.

`--gold dataset|annotator:NAME|majority` on `sessions show`, `sessions compare` and
`qatui table`, and the `g` key of the TUI's Session and Compare screens, all go through
`with_gold`: it gives the items people's labels as their gold (an item nobody labelled has
none, so it is not scored), and the same metrics code measures the judges.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from qatui.data.labels import check_annotator, is_split, majority_gold
from qatui.errors import LabelError

if TYPE_CHECKING:
    from qatui.data.labels import Label
    from qatui.data.model import Dataset
    from qatui.store.session import Session

DATASET = "dataset"
MAJORITY = "majority"


def parse_gold(spec: str | None) -> str:
    """`spec` checked: `dataset` (default), `majority` or `annotator:NAME`; LabelError otherwise."""
    spec = spec or DATASET
    if spec in (DATASET, MAJORITY):
        return spec
    if spec.startswith("annotator:"):
        check_annotator(spec.split(":", 1)[1])
        return spec
    raise LabelError(f"--gold is dataset, majority or annotator:NAME, not {spec!r}")


def gold_name(spec: str) -> str:
    """How a heading names the gold: 'the dataset's gold', 'annotator ana', 'the annotators' majority'."""
    if spec == DATASET:
        return "the dataset's gold"
    return "the annotators' majority" if spec == MAJORITY else f"annotator {spec.split(':', 1)[1]}"


def with_gold(dataset: Dataset, spec: str, sessions_root: Path) -> tuple[Dataset, str]:
    """`dataset` with the gold `spec` names, and a line saying how many items it covers.

    LabelError when nobody (or not that annotator) labelled any item of this dataset.
    """
    from qatui.store.labels import LabelStore

    spec = parse_gold(spec)
    if spec == DATASET:
        return dataset, f"gold: {gold_name(spec)}"
    by_annotator = LabelStore(sessions_root).labels_for(dataset)
    if spec == MAJORITY:
        chosen = by_annotator
    else:
        name = spec.split(":", 1)[1]
        if name not in by_annotator:
            known = ", ".join(by_annotator) or "nobody has"
            raise LabelError(f"annotator {name!r} has labelled no item of {dataset.name}; labelled by: {known} "
                             f"(label with `qatui annotate {dataset.path} --annotator {name}`)")
        chosen = {name: by_annotator[name]}
    if not chosen:
        raise LabelError(f"nobody has labelled {dataset.name} yet: label with `qatui annotate {dataset.path} "
                         "--annotator NAME`")
    relabelled = relabel(dataset, chosen)
    labelled = sum(item.gold is not None for item in relabelled.items)
    people = f" of {len(chosen)} annotators" if spec == MAJORITY else ""
    split = sum(is_split([per_item[item.id] for per_item in chosen.values() if item.id in per_item])
                for item in dataset.items)
    no_majority = f", {split} of them split (people disagree with no majority: no reference, not scored)" if split \
        else ""
    return relabelled, (f"gold: {gold_name(spec)}{people}, {labelled + split} of {len(dataset.items)} items labelled"
                        f"{no_majority}")


def relabel(dataset: Dataset, chosen: dict[str, dict[str, Label]]) -> Dataset:
    """`dataset` whose items' gold is the majority of the chosen annotators' labels (None where nobody labelled)."""
    items = []
    for item in dataset.items:
        labels = [per_item[item.id] for per_item in chosen.values() if item.id in per_item]
        items.append(item.model_copy(update={"gold": majority_gold(item, labels)}))
    return dataset.model_copy(update={"items": items})


def session_gold_items(session: Session, spec: str, sessions_root: Path) -> tuple[Dataset, str]:
    """The session's items (its dataset reloaded, checked unchanged) with the gold `spec` names."""
    from qatui.report.session_view import session_dataset

    ds = session.meta["dataset"]
    dataset = session_dataset(session)
    if dataset is None or dataset.content_hash != ds["content_hash"]:
        raise LabelError(f"session {session.id}: its dataset {ds['path']} is gone or changed, so its items cannot be "
                         "matched with people's labels")
    return with_gold(dataset.of_session(ds), spec, sessions_root)


def session_summary(session: Session, spec: str, sessions_root: Path) -> tuple[dict[str, dict], str, Dataset | None]:
    """Every judge's summary measured against the gold `spec` names, the gold line, and the session's items with it.

    For `dataset` the stored summary, and None for the dataset (its gold is the session's own), unless
    the summary predates the tie rule (`summary_is_current`): then it is computed again from the stored
    verdicts, against the dataset reloaded, and the gold line says so. If the dataset is gone or changed,
    the stored figures come back with `stale` set in each doc, for the views to flag.
    """
    from qatui.engine.jobs import summarize_session
    from qatui.ties import summary_is_current

    if parse_gold(spec) == DATASET:
        stored = session.summary()
        if summary_is_current(stored):
            return stored, f"gold: {gold_name(DATASET)}", None
        try:
            dataset, _ = session_gold_items(session, DATASET, sessions_root)
        except LabelError:
            return {judge: {**doc, "stale": True} for judge, doc in stored.items()}, \
                f"gold: {gold_name(DATASET)} (figures stored before ties were counted as ties; dataset gone, " \
                "so not recomputed)", None
        return (summarize_session(session, dataset.items),
                f"gold: {gold_name(DATASET)} (recomputed: ties counted as ties)", None)
    dataset, line = session_gold_items(session, spec, sessions_root)
    return summarize_session(session, dataset.items), line, dataset
