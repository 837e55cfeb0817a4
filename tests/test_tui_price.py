"""New run prices the run it would start, as `run --plan` does, before anything is sent (the real Textual app).

The backbone is `openai/gpt-4o-mini` (in LiteLLM's bundled price map) at a loopback address that nothing is ever
sent to, with no key: pricing builds and counts every prompt and sends nothing. The price the screen shows is
compared with the one `qatui run --plan --offline --json` gives for the same dataset, judge and items.
"""

from __future__ import annotations

import asyncio
import json

from fakes import settle, wait_until
from tui_support import new_run_with

from qatui.cli import main
from qatui.config import parse_config
from qatui.store.session import SessionStore
from qatui.text import usd
from qatui.tui.app import QatuiApp
from qatui.tui.screens.new_run import NewRunScreen

CONFIG = ('[models]\ndefault_backbone = "mini"\n[cache]\ndir = "{cache}"\n'
          '[backbones.mini]\nmodel = "openai/gpt-4o-mini"\napi_base = "http://127.0.0.1:9/v1"\n'
          'api_key_env = "QATUI_TUI_PRICE_KEY"\n')


def plan_text(screen: NewRunScreen) -> str:
    return str(screen.query_one("#plan").content)


def planned_usd(tmp_path, capsys, limit: int) -> float:
    """The price `run --plan --offline --json` gives pairwise on the demo set's first `limit` items."""
    config = tmp_path / "config.toml"
    code = main(["--config", str(config), "--sessions-dir", str(tmp_path / "sessions"), "run", "demo", "--judge",
                 "pairwise", "--limit", str(limit), "--plan", "--offline", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)["cost"]["pairwise"]["usd"]


async def test_new_run_shows_the_plan_s_price_and_follows_the_items(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.delenv("QATUI_TUI_PRICE_KEY", raising=False)
    text = CONFIG.format(cache=tmp_path / "cache")
    (tmp_path / "config.toml").write_text(text, encoding="utf-8")
    app = QatuiApp(parse_config(text, "config.toml"), SessionStore(tmp_path / "sessions"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await new_run_with(app, pilot, "pairwise")
        await wait_until(pilot, lambda: "pairwise" in plan_text(screen) and "≈ $" in plan_text(screen),
                         "the price of every item", timeout=120)
        whole = plan_text(screen)
        screen.query_one("#limit").value = "3"
        await wait_until(pilot, lambda: "3 items" in plan_text(screen) and "≈ $" in plan_text(screen),
                         "the price of three items", timeout=120)
        three = plan_text(screen)
        await pilot.press("f4")
        await settle(pilot, lambda: "Price" in str(screen.query_one("#calls").content), "the Models tab's price")
        models_tab = str(screen.query_one("#calls").content)
        screen.query_one("#backbone").value = "local/smollm2"
        await wait_until(pilot, lambda: "local/smollm2" in plan_text(screen), "the embedded backbone's plan")
        embedded = plan_text(screen)
    # the CLI runs a loop of its own: off this test's
    assert f"≈ {usd(await asyncio.to_thread(planned_usd, tmp_path, capsys, 20))}" in whole
    assert f"≈ {usd(await asyncio.to_thread(planned_usd, tmp_path, capsys, 3))}" in three
    assert "pairwise" in models_tab and "at most" in models_tab
    assert "≈" not in embedded and "pricing" not in embedded  # an embedded backbone is free: no price to wait for


async def test_a_cost_cap_on_a_backbone_with_no_price_is_a_problem_before_ctrl_s(tmp_path, monkeypatch) -> None:
    """A cap over a backbone LiteLLM's price map lacks is refused by the start (what its calls cost cannot be
    counted); the plan line said "ctrl+s starts" all the same. It now names the backbone as the problem, and ctrl+s
    stays on the screen; a priced backbone keeps the cap."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    text = CONFIG.format(cache=tmp_path / "cache") + (
        '[backbones.unpriced]\nmodel = "openai/no-such-priced-model"\napi_base = "http://127.0.0.1:9/v1"\n'
        'api_key_env = "QATUI_TUI_PRICE_KEY"\n')
    app = QatuiApp(parse_config(text, "config.toml"), SessionStore(tmp_path / "sessions"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await new_run_with(app, pilot, "pairwise")
        screen.query_one("#max-cost").value = "5"
        await wait_until(pilot, lambda: "cap $5" in plan_text(screen), "the priced backbone's plan with its cap")
        assert "✗" not in plan_text(screen)
        screen.query_one("#backbone").value = "unpriced"
        await wait_until(pilot, lambda: "✗" in plan_text(screen), "the problem on the plan line")
        line = plan_text(screen)
        assert "'unpriced'" in line and "not in LiteLLM's price map" in line and "ctrl+s" not in line, line
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: any(n.title == "Cannot start yet" for n in app._notifications), "the refusal")
        assert app.screen is screen and not (tmp_path / "sessions").exists()
        screen.query_one("#max-cost").value = ""
        await wait_until(pilot, lambda: "✗" not in plan_text(screen), "no cap: nothing to price, no problem")
        refusals = sum(n.title == "Cannot start yet" for n in app._notifications)
        screen.query_one("#max-cost").value = "5"
        await pilot.press("ctrl+s")  # before the pricing worker checked the cap: checked off the loop, then refused
        await wait_until(pilot, lambda: sum(n.title == "Cannot start yet" for n in app._notifications) > refusals,
                         "the refusal of a cap not checked yet")
        assert app.screen is screen and not (tmp_path / "sessions").exists()
