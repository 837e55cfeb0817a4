"""The papers' baselines: `length`, `lexical` (BLEU, ROUGE-L), `bertscore`, `nli` (`nli-ra`, `nli-ar`), `pointwise`, `linkage`, `geval` (with `geval_scoring`); their prompts in `prompts/`."""
