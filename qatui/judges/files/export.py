"""`qatui judges export NAME`: a built-in single-prompt judge written as a judge file that sends the same requests.

Each exported judge takes its prompts from the built-in's own prompt files (English as the
default, Chinese as `[prompts.zh]`), so there is one text of each prompt; what the code adds is
said in the file's tables: the schema's name and keys, the verdict's form, the token limit, the
pair rule. Run as a file it sends the built-in's messages, schema, temperature and max_tokens,
so the call cache answers it and its verdicts are the built-in's, verdict for verdict.

They stay code as built-ins because of what a file does not carry: the events and call purposes
their transcripts and the fidelity ledger read (`PointScored`, `PairChosen` with its rematch
flag, `rank` / `rank_repair`), pairwise's `calf` protocol (the order alternated by a hash of the
item's id, temperature 1.0, the question shown only without a reference) and its recording of an
unparsed answer as no vote (a file re-asks once and then fails the item, as every file judge does).
"""

from __future__ import annotations

from typing import Any

import tomli_w

from qatui.judges.files.spec import JudgeFileError, parse_judge_text
from qatui.judges.prompts import load_prompts

EXPORTABLE = ("pointwise", "pairwise-ab", "listwise", "pairwise")
"""The built-ins with a single prompt that a judge file expresses whole."""


def _sections(method: str, section: str, rename: dict[str, str] | None = None,
              keys: tuple[str, ...] = ("system", "user", "reference", "reask")) -> dict[str, Any]:
    """`[prompts]` (English) and `[prompts.zh]` from a built-in's prompt files, placeholders renamed."""
    def one(language: str) -> dict[str, str]:
        found = load_prompts(method, language)[section]
        out = {}
        for key in keys:
            source_key = (rename or {}).get(f"key:{key}", key)
            if source_key in found:
                text = found[source_key]
                for old, new in (rename or {}).items():
                    if not old.startswith("key:"):
                        text = text.replace(old, new)
                out[key] = text
        return out

    return {**one("en"), "zh": one("zh")}


def _spec(name: str, new_name: str) -> dict[str, Any]:
    from qatui.judges.registry import judge_class

    description = f"{judge_class(name).summary}. Exported from qatui's built-in judge {name!r}."
    if name == "pointwise":
        from qatui.judges.baselines.pointwise import MAX_TOKENS

        return {"name": new_name, "description": description, "kind": "score",
                "scale": {"min": 0, "max": 10, "digits": 2}, "answer": {"schema": "PointScore"},
                "options": {"max_tokens": MAX_TOKENS}, "prompts": _sections("pointwise", "score")}
    if name == "pairwise-ab":
        from qatui.judges.pairwise.ab import MAX_TOKENS as AB_TOKENS

        return {"name": new_name, "description": description, "kind": "pair",
                "pair": {"both_orders": False, "tie": False, "rematch_ties": True},
                "answer": {"schema": "ABVerdict", "format": "bracketed", "explanation": 400,
                           "explanation_key": "explanation", "verdict_key": "verdict"},
                "options": {"max_tokens": AB_TOKENS}, "prompts": _sections("pairwise_ab", "judge")}
    if name == "listwise":
        return {"name": new_name, "description": description, "kind": "listwise",
                "prompts": _sections("minos", "listwise", {"{responses}": "{answers}", "{problem}": "{reason}",
                                                           "key:reask": "repair"}, keys=("system", "user", "reask"))}
    if name == "pairwise":
        return {"name": new_name, "description": description, "kind": "pair",
                "pair": {"both_orders": True, "tie": True},
                "answer": {"schema": "PairChoice", "format": "plain", "explanation": 400,
                           "explanation_key": "rationale", "verdict_key": "choice"},
                "prompts": _sections("pairwise", "judge", keys=("system", "user", "reference"))}
    raise JudgeFileError(f"judge {name!r} cannot be exported: exportable built-ins are {', '.join(EXPORTABLE)} "
                         "(the others ask more than one prompt, or call no backbone)")


HEADER = """# A qatui judge file, exported from the built-in judge {name!r} (docs/JUDGE_FILES.md).
# Run as a file it sends the built-in's very requests, so it gives the same verdicts.
# Placeholders in {{braces}} are filled by qatui; literal braces are doubled.
"""


def export_text(name: str, new_name: str | None = None) -> str:
    """The judge file of built-in `name`, checked by loading it before it is returned."""
    new_name = new_name or f"my-{name}"
    text = HEADER.format(name=name) + "\n" + tomli_w.dumps(_spec(name, new_name), multiline_strings=True)
    parse_judge_text(text, f"the export of {name}")  # a file qatui writes must load as it is
    return text
