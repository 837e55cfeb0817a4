"""A jury in the shell: each member beside the jury (coverage and agreement with people), the members'
agreement with each other, and on one item every member's verdict and where they split."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from qatui.events.labels import candidates_by_label
from qatui.text import escaped, left_out_note, no_decision_note, plain, plural
from qatui.ties import member_tiers, tiers_text

if TYPE_CHECKING:
    from rich.console import Console

KIND_WORDS = {"preference": "A / B / tie", "ranking": "rankings"}
FIGURE_WORDS = {"alpha": "Krippendorff's alpha", "kappa": "Fleiss' kappa"}


def _cell(doc: dict, key: str, with_ci: bool) -> str:
    """A metric's value, with its CI when asked and known; '-' when absent."""
    value = doc.get("metrics", {}).get(key)
    if value is None:
        return "-"
    ci = doc.get("ci", {}).get(key)
    return f"{value:.3f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if with_ci and ci else "")


def agreement_lines(agreement: dict[str, dict[str, Any]]) -> list[str]:
    """The members' agreement as plain lines: per kind, alpha (and kappa) with CI and the items it stands on."""
    lines = []
    for kind, entry in agreement.items():
        figures = []
        for key in ("alpha", "kappa"):
            value = entry["metrics"].get(key)
            if value is None:
                if key == "alpha" or kind == "preference":
                    figures.append(f"{FIGURE_WORDS[key]} undefined")
                continue
            ci = entry["ci"].get(key)
            figures.append(f"{FIGURE_WORDS[key]} {value:+.3f}" + (f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "")
                           + f" ({plural(entry['n'][key], 'item')})")
        raters = ", ".join(entry.get("members", []))
        lines.append(f"{KIND_WORDS.get(kind, kind)} ({entry['level']}; raters {raters}): " + "; ".join(figures))
    return lines


def print_jury(console: Console, doc: dict, keys: list[str]) -> None:
    """Each member beside the jury on the items the jury decided, then the members' agreement with each other."""
    members: dict[str, dict] = doc.get("members") or {}
    shown = keys[:2]
    table = Table(title="[bold]members[/] [dim](on the items the jury decided)[/]", title_justify="left", box=None,
                  padding=(0, 1, 0, 0))
    table.add_column("  member", no_wrap=True)
    for column in ("scored", "n/a", "failed"):
        table.add_column(column, justify="right", no_wrap=True)
    for i, key in enumerate(shown):
        table.add_column(key + (" (95% CI)" if i == 0 else ""), justify="right", no_wrap=True)
    table.add_column("no decision", justify="right", no_wrap=True)  # of the first figure's units, as a judge's own
    left_out = {name: left_out_note(entry, shown[0]) for name, entry in members.items()} if shown else {}
    for name, entry in members.items():
        cov = entry.get("coverage", {})
        table.add_row(f"  {escaped(name)}", str(cov.get("scored", 0)), str(cov.get("not_applicable", 0)),
                      str(cov.get("failed", 0)), *(_cell(entry, key, i == 0) for i, key in enumerate(shown)),
                      (no_decision_note(entry, shown[0], short=True) or "0") if shown else "")
    console.print(table)
    for name, note in left_out.items():
        if note:
            console.print(Text(f"  {plain(name)}: {shown[0]} on {note}", style="dim"))
    lines = agreement_lines(doc.get("members_agreement") or {})
    console.print("[bold]members' agreement[/] " + ("\n  ".join(["", *map(escaped, lines)]) if lines
                                                     else "[dim]none: no item two members answered[/]"))


def print_members(console: Console, entry: dict) -> None:
    """One item's member verdicts under a jury: each member's choice or ranking, or why it gave none; the split."""
    order = entry["order"]
    by_label = candidates_by_label(order)
    place = {name: i for i, name in enumerate(entry.get("details", {}).get("members", []))}
    members = sorted(entry.get("member_artifacts", []), key=lambda m: place.get(m["member"], len(place)))
    table = Table(box=None, padding=(0, 1, 0, 0))
    table.add_column("  member", no_wrap=True)
    table.add_column("verdict")
    table.add_column("scores", style="dim")
    for m in members:
        if m["status"] != "done":
            word = "not applicable" if m["status"] == "n/a" else "[red]failed[/]"
            table.add_row(f"  {escaped(m['member'])}", word, escaped(m.get("reason", "")))
            continue
        if m.get("winner"):
            verdict = "tie" if m["winner"] == "tie" else f"prefers {escaped(by_label.get(m['winner'], m['winner']))}"
        else:
            verdict = escaped(tiers_text(member_tiers(m), lambda label: by_label.get(label, label)))
        scores = ", ".join(f"{escaped(by_label.get(label, label))} {value:.4g}" for label, value in m["scores"].items())
        table.add_row(f"  {escaped(m['member'])}", verdict, scores)
    console.print(table)
    details = entry.get("details", {})
    if votes := details.get("votes"):
        counted = ", ".join(f"{by_label.get(choice, choice)} {n}" for choice, n in votes.items())
        split = " (no strict majority: tie)" if details.get("no_majority") else ""
        console.print(f"  [dim]votes[/] {escaped(counted)}{split}")
    answered = details.get("answered", [])
    console.print(f"  [dim]jury: {escaped(str(details.get('aggregation', '')))} of {plural(len(answered), 'member')} "
                  f"that answered (quorum {details.get('quorum', '?')})[/]")
