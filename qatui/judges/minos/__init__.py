"""MinosEval (Fan et al.) and its ablations: `judge` (the routed judge, `minos-akps`, `minos-ialr`, `listwise`), its prompts in `prompts/`."""
