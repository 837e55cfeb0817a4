"""Everything `session.json` says about the highlighted session, under the Home table."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from qatui.report import session_status
from qatui.text import deployments_line, plain, plural, thinking_note, spent
from qatui.tui.format import count, headline_parts, members_line, short_path, stopped_line, when
from qatui.tui.widgets.packed import Packed


def info_lines(meta: dict) -> list[list[Content]]:
    """The lines drawn for one `SessionStore.list()` entry, each as the parts it may wrap between (`Packed`)."""
    if meta.get("status") == "damaged":
        return [[Content.from_markup("[b]$id[/] [$error]damaged[/]", id=plain(meta["id"]))],
                [Content(plain(meta.get("error", "")))]]
    ds, models = meta.get("dataset", {}), meta.get("models", {})
    name = f" “{plain(meta['name'])}”" if meta.get("name") and meta["name"] != meta["id"] else ""
    lines = [
        Content.from_markup("[b]$id[/]$name  [$foreground-muted]$status · created $created[/]",
                            id=plain(meta["id"]), name=name, status=session_status(meta), created=when(meta.get("created"))),
        Content.from_markup("[$foreground-muted]dataset[/] $ds ($fmt, $n) [$foreground-muted]$path[/]",
                            ds=plain(ds.get("name", "?")), fmt=plain(ds.get("format", "?")),
                            n=plural(ds.get("n_items"), "item"),
                            path=plain(short_path(ds.get("path", "")))),
    ]
    if why := stopped_line(meta):  # right under the status: what to fix before resuming
        lines.append(why)
    if backbones := meta.get("backbones"):
        lines.append(Content.from_markup(
            "[$foreground-muted]backbone[/] $backbone [$foreground-muted]nli[/] $nli [$foreground-muted]seed[/] $seed",
            backbone=plain(", ".join(backbones)), nli=plain(models.get("nli", "?")), seed=plain(meta.get("seed", "?"))))
    if imported := meta.get("imported"):
        lines.append(Content.from_markup(
            "[$foreground-muted]imported[/] $judge from $source [$foreground-muted]($kind, $rows)[/]",
            judge=plain(imported.get("judge", "?")), source=plain(imported.get("source", "?")),
            kind=plain(imported.get("kind", "?")),
            rows=plural(imported.get("rows"), "row")))
    rows = [[line] for line in lines]
    for judge, doc in meta.get("summary", {}).items():
        rows.append([Content.from_markup("[b $accent]$judge[/] $done/$n done, $failed failed",
                                         judge=plain(judge), done=doc.get("n_done", 0), n=doc.get("n_items", 0),
                                         failed=doc.get("n_failed", 0)),
                     *map(Content, headline_parts(doc, "no gold to compare with"))])
        if members := members_line(doc.get("members_agreement") or {}):
            rows.append([Content(plain(f"  {members}"))])
    if (llm := meta.get("llm")) and llm.get("calls"):
        rows.append([Content.from_markup(
            "[$foreground-muted]LLM[/] $calls calls ($cached cached) · tokens $tokens$thinking · $cost",
            calls=llm["calls"], cached=llm["cached"], tokens=count(llm["prompt_tokens"] + llm["completion_tokens"]),
            thinking=thinking_note(llm.get("reasoning_tokens", 0), short=True), cost=spent(llm['cost_usd'], int(llm.get('unpriced_calls') or 0), short=True))])
        if llm.get("deployments"):
            rows.append([Content(plain(f"  {deployments_line(llm['deployments'])}"))])
    return rows


class SessionInfo(Static):
    """Details of one session; empty when none is highlighted."""

    DEFAULT_CSS = """
    SessionInfo {
        height: auto;
        max-height: 9;
        border: round $panel-border;
        border-title-color: $accent;
        padding: 0 1;
    }
    """

    meta: reactive[dict | None] = reactive(None)
    """The `SessionStore.list()` entry shown."""

    def on_mount(self) -> None:
        self.border_title = "Session"

    def watch_meta(self, meta: dict | None) -> None:
        self.display = meta is not None
        self.update(Packed(info_lines(meta)) if meta else "")
