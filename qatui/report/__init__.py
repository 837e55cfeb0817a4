"""Plain-terminal views of datasets and sessions (Rich tables), shared by the CLI commands.

Each view has a data function (JSON-safe dict, also used by `--json`) and a `print_*`
function that renders it, so the shell output and the JSON never disagree. One module per
subject: datasets, sessions, one item, judges' artifacts, comparisons, exports, models.
"""

from qatui.report.compare import compare_sessions, print_comparison
from qatui.report.dataset_view import dataset_overview, describe_gold, languages_line, print_dataset
from qatui.report.item_view import item_detail, print_artifacts, print_item_detail
from qatui.report.session_view import (
    METRIC_ORDER,
    items_done,
    key_figure,
    key_metric,
    print_failures,
    print_session,
    print_session_list,
    session_dataset,
    session_status,
    stored_failures,
)
from qatui.text import clip

__all__ = [
    "METRIC_ORDER", "clip", "compare_sessions", "dataset_overview", "describe_gold", "item_detail", "items_done",
    "key_figure", "key_metric", "languages_line", "print_artifacts", "print_comparison", "print_dataset",
    "print_failures", "print_item_detail", "print_session", "print_session_list", "session_dataset", "session_status",
    "stored_failures",
]
