"""The architecture holds: no import cycle between qatui's modules, and no module a newcomer must scroll through.

The layer contracts themselves are checked by `lint-imports` (pyproject.toml), which `make test` runs.
"""

from __future__ import annotations

import ast
import sys
import warnings
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "qatui"
sys.path.insert(0, str(PACKAGE.parent / "scripts"))

from import_cycles import cycles  # noqa: E402

GUIDE_LINES = 400
"""A module longer than this is a hint to split it by job, never a reason to cut a cohesive one in fragments."""


def test_no_import_cycle_between_modules() -> None:
    assert cycles("qatui") == []


def test_no_name_is_used_that_is_never_defined() -> None:
    """pyflakes over qatui, its tests, bench and scripts: a name used but never defined or imported (an `escape` left
    behind when its import went) fails here, not only in the one test that reaches the line."""
    from pyflakes import api, messages
    from pyflakes.reporter import Reporter

    class Collected(Reporter):
        """Keeps pyflakes' findings of names that are never defined; every other finding is style, left out."""

        def __init__(self) -> None:
            super().__init__(None, None)
            self.undefined: list[str] = []

        def flake(self, message) -> None:
            if isinstance(message, (messages.UndefinedName, messages.UndefinedLocal, messages.UndefinedExport)):
                self.undefined.append(str(message))

        def syntaxError(self, filename, msg, lineno, offset, text) -> None:  # noqa: N802 (pyflakes' name)
            self.undefined.append(f"{filename}:{lineno}: {msg}")

        def unexpectedError(self, filename, msg) -> None:  # noqa: N802 (pyflakes' name)
            self.undefined.append(f"{filename}: {msg}")

    reporter = Collected()
    root = PACKAGE.parent
    api.checkRecursive([str(root / name) for name in ("qatui", "tests", "bench", "scripts")], reporter)
    assert reporter.undefined == []


def test_long_modules_are_named_as_a_warning() -> None:
    """The line count is a guideline (ARCHITECTURE.md): modules past it are listed as a warning, never a failure."""
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > GUIDE_LINES}
    if long:
        warnings.warn(f"modules past the {GUIDE_LINES}-line guideline (split by job where one reads better): "
                      + ", ".join(f"{name} {n}" for name, n in sorted(long.items())), stacklevel=1)


def test_every_class_says_what_it_is_for() -> None:
    missing = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and not ast.get_docstring(node):
                missing.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}")
    assert missing == []


FRAMEWORK_HOOKS = {"compose", "render", "has_content", "check_action", "startup", "discover", "search", "error",
                   "get_theme_variable_defaults"}
"""Methods whose job the framework defines (Textual, argparse); their base classes document them."""


def _public_functions(tree: ast.AST, nested: bool = False):
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            hook = child.name in FRAMEWORK_HOOKS or child.name.startswith(("on_", "watch_", "action_"))
            if not nested and not child.name.startswith("_") and not hook:
                yield child
            yield from _public_functions(child, True)
        else:
            yield from _public_functions(child, nested)


def test_every_public_function_says_what_it_is_for() -> None:
    missing = [f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}"
               for path in PACKAGE.rglob("*.py")
               for node in _public_functions(ast.parse(path.read_text(encoding="utf-8")))
               if not ast.get_docstring(node)]
    assert missing == []
