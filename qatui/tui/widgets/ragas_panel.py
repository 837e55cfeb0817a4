"""RAGAS for the selected item: each response's statements checked against the context, the
questions written back from it, and which context sentences the question needs."""

from __future__ import annotations

from statistics import fmean
from typing import ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from qatui.events.labels import response_labels
from qatui.text import plain
from qatui.tui.state import TaskView
from qatui.tui.widgets.panel import TaskPanel

MARKS = {True: "✓", False: "✗", None: "?"}


class RagasPanel(TaskPanel):
    """One block per response (and one for the item's own context), scores on its first line."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "ragas-panel--supported", "ragas-panel--unsupported", "ragas-panel--muted", "ragas-panel--heading",
    }
    """
    | Class | Description |
    | :- | :- |
    | `ragas-panel--supported` | A statement the context supports; a relevant context sentence. |
    | `ragas-panel--unsupported` | A statement the context does not support. |
    | `ragas-panel--muted` | Reasons, unanswered statements, sentences not needed. |
    | `ragas-panel--heading` | A response's name and its scores. |
    """

    DEFAULT_CSS = """
    RagasPanel {
        & > .ragas-panel--supported { color: $success; }
        & > .ragas-panel--unsupported { color: $error; }
        & > .ragas-panel--muted { color: $foreground-muted; }
        & > .ragas-panel--heading { color: $secondary; text-style: bold; }
    }
    """

    TITLE = "RAGAS · statements, questions, context"
    PARTS = ("ragas",)

    def has_content(self, task: TaskView) -> bool:
        return bool(task.statements or task.questions or task.context_sentences)

    def _style(self, kind: str):
        return self.get_component_rich_style(f"ragas-panel--{kind}", partial=True)

    def render(self) -> RenderableType:
        task = self.task
        if task is None:
            return ""
        keys = {*task.statements, *task.questions, *task.context_sentences}
        repeats = sorted({repeat for _, repeat in keys})
        repeated = any(repeats)
        labels = response_labels(task.order) or sorted({label for label, _ in keys} - {""})
        blocks: list[RenderableType] = []
        for label in labels:
            for repeat in repeats:  # a judge asked K times: each repeat's own statements and questions, marked #k
                if (label, repeat) in keys:
                    blocks.extend(self._response_lines(task, label, repeat, repeated))
        for repeat in repeats:
            if ("", repeat) in task.context_sentences:
                blocks.extend(self._context_lines(task, ("", repeat),
                                                  "The item's context" + (f" #{repeat + 1}" if repeated else "")))
        if repeated:
            blocks.append(Text("#k: repeat k of the judge asked several times; its verdict combines them",
                               style=self._style("muted")))
        return Group(*blocks)

    def _response_lines(self, task: TaskView, label: str, repeat: int, repeated: bool) -> list[RenderableType]:
        key = (label, repeat)
        heading = Text(label + (f" #{repeat + 1}" if repeated else ""), style=self._style("heading"))
        cid = task.candidate(label)
        if cid:
            heading.append(plain(f" ({cid})"), style=self._style("muted"))
        lines: list[RenderableType] = [heading]
        verdicts = task.statement_verdicts.get(key)
        if verdicts is not None:
            answered = [v.supported for v in verdicts if v.supported is not None]
            score = f"{sum(answered) / len(answered):.2f} ({sum(answered)}/{len(answered)})" if answered else "–"
            heading.append(f"  faithfulness {score}")
            rows = []
            for verdict in verdicts:
                kind = "supported" if verdict.supported else "unsupported" if verdict.supported is False else "muted"
                text = Text(plain(verdict.statement))
                if verdict.reason:
                    text.append(plain(f" — {' '.join(verdict.reason.split())}"), style=self._style("muted"))
                rows.append((Text(MARKS[verdict.supported], style=self._style(kind)), text))
            lines.append(self._grid(rows))
        elif key in task.statements:
            heading.append("  faithfulness: checking…", style=self._style("muted"))
            lines.append(self._grid([(Text("·"), Text(plain(s), style=self._style("muted")))
                                     for s in task.statements[key]]))
        if key in task.questions:
            questions, similarities = task.questions[key]
            heading.append(f"  answer relevance {fmean(similarities):.2f}" if similarities else
                           "  answer relevance –")
            cosines = [f"↺ {x:.2f}" for x in similarities] if similarities else ["↺"] * len(questions)
            lines.append(self._grid([(Text(cos, style=self._style("muted")), Text(plain(question)))
                                     for cos, question in zip(cosines, questions, strict=True)]))
        if key in task.context_sentences:
            lines.extend(self._context_lines(task, key, None, heading))
        return lines

    @staticmethod
    def _grid(rows: list[tuple[Text, Text]]) -> Table:
        """Marks in a narrow column, texts wrapping beside them (a hanging indent)."""
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column(ratio=1)
        for mark, text in rows:
            grid.add_row(Text.assemble("  ", mark), text)
        return grid

    def _context_lines(self, task: TaskView, key: tuple[str, int], title: str | None, heading: Text | None = None,
                       ) -> list[RenderableType]:
        """Context relevance: picked / all sentences, each sentence marked ● needed or · not."""
        sentences, relevant = task.context_sentences[key]
        score = f"context relevance {len(relevant) / len(sentences):.2f} ({len(relevant)}/{len(sentences)})" \
            if sentences else "context relevance –"
        lines: list[RenderableType] = []
        if heading is None:
            lines.append(Text.assemble((title or "", self._style("heading")), f"  {score}"))
        else:
            heading.append(f"  {score}")
        for i, sentence in enumerate(sentences):
            needed = i in relevant
            line = Text.assemble(("  ● " if needed else "  · ", self._style("supported" if needed else "muted")),
                                 (plain(" ".join(sentence.split())), "" if needed else self._style("muted")))
            line.no_wrap, line.overflow = True, "ellipsis"
            lines.append(line)
        return lines
