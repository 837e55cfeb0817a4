"""Juries: the aggregation rules and the members' agreement against hand computations, the jury judge run by
the real engine on real member judges (quorum, not applicable members), and bad member specs refused."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from qatui.cli import main
from qatui.config import Config, parse_config
from qatui.data.model import Item
from qatui.engine.runner import Engine
from qatui.errors import ConfigError, JudgeError
from qatui.events import ItemFailed, ItemNotApplicable, MemberVerdict, Verdict
from qatui.judges.jury.votes import QuorumNotMet, aggregate, borda_points, decide, majority, normalised, quorum_size
from qatui.judges.registry import check_judge_tables, make_judge
from qatui.judges.resources import Resources
from qatui.metrics.jury import members_agreement, shared_places

R1, R2, R3 = "Response 1", "Response 2", "Response 3"


def vote(member: str, winner: str | None = None, scores: dict | None = None, ranking: list | None = None,
         status: str = "done", tie_digits: int = 4) -> MemberVerdict:
    scores = scores or ({R1: 1.0, R2: 0.0} if winner == R1 else {R1: 0.0, R2: 1.0} if winner == R2
                        else {R1: 0.5, R2: 0.5})
    return MemberVerdict(member=member, status=status, winner=winner, scores=scores if status == "done" else {},
                         ranking=ranking or sorted(scores, key=lambda k: -scores[k]), tie_digits=tie_digits,
                         reason="" if status == "done" else "it broke")


# -- strict majority ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("choices, expected", [
    ((R1, R1, R2), R1),          # 2 of 3: a strict majority
    ((R1, R2, "tie"), "tie"),    # one each: no majority, a tie
    (("tie", "tie", R1), "tie"),  # the tie itself has the majority
    ((R1, R2), "tie"),           # 1 of 2 is not more than half
    ((R2, R2, R1, R1), "tie"),   # 2 of 4 neither
    ((R2, R2, R2, R1), R2),
])
def test_strict_majority_and_a_tie_when_there_is_none_whatever_the_member_order(choices, expected) -> None:
    for order in itertools.permutations(range(len(choices))):
        votes = [vote(f"m{i}", choices[i]) for i in order]
        winner, scores, details = majority(votes, [R1, R2])
        assert winner == expected
        assert scores == ({R1: 0.5, R2: 0.5} if expected == "tie" else
                          {R1: float(expected == R1), R2: float(expected == R2)})
    assert details["votes"][R1] == choices.count(R1) and details["votes"]["tie"] == choices.count("tie")


def test_majority_refuses_more_than_two_responses() -> None:
    with pytest.raises(JudgeError, match="two responses"):
        aggregate([vote("a", R1)], [R1, R2, R3], "majority")


# -- quorum -------------------------------------------------------------------------------------------------


def test_quorum_sizes() -> None:
    assert [quorum_size("majority", n) for n in (2, 3, 4, 5)] == [2, 2, 3, 3]
    assert quorum_size("all", 3) == 3 and quorum_size(1, 3) == 1


def test_quorum_met_decides_on_the_members_that_answered() -> None:
    verdicts = [vote("a", R2), vote("b", status="failed"), vote("c", R2)]
    judgement = decide(verdicts, [R1, R2], "majority", quorum=2)
    assert judgement.winner == R2  # 2 of the 2 that answered
    assert judgement.details["answered"] == ["a", "c"] and judgement.details["absent"] == {"b": "it broke"}


def test_quorum_unmet_fails_with_each_absent_members_reason() -> None:
    verdicts = [vote("a", R2), vote("b", status="failed"), vote("c", status="n/a")]
    with pytest.raises(QuorumNotMet) as caught:
        decide(verdicts, [R1, R2], "majority", quorum=2)
    assert str(caught.value) == ("quorum not met: 1 of 3 members answered, 2 needed "
                                 "(b failed: it broke; c not applicable: it broke)")


# -- Borda and mean of normalised scores --------------------------------------------------------------------


def test_borda_with_ties_shares_the_places_points() -> None:
    x = vote("x", scores={R1: 3.0, R2: 3.0, R3: 1.0}, ranking=[R1, R2, R3])  # R1 = R2 > R3
    y = vote("y", scores={R1: 2.0, R2: 1.0, R3: 3.0}, ranking=[R3, R1, R2])
    assert borda_points(x, [R1, R2, R3]) == {R1: 1.5, R2: 1.5, R3: 0.0}  # places 1 and 2 share (2 + 1) / 2
    assert borda_points(y, [R1, R2, R3]) == {R3: 2.0, R1: 1.0, R2: 0.0}
    judgement = aggregate([x, y], [R1, R2, R3], "borda")
    # mean points / (n - 1): R1 (1.5 + 1) / 2 / 2, R2 (1.5 + 0) / 2 / 2, R3 (0 + 2) / 2 / 2
    assert judgement.scores == {R1: 0.625, R2: 0.375, R3: 0.5}


def test_borda_ties_follow_the_members_tie_digits() -> None:
    rounded_equal = vote("x", scores={R1: 0.301, R2: 0.304, R3: 0.1}, ranking=[R2, R1, R3], tie_digits=2)
    assert borda_points(rounded_equal, [R1, R2, R3]) == {R2: 1.5, R1: 1.5, R3: 0.0}


def test_mean_of_scores_normalised_per_member() -> None:
    x = vote("x", scores={R1: 10.0, R2: 0.0, R3: 5.0})                    # 1, 0, 0.5
    y = vote("y", scores={R1: 0.301, R2: 0.304, R3: 0.2}, tie_digits=2)  # 0.30, 0.30, 0.20 -> 1, 1, 0
    flat = vote("z", scores={R1: 7.0, R2: 7.0, R3: 7.0})                  # all equal: 0.5 each
    assert normalised(y, [R1, R2, R3]) == {R1: 1.0, R2: 1.0, R3: 0.0}
    assert aggregate([x, y], [R1, R2, R3], "mean").scores == {R1: 1.0, R2: 0.5, R3: 0.25}
    assert aggregate([x, y, flat], [R1, R2, R3], "mean").scores == pytest.approx({R1: 2.5 / 3, R2: 1.5 / 3, R3: 1 / 3})


# -- members' agreement, by hand ------------------------------------------------------------------------------


def jury_verdict(item_id: str, members: list[MemberVerdict], n: int = 2) -> Verdict:
    order = [f"c{i}" for i in range(n)]
    return Verdict(item_id=item_id, judge="jury", scores=dict.fromkeys(order, 0.0), ranking=order, order=order,
                   pair=("c0", "c1") if n == 2 else None, artifacts=members)


def test_members_alpha_and_kappa_on_preferences_match_a_hand_computation() -> None:
    # items x members (A = Response 1 = c0): AAA, AAB, BBB, tie-A-tie
    table = [(R1, R1, R1), (R1, R1, R2), (R2, R2, R2), ("tie", R1, "tie")]
    verdicts = {f"i{k}": jury_verdict(f"i{k}", [vote(m, c) for m, c in zip("xyz", row)])
                for k, row in enumerate(table)}
    found = members_agreement(verdicts, ["x", "y", "z"], ci=False)["preference"]
    # Fleiss: P_i = 1, 1/3, 1, 1/3 -> 2/3; p = 6/12, 4/12, 2/12 -> P_e = 7/18; kappa = (2/3 - 7/18) / (11/18) = 5/11
    assert found["metrics"]["kappa"] == pytest.approx(5 / 11)
    # Krippendorff (nominal): o_AA 4, o_AB = o_BA 1, o_At = o_tA 1, o_BB 3, o_tt 1; n_A 6, n_B 4, n_t 2, n 12;
    # D_o = 4/12, D_e = (144 - 56) / 132 = 2/3; alpha = 1 - (1/3) / (2/3) = 0.5
    assert found["metrics"]["alpha"] == pytest.approx(0.5)
    assert found["n"] == {"alpha": 4, "kappa": 4} and found["members"] == ["x", "y", "z"]


def test_members_alpha_on_rankings_matches_a_hand_computation() -> None:
    x = vote("x", scores={R1: 3.0, R2: 2.0, R3: 1.0})
    y = vote("y", scores={R1: 1.0, R2: 2.0, R3: 3.0})
    found = members_agreement({"q": jury_verdict("q", [x, y], n=3)}, ["x", "y"], ci=False)["ranking"]
    # units (places): R1 (1, 3), R2 (2, 2), R3 (3, 1); o_13 = o_31 = 2, o_22 = 2; n_1 = n_2 = n_3 = 2, n = 6;
    # ordinal delta^2: 1-3 (6 - 2)^2 = 16, 1-2 = 2-3 (4 - 2)^2 = 4; D_o = 64/6; D_e = 2 (4*4 + 4*16 + 4*4) / 30 = 6.4
    assert found["level"] == "ordinal"
    assert found["metrics"]["alpha"] == pytest.approx(1 - (64 / 6) / 6.4)
    assert "kappa" not in found["metrics"]


def test_a_member_that_answered_nothing_is_no_rater_and_failures_are_missing_values() -> None:
    rows = [(R1, R1), (R2, R2), (R1, R2)]
    verdicts = {f"i{k}": jury_verdict(f"i{k}", [vote("x", a), vote("y", b), vote("z", status="n/a")])
                for k, (a, b) in enumerate(rows)}
    verdicts["i9"] = jury_verdict("i9", [vote("x", R1), vote("y", status="failed"), vote("z", status="n/a")])
    found = members_agreement(verdicts, ["x", "y", "z"], ci=False)["preference"]
    assert found["members"] == ["x", "y"] and found["n"] == {"alpha": 3, "kappa": 3}


def test_shared_places() -> None:
    assert shared_places({R1: 1.0, R2: 1.0, R3: 0.0}, [R1, R2, R3], 4) == {R1: 1.5, R2: 1.5, R3: 3.0}


def test_the_ci_brackets_items_resampled() -> None:
    table = [(R1, R1), (R2, R2), (R1, R2), (R2, R2), (R1, R1), ("tie", R1)]
    verdicts = {f"i{k}": jury_verdict(f"i{k}", [vote("x", a), vote("y", b)]) for k, (a, b) in enumerate(table)}
    found = members_agreement(verdicts, ["x", "y"], seed=3)["preference"]
    low, high = found["ci"]["alpha"]
    assert low <= found["metrics"]["alpha"] <= high and low < high


# -- the jury judge on the real engine, with real members -----------------------------------------------------


def item(**extra) -> Item:
    data = {"id": "q1", "question": "What do plants take in?", "references": ["Carbon dioxide through stomata."],
            "candidates": {"a": "Carbon dioxide.", "b": "They take in carbon dioxide through their stomata."},
            "gold": {"kind": "pairwise", "a": "a", "b": "b", "labels": ["B"]}}
    return Item.model_validate({**data, **extra})


async def run(items: list[Item], options: dict) -> list:
    jury = make_judge("jury", options, Resources(Config()))
    return [event async for event in Engine(items, [jury], seed=0).run()]


async def test_a_jury_of_real_judges_stores_every_members_verdict_on_one_presentation() -> None:
    events = await run([item()], {"members": "length,rouge-l,bleu"})
    verdict = next(e for e in events if isinstance(e, Verdict))
    members = {m.member: m for m in verdict.artifacts if isinstance(m, MemberVerdict)}
    assert set(members) == {"length", "rouge-l", "bleu"} and all(m.status == "done" for m in members.values())
    # every member saw the same labels, so each winner is a label of the one presentation
    assert {m.winner for m in members.values()} <= {R1, R2, "tie"}
    longer = "Response 1" if verdict.order[0] == "b" else "Response 2"
    assert members["length"].winner == longer
    winners = [m.winner for m in members.values()]
    expected = max(set(winners), key=winners.count) if max(winners.count(w) for w in winners) >= 2 else "tie"
    assert verdict.preference == ("tie" if expected == "tie" else "A" if verdict.order[int(expected[-1]) - 1] == "a"
                                  else "B")
    assert verdict.details["aggregation"] == "majority" and verdict.details["quorum"] == 2


async def test_not_applicable_members_count_against_the_quorum() -> None:
    no_reference = item(references=[])
    events = await run([no_reference], {"members": ["rouge-l", "length"]})  # majority of 2 = 2: not reachable
    skipped = next(e for e in events if isinstance(e, ItemNotApplicable))
    assert "only 1 of 2 members can judge it, quorum 2" in skipped.reason and "rouge-l" in skipped.reason
    events = await run([no_reference], {"members": ["rouge-l", "length"], "quorum": 1})
    verdict = next(e for e in events if isinstance(e, Verdict))
    statuses = {m.member: m.status for m in verdict.artifacts if isinstance(m, MemberVerdict)}
    assert statuses == {"rouge-l": "n/a", "length": "done"}
    assert verdict.preference == "B"  # the longer answer, length alone


async def test_a_member_that_fails_is_recorded_and_an_unmet_quorum_fails_the_item() -> None:
    odd = item(candidates={"a": "x", "b": "y", "c": "z"}, gold=None)  # majority forced on three responses
    events = await run([odd], {"members": "length,bleu", "aggregation": "borda", "quorum": "all"})
    assert any(isinstance(e, Verdict) for e in events)
    events = await run([odd], {"members": "length,bleu", "aggregation": "majority"})
    assert "aggregation majority decides between two responses" in next(
        e for e in events if isinstance(e, ItemNotApplicable)).reason
    assert not any(isinstance(e, (Verdict, ItemFailed)) for e in events)


# -- bad specs, refused in one line before any session ----------------------------------------------------------

DEMO = Path(__file__).resolve().parents[1] / "qatui" / "data" / "demo" / "demo.jsonl"


@pytest.mark.parametrize("spec, says", [
    ("nosuch,length", "jury member 'nosuch': unknown judge 'nosuch'"),
    ("pairwise@nope,length", "unknown backbone 'nope'"),
    ("rouge-l,,length", "jury member '': empty"),
    ("jury,length", "a jury cannot be a member of a jury"),
    ("length,length", "jury member 'length' is named twice"),
    ("pairwise,pairwise@local/smollm2", "'pairwise@local/smollm2' is named twice"),
    ("length", "a jury needs at least two members"),
    ("rouge-l@local/smollm2,length", "rouge-l calls no backbone"),
])
def test_bad_member_specs_are_refused_in_one_line_before_a_session(tmp_path, capsys, spec, says) -> None:
    sessions = tmp_path / "s"
    code = main(["--sessions-dir", str(sessions), "run", str(DEMO), "--judge", "jury", "--jury", spec])
    err = capsys.readouterr().err
    assert code == 2 and says in err and len(err.strip().splitlines()) <= 2  # one line (rich may wrap it)
    assert not sessions.exists()


def test_jury_tables_in_the_config_are_checked_and_usable_by_name(tmp_path, capsys) -> None:
    good = parse_config('[juries.panel]\nmembers = ["length", "rouge-l", "bleu"]\naggregation = "borda"\n', "c.toml")
    jury = make_judge("jury", check_judge_tables(good).jury_options("panel"), Resources(good))
    assert [m.name for m in jury.members] == ["length", "rouge-l", "bleu"] and jury.describe_options()["name"] == "panel"
    with pytest.raises(ConfigError, match=r"c.toml: \[juries.bad\]: jury member 'nosuch'"):
        check_judge_tables(parse_config('[juries.bad]\nmembers = ["nosuch", "length"]\n', "c.toml"))
    with pytest.raises(ConfigError, match="members"):
        parse_config('[juries.one]\nmembers = ["length"]\n', "c.toml")
    config = tmp_path / "c.toml"
    config.write_text('[juries.panel]\nmembers = ["length", "rouge-l", "bleu"]\nquorum = "all"\n')
    code = main(["--config", str(config), "--sessions-dir", str(tmp_path / "s"), "run", str(DEMO), "--judge", "jury",
                 "--jury", "panel", "--limit", "3", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["judges"]["jury"]["coverage"]["scored"] == 3
    assert set(out["judges"]["jury"]["members"]) == {"length", "rouge-l", "bleu"}
    assert "ranking" in out["judges"]["jury"]["members_agreement"]  # the demo set ranks several responses


def test_a_jury_is_a_row_of_the_table_and_its_session_is_reused(tmp_path, capsys) -> None:
    args = ["--sessions-dir", str(tmp_path / "s"), "table", str(DEMO), "--judge", "length", "--judge", "jury",
            "--jury", "length,rouge-l,bleu", "--limit", "4", "--json"]
    assert main(args) == 0
    rows = {row["label"]: row for row in json.loads(capsys.readouterr().out)["rows"]}
    assert set(rows) == {"length", "jury"} and rows["jury"]["coverage"]["scored"] == 4
    assert main(args) == 0
    assert "jury: reused session" in capsys.readouterr().err
    assert main(args[:-4] + ["bleu,length", "--limit", "4", "--json"]) == 0  # other members: another session
    assert "jury: ran session" in capsys.readouterr().err


def test_a_members_own_repeats_are_refused_before_any_work_and_the_jurys_are_not(tmp_path, capsys) -> None:
    """A member's `repeats` used to be ignored in silence: each vote was asked once whatever its table said.
    Repeats belong to the jury (the unit whose verdict and self-agreement are reported)."""
    config = tmp_path / "c.toml"
    config.write_text("[judges.pairwise]\nrepeats = 3\n")
    sessions = tmp_path / "s"
    code = main(["--config", str(config), "--sessions-dir", str(sessions), "run", str(DEMO), "--judge", "jury",
                 "--jury", "pairwise@openai/gpt-4o-mini,length"])
    err = capsys.readouterr().err
    assert code == 2 and "jury member 'pairwise@openai/gpt-4o-mini': its own repeats = 3" in err, err
    assert "--repeats K" in err and len(err.strip().splitlines()) <= 3 and not sessions.exists()
    # a member that calls no backbone gives the same answer every time: its repeats change nothing
    config.write_text("[judges.length]\nrepeats = 3\n")
    jury = make_judge("jury", {"members": "length,rouge-l"}, Resources(parse_config(config.read_text(), "c.toml")))
    assert [m.name for m in jury.members] == ["length", "rouge-l"]
    # the jury's own repeats are honoured (each asks every member)
    jury = make_judge("jury", {"members": "pairwise@openai/gpt-4o-mini,length", "repeats": 3}, Resources(Config()))
    assert jury.options.repeats == 3


def test_a_member_that_tied_everything_says_so_beside_its_figure(tmp_path, capsys) -> None:
    """A member that tied every response on every item (bleu with no word of any reference in the responses)
    read `0.000` in the members table, like a member measured at 0; a judge's own table says `4/4 no decision`.
    Each member's figure now carries its no-decision and left-out counts (text and --json), as a judge's does."""
    data = tmp_path / "unlike.jsonl"
    rows = [{"id": f"q{n}", "question": f"Question {n}?", "references": ["zebra quartz"],
             "candidates": {"a": "one two three four", "b": "one two", "c": "one"},
             "gold": {"kind": "ranking", "tiers": tiers}}
            for n, tiers in enumerate([[["a"], ["b"], ["c"]], [["c"], ["b"], ["a"]], [["a", "b", "c"]],
                                       [["b"], ["a"], ["c"]]])]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    argv = ["--sessions-dir", str(tmp_path / "s"), "run", str(data), "--judge", "jury", "--jury", "bleu,length,rouge-l"]
    assert main([*argv, "--json"]) == 0
    members = json.loads(capsys.readouterr().out)["judges"]["jury"]["members"]
    assert members["bleu"]["no_decision"]["kendall"] == members["bleu"]["n"]["kendall"] == 3
    assert members["bleu"]["left_out"]["kendall"] == 1  # the item whose gold is one tier
    assert not members["length"]["no_decision"].get("kendall")
    assert main(argv) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.startswith("  ") and line.split()}
    assert "no decision" in out and rows["bleu"][-1] == "3/3" and rows["length"][-1] == "0"  # the table's last column
    assert "bleu: kendall on 3 of 4 items (1 no gold order)" in out
