"""`qatui report`: one self-contained HTML file, rendered by a real headless Chromium with the network cut off.

Sessions are real runs on real TinyDB files: MinosEval on the demo set (scripted backbone,
the real bundled NLI model), the pairwise judge through LiteLLM against the loopback
provider (with an API key in the environment), lexical judges on a ratings set and on a
hostile one. Chromium (Debian's package) opens each report from file://, takes a
screenshot, and writes a network log; any request the page made would be in it.
"""

from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path

import pytest

from browser import dump_dom, page_requests, screenshot
from qatui import extras
from qatui.cli import main
from qatui.config import Config
from qatui.data.loaders import demo_dataset
from qatui.engine.jobs import start_run
from qatui.judges.resources import Resources
from qatui.store.session import SessionStore
from qatui.text import plain
from fakes import Call, ScriptedLLM, answer_from_prompt
from tui_support import run_headless

KEY = "sk-report-test-4b1d8e2f9a7c"
HOSTILE = '<script>alert("q")</script></svg></pre><img src="http://evil.example/x.png">'
CONTROLS = "{{7*7}} {% if 1 %}jinja{% endif %} \x1b[2J\x07\x9b31m\u202eevil"
"""A template expression, a template tag and control characters (clear screen, bell, 8-bit CSI, a right-to-left
override): shown as text, never evaluated, never obeyed."""
EXTERNAL = re.compile(r"(?:https?:)?//[\w.-]+\.\w|\burl\((?!#)|@import|<link\b|<script\b|<img\b|<image\b|\bsrc=|\bhref=\"(?!#)",
                      re.IGNORECASE)
"""Anything in a report that could load from elsewhere or that its policy would block: a URL, a CSS url() or
@import, a link, a script, an image (even a data: one), a src, an href that is not a fragment of the page itself
(url(#clip) and href="#section" stay inside)."""


def _write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def _pairwise_items(path: Path) -> Path:
    """The demo set's five pairwise items."""
    lines = [line for line in (Path(demo_dataset().path).read_text(encoding="utf-8").splitlines())
             if '"kind": "pairwise"' in line]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _ratings_items(path: Path) -> Path:
    """Four documents, four summaries each, rated 1-5 on two dimensions."""
    records = []
    for d in range(4):
        reference = f"The council approved the new bridge over the river in district {d} after a long debate."
        candidates = {
            "s1": reference,
            "s2": f"The council approved a bridge in district {d}.",
            "s3": f"A long debate happened in district {d}.",
            "s4": "Weather was sunny on the weekend.",
        }
        ratings = {cid: {"coherence": 5 - i, "relevance": 5 - i - (d % 2) * (i == 1)} for i, cid in enumerate(candidates)}
        records.append({"id": f"doc{d}", "question": "Summarise the article.", "references": [reference],
                        "candidates": candidates, "gold": {"kind": "ratings", "ratings": ratings}})
    return _write_jsonl(path, records)


def _hostile_items(path: Path) -> Path:
    """Dataset text that would be markup if it were not escaped, in every field a report prints."""
    records = [{
        "id": f"x{i}", "question": f"{HOSTILE} question {i}?", "references": [f"reference {HOSTILE} {i}"],
        "context": [f"context {HOSTILE}"],
        "candidates": {"a": f"answer {HOSTILE} one {i}", "b": f"reference {HOSTILE} {i}", "c": f"</svg> nothing {CONTROLS}"},
        "gold": {"kind": "ranking", "tiers": [["a"], ["b"], ["c"]]},
    } for i in range(3)]
    return _write_jsonl(path, records)


def _pairwise_responder(body: dict) -> str:
    """The scripted pairwise answer (more words shared with the reference wins), its rationale hostile too."""
    content = body["messages"][-1]["content"]
    if "回答 A" in content:  # a Chinese pair: the choice follows the prompt's length
        answer = {"rationale": "按长度选择", "choice": "AB"[len(content) % 2]}
    elif "Answer A:" in content:
        answer = answer_from_prompt(Call("pair", body["messages"]))
    else:
        return "OK"  # the backbone check before the run
    return json.dumps({**answer, "rationale": answer["rationale"] + ' </pre><script>alert("model")</script>'})


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    """Every session the tests report on, made once: {name: id}, the store root and the config path."""
    from llm_server import FakeLLMServer

    root = tmp_path_factory.mktemp("report")
    store = SessionStore(root / "sessions")
    with pytest.MonkeyPatch.context() as env, FakeLLMServer(responder=_pairwise_responder,
                                                            max_lifetime_s=300) as server:
        env.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        env.setenv("XDG_CACHE_HOME", str(root / "xdg-cache"))
        env.setenv("REPORT_TEST_KEY", KEY)
        config_path = root / "config.toml"
        config_path.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{server.base_url}"\n'
                               f'api_key_env = "REPORT_TEST_KEY"\n[cache]\ndir = "{root / "cache"}"\n')
        config = Config()
        # the real bundled NLI model; the backbone scripted from the prompts
        resources = Resources(config, llm=ScriptedLLM(model="scripted/tui", stream=True))
        minos = start_run(store, demo_dataset(), ["minos"], config, limit=9, name="minos-demo", resources=resources)
        run_headless(minos)
        base = ["--config", str(config_path), "--sessions-dir", str(store.root)]
        pairs = _pairwise_items(root / "pairs.jsonl")
        runs = [
            ["run", str(pairs), "--judge", "pairwise", "--backbone", "fake", "--session", "pairwise"],
            ["run", str(pairs), "--judge", "length", "--judge", "rouge-l", "--session", "lexical-pairs"],
            ["run", str(_ratings_items(root / "ratings.jsonl")), "--judge", "rouge-l", "--session", "ratings"],
            ["run", str(_hostile_items(root / "hostile.jsonl")), "--judge", "rouge-l", "--session", HOSTILE],
        ]
        for args in runs:
            assert main([*base, *args]) == 0
        assert any(KEY in value for value in server.headers[-1].values())  # the backbone did get the key
    return {"root": root, "sessions": store.root, "config": config_path,
            "ids": {meta["name"]: meta["id"] for meta in store.list()}}


def _report(built: dict, capsys, *names: str, out: Path | None = None, extra: tuple[str, ...] = ()) -> tuple[int, str, Path]:
    """Run `qatui report` on sessions by name; (exit status, stderr, output path)."""
    stem = "-".join(re.sub(r"\W", "", name)[:12] for name in names)
    out = out or built["root"] / f"{stem}.html"
    code = main(["--sessions-dir", str(built["sessions"]), "report", *(built["ids"][n] for n in names),
                 "-o", str(out), *extra])
    _, err = capsys.readouterr()
    return code, err, out


def _self_contained(html: str) -> None:
    """No URL, no script, nothing loaded from elsewhere, no API key; an SVG plot at least."""
    assert [m.group() for m in EXTERNAL.finditer(html)] == []
    assert KEY not in html
    assert "<svg" in html


@pytest.mark.browser
def test_minos_report_renders_offline_with_plots_and_worst_items(built, capsys, tmp_path) -> None:
    code, err, out = _report(built, capsys, "minos-demo")
    assert code == 0 and f"wrote {out}" in err
    html = out.read_text(encoding="utf-8")
    _self_contained(html)
    assert "histogram of per-item agreement with people" in html and "position and length bias" in html
    assert "Where judges disagree most with people (5 items)" in html
    assert "key points of reference 1: P(entail) - P(contradict)" in html  # MinosEval's work, per item
    assert "NLI model</td><td>bundled" in html and "convention</td><td>strict" in html
    assert "scored 9 of 9 · strict convention" in html  # coverage, as `sessions show` says it
    png, requests = screenshot(out, tmp_path, height=2400)
    assert requests == []  # the page asked the network for nothing (the browser was watched, not the file)
    assert png.stat().st_size > 20_000
    dom = dump_dom(out, tmp_path)
    assert dom.count("<svg") == html.count("<svg") >= 2 and "<script" not in dom


@pytest.mark.browser
def test_pairwise_report_has_confusion_matrix_bias_rationales_and_no_key(built, capsys, tmp_path) -> None:
    code, _, out = _report(built, capsys, "pairwise")
    assert code == 0
    html = out.read_text(encoding="utf-8")
    _self_contained(html)
    assert "confusion matrices of A, B and tie" in html and "people say" in html
    assert "position consistency" in html and "prefers the longer response" in html
    assert "按长度选择" in html  # the pairwise rationales of the items shown (the English ones agree with people)
    assert '&lt;script&gt;alert(&quot;model&quot;)&lt;/script&gt;' in html and 'alert("model")' not in html
    assert KEY not in html and "REPORT_TEST_KEY" not in html
    png, requests = screenshot(out, tmp_path)
    assert requests == [] and png.stat().st_size > 20_000


@pytest.mark.browser
def test_two_session_comparison_report(built, capsys, tmp_path) -> None:
    code, _, out = _report(built, capsys, "pairwise", "lexical-pairs")
    assert code == 0
    html = out.read_text(encoding="utf-8")
    _self_contained(html)
    assert html.count('<section id="session-') == 2 and '<section id="comparison">' in html
    assert "metrics (Δ against A)" in html and "agreement between runs" in html
    assert "accuracy of each row with its confidence interval" in html  # run A, B, C with CIs
    assert html.index('id="comparison"') < html.index('id="session-1"')
    png, requests = screenshot(out, tmp_path)
    assert requests == [] and png.stat().st_size > 20_000


def test_ratings_report_plots_the_judge_against_people(built, capsys) -> None:
    code, _, out = _report(built, capsys, "ratings")
    assert code == 0
    html = out.read_text(encoding="utf-8")
    _self_contained(html)
    assert "rouge-l score against the human rating" in html and "coherence" in html and "relevance" in html


@pytest.mark.browser
def test_hostile_dataset_text_never_becomes_markup(built, capsys, tmp_path) -> None:
    code, _, out = _report(built, capsys, HOSTILE)
    assert code == 0
    html = out.read_text(encoding="utf-8")
    assert HOSTILE not in html and escape(HOSTILE) in html  # there, as text
    _self_contained(html.replace(escape(HOSTILE), ""))  # nothing else that could load
    dom = dump_dom(out, tmp_path)
    assert "<script" not in dom and "<img" not in dom  # the browser parsed no element from the data
    assert dom.count("<svg") == html.count("<svg") >= 1  # a '</svg>' in the text closed nothing
    assert html.count(escape(plain(CONTROLS))) >= 3  # each response shown, its controls as escapes (\x1b)
    assert "\\x1b[2J\\x07\\x9b31m\\u202eevil" in html and "jinja" not in html.replace(escape(plain(CONTROLS)), "")
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", html)  # none raw
    _, requests = screenshot(out, tmp_path)
    assert requests == []


@pytest.mark.browser
def test_the_request_detector_sees_what_a_page_asks_for(tmp_path) -> None:
    page = tmp_path / "leaky.html"
    page.write_text('<!DOCTYPE html><p>hi<img src="http://example.invalid/a.png">'
                    '<link rel="stylesheet" href="https://example.invalid/b.css">', encoding="utf-8")
    _, requests = screenshot(page, tmp_path)
    assert {"http://example.invalid/a.png", "https://example.invalid/b.css"} <= set(requests)


def test_bad_ids_are_refused_before_writing(built, capsys) -> None:
    out = built["root"] / "never.html"
    base = ["--sessions-dir", str(built["sessions"]), "report"]
    for ids in (["no-such-session"], [built["ids"]["pairwise"], "no-such-session"],
                [built["ids"]["pairwise"], built["ids"]["pairwise"]]):
        assert main([*base, *ids, "-o", str(out)]) == 2
        err = capsys.readouterr().err
        assert ("no session 'no-such-session'" in err or "named twice" in err) and "Traceback" not in err
        assert not out.exists()
    assert main([*base, built["ids"]["pairwise"]]) == 2  # -o is required
    assert "-o/--output" in capsys.readouterr().err


def test_output_path_errors_are_clear(built, capsys) -> None:
    folder = built["root"] / "a-folder"
    folder.mkdir(exist_ok=True)
    code, err, _ = _report(built, capsys, "ratings", out=folder)
    assert code == 2 and "is a folder: -o takes a file name" in err
    code, err, _ = _report(built, capsys, "ratings", out=built["root"] / "missing" / "r.html")
    assert code == 2 and "the folder" in err and "does not exist" in err
    assert not (built["root"] / "missing").exists()
    code, _, out = _report(built, capsys, "ratings", extra=("--items", "0"))
    assert code == 0 and "Where judges disagree most with people (0 items)" in out.read_text(encoding="utf-8")


@pytest.mark.parametrize("command", ["table", "sessions-export", "labels-export", "checklist-generate"])
def test_every_o_file_that_is_a_folder_is_refused_before_any_work(tmp_path, capsys, command) -> None:
    """`-o FOLDER` is refused in one line before any run or call, as `report -o` is (`store.output_file`): `table`
    ran every row, saved its sessions and then failed with IsADirectoryError; `checklist generate` would have
    spent its calls; `sessions export` and `labels export` were tracebacks or another error first."""
    data = _ratings_items(tmp_path / "d.jsonl")
    sessions = tmp_path / "s"
    if command == "sessions-export":
        assert main(["--sessions-dir", str(sessions), "run", str(data), "--judge", "rouge-l"]) == 0
    before = sorted(p.name for p in sessions.iterdir()) if sessions.exists() else []
    folder = tmp_path / "a-folder"
    folder.mkdir()
    capsys.readouterr()
    seed = Path(__file__).resolve().parents[1] / "qatui" / "judges" / "checkeval" / "checklists" / "qa.toml"
    argv = {"table": ["table", str(data), "--judge", "rouge-l"],
            "sessions-export": ["sessions", "export", before[0] if before else ""],
            "labels-export": ["labels", "export", "--annotator", "ana"],
            "checklist-generate": ["checklist", "generate", str(seed), "--backbone", "openai/never-asked"]}[command]
    assert main(["--sessions-dir", str(sessions), *argv, "-o", str(folder)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and f"{folder} is a folder: -o takes a file name" in err, err
    assert (sorted(p.name for p in sessions.iterdir()) if sessions.exists() else []) == before
    assert list(folder.iterdir()) == []


def test_a_session_whose_dataset_is_gone_still_reports_its_metrics(tmp_path, capsys) -> None:
    data = _ratings_items(tmp_path / "gone.jsonl")
    assert main(["--sessions-dir", str(tmp_path / "s"), "run", str(data), "--judge", "rouge-l"]) == 0
    data.unlink()
    [meta] = SessionStore(tmp_path / "s").list()
    capsys.readouterr()
    assert main(["--sessions-dir", str(tmp_path / "s"), "report", meta["id"], "-o", str(tmp_path / "r.html")]) == 0
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "cannot be reloaded unchanged" in html and "pearson" in html and "Where judges disagree" not in html


@pytest.mark.skipif(not extras.has("plot"), reason=f"no plots: {extras.install_hint('plot')}")
def test_the_agreement_histogram_says_how_many_of_its_zeros_are_no_decision(tmp_path, capsys) -> None:
    """A judge that tied every response is drawn at 0 in the per-item histogram, beside measured zeros: the
    caption names how many of its items are that (every answer two words long: `length` ties them all)."""
    data = tmp_path / "equal.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "question": "Which is best?", "references": ["the first answer"],
                                        "candidates": {"a": "first answer", "b": "second answer", "c": "third one"},
                                        "gold": {"kind": "ranking", "tiers": [["a"], ["b"], ["c"]]}}) + "\n"
                            for i in range(4)), encoding="utf-8")
    base = ["--sessions-dir", str(tmp_path / "s")]
    assert main([*base, "run", str(data), "--judge", "length", "--judge", "rouge-l"]) == 0
    [meta] = SessionStore(tmp_path / "s").list()
    assert main([*base, "report", meta["id"], "-o", str(tmp_path / "r.html")]) == 0
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert ("Items a judge made no decision on (every response tied; for ratings, on a dimension) are counted at 0: "
            "length 4 of 4.") in html
    assert "rouge-l 0 of" not in html  # rouge-l told the answers apart
    rated = tmp_path / "rated.jsonl"  # ratings: people tell the answers apart, `length` scores them all alike
    rated.write_text("".join(json.dumps({"id": f"d{i}", "question": "Sum up.", "references": ["the first answer"],
                                         "candidates": {"a": "first answer", "b": "second answer"},
                                         "gold": {"kind": "ratings", "ratings": {"a": {"coherence": 5},
                                                                                 "b": {"coherence": 1 + i}}}}) + "\n"
                             for i in range(3)), encoding="utf-8")
    assert main([*base, "run", str(rated), "--judge", "length", "--session", "rated"]) == 0
    assert main([*base, "report", "rated", "-o", str(tmp_path / "rated.html")]) == 0
    html = (tmp_path / "rated.html").read_text(encoding="utf-8")
    assert "are counted at 0: length 3 of 3." in html


def test_a_shared_report_names_the_dataset_under_home_with_a_tilde(tmp_path, monkeypatch, capsys) -> None:
    """A report is made to be shared: the dataset's path under the user's home folder is shown from `~`."""
    home = tmp_path / "home-of-someone"
    data = home / "evals" / "demo.jsonl"
    data.parent.mkdir(parents=True)
    data.write_text((Path(__file__).resolve().parents[1] / "qatui" / "data" / "demo" / "demo.jsonl").read_text())
    monkeypatch.setenv("HOME", str(home))
    sessions = tmp_path / "s"
    assert main(["run", str(data), "--judge", "length", "--limit", "2", "--sessions-dir", str(sessions), "--json"]) == 0
    session_id = json.loads(capsys.readouterr().out)["session"]
    out = tmp_path / "r.html"
    assert main(["report", session_id, "-o", str(out), "--sessions-dir", str(sessions)]) == 0
    html = out.read_text(encoding="utf-8")
    assert "~/evals/demo.jsonl" in html and str(home) not in html


@pytest.mark.skipif(not extras.has("plot"), reason=f"no plots: {extras.install_hint('plot')}")
def test_a_ratings_dimension_s_control_characters_reach_neither_the_plots_nor_the_terminal(tmp_path, capfd) -> None:
    """A gold dimension named with ESC[2J, an 8-bit CSI and a right-to-left override titles a scatter plot: the
    SVG held them raw (the RLO reversed the title in a browser) and matplotlib's missing-glyph warning wrote the
    ESC to the terminal."""
    dim = "coherence \x1b[2J\x9b2J\u202eevil"
    data = tmp_path / "rated.jsonl"
    data.write_text("".join(json.dumps({"id": f"d{i}", "question": "Sum up.", "references": ["a short summary"],
                                        "candidates": {"a": "a summary", "b": "a much longer summary " * (i + 1)},
                                        "gold": {"kind": "ratings", "ratings": {"a": {dim: 1 + i % 3}, "b": {dim: 5}}}})
                            + "\n" for i in range(4)), encoding="utf-8")
    base = ["--sessions-dir", str(tmp_path / "s")]
    assert main([*base, "run", str(data), "--judge", "length", "--session", "rated"]) == 0
    capfd.readouterr()
    assert main([*base, "report", "rated", "-o", str(tmp_path / "r.html")]) == 0
    err = capfd.readouterr().err
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "<svg" in html
    for text in (html, err):
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", text), text[-500:]
