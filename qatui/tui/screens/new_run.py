"""New run: pick a dataset, the judges it can feed with their options, and the models; then start.

    Header
    ┌ Dataset ┬ Judges ┬ Models ┐       (F2 / F3 / F4, or the tab bar with ←/→)
    │ path · file tree      │ what the dataset holds, its first items and their gold │
    │ judges (greyed: why not) │ the highlighted judge's options                     │
    │ backbone · NLI · embedder · limit │ backbone calls per judge, models used      │
    plan: dataset · items · judges · backbone · expected calls     (or what is wrong)
    Footer

The dataset loads in a thread as it is picked; every judge is built with its options as they
are typed, so a judge the data cannot feed, a bad option or an unreadable file is shown here,
and the run is refused here, never after it starts. Enter on a file in the tree picks it; an
empty path is the bundled demo set.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import (
    Button,
    Checkbox,
    DirectoryTree,
    Footer,
    Header,
    Input,
    Label,
    Select,
    SelectionList,
    Static,
    TabbedContent,
    TabPane,
)

from qatui.config import Config
from qatui.errors import QatuiError
from qatui.report.models import model_choices
from qatui.text import clip, plain, unshowable_at
from qatui.tui.roots import file_tree
from qatui.tui.screens.base import QatuiScreen
from qatui.tui.format import model_used_line, plan_line, price_note
from qatui.tui.widgets.dataset_picker import DatasetTree, FormScroll, dataset_summary
from qatui.tui.widgets.backbone_input import BackboneInput, backbone_hint, backbone_problem
from qatui.tui.widgets.judge_list import JudgeList
from qatui.tui.widgets.options_form import OptionsForm
from qatui.tui.widgets.tick_box import TickBox

if TYPE_CHECKING:
    from qatui.data.model import Dataset
    from qatui.judges.base import Judge
    from qatui.judges.resources import Resources


PRICE_AFTER_S = 0.4
"""How long the plan must stay unchanged before New run prices it (pricing builds and counts every prompt)."""


@dataclass(frozen=True)
class NewRun:
    """What the screen returns: the app builds the run from it."""

    path: str
    """Dataset file or folder; '' for the bundled demo."""
    judges: list[str]
    backbone: str
    limit: int | None
    options: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Each picked judge's options, validated (all fields), replacing its config table."""
    nli: str | None = None
    embedder: str | None = None
    max_cost: float | None = None
    """The run's cost cap in USD (`--max-cost`); None: no cap."""
    batch: bool = False
    """Send the backbone calls through the provider's batch API (`--batch`)."""
    batch_retry: str | None = None
    """With `batch`: how a request that failed or expired in a batch is asked again, "batch" or "direct"
    (`--batch-retry`); None: `[batch] retry`."""


STEPS = Binding.Group("Steps")
"""F2 / F3 / F4 share one footer hint, so the footer fits 80 columns (the help screen lists each)."""


class NewRunScreen(QatuiScreen):
    """Dismisses with a `NewRun`, or None when cancelled."""

    HELP_TITLE = "new run"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "start", "Start run", priority=True),
        Binding("escape", "dismiss(None)", "Cancel"),
        Binding("f2", "tab('dataset')", "Dataset", group=STEPS),
        Binding("f3", "tab('judges')", "Judges", group=STEPS),
        Binding("f4", "tab('models')", "Models", group=STEPS),
    ]

    DEFAULT_CSS = """
    NewRunScreen {
        & TabbedContent { height: 1fr; }
        & TabPane { padding: 0; }
        & .pane { height: 1fr; }
        & .side { width: 38%; min-width: 31; border-right: vkey $foreground 15%; padding-right: 1; }
        & .main { width: 1fr; padding: 0 1; }
        & #path-row { height: auto; }
        & #path-row > Input { width: 1fr; }
        & #path-row > Button { min-width: 6; margin-left: 1; }
        & Input, & Select { background: $foreground 6%; }
        & Input:focus, & Select:focus { background: $foreground 12%; }
        & DatasetTree { height: 1fr; background: transparent; }
        & #judges { height: 1fr; border: none; background: transparent; padding: 0; }
        & #ticked { height: auto; }
        & #models-form > Label { color: $text-muted; margin-top: 1; }
        & #models-form > Label.first { margin-top: 0; }
        & #backbone-hint { color: $text-muted; height: auto; }
        & #limit, & #max-cost { width: 14; }
        & #batch { margin-top: 1; }
        & #models-form > #batch-retry-label { margin-top: 0; }
        & #plan { height: auto; max-height: 3; padding: 0 1; background: $panel; }
        & #plan.-error { color: $text-error; }
        & #options-error { color: $text-error; height: auto; }
        & #about { margin-bottom: 1; }
        & #unavailable { color: $text-muted; }
    }
    """

    def __init__(self, config: Config, last: NewRun | None = None, *, root: str | Path = ".") -> None:
        super().__init__()
        self.config = config
        self.last = last or NewRun("", ["minos"], config.models.default_backbone, None)
        self.cap_refused: str | None = None
        """Why the start would refuse the cost cap of the plan shown (`cap_problem`), once checked."""
        self.cap_checked = False
        """Whether the cost cap of the plan shown was checked (by the pricing worker, off the screen's loop)."""
        self.root = Path(root)
        self.dataset: Dataset | None = None
        self.dataset_error = ""
        self.judge_classes: dict[str, type[Judge]] = {}
        self.options: dict[str, dict[str, Any]] = {name: dict(values) for name, values in self.last.options.items()}
        """What the form holds per judge (as typed); absent judges use their config table."""
        self.judges: dict[str, Judge] = {}
        """Each registered judge built with its current options (the picked ones are run)."""
        self.option_errors: dict[str, str] = {}
        self.unmet: dict[str, list[str]] = {}
        self.call_lines: list[Content] = []
        """The Models tab's call counts and models as last drawn; the price goes under them once known."""

    # -- layout -----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        from qatui.judges.registry import available_judges

        choices = model_choices(self.config)
        yield Header(icon="◆")
        with TabbedContent(id="steps", initial="dataset"):
            with TabPane("Dataset", id="dataset"), Horizontal(classes="pane"):
                with Vertical(classes="side"):
                    with Horizontal(id="path-row"):
                        yield Input(self.last.path, placeholder="empty: the demo set", id="path",
                                    compact=True)
                        yield Button("demo", id="demo", compact=True)
                    yield file_tree(self.root, self.qatui.roots, id="tree")
                with VerticalScroll(classes="main", id="preview-box"):
                    yield Static("loading…", id="preview")
            with TabPane("Judges", id="judges-tab"), Horizontal(classes="pane"):
                with Vertical(classes="side"):
                    yield JudgeList(list(available_judges(self.config)), self.last.judges, id="judges")
                    yield Static(id="ticked")
                with FormScroll(classes="main"):
                    yield Static("Highlight a judge (↑ ↓) to see what it does and its options; space ticks it.",
                                 id="about")
                    yield OptionsForm(id="options")
                    yield Static(id="options-error")
                    yield Static(id="unavailable")
            with TabPane("Models", id="models"), Horizontal(classes="pane"):
                with FormScroll(classes="side", id="models-form"):
                    yield Label("Backbone", classes="first")
                    yield BackboneInput(self.config, self.last.backbone, id="backbone")
                    yield Static(backbone_hint(self.config), id="backbone-hint")
                    yield Label("NLI model")
                    yield self._select("nli", choices["nli"], self.last.nli or self.config.models.nli)
                    yield Label("Embedder")
                    yield self._select("embedder", choices["embedder"],
                                       self.last.embedder or self.config.models.embedder)
                    yield Label("Items (blank: all)")
                    yield Input("" if self.last.limit is None else str(self.last.limit), placeholder="all",
                                type="integer", id="limit", compact=True)
                    yield Label("Cost cap, USD (blank: none)")
                    yield Input("" if self.last.max_cost is None else f"{self.last.max_cost:g}", placeholder="none",
                                id="max-cost", compact=True)
                    yield TickBox("Batch API (half price)", self.last.batch, id="batch",
                                   compact=True)
                    yield Label("Retry failed batch requests", id="batch-retry-label")
                    yield Select([("as batch", "batch"), ("directly", "direct")],
                                 value=self.last.batch_retry or self.config.batch.retry, allow_blank=False,
                                 id="batch-retry", compact=True)
                with FormScroll(classes="main"):
                    yield Static(id="calls")
        yield Static(id="plan")
        yield Footer(compact=True)

    @staticmethod
    def _select(name: str, choices: list[tuple[str, str]], value: str) -> Select[str]:
        values = [v for _, v in choices]
        if value not in values:
            choices = [(value, value), *choices]
        shown = [(Content(plain(label)), v) for label, v in choices]  # config names: text, not markup
        return Select(shown, value=value, allow_blank=False, id=name, compact=True)

    def on_mount(self) -> None:
        self.sub_title = "new run"
        self.query_one("#path", Input).focus()
        tree = self.query_one(DatasetTree)
        if str(tree.path) == ".":
            tree.root.set_label("./ (working folder)")
        self._show_ticked()
        self._show_batch_retry()
        self.build_judges()
        self.load()

    # -- dataset ----------------------------------------------------------------------------------

    @on(Input.Changed, "#path")
    def _path_changed(self) -> None:
        self.load()

    @on(Button.Pressed, "#demo")
    def _use_demo(self) -> None:
        self.query_one("#path", Input).value = ""

    @on(DirectoryTree.FileSelected)
    def _file_picked(self, event: DirectoryTree.FileSelected) -> None:
        if where := unshowable_at(str(event.path)):  # the field shows its text as it is: a terminal would obey it
            self.notify(f"{event.path}: its name holds a character a text field would send to the terminal raw "
                        f"({where.split(': ', 1)[1]}); rename it, or give it to `qatui run`", title="Not opened here",
                        severity="warning", timeout=10)
            return
        self.query_one("#path", Input).value = str(event.path)

    @work(group="load", exclusive=True, exit_on_error=False, description="loading the dataset")
    async def load(self) -> None:
        """Load the dataset at the path (after typing settles) and preview it.

        Both in a thread: the preview reads every item's language and compares every candidate with its references
        (`data.leaks`), seconds on a large dataset, which the screen must not stop for."""
        await asyncio.sleep(0.3)
        from qatui.data.loaders import demo_dataset, load_dataset

        path, roots = self.query_one("#path", Input).value.strip(), self.qatui.roots
        preview = self.query_one("#preview", Static)

        def read() -> tuple[Dataset, Content]:
            dataset = load_dataset(roots.checked(path)) if path else demo_dataset()
            return dataset, dataset_summary(dataset)

        try:
            dataset, summary = await asyncio.to_thread(read)
        except QatuiError as e:
            self.dataset, self.dataset_error = None, str(e)
            preview.update(Content.from_markup("[b $text-error]Cannot load this dataset[/]\n$why", why=plain(e)))
            self.refresh_judges()
            return
        self.dataset, self.dataset_error = dataset, ""
        preview.update(summary)
        self.refresh_judges()

    # -- judges -----------------------------------------------------------------------------------

    @work(group="judges", exclusive=True, exit_on_error=False, description="listing the judges")
    async def build_judges(self) -> None:
        """Import every registered judge (off the UI thread), then build them with their options."""
        from qatui.judges.registry import available_judges, judge_class

        def classes() -> tuple[dict[str, type[Judge]], dict[str, str]]:
            found, bad = {}, {}
            for name in available_judges(self.config):
                try:
                    found[name] = judge_class(name, self.config)
                except QatuiError as e:  # a judge file that does not load: left out, its problem said
                    bad[name] = str(e)
            return found, bad

        self.judge_classes, bad = await asyncio.to_thread(classes)
        for name, problem in bad.items():
            self.query_one(JudgeList).remove_option(name)
            self.notify(problem, title=f"judge {name} left out", severity="warning", markup=False)
        for name in self.judge_classes:
            self._build(name)
        self.refresh_judges()
        listing = self.query_one(JudgeList)
        if listing.highlighted is not None:  # highlighted while they loaded: its options now
            listing.post_message(SelectionList.SelectionHighlighted(listing, listing.highlighted))

    def _build(self, name: str) -> None:
        """Build judge `name` from the form's options (or its config table); a bad option is kept as an error."""
        from qatui.judges.registry import make_judge

        try:
            self.judges[name] = make_judge(name, self.options.get(name, self.config.judge_options(name)),
                                           config=self.config)
            self.option_errors.pop(name, None)
        except QatuiError as e:
            self.judges.pop(name, None)
            self.option_errors[name] = str(e)

    def refresh_judges(self) -> None:
        """List every judge: the ones the dataset can feed are pickable; the others say why not."""
        if not self.judge_classes:
            return
        self.unmet = {name: judge.unmet_needs(self.dataset) for name, judge in self.judges.items()} \
            if self.dataset is not None else {}
        self.query_one(JudgeList).describe(self.unmet)
        unavailable = [Content.from_markup("[b]$name[/]: $why", name=name, why=plain("; ".join(self.unmet[name])))
                       for name in self.judge_classes if self.unmet.get(name)]
        heading = [Content.from_markup("\n[b]Not on this dataset[/]")] if unavailable else []
        self.query_one("#unavailable", Static).update(Content("\n").join([*heading, *unavailable]))
        self.refresh_plan()

    @on(SelectionList.SelectionHighlighted, "#judges")
    async def _judge_highlighted(self, event: SelectionList.SelectionHighlighted) -> None:
        name = event.selection.value
        form = self.query_one(OptionsForm)
        if form.judge == name or name not in self.judge_classes:  # still loading: shown once the judges are built
            return
        values = self.judges[name].describe_options() if name in self.judges else self.options.get(name, {})
        cls = self.judge_classes[name]
        about = Content.from_markup("[b]$name[/] $summary\n[dim]options[/]", name=name, summary=plain(cls.summary))
        self.query_one("#about", Static).update(about)
        await form.show(name, cls.Options, values)
        self._show_option_error(name)

    @on(SelectionList.SelectedChanged, "#judges")
    def _judges_changed(self) -> None:
        self._show_ticked()
        self.refresh_plan()

    def _show_ticked(self) -> None:
        """Under the list, in words, the judges that will run (one may be ticked before the user ticks any)."""
        picked = self.picked()
        self.query_one("#ticked", Static).update(Content.assemble(
            ("ticked: ", "dim"), ", ".join(picked) or "none (space ticks the highlighted judge)"))

    @on(OptionsForm.Changed)
    def _options_changed(self, event: OptionsForm.Changed) -> None:
        self.options[event.judge] = event.values
        self._build(event.judge)
        self._show_option_error(event.judge)
        self.refresh_judges()  # an option can make the data fit the judge, or not

    def _show_option_error(self, name: str) -> None:
        self.query_one("#options-error", Static).update(Content(plain(self.option_errors.get(name, ""))))

    # -- models and the plan ----------------------------------------------------------------------

    @on(Select.Changed, "#models-form Select")
    @on(Input.Changed, "#limit")
    @on(Input.Changed, "#max-cost")
    @on(Checkbox.Changed, "#batch")
    @on(Input.Changed, "#backbone")
    def _models_changed(self) -> None:
        self._show_batch_retry()
        self.refresh_plan()

    def _show_batch_retry(self) -> None:
        """The choice of how failed batch requests are asked again is shown only while the batch switch is on."""
        on = self.batch()
        self.query_one("#batch-retry-label", Label).display = on
        self.query_one("#batch-retry", Select).display = on

    def picked(self) -> list[str]:
        """The judges ticked, in registry order."""
        return list(self.query_one("#judges", SelectionList).selected)

    def limit(self) -> int | None:
        """The item limit typed in, None when blank; QatuiError in one line for anything but a whole number of 1
        or more (`--limit`'s range): a lone "-" crashed the screen, and 0 or -5 ran every item."""
        text = self.query_one("#limit", Input).value.strip()
        if not text:
            return None
        try:
            value = int(text) if len(text) <= 20 else None  # past 20 digits no dataset is that long; nor int's limit
        except ValueError:
            value = None
        if value is None or value < 1:
            raise QatuiError(f"items: a whole number, 1 or more (blank: all), not {clip(text, 24)!r}")
        return value

    def problems(self) -> list[str]:
        """Why the run cannot start as it stands (empty when it can)."""
        if self.dataset is None:
            return [self.dataset_error or "the dataset is still loading"]
        picked = self.picked()
        if not picked:
            return ["tick at least one judge (F3)"]
        found = [self.option_errors[name] for name in picked if name in self.option_errors]
        found += [f"{name} cannot run: {'; '.join(self.unmet[name])}" for name in picked if self.unmet.get(name)]
        from qatui.engine.backbones import calls_backbone

        resources = self.resources()
        if any(calls_backbone(self.judges[name], resources, self.dataset) for name in picked if name in self.judges):
            if problem := backbone_problem(self.config, self.backbone()):  # refused as --backbone is
                found.append(problem)
            elif self.batch() and self.backbone().startswith("local/"):
                found.append("batch API: an embedded model has none; untick it (F4) or pick an API backbone")
        for typed in (self.max_cost, self.limit):
            try:
                typed()
            except QatuiError as e:
                found.append(str(e))
        if not found and self.cap_refused:
            found.append(self.cap_refused)
        return found

    @staticmethod
    def cap_problem(cap: float | None, judges: list[Judge], resources: Resources, dataset: Dataset) -> str | None:
        """Why the start would refuse the cost cap, or None: the check the start makes (`engine.backbones.run_cap`),
        so a backbone or served embedder LiteLLM cannot price is said before ctrl+s. It asks LiteLLM's price map
        (LiteLLM's import: seconds), so it runs off the screen's loop: in the pricing worker (`price_plan`), or at
        ctrl+s when that has not answered yet (`start_checked`)."""
        from qatui.engine.backbones import run_cap

        if cap is None:
            return None
        try:
            run_cap(cap, 0.0, judges, resources, dataset)
        except QatuiError as e:
            return str(e)
        return None

    def max_cost(self) -> float | None:
        """The cost cap typed in (None: blank); `CostError` for one out of `--max-cost`'s range."""
        from qatui.engine.capping import parse_cap

        return parse_cap(self.query_one("#max-cost", Input).value)

    def batch(self) -> bool:
        """Whether the run goes through the provider's batch API."""
        return self.query_one("#batch", Checkbox).value

    def batch_retry(self) -> str | None:
        """With the batch switch on, how its failed requests are asked again ("batch" or "direct", as
        `--batch-retry`); None with it off."""
        return str(self.query_one("#batch-retry", Select).value) if self.batch() else None

    def backbone(self) -> str:
        """The backbone typed on the Models tab."""
        return self.query_one("#backbone", BackboneInput).backbone

    def refresh_plan(self) -> None:
        """The bottom line (what will run, or what stops it) and the Models tab's call counts."""
        from qatui.data.language import item_language
        from qatui.engine.jobs import calls_text, expected_calls, total_calls

        plan = self.query_one("#plan", Static)
        self.cap_refused, self.cap_checked = None, False  # the plan changed: its cap is checked again (`price_plan`)
        problems = self.problems()
        plan.set_class(bool(problems), "-error")
        if problems:
            more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
            plan.update(Content(plain(f"✗ {problems[0]}{more}")))
            self.query_one("#calls", Static).update("")
            return
        judges, resources, subset = self.planned()
        calls = expected_calls(judges, subset)
        backbone = self.backbone() if any(j.uses_llm for j in judges) else None
        total = total_calls(calls)
        cap = self.max_cost()
        batched = self.batch() and backbone is not None
        direct = batched and self.batch_retry() == "direct"
        notes = (*(["batch"] if batched else []), *(["retry direct"] if direct else []),
                 *([f"cap ${cap:g}"] if cap is not None else []))
        line = (self.dataset.name, len(subset.items), list(calls), backbone, calls_text(total))
        paid = backbone is not None and self._pays(judges, resources, subset)
        plan.update(plan_line(*line, notes, "pricing…" if paid else None))
        if paid:
            self.price_plan(judges, subset, resources, batched, line, notes)
        else:
            self.workers.cancel_group(self, "price")
        lines = [Content.from_markup("[b]Backbone calls[/] [dim](before the cache; re-asks of malformed answers "
                                     "not counted)[/]")]
        lines += [Content(f"  {name:<14}{calls_text(count):>12}") for name, count in calls.items()]
        if len(calls) > 1:
            lines.append(Content(f"  {'total':<14}{calls_text(total):>12}"))
        lines.append(Content(""))
        lines.append(Content.from_markup("[b]Models used[/]"))
        lines.append(self._used("backbone", [j.name for j in judges if j.uses_llm]))
        names = resources.nli_names(item_language(item) for item in subset.items)
        nli = ", ".join(f"{n} ({lang})" for lang, n in names.items()) if len(set(names.values())) > 1 else None
        lines.append(self._used("nli", [j.name for j in judges if j.uses_nli], nli))
        lines.append(self._used("embedder", [j.name for j in judges if j.uses_embedder]))
        self.call_lines = lines
        self.query_one("#calls", Static).update(Content("\n").join(lines))

    def planned(self) -> tuple[list[Judge], Resources, Dataset]:
        """What the run would be, once `problems` found nothing: the picked judges with the models chosen, the
        resources, and the items it would judge."""
        assert self.dataset is not None
        resources = self.resources()
        return ([self._with_models(self.judges[name], resources) for name in self.picked()], resources,
                self.dataset.limited(self.limit()))

    @staticmethod
    def _pays(judges: list[Judge], resources: Resources, dataset: Dataset) -> bool:
        """Whether a backbone the judges (or jury members) call is a provider's, not an embedded `local/` model."""
        from qatui.engine.jobs import run_backbones
        from qatui.llm.client import backbone_settings

        try:
            return any(not backbone_settings(name, resources.config).model.startswith("local/")
                       for name in run_backbones(judges, resources, dataset))
        except QatuiError:  # a backbone the config cannot name: the plan line says so when the run is asked
            return False

    @work(group="price", exclusive=True, exit_on_error=False, description="pricing the run")
    async def price_plan(self, judges: list[Judge], dataset: Dataset, resources: Resources, batched: bool,
                         line: tuple, notes: tuple[str, ...]) -> None:
        """The run's price at LiteLLM's prices, as `run --plan` makes it (`engine.pricing.price_run`: every prompt
        built and counted, nothing sent), off the screen's loop; shown on the bottom line once known. A change to
        the plan starts another and this one's answer is dropped (exclusive); it waits `PRICE_AFTER_S` first, so
        that typing a limit prices the number typed, not each keystroke."""
        from qatui.engine.pricing import cost_text, price_run

        await asyncio.sleep(PRICE_AFTER_S)
        refused = await asyncio.to_thread(self.cap_problem, self.max_cost(), judges, resources, dataset)
        self.cap_refused, self.cap_checked = refused, True
        if refused:  # the start would refuse it: said as every other problem is
            self.query_one("#plan", Static).set_class(True, "-error")
            self.query_one("#plan", Static).update(Content(plain(f"✗ {refused}")))
            return
        try:
            priced = await asyncio.to_thread(price_run, judges, dataset, resources, self.config.general.seed,
                                             batched)
        except Exception as e:  # noqa: BLE001 - a price that cannot be made is said, never left "pricing…"
            note, rows = "no price", [Content(plain(f"  {e}"))]
        else:
            note = price_note(priced)
            rows = [Content(plain(f"  {label:<14}{cost_text(row)}")) for label, row in priced.items()]
        self.query_one("#plan", Static).update(plan_line(*line, notes, note))
        price = [Content(""), Content.from_markup("[b]Price[/] [dim](LiteLLM's prices; every prompt counted, "
                                                  "nothing sent)[/]"), *rows]
        self.query_one("#calls", Static).update(Content("\n").join([*self.call_lines, *price]))

    def resources(self) -> Resources:
        """The models picked on the Models tab, as a run would use them (the plan counts with these)."""
        from qatui.judges.resources import Resources

        value = {kind: str(self.query_one(f"#{kind}", Select).value) for kind in ("nli", "embedder")}
        return Resources(self.config, self.backbone(), value["nli"], value["embedder"])

    @staticmethod
    def _with_models(judge: Judge, resources: Resources) -> Judge:
        """`judge` with the picked models (its calls depend on them: LLM-NLI, G-Eval's log-probabilities)."""
        from qatui.judges.registry import make_judge

        try:
            return make_judge(judge.name, judge.describe_options(), resources)
        except QatuiError:  # a member the picked models cannot build: count with the defaults
            return judge

    def _used(self, kind: str, by: list[str], shown: str | None = None) -> Content:
        picked = self.backbone() if kind == "backbone" else str(self.query_one(f"#{kind}", Select).value)
        return model_used_line(kind, shown or picked, by)

    # -- actions ----------------------------------------------------------------------------------

    def action_tab(self, pane: str) -> None:
        """Show one step: dataset, judges or models."""
        self.query_one(TabbedContent).active = "judges-tab" if pane == "judges" else pane
        target = {"dataset": "#path", "judges": "#judges", "models": "#backbone"}[pane]
        self.query_one(target).focus()

    def action_start(self) -> None:
        """Return the run to start, or say what stops it (a cost cap not checked yet is checked first)."""
        if problems := self.problems():
            self.notify(problems[0], title="Cannot start yet", severity="warning")
            return
        if self.max_cost() is not None and not self.cap_checked:
            self.start_checked()
            return
        self._start()

    @work(group="start", exclusive=True, exit_on_error=False, description="checking the cost cap")
    async def start_checked(self) -> None:
        """Ctrl+s before the pricing worker checked the cost cap: check it off the loop, then start, or say why not.
        Its own group: the pricing worker a late change message starts (group "price") must not cancel it."""
        judges, resources, subset = self.planned()
        if refused := await asyncio.to_thread(self.cap_problem, self.max_cost(), judges, resources, subset):
            self.cap_refused, self.cap_checked = refused, True
            self.notify(refused, title="Cannot start yet", severity="warning")
            return
        self._start()

    def _start(self) -> None:
        """Dismiss the screen with the run to start."""
        picked = self.picked()
        self.dismiss(NewRun(
            path=self.query_one("#path", Input).value.strip(),
            judges=picked,
            backbone=self.backbone(),
            limit=self.limit(),
            options={name: self.judges[name].describe_options() for name in picked},
            nli=str(self.query_one("#nli", Select).value),
            embedder=str(self.query_one("#embedder", Select).value),
            max_cost=self.max_cost(),
            batch=self.batch(),
            batch_retry=self.batch_retry(),
        ))
