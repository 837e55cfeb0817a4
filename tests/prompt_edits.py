"""A built-in judge's prompt changed for one test: a copy of its package's prompt files searched first.

The prompt loader looks for a method's files in `qatui.judges.prompts.prompt_folders()`, in order;
a folder put first holds the edited copy, as an edited install would, and the loader's cache is
cleared so every later load reads it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import qatui.judges.prompts as prompts_module

JUDGES_FOLDER = Path(prompts_module.__file__).parent


def edit_prompt(monkeypatch, folder: Path, package: str, file: str, old: str, new: str) -> None:
    """`file` of `qatui/judges/<package>/prompts/` with its first `old` replaced by `new`, searched first from now on
    (its sibling language files copied unchanged beside it); undone when the test ends."""
    source = JUDGES_FOLDER / package / "prompts" / file
    text = source.read_text(encoding="utf-8")
    assert old in text, f"{old!r} is not in {file}"
    folder.mkdir(parents=True, exist_ok=True)
    for sibling in source.parent.glob(f"{file.split('.')[0]}.*.toml"):
        if not (folder / sibling.name).exists():
            shutil.copy(sibling, folder / sibling.name)
    (folder / file).write_text(text.replace(old, new, 1), encoding="utf-8")
    if prompts_module.prompt_folders()[0] != folder:
        originals = prompts_module.prompt_folders()
        monkeypatch.setattr(prompts_module, "prompt_folders", lambda: [folder, *originals])
    prompts_module.load_prompts.cache_clear()


@pytest.fixture
def edited_prompts(tmp_path, monkeypatch):
    """`edit(package, file, old, new)`: one word of a built-in prompt file changed for this test (`edit_prompt`);
    the loader's cache is cleared after it, so no other test reads the edit. Import it into a test module to use it."""
    yield lambda package, file, old, new: edit_prompt(monkeypatch, tmp_path / "prompts-override", package, file,
                                                      old, new)
    prompts_module.load_prompts.cache_clear()
