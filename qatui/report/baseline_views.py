"""How the baseline judges' work prints: each answer read (the raw `[[...]]` output and its value).

Pointwise scores, pairwise A/B verdicts (rematches of win-rate ties marked), LINKAGE's
reference list and each response's place in it, G-Eval's steps and its ratings per
dimension (log-probability weights or the samples), and the length baseline's unit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from qatui.text import clip, escaped, natural_key

if TYPE_CHECKING:
    from rich.console import Console

BASELINE_ARTIFACTS = ("point_scored", "pair_judged", "reference_list_built", "candidate_placed", "steps_written",
                      "dimension_rated")
"""The artifact types printed here; each kind prints as one block, at its first artifact."""

RAW_WIDTH = 70


def _grid(*columns: tuple[str, dict]) -> Table:
    table = Table(box=None, padding=(0, 1, 0, 0))
    for header, options in columns:
        table.add_column(header, **options)
    return table


def _raw(text: str) -> str:
    return f"[dim]{escaped(clip(text, RAW_WIDTH))}[/]"


def _reasked(a: dict) -> str:
    return " [yellow](re-asked)[/]" if a.get("reasked") else ""


def print_baseline_artifact(console: Console, a: dict, artifacts: list[dict], names: dict[str, str]) -> None:
    """Print the block of `a`'s kind when `a` is the first artifact of that kind (else nothing)."""
    kind = a["type"]
    if kind == "pair_judged" and a.get("ranked_by") != "win_rate":
        return  # CALF's pairs: printed with the combined result of their orders (`artifact_views.print_pairs`)
    same = [x for x in artifacts if x.get("type") == kind and x.get("ranked_by") == a.get("ranked_by")]
    if a is not same[0]:
        return
    printers = {"point_scored": _point_scores, "pair_judged": _pairs, "reference_list_built": _reference_list,
                "candidate_placed": _placements, "steps_written": _steps, "dimension_rated": _ratings}
    printers[kind](console, same, names)


def _name(names: dict[str, str], label: str) -> str:
    return escaped(names.get(label, label))


def _point_scores(console: Console, found: list[dict], names: dict[str, str]) -> None:
    console.print("pointwise scores (each answer scored on its own), read from each answer's verdict")
    table = _grid(("candidate", {"no_wrap": True}), ("score", {"justify": "right"}), ("raw answer", {"ratio": 1}))
    for a in sorted(found, key=lambda x: natural_key(x["response"])):
        table.add_row(_name(names, a["response"]), f"{a['score']:.2f}", _raw(a["raw"]) + _reasked(a))
    console.print(table)


def _pairs(console: Console, found: list[dict], names: dict[str, str]) -> None:
    console.print("pairwise A/B verdicts, each pair once (rematch: the order swapped, to break a win-rate tie)")
    table = _grid(("shown as", {"no_wrap": True}), ("verdict", {"no_wrap": True}), ("prefers", {"no_wrap": True}),
                  ("raw answer", {"ratio": 1}))
    for a in sorted(found, key=lambda x: (x.get("rematch", False), natural_key(x["first"]), natural_key(x["second"]))):
        winner = a["first"] if a["choice"] == "A" else a["second"]
        shown = f"A={_name(names, a['first'])} B={_name(names, a['second'])}"
        table.add_row(shown + (" [cyan]rematch[/]" if a.get("rematch") else ""), escaped(f"[[{a['choice']}]]"),
                      _name(names, winner), _raw(a["raw"]) + _reasked(a))
    console.print(table)


def _reference_list(console: Console, found: list[dict], names: dict[str, str]) -> None:
    a = found[0]
    source = ("the dataset's graded references" if a["source"] == "dataset"
              else "the reference, then answers written by the backbone")
    console.print(f"LINKAGE reference list, best first ({escaped(source)})")
    for k, text in enumerate(a["references"], 1):
        console.print(f"  [dim]{k}.[/] {escaped(clip(text, 100))}")


def _placements(console: Console, found: list[dict], names: dict[str, str]) -> None:
    console.print(escaped("LINKAGE places: [[k]] = better than reference k, worse than k-1 (score = -k)"))
    table = _grid(("candidate", {"no_wrap": True}), ("place", {"justify": "right"}), ("raw answer", {"ratio": 1}))
    for a in sorted(found, key=lambda x: natural_key(x["response"])):
        table.add_row(_name(names, a["response"]), str(a["position"]), _raw(a["raw"]) + _reasked(a))
    console.print(table)


def _steps(console: Console, found: list[dict], names: dict[str, str]) -> None:
    for a in found:
        console.print(f"G-Eval steps for [bold]{escaped(a['dimension'])}[/]")
        for line in [x for x in a["steps"].splitlines() if x.strip()][:8]:
            console.print(f"  [dim]{escaped(clip(line, 110))}[/]")


def _ratings(console: Console, found: list[dict], names: dict[str, str]) -> None:
    console.print("G-Eval ratings (1-5): log-probability weighted mean, or the mean of the samples read")
    table = _grid(("candidate", {"no_wrap": True}), ("dimension", {"no_wrap": True}), ("score", {"justify": "right"}),
                  ("how", {"ratio": 1}))
    for a in sorted(found, key=lambda x: (natural_key(x["response"]), x["dimension"])):
        if a["method"] == "logprobs":
            how = "p " + " ".join(f"{d}:{p:.2f}" for d, p in sorted(a["probabilities"].items()))
        else:
            how = "samples " + " ".join(str(r) for r in a["ratings"])
        table.add_row(_name(names, a["response"]), escaped(a["dimension"]), f"{a['score']:.2f}",
                      f"{escaped(how)}  {_raw(a['raw'][0]) if a['raw'] else ''}")
    console.print(table)


def print_length_details(console: Console, details: dict) -> None:
    """The length baseline: which unit it counted in."""
    console.print(f"  [dim]length counted in {escaped(str(details['unit']))}[/]")
