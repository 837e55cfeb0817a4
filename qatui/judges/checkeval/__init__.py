"""CheckEval (Lee et al.): yes/no checklists answered by the backbone, and `qatui checklist generate`.

`checklist` (the checklist files: loading, answer parsing, scoring), `calls` (what one call
asks), `judge` (the `checkeval` judge), `generate` (augmenting a seed list and filtering it),
the bundled seed lists in `checklists/` and the prompts in `prompts/`.
"""
