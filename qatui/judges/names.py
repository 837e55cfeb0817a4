"""The built-in judges by name, each as `module:Class`, imported only when asked for (`qatui.judges.registry`).

Apart from the registry so that what needs only the names (a judge file may not take a built-in's
name) reads them without importing the registry, which imports the judge files.
"""

from __future__ import annotations

JUDGES: dict[str, str] = {
    "bleu": "qatui.judges.baselines.lexical:BleuJudge",
    "rouge-l": "qatui.judges.baselines.lexical:RougeLJudge",
    "bertscore": "qatui.judges.baselines.bertscore:BertScoreJudge",
    "minos": "qatui.judges.minos.judge:MinosJudge",
    "minos-akps": "qatui.judges.minos.judge:MinosAKPSJudge",
    "minos-ialr": "qatui.judges.minos.judge:MinosIALRJudge",
    "listwise": "qatui.judges.minos.judge:ListwiseJudge",
    "checkeval": "qatui.judges.checkeval.judge:CheckEvalJudge",
    "pairwise": "qatui.judges.pairwise.judge:PairwiseJudge",
    "ragas": "qatui.judges.ragas:RagasJudge",
    "ragas-faithfulness": "qatui.judges.ragas:RagasFaithfulnessJudge",
    "ragas-answer-relevance": "qatui.judges.ragas:RagasAnswerRelevanceJudge",
    "ragas-context-relevance": "qatui.judges.ragas:RagasContextRelevanceJudge",
    "nli-ra": "qatui.judges.baselines.nli:NLIResponsePremiseJudge",
    "nli-ar": "qatui.judges.baselines.nli:NLIReferencePremiseJudge",
    "pointwise": "qatui.judges.baselines.pointwise:PointwiseJudge",
    "pairwise-ab": "qatui.judges.pairwise.ab:PairwiseABJudge",
    "linkage": "qatui.judges.baselines.linkage:LinkageJudge",
    "geval": "qatui.judges.baselines.geval:GEvalJudge",
    "length": "qatui.judges.baselines.length:LengthJudge",
    "jury": "qatui.judges.jury.judge:Jury",
}
