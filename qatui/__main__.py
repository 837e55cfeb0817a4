"""`python -m qatui` runs the same command as the `qatui` console script."""

from qatui.cli import console

raise SystemExit(console())
