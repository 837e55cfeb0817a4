"""The folders the workbench may read datasets from: anywhere in a terminal, only the given ones when served.

In a terminal the user types paths as themselves. Served to a browser (`qatui serve`), the
workbench is driven by whoever holds the page, so the fields that name a file (New run's path
and tree, Spot check's load box, Label's source) are kept inside the folders the server was
started with: a path is judged by where it resolves after every symlink, and a folder by each
entry in it too (the one format that reads a folder reads every file in it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from textual.widgets import DirectoryTree

from qatui.errors import DatasetError
from qatui.tui.widgets.dataset_picker import DatasetTree


@dataclass(frozen=True)
class Roots:
    """The allowed folders, resolved; none means anywhere (the terminal workbench)."""

    folders: tuple[Path, ...] = ()

    @classmethod
    def of(cls, folders: Iterable[str | Path] | None) -> Roots:
        """The roots for these folders (resolved now, so a later chdir or symlink swap moves nothing); None: anywhere."""
        return cls(tuple(dict.fromkeys(Path(f).resolve() for f in folders or ())))

    @property
    def confined(self) -> bool:
        """Whether file fields are kept inside the folders."""
        return bool(self.folders)

    @property
    def tree_root(self) -> Path:
        """Where New run's file tree starts: the first folder, or the working folder when anywhere goes."""
        return self.folders[0] if self.folders else Path(".")

    def inside(self, path: str | Path) -> bool:
        """Whether `path`, after every symlink, lies in one of the folders (always true when not confined)."""
        if not self.confined:
            return True
        try:
            resolved = Path(path).resolve()
        except (OSError, RuntimeError):  # a symlink loop resolves nowhere
            return False
        return any(resolved.is_relative_to(folder) for folder in self.folders)

    def checked(self, path: str | Path) -> str | Path:
        """`path` itself, refused in one line (a `DatasetError`) when it, or an entry of it as a folder, leads outside."""
        if not self.confined:
            return path
        shown = ", ".join(str(f) for f in self.folders)
        if not self.inside(path):
            raise DatasetError(f"{path}: outside the folders this workbench may read ({shown})")
        target = Path(path)
        if target.is_dir():
            try:
                entries = list(target.iterdir())
            except OSError:
                return path  # the loader names the unreadable folder itself
            escaping = next((entry for entry in sorted(entries) if not self.inside(entry)), None)
            if escaping is not None:
                raise DatasetError(f"{escaping}: leads outside the folders this workbench may read ({shown})")
        return path

    def checked_source(self, source: str) -> str:
        """A Label source: a path that exists is checked like any path; `demo` and session names are no files."""
        if source != "demo" and Path(source).exists():
            self.checked(source)
        return source


class ConfinedTree(DatasetTree):
    """New run's file tree that lists no entry leading outside the roots (a symlink to elsewhere stays unlisted)."""

    def __init__(self, roots: Roots, **kwargs: object) -> None:
        super().__init__(roots.tree_root, **kwargs)  # type: ignore[arg-type]
        self.roots = roots

    def filter_paths(self, paths: Iterable[Path]) -> Iterable[Path]:
        """The dataset tree's own filter, then only the entries that resolve inside the roots."""
        return [p for p in super().filter_paths(paths) if self.roots.inside(p)]


def file_tree(root: str | Path, roots: Roots, **kwargs: object) -> DirectoryTree:
    """New run's file tree: from `root` anywhere; from the first root, and inside the roots, when confined."""
    return ConfinedTree(roots, **kwargs) if roots.confined else DatasetTree(root, **kwargs)  # type: ignore[arg-type]
