"""Remove each protection of docs/RELIABILITY.md in turn, run the test that should catch it, restore the file.

    .venv/bin/python scripts/break_protections.py [WORD ...]   # only the cases whose name holds a WORD

Each case replaces one exact snippet of one source file, runs its tests (`pytest -x`), and
writes the file back as it was, whatever happens; it prints one line per case: CAUGHT when the
test failed (as it must), NOT CAUGHT otherwise. Run it on a clean tree and check `git status`
after: nothing may be left modified. It takes about ten minutes (the crash test kills 20 runs).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

os.chdir(Path(__file__).resolve().parents[1])
CASES = [  # (name, file, exact snippet, what replaces it, tests)
 ("fault: failure reasons", "qatui/engine/runner.py", "failure = ItemFailed(**stamp, reason=str(e) or type(e).__name__,", "failure = ItemFailed(**stamp, reason='',", "tests/test_faults.py::test_two_hundred_items_through_a_flaky_backbone_then_a_clean_resume"),
 ("cache: damaged entry is a miss", "qatui/llm/cache.py", "        try:\n            data = json.loads(text)\n        except ValueError:\n            return None", "        data = json.loads(text)", "tests/test_faults.py::test_a_corrupted_cache_entry_is_a_miss_asked_again_never_a_crash"),
 ("crash: flush after each batch", "qatui/engine/runner.py", "                if self.session is not None:\n                    self.session.flush()\n                for event in batch:", "                for event in batch:", "tests/test_crash_resume.py::test_twenty_random_kills_lose_nothing_and_end_where_an_uninterrupted_run_ends"),
 ("ctrl-c: first press cancels and saves", "qatui/cli/running.py", "            main.cancel()\n            return", "            os._exit(EXIT_INTERRUPTED)", "tests/test_cli_first_hour.py::test_ctrl_c_says_at_once_what_happens_and_keeps_the_session"),
 ("preflight", "qatui/llm/preflight.py", "    if not isinstance(client, LLMClient):\n        return \"scripted backbone\"", "    return \"skipped\"", "tests/test_preflight.py"),
 ("secrets: scrub", "qatui/store/credentials.py", "    if isinstance(value, dict):\n        return {k: scrub(v)", "    return value\n    if isinstance(value, dict):\n        return {k: scrub(v)", "tests/test_secrets.py tests/test_store.py"),
 ("damaged files: SessionError naming the file", "qatui/store/atomic.py", "        except (OSError, ValueError) as e:  # ValueError: JSONDecodeError, UnicodeDecodeError\n            raise SessionError", "        except ZeroDivisionError as e:\n            raise SessionError", "tests/test_store.py tests/test_foreign_files.py"),
 ("grammar: the schema's token mask", "qatui/llm/local_runtime.py", "                scores.masked_fill_(~allowed, float(\"-inf\"))", "                pass", "tests/test_local_grammars.py"),
 ("grammar: only the listed keys", "qatui/llm/local_runtime.py", "grammar_from_json_schema(closed(schema),", "grammar_from_json_schema(schema,", "tests/test_local_grammars.py::test_an_object_admits_only_its_listed_keys"),
 ("extras: a judge's missing extra refused before work", "qatui/engine/jobs.py", "            require(extra, who)", "            pass", "tests/test_extras.py::test_a_missing_extra_is_refused_in_one_line_before_any_session"),
 ("extras: the embedded model's missing extra refused", "qatui/llm/local.py", "        require(EXTRA, f\"{PROVIDER}/{name}\")", "        pass", "tests/test_extras.py::test_a_missing_extra_is_refused_in_one_line_before_any_session"),
 ("extras: the CLI imports no model runtime", "qatui/cli/__init__.py", "from __future__ import annotations\n", "from __future__ import annotations\nimport torch  # noqa\n", "tests/test_extras.py::test_the_cli_help_needs_no_model_runtime"),
 ("two processes: live writer lock", "qatui/store/session_file.py", "    pid = meta.get(\"pid\")", "    return None\n    pid = meta.get(\"pid\")", "tests/test_crash_resume.py::test_a_second_process_cannot_resume_a_session_being_written"),
 ("fuzz: undecodable file is a DatasetError", "qatui/data/loaders/_common.py", "    except UnicodeDecodeError as exc:\n        raise DatasetError", "    except ZeroDivisionError as exc:\n        raise DatasetError", "tests/test_loader_fuzz.py"),
 ("not applicable recorded", "qatui/judges/base.py", "        if self.needs.reference and not item.references:", "        return None\n        if self.needs.reference and not item.references:", "tests/test_fidelity.py"),
 ("injection: fences", "qatui/llm/fence.py", "        return f\"<<<BEGIN {name} {self.key}>>>\\n{text}\\n<<<END {name} {self.key}>>>\"", "        return text", "tests/test_injection.py"),
 ("injection: disagreeing JSON values refused", "qatui/llm/parse.py", "    if len(distinct) == 1:\n        return distinct[0]", "    if distinct:\n        return distinct[0]", "tests/test_injection.py"),
 ("injection: JSON quoted inside non-JSON brackets", "qatui/llm/parse.py", "        if depths[s] > 0 and not any(", "        if False and not any(", "tests/test_injection.py"),
 ("injection: bracket verdict from the verdict field", "qatui/judges/brackets.py", "    data = getattr(result, \"data\", None)\n    model = type(data)", "    return text\n    data = getattr(result, \"data\", None)\n    model = type(data)", "tests/test_injection.py"),
 ("injection: quoted checklist lines", "qatui/judges/checklist.py", "_ANSWER = re.compile(r\"^[ \\t*_#-]*Q", "_ANSWER = re.compile(r\"^[\\s>*_#-]*Q", "tests/test_injection.py"),
 ("injection: echoed fenced blocks ignored", "qatui/llm/fence.py", "    return _BLOCK.sub(\"\", text)", "    return text", "tests/test_injection.py"),
 ("trim: fit to the window", "qatui/llm/client.py", "        return (messages, None) if self._counter is None else fit(messages, self._counter, answer_tokens)", "        return messages, None", "tests/test_trim.py"),
 ("schema: newer files refused", "qatui/store/files.py", "    version = 1 if stated is None else stated", "    return\n    version = 1 if stated is None else stated", "tests/test_foreign_files.py"),
 ("fidelity: nli premise of old sessions", "qatui/judges/registry.py", "    if name in PREMISE_BEFORE_THE_SWAP and \"premise\" not in options:", "    if False:", "tests/test_nli_baselines.py"),
 ("fidelity: checklist written as TOML", "qatui/judges/checklist_gen.py", "    return comments + tomli_w.dumps(doc)", "    import json\n    return comments + json.dumps(doc)", "tests/test_checklist_generate.py"),
 ("fidelity: ledger claims", "qatui/judges/geval.py", "    name = \"geval\"\n", "    name = \"geval\"\n    reproduces = (\"calf:g-eval\",)\n", "tests/test_fidelity_ledger.py"),
 ("tui quit: cancel before exit", "qatui/tui/app.py", "                for screen in running:\n                    screen.handle.cancel()\n                await asyncio.gather(*(s.handle.wait() for s in running))\n", "", "tests/test_tui_quit.py"),
]
only = sys.argv[1:]
for name, path, old, new, tests in CASES:
    if only and not any(o in name for o in only):
        continue
    p = Path(path); original = p.read_text()
    if original.count(old) != 1:
        print(f"{name}: PATCH NOT FOUND ({original.count(old)})", flush=True); continue
    p.write_text(original.replace(old, new))
    t = time.time()
    try:
        r = subprocess.run([".venv/bin/python", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests.split()],
                           capture_output=True, text=True, timeout=900, check=False, env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
        tail = [l for l in r.stdout.splitlines() if l.startswith(("FAILED", "ERROR")) or " passed" in l or " failed" in l][-2:]
        verdict = "CAUGHT (test fails)" if r.returncode != 0 else "NOT CAUGHT"
    except subprocess.TimeoutExpired:
        verdict, tail = "CAUGHT (timed out)", []
    finally:
        p.write_text(original)
    print(f"{name}: {verdict} in {time.time()-t:.0f}s | {' | '.join(tail)[:300]}", flush=True)
subprocess.run(["git", "status", "--short"], check=False)
