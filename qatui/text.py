"""Words for people: counts with their noun, one-line clips, data made safe to show. Shared by every layer that prints."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from difflib import get_close_matches

VARIATION_SELECTORS = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
"""The 256 variation selectors, as a character class's range: one after a letter or an emoji picks its look."""
_UNSHOWABLE = re.compile(f"\r\n|[{VARIATION_SELECTORS}]{{2,}}|"
                         "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
                         "\u2061-\u2064\ufff9-\ufffb\U000e0000-\U000e007f]")
"""What a terminal would obey instead of showing: C0 controls but tab and newline, DEL, C1 (0x80-0x9f,
0x9b being an 8-bit CSI), the bidi embeddings, overrides and isolates that reorder what a reader sees,
and lone surrogates (no terminal encoding can write them). A Windows line break is matched whole.
Also what no reader sees though a model reads it: the tag characters (U+E0000-E007F, each an invisible copy of
an ASCII letter: a line of them hides an instruction to the judge inside an answer), the invisible operators
(U+2061-2064), the interlinear annotation marks (U+FFF9-FFFB), and two or more variation selectors in a row (one
picks a character's look; a run of them carries bytes, one each, hidden behind an emoji). Characters that running
text uses (the zero-width joiners, soft hyphens, the left-to-right and right-to-left marks, one variation
selector) are shown as they are."""


def _visible(match: re.Match[str]) -> str:
    char = match[0]
    if char == "\r\n":
        return "\n"
    if len(char) > 1:  # a run of variation selectors: each one written
        return "".join(_escape(c) for c in char)
    return _escape(char)


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def plain(text: object) -> str:
    """`text` as characters to show, never to obey: every control character written as its escape, in view.

    ESC becomes the four characters `\\x1b`, BEL `\\x07`, an 8-bit CSI `\\x9b`, a right-to-left
    override `\\u202e`, a hidden tag letter `\\U000e0041`, so a dataset, a model or a name cannot drive the
    terminal (clipboard through OSC 52, window title, clearing the screen), reorder a line, or hide what it says. Tab and newline stay
    (a multi-line text keeps its lines; a Windows line break becomes one newline). Everything
    qatui shows from data (ids, questions, answers, names, paths, error messages quoting data)
    goes through here; markup is a separate matter: show the result as text (Rich `Text`,
    Textual `Content`), never as markup. A literal backslash in the data is left as it is.
    """
    return _UNSHOWABLE.sub(_visible, text if isinstance(text, str) else str(text))


def unshowable_at(text: str) -> str | None:
    """Where `text` first holds a character `plain` would write as its escape ("line 3, column 7: \\x9b"), for an
    editable field, which shows its text as it is (a Windows line break apart); None when there is none."""
    for match in _UNSHOWABLE.finditer(text):
        if match[0] != "\r\n":
            line = text.count("\n", 0, match.start()) + 1
            column = match.start() - (text.rfind("\n", 0, match.start()) + 1) + 1
            return f"line {line}, column {column}: {_visible(match)}"
    return None


def as_shown(name: str) -> str:
    """`name` as a reader sees it: its Unicode NFC form without its invisible format characters (zero-width
    spaces and joiners, soft hyphens, marks: category Cf). Two names with one such form show as one, so a name
    that must be told apart (an item id, a candidate, a session) is compared so."""
    return "".join(c for c in unicodedata.normalize("NFC", name) if unicodedata.category(c) != "Cf")


def shown_alike(name: str, others: Iterable[str], key: Callable[[str], str] = as_shown) -> str | None:
    """The first of `others` that is another string than `name` but reads as it under `key` (`as_shown`; or
    `str.casefold` for a name that names a folder, which a case-insensitive disk reads so), else None."""
    mine = key(name)
    return next((other for other in others if other != name and key(other) == mine), None)


def escaped(text: object) -> str:
    """`plain(text)` with Rich markup's brackets escaped: data set inside a Rich markup string is shown as typed, its
    control characters as their escapes, laid out at the width they are shown at (`qatui.cli.shown`)."""
    from rich.markup import escape

    return escape(plain(text))


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """' (did you mean 'rouge-l'?)' when a known name is close to a refused one (`rouge_l`, `bluert`), else ''.

    Case and `_` / `-` are ignored in the comparison, as people type them either way."""
    known = list(known)
    folded = {k.lower().replace("_", "-"): k for k in known}
    close = get_close_matches(name.lower().replace("_", "-"), list(folded), n=1, cutoff=0.6)
    return f" (did you mean {folded[close[0]]!r}?)" if close else ""


def plural(n: int | None, noun: str, nouns: str | None = None) -> str:
    """`1 item`, `2 items` (`nouns` for an irregular plural), `? items` for an unknown count."""
    if not isinstance(n, int):
        return f"? {nouns or noun + 's'}"
    return f"{n} {noun}" if n == 1 else f"{n} {nouns or noun + 's'}"


def clip(text: str, width: int = 80) -> str:
    """One line of at most `width` characters, cut at a word boundary when one is near the end."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    cut = flat[: width - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space >= width * 2 // 3 else cut).rstrip(" ,;:") + "…"


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders q1, q2, q10, q100 as people count (digit runs compared as numbers)."""
    import re

    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", text) if part)


def have(n: int) -> str:
    """'has' or 'have', agreeing with a count ("1 item has", "2 items have")."""
    return "has" if n == 1 else "have"


def trim_note(trimmed: dict) -> str:
    """One line on a prompt cut to fit the context window (`qatui.llm.trim`), e.g. for `sessions show --item`."""
    cuts = "; ".join(f"{t['name']} {t['tokens']:,} → {t['kept']:,} tokens" for t in trimmed.get("texts", []))
    return (f"trimmed to fit the {trimmed.get('window', 0):,}-token context window "
            f"({trimmed.get('answer_tokens', 0):,} kept for the answer): {cuts or 'nothing cut'}")


def count(n: float) -> str:
    """1234 -> 1.2k, 2_500_000 -> 2.5M."""
    for size, suffix in ((1e6, "M"), (1e3, "k")):
        if abs(n) >= size:
            return f"{n / size:.1f}{suffix}"
    return f"{n:g}"


def spent(amount: float, unpriced_calls: int = 0, *, short: bool = False, counted: bool = True) -> str:
    """A spend as every screen and command writes it: `usd`, said to be a floor where `unpriced_calls` calls have
    no known cost (the price map lacks their model, or their usage report cannot be true): "at least $0.0123 (5
    calls not priced)", short "≥$0.0123 (5 unpriced)", short and not `counted` "≥$0.0123" (the live run's
    header, whose line is full at 80 columns). A spend of unpriced calls never reads as a price."""
    if unpriced_calls <= 0:
        return usd(amount)
    if short:
        return f"≥{usd(amount)}" + (f" ({unpriced_calls:,} unpriced)" if counted else "")
    return f"at least {usd(amount)} ({unpriced_calls:,} call{'' if unpriced_calls == 1 else 's'} not priced)"


def usd(amount: float) -> str:
    """A cost in US dollars as every screen and command writes it: 4 decimals ($0.0123), but a cost above 0 and
    below $0.0001 (an embedding request, a short call on a cheap model) keeps two significant digits
    ($0.00000024): a run that cost something never reads as free."""
    if not math.isfinite(amount):
        return "$?"
    if 0 < abs(amount) < 0.0001:
        return f"${amount:.{1 - math.floor(math.log10(abs(amount)))}f}"
    return f"${amount:.4f}"


def thinking_note(tokens: int, short: bool = False) -> str:
    """' (1,234 thinking)' after a count of completion tokens of which `tokens` were spent thinking; '' for none.

    `short` writes the count as `count` does (1.2k), for a status line.
    """
    if not tokens:
        return ""
    return f" ({count(tokens) if short else f'{tokens:,}'} thinking)"


def deployments_line(tally: dict[str, dict[str, int]]) -> str:
    """'pool/a 12 calls, 3×429 · pool/b 40 calls, 1 failed': what each deployment of a backbone did."""
    parts = []
    for label, row in sorted(tally.items()):
        words = [plural(row.get("calls", 0), "call"), f"{count(row.get('tokens', 0))} tokens"]
        if row.get("rate_limited"):
            words.append(f"{row['rate_limited']}×429")
        if row.get("failures"):
            words.append(f"{row['failures']} failed")
        parts.append(f"{label} {', '.join(words)}")
    return " · ".join(parts)


def no_decision_note(doc: dict, key: str, *, short: bool = False) -> str:
    """'2/6 no decision' for a summary doc's `key` when the judge made no decision on some of its units, else ''
    ('2/6' when `short`, for a column named "no decision").

    Such units (questions where it tied every response, labels of items it called a tie) count in the
    figure as agreeing with no one, so the share belongs beside it. A doc stored before this count was
    kept (`stale`) says so instead.
    """
    if doc.get("stale"):
        return "old tie rule"
    undecided, units = (doc.get("no_decision") or {}).get(key), (doc.get("n") or {}).get(key)
    if not isinstance(undecided, int) or not isinstance(units, int) or undecided <= 0:
        return ""
    return f"{undecided}/{units}" + ("" if short else " no decision")


NO_GOLD_ORDER = ("whose gold puts no response above another (people ranked or rated every response alike, or under "
                 "two responses)")
"""The items a question-level figure leaves out (`left_out` of a summary): no order to agree with."""


def _left_out(doc: dict, key: str) -> tuple[int, int] | None:
    """(units averaged, scored items left out) of `key` when its figure left some out (`left_out`), else None."""
    n, left = (doc.get("n") or {}).get(key), (doc.get("left_out") or {}).get(key)
    return (n, left) if isinstance(n, int) and isinstance(left, int) and left > 0 else None


def units_cell(doc: dict, key: str) -> str:
    """A metric's `n` as a table prints it: '3', or '3 of 6' when the figure left out scored items whose gold puts
    no response above another (`left_out_caption` says so under the table)."""
    if (found := _left_out(doc, key)) is not None:
        return f"{found[0]} of {sum(found)}"
    n = (doc.get("n") or {}).get(key)
    return str(n) if isinstance(n, int) else ""


def left_out_note(doc: dict, key: str) -> str:
    """'6 of 9 items (3 no gold order)' where `key`'s figure left scored items out, else ''."""
    found = _left_out(doc, key)
    return "" if found is None else f"{found[0]} of {sum(found)} items ({found[1]} no gold order)"


def left_out_caption(doc: dict) -> str:
    """Under a judge's metrics, when some figure left items out: what 'n of m' means; else ''."""
    if not any(isinstance(v, int) and v > 0 for v in (doc.get("left_out") or {}).values()):
        return ""
    return f"n of m: of m items scored, the figure leaves out those {NO_GOLD_ORDER}: no order to agree with"


def no_order_line(doc: dict, *, why: bool = False) -> str:
    """Why a judge with scored items has no figure when their gold orders none of them: 'no figure: the gold of all
    3 scored items puts no response above another' (with `why`, what such a gold is); '' otherwise."""
    left = max((n for n in (doc.get("left_out") or {}).values() if isinstance(n, int)), default=0)
    if not left or doc.get("metrics"):
        return ""
    line = f"no figure: the gold of all {plural(left, 'scored item')} puts no response above another"
    return line + " (people ranked or rated every response alike, or under two responses)" if why else line


def kappa_name(figures: Mapping[str, object]) -> str:
    """"Cohen's kappa" or "Fleiss' kappa": whose kappa an agreement result holds (`kappa_of` of
    `metrics.agreement.nominal_agreement`: two raters, or more), so two figures under one name are never two
    statistics."""
    return "Cohen's kappa" if figures.get("kappa_of") == "Cohen" else "Fleiss' kappa"
