"""The Label screen: a person labels a dataset's items from the keyboard, each label saved as it is given.

    header     annotator, dataset, item k of n, its kind, how many are labelled, blind or not
    question   the question, references and context; then the judges (hidden until the item is labelled)
    responses  the responses, in the order the annotator ranks them (or A and B, or with their ratings)
    status     what the label still needs, or that it is saved
    Footer

Wide (≥ 100 columns) the question and the responses sit side by side; narrower, the question
pane sits above the responses. `tab` switches panes (arrows then scroll the focused one), `z`
fills the screen with it. Blind by default: no judge's verdict shows on an item until its label
is saved; then every verdict on it appears with the pairs of responses where it differs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, VerticalScroll
from textual.content import Content
from textual.events import Resize
from textual.widgets import Footer, Static

from qatui.data.labels import check_label, label_kind, pair_of
from qatui.data.presentation import permutation
from qatui.errors import QatuiError
from qatui.text import plain, plural
from qatui.tui.label_draft import Draft
from qatui.tui.label_text import judge_lines, response_heading
from qatui.tui.screens.base import QatuiScreen

if TYPE_CHECKING:
    from qatui.data.model import Item
    from qatui.report.annotation import Annotation

NARROW = 100
"""Below this width the question pane sits above the responses instead of beside them."""


class QuestionPane(VerticalScroll):
    """The question, references, context and judges; scrolls with the arrows when focused, `z` fills the screen."""

    ALLOW_MAXIMIZE = True


class ResponseList(VerticalScroll):
    """The responses of the item; the arrows move the cursor (not the scroll), shift+arrows move a response."""

    ALLOW_MAXIMIZE = True

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "screen.step(-1)", "Select", key_display="↑↓"),
        Binding("down,j", "screen.step(1)", "Select", show=False),
        Binding("shift+up,K", "screen.move(-1)", "Move", key_display="⇧↑↓"),
        Binding("shift+down,J", "screen.move(1)", "Move", show=False),
    ]


class LabelScreen(QatuiScreen):
    """Label the items of `annotation`; labels go to disk as they are saved, the file is released on close."""

    HELP_TITLE = "labelling"
    CSS_PATH = Path(__file__).with_name("label.tcss")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "save", "Save"),
        Binding("t", "tie", "Tie"),
        Binding("a", "choose('A')", "A"),
        Binding("b", "choose('B')", "B"),
        *(Binding(str(n), f"rate({n})", "Rate", key_display="1-9", show=n == 1) for n in range(1, 10)),
        Binding("d", "dimension", "Dimension"),
        Binding("n", "go(1)", "Next", show=False),  # enter goes to the next unlabelled item; ? lists n and p
        Binding("p", "go(-1)", "Previous", show=False),
        Binding("u", "unlabelled", "Next unlabelled", show=False),
        Binding("tab", "app.focus_next", "Pane", show=False),
        Binding("z", "zoom", "Zoom pane (escape: back)", show=False),
        Binding("g", "agreement", "Agreement"),
        Binding("escape", "close", "Back", show=False),
    ]

    def __init__(self, annotation: Annotation, *, blind: bool = True, seed: int = 0) -> None:
        super().__init__()
        self.annotation = annotation
        self.items = annotation.dataset.items
        self.blind = blind
        self.seed = seed
        self.index = 0
        self.draft: Draft | None = None
        self.names: dict[str, str] = {}
        self.scale = _key_scale(annotation.rules.scale)
        self._released = False

    def compose(self) -> ComposeResult:
        yield Static(id="label-header")
        with Container(id="label-body"):
            with QuestionPane(id="label-question"):
                yield Static(id="label-item")
                yield Static(id="label-judges")
            yield ResponseList(id="label-responses")
        yield Static(id="label-status")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = f"labelling {self.annotation.dataset.name}"
        self.show_item(self.first_unlabelled())
        self.query_one(ResponseList).focus()

    def on_resize(self, event: Resize) -> None:
        self.query_one("#label-body").set_class(event.size.width < NARROW, "-narrow")

    def on_unmount(self) -> None:
        self.release()

    def release(self) -> None:
        """Release the label file (its lock); every label is on disk already."""
        if not self._released:
            self._released = True
            self.annotation.labels.close()

    # -- items ----------------------------------------------------------------------------------

    @property
    def item(self) -> Item:
        """The item being labelled."""
        return self.items[self.index]

    def first_unlabelled(self, start: int = 0) -> int:
        """The first item from `start` on (wrapping) without a label; `start` (wrapped) when all have one.

        `start` may be one past the last item (the next after it): wrapped, it is always an index.
        """
        saved = self.annotation.labels.labels()
        for offset in range(len(self.items)):
            i = (start + offset) % len(self.items)
            if self.items[i].id not in saved:
                return i
        return start % len(self.items)

    def show_item(self, index: int) -> None:
        """Open item `index`: a draft from its saved label, or from the presentation order."""
        self.index = index
        item = self.item
        kind = label_kind(item, self.annotation.rules.dataset_kind)
        order = list(pair_of(item)) if kind == "pairwise" else permutation(item, self.seed)
        self.names = ({cid: side for cid, side in zip(order, ("A", "B"))} if kind == "pairwise"
                      else {cid: f"R{i}" for i, cid in enumerate(order, 1)})
        saved = self.annotation.labels.labels().get(item.id)
        self.draft = Draft(item, kind, order, saved, self.scale)
        self.query_one("#label-item", Static).update(_item_text(item))
        responses = self.query_one(ResponseList)
        responses.remove_children()
        responses.mount_all(Static(classes="response") for _ in self.draft.order)
        self.query_one("#label-question", VerticalScroll).scroll_home(animate=False)
        responses.scroll_home(animate=False)
        self.call_after_refresh(self.redraw)
        self.refresh_bindings()

    def redraw(self, message: Content | None = None) -> None:
        """Draw the header, responses, judges and status from the draft."""
        draft, item = self.draft, self.item
        labels = self.annotation.labels.labels()
        saved = labels.get(item.id)
        mode = "blind" if self.blind else "verdicts shown"
        self.query_one("#label-header", Static).update(Content.from_markup(
            "[b]$annotator[/] · $dataset · item $at/$n [b]$item[/] · $kind · $done/$n labelled · $mode",
            annotator=plain(self.annotation.labels.annotator), dataset=plain(self.annotation.dataset.name),
            at=self.index + 1, n=len(self.items), item=plain(item.id), kind=draft.kind, done=len(labels), mode=mode))
        for position, (widget, cid) in enumerate(zip(self.query(".response").results(Static), draft.order)):
            widget.update(Content.assemble(response_heading(draft, cid, self.names), "\n", plain(item.candidates[cid])))
            widget.set_class(position == draft.cursor, "-cursor")
        cursor = list(self.query(".response"))[draft.cursor] if self.query(".response") else None
        if cursor is not None:
            self.query_one(ResponseList).scroll_to_widget(cursor, animate=False)
        judges = self.query_one("#label-judges", Static)
        if saved is None and self.blind:
            judges.update(Content.from_markup("\n[b]Judges[/]\n[dim]hidden until you save your label (blind)[/]"))
        else:
            lines = judge_lines(item, saved, self.annotation.judges, self.names)
            judges.update(Content("\n").join([Content.from_markup("\n[b]Judges[/]"), *lines]))
        self.query_one("#label-status", Static).update(message or self._status(saved))

    def _status(self, saved: object) -> Content:
        """What to do next on this item."""
        missing = self.draft.missing()
        if saved is not None and self.draft.label().model_dump(exclude={"updated"}) == saved.model_dump(
                exclude={"updated"}):
            return Content.from_markup("[green]saved[/] · enter: next unlabelled item")
        hint = {"ranking": "order best first (⇧↑↓ move, t ties with the one above), then enter",
                "pairwise": "a, b or t (tie) saves your choice",
                "ratings": Content.from_markup("rate [b]$dim[/] $low-$high · d: other dimension · enter saves",
                                               dim=plain(self.draft.dimensions[self.draft.dimension]),
                                               low=self.scale[0], high=self.scale[1])}
        changed = Content.from_markup("[yellow]changed, not saved[/] · ") if saved is not None else Content("")
        return Content.assemble(changed, plain(missing + " · ") if missing else "", hint[self.draft.kind])

    # -- actions --------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        kind = self.draft.kind if self.draft else None
        if action in ("choose",):
            return kind == "pairwise"
        if action == "tie":
            return kind in ("ranking", "pairwise")
        if action in ("rate",):
            return kind == "ratings"
        if action == "dimension":
            return kind == "ratings" and len(self.draft.dimensions) > 1
        if action == "move":
            return kind == "ranking"
        if action == "save":
            return kind != "pairwise"
        return True

    def action_step(self, delta: int) -> None:
        """Move the cursor over the responses."""
        self.draft.step(delta)
        self.redraw()

    def action_move(self, delta: int) -> None:
        """Move the selected response up or down the ranking."""
        self.draft.move(delta)
        self.redraw()

    def action_tie(self) -> None:
        """Rankings: tie the selected response with the one above (or untie it). Pairs: a tie, saved."""
        if self.draft.kind == "pairwise":
            self.action_choose("tie")
        else:
            self.draft.toggle_tie()
            self.redraw()

    def action_choose(self, preference: str) -> None:
        """A pair's choice, saved at once."""
        self.draft.choose(preference)  # type: ignore[arg-type]
        self.action_save()

    def action_rate(self, value: int) -> None:
        """Rate the selected response on the current dimension, then select the next response."""
        low, high = self.scale
        if not low <= value <= high:
            self.redraw(Content.from_markup("[yellow]$value is off the scale[/]: rate $low-$high", value=value, low=low,
                                            high=high))
            return
        self.draft.rate(value)
        self.draft.step(1)
        self.redraw()

    def action_dimension(self) -> None:
        """Rate another dimension."""
        self.draft.next_dimension()
        self.redraw()
        self.refresh_bindings()

    def action_save(self) -> None:
        """Save the label (on disk when this returns) and reveal the judges; on a saved item, go to the next unlabelled."""
        if (missing := self.draft.missing()) is not None:
            self.redraw(Content.from_markup("[yellow]not saved[/]: $missing", missing=plain(missing)))
            return
        saved = self.annotation.labels.labels().get(self.item.id)
        label = self.draft.label()
        if saved is not None and label.model_dump(exclude={"updated"}) == saved.model_dump(exclude={"updated"}):
            self.action_unlabelled()
            return
        try:
            self.annotation.labels.put(check_label(self.item, label, self.annotation.rules))
        except (QatuiError, OSError, ValueError) as e:
            self.notify(str(e), title="Label not saved", severity="error", timeout=10)
            return
        left = len(self.items) - len(self.annotation.labels.labels())
        self.redraw(Content.from_markup(f"[green]saved[/] · {plural(left, 'item')} left · enter: next unlabelled item"
                                        if left else "[green]saved[/] · every item is labelled · g: agreement with the judges"))
        self.call_after_refresh(self.query_one("#label-question", VerticalScroll).scroll_to_widget,
                                self.query_one("#label-judges"), animate=False, top=True)

    def action_zoom(self) -> None:
        """Fill the screen with the focused pane (escape restores it)."""
        pane = self.focused if self.focused in (self.query_one("#label-question"), self.query_one(ResponseList)) \
            else self.query_one(ResponseList)
        self.maximize(pane, container=False)

    def action_go(self, delta: int) -> None:
        """The next or previous item (wrapping)."""
        self.show_item((self.index + delta) % len(self.items))

    def action_unlabelled(self) -> None:
        """The next item without a label."""
        target = self.first_unlabelled(self.index + 1)
        if self.items[target].id in self.annotation.labels.labels():
            self.notify("Every item is labelled: g shows each judge's agreement with you.", timeout=4)
            return
        self.show_item(target)

    def action_agreement(self) -> None:
        """Each judge's agreement with these labels (and between annotators), in a dialog."""
        from qatui.tui.screens.label_agreement import AgreementScreen

        self.app.push_screen(AgreementScreen(self.annotation.dataset, self.qatui.store))

    def action_close(self) -> None:
        """Back to where the pass was opened; the labels are saved already."""
        self.release()
        self.app.pop_screen()


def _item_text(item: Item) -> Content:
    """The question, its references and its context, as the pane shows them."""
    parts = [Content.assemble(("Question", "bold"), "\n", plain(item.question))]
    for i, reference in enumerate(item.references, 1):
        title = "Reference" if len(item.references) == 1 else f"Reference {i}"
        parts.append(Content.assemble((title, "bold"), "\n", plain(reference)))
    if not item.references:
        parts.append(Content.from_markup("[dim]No reference answer.[/]"))
    for i, passage in enumerate(item.context, 1):
        parts.append(Content.assemble((f"Context {i}", "bold"), "\n", (plain(passage), "dim")))
    return Content("\n\n").join(parts)


def _key_scale(scale: tuple[float, float]) -> tuple[int, int]:
    """The ratings scale the keys give: the dataset's (`data.labels.rating_scale`), within 1-9 (one digit a key)."""
    low = max(1, min(9, int(scale[0])))
    return low, max(low, min(9, int(scale[1])))
