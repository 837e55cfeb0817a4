"""The baselines' steps reach the run state and the Baselines panel, one readable line each."""

from __future__ import annotations

from textual.app import App, ComposeResult

from qatui.data.loaders import demo_dataset
from qatui.events import DimensionRated, PairJudged, PointScored, event_from_dict
from qatui.tui.state import RunState
from qatui.tui.widgets.baseline_panel import BaselinePanel


def host(panel_class) -> App:
    """An app holding one panel, with the theme variable qatui's themes define for panels."""

    class Host(App):
        def get_theme_variable_defaults(self) -> dict[str, str]:
            return {"panel-border": "#808080"}

        def compose(self) -> ComposeResult:
            yield panel_class()

    return Host()


async def test_baseline_steps_fold_into_the_state_and_show_in_the_panel() -> None:
    item = demo_dataset().items[0]
    state = RunState([item], ["pointwise", "pairwise-ab", "geval"], seed=0)
    stamp = {"item_id": item.id}
    state.fold(PointScored(**stamp, judge="pointwise", response="Response 2", score=8.12, raw="... [[8.12]]"))
    state.fold(PairJudged(**stamp, judge="pairwise-ab", first="Response 1", second="Response 2", choice="B",
                          ranked_by="win_rate", rematch=True, reasked=True))
    state.fold(PairJudged(**stamp, judge="pairwise", first="Response 1", second="Response 2", choice="A"))
    state.fold(DimensionRated(**stamp, judge="geval", response="Response 1", dimension="accuracy",
                              method="samples", ratings=[4, 5], score=4.5))
    assert state.tasks[(item.id, "pointwise")].baseline_steps == ["Response 2: 8.12 / 10"]
    state.fold(PointScored(**stamp, judge="pointwise", response="Response 1", score=2.0, label="partly"))
    assert state.tasks[(item.id, "pointwise")].baseline_steps[-1] == "Response 1: partly"  # a label judge's choice

    assert state.tasks[(item.id, "pairwise-ab")].baseline_steps == [
        "Response 1 vs Response 2: Response 2 (rematch of a win-rate tie) (re-asked)"]
    assert state.tasks[(item.id, "geval")].baseline_steps == ["Response 1 accuracy: 4.50 (samples)"]
    assert [p.choice for p in state.tasks[(item.id, "pairwise")].pairs] == ["A"]  # CALF's: the pairs panel
    assert state.tasks[(item.id, "pairwise")].baseline_steps == []

    app = host(BaselinePanel)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.query_one(BaselinePanel)
        panel.task = state.tasks[(item.id, "geval")]
        await pilot.pause()
        assert "Response 1 accuracy: 4.50 (samples)" in str(panel.render())
        assert panel.has_content(panel.task)


def test_a_session_stored_with_the_old_pairwise_ab_event_replays_its_choices_as_before() -> None:
    """MinosEval's A / B choice was stored as "pair_chosen" before both pairwise judges shared `PairJudged`."""
    item = demo_dataset().items[0]
    state = RunState([item], ["pairwise-ab"], seed=0)
    old = event_from_dict({"type": "pair_chosen", "item_id": item.id, "judge": "pairwise-ab", "first": "Response 1",
                           "second": "Response 2", "choice": "B", "raw": "[[B]]", "rematch": True})
    assert (old.type, old.ranked_by, old.winner) == ("pair_judged", "win_rate", "Response 2")
    state.fold(old)
    assert state.tasks[(item.id, "pairwise-ab")].baseline_steps == [
        "Response 1 vs Response 2: Response 2 (rematch of a win-rate tie)"]
    assert state.tasks[(item.id, "pairwise-ab")].pairs == []


async def test_the_key_points_panel_names_the_nli_model_the_verdict_used() -> None:
    from qatui.events import KeyPointsExtracted, Verdict
    from qatui.tui.clipboard import panel_text
    from qatui.tui.widgets.entailment_panel import EntailmentPanel

    item = demo_dataset().items[0]
    state = RunState([item], ["minos"], seed=0)
    stamp = {"item_id": item.id, "judge": "minos"}
    state.fold(KeyPointsExtracted(**stamp, points=["Salt is NaCl."], reference_index=0))
    order = list(item.candidates)
    state.fold(Verdict(**stamp, scores={cid: 0.0 for cid in order}, ranking=order, order=order,
                       details={"strategy": "key_points", "nli": "llm"}))

    app = host(EntailmentPanel)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.query_one(EntailmentPanel)
        panel.task = state.tasks[(item.id, "minos")]
        await pilot.pause()
        assert "NLI model: llm" in panel_text(panel)
