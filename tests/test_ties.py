"""A judge's ties are ties: agreement is measured on what the judge said, never on the seeded display order.

Expected values come from SciPy on hand-written vectors or from hand calculations written out
beside them; the "no decision" figure (0) is the rule itself (tau-b is undefined on a constant
side, and a judge that tied everything agrees with no one).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fakes import ScriptedLLM
from scipy.stats import kendalltau, spearmanr
from test_cli import run_cli, run_json

from qatui.config import Config
from qatui.data.model import Item, PairwiseGold, RankingGold
from qatui.data.presentation import permutation
from qatui.engine.runner import Engine
from qatui.events import Event, Judgement, RankingProduced, Verdict
from qatui.judges.base import Judge
from qatui.judges.registry import make_judge
from qatui.judges.resources import Resources
from qatui.metrics import summarize
from qatui.metrics.bias import length_preference
from qatui.metrics.item import item_tau, item_undecided
from qatui.metrics.pairwise import judge_preference
from qatui.metrics.ranking import question_ranking_stats
from qatui.metrics.rbo import rbo
from qatui.nli import NLIProbs
from qatui.report.session_view import key_metric


def _equal_answers_file(path: Path, n: int = 6) -> Path:
    """`n` ranking items whose three answers are all two words long: `length` scores each 2.0."""
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"q{i}", "question": "Which answer is best?", "references": ["a reference"],
                                "candidates": {"a": "first answer", "b": "second answer", "c": "third answer"},
                                "gold": {"kind": "ranking", "tiers": [["a"], ["b"], ["c"]]}}) + "\n")
    return path


class EqualScores(Judge):
    """A judge with no opinion: every response gets 2/3 (a checklist whose every answer met two of three questions)."""

    name = "equal-scores"
    summary = "gives every response the same score"

    async def judge(self, view) -> AsyncIterator[Event]:
        yield Judgement(scores={label: 2 / 3 for label in view.labels})


async def _verdicts(judge: Judge, items: list[Item], seed: int = 0) -> dict[str, Verdict]:
    events = [e async for e in Engine(items, [judge], seed=seed).run()]
    assert not [e for e in events if e.type == "item_failed"]
    return {e.item_id: e for e in events if isinstance(e, Verdict)}


# --- the judge that tied everything made no decision ------------------------------------------


def test_an_item_shown_alone_keeps_the_judge_s_ties(tmp_path, capsys) -> None:
    """`sessions show --item` printed a strict ranking (the seeded display order) for a judge that tied every
    response, and ranks 1, 2, 3 beside equal scores."""
    data = _equal_answers_file(tmp_path / "equal.jsonl", 2)
    out = run_json(capsys, "run", str(data), "--judge", "length", "--sessions-dir", str(tmp_path / "sessions"))
    code, shown, _ = run_cli(capsys, "sessions", "show", out["session"], "--item", "q0",
                             "--sessions-dir", str(tmp_path / "sessions"))
    assert code == 0
    lines = shown.splitlines()
    assert re.search(r"^length ranking [abc] = [abc] = [abc] \(no decision: all tied\)$", shown, re.M), shown
    rows = [line.split() for line in lines if line.split()[:1] in (["a"], ["b"], ["c"])]
    assert [row[4] for row in rows] == ["1=", "1=", "1="], rows  # candidate, shown as (2 words), score, rank
    detail = run_json(capsys, "sessions", "show", out["session"], "--item", "q0", "--json",
                      "--sessions-dir", str(tmp_path / "sessions"))
    assert [sorted(tier) for tier in detail["judges"]["length"]["tiers"]] == [["a", "b", "c"]]


def test_a_length_judge_with_every_answer_alike_makes_no_decision_under_every_seed(tmp_path, capsys) -> None:
    data = _equal_answers_file(tmp_path / "equal.jsonl")
    seen = []
    for seed in ("0", "1", "2", "3"):
        out = run_json(capsys, "run", str(data), "--judge", "length", "--seed", seed,
                       "--sessions-dir", str(tmp_path / "sessions"))
        doc = out["judges"]["length"]
        seen.append(doc["metrics"]["kendall"])
        assert doc["metrics"]["kendall"] == 0.0 and doc["metrics"]["spearman"] == 0.0
        assert doc["no_decision"]["kendall"] == 6 and doc["n"]["kendall"] == 6
        assert "kendall" not in doc["ci"]  # 0 on every item: nothing to resample, never [0, 0]
    assert seen == [0.0] * 4  # the figure no longer follows the presentation shuffle
    code, listing, _ = run_cli(capsys, "sessions", "list", "--sessions-dir", str(tmp_path / "sessions"))
    assert code == 0 and "6/6 no decision" in listing


async def test_a_checklist_giving_every_answer_the_same_score_is_no_decision() -> None:
    items = [Item(id=f"q{i}", question="q?", candidates={"a": "x", "b": "y", "c": "z"},
                  gold=RankingGold(tiers=[["a"], ["b"], ["c"]])) for i in range(5)]
    verdicts = await _verdicts(EqualScores(), items, seed=7)
    assert all(v.tiers == [v.order] for v in verdicts.values())  # one group, in presentation order
    assert all(item_tau(item, verdicts[item.id]) == 0.0 and item_undecided(item, verdicts[item.id]) for item in items)
    result = summarize(items, verdicts, ci=False)
    assert result.metrics["kendall"] == 0.0 and result.no_decision["kendall"] == 5
    doc = {"metrics": result.metrics, "n": result.n, "no_decision": result.no_decision, "tie_rule": 2}
    assert key_metric({"equal-scores": doc}) == "tau +0.000 · 5/5 no decision"


def tie_every_pair() -> ScriptedLLM:
    """A backbone that answers "tie" to every pair it is shown."""
    return ScriptedLLM(lambda call: {"rationale": "they are as good as each other", "choice": "tie"},
                       model="scripted/tie")


def _pairwise_judge() -> Judge:
    return make_judge("pairwise", {}, Resources(Config(), llm=tie_every_pair()))


async def test_a_pairwise_judge_that_tied_every_pair_agrees_with_no_one() -> None:
    long, short = "a much longer answer with many more words in it", "short answer"
    pairs = [Item(id=f"p{i}", question="q?", candidates={"x": long, "y": short},
                  gold=PairwiseGold(a="x", b="y", labels=["A", "A"])) for i in range(4)]
    ranked = [Item(id=f"r{i}", question="q?", candidates={"x": long, "y": short, "z": "a middling answer here"},
                   gold=RankingGold(tiers=[["x"], ["z"], ["y"]])) for i in range(3)]
    verdicts = await _verdicts(_pairwise_judge(), pairs + ranked, seed=1)
    result = summarize(pairs + ranked, verdicts, ci=False)
    # Pairwise gold: a tie against people's A is no agreement; every label is a no decision.
    assert result.metrics["accuracy"] == 0.0 and result.no_decision["accuracy"] == 8 and result.n["accuracy"] == 8
    # Ranking gold: every pair tied, so every response tied: no decision, 0.
    assert result.metrics["kendall"] == 0.0 and result.no_decision["kendall"] == 3
    # Item by item (the TUI's tau column): 0, and said to be no decision.
    assert all(item_tau(item, verdicts[item.id]) == 0.0 and item_undecided(item, verdicts[item.id])
               for item in pairs + ranked)
    bias = length_preference(pairs + ranked, verdicts)
    # 4 labelled pairs (each once, however many labelled it) + 3 items x 3 pairs, all of different lengths and told
    # apart by people (who always prefer the longer here: x 10 words > z 4 > y 2); the judge preferred neither.
    assert bias["pairs"] == 13 and bias["judge_ties"] == 13 and bias["judge_longer"] == 0.0
    assert bias["people_longer"] == 1.0


def test_a_decided_verdict_or_a_tie_people_made_too_is_never_called_undecided() -> None:
    """tau 0 from a ranking that told the responses apart (one pair agreeing, one not, one tied by people) is a
    measured 0; a judge's tie where people tied too is agreement (+1); neither is shown as no decision."""
    ranked = Item(id="r", question="q?", candidates={"a": "1", "b": "2", "c": "3"},
                  gold=RankingGold(tiers=[["a"], ["b", "c"]]))
    decided = Verdict(item_id="r", judge="j", ranking=["b", "a", "c"], scores={}, order=["a", "b", "c"],
                      tiers=[["b"], ["a"], ["c"]])
    # pairs (a,b): gold a>b, judge b>a: -1; (a,c): gold a>c, judge a>c: +1; (b,c): gold tied: not counted by tau-b
    assert kendalltau([2, 1, 1], [2, 3, 1]).statistic == pytest.approx(item_tau(ranked, decided)) == pytest.approx(0.0)
    assert not item_undecided(ranked, decided)
    pair = Item(id="p", question="q?", candidates={"x": "1", "y": "2"}, gold=PairwiseGold(a="x", b="y", labels=["tie"]))
    tied = Verdict(item_id="p", judge="j", ranking=["x", "y"], scores={}, order=["x", "y"], tiers=[["x", "y"]],
                   preference="tie")
    assert item_tau(pair, tied) == 1.0 and not item_undecided(pair, tied)


async def test_the_item_list_says_tie_where_the_judge_made_no_decision(tmp_path) -> None:
    """The TUI's tau column drew +0.00 for an item whose every response the judge tied: a measured 0 to the eye."""
    from fakes import wait_until
    from test_tui_gold import rendered

    from qatui.data.loaders import load_dataset
    from qatui.engine.jobs import start_run
    from qatui.store.session import SessionStore
    from qatui.tui.app import QatuiApp
    from qatui.tui.screens.run import RunScreen
    from qatui.tui.widgets.item_list import ItemList
    from qatui.tui.widgets.ranking_panel import RankingPanel
    from qatui.tui.widgets.session_info import SessionInfo

    store = SessionStore(tmp_path / "s")
    job = start_run(store, load_dataset(_equal_answers_file(tmp_path / "equal.jsonl", 3)), ["length"], Config())
    app = QatuiApp(Config(), store, job=job)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.ended is not None)
        items = app.screen.query_one(ItemList)
        await wait_until(pilot, lambda: [str(items.get_row_at(i)[1]).strip() for i in range(items.row_count)]
                         == ["tie"] * 3)
        await wait_until(pilot, lambda: "Kendall tau vs gold +0.000 · no decision: all tied"
                         in rendered(app.screen.query_one(RankingPanel)))
        ranks = [line.split()[0] for line in rendered(app.screen.query_one(RankingPanel)).splitlines()
                 if "Response" in line]
        assert ranks == ["1=", "1=", "1="], ranks  # tied as the judge said, not numbered in the display order
    home = QatuiApp(Config(), store)  # the saved session on Home: its figure of 0 says so too
    async with home.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: "length 3/3 done" in str(home.screen.query_one(SessionInfo).render()))
        assert "tau +0.00 · 3/3 no decision" in str(home.screen.query_one(SessionInfo).render())  # no [0, 0]


# --- tau-b and Spearman count the judge's ties, RBO is tie-aware -------------------------------


def test_partial_ties_are_counted_by_tau_b_and_spearman() -> None:
    gold = RankingGold(tiers=[["a"], ["b"], ["c"], ["d"]])
    verdict = Verdict(scores={"a": 3.0, "b": 1.0, "c": 1.0, "d": 2.0}, ranking=["a", "d", "b", "c"],
                      order=["a", "b", "c", "d"])
    stats = question_ranking_stats(gold, verdict)
    grades, scores = [4, 3, 2, 1], [3.0, 1.0, 1.0, 2.0]  # a, b, c, d
    assert stats["kendall"] == pytest.approx(kendalltau(grades, scores, variant="b").statistic)
    assert stats["spearman"] == pytest.approx(spearmanr(grades, scores).statistic)
    assert stats["no_decision"] == 0.0


def test_rbo_of_a_tied_ranking_matches_the_hand_computed_rbo_a() -> None:
    # Judge [[a, b], [c]] against gold a > b > c, p = 0.5. Prefix weights at depth 1: a, b 1/2 each
    # (the tie straddles depth 1), so X_1 = 1 * 1/2 = 0.5; X_2 = 2; X_3 = 3.
    # RBO_ext = X_3/3 p^3 + (1-p)/p (X_1 p + X_2/2 p^2 + X_3/3 p^3) = 0.125 + (0.25 + 0.25 + 0.125) = 0.75,
    # the mean of the two ways to break the tie: a b c (1.0) and b a c (0.125 + 0 + 0.25 + 0.125 = 0.5).
    assert rbo([["a", "b"], ["c"]], [["a"], ["b"], ["c"]], 0.5) == pytest.approx(0.75)
    # Every candidate tied, against a b c: X_1 = 3 * (1/3 * 1) restricted to a = 1/3, X_2 = 2/3 + 2/3 = 4/3, X_3 = 3:
    # 0.125 + (1/3 * 0.5 + 4/3 / 2 * 0.25 + 0.125) = 0.125 + 0.1667 + 0.1667 + 0.125 = 0.5833.
    assert rbo([["a", "b", "c"]], [["a"], ["b"], ["c"]], 0.5) == pytest.approx(0.125 + 1 / 6 + 1 / 6 + 0.125)


def _strict_rbo(x: list[str], y: list[str], p: float) -> float:
    """Webber et al.'s eq. 30 for two strict lists of the same k items, written out independently."""
    k = len(x)
    overlap = [len(set(x[:d]) & set(y[:d])) for d in range(1, k + 1)]
    return overlap[-1] / k * p**k + (1 - p) / p * sum(overlap[d - 1] / d * p**d for d in range(1, k + 1))


def _breakings(tiers: list[list[str]]) -> list[list[str]]:
    return [sum(map(list, combo), []) for combo in itertools.product(*(itertools.permutations(t) for t in tiers))]


@pytest.mark.parametrize(("mine", "gold"), [
    ([["a", "b"], ["c", "d", "e"]], [["e"], ["a", "c"], ["b", "d"]]),
    ([["c"], ["a", "b", "d"]], [["a", "b", "c", "d"]]),
])
def test_rbo_a_is_the_mean_rbo_over_every_way_to_break_both_sides_ties(mine, gold) -> None:
    for p in (0.5, 0.9):
        runs = [_strict_rbo(x, y, p) for x in _breakings(mine) for y in _breakings(gold)]
        assert rbo(mine, gold, p) == pytest.approx(sum(runs) / len(runs))


# --- one tie rule: MinosEval's factoid path and the metrics' preference -----------------------


class PremiseNLI:
    """Entailment fixed per premise (the response); nothing contradicts."""

    def __init__(self, entail: dict[str, float]) -> None:
        self.entail = entail

    async def apredict(self, pairs):
        return [NLIProbs(entail=self.entail[premise], contradict=0.0, neutral=1 - self.entail[premise])
                for premise, _ in pairs]


def key_point_llm() -> ScriptedLLM:
    """The key-point call of MinosEval, answered with one key point."""
    return ScriptedLLM(lambda call: {"key_points": ["The sky is blue."]}, model="scripted/points")


async def test_minos_factoid_scores_a_millionth_apart_are_a_tie_under_tie_digits() -> None:
    texts = {"low": "It is blue.", "high": "The sky is blue."}
    item = Item(id="f1", question="What colour is the sky?", references=["The sky is blue."], candidates=texts,
                gold=PairwiseGold(a="low", b="high", labels=["B"]))
    seed = next(s for s in range(50) if permutation(item, s)[0] == "low")  # the raw-lower one shown first
    resources = Resources(Config(), llm=key_point_llm(), nli=PremiseNLI({texts["low"]: 0.5, texts["high"]: 0.5 + 1e-6}))
    judge = make_judge("minos-akps", {}, resources)
    events = [e async for e in Engine([item], [judge], seed=seed).run()]
    verdict = next(e for e in events if isinstance(e, Verdict))
    assert verdict.scores["high"] - verdict.scores["low"] == pytest.approx(1e-6)
    assert verdict.preference == "tie" and verdict.tiers == [["low", "high"]]
    assert verdict.ranking == ["low", "high"]  # presentation order, not the raw score order
    shown = next(e for e in events if isinstance(e, RankingProduced))
    assert shown.ranking == ["Response 1", "Response 2"]
    assert summarize([item], {item.id: verdict}, ci=False).no_decision["accuracy"] == 1


def test_the_metrics_preference_uses_the_judges_tie_digits() -> None:
    # Three candidates, so no stored preference: the metrics read the judge's groups.
    stored = {"scores": {"a": 0.501, "b": 0.499, "c": 0.1}, "ranking": ["a", "b", "c"], "order": ["b", "a", "c"]}
    two_digits = Verdict.model_validate(stored, context={"tie_digits": 2})
    assert judge_preference(two_digits, "a", "b") == "tie"
    assert judge_preference(Verdict.model_validate(stored, context={"tie_digits": 4}), "a", "b") == "A"


# --- sessions stored before the judge's ties were kept -----------------------------------------


def _make_old(session_dir: Path, old_kendall: float) -> None:
    """Rewrite a session's files as a qatui before this change wrote them: no tiers, a summary from the display order."""
    for shard in session_dir.glob("results-*.json"):
        data = json.loads(shard.read_text())
        for doc in data["results"].values():
            doc["verdict"].pop("tiers", None)
        shard.write_text(json.dumps(data))
    session_file = session_dir / "session.json"
    data = json.loads(session_file.read_text())
    for doc in data["summary"].values():
        for key in ("tie_rule", "no_decision"):
            doc.pop(key, None)
        doc["metrics"]["kendall"] = old_kendall
    session_file.write_text(json.dumps(data))


def test_an_old_session_is_shown_with_the_new_figures(tmp_path, capsys) -> None:
    data = _equal_answers_file(tmp_path / "equal.jsonl")
    sessions = tmp_path / "sessions"
    run = run_json(capsys, "run", str(data), "--judge", "length", "--sessions-dir", str(sessions))
    _make_old(sessions / run["session"], 0.444)
    code, listing, _ = run_cli(capsys, "sessions", "list", "--sessions-dir", str(sessions))
    assert code == 0 and "0.444" not in listing and "old tie rule" in listing
    shown = run_json(capsys, "sessions", "show", run["session"], "--sessions-dir", str(sessions))
    doc = shown["judges"]["length"]
    assert doc["metrics"]["kendall"] == 0.0 and doc["no_decision"]["kendall"] == 6
    code, text, _ = run_cli(capsys, "sessions", "show", run["session"], "--sessions-dir", str(sessions))
    assert code == 0 and "recomputed" in text and "6/6 no decision" in text
    new = run_json(capsys, "run", str(data), "--judge", "length", "--seed", "3", "--sessions-dir", str(sessions))
    compared = run_json(capsys, "sessions", "compare", run["session"], new["session"], "--sessions-dir", str(sessions))
    assert [(r["metrics"]["kendall"], r["no_decision"]["kendall"]) for r in compared["runs"]] == [(0.0, 6), (0.0, 6)]
    data.unlink()  # the dataset gone: the stored figure is flagged, never shown as current
    code, text, _ = run_cli(capsys, "sessions", "show", run["session"], "--sessions-dir", str(sessions))
    assert code == 0 and "old tie rule" in text


def test_an_old_verdict_gets_its_tiers_from_its_scores_under_its_judges_digits(tmp_path, capsys) -> None:
    data = _equal_answers_file(tmp_path / "equal.jsonl", n=2)
    sessions = tmp_path / "sessions"
    run = run_json(capsys, "run", str(data), "--judge", "length", "--sessions-dir", str(sessions))
    _make_old(sessions / run["session"], 0.5)
    from qatui.store.session import SessionStore

    verdicts = SessionStore(sessions).open(run["session"]).verdicts("length")
    assert all(v.tiers == [v.ranking] for v in verdicts.values())  # all three scored 2.0: one group


async def test_the_compare_screen_names_a_run_of_no_decision_beside_its_delta(tmp_path, capsys) -> None:
    """A judge that tied everything gets tau 0, and its Δ against a judge people disagree with is positive: the
    runs table says, beside the figure, that none of its units was decided."""
    from fakes import wait_until

    from qatui.store.session import SessionStore
    from qatui.tui.app import QatuiApp
    from qatui.tui.screens.compare import CompareScreen

    data = tmp_path / "equal.jsonl"  # two words each (length ties them); rouge-l tells them apart by the reference
    data.write_text("".join(json.dumps({"id": f"q{i}", "question": "Which is best?", "references": ["the first answer"],
                                        "candidates": {"a": "first answer", "b": "second answer", "c": "third one"},
                                        "gold": {"kind": "ranking", "tiers": [["a"], ["b"], ["c"]]}}) + "\n"
                            for i in range(4)), encoding="utf-8")
    sessions = tmp_path / "s"
    from qatui.cli import main

    for judge in ("rouge-l", "length"):  # the CLI runs its own event loop: not on this test's
        assert await asyncio.to_thread(main, ["--sessions-dir", str(sessions), "run", str(data), "--judge", judge]) == 0
    store = SessionStore(sessions)
    ids = [meta["id"] for meta in sorted(store.list(), key=lambda meta: list(meta["judges"]) != ["rouge-l"])]
    app = QatuiApp(Config(), store)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.screen is not None and not app.screen.workers)
        await app.push_screen(CompareScreen(store, ids))
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.comparison is not None)
        runs = app.screen.query_one("#runs")
        await wait_until(pilot, lambda: runs.row_count == 2)
        labels = [str(column.label) for column in runs.ordered_columns]
        assert labels[:6] == ["run", "session", "judge", "done", "no decision", "tau"], labels
        rows = [[cell.plain.strip() for cell in runs.get_row_at(i)] for i in range(2)]
        assert rows[0][4] == "–" and rows[1][4] == "4/4" and rows[1][5].startswith("+0.00"), rows


def test_one_vote_rule_for_people_s_labels_and_a_judge_s_repeats() -> None:
    """The label most people gave (A, A, B, tie: A, 2 of 4, not a strict majority), a tie when two or more share
    the most; a judge's repeats are counted by the same rule."""
    from qatui.data.model import PairwiseGold
    from qatui.ties import plurality

    worked = {("A", "A", "B", "tie"): "A", ("A", "A", "B", "B"): "tie", ("A", "B", "tie"): "tie", ("B",): "B",
              ("tie", "tie", "A"): "tie", ("B", "B", "A"): "B", (): "tie"}
    for labels, expected in worked.items():
        assert plurality(list(labels)) == expected, labels
        if labels:
            assert PairwiseGold(a="x", b="y", labels=list(labels)).label == expected, labels
    assert plurality([0.0, 0.0, 2.0, 1.0], tie=1.0) == 0.0 and plurality([0.0, 2.0], tie=1.0) == 1.0


def test_a_pair_people_split_is_no_tie_they_made() -> None:
    """People split A / B on a pair: the plurality of their labels is a tie nobody gave, and a judge's tie read
    against it was +1 on the item (the TUI's tau column, the report's histogram), while accuracy, which reads
    every label, gave it 0 of 2. Each label now counts as accuracy counts it, and that tie is no decision."""
    from scipy.stats import kendalltau

    pair = Item(id="p", question="q?", candidates={"x": "1", "y": "2"}, gold=PairwiseGold(a="x", b="y", labels=["A", "B"]))

    def said(preference: str) -> Verdict:
        ranking = ["y", "x"] if preference == "B" else ["x", "y"]
        tiers = [["x", "y"]] if preference == "tie" else [[ranking[0]], [ranking[1]]]
        return Verdict(item_id="p", judge="j", ranking=ranking, scores={}, order=["x", "y"], tiers=tiers,
                       preference=preference)

    def tau_b(label: str, preference: str) -> float:  # two items, ranked as the person and as the judge
        side = {"A": [2, 1], "B": [1, 2], "tie": [1, 1]}
        value = kendalltau(side[label], side[preference]).statistic
        return 0.0 if value != value else value  # undefined (one side tied both): 0, no decision

    for preference in ("A", "B", "tie"):
        expected = sum(tau_b(label, preference) for label in pair.gold.labels) / 2
        assert item_tau(pair, said(preference)) == pytest.approx(expected) == 0.0
    assert item_undecided(pair, said("tie")) and not item_undecided(pair, said("A"))
    two_to_one = pair.model_copy(update={"gold": PairwiseGold(a="x", b="y", labels=["A", "A", "B"])})
    assert item_tau(two_to_one, said("A")) == pytest.approx(1 / 3) and item_tau(two_to_one, said("B")) == pytest.approx(-1 / 3)
    one_tied = pair.model_copy(update={"gold": PairwiseGold(a="x", b="y", labels=["A", "tie"])})
    assert item_tau(one_tied, said("tie")) == 0.5 and not item_undecided(one_tied, said("tie"))


def test_a_judges_tie_on_a_pair_people_called_a_tie_is_a_hit_and_no_no_decision() -> None:
    """The labels of every item the judge tied were its no-decision units, human ties it matched too: three pairs
    people called ties, all tied by the judge, read `accuracy 1.000 · 3/3 no decision`. Only the A and B labels of
    a tied item are units the judge decided nothing on (as `item_undecided` reads an item)."""
    def pair(item_id: str, labels: list[str]) -> Item:
        return Item(id=item_id, question="q?", candidates={"x": "one", "y": "two"},
                    gold=PairwiseGold(a="x", b="y", labels=labels))

    def said(preference: str) -> Verdict:
        return Verdict(judge="j", item_id="", scores={}, ranking=["x", "y"], order=["x", "y"],
                       preference=preference, pair=("x", "y"))

    ties = [pair(f"t{i}", ["tie"]) for i in range(3)]
    result = summarize(ties, {item.id: said("tie") for item in ties}, ci=False)
    assert result.metrics["accuracy"] == 1.0 and result.no_decision["accuracy"] == 0
    # Mixed, by hand: p2 [A, B] tied: 2 sided labels undecided; p3 [tie] tied: a hit; p5 [A, B, tie] tied: 2 of 3.
    items = [pair("p1", ["A", "A", "B"]), pair("p2", ["A", "B"]), pair("p3", ["tie"]), pair("p4", ["B"]),
             pair("p5", ["A", "B", "tie"]), pair("p6", ["A"])]
    judged = dict(zip(["p1", "p2", "p3", "p4", "p5", "p6"], ["A", "tie", "tie", "A", "tie", "A"], strict=True))
    mixed = summarize(items, {item_id: said(p) for item_id, p in judged.items()}, ci=False)
    assert mixed.n["accuracy"] == 11 and mixed.no_decision["accuracy"] == 4
    assert mixed.metrics["accuracy"] == pytest.approx(5 / 11)  # p1 2, p3 1, p5 1, p6 1
    assert mixed.no_decision["accuracy_no_tie"] == 4 and mixed.n["accuracy_no_tie"] == 9


def test_a_session_stored_under_the_rule_before_is_shown_with_its_no_decisions_recounted(tmp_path, capsys) -> None:
    """A rule-3 summary counted a matched human tie as a no decision: shown again, it is recomputed (rule 4)."""
    data = tmp_path / "pairs.jsonl"
    rows = [{"id": f"p{i}", "question": "Which?", "references": ["same size"],
             "candidates": {"x": "one two", "y": "six ten"},  # one length: `length` ties every pair
             "gold": {"kind": "pairwise", "a": "x", "b": "y", "labels": [label]}}
            for i, label in enumerate(["tie", "tie", "tie", "A"])]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    sessions = tmp_path / "s"
    out = run_json(capsys, "run", str(data), "--judge", "length", "--sessions-dir", str(sessions))
    assert out["judges"]["length"]["no_decision"]["accuracy"] == 1  # the A label; the three ties are hits
    session_file = sessions / out["session"] / "session.json"
    stored = json.loads(session_file.read_text())
    for doc in stored["summary"].values():  # as rule 3 wrote it: every label of a tied pair undecided
        doc["tie_rule"] = 3
        doc["no_decision"]["accuracy"] = 4
        doc["by_convention"][doc["convention"]]["no_decision"]["accuracy"] = 4
    session_file.write_text(json.dumps(stored))
    code, text, _ = run_cli(capsys, "--sessions-dir", str(sessions), "sessions", "show", out["session"])
    text = " ".join(text.split())
    assert code == 0 and "recomputed" in text and "1/4 no decision" in text and "4/4 no decision" not in text, text
