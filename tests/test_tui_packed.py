"""`Packed`: a judge's headline wraps between its figures, never inside one (a label, its figure, its interval)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from qatui.tui.format import headline_parts
from qatui.tui.widgets.packed import Packed

words = st.text(alphabet="abc+-.0123456789[],", min_size=1, max_size=12)
parts = st.lists(st.lists(words, min_size=1, max_size=3).map(" ".join), min_size=1, max_size=8)


@given(rows=st.lists(parts, min_size=1, max_size=3), width=st.integers(min_value=8, max_value=100))
def test_every_part_lands_whole_on_one_line_and_lines_fit_where_their_parts_do(rows, width) -> None:
    lines = Packed(rows).laid_out(width).plain.split("\n")
    laid = iter(lines)
    for row in rows:
        line = next(laid)
        assert line.startswith(row[0])
        rest = line[len(row[0]):]
        for part in row[1:]:
            if rest.startswith("  " + part):  # after the one before it, on the same line
                rest = rest[len(part) + 2:]
            else:  # or whole at the start of the next line, indented under the row's first part
                assert rest == "", (row, lines)
                line = next(laid)
                assert line == "  " + part or line.startswith("  " + part + "  "), (row, lines)
                rest = line[len(part) + 2:]
        assert rest == ""
    assert next(laid, None) is None
    for line in lines:
        assert len(line) <= width or "  " not in line.strip(), f"{line!r} could have wrapped at {width}"


def test_an_80_column_header_keeps_each_figure_with_its_name() -> None:
    doc = {"metrics": {"kendall": 0.59, "spearman": 0.66, "rbo_0.9": 0.95, "accuracy": 0.77, "kappa": 0.62},
           "ci": {"kendall": [0.44, 0.76]}}
    text = Packed([["rouge-l", *headline_parts(doc, "no gold")]]).laid_out(78).plain
    assert text.split("\n") == ["rouge-l  tau +0.59 [+0.44,+0.76]  rho +0.66  rbo.9 +0.95  acc +0.77",
                                "  kappa +0.62"]


def test_a_figure_below_zero_keeps_its_sign_at_two_places() -> None:
    """A mean tau of -0.004 is "tau -0.00" in the header (rounded first it read "+0.00": below zero shown as not);
    a zero, signed or not, is "+0.00"; the jury's members line the same."""
    from qatui.tui.format import members_line

    assert headline_parts({"metrics": {"kendall": -0.00402}}, "")[0] == "tau -0.00"
    assert headline_parts({"metrics": {"kendall": -0.0}}, "")[0] == "tau +0.00"
    assert headline_parts({"metrics": {"kendall": 0.004}}, "")[0] == "tau +0.00"
    assert members_line({"preference": {"metrics": {"alpha": -0.001}}}) == "members' agreement  A/B/tie alpha -0.00"
