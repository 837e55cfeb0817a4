"""A jury's members as the figures see them: their verdicts in candidate space, and how far they agree.

A jury's stored verdict carries one `member_verdict` artifact per member (label space). Here
they become ordinary `Verdict`s (so each member is measured against people like any judge)
and the members' agreement with each other:

- **preference** (two-response items): each member's A / B / tie as a nominal value per
  item; Krippendorff's alpha (nominal) over the items two or more members answered, and
  Fleiss' kappa over the items every member answered.
- **ranking** (more responses): each response's place in a member's ranking (1 = best,
  responses the member scores equal sharing their mean place); Krippendorff's alpha
  (ordinal) over the (item, response) units two or more members placed.

95% CIs are percentile bootstraps that resample items (`metrics.bootstrap.defined_ci`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from qatui.metrics.agreement import fleiss_kappa, krippendorff_alpha
from qatui.metrics.bootstrap import defined_ci
from qatui.metrics.kendall import tier_places
from qatui.ties import pair_tiers, ranking_tiers

if TYPE_CHECKING:
    from qatui.data.model import Item
    from qatui.events import MemberVerdict, Verdict

CHOICES = ("A", "B", "tie")
"""The nominal values of a preference, coded 0, 1, 2."""


def member_artifacts(verdict: Verdict) -> list[MemberVerdict]:
    """The jury verdict's member verdicts (every member: done, failed or not applicable), in member order; a jury
    asked K times (`--repeats`) holds K per member, one per repeat (`combined_members` makes them one)."""
    return [a for a in verdict.artifacts if a.type == "member_verdict"]  # type: ignore[misc]


def combined_members(verdict: Verdict) -> list[MemberVerdict]:
    """One verdict per member, as the figures read it: its one answer, or, where the jury was asked K times, its K
    answers combined by the rule a judge's repeats are (`metrics.repeated`: the majority of its choices on two
    responses, Borda points where it ranks, mean scores where it only scores). A member that failed any repeat
    failed the item (as a judge does), naming the repeat; one not applicable in any is not applicable.

    Read one artifact at a time, a member was counted K times per item (coverage 9 of 3 items) and measured on
    whichever repeat came last."""
    from qatui.events import Judgement
    from qatui.metrics.repeated import borda_scores, mean_scores, rule_for
    from qatui.ties import plurality, strict_ranking

    groups: dict[str, list[MemberVerdict]] = {}
    for m in member_artifacts(verdict):
        groups.setdefault(m.member, []).append(m)
    out = []
    for member, answers in groups.items():
        first = answers[0]
        failed = next((k for k, m in enumerate(answers) if m.status == "failed"), None)
        if len(answers) == 1:
            out.append(first)
        elif failed is not None:
            m = answers[failed]
            out.append(m.model_copy(update={"reason": f"repeat {failed + 1} of {len(answers)}: {m.reason}"}))
        elif any(m.status == "n/a" for m in answers):
            out.append(next(m for m in answers if m.status == "n/a"))
        else:
            labels = [label for label in verdict.labels if all(label in m.scores for m in answers)]
            judgements = [Judgement(scores={label: m.scores[label] for label in labels}, ranking=m.ranking or None,
                                    winner=m.winner) for m in answers]
            rule, digits = rule_for(judgements, labels), first.tie_digits
            winner = plurality([m.winner or "tie" for m in answers]) if rule == "majority" else None
            scores = borda_scores(judgements, labels, digits) if rule == "borda" else mean_scores(judgements, labels)
            ranking = strict_ranking(scores, labels, digits)
            if winner not in (None, "tie"):
                ranking = [winner, *(label for label in ranking if label != winner)]
            out.append(first.model_copy(update={"scores": scores, "ranking": ranking, "winner": winner,
                                                "details": {**first.details, "repeats": len(answers),
                                                            "aggregation": rule}}))
    return out


def shared_places(scores: Mapping[str, float], ranking: Sequence[str], digits: int) -> dict[str, float]:
    """Each label's 1-based place in `ranking`; labels scored equal (rounded to `digits`) share their mean place."""
    return tier_places(ranking_tiers(scores, ranking, digits))


def member_names(verdicts: Mapping[str, Verdict]) -> list[str]:
    """The members of the jury whose verdicts these are, in the jury's order; empty for any other judge."""
    for verdict in verdicts.values():
        if names := verdict.details.get("members"):
            return list(names)
    return []


def member_preference(member: MemberVerdict, verdict: Verdict) -> str | None:
    """A member's A / B / tie on a two-response item, oriented as the jury's verdict (`verdict.pair`)."""
    if verdict.pair is None or member.winner is None:
        return None
    if member.winner == "tie":
        return "tie"
    return "A" if verdict.by_label.get(member.winner) == verdict.pair[0] else "B"


def member_verdicts(verdicts: Mapping[str, Verdict]) -> dict[str, dict[str, Verdict]]:
    """Member -> item id -> that member's verdict in candidate-id space, over the jury's verdicts it answered."""
    from qatui.events import Verdict, event_from_dict

    out: dict[str, dict[str, Verdict]] = {}
    for item_id, verdict in verdicts.items():
        by_label = verdict.by_label
        for m in combined_members(verdict):
            out.setdefault(m.member, {})
            if m.status != "done":
                continue
            scores, ranking = {by_label[k]: s for k, s in m.scores.items()}, [by_label[k] for k in m.ranking]
            preference = member_preference(m, verdict)
            out[m.member][item_id] = Verdict(
                item_id=item_id, judge=m.member, scores=scores, ranking=ranking, order=verdict.order,
                pair=verdict.pair, preference=preference,
                tiers=pair_tiers(verdict.pair, preference, ranking) if verdict.pair and preference
                else ranking_tiers(scores, ranking, m.tie_digits),
                details=m.details, artifacts=[event_from_dict(a) for a in m.artifacts])
    return out


def member_coverage(verdicts: Mapping[str, Verdict]) -> dict[str, dict[str, int]]:
    """Member -> over the items the jury decided: scored, not applicable, failed (they add up to `items`)."""
    out: dict[str, dict[str, int]] = {}
    for verdict in verdicts.values():
        for m in combined_members(verdict):
            counts = out.setdefault(m.member, {"items": 0, "scored": 0, "not_applicable": 0, "failed": 0})
            counts["items"] += 1
            counts[{"done": "scored", "n/a": "not_applicable"}.get(m.status, "failed")] += 1
    return out


def _tables(verdicts: Mapping[str, Verdict], members: list[str]) -> dict[str, np.ndarray]:
    """Per kind, an items x members x units table of values (NaN: not answered, or no such response)."""
    rows: dict[str, list[np.ndarray]] = {"preference": [], "ranking": []}
    for verdict in verdicts.values():
        answered = {m.member: m for m in combined_members(verdict) if m.status == "done"}
        labels = verdict.labels
        if verdict.pair is not None:
            row = np.full((len(members), 1), np.nan)
            for j, name in enumerate(members):
                if name in answered and (choice := member_preference(answered[name], verdict)) is not None:
                    row[j, 0] = CHOICES.index(choice)
            rows["preference"].append(row)
        elif len(labels) > 2:
            row = np.full((len(members), len(labels)), np.nan)
            for j, name in enumerate(members):
                if (m := answered.get(name)) is not None:
                    places = shared_places(m.scores, m.ranking, m.tie_digits)
                    row[j] = [places[label] for label in labels]
            rows["ranking"].append(row)
    tables = {}
    for kind, found in rows.items():
        if found:
            width = max(r.shape[1] for r in found)
            tables[kind] = np.stack([np.pad(r, ((0, 0), (0, width - r.shape[1])), constant_values=np.nan)
                                     for r in found])
    return tables


def _alpha(table: np.ndarray, level: str) -> float:
    """Alpha of an items x members x units table (members as raters); NaN when undefined."""
    data = np.moveaxis(table, -2, 0).reshape(table.shape[-2], -1)
    if (~np.isnan(data)).sum(axis=0).max(initial=0) < 2:
        return float("nan")
    value = krippendorff_alpha(data, level)  # type: ignore[arg-type]
    return float("nan") if value is None else value


def _kappa(table: np.ndarray) -> float:
    """Fleiss' kappa of an items x members x 1 table of choices over the items every member answered; NaN if none."""
    votes = table[..., 0]
    complete = votes[~np.isnan(votes).any(axis=1)]
    if not len(complete):
        return float("nan")
    counts = np.stack([(complete == code).sum(axis=1) for code in range(len(CHOICES))], axis=1)
    value = fleiss_kappa(counts)
    return float("nan") if value is None else value


def _figure(table: np.ndarray, statistic, seed: int, ci: bool) -> tuple[float | None, list[float] | None]:
    """A coefficient and its bootstrap CI over items (`defined_ci`); None where undefined (a CI needs 2+ items)."""
    value = statistic(table)
    if np.isnan(value):
        return None, None
    if not ci or len(table) < 2:
        return value, None
    interval = defined_ci(table, statistic, seed=seed)
    return value, list(interval) if interval else None


def members_agreement(verdicts: Mapping[str, Verdict], members: list[str], *, seed: int = 0,
                      ci: bool = True) -> dict[str, dict[str, Any]]:
    """The members' agreement with each other per verdict kind (`preference`, `ranking`), as the module says.

    Raters are the members that answered at least one item of the kind (`members`); `n` counts items.
    """
    out: dict[str, dict[str, Any]] = {}
    for kind, table in _tables(verdicts, members).items():
        voting = ~np.isnan(table).all(axis=(0, 2))  # a member that answered no item of this kind is no rater
        table = table[:, voting, :]
        level = "nominal" if kind == "preference" else "ordinal"
        figures = {"alpha": lambda t, level=level: _alpha(t, level)}
        if kind == "preference":
            figures["kappa"] = _kappa
        entry: dict[str, Any] = {"level": level, "members": [m for m, v in zip(members, voting) if v],
                                 "metrics": {}, "ci": {}, "n": {}}
        answered = (~np.isnan(table)).any(axis=2).sum(axis=1)
        units = {"alpha": int((answered >= 2).sum()), "kappa": int((answered == table.shape[1]).sum())}
        for key, statistic in figures.items():
            value, interval = _figure(table, statistic, seed, ci)
            if value is not None:
                entry["metrics"][key], entry["n"][key] = value, units[key]
                if interval is not None:
                    entry["ci"][key] = interval
        out[kind] = entry
    return out


def members_summary(items: Sequence[Item], verdicts: Mapping[str, Verdict], members: list[str], *, seed: int = 0,
                    convention: str = "strict") -> dict[str, dict[str, Any]]:
    """Each member measured against people on the items the jury decided, with its coverage there."""
    from qatui.metrics.summary import summarize

    coverage = member_coverage(verdicts)
    found = member_verdicts(verdicts)
    out = {}
    for member in [m for m in members if m in found]:
        figures = summarize(items, found[member], seed=seed, convention=convention)
        out[member] = {"metrics": figures.metrics, "ci": {k: list(v) for k, v in figures.ci.items()},
                       "n": figures.n, "no_decision": figures.no_decision, "left_out": figures.left_out,
                       "coverage": coverage[member]}  # the counts beside each figure, as a judge's own
    return out
