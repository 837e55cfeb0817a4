"""Which backbones a run's judges call: checked before a session exists, recorded with it, and priced for a cap."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qatui.data.model import Dataset
    from qatui.judges.base import Judge
    from qatui.judges.resources import Resources
    from qatui.llm.spend import SpendCap


def model_users(judges: list[Judge], resources: Resources) -> list[tuple[Judge, Resources]]:
    """Each judge with the models it uses: the run's; for a jury, each member with its own backbone."""
    return [(part, resources if part is judge else part.resources) for judge in judges for part in judge.parts()]


def calls_backbone(judge: Judge, models: Resources, dataset: Dataset | None) -> bool:
    """Whether `judge` asks its backbone: an LLM judge, or an NLI judge whose NLI is the backbone for some
    item's language (`llm`, or the fallback of Chinese items from an English-only model). Without a
    dataset, any language counts."""
    if judge.uses_llm:
        return True
    if not judge.uses_nli:
        return False
    from qatui.data.language import item_language

    languages = {item_language(item) for item in dataset.items} if dataset is not None else {"en", "zh"}
    return "llm" in models.nli_names(languages).values()


def judge_once_when_fixed(judges: list[Judge], resources: Resources, dataset: Dataset | None = None) -> list[str]:
    """Set every judge asked to repeat (`repeats` > 1) that calls no backbone, nor does any member, to be asked once.

    Its answer never changes (lexical overlap, length, a local NLI model), so repeats would cost time
    and measure nothing. Returns their names, for the run to say so; their self-agreement is not applicable.
    """
    once = []
    for judge in judges:
        if judge.options.repeats > 1 and not any(calls_backbone(part, models, dataset)
                                                 for part, models in model_users([judge], resources)):
            judge.options = judge.options.model_copy(update={"repeats": 1})
            once.append(judge.name)
    return once


def check_models(judges: list[Judge], resources: Resources, dataset: Dataset | None = None,
                 defer_live: bool = False, offline: bool = False) -> dict[str, list[str]]:
    """Refuse a run before any session exists: a pip extra a judge needs is missing (one line naming it), a
    served embedder or NLI model does not answer its probe, or a backbone a judge (or member) calls cannot answer.

    `defer_live`: a backbone whose answers the call cache holds has its live request put off until the run's
    first call the cache cannot answer (`llm.preflight`); its offline checks (provider, key) are made now. So is
    the probe of a served embedder or NLI model whose outputs the model-output store holds, until the run's first
    input the store cannot answer (`Resources.check_served`).

    `offline` (`run --plan --offline`): nothing is sent and no key is needed; served models are not probed and
    backbones have only their offline checks (`llm.preflight.offline_check`). Returns what was checked: "backbones",
    one line each, and "not_probed", the served models left unprobed."""
    from qatui.extras import require

    for judge, models in model_users(judges, resources):
        for extra, who in models.needed_extras(judge, dataset).items():
            require(extra, who)
    unprobed: list[str] = []
    for judge, models in model_users(judges, resources):
        unprobed += models.check_served(judge, dataset, defer_live, offline)
    checked: dict[str, str] = {}
    for judge, models in model_users(judges, resources):
        if calls_backbone(judge, models, dataset) and models.backbone not in checked:
            checked[models.backbone] = models.check_backbone(defer_live, offline)
    return {"backbones": list(checked.values()), "not_probed": list(dict.fromkeys(unprobed))}


def run_backbones(judges: list[Judge], resources: Resources, dataset: Dataset | None = None) -> list[str]:
    """The backbones a run's judges (and jury members) call, in order of first use."""
    return list(dict.fromkeys(models.backbone for judge, models in model_users(judges, resources)
                              if calls_backbone(judge, models, dataset)))


def run_cap(max_cost: float | None, spent_usd: float, judges: list[Judge], resources: Resources, dataset: Dataset,
            session_id: str = "") -> SpendCap | None:
    """The run's cost cap over the backbones its judges call and the served embedders they ask
    (`engine.capping.make_cap`)."""
    from qatui.engine.capping import make_cap

    users = [models for judge, models in model_users(judges, resources) if calls_backbone(judge, models, dataset)]
    return make_cap(max_cost, spent_usd, users, session_id, served_embedders(judges, resources))


def served_embedders(judges: list[Judge], resources: Resources) -> dict[str, str]:
    """The served embedders (`[embedders.NAME]`: name -> LiteLLM model) the judges (and jury members) ask."""
    return {models.embedder_name: models.config.embedders[models.embedder_name].model
            for judge, models in model_users(judges, resources)
            if judge.uses_embedder and models.embedder_name in models.config.embedders}


def check_batchable(judges: list[Judge], resources: Resources, dataset: Dataset | None = None) -> None:
    """`--batch`: refuse, before a session exists, a run calling a backbone that has no batch API qatui can reach
    (`llm.batch.batch_problem`), naming it."""
    from qatui.errors import ConfigError
    from qatui.llm.batch import batch_problem

    for judge, models in model_users(judges, resources):
        if calls_backbone(judge, models, dataset) and (why := batch_problem(models.llm)):
            raise ConfigError(f"--batch: backbone {models.backbone!r} ({models.llm.model}) cannot be batched: {why}; "
                              "run it without --batch")


def request_notes(judges: list[Judge], resources: Resources, dataset: Dataset | None = None) -> dict[str, str]:
    """Backbone -> one line on what its requests leave out or add (a reasoning model: `LLMClient.request_note`),
    for each backbone the run calls that has one; stored in the session's meta as `requests`."""
    notes: dict[str, str] = {}
    for judge, models in model_users(judges, resources):
        if calls_backbone(judge, models, dataset) and models.backbone not in notes:
            notes[models.backbone] = getattr(models.llm, "request_note", str)()  # a scripted double has none
    return {name: note for name, note in notes.items() if note}
