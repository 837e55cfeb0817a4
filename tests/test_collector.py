"""A `qatui` process tunes Python's garbage collector for itself; a process that only calls `main` keeps its own.

`python -m qatui` and the installed `qatui` console script collect the young generation less often
(`qatui.engine.heap.PROCESS_THRESHOLDS`): at the defaults, a fully cached 2,000-call rerun spent a tenth of its
wall time in the collector (bench/NOTES.md, "The collector"). `main` called in a process doing other work (a
test, a notebook) must leave that process's collector as it was.
"""

from __future__ import annotations

import gc
import importlib.metadata
import json
import subprocess
import sys

import pytest

from qatui.cli import main
from qatui.engine.heap import PROCESS_THRESHOLDS

CHILD = r'''
import gc, json, runpy, sys
sys.argv = ["qatui", "--version"]
how = {how!r}
try:
    if how == "module":
        runpy.run_module("qatui", run_name="__main__")
    else:
        import importlib.metadata
        (point,) = importlib.metadata.entry_points(group="console_scripts", name="qatui")
        point.load()()
except SystemExit:
    pass
print(json.dumps({{"threshold": gc.get_threshold()}}))
'''


@pytest.mark.parametrize("how", ["module", "console script"])
def test_a_qatui_process_tunes_its_collector(how: str) -> None:
    if how == "console script" and not importlib.metadata.entry_points(group="console_scripts", name="qatui"):
        pytest.skip("qatui is not installed as a package here (no console script to load)")
    done = subprocess.run([sys.executable, "-c", CHILD.format(how=how)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    state = json.loads(done.stdout.strip().splitlines()[-1])
    assert tuple(state["threshold"]) == PROCESS_THRESHOLDS != gc.get_threshold()


def test_main_called_in_a_process_of_its_own_work_leaves_the_collector_alone(capsys: pytest.CaptureFixture) -> None:
    threshold = gc.get_threshold()
    with pytest.raises(SystemExit):
        main(["--version"])
    assert "qatui" in capsys.readouterr().out
    assert gc.get_threshold() == threshold
