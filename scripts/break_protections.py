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
 ("grammar: maxLength cap", "qatui/judges/minos.py", "INSTANCE_CHARS = 1000", "INSTANCE_CHARS = 1500", "tests/test_local_grammars.py"),
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
 ("tui quit: cancel before exit", "qatui/tui/app.py", "                for screen in running:\n                    screen.handle.cancel()\n                await asyncio.gather(*(s.handle.wait() for s in running))\n", "", "tests/test_tui_quit.py"),
 ('thinking: a cut-off or thinking-only answer fails its call', 'qatui/llm/response.py', '    if answer.cut_off and not accept_cut:', '    if False:', 'tests/test_llm_answers.py::test_pairwise_and_pointwise_never_score_a_draft_or_a_cut_answer'),
 ('thinking: <think> sections are no answer', 'qatui/llm/response.py', '    text, thought = split_thinking(content or "")', '    text, thought = content or "", ""', 'tests/test_llm_answers.py::test_pairwise_and_pointwise_never_score_a_draft_or_a_cut_answer'),
 ('replies: no choices', 'qatui/llm/response.py', '        raise UnusableAnswer("the provider returned no choices")', '        return Answer(text="", thinking="", finish_reason="")', 'tests/test_llm_answers.py::test_a_reply_that_is_no_chat_completion_is_named_counted_and_not_retried'),
 ('replies: a stream with no choices', 'qatui/llm/stream.py', '        if not any(_carries_answer(chunk) for chunk in chunks):', '        if False:', 'tests/test_llm_answers.py::test_a_reply_that_is_no_chat_completion_is_named_counted_and_not_retried'),
 ('replies: no chat completion is no 500', 'qatui/llm/faults.py', '    if any(str(link).startswith("Invalid response object") for link in links):', '    if False:', 'tests/test_llm_answers.py::test_a_reply_that_is_no_chat_completion_is_named_counted_and_not_retried'),
 ('replies: a dropped connection is no 500', 'qatui/llm/backbone.py', '        fault = wire_fault(error)  # LiteLLM calls these 500s: the chain says what they were', '        fault = None', 'tests/test_llm_answers.py::test_a_dropped_connection_is_a_connection_failure_not_a_server_error'),
 ('secrets: a key in part or escaped', 'qatui/llm/backbone.py', '            n = min(KEY_FRAGMENT * width, len(form))', '            n = len(form)', 'tests/test_llm_answers.py::test_a_key_quoted_in_part_or_escaped_never_reaches_a_failure_reason'),
 ('failures grouped by cause', 'qatui/report/session_view.py', 'by_cause.setdefault((failure.judge, failure_cause(failure.reason))', 'by_cause.setdefault((failure.judge, failure.reason)', 'tests/test_llm_answers.py::test_failures_of_one_cause_group_into_one_line_whatever_each_took'),
 ('timeout: a long answer is read off the loop', 'qatui/llm/parse.py', 'PARSE_INLINE_CHARS = 50_000\n', 'PARSE_INLINE_CHARS = 50_000_000\n', 'tests/test_llm_answers.py::test_a_huge_answer_is_read_within_the_calls_timeout_without_stalling_the_loop'),
 ('local: one generation slot, outside the timeout', 'qatui/llm/backbone.py', '        if self.model.startswith("local/"):\n            slots', '        if False:\n            slots', 'tests/test_local_llm.py::test_calls_queued_on_the_one_model_are_timed_from_when_they_generate'),
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
