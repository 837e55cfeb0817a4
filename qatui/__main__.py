"""`python -m qatui` runs the same command as the `qatui` console script."""

from qatui.cli import main

raise SystemExit(main())
