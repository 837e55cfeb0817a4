"""Served, the workbench reads datasets only inside the folders it was started with (`qatui serve --root`).

Pilot drives the real app with the confinement `qatui serve` gives it. Outside files are a CSV
whose first line is a secret (a loader's error would echo it), reached by an absolute path, a
`.csv` symlink inside the root, a symlinked folder and a folder holding a symlink.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fakes import wait_until
from textual.content import Content
from textual.widgets import DirectoryTree, Input

from qatui.config import Config
from qatui.errors import DatasetError
from qatui.store.session import SessionStore
from qatui.tui.app import QatuiApp
from qatui.tui.roots import Roots
from qatui.tui.screens.label_prompt import LabelRequest
from qatui.tui.screens.new_run import NewRun, NewRunScreen
from qatui.tui.spot import pick_item

DEMO = Path(__file__).resolve().parents[1] / "qatui" / "data" / "demo" / "demo.jsonl"
SECRET = "SECRET-FIRST-LINE"


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


@pytest.fixture
def world(tmp_path) -> dict[str, Path]:
    """A root with a good dataset and four ways out of it, and the secret outside."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.csv").write_text(f"{SECRET},b\n1,2\n")
    (outside / "secret.json").write_text(f'{{"{SECRET}": 1}}\n')
    shutil.copy(DEMO, root / "good.jsonl")
    (root / "link.csv").symlink_to(outside / "secret.csv")
    (root / "linked-folder").symlink_to(outside, target_is_directory=True)
    (root / "pairs").mkdir()
    (root / "pairs" / "a.json").symlink_to(outside / "secret.json")
    return {"root": root, "outside": outside}


def preview(screen) -> str:
    """What New run's preview shows now ('' while the screen is still composing)."""
    found = screen.query("#preview")
    return Content.from_markup(str(found.first().content)).plain if found else ""


async def test_new_run_refuses_every_path_leading_outside_the_roots_and_its_tree_lists_none(world, tmp_path) -> None:
    root, outside = world["root"], world["outside"]
    app = QatuiApp(Config(), SessionStore(tmp_path / "sessions"), roots=Roots.of([root]))
    async with app.run_test(size=(110, 34)) as pilot:
        app.open_new_run()
        await wait_until(pilot, lambda: isinstance(app.screen, NewRunScreen) and "71 responses" in preview(app.screen))
        screen = app.screen
        field = screen.query_one("#path", Input)
        for path in (outside / "secret.csv", root / "link.csv", root / "linked-folder" / "secret.csv",
                     root / "linked-folder", root / "pairs", root / ".." / "outside" / "secret.csv"):
            field.value = str(path)
            await wait_until(pilot, lambda p=str(path): p in preview(screen)
                        and "outside the folders this workbench may read" in preview(screen))
            shown = preview(screen)
            assert SECRET not in shown and screen.dataset is None, (path, shown)
            assert "Cannot load this dataset" in shown and str(root) in shown
        field.value = str(root / "good.jsonl")  # inside: loads as anywhere
        await wait_until(pilot, lambda: "71 responses" in preview(screen))

        # the tree starts at the root and lists nothing that leads outside it
        tree = screen.query_one(DirectoryTree)
        await wait_until(pilot, lambda: len(tree.root.children) >= 2)
        listed = sorted(str(node.label) for node in tree.root.children)
        assert listed == ["good.jsonl", "pairs"] and Path(tree.path) == root.resolve()

        # a path typed and started before the preview caught up is refused when the run is built
        app.start_new_run(NewRun(path=str(root / "link.csv"), judges=["length"], backbone="x", limit=None))
        await wait_until(pilot, lambda: any("outside the folders" in n.message for n in app._notifications))
        assert not (tmp_path / "sessions").exists() or not any((tmp_path / "sessions").iterdir())

        # Label's source: a file that exists is checked like New run's path
        app.clear_notifications()
        app.open_labels(LabelRequest(source=str(root / "link.csv"), annotator="ann"))
        await wait_until(pilot, lambda: any("outside the folders" in n.message for n in app._notifications))


def test_spot_checks_load_box_is_confined_too_and_a_terminal_goes_anywhere(world) -> None:
    root, outside = world["root"], world["outside"]
    roots = Roots.of([root])
    for spec in (str(root / "link.csv"), f"{outside / 'secret.csv'}#x"):
        with pytest.raises(DatasetError, match="outside the folders this workbench may read") as refused:
            pick_item(spec, roots)
        assert SECRET not in str(refused.value)
    assert pick_item(f"{root / 'good.jsonl'}", roots).question
    anywhere = Roots.of(None)  # the terminal workbench: the user types paths as themselves
    assert not anywhere.confined and anywhere.checked(str(root / "link.csv")) == str(root / "link.csv")
