"""`qatui labels agreement`: how far people agree with each other, and each judge with each person.

Units are the decisions every label and verdict makes on each pair of an item's responses
(`metrics.people`): Krippendorff's alpha (nominal) and Fleiss' kappa between all annotators,
then for every judge of every session of the dataset and every annotator, alpha and kappa
between the two, beside the judge's headline metric against that annotator's labels as gold.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from rich.table import Column, Table
from rich.text import Text

from qatui.errors import LabelError
from qatui.report.session_view import fmt, split_note, units_note
from qatui.report.versions import different_versions, version_text
from qatui.store.judge_versions import entry_version
from qatui.text import escaped, kappa_name, plain

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console

    from qatui.data.model import Dataset
    from qatui.events import Verdict
    from qatui.store.session import SessionStore

HEADLINE = ("kendall", "accuracy", "spearman", "pearson")


class JudgeRun(NamedTuple):
    """One judge of one session: which session, the judge's name, the version it ran in (None for a session stored
    before versions were kept), and its verdicts by item id."""

    session: str
    judge: str
    version: str | None
    verdicts: dict[str, Verdict]


def judge_runs(store: SessionStore, content_hash: str) -> list[JudgeRun]:
    """Every judge of every session run on the dataset with this content hash, with its version: two sessions of one
    judge name may hold two versions of it (a judge file edited between them), and the views say which is which."""
    runs = []
    for meta in store.list():
        if meta.get("status") == "damaged" or (meta.get("dataset") or {}).get("content_hash") != content_hash:
            continue
        session = store.open(meta["id"])
        entries = session.meta.get("judges") or {}
        runs += [JudgeRun(session.id, judge, entry_version(entries.get(judge)), verdicts)
                 for judge, verdicts in session.every_verdict().items()]
    return runs


def agreement_data(dataset: Dataset, store: SessionStore, sessions_root: Path,
                   epsilon: float = 0.2) -> dict[str, Any]:
    """People with people and each judge with each person, on `dataset`; LabelError when nobody labelled it.

    With two or more people, `ceiling` (`metrics.ceiling.human_ceiling`) and beside each judge
    its figure against the same references and the alt-test at `epsilon` (with three or more).
    """
    from qatui.metrics import summarize
    from qatui.metrics.ceiling import alt_test, alt_test_sentence, human_ceiling
    from qatui.metrics.people import people_kappa_undefined, rater_agreement, verdict_decisions
    from qatui.report.beside_people import people_decisions
    from qatui.report.gold import relabel
    from qatui.store.labels import LabelStore

    labels = LabelStore(sessions_root).labels_for(dataset)
    if not labels:
        raise LabelError(f"nobody has labelled {dataset.name} yet: label with `qatui annotate {dataset.path} "
                         "--annotator NAME`")
    by_id = {item.id: item for item in dataset.items}
    people = people_decisions(dataset, labels)
    data: dict[str, Any] = {
        "dataset": dataset.name, "content_hash": dataset.content_hash,
        "annotators": {name: len(mine) for name, mine in labels.items()},
        "people": people_kappa_undefined(people, rater_agreement(people), list(people)) if len(people) > 1 else None,
        "judges": [],
        "beside_people": [],
    }
    runs: dict[tuple[str, str], dict] = {}
    found = judge_runs(store, dataset.content_hash)
    versions = {(run.session, run.judge): run.version for run in found}
    data["versions"] = different_versions({"judge": run.judge, "version": run.version, "name": run.session}
                                          for run in found)
    for session_id, judge, version, verdicts in found:
        decisions = {unit: code for item_id, verdict in verdicts.items() if item_id in by_id
                     for unit, code in verdict_decisions(by_id[item_id], verdict).items()}
        runs[(session_id, judge)] = decisions
        for name, mine in labels.items():
            metrics = summarize(relabel(dataset, {name: mine}).items, verdicts, ci=False)
            key = next((k for k in HEADLINE if k in metrics.metrics), None)
            pair = {"person": people[name], "judge": decisions}  # keyed so: a person may bear the judge's name
            agreement = people_kappa_undefined(pair, rater_agreement(pair), ["person"], {"person": name},
                                               where="the judge decided")
            data["judges"].append({
                "session": session_id, "judge": judge, "version": version, "annotator": name, **agreement,
                "metric": key, "value": metrics.metrics.get(key) if key else None,
                "n_items": metrics.n.get(key, 0) if key else 0,
            })
    ceiling = human_ceiling(people, {f"{s}/{j}": decisions for (s, j), decisions in runs.items()})
    data["ceiling"] = None if ceiling is None else {key: ceiling[key]
                                                    for key in ("people", "ceiling", "split", "one_class")}
    for (session_id, judge), decisions in runs.items() if ceiling is not None else ():
        test = alt_test(people, decisions, epsilon=epsilon) if len(people) >= 3 else None
        data["beside_people"].append({
            "session": session_id, "judge": judge, "version": versions[(session_id, judge)],
            **ceiling["judges"][f"{session_id}/{judge}"],
            "alt_test": test, "alt_test_result": alt_test_sentence(test) if test else None,
        })
    return data


def print_agreement(console: Console, data: dict[str, Any]) -> None:
    """The agreement view: who labelled how much, people with people, then each judge with each person."""
    who = ", ".join(f"{escaped(name)} ({n})" for name, n in data["annotators"].items())
    console.print(f"[bold]{escaped(data['dataset'])}[/]  labelled by {who}")
    console.print("[dim]units: each item's pairs of responses (which is better, or a tie); alpha nominal over units "
                  "two or more raters decided, kappa over units all of them decided (Cohen's between two raters, "
                  "Fleiss' among more)[/]")
    if (people := data["people"]) is not None:
        kappa = "none (one class)" if people.get("kappa_undefined") else fmt(people["kappa"])
        console.print(f"[bold]people[/]: alpha {fmt(people['alpha'])}, {kappa_name(people)} {kappa} "
                      f"[dim]({people['n_units']} units, {people['n_complete']} decided by all)[/]")
        if people.get("kappa_undefined"):
            console.print(Text(f"  {plain(people['kappa_undefined'])}: chance agreement then equals the observed one, "
                               "so kappa would be 0 whatever the other said", style="dim"))
    if data.get("ceiling"):
        print_ceiling(console, data)
    if not data["judges"]:
        console.print("[dim]no session of this dataset yet: run judges on it (`qatui run`) to compare them[/]")
        return
    table = Table(Column("session", no_wrap=True, min_width=20), Column("judge", min_width=12), "person", "alpha",
                  Column("kappa", max_width=9), "units", Column("vs labels", max_width=9), Column("items", min_width=5),
                  box=None, padding=(0, 1, 0, 0), title="each judge with each person (kappa: Cohen's)",
                  title_justify="left")
    versions: dict[str, set] = {}
    for row in data["judges"]:
        versions.setdefault(row["judge"], set()).add(row.get("version"))
    for row in data["judges"]:
        metric = f"{row['metric']} {fmt(row['value'])}" if row["metric"] else "-"
        kappa = "none (one class)" if row.get("kappa_undefined") else fmt(row["kappa"])
        judge = Text(plain(row["judge"]))
        if len(versions[row["judge"]]) > 1:  # which run is which: under its name, as the versions line names it
            judge.append("\n" + version_text(row.get("version")), style="dim")
        table.add_row(escaped(row["session"]), judge, escaped(row["annotator"]), fmt(row["alpha"]), kappa,
                      str(row["n_units"]), metric, str(row["n_items"]))
    console.print(table)
    for line in data.get("versions") or ():  # under the rows it names: which are not of one judge
        console.print(Text.assemble(("versions: ", "bold yellow"), plain(line), (
            "; `qatui sessions diff A B` shows what changed", "dim")), soft_wrap=True)
    if undefined := [row for row in data["judges"] if row.get("kappa_undefined")]:
        why = "; ".join(sorted({plain(row["kappa_undefined"]) for row in undefined}))
        console.print(Text(f"kappa none (one class): {why}; chance agreement then equals the observed one for any "
                           "judge, so kappa would be 0", style="dim"))


def print_ceiling(console: Console, data: dict[str, Any]) -> None:
    """The human ceiling (each person against the others' majority), then each judge beside it with its alt-test."""
    ceiling = data["ceiling"]
    people = ", ".join(f"{name} {fmt(p['kappa'])}" for name, p in ceiling["people"].items())
    console.print(Text.assemble(("human ceiling", "bold"), f": Cohen's kappa {fmt(ceiling['ceiling']['kappa'])}, "
                                f"accuracy {fmt(ceiling['ceiling']['accuracy'])} (each person against the others' "
                                f"majority, mean over people; kappa {people}){split_note(ceiling)}"))
    for row in data["beside_people"]:
        console.print(Text.assemble(
            (f"{row['session']} {row['judge']}", "bold"),
            f": Cohen's kappa {fmt(row['kappa'])}, accuracy {fmt(row['accuracy'])} against the same references "
            f"(ceiling {fmt(row['ceiling']['kappa'])}, {fmt(row['ceiling']['accuracy'])}{units_note(row)})"))
        if row["alt_test_result"]:
            console.print(Text(f"  {row['alt_test_result']}"))
