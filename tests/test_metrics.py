"""Meta-evaluation metrics against hand-computed cases and scipy itself."""

from __future__ import annotations

import math
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import kendalltau, pearsonr, spearmanr
from tui_support import exact_interval

from qatui.data.model import Item, PairwiseGold, RankingGold, RatingsGold
from qatui.events import Verdict
from qatui.metrics import JudgeMetrics, fleiss_kappa, judge_agreement, krippendorff_alpha, ranking_tau, summarize
from qatui.metrics.bootstrap import grouped_mean, mean_ci
from qatui.metrics.correlation import correlations
from qatui.metrics.kendall import kendall_tau_b
from qatui.metrics.pairwise import judge_preference, judgement_hits
from qatui.metrics.pointwise import document_correlations, pooled_correlations
from qatui.metrics.ranking import question_ranking_stats
from qatui.metrics.rbo import rbo


def strict(ids: str) -> list[list[str]]:
    """A gold ranking without ties from one-letter candidate ids."""
    return [[cid] for cid in ids]


def ranked(ranking: str, scores: dict[str, float] | None = None) -> Verdict:
    """A verdict ranking one-letter candidate ids best first."""
    scores = scores if scores is not None else {cid: -float(i) for i, cid in enumerate(ranking)}
    return Verdict(scores=scores, ranking=list(ranking), order=sorted(ranking))


def preferring(a: str, b: str, preference: str) -> Verdict:
    """A two-candidate verdict with a preference relative to (a, b)."""
    ranking = [b, a] if preference == "B" else [a, b]
    return Verdict(scores={}, ranking=ranking, order=[a, b], pair=(a, b), preference=preference)


def item(item_id: str, gold, candidates: str = "abcd", **fields) -> Item:
    """An item over one-letter candidates with the given gold."""
    return Item(id=item_id, question="q?", candidates={c: f"answer {c}" for c in candidates}, gold=gold, **fields)


def assert_contract(result: JudgeMetrics) -> None:
    """Every value finite and in range; every CI, n and breakdown value consistent with it."""
    values = list(result.metrics.values()) + [v for g in result.breakdown.values() for m in g.values() for v in m.values()]
    for value in values:
        assert isinstance(value, float) and math.isfinite(value) and -1.0 <= value <= 1.0
    for key, (low, high) in result.ci.items():
        assert math.isfinite(low) and math.isfinite(high) and low <= high
        assert key in result.metrics
    assert set(result.n) == set(result.metrics)


# --- RBO -------------------------------------------------------------------------------


def test_rbo_identical_strict_lists_is_one() -> None:
    for p in (0.5, 0.9):
        assert rbo("abcdef", strict("abcdef"), p) == pytest.approx(1.0)
        assert rbo("a", strict("a"), p) == pytest.approx(1.0)


def test_rbo_hand_computed_swap() -> None:
    # X_1 = 1, X_2 = 1, X_3 = 3; p = 0.5:
    # X_3/3 p^3 + (1-p)/p (1*0.5 + 1/2*0.25 + 1*0.125) = 0.125 + 0.75 = 0.875
    assert rbo("abc", strict("acb"), 0.5) == pytest.approx(0.875)


def test_rbo_disjoint_is_zero() -> None:
    assert rbo("ab", strict("cd"), 0.9) == 0.0


def test_rbo_tied_gold_uses_fractional_overlap() -> None:
    # gold [[a, b], [c]]: at depth 1 a and b weigh 1/2 each, so X_1 = 0.5, X_2 = 2, X_3 = 3;
    # 1*0.125 + (0.5*0.5 + 1*0.25 + 1*0.125) = 0.75, the same for either order within the tie.
    assert rbo("abc", [["a", "b"], ["c"]], 0.5) == pytest.approx(0.75)
    assert rbo("bac", [["a", "b"], ["c"]], 0.5) == pytest.approx(0.75)
    assert rbo("cab", [["a", "b"], ["c"]], 0.5) < 0.75


def test_rbo_uneven_lists_extrapolate() -> None:
    # A list against its own prefix extrapolates to full agreement (eq. 32).
    assert rbo("abcd", strict("ab"), 0.5) == pytest.approx(1.0)
    # S = ab (s=2), L = cabd (l=4): X = 0, 1, 2, 2; X_s = 1; p = 0.5, (1-p)/p = 1:
    # seen 0.5*0.25 + 2/3*0.125 + 0.5*0.0625 = 0.2395833; unseen 1/6*0.125 + 2/8*0.0625 = 0.0364583;
    # tail ((2-1)/4 + 1/2) * 0.0625 = 0.046875; total 0.3229167
    assert rbo("ab", strict("cabd"), 0.5) == pytest.approx(0.3229166667)


def test_rbo_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        rbo("ab", strict("ab"), 1.0)
    with pytest.raises(ValueError):
        rbo("", strict("ab"), 0.5)


# --- correlations and per-question ranking statistics ----------------------------------


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-50, 50), st.integers(-50, 50)), min_size=3, max_size=12)
       .filter(lambda pairs: len({x for x, _ in pairs}) > 1 and len({y for _, y in pairs}) > 1),
       st.integers(0, 1017), st.integers(0, 1017))
def test_correlations_of_any_finite_magnitudes_are_those_of_the_values_at_a_reading_scale(pairs, kx, ky) -> None:
    """Ratings near the largest float (1e308: a dataset may hold them) give the figures the same ratings give at a
    scale people use: never NaN, never a 0 made by squares past the largest float (which is what they were)."""
    small_x, small_y = [float(x) for x, _ in pairs], [float(y) for _, y in pairs]
    big_x, big_y = [math.ldexp(x, kx) for x in small_x], [math.ldexp(y, ky) for y in small_y]
    stats = correlations(big_x, big_y)
    assert set(stats) == {"kendall", "spearman", "pearson"}
    assert stats["pearson"] == pytest.approx(pearsonr(small_x, small_y).statistic, abs=1e-9)
    assert stats["kendall"] == pytest.approx(kendalltau(small_x, small_y).statistic, abs=1e-12)
    assert stats["spearman"] == pytest.approx(spearmanr(small_x, small_y).statistic, abs=1e-12)


def test_correlations_match_scipy_and_skip_undefined() -> None:
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=12), rng.integers(0, 4, size=12).astype(float)
    stats = correlations(x, y)
    assert stats["kendall"] == pytest.approx(kendalltau(x, y, variant="b").statistic)
    assert stats["spearman"] == pytest.approx(spearmanr(x, y).statistic)
    assert stats["pearson"] == pytest.approx(pearsonr(x, y).statistic)
    assert correlations([1.0], [2.0]) == {}
    assert correlations([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]) == {}
    assert correlations([1.0, 2.0, 3.0], [5.0, 5.0, 5.0]) == {}


def test_ranking_stats_for_a_known_permutation() -> None:
    # One discordant pair (a, b) of six: tau = (5 - 1) / 6; rho = 1 - 6*2 / (4*15) = 0.8 = Pearson.
    stats = question_ranking_stats(RankingGold(tiers=strict("abcd")), ranked("bacd"))
    assert stats["kendall"] == pytest.approx(2 / 3)
    assert stats["spearman"] == pytest.approx(0.8)
    assert stats["pearson"] == pytest.approx(0.8)
    assert stats["rbo_0.5"] == pytest.approx(rbo("bacd", strict("abcd"), 0.5))
    assert stats["rbo_0.9"] == pytest.approx(rbo("bacd", strict("abcd"), 0.9))
    perfect = question_ranking_stats(RankingGold(tiers=strict("abcd")), ranked("abcd"))
    assert perfect == pytest.approx({"kendall": 1.0, "spearman": 1.0, "pearson": 1.0, "rbo_0.5": 1.0, "rbo_0.9": 1.0,
                                     "no_decision": 0.0})


def test_ranking_stats_with_tied_gold_use_tau_b() -> None:
    # grades a=b=1, c=0; both pairs with c concordant, (a, b) tied in gold only:
    # tau_b = 2 / sqrt((3 - 1) * (3 - 0)) = 2 / sqrt(6)
    gold = RankingGold(tiers=[["a", "b"], ["c"]])
    stats = question_ranking_stats(gold, ranked("abc"))
    assert stats["kendall"] == pytest.approx(2 / math.sqrt(6))
    assert stats["spearman"] == pytest.approx(spearmanr([1, 1, 0], [0, -1, -2]).statistic)
    assert stats["pearson"] == pytest.approx(pearsonr([1, 1, 0], [0, -1, -2]).statistic)
    assert stats["rbo_0.5"] == pytest.approx(0.75)


def test_ranking_stats_restrict_to_common_candidates() -> None:
    # The judge also ranked d, which the gold leaves unranked: only a, b, c count.
    gold = RankingGold(tiers=strict("abc"))
    assert question_ranking_stats(gold, ranked("adbc")) == pytest.approx(question_ranking_stats(gold, ranked("abc")))


def test_ranking_stats_skip_single_candidate_and_constant_gold() -> None:
    assert question_ranking_stats(RankingGold(tiers=[["a"]]), ranked("a")) == {}
    assert question_ranking_stats(RankingGold(tiers=[["a", "b", "c"]]), ranked("abc")) == {}
    # Two tiers, but the judge ranked only one candidate of them.
    assert question_ranking_stats(RankingGold(tiers=[["a"], ["b"]]), ranked("a")) == {}


def test_two_candidate_ranking_needs_nothing_special() -> None:
    stats = question_ranking_stats(RankingGold(tiers=strict("ab")), ranked("ba"))
    # RBO: X_1 = 0, X_2 = 2, so X_2/2 p^2 + (1-p)/p * (2/2 p^2) = p^2 + (1-p) p = p
    assert stats == pytest.approx({"kendall": -1.0, "spearman": -1.0, "pearson": -1.0, "rbo_0.5": 0.5, "rbo_0.9": 0.9,
                                   "no_decision": 0.0})


# --- pairwise --------------------------------------------------------------------------


def test_judge_preference_orients_to_the_gold_pair() -> None:
    assert judge_preference(preferring("x", "y", "A"), "x", "y") == "A"
    assert judge_preference(preferring("x", "y", "A"), "y", "x") == "B"
    assert judge_preference(preferring("x", "y", "tie"), "y", "x") == "tie"
    from_scores = Verdict(scores={"x": 1.0, "y": 2.0}, ranking=["y", "x"], order=["x", "y"])
    assert judge_preference(from_scores, "x", "y") == "B"
    assert judge_preference(Verdict(scores={"x": 1.0, "y": 1.0}, ranking=["x", "y"], order=["x", "y"]), "x", "y") == "tie"
    assert judge_preference(Verdict(scores={}, ranking=[], order=[]), "x", "y") is None


def test_accuracy_counts_every_label_and_ties() -> None:
    gold = PairwiseGold(a="a", b="b", labels=["A", "A", "tie"])
    assert judgement_hits(gold, preferring("a", "b", "A")) == {"accuracy": [1.0, 1.0, 0.0], "accuracy_no_tie": [1.0, 1.0]}
    # A judge tie is right only against the human tie, and always wrong without human ties.
    assert judgement_hits(gold, preferring("a", "b", "tie")) == {"accuracy": [0.0, 0.0, 1.0], "accuracy_no_tie": [0.0, 0.0]}


# --- pointwise -------------------------------------------------------------------------


def ratings(per_candidate: dict[str, float], dim: str = "coherence") -> RatingsGold:
    return RatingsGold(ratings={cid: {dim: value} for cid, value in per_candidate.items()})


def scored(scores: dict[str, float]) -> Verdict:
    return Verdict(scores=scores, ranking=sorted(scores, key=lambda c: -scores[c]), order=sorted(scores))


# doc1 agrees perfectly, doc2 perfectly disagrees: the summary level averages to 0, yet pooled,
# human [1,2,3,3,4,5] vs judge [1,2,3,6,5,4] give Pearson 9 / sqrt(10 * 17.5) = 0.6803.
# doc3 has constant judge scores (no summary-level value); doc4 has a single candidate.
TINY_RATINGS = [
    (ratings({"a": 1, "b": 2, "c": 3}), scored({"a": 1, "b": 2, "c": 3})),
    (ratings({"a": 3, "b": 4, "c": 5}), scored({"a": 6, "b": 5, "c": 4})),
]
DEGENERATE_RATINGS = [
    (ratings({"a": 1, "b": 5}), scored({"a": 2, "b": 2})),
    (ratings({"a": 4}), scored({"a": 1})),
]


def test_summary_level_versus_sample_level() -> None:
    per_doc = [document_correlations(gold, verdict, "coherence") for gold, verdict in TINY_RATINGS]
    assert per_doc[0] == pytest.approx({"kendall": 1.0, "spearman": 1.0, "pearson": 1.0, "no_decision": 0.0})
    assert per_doc[1] == pytest.approx({"kendall": -1.0, "spearman": -1.0, "pearson": -1.0, "no_decision": 0.0})
    # People told a and b apart and the judge scored them alike: a no decision, 0; one candidate: nothing.
    assert [document_correlations(g, v, "coherence") for g, v in DEGENERATE_RATINGS] == [
        {"kendall": 0.0, "spearman": 0.0, "pearson": 0.0, "no_decision": 1.0}, {}]
    pooled, n = pooled_correlations(TINY_RATINGS, "coherence")
    assert n == 6
    assert pooled["pearson"] == pytest.approx(9 / math.sqrt(175))
    human, judge = [1, 2, 3, 3, 4, 5], [1, 2, 3, 6, 5, 4]
    assert pooled["spearman"] == pytest.approx(spearmanr(human, judge).statistic)
    assert pooled["kendall"] == pytest.approx(kendalltau(human, judge).statistic)


def test_summarize_ratings_keys() -> None:
    pairs = TINY_RATINGS + DEGENERATE_RATINGS
    items = [item(f"d{i}", gold, candidates="abc") for i, (gold, _) in enumerate(pairs)]
    verdicts = {f"d{i}": verdict for i, (_, verdict) in enumerate(pairs)}
    result = summarize(items, verdicts)
    assert_contract(result)
    assert set(result.metrics) == {"pearson", "spearman", "kendall", *(f"{k}_sample" for k in ("pearson", "spearman", "kendall"))}
    assert result.metrics["pearson"] == pytest.approx(0.0)  # (1 - 1 + 0) / 3: the judge's tie counts 0
    assert result.n["pearson"] == 3 and result.no_decision["pearson"] == 1
    # Pooled over all four documents now: 9 pairs, the degenerate ones included.
    assert result.n["pearson_sample"] == 9
    human, judge = [1, 2, 3, 3, 4, 5, 1, 5, 4], [1, 2, 3, 6, 5, 4, 2, 2, 1]
    assert result.metrics["pearson_sample"] == pytest.approx(pearsonr(human, judge).statistic)
    assert "pearson_sample" not in result.ci and "pearson" in result.ci


def test_summarize_several_dimensions() -> None:
    def gold(coherence: list[float], fluency: list[float]) -> RatingsGold:
        return RatingsGold(ratings={c: {"coherence": h, "fluency": f} for c, h, f in zip("abc", coherence, fluency)})

    gold1, gold2 = gold([1, 2, 3], [3, 2, 1]), gold([1, 2, 3], [1, 1, 2])
    verdict = scored({"a": 1, "b": 2, "c": 3})
    result = summarize([item("d1", gold1, "abc"), item("d2", gold2, "abc")], {"d1": verdict, "d2": verdict})
    assert_contract(result)
    for key in ("pearson", "spearman", "kendall", "pearson_sample", "spearman_sample", "kendall_sample"):
        per_dim = [result.metrics[f"{key}/{dim}"] for dim in ("coherence", "fluency")]
        assert result.metrics[key] == pytest.approx(sum(per_dim) / 2)
    assert result.metrics["kendall/coherence"] == pytest.approx(1.0)
    assert result.metrics["kendall/fluency"] == pytest.approx((-1.0 + kendalltau([1, 1, 2], [1, 2, 3]).statistic) / 2)


# --- summarize: contract keys per gold kind ---------------------------------------------

RANKING_KEYS = {"kendall", "spearman", "pearson", "rbo_0.5", "rbo_0.9"}


def test_summarize_ranking_gold() -> None:
    items = [
        item("q1", RankingGold(tiers=strict("abcd")), question_type="factoid"),
        item("q2", RankingGold(tiers=[["a", "b"], ["c", "d"]]), question_type="non-factoid"),
        item("q3", RankingGold(tiers=[["a", "b", "c", "d"]]), question_type="factoid"),  # constant gold
        item("q4", RankingGold(tiers=strict("abcd"))),  # no verdict: failed
        item("q5", None),  # no gold
    ]
    verdicts = {"q1": ranked("bacd"), "q2": ranked("abcd"), "q3": ranked("abcd"), "q5": ranked("abcd")}
    result = summarize(items, verdicts)
    assert_contract(result)
    assert set(result.metrics) == RANKING_KEYS
    q1 = question_ranking_stats(items[0].gold, verdicts["q1"])
    q2 = question_ranking_stats(items[1].gold, verdicts["q2"])
    for key in RANKING_KEYS:
        assert result.metrics[key] == pytest.approx((q1[key] + q2[key]) / 2)
        assert result.n[key] == 2
    shown = [{key: value for key, value in stats.items() if key != "no_decision"} for stats in (q1, q2)]
    assert result.breakdown == {"question_type": {"factoid": pytest.approx(shown[0]),
                                                  "non-factoid": pytest.approx(shown[1])}}
    # each group's units: factoid q1 (q3's constant gold is no question), non-factoid q2
    assert result.breakdown_n == {"question_type": {"factoid": dict.fromkeys(RANKING_KEYS, 1),
                                                    "non-factoid": dict.fromkeys(RANKING_KEYS, 1)}}


def test_summarize_pairwise_gold_counts_judgements() -> None:
    items = [
        item("p1", PairwiseGold(a="a", b="b", labels=["A", "A", "B"], pair_type="human_vs_model"), "ab"),
        item("p2", PairwiseGold(a="a", b="b", labels=["tie", "B"], pair_type="model_vs_model"), "ab"),
    ]
    verdicts = {"p1": preferring("a", "b", "A"), "p2": preferring("b", "a", "tie")}
    result = summarize(items, verdicts)
    assert_contract(result)
    assert set(result.metrics) == {"accuracy", "accuracy_no_tie", "kappa", "kappa_linear"}
    # p1: hits 1, 1, 0; p2 (judge tie): 1, 0 -> 3/5; without human ties: 1, 1, 0, 0 -> 2/4
    # kappa over A, tie, B: rows A [2,0,0], tie [0,1,0], B [1,1,0]; p_o = 3/5, p_e = (2*3 + 1*2 + 2*0)/25 = 8/25,
    # (15 - 8)/(25 - 8) = 7/17; linear: observed (2 + 1)/5, expected (4 + 3 + 12 + 4)/25, 1 - (3/5)/(23/25) = 8/23
    assert result.metrics == pytest.approx({"accuracy": 0.6, "accuracy_no_tie": 0.5, "kappa": 7 / 17,
                                            "kappa_linear": 8 / 23})
    assert result.n == {"accuracy": 5, "accuracy_no_tie": 4, "kappa": 5, "kappa_linear": 5}
    assert result.classes["confusion"] == [[2, 0, 0], [0, 1, 0], [1, 1, 0]]
    assert result.breakdown["pair_type"] == {
        "human_vs_model": pytest.approx({"accuracy": 2 / 3, "accuracy_no_tie": 2 / 3}),
        "model_vs_model": pytest.approx({"accuracy": 0.5, "accuracy_no_tie": 0.0}),
    }
    # the labels each group's figures counted: p1 three (all decisive), p2 two (one of them a tie)
    assert result.breakdown_n["pair_type"] == {"human_vs_model": {"accuracy": 3, "accuracy_no_tie": 3},
                                               "model_vs_model": {"accuracy": 2, "accuracy_no_tie": 1}}


def test_summarize_omits_accuracy_no_tie_without_decisive_labels() -> None:
    result = summarize([item("p", PairwiseGold(a="a", b="b", labels=["tie"]), "ab")], {"p": preferring("a", "b", "tie")})
    assert result.metrics == {"accuracy": 1.0}
    assert result.ci == {}  # one judgement: no interval


def test_summarize_mixed_ranking_and_pairwise() -> None:
    items = [
        item("r1", RankingGold(tiers=strict("abc")), "abc"),
        item("r2", RankingGold(tiers=strict("abc")), "abc"),
        item("p1", PairwiseGold(a="a", b="b", labels=["A"]), "ab"),
    ]
    verdicts = {"r1": ranked("abc"), "r2": ranked("acb"), "p1": preferring("a", "b", "B")}
    result = summarize(items, verdicts)
    assert_contract(result)
    # one label, A, judged B: p_o = p_e = 0, so kappa would be 0 for any judge of one class of labels: not given
    assert set(result.metrics) == RANKING_KEYS | {"accuracy", "accuracy_no_tie"}
    assert "one class (A)" in result.classes["kappa_undefined"]
    assert result.metrics["accuracy"] == 0.0
    assert result.n["kendall"] == 2


def test_summarize_without_anything_computable() -> None:
    items = [item("q", RankingGold(tiers=[["a", "b"]]), "ab"), item("r", RatingsGold(ratings={"a": {"x": 1.0}}), "ab")]
    result = summarize(items, {"q": ranked("ab"), "r": scored({"a": 1.0})})
    assert result.model_copy(update={"left_out": {}}) == JudgeMetrics()
    # both scored, neither ordered by its gold: counted, though no figure is left (RBO is of rankings only)
    assert result.left_out == {"kendall": 2, "spearman": 2, "pearson": 2, "rbo_0.5": 1, "rbo_0.9": 1}
    assert summarize([], {}) == JudgeMetrics()


def test_summarize_never_nan_on_random_data() -> None:
    rng = np.random.default_rng(11)
    items, verdicts = [], {}
    for i in range(30):
        ids = "abcde"[: rng.integers(1, 6)]
        tiers = [[cid] for cid in ids] if i % 3 else [list(ids)]
        items.append(item(f"r{i}", RankingGold(tiers=tiers), "abcde", question_type=("factoid", "non-factoid")[i % 2]))
        verdicts[f"r{i}"] = ranked("".join(rng.permutation(list("abcde"))))
        rated = {cid: {"coh": float(rng.integers(1, 3))} for cid in ids}
        items.append(item(f"s{i}", RatingsGold(ratings=rated), "abcde"))
        verdicts[f"s{i}"] = scored({cid: float(rng.integers(0, 2)) for cid in ids})
        labels = list(rng.choice(["A", "B", "tie"], size=rng.integers(1, 4)))
        items.append(item(f"p{i}", PairwiseGold(a="a", b="b", labels=labels, pair_type="t"), "ab"))
        verdicts[f"p{i}"] = preferring("a", "b", str(rng.choice(["A", "B", "tie"])))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = summarize(items, verdicts, seed=5)
    assert_contract(result)
    assert {"kendall", "rbo_0.9", "accuracy", "pearson_sample"} <= set(result.metrics)


def test_summarize_ci_is_deterministic_and_optional() -> None:
    items = [item(f"q{i}", RankingGold(tiers=strict("abcd"))) for i in range(8)]
    orders = ["abcd", "bacd", "abdc", "dcba", "acbd", "abcd", "badc", "cabd"]
    verdicts = {f"q{i}": ranked(order) for i, order in enumerate(orders)}
    first, again = summarize(items, verdicts, seed=1), summarize(items, verdicts, seed=1)
    assert first.ci == again.ci and set(first.ci) == RANKING_KEYS
    for key, (low, high) in first.ci.items():
        assert low <= first.metrics[key] <= high
    assert summarize(items, verdicts, ci=False).ci == {}
    assert JudgeMetrics.model_validate_json(first.model_dump_json()) == first


# --- bootstrap -------------------------------------------------------------------------


def test_mean_ci_contains_mean_and_is_seeded() -> None:
    values = np.random.default_rng(0).normal(size=40)
    low, high = mean_ci(values, seed=7)
    assert low < values.mean() < high
    assert mean_ci(values, seed=7) == (low, high)
    assert mean_ci(values, seed=8) != (low, high)


def test_mean_ci_degenerate_cases_without_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mean_ci([0.5]) is None
        assert mean_ci([]) is None
        assert mean_ci([0.25, 0.25, 0.25]) is None  # no spread to resample: no interval, never [0.25, 0.25]
        assert mean_ci([1.0] * 6) is None
        assert mean_ci([[1.0, np.nan], [np.nan, np.nan]]) is None


@pytest.mark.parametrize("n", [2, 6, 30])
def test_a_proportion_every_unit_gave_alike_gets_the_exact_binomial_interval_never_a_point(n) -> None:
    """6 of 6 items judged right: a percentile bootstrap says [1, 1], since every resample is 6 of 6. The interval is
    Clopper and Pearson's for n successes in n trials (and 0 in n), as SciPy's `binomtest` computes it. A proportion
    of another value that every unit repeats has no interval."""
    from qatui.metrics.bootstrap import defined_interval, ratio_ci

    low, high = ratio_ci([(2, 2)] * n)  # each item: both of its labels agreed with
    assert [low, high] == exact_interval(n, n) and low < 1.0
    low, high = ratio_ci([(0, 3)] * n)
    assert [low, high] == exact_interval(0, n)
    assert ratio_ci([(1, 2)] * n) is None
    assert defined_interval(np.ones(1000), units=n) == ratio_ci([(1, 1)] * n)
    assert defined_interval(np.ones(1000)) is None  # kappa: no proportion, no interval


def test_grouped_mean_averages_columns_over_their_own_rows() -> None:
    table = [[1.0, np.nan], [0.0, 1.0], [np.nan, np.nan]]
    # column means 0.5 and 1.0; their mean 0.75
    assert grouped_mean(table) == pytest.approx(0.75)
    low, high = mean_ci(table, seed=0)
    assert low <= 0.75 <= high


# --- agreement between judges and reliability coefficients ------------------------------


def test_judge_agreement() -> None:
    a = {"q1": ranked("abcd"), "q2": ranked("abc"), "p": preferring("x", "y", "A"), "only_a": ranked("ab")}
    b = {"q1": ranked("abcd"), "q2": ranked("cba"), "p": preferring("y", "x", "B"), "only_b": ranked("ab")}
    result = judge_agreement(a, b)
    # q1 tau 1, q2 tau -1, p (two candidates, x over y for both) tau 1
    assert result.metrics == pytest.approx({"kendall": 1 / 3, "top1": 2 / 3, "preference": 1.0})
    assert result.n == {"kendall": 3, "top1": 3, "preference": 1}
    assert judge_agreement({}, b).metrics == {}
    assert ranking_tau(ranked("abc"), ranked("cba")) == pytest.approx(-1.0)
    assert ranking_tau(ranked("ab"), ranked("ac")) is None  # one shared candidate


def test_agreement_between_judges_counts_a_judge_that_told_nothing_apart_as_agreeing_with_no_one() -> None:
    """Where one judge tied every response and the other ranked them, `top1` credited the tie 1 in k of the other's
    first choices (a random tie-break) and `kendall` left the item out, while the line named it among its items.
    Each such item now counts 0 in both and is counted as a no decision; where both tied everything there is no
    order to agree on and the item is left out. Top-1 reads what each said: two judges naming the same tied best
    agree (a random tie-break gave them 1/2)."""
    from scipy.stats import kendalltau

    tied = ranked("abcd", dict.fromkeys("abcd", 1.0))
    a_first = ranked("abc", {"a": 2.0, "b": 2.0, "c": 1.0})  # a = b > c
    a = {"q1": ranked("abcd"), "q2": tied, "q3": tied, "q4": a_first, "q5": a_first}
    b = {"q1": ranked("dcba"), "q2": ranked("bacd"), "q3": tied, "q4": ranked("bac"), "q5": a_first}
    result = judge_agreement(a, b)
    partial = kendalltau([2, 2, 1], [2, 3, 1]).statistic  # a, b, c: a = b > c against b > a > c (scipy's tau-b)
    assert result.n == {"kendall": 4, "top1": 4}  # q3: both tied every response
    assert result.no_decision == {"kendall": 1, "top1": 1} and result.neither_decided == 1  # q2; q3
    assert result.metrics["kendall"] == pytest.approx((-1.0 + 0.0 + partial + 1.0) / 4)
    # q4: {a, b} first against {b}: b of a and b; q5: both said a = b first, the same (a random tie-break gave 1/2)
    assert result.metrics["top1"] == pytest.approx((0.0 + 0.0 + 1 / 2 + 1.0) / 4)
    assert judge_agreement({"q": tied}, {"q": ranked("abcd")}).metrics == {"kendall": 0.0, "top1": 0.0}


def test_fleiss_kappa_textbook_example() -> None:
    # Fleiss (1971) as on Wikipedia: 10 subjects, 14 raters, 5 categories -> kappa = 0.210
    table = [
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ]  # fmt: skip
    assert fleiss_kappa(table) == pytest.approx(0.20993, abs=1e-5)
    assert fleiss_kappa([[3, 0], [0, 3]]) == pytest.approx(1.0)
    assert fleiss_kappa([[2, 0], [2, 0]]) is None
    with pytest.raises(ValueError):
        fleiss_kappa([[2, 0], [1, 0]])


def test_krippendorff_alpha_textbook_example() -> None:
    # Krippendorff (2011), "Computing Krippendorff's alpha": 4 observers, 12 units, missing values.
    n = np.nan
    data = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, n, n, n],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, n, 3],
        [n, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, n],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, n],
    ]
    assert krippendorff_alpha(data, "nominal") == pytest.approx(0.743, abs=1e-3)
    assert krippendorff_alpha(data, "interval") == pytest.approx(0.849, abs=1e-3)
    assert krippendorff_alpha([[1, 1], [1, 1]]) is None
    assert krippendorff_alpha([[1, 2], [1, n]]) is None


def test_metrics_do_not_import_the_engine() -> None:
    code = "import sys, qatui.metrics; assert 'qatui.engine' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 6)), min_size=0, max_size=12))
def test_numpy_kendall_tau_b_equals_scipy_with_ties(pairs: list[tuple[int, int]]) -> None:
    """The TUI's per-row tau (no scipy import) is SciPy's tau-b, ties and degenerate samples included."""
    x, y = [float(a) for a, _ in pairs], [float(b) for _, b in pairs]
    mine = kendall_tau_b(x, y)
    theirs = correlations(x, y).get("kendall")  # SciPy's kendalltau, variant b
    assert (mine is None) == (theirs is None)
    if mine is not None:
        assert mine == pytest.approx(theirs, abs=1e-12)


def test_a_figure_says_how_many_scored_items_it_left_out_for_want_of_a_gold_order() -> None:
    """Two ranked questions (one with a single gold tier) and three rated documents (one rated alike throughout),
    every item scored: kendall averages r1, d1 and d2, and leaves out r2 and d3 (2), where the gold puts no
    response above another; RBO, of rankings only, leaves out r2 and never counts a document. Under `paper` the
    one-tier question counts 0 instead, and only d3 is left out."""
    items = [item("r1", RankingGold(tiers=[["a"], ["b"]]), "ab"), item("r2", RankingGold(tiers=[["a", "b"]]), "ab"),
             item("d1", ratings({"a": 1.0, "b": 2.0}), "ab"), item("d2", ratings({"a": 3.0, "b": 1.0}), "ab"),
             item("d3", ratings({"a": 2.0, "b": 2.0}), "ab")]
    verdicts = {"r1": ranked("ab"), "r2": ranked("ab"), "d1": scored({"a": 1.0, "b": 2.0}),
                "d2": scored({"a": 1.0, "b": 3.0}), "d3": scored({"a": 1.0, "b": 2.0})}
    strict = summarize(items, verdicts)
    assert strict.n["kendall"] == 3 and strict.left_out["kendall"] == 2
    assert strict.n["rbo_0.9"] == 1 and strict.left_out["rbo_0.9"] == 1
    assert "kendall_sample" not in strict.left_out  # pooled pairs: no document is left out of it
    paper = summarize(items, verdicts, convention="paper")
    assert paper.n["kendall"] == 4 and paper.left_out["kendall"] == 1 and "rbo_0.9" not in paper.left_out
    everything_ordered = summarize(items[:1] + items[2:4], verdicts)
    assert everything_ordered.left_out == {}


def test_a_proportion_of_single_trials_has_an_interval_that_moves_with_its_count() -> None:
    """One label per item: 11 hits of 12 had a bootstrap interval [0.750, 1.000], tighter and higher than 12 of
    12's exact [0.735, 1] (a worse judge looked surer). Every count now has Clopper-Pearson's exact interval, the
    beta quantiles of the textbook, so both bounds rise with the hits and the one-step-in interval is wider."""
    from scipy.stats import beta

    from qatui.metrics.bootstrap import ratio_ci

    for n in (2, 5, 12, 40, 101):
        previous = (-1.0, -1.0)
        for k in range(n + 1):
            low, high = ratio_ci([(1, 1)] * k + [(0, 1)] * (n - k))
            expected_low = 0.0 if k == 0 else beta.ppf(0.025, k, n - k + 1)
            expected_high = 1.0 if k == n else beta.ppf(0.975, k + 1, n - k)
            assert (low, high) == pytest.approx((expected_low, expected_high), abs=1e-9), (n, k)
            assert low > previous[0] and high > previous[1], (n, k)
            previous = (low, high)
    assert ratio_ci([(1, 1)] * 11 + [(0, 1)])[0] < ratio_ci([(1, 1)] * 12)[0]


def test_the_paired_interval_of_one_trial_items_covers_the_true_difference_as_often_as_it_says() -> None:
    """Bonett and Price's interval for a difference of paired proportions (`metrics.paired.paired_binary_interval`),
    checked by what an interval claims rather than by its formula: over 4,000 simulated runs of 20 items whose true
    chances of gaining and losing are known, the 95% interval holds the true difference in 93 to 97 of 100 inside
    the range, and at least 93 of 100 at its edge (where it is cautious); and it never narrows as the count nears
    the end."""
    from qatui.metrics.paired import paired_binary_interval

    rng = np.random.default_rng(7)
    for up, down, most in ((0.3, 0.1, 0.97), (0.45, 0.45, 0.97), (0.2, 0.0, 1.0), (0.05, 0.0, 1.0)):
        counts = rng.multinomial(20, [up, down, 1 - up - down], size=4000)
        held = sum(low <= up - down <= high
                   for gained, lost, _ in counts for low, high in [paired_binary_interval(gained, lost, 20)])
        assert 0.93 <= held / 4000 <= most, (up, down, held / 4000)
    lows = [paired_binary_interval(gained, 0, 12)[0] for gained in range(13)]
    assert lows == sorted(lows)  # more items gaining, never a lower bound below the one before
