"""A fully cached rerun in a new process reads the cache and does little else (issue 28, section 4).

A real `qatui run` (pairwise, both orders) against the loopback server, then the same command
in a new process (`python -m qatui`, sessions and cache in tmp): every call is a hit, so the
server gets no request at all (the cache holds answers of the backbone, so its live check waits for
a call the cache cannot answer, and none comes: `llm.preflight`); the verdicts equal the first run's. Under
`-X importtime` the rerun imports neither scikit-learn nor scipy (its figures need neither), nor
LiteLLM: the model facts that shape every request (and so its cache key) are read from the cache
folder (`llm.facts`), a prompt that fits the window by its bytes needs no tokenizer, and the
first run's requests go to the OpenAI-compatible endpoint directly (`llm.direct`). The child records, with a hook passed on its command line (nothing
in the product), where LiteLLM was first imported from and every place that asked for it
(`_lazy.get_litellm`, called through).

The same holds for a backbone named by its model string alone (`openai/fake-model`: no `api_key_env`, no
`api_base`, its endpoint given by `$OPENAI_BASE_URL`), whose preflight also checks the provider's key variable
(LiteLLM's `validate_environment`, a fact too: `llm.keys`); without the key the run is refused in one line
before any request, from the fact once it is kept.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from llm_server import FakeLLMServer
from tui_support import write_sums

from qatui.store.session import SessionStore

N_ITEMS = 6
HOOK = r'''
import sys, traceback
def where():
    return " ".join(f"{f.filename.rsplit('qatui', 1)[-1]}:{f.name}" for f in traceback.extract_stack()[:-2]
                    if "/qatui/" in f.filename)
class FirstImport:
    """Where `litellm` is first imported from, on stderr."""
    def find_spec(self, name, path=None, target=None):
        if name == "litellm":
            sys.meta_path.remove(self)
            sys.stderr.write("LITELLM-IMPORTED-FROM " + where() + "\n")
        return None
sys.meta_path.insert(0, FirstImport())
import qatui.llm._lazy as lazy
real = lazy.get_litellm
def get_litellm():
    """The product's one way to LiteLLM, called through: each distinct place that asks is written on stderr."""
    sys.stderr.write("LITELLM-ASKED-FROM " + where() + "\n")
    return real()
lazy.get_litellm = get_litellm
from qatui.cli import main
sys.argv = ["qatui", *sys.argv[1:]]
raise SystemExit(main())
'''


def _verdicts(sessions: Path) -> dict:
    store = SessionStore(sessions)
    (meta,) = store.list()
    session = store.open(meta["id"])
    return {item: v.model_dump(include={"scores", "ranking", "order", "pair", "preference", "tiers", "details"})
            for item, v in session.verdicts("pairwise").items()}


def test_a_fully_cached_rerun_imports_neither_litellm_nor_a_metrics_library(
        tmp_path: Path) -> None:
    data = write_sums(tmp_path / "d.jsonl", N_ITEMS)
    env = {**os.environ, "FAKE_KEY": "sk-test", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    answer = json.dumps({"rationale": "scripted", "choice": "A"})
    with FakeLLMServer(lambda body: answer, max_lifetime_s=300.0) as server:
        config = tmp_path / "c.toml"
        config.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{server.base_url}"\n'
                          f'api_key_env = "FAKE_KEY"\n[cache]\ndir = "{tmp_path / "cache"}"\n')

        def command(sessions: str) -> list[str]:
            return ["--config", str(config), "--sessions-dir", str(tmp_path / sessions), "run", str(data),
                    "--judge", "pairwise", "--backbone", "fake", "--json"]

        first = subprocess.run([sys.executable, "-m", "qatui", *command("s1")], capture_output=True, text=True,
                               env=env, timeout=300)
        assert first.returncode == 0, first.stderr[-2000:]
        asked = server.n_requests
        assert asked == 1 + 2 * N_ITEMS  # the preflight and both orders of every item
        rerun = subprocess.run([sys.executable, "-X", "importtime", "-c", HOOK, *command("s2")], capture_output=True,
                               text=True, env=env, timeout=300)
        assert rerun.returncode == 0, rerun.stderr[-2000:]
        assert server.n_requests == asked  # no request: every call was a hit, and the live check was never needed
    assert json.loads(rerun.stdout)["judges"] == json.loads(first.stdout)["judges"]
    assert _verdicts(tmp_path / "s2") == _verdicts(tmp_path / "s1") and len(_verdicts(tmp_path / "s1")) == N_ITEMS
    imported = {line.rsplit("|", 1)[-1].strip() for line in rerun.stderr.splitlines() if line.startswith("import time:")}
    assert not {name for name in imported if name.split(".")[0] in ("sklearn", "scipy")}
    # LiteLLM is never imported: the facts that shape every request are read from the cache folder
    assert not [line for line in rerun.stderr.splitlines() if line.startswith(("LITELLM-IMPORTED-FROM",
                                                                                 "LITELLM-ASKED-FROM"))]
    assert "litellm" not in imported


ENDPOINT_VARIABLES = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "HOSTED_VLLM_API_BASE")


def _model_string_run(tmp_path: Path, server: FakeLLMServer, sessions: str, env: dict[str, str],
                      hooked: bool) -> subprocess.CompletedProcess:
    """`qatui run` on the backbone `openai/fake-model` named by its model string (no table: no `api_key_env`, no
    `api_base`), its endpoint the loopback server by `$OPENAI_BASE_URL`; `hooked`: under `-X importtime` and HOOK."""
    config = tmp_path / "c.toml"
    config.write_text(f'[cache]\ndir = "{tmp_path / "cache"}"\n')
    data = tmp_path / "d.jsonl"
    if not data.exists():
        write_sums(data, N_ITEMS)
    args = ["--config", str(config), "--sessions-dir", str(tmp_path / sessions), "run", str(data),
            "--judge", "pairwise", "--backbone", "openai/fake-model", "--json"]
    head = ["-X", "importtime", "-c", HOOK] if hooked else ["-m", "qatui"]
    env = {**{k: v for k, v in os.environ.items() if k not in ENDPOINT_VARIABLES},
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "OPENAI_BASE_URL": server.base_url, **env}
    return subprocess.run([sys.executable, *head, *args], capture_output=True, text=True, env=env, timeout=300)


def _litellm_lines(run: subprocess.CompletedProcess) -> list[str]:
    """What the hook and `-X importtime` wrote of LiteLLM: where it was imported and asked for."""
    return [line for line in run.stderr.splitlines() if line.startswith(("LITELLM-IMPORTED-FROM", "LITELLM-ASKED-FROM"))
            or (line.startswith("import time:") and line.rsplit("|", 1)[-1].strip() == "litellm")]


def test_a_cached_rerun_of_a_model_string_checks_its_key_from_a_fact_without_litellm(tmp_path: Path) -> None:
    """The preflight's key check of a backbone with neither api_key_env nor api_base (LiteLLM's
    `validate_environment`) is a fact too (`llm.keys`): the rerun asks LiteLLM nothing."""
    answer = json.dumps({"rationale": "scripted", "choice": "A"})
    with FakeLLMServer(lambda body: answer, max_lifetime_s=300.0) as server:
        first = _model_string_run(tmp_path, server, "s1", {"OPENAI_API_KEY": "sk-test"}, hooked=False)
        assert first.returncode == 0, first.stderr[-2000:]
        asked = server.n_requests
        assert asked == 1 + 2 * N_ITEMS and server.headers[0]["User-Agent"] == "qatui"  # straight to the endpoint
        rerun = _model_string_run(tmp_path, server, "s2", {"OPENAI_API_KEY": "sk-test"}, hooked=True)
        assert rerun.returncode == 0, rerun.stderr[-2000:]
        assert server.n_requests == asked  # none: every call a hit, the live check never needed
        assert {h["Authorization"] for h in server.headers} == {"Bearer sk-test"}
    assert _verdicts(tmp_path / "s2") == _verdicts(tmp_path / "s1") and len(_verdicts(tmp_path / "s1")) == N_ITEMS
    assert _litellm_lines(rerun) == []


def test_a_missing_provider_key_is_refused_from_the_cached_fact_before_any_request(tmp_path: Path) -> None:
    """Without `$OPENAI_API_KEY` the run is refused in one line naming it, before any request (after a run that had
    it set: the fact is kept per variables set, never read back for another environment); the second time from
    the fact kept by the first, without LiteLLM."""
    answer = json.dumps({"rationale": "scripted", "choice": "A"})
    with FakeLLMServer(lambda body: answer, max_lifetime_s=300.0) as server:
        keyed = _model_string_run(tmp_path, server, "keyed", {"OPENAI_API_KEY": "sk-test"}, hooked=False)
        assert keyed.returncode == 0, keyed.stderr[-2000:]
        asked = server.n_requests
        runs = [_model_string_run(tmp_path, server, f"s{n}", {}, hooked=True) for n in range(2)]
        assert server.n_requests == asked
    for run in runs:
        assert run.returncode == 2, run.stderr[-2000:]
        error = json.loads(run.stdout)["error"]
        assert "OPENAI_API_KEY" in error and "no API key" in error and "\n" not in error
        assert "Traceback" not in run.stderr
    assert _litellm_lines(runs[0]) and _litellm_lines(runs[1]) == []  # the first asked LiteLLM, the second the fact
    assert not (tmp_path / "s0").exists() or not SessionStore(tmp_path / "s0").list()  # no session made
